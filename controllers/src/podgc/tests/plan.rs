//! Table tests of the four collections and the Failed patch. The first cases of each table are
//! upstream's (`TestGCTerminated`, `TestGCOrphaned`, `TestGCUnscheduledTerminating`,
//! `TestGCTerminating`), with pods created an hour apart in list order.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::fixtures::{PodBuilder, arcs, evicted, names, node, pod, t};
use crate::podgc::plan::*;

/// `name` with `phase`, bound to `node`, created `i` hours after the first.
fn pod_at(i: i64, name: &str, phase: &str) -> PodBuilder {
    pod(name).phase(phase).on_node("node").created(t(i * 3600))
}

/// Pods from `(name, phase)` pairs, created an hour apart.
fn phased(pairs: &[(&str, &str)]) -> Vec<Arc<Pod>> {
    let pods = pairs.iter().zip(0..).map(|((n, p), i)| pod_at(i, n, p).build());
    arcs(pods.collect())
}

#[test]
fn gc_terminated_deletes_the_oldest_terminated_pods_beyond_the_threshold() {
    struct Case {
        pods: &'static [(&'static str, &'static str)],
        threshold: usize,
        deleted: &'static [&'static str],
    }
    let cases = [
        // Upstream: a threshold of 0 turns the collection off.
        Case {
            pods: &[("a", "Failed"), ("b", "Succeeded")],
            threshold: 0,
            deleted: &[],
        },
        Case {
            pods: &[("a", "Failed"), ("b", "Succeeded"), ("c", "Failed")],
            threshold: 1,
            deleted: &["a", "b"],
        },
        Case {
            pods: &[("a", "Running"), ("b", "Succeeded"), ("c", "Failed")],
            threshold: 1,
            deleted: &["b"],
        },
        Case {
            pods: &[("a", "Failed"), ("b", "Succeeded")],
            threshold: 1,
            deleted: &["a"],
        },
        Case {
            pods: &[("a", "Failed"), ("b", "Succeeded")],
            threshold: 5,
            deleted: &[],
        },
        // Exactly at the threshold: nothing.
        Case {
            pods: &[("a", "Failed"), ("b", "Succeeded")],
            threshold: 2,
            deleted: &[],
        },
        // Pending, Running and Unknown never count; a pod without a phase does (as upstream).
        Case {
            pods: &[
                ("a", "Pending"),
                ("b", "Running"),
                ("c", "Unknown"),
                ("d", ""),
                ("e", "Failed"),
            ],
            threshold: 1,
            deleted: &["d"],
        },
    ];
    for (i, case) in cases.iter().enumerate() {
        let pods = phased(case.pods);
        let deleted = gc_terminated(&pods, case.threshold);
        assert_eq!(names(&deleted), case.deleted, "case {i}");
    }
}

#[test]
fn gc_terminated_deletes_evicted_pods_first_then_oldest_then_by_name() {
    let pods = arcs(vec![
        pod_at(0, "old", "Failed").build(),
        evicted(pod_at(5, "evicted-new", "Failed")),
        pod_at(2, "tie-b", "Succeeded").build(),
        pod_at(2, "tie-a", "Succeeded").build(),
        evicted(pod_at(4, "evicted-old", "Failed")),
        pod_at(9, "newest", "Failed").build(),
    ]);
    let deleted = gc_terminated(&pods, 1);
    assert_eq!(
        names(&deleted),
        ["evicted-old", "evicted-new", "old", "tie-a", "tie-b"]
    );
    assert!(pod_is_evicted(&deleted[0]) && !pod_is_evicted(&deleted[2]));
}

#[test]
fn gc_orphaned_takes_the_pods_of_deleted_nodes_in_any_phase() {
    // Upstream TestGCOrphaned: every pod of a missing node goes, whatever its phase.
    let pods = arcs(vec![
        pod("a").phase("Failed").on_node("gone").build(),
        pod("b").phase("Succeeded").on_node("gone").build(),
        pod("c").running().on_node("gone").build(),
        pod("d").running().on_node("here").build(),
        pod("e").pending().build(),
    ]);
    let nodes = vec![node("here").arc()];
    let missing = orphaned_node_names(&pods, &nodes);
    assert_eq!(missing, BTreeSet::from(["gone".to_string()]));
    assert_eq!(names(&gc_orphaned(&pods, &missing)), ["a", "b", "c"]);
    assert!(gc_orphaned(&pods, &BTreeSet::new()).is_empty());
    assert!(orphaned_node_names(&pods, &[node("here").arc(), node("gone").arc()]).is_empty());
}

