//! Table tests of [`crate::volume::plan`]: binding, provisioning, waiting,
//! release and reclaim.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use serde_json::{Value, json};

use crate::volume::plan::{
    ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_PROVISIONED_BY, ANN_SELECTED_NODE, find_best_match,
    plan_claim, plan_volume,
};

/// Merges `patch` into `base`, objects key by key (a JSON merge patch without deletions).
fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

fn now() -> Timestamp {
    "2025-05-01T12:00:00Z".parse().unwrap()
}

fn claim(extra: Value) -> PersistentVolumeClaim {
    let mut c = json!({
        "metadata": {"name": "data", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "standard", "volumeMode": "Filesystem"},
        "status": {"phase": "Pending"},
    });
    merge(&mut c, &extra);
    serde_json::from_value(c).unwrap()
}

fn volume(name: &str, size: &str, extra: Value) -> PersistentVolume {
    let mut v = json!({
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "capacity": {"storage": size},
            "storageClassName": "standard", "volumeMode": "Filesystem", "hostPath": {"path": "/x"},
            "persistentVolumeReclaimPolicy": "Retain"},
        "status": {"phase": "Available"},
    });
    merge(&mut v, &extra);
    serde_json::from_value(v).unwrap()
}

fn class(mode: &str) -> StorageClass {
    serde_json::from_value(
        json!({"metadata": {"name": "standard"}, "provisioner": "rancher.io/local-path",
        "reclaimPolicy": "Delete", "volumeBindingMode": mode}),
    )
    .unwrap()
}

fn ann<'a>(meta: &'a k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, k: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(k).map(String::as_str)
}

#[test]
fn smallest_fitting_available_volume_is_chosen() {
    let small = volume("small", "500Mi", json!({}));
    let fits = volume("fits", "2Gi", json!({}));
    let big = volume("big", "10Gi", json!({}));
    let other_class = volume("other", "1Gi", json!({"spec": {"storageClassName": "fast"}}));
    let rwx_only = volume("rwx", "1Gi", json!({"spec": {"accessModes": ["ReadWriteMany"]}}));
    let taken = volume(
        "taken",
        "1Gi",
        json!({"spec": {"claimRef": {"namespace": "x", "name": "y", "uid": "u-9"}}}),
    );
    let all = [&small, &big, &fits, &other_class, &rwx_only, &taken];
    assert_eq!(
        find_best_match(&all, &claim(json!({})))
            .unwrap()
            .metadata
            .name
            .as_deref(),
        Some("fits")
    );
    let prebound = volume(
        "pre",
        "5Gi",
        json!({"spec": {"claimRef": {"namespace": "default", "name": "data"}}}),
    );
    let all = [&fits, &prebound];
    assert_eq!(
        find_best_match(&all, &claim(json!({})))
            .unwrap()
            .metadata
            .name
            .as_deref(),
        Some("pre")
    );
}

#[test]
fn immediate_claim_binds_an_existing_volume_both_ways() {
    let v = volume("pv-1", "2Gi", json!({}));
    let plan = plan_claim(&claim(json!({})), Some(&class("Immediate")), &[&v], now());
    assert!(plan.create_volume.is_none());
    let bound_volume = plan.volume.expect("the volume is written");
    let r = bound_volume.spec.as_ref().unwrap().claim_ref.as_ref().unwrap();
    assert_eq!((r.name.as_deref(), r.uid.as_deref()), (Some("data"), Some("u-1")));
    assert_eq!(ann(&bound_volume.metadata, ANN_BOUND_BY_CONTROLLER), Some("yes"));
    assert_eq!(bound_volume.status.unwrap().phase.as_deref(), Some("Bound"));
    let c = plan.claim.expect("the claim is written");
    assert_eq!(c.spec.as_ref().unwrap().volume_name.as_deref(), Some("pv-1"));
    assert_eq!(ann(&c.metadata, ANN_BIND_COMPLETED), Some("yes"));
    assert_eq!(ann(&c.metadata, ANN_BOUND_BY_CONTROLLER), Some("yes"));
    let status = c.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Bound"));
    assert_eq!(status.capacity.unwrap()["storage"].0, "2Gi");
    assert_eq!(status.access_modes.unwrap(), ["ReadWriteOnce", "ReadOnlyMany"]);
}

