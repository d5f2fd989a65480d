//! `reconcile`, case by case (after upstream `reconciler_test.go`:
//! `TestReconcileEmpty` (the placeholder), `TestReconcile1Pod`,
//! `TestReconcileEndpointSlicesUpdating`, `TestReconcileEndpointSlicesReplaceDeprecated`
//! and the 100-endpoint limit).

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::json;

use crate::endpoint::tests::fixtures::{pod, service};
use crate::endpointslice::plan::{MAX_ENDPOINTS_PER_SLICE, desired_groups};
use crate::endpointslice::reconciler::{SliceChanges, reconcile};

fn web() -> Service {
    service(json!({"ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}))
}

fn pods(n: usize) -> Vec<Pod> {
    (0..n)
        .map(|i| {
            pod(
                &format!("p{i:03}"),
                &format!("10.0.{}.{}", i / 250, i % 250 + 1),
                true,
                json!([]),
            )
        })
        .collect()
}

fn plan(service: &Service, pods: &[Pod], existing: &[EndpointSlice]) -> SliceChanges {
    let refs: Vec<&Pod> = pods.iter().collect();
    let groups = desired_groups(service, &refs);
    let existing: Vec<&EndpointSlice> = existing.iter().collect();
    reconcile(service, &groups, &existing, None)
}

/// The slices of `changes.create` as if the API had stored them, named `web-N`.
fn stored(changes: &SliceChanges) -> Vec<EndpointSlice> {
    changes
        .create
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut s = s.clone();
            s.metadata.name = Some(format!("web-{i}"));
            s.metadata.resource_version = Some("1".into());
            s
        })
        .collect()
}

#[test]
fn a_service_without_pods_gets_one_placeholder_and_keeps_it() {
    let svc = web();
    let first = plan(&svc, &[], &[]);
    assert_eq!(
        (first.create.len(), first.update.len(), first.delete.len()),
        (1, 0, 0)
    );
    let placeholder = &first.create[0];
    assert!(placeholder.endpoints.is_empty() && placeholder.ports.is_none());
    assert_eq!(placeholder.address_type, "IPv4");
    assert!(
        plan(&svc, &[], &stored(&first)).is_empty(),
        "the placeholder stays as it is"
    );
}

#[test]
fn the_placeholder_is_replaced_by_a_slice_with_endpoints_and_comes_back() {
    let svc = web();
    let placeholder = stored(&plan(&svc, &[], &[]));
    let one = plan(&svc, &pods(1), &placeholder);
    assert_eq!((one.create.len(), one.update.len(), one.delete.len()), (1, 0, 1));
    assert_eq!(one.create[0].endpoints.len(), 1);
    let live = stored(&one);
    let none = plan(&svc, &[], &live);
    assert_eq!((none.create.len(), none.delete.len()), (1, 1));
    assert!(none.create[0].endpoints.is_empty());
}

#[test]
fn a_changed_endpoint_updates_its_slice_in_place() {
    let svc = web();
    let mut ps = pods(2);
    let live = stored(&plan(&svc, &ps, &[]));
    assert_eq!(live.len(), 1);
    assert!(
        plan(&svc, &ps, &live).is_empty(),
        "nothing changed, nothing written"
    );
    ps[1] = pod("p001", "10.0.0.2", false, json!([]));
    let changes = plan(&svc, &ps, &live);
    assert_eq!(
        (changes.create.len(), changes.update.len(), changes.delete.len()),
        (0, 1, 0)
    );
    let updated = &changes.update[0];
    assert_eq!(updated.metadata.name.as_deref(), Some("web-0"));
    assert_eq!(updated.metadata.resource_version.as_deref(), Some("1"));
    assert_eq!(
        updated.endpoints[1].conditions.as_ref().unwrap().ready,
        Some(false)
    );
}

#[test]
fn at_most_a_hundred_endpoints_per_slice() {
    let svc = web();
    let ps = pods(250);
    let first = plan(&svc, &ps, &[]);
    let sizes: Vec<usize> = first.create.iter().map(|s| s.endpoints.len()).collect();
    assert_eq!(sizes, [MAX_ENDPOINTS_PER_SLICE, MAX_ENDPOINTS_PER_SLICE, 50]);
    // Scaled down to 150: the third slice goes, the second shrinks.
    let live = stored(&first);
    let down = plan(&svc, &ps[..150], &live);
    assert_eq!(
        (down.create.len(), down.update.len(), down.delete.len()),
        (0, 1, 1)
    );
    assert_eq!(down.update[0].endpoints.len(), 50);
    assert_eq!(down.delete[0].metadata.name.as_deref(), Some("web-2"));
}

#[test]
fn a_slice_whose_ports_no_longer_exist_is_replaced() {
    let svc = web();
    let ps = pods(1);
    let live = stored(&plan(&svc, &ps, &[]));
    let moved =
        service(json!({"ports": [{"name": "http", "port": 80, "targetPort": 9090, "protocol": "TCP"}]}));
    let changes = plan(&moved, &ps, &live);
    assert_eq!(
        (changes.create.len(), changes.update.len(), changes.delete.len()),
        (1, 0, 1)
    );
    assert_eq!(changes.create[0].ports.as_ref().unwrap()[0].port, Some(9090));
}

#[test]
fn new_service_labels_update_every_slice() {
    let svc = web();
    let ps = pods(1);
    let live = stored(&plan(&svc, &ps, &[]));
    let mut labelled = svc.clone();
    labelled.metadata.labels = Some([("tier".to_string(), "front".to_string())].into());
    let changes = plan(&labelled, &ps, &live);
    assert_eq!(changes.update.len(), 1);
    assert_eq!(
        changes.update[0].metadata.labels.as_ref().unwrap()["tier"],
        "front"
    );
}
