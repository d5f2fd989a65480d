use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::fixtures::{names, now, pod, rs, t};
use crate::replicaset::plan::*;

fn running(name: &str, node: &str, ready_secs: i64) -> Pod {
    pod(name)
        .on_node(node)
        .running()
        .ready_since(t(-ready_secs))
        .build()
}

fn deleted_names(plan: &ReplicasPlan) -> Vec<String> {
    match plan {
        ReplicasPlan::Delete { pods } => pods.iter().map(|p| p.name.clone()).collect(),
        other => panic!("expected a Delete plan, got {other:?}"),
    }
}

#[test]
fn create_nothing_or_delete_by_count() {
    let pods: Vec<Pod> = (0..3).map(|i| running(&format!("p{i}"), "n1", 60)).collect();
    let none: [&Pod; 0] = [];
    let cases = [
        (5, ReplicasPlan::Create { count: 2 }),
        (3, ReplicasPlan::Nothing),
        (
            0,
            ReplicasPlan::Delete {
                pods: pods.iter().map(PodRef::of).collect(),
            },
        ),
    ];
    for (replicas, want) in cases {
        let set = rs("web").replicas(replicas).build();
        assert_eq!(
            plan_replicas(&set, &pods, &none, now(), BURST_REPLICAS),
            want,
            "replicas {replicas}"
        );
    }
}

#[test]
fn burst_caps_creates_and_deletes() {
    let none: [&Pod; 0] = [];
    let no_pods: [&Pod; 0] = [];
    let big = rs("web").replicas(1200).build();
    assert_eq!(
        plan_replicas(&big, &no_pods, &none, now(), BURST_REPLICAS),
        ReplicasPlan::Create { count: 500 }
    );
    let pods: Vec<Pod> = (0..8).map(|i| running(&format!("p{i}"), "n1", 60)).collect();
    let small = rs("web").replicas(1).build();
    let plan = plan_replicas(&small, &pods, &none, now(), 3);
    assert_eq!(deleted_names(&plan).len(), 3);
}

#[test]
fn missing_replicas_means_one_and_deleting_rs_does_nothing() {
    let none: [&Pod; 0] = [];
    let no_pods: [&Pod; 0] = [];
    let unset = rs("web").replicas_unset().build();
    assert_eq!(
        plan_replicas(&unset, &no_pods, &none, now(), BURST_REPLICAS),
        ReplicasPlan::Create { count: 1 }
    );
    let deleting = rs("web").replicas(5).deleting().build();
    assert_eq!(
        plan_replicas(&deleting, &no_pods, &none, now(), BURST_REPLICAS),
        ReplicasPlan::Nothing
    );
}

#[test]
fn delete_prefers_early_lifecycle_pods() {
    let pods = vec![
        Arc::new(running("old-ready", "n1", 3600)),
        Arc::new(pod("unscheduled").pending().build()),
        Arc::new(running("new-ready", "n2", 10)),
        Arc::new(
            pod("starting")
                .on_node("n3")
                .running()
                .not_ready_since(t(-5))
                .build(),
        ),
    ];
    let set = rs("web").replicas(1).build();
    let plan = plan_replicas(&set, &pods, &pods, now(), BURST_REPLICAS);
    assert_eq!(deleted_names(&plan), ["unscheduled", "starting", "new-ready"]);
    let keys: Vec<String> = match &plan {
        ReplicasPlan::Delete { pods } => pods.iter().map(PodRef::key).collect(),
        _ => unreachable!("checked above"),
    };
    assert_eq!(keys[0], "default/unscheduled");
}

#[test]
fn delete_all_keeps_input_order() {
    let pods = [running("b", "n1", 60), running("a", "n1", 10)];
    let got = get_pods_to_delete(&pods, &pods, 2, now());
    assert_eq!(names(got), ["b", "a"]);
}

