//! The ServiceAccounts controller running against an in-process API on
//! paused tokio time.

use apiserver::testkit::Tasks;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::runtime::{DeleteParams, Informer, Typed};
use crate::serviceaccount::controller::ServiceAccountsController;
use crate::testing::{eventually_holds, stop_tasks, test_client, test_clock};

#[tokio::test(start_paused = true)]
async fn every_namespace_gets_default_and_gets_it_back() {
    let clock = test_clock();
    let client = test_client(&clock).await;
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
    eventually_holds(&clock, "default in kube-system", || has_default("kube-system")).await;
    // A new one.
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    namespaces_api.create(None, &ns).await.unwrap();
    eventually_holds(&clock, "default in team", || has_default("team")).await;
    // Deleted, it comes back (with a new uid).
    let first = sas.get(Some("team"), "default").await.unwrap().metadata.uid;
    sas.client()
        .delete(sas.resource(), Some("team"), "default", &DeleteParams::default())
        .await
        .unwrap();
    eventually_holds(&clock, "default back in team", || {
        let sas = sas.clone();
        let first = first.clone();
        async move {
            sas.get(Some("team"), "default")
                .await
                .is_ok_and(|sa| sa.metadata.uid != first)
        }
    })
    .await;

    stop_tasks(tasks).await;
}
