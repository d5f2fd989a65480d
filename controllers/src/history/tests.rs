//! Tests of the pure history helpers (upstream `controller_history_test.go`: `TestSortControllerRevisions`,
//! `TestEqualRevision`, `TestFindEqualRevisions`, `TestNewControllerRevision`, name truncation).

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::json;

use super::*;

fn parent() -> ObjectMeta {
    ObjectMeta {
        name: Some("web".into()),
        namespace: Some("default".into()),
        uid: Some("uid-web".into()),
        ..ObjectMeta::default()
    }
}

fn revision(name: &str, revision: i64, secs: i64, data: serde_json::Value) -> ControllerRevision {
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name.into()),
            creation_timestamp: Some(Time(jiff::Timestamp::from_second(secs).expect("valid"))),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(data)),
        revision,
    }
}

#[test]
fn fnv1_matches_the_reference_vectors() {
    // The FNV-1 32-bit test vectors of the reference implementation (offset basis for "").
    assert_eq!(fnv1_32(b""), 0x811c_9dc5);
    assert_eq!(fnv1_32(b"a"), 0x050c_5d7e);
    assert_eq!(fnv1_32(b"foobar"), 0x31f0_b262);
}

#[test]
fn hash_is_safe_encoded_decimal_and_depends_on_the_probe() {
    let data = RawExtension(json!({"spec": {"template": {"$patch": "replace"}}}));
    let h0 = hash_controller_revision(Some(&data), None);
    let h1 = hash_controller_revision(Some(&data), Some(0));
    let h2 = hash_controller_revision(Some(&data), Some(1));
    for h in [&h0, &h1, &h2] {
        assert!(
            h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
            "{h}"
        );
        assert!(!h.is_empty() && h.len() <= 10);
    }
    assert_ne!(
        h0, h1,
        "a probe of 0 still changes the hash (the digit 0 is hashed)"
    );
    assert_ne!(h1, h2);
    // The probe is the decimal text: hashing data ‖ "1" by hand gives the same digits.
    let mut bytes = data_bytes(Some(&data));
    bytes.push(b'1');
    assert_eq!(h2, safe_encode_string(&fnv1_32(&bytes).to_string()));
    // Deterministic.
    assert_eq!(h2, hash_controller_revision(Some(&data), Some(1)));
}

#[test]
fn revision_names_truncate_the_prefix_to_223_bytes() {
    assert_eq!(controller_revision_name("web", "7b9c"), "web-7b9c");
    let long = "a".repeat(300);
    let name = controller_revision_name(&long, "hash");
    assert_eq!(name.len(), 223 + 1 + 4);
    assert!(name.ends_with("-hash"));
}

#[test]
fn new_revision_is_owned_labelled_and_named_by_its_hash() {
    let labels = [("app".to_owned(), "nginx".to_owned())].into_iter().collect();
    let data = json!({"spec": {"template": {"$patch": "replace", "metadata": {}}}});
    let cr = new_controller_revision(
        &parent(),
        "apps/v1",
        "StatefulSet",
        Some(&labels),
        data.clone(),
        3,
        Some(0),
    );
    let hash = hash_controller_revision(cr.data.as_ref(), Some(0));
    assert_eq!(cr.metadata.name.as_deref(), Some(format!("web-{hash}").as_str()));
    assert_eq!(cr.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(cr.revision, 3);
    let l = cr.metadata.labels.as_ref().expect("labels");
    assert_eq!(l.get("app").map(String::as_str), Some("nginx"));
    assert_eq!(l.get(CONTROLLER_REVISION_HASH_LABEL), Some(&hash));
    let refs = cr.metadata.owner_references.as_ref().expect("owner");
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].uid, "uid-web");
    assert_eq!(refs[0].kind, "StatefulSet");
    assert_eq!(refs[0].controller, Some(true));
    assert_eq!(refs[0].block_owner_deletion, Some(true));
    assert_eq!(cr.data.as_ref().map(|d| &d.0), Some(&data));
    // A collision renames it.
    assert_ne!(
        controller_revision_name_for("web", &cr, Some(1)),
        cr.metadata.name.clone().unwrap_or_default()
    );
}

#[test]
fn equal_revision_compares_hash_labels_then_data() {
    let a = new_controller_revision(
        &parent(),
        "apps/v1",
        "StatefulSet",
        None,
        json!({"a": 1}),
        1,
        None,
    );
    let b = new_controller_revision(
        &parent(),
        "apps/v1",
        "StatefulSet",
        None,
        json!({"a": 1}),
        2,
        None,
    );
    let c = new_controller_revision(
        &parent(),
        "apps/v1",
        "StatefulSet",
        None,
        json!({"a": 2}),
        1,
        None,
    );
    assert!(equal_revision(&a, &b));
    assert!(!equal_revision(&a, &c));
    // Same data, different hash label (a collision-renamed twin): not equal.
    let d = new_controller_revision(
        &parent(),
        "apps/v1",
        "StatefulSet",
        None,
        json!({"a": 1}),
        1,
        Some(4),
    );
    assert!(!equal_revision(&a, &d));
    // Without labels only the data decides.
    let mut e = d.clone();
    e.metadata.labels = None;
    assert!(equal_revision(&a, &e));
    let revs = vec![a.clone(), c.clone(), b.clone()];
    let eq = find_equal_revisions(&revs, &a);
    assert_eq!(eq.len(), 2);
    assert_eq!(eq[0].revision, 1);
    assert_eq!(eq[1].revision, 2);
}

#[test]
fn sort_is_by_revision_then_creation_then_name() {
    let mut revs = vec![
        revision("c", 2, 10, json!({})),
        revision("b", 1, 20, json!({})),
        revision("z", 1, 5, json!({})),
        revision("a", 1, 20, json!({})),
        revision("d", 3, 0, json!({})),
    ];
    sort_controller_revisions(&mut revs);
    let names: Vec<_> = revs
        .iter()
        .map(|r| r.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["z", "a", "b", "c", "d"]);
    let arcs: Vec<std::sync::Arc<ControllerRevision>> = revs.into_iter().map(std::sync::Arc::new).collect();
    assert_eq!(next_revision(&arcs), 4);
    assert_eq!(next_revision::<ControllerRevision>(&[]), 1);
}

#[test]
fn owner_filter_keeps_owned_and_orphans() {
    let owned = new_controller_revision(&parent(), "apps/v1", "StatefulSet", None, json!({}), 1, None);
    assert!(is_owned_or_orphan(&owned, "uid-web"));
    assert!(!is_owned_or_orphan(&owned, "uid-other"));
    let orphan = revision("x", 1, 0, json!({}));
    assert!(is_owned_or_orphan(&orphan, "uid-other"));
}
