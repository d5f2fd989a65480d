//! The claim decisions and patches, for pods claimed by a ReplicaSet and ReplicaSets claimed by a
//! Deployment; the async claim runs in the controllers' own tests.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};
use serde_json::json;

use super::*;
use crate::controller_utils::selector::selector_of;
use crate::replicaset::tests::fixtures::{pod, rs};

#[test]
fn claim_decision_table() {
    let owner = rs("web").build().metadata;
    let deleting_owner = rs("web").deleting().build().metadata;
    let cases = [
        (
            "owned and matching",
            &owner,
            pod("p").controlled_by("uid-web").build(),
            true,
            ClaimDecision::Keep,
        ),
        (
            "owned, not matching",
            &owner,
            pod("p").controlled_by("uid-web").build(),
            false,
            ClaimDecision::Release,
        ),
        (
            "owned, not matching, owner deleting",
            &deleting_owner,
            pod("p").controlled_by("uid-web").build(),
            false,
            ClaimDecision::Ignore,
        ),
        (
            "owned and matching, owner deleting",
            &deleting_owner,
            pod("p").controlled_by("uid-web").build(),
            true,
            ClaimDecision::Keep,
        ),
        (
            "other controller",
            &owner,
            pod("p").controlled_by("uid-x").build(),
            true,
            ClaimDecision::Ignore,
        ),
        (
            "orphan matching",
            &owner,
            pod("p").build(),
            true,
            ClaimDecision::Adopt,
        ),
        (
            "orphan with non-controller ref",
            &owner,
            pod("p").owner("x", false).build(),
            true,
            ClaimDecision::Adopt,
        ),
        (
            "orphan not matching",
            &owner,
            pod("p").build(),
            false,
            ClaimDecision::Ignore,
        ),
        (
            "orphan being deleted",
            &owner,
            pod("p").deleting().build(),
            true,
            ClaimDecision::Ignore,
        ),
        (
            "orphan, owner deleting",
            &deleting_owner,
            pod("p").build(),
            true,
            ClaimDecision::Ignore,
        ),
        (
            "orphan in another namespace",
            &owner,
            pod("p").namespace("other").build(),
            true,
            ClaimDecision::Ignore,
        ),
    ];
    for (name, owner, p, matches, want) in cases {
        assert_eq!(claim_decision(owner, &p.metadata, matches), want, "{name}");
    }
}

#[test]
fn claim_decisions_follow_the_selector() {
    let web = rs("web").build();
    let pods: Vec<Arc<Pod>> = [
        pod("kept").controlled_by("uid-web").build(),
        pod("orphan").build(),
        pod("relabelled")
            .controlled_by("uid-web")
            .labels(&[("app", "db")])
            .build(),
        pod("stranger").labels(&[("app", "db")]).build(),
        pod("theirs").controlled_by("uid-other").build(),
    ]
    .into_iter()
    .map(Arc::new)
    .collect();
    let selector = &web.spec.as_ref().expect("spec").selector;
    use ClaimDecision::*;
    assert_eq!(
        claim_decisions(&web.metadata, &selector_of(selector), &pods),
        [Keep, Adopt, Release, Ignore, Ignore]
    );
}

#[test]
fn adopt_and_release_patches() {
    let web = rs("web").build();
    let reference = new_controller_ref(&web.metadata, "apps/v1", "ReplicaSet");
    assert_eq!(
        adopt_patch(&reference, "uid-p"),
        json!({"metadata": {"uid": "uid-p", "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "uid-web",
            "controller": true, "blockOwnerDeletion": true
        }]}})
    );
    assert_eq!(
        release_patch("uid-web", "uid-p"),
        json!({"metadata": {"uid": "uid-p", "ownerReferences": [{"$patch": "delete", "uid": "uid-web"}]}})
    );
}

// ----- the same rules for ReplicaSets claimed by a Deployment -----

fn meta(ns: &str, uid: &str, labels: &[(&str, &str)], owner: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        namespace: Some(ns.to_string()),
        uid: Some(uid.to_string()),
        labels: Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        owner_references: owner.map(|uid| {
            vec![OwnerReference {
                uid: uid.to_string(),
                controller: Some(true),
                ..Default::default()
            }]
        }),
        ..Default::default()
    }
}

/// The decision for `rs` under a Deployment selecting `app=web`.
fn decide(d: &ObjectMeta, rs: &ObjectMeta) -> ClaimDecision {
    let selector = LabelSelector {
        match_labels: Some([("app".to_string(), "web".to_string())].into()),
        ..Default::default()
    };
    claim_decision(d, rs, selector_of(&selector).matches(&rs.labels.as_ref()))
}

