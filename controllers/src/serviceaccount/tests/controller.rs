//! The ServiceAccounts controller running against an in-process API on
//! paused tokio time.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::testkit::{Tasks, TestApi};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use store::Clock;

use crate::runtime::{Client, DeleteParams, InProcessClient, Informer, Typed};
use crate::serviceaccount::controller::ServiceAccountsController;

/// Polls every simulated 10 ms, up to a simulated minute, until `check` holds.
async fn eventually<F: std::future::Future<Output = bool>>(clock: &Clock, what: &str, check: impl Fn() -> F) {
    for _ in 0..6000 {
        if check().await {
            return;
        }
        clock.sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(start_paused = true)]
async fn every_namespace_gets_default_and_gets_it_back() {
    let clock = Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000), 1.0);
    let api = TestApi::builder().clock(clock.clone()).build().await;
    let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
    let (namespaces_api, sas) = (
        Typed::<Namespace>::new(client.clone()),
        Typed::<ServiceAccount>::new(client.clone()),
    );

    let mut tasks = Tasks::new();
    let namespaces = Informer::<Namespace>::new(client.clone(), clock.clone(), None);
    let accounts = Informer::<ServiceAccount>::new(client.clone(), clock.clone(), None);
    let controller = ServiceAccountsController::new(client, clock.clone(), &namespaces, &accounts);
    tasks.push(namespaces.run(tasks.shutdown()));
    tasks.push(accounts.run(tasks.shutdown()));
    tasks.spawn(|stop| controller.run(1, stop));

    let has_default = |ns: &'static str| {
        let sas = sas.clone();
        async move { sas.get(Some(ns), "default").await.is_ok() }
    };
    // The namespaces that existed at start.
    eventually(&clock, "default in kube-system", || has_default("kube-system")).await;
    // A new one.
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    namespaces_api.create(None, &ns).await.unwrap();
    eventually(&clock, "default in team", || has_default("team")).await;
    // Deleted, it comes back (with a new uid).
    let first = sas.get(Some("team"), "default").await.unwrap().metadata.uid;
    sas.client()
        .delete(sas.resource(), Some("team"), "default", &DeleteParams::default())
        .await
        .unwrap();
    eventually(&clock, "default back in team", || {
        let sas = sas.clone();
        let first = first.clone();
        async move {
            sas.get(Some("team"), "default")
                .await
                .is_ok_and(|sa| sa.metadata.uid != first)
        }
    })
    .await;

    tasks.stop(Duration::from_secs(10)).await.unwrap();
}