#[test]
fn gc_unscheduled_terminating_takes_terminating_pods_without_a_node() {
    // Upstream: "Unscheduled pod in any phase must be deleted".
    let unscheduled = arcs(vec![
        pod("a").phase("Failed").deleting().build(),
        pod("b").phase("Succeeded").deleting().build(),
        pod("c").running().deleting().build(),
    ]);
    assert_eq!(names(&gc_unscheduled_terminating(&unscheduled)), ["a", "b", "c"]);
    // Upstream: "Scheduled pod in any phase must not be deleted" (nor one not terminating).
    let others = arcs(vec![
        pod("a").phase("Failed").build(),
        pod("b").phase("Succeeded").on_node("node").build(),
        pod("c").running().deleting().on_node("node").build(),
    ]);
    assert!(gc_unscheduled_terminating(&others).is_empty());
}

#[test]
fn gc_terminating_takes_terminating_pods_on_not_ready_out_of_service_nodes() {
    let nodes = vec![
        node("oos").not_ready().tainted(TAINT_NODE_OUT_OF_SERVICE).arc(),
        node("oos-false")
            .ready_status("False")
            .tainted(TAINT_NODE_OUT_OF_SERVICE)
            .arc(),
        node("ready-oos").tainted(TAINT_NODE_OUT_OF_SERVICE).arc(),
        node("not-ready")
            .not_ready()
            .tainted("node.kubernetes.io/unreachable")
            .arc(),
    ];
    let pods = arcs(vec![
        pod("b")
            .running()
            .on_node("oos")
            .deleting()
            .created(t(20))
            .build(),
        pod("a")
            .running()
            .on_node("oos")
            .deleting()
            .created(t(10))
            .build(),
        pod("c")
            .phase("Succeeded")
            .on_node("oos-false")
            .deleting()
            .build(),
        pod("d").running().on_node("oos").build(),
        pod("e").running().on_node("ready-oos").deleting().build(),
        pod("f").running().on_node("not-ready").deleting().build(),
        pod("g").running().on_node("missing").deleting().build(),
        pod("h").running().deleting().build(),
    ]);
    // Sorted for deletion: the older of a and b first.
    assert_eq!(names(&gc_terminating(&pods, &nodes)), ["c", "a", "b"]);
}

#[test]
fn predicates_follow_upstream() {
    assert!(is_pod_terminated(&pod("a").phase("Succeeded").build()));
    assert!(!is_pod_terminated(&pod("a").unknown().build()));
    assert!(is_pod_terminating(&pod("a").phase("Failed").deleting().build()));
    assert!(!pod_is_evicted(&pod("a").phase("Failed").build()));
    assert!(is_node_ready(&node("n").build()));
    assert!(!is_node_ready(&node("n").ready_status("False").build()));
    let mut no_status = node("n").build();
    no_status.status = None;
    assert!(!is_node_ready(&no_status));
    assert!(taint_key_exists(&node("n").tainted("k").build(), "k"));
    assert!(!taint_key_exists(&node("n").build(), "k"));
}

#[test]
fn mark_failed_patch_makes_a_live_pod_failed_and_leaves_terminal_ones() {
    assert_eq!(
        mark_failed_patch(&pod("a").phase("Succeeded").build(), None, t(0)),
        None
    );
    assert_eq!(
        mark_failed_patch(
            &pod("a").phase("Failed").build(),
            Some(&orphaned_condition()),
            t(0)
        ),
        None
    );
    let running = pod("a").running().uid("u-a").build();
    assert_eq!(
        mark_failed_patch(&running, None, t(0)),
        Some(json!({"metadata": {"uid": "u-a"}, "status": {"phase": "Failed"}}))
    );
    let patch = mark_failed_patch(&running, Some(&orphaned_condition()), t(0)).unwrap();
    assert_eq!(
        patch["status"]["conditions"],
        json!([{
            "type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists", "lastTransitionTime": t(0).to_string(),
        }])
    );
    assert_eq!(patch["status"]["phase"], "Failed");
}

#[test]
fn mark_failed_patch_keeps_the_transition_time_of_an_unchanged_condition() {
    let mut pod = pod("a").pending().build();
    let earlier = PodCondition {
        last_transition_time: Some(Time(t(-300))),
        ..orphaned_condition()
    };
    pod.status.as_mut().unwrap().conditions = Some(vec![earlier]);
    let patch = mark_failed_patch(&pod, Some(&orphaned_condition()), t(0)).unwrap();
    assert_eq!(
        patch["status"]["conditions"][0]["lastTransitionTime"],
        t(-300).to_string()
    );
    // A changed status is a transition: now.
    pod.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "False".into();
    let patch = mark_failed_patch(&pod, Some(&orphaned_condition()), t(0)).unwrap();
    assert_eq!(
        patch["status"]["conditions"][0]["lastTransitionTime"],
        t(0).to_string()
    );
}