#[test]
fn a_deployment_keeps_adopts_releases_and_ignores_replica_sets() {
    let d = meta("default", "d1", &[], None);
    let web = [("app", "web")];
    let db = [("app", "db")];
    assert_eq!(
        decide(&d, &meta("default", "r", &web, Some("d1"))),
        ClaimDecision::Keep
    );
    assert_eq!(
        decide(&d, &meta("default", "r", &web, None)),
        ClaimDecision::Adopt
    );
    assert_eq!(
        decide(&d, &meta("default", "r", &db, Some("d1"))),
        ClaimDecision::Release
    );
    assert_eq!(
        decide(&d, &meta("default", "r", &web, Some("x"))),
        ClaimDecision::Ignore
    );
    assert_eq!(
        decide(&d, &meta("default", "r", &db, None)),
        ClaimDecision::Ignore
    );
    assert_eq!(decide(&d, &meta("other", "r", &web, None)), ClaimDecision::Ignore);
}

#[test]
fn a_deleting_deployment_neither_adopts_nor_releases() {
    let mut d = meta("default", "d1", &[], None);
    d.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let orphan = meta("default", "r", &[("app", "web")], None);
    assert_eq!(decide(&d, &orphan), ClaimDecision::Ignore);
    let relabelled = meta("default", "r", &[("app", "db")], Some("d1"));
    assert_eq!(decide(&d, &relabelled), ClaimDecision::Ignore);
}

// ----- the lesson: no ControllerRef check (`--disable controller-ref-claim`) -----

#[test]
fn by_selector_a_controller_takes_every_matching_pod_and_releases_none() {
    let web = rs("web").build();
    let pods: Vec<Arc<Pod>> = [
        pod("kept").controlled_by("uid-web").build(),
        pod("orphan").build(),
        pod("relabelled")
            .controlled_by("uid-web")
            .labels(&[("app", "db")])
            .build(),
        pod("stranger").labels(&[("app", "db")]).build(),
        pod("theirs").controlled_by("uid-other").build(),
    ]
    .into_iter()
    .map(Arc::new)
    .collect();
    let selector = selector_of(&web.spec.as_ref().expect("spec").selector);
    use ClaimDecision::*;
    assert_eq!(
        claim_decisions_in(ClaimMode::BySelector, &web.metadata, &selector, &pods),
        [Keep, Adopt, Ignore, Ignore, Adopt]
    );
    assert_eq!(ClaimMode::of(true), ClaimMode::BySelector);
    assert_eq!(ClaimMode::of(false), ClaimMode::ControllerRef);
}

#[test]
fn a_take_over_patch_removes_the_other_controller_and_adds_ours() {
    let web = rs("web").build();
    let reference = new_controller_ref(&web.metadata, "apps/v1", "ReplicaSet");
    assert_eq!(
        take_over_patch(&reference, "uid-other", "uid-p"),
        json!({"metadata": {"uid": "uid-p", "ownerReferences": [
            {"$patch": "delete", "uid": "uid-other"},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "uid-web",
             "controller": true, "blockOwnerDeletion": true}
        ]}})
    );
}

/// Against a real API server: without the check, a claim adopts a pod another ReplicaSet
/// controls (its reference replaced by ours); with it, the pod is left alone.
#[tokio::test(start_paused = true)]
async fn by_selector_a_claim_takes_an_owned_pod_from_its_controller() {
    use crate::runtime::Typed;
    use crate::testing::{test_client, test_clock};
    use k8s_openapi::api::apps::v1::ReplicaSet;

    let clock = test_clock();
    let client = test_client(&clock).await;
    let replicasets = Typed::<ReplicaSet>::new(client.clone());
    let pods = Typed::<Pod>::new(client);
    let mut created = Vec::new();
    for name in ["web", "other"] {
        let set: ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
        }))
        .unwrap();
        created.push(replicasets.create(Some("default"), &set).await.unwrap());
    }
    let (web, other) = (&created[0], &created[1]);
    let mut theirs: Pod = serde_json::from_value(json!({
        "metadata": {"name": "theirs", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
    .unwrap();
    theirs.metadata.owner_references =
        Some(vec![new_controller_ref(&other.metadata, "apps/v1", "ReplicaSet")]);
    let theirs = Arc::new(pods.create(Some("default"), &theirs).await.unwrap());
    let selector = selector_of(&web.spec.as_ref().expect("spec").selector);

    let checked = ControllerRefManager::new(web, &selector, &replicasets, &pods);
    assert!(
        checked
            .claim(std::slice::from_ref(&theirs))
            .await
            .unwrap()
            .is_empty()
    );

    let unchecked =
        ControllerRefManager::new(web, &selector, &replicasets, &pods).with_mode(ClaimMode::BySelector);
    let owned = unchecked.claim(std::slice::from_ref(&theirs)).await.unwrap();
    assert_eq!(owned.len(), 1);
    let refs = owned[0].metadata.owner_references.clone().unwrap_or_default();
    assert_eq!(refs.len(), 1, "{refs:?}");
    assert_eq!(Some(refs[0].uid.as_str()), web.metadata.uid.as_deref());
    assert_eq!(refs[0].controller, Some(true));
}
