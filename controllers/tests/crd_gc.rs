//! The garbage collector and custom resources: a collector started before
//! a CRD exists follows the registry, so custom resources owned by
//! built-in objects, and built-in objects owned by custom resources, are
//! collected once their owner is gone.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::testkit::{Tasks, TestApi};
use controllers::garbagecollector::controller::{FIELD_MANAGER, GarbageCollector, deletable_resources};
use controllers::runtime::{Client, DeleteParams, InProcessClient, ResourceRef};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::{Value, json};
use store::Clock;

const NS: &str = "default";

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]},
    })
}

fn widgets() -> ResourceRef {
    ResourceRef {
        group: "example.com".into(),
        version: "v1".into(),
        plural: "widgets".into(),
        kind: "Widget".into(),
        namespaced: true,
    }
}

fn owner_ref(owner: &Value) -> Value {
    json!({"apiVersion": owner["apiVersion"], "kind": owner["kind"],
           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]})
}

/// Polls until `name` of `resource` is gone (paused time: up to a simulated minute).
async fn gone(client: &Arc<dyn Client>, clock: &Clock, resource: &ResourceRef, name: &str) -> bool {
    for _ in 0..600 {
        if client.get(resource, Some(NS), name).await.is_err() {
            return true;
        }
        clock.sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test(start_paused = true)]
async fn owners_and_dependents_of_either_kind_are_collected() {
    let clock = Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000), 1.0);
    let api = TestApi::builder().clock(clock.clone()).build().await;
    let gc_client: Arc<dyn Client> = Arc::new(InProcessClient::new(api.clone(), FIELD_MANAGER));
    let gc = GarbageCollector::new(gc_client, clock.clone(), deletable_resources(api.registry()))
        .following(api.registry().clone());
    let mut tasks = Tasks::new();
    tasks.spawn(|stop| gc.run(2, stop));
    let crd_api = api.clone();
    tasks.spawn(|stop| crd_api.keep_custom_resources(stop));

    let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api.clone(), "test"));
    let crds = ResourceRef {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        plural: "customresourcedefinitions".into(),
        kind: "CustomResourceDefinition".into(),
        namespaced: false,
    };
    client.create(&crds, None, crd()).await.unwrap();
    while api.resource("example.com", "v1", "widgets").is_err() {
        clock.sleep(Duration::from_millis(10)).await;
    }

    // A Widget owned by a ConfigMap, and a ConfigMap owned by a Widget.
    let configmaps = ResourceRef::of::<ConfigMap>();
    let owner_cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}});
    let owner_cm = client.create(&configmaps, Some(NS), owner_cm).await.unwrap();
    let child = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "child", "ownerReferences": [owner_ref(&owner_cm)]}});
    client.create(&widgets(), Some(NS), child).await.unwrap();
    let owner_w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "owner"}});
    let owner_w = client.create(&widgets(), Some(NS), owner_w).await.unwrap();
    let child_cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "child", "ownerReferences": [owner_ref(&owner_w)]}});
    client.create(&configmaps, Some(NS), child_cm).await.unwrap();

    let background = DeleteParams::propagation("Background");
    client
        .delete(&configmaps, Some(NS), "owner", &background)
        .await
        .unwrap();
    client
        .delete(&widgets(), Some(NS), "owner", &background)
        .await
        .unwrap();
    assert!(
        gone(&client, &clock, &widgets(), "child").await,
        "the Widget owned by a ConfigMap"
    );
    assert!(
        gone(&client, &clock, &configmaps, "child").await,
        "the ConfigMap owned by a Widget"
    );
    tasks.stop(Duration::from_secs(10)).await.unwrap();
}