#[test]
fn wait_for_first_consumer_waits_for_the_selected_node() {
    let plan = plan_claim(
        &claim(json!({})),
        Some(&class("WaitForFirstConsumer")),
        &[],
        now(),
    );
    assert!(plan.create_volume.is_none() && plan.claim.is_none());
    assert_eq!(plan.events[0].reason, "WaitForFirstConsumer");
    assert_eq!(
        plan.events[0].message,
        "waiting for first consumer to be created before binding"
    );

    let selected = claim(json!({"metadata": {"annotations": {ANN_SELECTED_NODE: "node-1"}}}));
    let plan = plan_claim(&selected, Some(&class("WaitForFirstConsumer")), &[], now());
    let pv = plan.create_volume.expect("a volume is provisioned");
    assert_eq!(pv.metadata.name.as_deref(), Some("pvc-u-1"));
    assert_eq!(
        ann(&pv.metadata, ANN_PROVISIONED_BY),
        Some("rancher.io/local-path")
    );
    let spec = pv.spec.unwrap();
    assert_eq!(spec.capacity.unwrap()["storage"].0, "1Gi");
    assert_eq!(spec.persistent_volume_reclaim_policy.as_deref(), Some("Delete"));
    assert_eq!(spec.claim_ref.unwrap().uid.as_deref(), Some("u-1"));
    let term = &spec.node_affinity.unwrap().required.unwrap().node_selector_terms[0];
    assert_eq!(
        term.match_expressions.as_ref().unwrap()[0]
            .values
            .as_ref()
            .unwrap(),
        &["node-1"]
    );
    let c = plan.claim.expect("the claim names its provisioner");
    assert_eq!(
        ann(&c.metadata, "volume.kubernetes.io/storage-provisioner"),
        Some("rancher.io/local-path")
    );
    assert_eq!(
        plan.events.last().unwrap().message,
        "Successfully provisioned volume pvc-u-1"
    );
}

#[test]
fn provisioned_volume_then_binds_to_its_claim() {
    let pv = volume(
        "pvc-u-1",
        "1Gi",
        json!({"spec": {"claimRef": {"namespace": "default", "name": "data", "uid": "u-1"}},
        "status": {"phase": "Pending"}}),
    );
    let plan = plan_claim(&claim(json!({})), Some(&class("Immediate")), &[&pv], now());
    let v = plan.volume.unwrap();
    assert_eq!(
        ann(&v.metadata, ANN_BOUND_BY_CONTROLLER),
        None,
        "a pre-bound volume was not bound by the controller"
    );
    assert_eq!(
        plan.claim.unwrap().spec.unwrap().volume_name.as_deref(),
        Some("pvc-u-1")
    );
}

#[test]
fn claim_without_class_or_volume_waits() {
    let c = claim(json!({"spec": {"storageClassName": ""}}));
    let plan = plan_claim(&c, None, &[], now());
    assert_eq!(plan.events[0].reason, "FailedBinding");
    assert!(plan.requeue.is_some());
    let c = claim(json!({"spec": {"storageClassName": "gold"}}));
    let plan = plan_claim(&c, None, &[], now());
    assert_eq!(
        plan.events[0].message,
        "storageclass.storage.k8s.io \"gold\" not found"
    );
}

#[test]
fn bound_claim_that_lost_its_volume_is_lost() {
    let c = claim(
        json!({"metadata": {"annotations": {ANN_BIND_COMPLETED: "yes"}}, "spec": {"volumeName": "gone"},
        "status": {"phase": "Bound"}}),
    );
    let plan = plan_claim(&c, None, &[], now());
    assert_eq!(plan.claim.unwrap().status.unwrap().phase.as_deref(), Some("Lost"));
    assert_eq!(plan.events[0].reason, "ClaimLost");
}

#[test]
fn volume_phases_and_reclaim() {
    let free = volume("free", "1Gi", json!({"status": {"phase": "Pending"}}));
    let plan = plan_volume(&free, None, now());
    let v = plan.volume.unwrap().status.unwrap();
    assert_eq!(v.phase.as_deref(), Some("Available"));
    assert!(v.last_phase_transition_time.is_some());

    let claimed = json!({"spec": {"claimRef": {"namespace": "default", "name": "data", "uid": "u-1"}},
        "status": {"phase": "Bound"}});
    let retained = volume("kept", "1Gi", claimed.clone());
    let plan = plan_volume(&retained, None, now());
    assert_eq!(
        plan.volume.unwrap().status.unwrap().phase.as_deref(),
        Some("Released")
    );

    let mut deleted = claimed;
    deleted["spec"]["persistentVolumeReclaimPolicy"] = json!("Delete");
    let plan = plan_volume(&volume("gone", "1Gi", deleted.clone()), None, now());
    assert_eq!(plan.delete_volume.as_deref(), Some("gone"));

    // A claim of the same name but another uid is another claim.
    let newer = claim(json!({"metadata": {"uid": "u-2"}}));
    let plan = plan_volume(&volume("gone", "1Gi", deleted), Some(&newer), now());
    assert_eq!(plan.delete_volume.as_deref(), Some("gone"));

    let bound_claim = claim(json!({"spec": {"volumeName": "kept"}}));
    let in_use = volume(
        "kept",
        "1Gi",
        json!({"spec": {"claimRef": {"namespace": "default", "name": "data", "uid": "u-1"}},
        "status": {"phase": "Bound"}}),
    );
    assert_eq!(
        plan_volume(&in_use, Some(&bound_claim), now()),
        Default::default()
    );
}
