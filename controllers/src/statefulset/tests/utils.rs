//! Tests of [`crate::statefulset::utils`], [`crate::statefulset::claims`] and
//! [`crate::statefulset::status`], including the upstream cases of
//! `controllers/testdata/statefulset.json` (`getStatefulSetMaxUnavailable`).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use super::fixtures::{PodExt, SetExt, now, pod, set};
use crate::statefulset::claims::{
    claim_owner_matches_set_and_pod, claim_owner_refs_for_set_and_pod, wanted_owners,
};
use crate::statefulset::status::{complete_rolling_update, compute_replica_status, inconsistent_status};
use crate::statefulset::utils::*;

#[test]
fn upstream_get_stateful_set_max_unavailable_cases() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("../../../testdata/statefulset.json")).expect("valid case file");
    assert!(!cases.is_empty());
    for case in &cases {
        assert_eq!(case["function"], "statefulset.getStatefulSetMaxUnavailable");
        let input = &case["input"];
        let max = match &input["maxUnavailable"] {
            Value::Null => None,
            Value::Number(n) => Some(IntOrString::Int(n.as_i64().expect("int") as i32)),
            Value::String(s) => Some(IntOrString::String(s.clone())),
            other => panic!("unexpected {other}"),
        };
        let replicas = input["replicaCount"].as_i64().expect("int") as i32;
        let got = get_stateful_set_max_unavailable(max.as_ref(), replicas).expect("valid");
        assert_eq!(
            i64::from(got),
            case["expected"]["maxUnavailable"],
            "{}",
            case["name"]
        );
    }
}

#[test]
fn max_unavailable_rejects_a_bad_string() {
    assert!(get_stateful_set_max_unavailable(Some(&IntOrString::String("oops".into())), 3).is_err());
}

#[test]
fn parent_name_and_ordinal_follow_the_upstream_regex() {
    assert_eq!(get_parent_name_and_ordinal("web-0"), Some(("web", 0)));
    assert_eq!(get_parent_name_and_ordinal("my-web-12"), Some(("my-web", 12)));
    assert_eq!(get_parent_name_and_ordinal("web"), None);
    assert_eq!(get_parent_name_and_ordinal("web-"), None);
    assert_eq!(get_parent_name_and_ordinal("web-1a"), None);
    assert_eq!(
        get_parent_name_and_ordinal("web-99999999999"),
        None,
        "overflows an i32"
    );
}

#[test]
fn a_new_pod_has_its_identity_storage_and_owner() {
    let s = set(3).with_claims();
    let p = new_stateful_set_pod(&s, 2).expect("pod");
    assert_eq!(p.metadata.name.as_deref(), Some("web-2"));
    assert_eq!(p.metadata.generate_name, None);
    let labels = p.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get(POD_NAME_LABEL).map(String::as_str), Some("web-2"));
    assert_eq!(labels.get(POD_INDEX_LABEL).map(String::as_str), Some("2"));
    assert_eq!(labels.get("app").map(String::as_str), Some("web"));
    let spec = p.spec.clone().unwrap_or_default();
    assert_eq!(spec.hostname.as_deref(), Some("web-2"));
    assert_eq!(spec.subdomain.as_deref(), Some("web"));
    let volumes = spec.volumes.unwrap_or_default();
    assert_eq!(volumes.len(), 1);
    assert_eq!(volumes[0].name, "www");
    assert_eq!(
        volumes[0]
            .persistent_volume_claim
            .as_ref()
            .map(|c| c.claim_name.as_str()),
        Some("www-web-2")
    );
    let owner = &p.metadata.owner_references.clone().unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("StatefulSet", "uid-web")
    );
    assert_eq!(owner.controller, Some(true));
    assert!(identity_matches(&s, &p));
    assert!(storage_matches(&s, &p));
}

#[test]
fn identity_and_storage_are_repaired() {
    let s = set(3).with_claims();
    let mut p = new_stateful_set_pod(&s, 1).expect("pod");
    p.metadata.labels.as_mut().map(|l| l.remove(POD_NAME_LABEL));
    p.spec.as_mut().expect("spec").volumes = None;
    assert!(!identity_matches(&s, &p));
    assert!(!storage_matches(&s, &p));
    update_identity(&s, &mut p);
    update_storage(&s, &mut p);
    assert!(identity_matches(&s, &p));
    assert!(storage_matches(&s, &p));
}

