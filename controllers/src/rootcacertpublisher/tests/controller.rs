//! The root CA publisher running against an in-process API on paused
//! tokio time.

use apiserver::testkit::Tasks;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::rootcacertpublisher::controller::RootCaPublisher;
use crate::rootcacertpublisher::plan::{CA_CERT_KEY, DESCRIPTION_ANNOTATION, ROOT_CA_CONFIG_MAP};
use crate::runtime::{DeleteParams, Informer, PatchType, Typed};
use crate::testing::{eventually_holds, stop_tasks, test_client, test_clock};

const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

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
    let clock = test_clock();
    let client = test_client(&clock).await;
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

    eventually_holds(&clock, "the CA in default", || published(cms.clone(), "default")).await;
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("team".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    namespaces_api.create(None, &ns).await.unwrap();
    eventually_holds(&clock, "the CA in team", || published(cms.clone(), "team")).await;

    // Edited: put back.
    let edit = serde_json::json!({"data": {"ca.crt": "nope"}, "metadata": {"annotations": {DESCRIPTION_ANNOTATION: null}}});
    cms.patch(Some("team"), ROOT_CA_CONFIG_MAP, PatchType::Merge, edit)
        .await
        .unwrap();
    eventually_holds(&clock, "the CA restored in team", || {
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
    eventually_holds(&clock, "the CA recreated in team", || {
        published(cms.clone(), "team")
    })
    .await;

    stop_tasks(tasks).await;
}
