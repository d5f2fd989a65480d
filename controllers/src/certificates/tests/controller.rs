//! The CSR signer running against an in-process API on paused tokio time:
//! an approved request is issued a certificate, a request with the wrong
//! usages is marked Failed, a pending one is left alone.

use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;

use super::fixtures::{ca, csr, request, with_condition};
use crate::certificates::controller::CsrSigningController;
use crate::certificates::plan::{DEFAULT_CERT_TTL, KUBE_APISERVER_CLIENT};
use crate::runtime::client::to_value;
use crate::runtime::{Informer, Typed};
use crate::testing::{eventually_holds, stop_tasks, test_client, test_clock};

/// PUT the request's conditions to `approval`, as `kubectl certificate approve` does.
async fn approve(csrs: &Typed<CertificateSigningRequest>, name: &str) {
    let live = csrs.get(None, name).await.unwrap();
    let approved = to_value(&with_condition(live, "Approved")).unwrap();
    csrs.client()
        .update(csrs.resource(), None, approved, Some("approval"))
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn approved_requests_are_issued_and_wrong_ones_fail() {
    let clock = test_clock();
    let client = test_client(&clock).await;
    let csrs = Typed::<CertificateSigningRequest>::new(client.clone());

    let mut tasks = Tasks::new();
    let informer = Informer::<CertificateSigningRequest>::new(client.clone(), clock.clone(), None);
    let controller = CsrSigningController::new(client, clock.clone(), ca(), DEFAULT_CERT_TTL, &informer);
    tasks.push(informer.run(tasks.shutdown()));
    tasks.spawn(|stop| controller.run(1, stop));

    let pem = request("jane", &["dev"], &[]);
    for (name, usages) in [
        ("good", &["client auth"][..]),
        ("server", &["server auth"][..]),
        ("pending", &["client auth"][..]),
    ] {
        csrs.create(None, &csr(name, &pem, KUBE_APISERVER_CLIENT, usages))
            .await
            .unwrap();
    }
    approve(&csrs, "good").await;
    approve(&csrs, "server").await;

    let status = |name: &'static str| {
        let csrs = csrs.clone();
        async move { csrs.get(None, name).await.unwrap().status.unwrap_or_default() }
    };
    eventually_holds(&clock, "a certificate for good", || async {
        status("good").await.certificate.is_some()
    })
    .await;
    let cert = String::from_utf8(status("good").await.certificate.unwrap().0).unwrap();
    assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"), "{cert}");

    eventually_holds(&clock, "server marked Failed", || async {
        status("server")
            .await
            .conditions
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Failed")
    })
    .await;
    let failed = status("server").await.conditions.unwrap();
    let failed = failed.iter().find(|c| c.type_ == "Failed").unwrap();
    assert_eq!(failed.reason.as_deref(), Some("SignerValidationFailure"));
    assert_eq!(
        failed.message.as_deref(),
        Some("invalid usage for client certificate: server auth")
    );
    assert!(status("server").await.certificate.is_none());

    clock.sleep(Duration::from_secs(5)).await;
    let pending = status("pending").await;
    assert!(pending.certificate.is_none() && pending.conditions.is_none());

    stop_tasks(tasks).await;
}
