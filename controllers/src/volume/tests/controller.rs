//! The persistent-volume controller running for real against an in-process
//! API server, on paused tokio time.

use std::sync::Arc;
use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use serde_json::json;
use store::Clock;

use crate::runtime::events::Recorder;
use crate::runtime::{Client, Informer, Typed};
use crate::testing::{holds_within, stop_tasks, test_client, test_clock};
use crate::volume::controller::PersistentVolumeController;

fn start(client: &Arc<dyn Client>, clock: &Clock, tasks: &mut Tasks) {
    let claims = Informer::<PersistentVolumeClaim>::new(client.clone(), clock.clone(), None);
    let volumes = Informer::<PersistentVolume>::new(client.clone(), clock.clone(), None);
    let classes = Informer::<StorageClass>::new(client.clone(), clock.clone(), None);
    let recorder = Recorder::new(client.clone(), clock.clone(), "persistentvolume-controller", None);
    let controller = PersistentVolumeController::new(
        client.clone(),
        clock.clone(),
        recorder,
        &claims,
        &volumes,
        &classes,
    );
    tasks.push(claims.run(tasks.shutdown()));
    tasks.push(volumes.run(tasks.shutdown()));
    tasks.push(classes.run(tasks.shutdown()));
    tasks.spawn(|stop| controller.run(2, stop));
}

/// Polls every 100 ms until `check` holds, for up to 60 s of simulated time.
async fn eventually<F, Fut>(clock: &Clock, what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    holds_within(
        clock,
        what,
        Duration::from_secs(60),
        Duration::from_millis(100),
        check,
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn selected_node_claim_is_provisioned_bound_and_reclaimed() {
    let clock = test_clock();
    let client = test_client(&clock).await;
    let mut tasks = Tasks::new();
    start(&client, &clock, &mut tasks);
    let claims: Typed<PersistentVolumeClaim> = Typed::new(client.clone());
    let volumes: Typed<PersistentVolume> = Typed::new(client.clone());
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }))
    .unwrap();
    let created = claims.create(Some("default"), &claim).await.unwrap();
    // The default class `standard` (WaitForFirstConsumer) was filled in by admission.
    assert_eq!(
        created.spec.as_ref().unwrap().storage_class_name.as_deref(),
        Some("standard")
    );
    clock.sleep(Duration::from_secs(2)).await;
    assert!(
        volumes.list(None, &Default::default()).await.unwrap().is_empty(),
        "waits for its consumer"
    );

    let mut selected = claims.get(Some("default"), "data").await.unwrap();
    selected
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("volume.kubernetes.io/selected-node".into(), "node-1".into());
    claims.update(&selected).await.unwrap();
    let uid = created.metadata.uid.clone().unwrap();
    let pv_name = format!("pvc-{uid}");
    eventually(&clock, "the claim to be bound", || async {
        let c = claims.get(Some("default"), "data").await.unwrap();
        c.status.and_then(|s| s.phase).as_deref() == Some("Bound")
            && c.spec.and_then(|s| s.volume_name).as_deref() == Some(pv_name.as_str())
    })
    .await;
    eventually(&clock, "the volume to be bound", || async {
        let v = volumes.get(None, &pv_name).await.unwrap();
        v.status.and_then(|s| s.phase).as_deref() == Some("Bound")
    })
    .await;

    claims.delete(Some("default"), "data").await.unwrap();
    eventually(&clock, "the volume to be deleted", || async {
        volumes.get(None, &pv_name).await.is_err()
    })
    .await;
    stop_tasks(tasks).await;
}

#[tokio::test(start_paused = true)]
async fn retained_volume_is_released() {
    let clock = test_clock();
    let client = test_client(&clock).await;
    let mut tasks = Tasks::new();
    start(&client, &clock, &mut tasks);
    let claims: Typed<PersistentVolumeClaim> = Typed::new(client.clone());
    let volumes: Typed<PersistentVolume> = Typed::new(client.clone());
    let pv: PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": "manual"},
        "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "5Gi"}, "hostPath": {"path": "/data"},
            "storageClassName": ""},
    }))
    .unwrap();
    volumes.create(None, &pv).await.unwrap();
    let claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "static", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": ""},
    }))
    .unwrap();
    claims.create(Some("default"), &claim).await.unwrap();
    eventually(&clock, "the static volume to be bound", || async {
        let v = volumes.get(None, "manual").await.unwrap();
        v.status.and_then(|s| s.phase).as_deref() == Some("Bound")
    })
    .await;
    claims.delete(Some("default"), "static").await.unwrap();
    eventually(&clock, "the volume to be released", || async {
        let v = volumes.get(None, "manual").await.unwrap();
        v.status.and_then(|s| s.phase).as_deref() == Some("Released")
    })
    .await;
    stop_tasks(tasks).await;
}