#[test]
fn doubled_up_node_of_sibling_replicasets_is_drained_first() {
    // Our pods x (on n1) and y (on n2) look alike; the old sibling RS has two pods on n2.
    let ours = rs("web-new")
        .selector(&[("app", "web"), ("v", "2")])
        .controlled_by("uid-deploy")
        .replicas(1)
        .build();
    let old = rs("web-old")
        .selector(&[("app", "web"), ("v", "1")])
        .controlled_by("uid-deploy")
        .build();
    let unrelated = rs("db")
        .selector(&[("app", "web")])
        .controlled_by("uid-other")
        .build();
    let v2 = [("app", "web"), ("v", "2")];
    let v1 = [("app", "web"), ("v", "1")];
    let x = pod("x")
        .on_node("n1")
        .running()
        .ready_since(t(-60))
        .labels(&v2)
        .uid("uid-a")
        .build();
    let y = pod("y")
        .on_node("n2")
        .running()
        .ready_since(t(-60))
        .labels(&v2)
        .uid("uid-b")
        .build();
    let namespace_pods = vec![
        x.clone(),
        y.clone(),
        pod("o1").on_node("n2").running().labels(&v1).build(),
        pod("o2").on_node("n2").running().labels(&v1).build(),
        pod("o3")
            .on_node("n1")
            .running()
            .labels(&v1)
            .namespace("other")
            .build(),
    ];
    let replica_sets = [ours.clone(), old, unrelated];
    let related = indirectly_related_pods(&ours, &replica_sets, &namespace_pods);
    assert_eq!(names(related.iter().copied()), ["x", "y", "o1", "o2"]);
    let plan = plan_replicas(&ours, &[&x, &y], &related, now(), BURST_REPLICAS);
    assert_eq!(deleted_names(&plan), ["y"], "y shares n2 with the old RS's pods");
    let none: [&Pod; 0] = [];
    assert_eq!(
        deleted_names(&plan_replicas(&ours, &[&x, &y], &none, now(), BURST_REPLICAS)),
        ["x"],
        "UID tie-break"
    );
}

#[test]
fn related_pods_are_empty_without_a_controller_and_deduplicated_by_uid() {
    let lone = rs("lone").build();
    let pods = [pod("p").build()];
    assert!(indirectly_related_pods(&lone, std::slice::from_ref(&lone), &pods).is_empty());
    let a = rs("a").controlled_by("uid-d").build();
    let b = rs("b").controlled_by("uid-d").build();
    let both_select = [pod("p").build()];
    let related = indirectly_related_pods(&a, &[a.clone(), b.clone()], &both_select);
    assert_eq!(related.len(), 1);
    let uidless = [pod("p").no_uid().build()];
    assert_eq!(indirectly_related_pods(&a, &[a.clone(), b], &uidless).len(), 1);
}

/// `--disable pod-deletion-ranking`: the oldest pods go first, ready or not; the ranking keeps
/// the ready old pods and deletes the pending new ones.
#[test]
fn without_the_ranking_the_oldest_pods_go_first() {
    let old_ready = |name: &str, created: i64| {
        pod(name)
            .on_node("n1")
            .running()
            .ready_since(t(-50))
            .created(t(-created))
            .build()
    };
    let pending = |name: &str| pod(name).pending().created(t(-5)).build();
    // Name order is not age order: "a-new" sorts first but is the youngest.
    let pods = vec![
        old_ready("z-old", 100),
        pending("a-new"),
        old_ready("m-old", 90),
        pending("b-new"),
    ];
    let none: [&Pod; 0] = [];
    let set = rs("web").replicas(2).build();
    let ranked = plan_replicas_in_order(&set, &pods, &none, now(), BURST_REPLICAS, DeletionOrder::Ranked);
    assert_eq!(deleted_names(&ranked), ["a-new", "b-new"]);
    assert_eq!(ranked, plan_replicas(&set, &pods, &none, now(), BURST_REPLICAS));
    let plain = plan_replicas_in_order(
        &set,
        &pods,
        &none,
        now(),
        BURST_REPLICAS,
        DeletionOrder::OldestFirst,
    );
    assert_eq!(deleted_names(&plain), ["z-old", "m-old"]);
}
