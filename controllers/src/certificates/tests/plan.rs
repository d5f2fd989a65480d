//! `plan_csr` and `duration` as tables, with upstream's messages.

use std::time::Duration;

use k8s_openapi::ByteString;

use super::fixtures::{csr, request, with_condition};
use crate::certificates::plan::{
    DEFAULT_CERT_TTL, KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, Plan, RequestSubject, plan_csr,
};
use crate::certificates::sign::request_subject;

fn plan(c: &k8s_openapi::api::certificates::v1::CertificateSigningRequest) -> Plan {
    let subject = request_subject(std::str::from_utf8(&c.spec.request.0).unwrap()).unwrap();
    plan_csr(c, &subject, DEFAULT_CERT_TTL)
}

#[test]
fn only_approved_unsigned_requests_of_our_signers_are_signed() {
    let pem = request("jane", &["dev"], &[]);
    let pending = csr("jane", &pem, KUBE_APISERVER_CLIENT, &["client auth"]);
    assert_eq!(plan(&pending), Plan::Skip, "not approved yet");
    let approved = with_condition(pending.clone(), "Approved");
    assert_eq!(plan(&approved), Plan::Sign(DEFAULT_CERT_TTL));
    assert_eq!(plan(&with_condition(pending.clone(), "Denied")), Plan::Skip);
    assert_eq!(plan(&with_condition(approved.clone(), "Failed")), Plan::Skip);
    let mut issued = approved.clone();
    issued.status.as_mut().unwrap().certificate = Some(ByteString(b"cert".to_vec()));
    assert_eq!(plan(&issued), Plan::Skip, "already issued");
    let mut other = approved;
    other.spec.signer_name = "example.com/other".into();
    assert_eq!(plan(&other), Plan::Skip, "another signer's");
}

#[test]
fn client_usages_are_checked() {
    let pem = request("jane", &[], &[]);
    let fail = |usages: &[&str]| {
        plan(&with_condition(
            csr("j", &pem, KUBE_APISERVER_CLIENT, usages),
            "Approved",
        ))
    };
    assert_eq!(
        fail(&["server auth"]),
        Plan::Fail("invalid usage for client certificate: server auth".into())
    );
    assert_eq!(
        fail(&["digital signature"]),
        Plan::Fail("missing required usage for client certificate: client auth".into())
    );
    assert!(matches!(
        fail(&["digital signature", "key encipherment", "client auth"]),
        Plan::Sign(_)
    ));
}

#[test]
fn kubelet_client_requests_must_name_a_node() {
    let check = |cn: &str, orgs: &[&str], sans: &[&str]| {
        let pem = request(cn, orgs, sans);
        plan(&with_condition(
            csr("n", &pem, KUBE_APISERVER_CLIENT_KUBELET, &["client auth"]),
            "Approved",
        ))
    };
    assert!(matches!(
        check("system:node:worker-1", &["system:nodes"], &[]),
        Plan::Sign(_)
    ));
    assert_eq!(
        check("system:node:worker-1", &["dev"], &[]),
        Plan::Fail("subject organization is not system:nodes".into())
    );
    assert_eq!(
        check("worker-1", &["system:nodes"], &[]),
        Plan::Fail("subject common name does not begin with system:node:".into())
    );
    assert!(matches!(
        check("system:node:w", &["system:nodes"], &["w.example.com"]),
        Plan::Fail(_)
    ));
}

#[test]
fn a_subject_repeating_an_attribute_fails_rather_than_losing_a_group() {
    // rcgen writes one value per type, so build the request with openssl's layout by hand:
    // two O attributes, as `openssl req -subj /CN=jane/O=dev/O=ops` makes.
    let mut subject = request_subject(&request("jane", &["dev"], &[])).unwrap();
    subject.organizations.push("ops".into());
    subject.repeated_attribute = true;
    let c = with_condition(
        csr(
            "j",
            &request("jane", &["dev"], &[]),
            KUBE_APISERVER_CLIENT,
            &["client auth"],
        ),
        "Approved",
    );
    assert_eq!(
        plan_csr(&c, &subject, DEFAULT_CERT_TTL),
        Plan::Fail(crate::certificates::plan::REPEATED_ATTRIBUTE.into())
    );
}

#[test]
fn the_requested_duration_is_honoured_within_ten_minutes_and_the_ttl() {
    use crate::certificates::plan::duration;
    let ttl = Duration::from_secs(3600);
    assert_eq!(duration(None, ttl), ttl);
    assert_eq!(duration(Some(1800), ttl), Duration::from_secs(1800));
    assert_eq!(duration(Some(7200), ttl), ttl);
    assert_eq!(duration(Some(60), ttl), Duration::from_secs(600));
}

#[test]
fn the_subject_of_a_request() {
    let subject = request_subject(&request("jane", &["dev"], &["x.example.com"])).unwrap();
    assert_eq!(
        subject,
        RequestSubject {
            common_name: "jane".into(),
            organizations: vec!["dev".into()],
            has_sans: true,
            repeated_attribute: false,
        }
    );
}
