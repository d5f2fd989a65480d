//! Tests of the DaemonSet's revision data, snapshot and cleanup choices.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::ControllerRevision;

use super::fixtures::ds;
use crate::daemon::history::*;
use crate::daemon::placement::{DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, hash_label};

#[test]
fn patch_replaces_the_template() {
    let d = ds("agent").build();
    let patch = get_patch(&d);
    assert_eq!(patch["spec"]["template"]["$patch"], "replace");
    assert_eq!(
        patch["spec"]["template"]["spec"]["containers"][0]["image"],
        "agent:1"
    );
    assert_eq!(patch.as_object().unwrap().len(), 1);
    let text = serde_json::to_string(&patch).unwrap();
    assert!(
        text.starts_with(r#"{"spec":{"template":{"$patch":"replace","#),
        "{text}"
    );
}

#[test]
fn snapshot_is_named_labelled_and_owned() {
    let mut d = ds("agent").build();
    d.metadata.annotations = Some([("kubernetes.io/change-cause".to_string(), "v1".to_string())].into());
    let rev = snapshot(&d, 3);
    let hash = template_hash(&d);
    assert_eq!(
        rev.metadata.name.as_deref(),
        Some(format!("agent-{hash}").as_str())
    );
    assert_eq!(hash_label(&rev.metadata), hash);
    assert_eq!(rev.metadata.labels.as_ref().unwrap()["app"], "agent");
    assert_eq!(rev.metadata.annotations, d.metadata.annotations);
    assert_eq!(rev.revision, 3);
    let owner = &rev.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.controller), ("DaemonSet", Some(true)));
    assert!(matches(&d, &rev));
    let changed = ds("agent").image("agent:2").build();
    assert!(!matches(&changed, &rev));
    assert_ne!(template_hash(&changed), hash);
    let mut collided = d.clone();
    collided.status = Some(k8s_openapi::api::apps::v1::DaemonSetStatus {
        collision_count: Some(1),
        ..Default::default()
    });
    assert_ne!(
        template_hash(&collided),
        hash,
        "the collision count changes the hash"
    );
}

fn rev(name: &str, revision: i64, hash: &str) -> ControllerRevision {
    let mut r = ControllerRevision {
        revision,
        ..Default::default()
    };
    r.metadata.name = Some(name.into());
    r.metadata.labels = Some([(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY.to_string(), hash.to_string())].into());
    r
}

#[test]
fn split_keep_and_number() {
    let d = ds("agent").build();
    let mut a = snapshot(&d, 2);
    a.metadata.name = Some("a".into());
    let mut b = snapshot(&d, 5);
    b.metadata.name = Some("b".into());
    let old = snapshot(&ds("agent").image("agent:0").build(), 4);
    let all = [&a, &old, &b];
    let split = split_histories(&d, &all);
    assert_eq!(split.current.len(), 2);
    assert_eq!(split.old.len(), 1);
    assert_eq!(current_revision_number(&split.old), 5);
    assert_eq!(
        keep_current(&split.current).unwrap().metadata.name.as_deref(),
        Some("b")
    );
    assert_eq!(current_revision_number(&[]), 1);
}

#[test]
fn cleanup_keeps_the_limit_and_live_revisions() {
    let revs = [
        rev("r3", 3, "h3"),
        rev("r1", 1, "h1"),
        rev("r2", 2, "h2"),
        rev("r4", 4, "h4"),
    ];
    let refs: Vec<&ControllerRevision> = revs.iter().collect();
    let names = |v: Vec<&ControllerRevision>| -> Vec<String> {
        v.into_iter().map(|r| r.metadata.name.clone().unwrap()).collect()
    };
    assert_eq!(names(cleanup_history(&refs, 2, &BTreeSet::new())), ["r1", "r2"]);
    assert_eq!(
        names(cleanup_history(&refs, 2, &BTreeSet::from(["h1"]))),
        ["r2", "r3"]
    );
    assert!(cleanup_history(&refs, 10, &BTreeSet::new()).is_empty());
    assert_eq!(cleanup_history(&refs, 0, &BTreeSet::new()).len(), 4);
}
