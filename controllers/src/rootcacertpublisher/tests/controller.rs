//! The root CA publisher running against an in-process API on paused
//! tokio time.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::testkit::{Tasks, TestApi};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use store::Clock;

use crate::rootcacertpublisher::controller::RootCaPublisher;
use crate::rootcacertpublisher::plan::{CA_CERT_KEY, DESCRIPTION_ANNOTATION, ROOT_CA_CONFIG_MAP};
use crate::runtime::{Client, DeleteParams, InProcessClient, Informer, PatchType, Typed};

const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

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

/// Whether `ns` has the ConfigMap with the CA and the description.
async fn published(cms: Typed<ConfigMap>, ns: &str) -> bool {
    let Ok(cm) = cms.get(Some(ns), ROOT_CA_CONFIG_MAP).await else {
        return false;
    };
    let described = cm
        .metadata
        .annotations
        .is_some_and(|a| a.contains_key(DESCRIPTION_ANNOTATION));
    described
        && cm
            .data
            .is_some_and(|d| d.get(CA_CERT_KEY).map(String::as_str) == Some(CA))
}

#[tokio::test(start_paused = true)]
async fn every_namespace_gets_the_ca_and_edits_are_undone() {
    let clock = Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000), 1.0);
    let api = TestApi::builder().clock(clock.clone()).build().await;
    let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
    let (namespaces_api, cms) = (
        Typed::<Namespace>::new(client.clone()),
        Typed::<ConfigMap>::new(client.clone()),
    );

    let mut tasks = Tasks::new();
    let namespaces = Informer::<Namespace>::new(client.clone(), clock.clone(), None);
    let config_maps = Informer::<ConfigMap>::new(client.clone(), clock.clone(), None);
    let publisher = RootCaPublisher::new(client, clock.clone(), CA.into(), &namespaces, &config_maps);
    tasks.push(namespaces.run(tasks.shutdown()));
    tasks.push(config_maps.run(tasks.shutdown()));
    tasks.spawn(|stop| publisher.run(1, stop));

    eventually(&clock, "the CA in default", || published(cms.clone(), "default")).await;
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    namespaces_api.create(None, &ns).await.unwrap();
    eventually(&clock, "the CA in team", || published(cms.clone(), "team")).await;

    // Edited: put back.
    let edit = serde_json::json!({"data": {"ca.crt": "nope"}, "metadata": {"annotations": {DESCRIPTION_ANNOTATION: null}}});
    cms.patch(Some("team"), ROOT_CA_CONFIG_MAP, PatchType::Merge, edit)
        .await
        .unwrap();
    eventually(&clock, "the CA restored in team", || {
        published(cms.clone(), "team")
    })
    .await;
    // Deleted: created again.
    cms.client()
        .delete(
            cms.resource(),
            Some("team"),
            ROOT_CA_CONFIG_MAP,
            &DeleteParams::default(),
        )
        .await
        .unwrap();
    eventually(&clock, "the CA recreated in team", || {
        published(cms.clone(), "team")
    })
    .await;

    tasks.stop(Duration::from_secs(10)).await.unwrap();
}