#[test]
fn claims_carry_the_selector_labels() {
    let s = set(3).with_claims();
    let claims = get_persistent_volume_claims(&s, 4);
    let claim = &claims["www"];
    assert_eq!(claim.metadata.name.as_deref(), Some("www-web-4"));
    assert_eq!(claim.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(
        claim
            .metadata
            .labels
            .clone()
            .unwrap_or_default()
            .get("app")
            .map(String::as_str),
        Some("web")
    );
}

#[test]
fn ordinals_start_where_the_spec_says() {
    let s = set(3).start(5);
    assert_eq!((get_start_ordinal(&s), get_end_ordinal(&s)), (5, 7));
    let p = pod(&s, 4, "r");
    assert!(!pod_in_ordinal_range(&p, &s));
    assert!(pod_in_ordinal_range(&pod(&s, 7, "r"), &s));
}

#[test]
fn the_revision_patch_round_trips_through_apply_revision() {
    let old = set(3);
    let new = set(3).image("nginx:2");
    let revision = new_revision(&old, 1, 0);
    let data = &revision.data.as_ref().expect("data").0;
    assert_eq!(data["spec"]["template"]["$patch"], "replace");
    assert_eq!(data.as_object().map(|m| m.len()), Some(1), "only spec");
    assert_eq!(
        data["spec"].as_object().map(|m| m.len()),
        Some(1),
        "only spec.template"
    );
    let back = apply_revision(&new, &revision).expect("applies");
    assert_eq!(
        back.spec.as_ref().map(|s| &s.template),
        old.spec.as_ref().map(|s| &s.template)
    );
    // The template's labels label the revision (kubectl lists revisions by the selector).
    let labels = revision.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("app").map(String::as_str), Some("web"));
    assert!(
        revision
            .metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("web-"))
    );
}

#[test]
fn new_pods_below_the_partition_use_the_current_revision() {
    let current = set(5);
    let update = set(5).image("nginx:2").partition(3);
    let current_with_partition = current.clone().partition(3);
    for (ordinal, want) in [(0, "cur"), (2, "cur"), (3, "upd"), (4, "upd")] {
        let p = new_versioned_stateful_set_pod(&current_with_partition, &update, "cur", "upd", ordinal)
            .expect("pod");
        assert_eq!(get_pod_revision(&p), want, "ordinal {ordinal}");
    }
    // OnDelete recreates at the update revision.
    let on_delete = current.on_delete();
    let p = new_versioned_stateful_set_pod(&on_delete, &update, "cur", "upd", 0).expect("pod");
    assert_eq!(get_pod_revision(&p), "upd");
}

#[test]
fn status_counts_and_completes_a_rolling_update() {
    let s = set(3).min_ready(10);
    let pods = [
        pod(&s, 0, "upd").ready(),
        pod(&s, 1, "upd").ready_since(now()),
        pod(&s, 2, "cur").running(),
    ];
    let mut status = k8s_openapi::api::apps::v1::StatefulSetStatus {
        update_revision: Some("upd".into()),
        current_revision: Some("cur".into()),
        ..Default::default()
    };
    compute_replica_status(&mut status, pods.iter(), 10, "cur", "upd", now());
    assert_eq!(status.replicas, 3);
    assert_eq!(status.ready_replicas, Some(2));
    assert_eq!(status.available_replicas, Some(1), "web-1 is ready for 0 of 10 s");
    assert_eq!(status.current_replicas, Some(1));
    assert_eq!(status.updated_replicas, Some(2));
    complete_rolling_update(&s, &mut status);
    assert_eq!(
        status.current_revision.as_deref(),
        Some("cur"),
        "not all updated yet"
    );
    status.updated_replicas = Some(3);
    status.ready_replicas = Some(3);
    complete_rolling_update(&s, &mut status);
    assert_eq!(status.current_revision.as_deref(), Some("upd"));
    assert_eq!(status.current_replicas, Some(3));
    assert!(inconsistent_status(&s, &status));
    let mut written = s.clone();
    written.status = Some(status.clone());
    assert!(!inconsistent_status(&written, &status));
}

#[test]
fn retention_policy_table() {
    let mut claim = get_persistent_volume_claims(&set(2).with_claims(), 1)["www"].clone();
    // (whenDeleted, whenScaled, replicas) → (set ref, pod ref) for the claim of web-1.
    let cases = [
        ("Retain", "Retain", 2, (false, false)),
        ("Retain", "Retain", 1, (false, false)),
        ("Delete", "Retain", 2, (true, false)),
        ("Delete", "Retain", 1, (true, false)),
        ("Retain", "Delete", 2, (false, false)),
        ("Retain", "Delete", 1, (false, true)),
        ("Delete", "Delete", 2, (true, false)),
        ("Delete", "Delete", 1, (false, true)),
    ];
    for (deleted, scaled, replicas, want) in cases {
        let s = set(replicas).with_claims().retention(deleted, scaled);
        let p = pod(&set(2).with_claims(), 1, "r");
        assert_eq!(
            wanted_owners(&s, &p),
            want,
            "{deleted}/{scaled} replicas {replicas}"
        );
        claim.metadata.owner_references = None;
        let refs = claim_owner_refs_for_set_and_pod(&claim, &s, &p);
        assert_eq!(refs.iter().any(|r| r.uid == "uid-web"), want.0);
        assert_eq!(refs.iter().any(|r| r.uid == "uid-web-1"), want.1);
        claim.metadata.owner_references = Some(refs);
        assert!(claim_owner_matches_set_and_pod(&claim, &s, &p));
    }
}
