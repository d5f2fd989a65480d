//! Table tests of `manage` ([`plan::manage`], upstream `podsShouldBeOnNode` cases of
//! `daemon_controller_test.go`) and of the failed-pod backoff.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::fixtures::{DsBuilder, ds, node, now, pod, t};
use crate::daemon::backoff::Backoff;
use crate::daemon::plan::{self, FAILED_DAEMON_POD_REASON, ManagePlan, SUCCEEDED_DAEMON_POD_REASON};

fn manage_with(
    d: DsBuilder,
    nodes: &[Node],
    pods: &[Pod],
    backoff: &mut Backoff,
    at: jiff::Timestamp,
) -> ManagePlan {
    let d = d.build();
    let nodes: Vec<&Node> = nodes.iter().collect();
    let by_node = plan::get_nodes_to_daemon_pods(pods.iter(), false);
    plan::manage(&d, &nodes, &by_node, "new", at, backoff)
}

fn manage(d: DsBuilder, nodes: &[Node], pods: &[Pod]) -> ManagePlan {
    manage_with(d, nodes, pods, &mut Backoff::default(), now())
}

fn three() -> Vec<Node> {
    vec![node("n1").build(), node("n2").build(), node("n3").build()]
}

#[test]
fn creates_on_every_node_without_a_pod() {
    let p = manage(ds("agent"), &three(), &[pod("a").on("n2").hash("new").build()]);
    assert_eq!(p.nodes_needing_daemon_pods, ["n1", "n3"]);
    assert!(p.pods_to_delete.is_empty());
}

#[test]
fn pinned_unbound_pod_counts_for_its_node() {
    let p = manage(ds("agent"), &three(), &[pod("a").pinned("n1").build()]);
    assert_eq!(p.nodes_needing_daemon_pods, ["n2", "n3"]);
}

#[test]
fn no_pod_on_nodes_that_should_not_run_and_misplaced_pods_go() {
    let nodes = vec![node("n1").label("role", "agent").build(), node("n2").build()];
    let pods = [pod("a").on("n2").build(), pod("b").on("n2").deleting().build()];
    let p = manage(ds("agent").node_selector("role", "agent"), &nodes, &pods);
    assert_eq!(p.nodes_needing_daemon_pods, ["n1"]);
    assert_eq!(
        p.pods_to_delete,
        ["a"],
        "the pod already being deleted is left alone"
    );
}

#[test]
fn tainted_node_keeps_its_pod_until_no_execute() {
    let pods = [pod("a").on("n1").build()];
    let no_schedule = [node("n1").taint("k", "v", "NoSchedule").build()];
    let p = manage(ds("agent"), &no_schedule, &pods);
    assert_eq!(p, ManagePlan::default());
    let no_execute = [node("n1").taint("k", "v", "NoExecute").build()];
    assert_eq!(manage(ds("agent"), &no_execute, &pods).pods_to_delete, ["a"]);
}

#[test]
fn extra_pods_go_oldest_bound_stays() {
    let pods = [
        pod("young").on("n1").created(t(-10)).build(),
        pod("old").on("n1").created(t(-100)).build(),
        pod("unbound").pinned("n1").created(t(-500)).build(),
    ];
    let p = manage(ds("agent"), &[node("n1").build()], &pods);
    assert_eq!(p.pods_to_delete, ["young", "unbound"]);
    assert!(p.nodes_needing_daemon_pods.is_empty());
}

#[test]
fn succeeded_and_failed_pods_are_deleted_with_events() {
    let pods = [
        pod("done").on("n1").phase("Succeeded").build(),
        pod("broken").on("n2").phase("Failed").build(),
    ];
    let p = manage(ds("agent"), &three()[..2], &pods);
    assert_eq!(p.pods_to_delete, ["done", "broken"]);
    assert!(
        p.nodes_needing_daemon_pods.is_empty(),
        "recreated once they are gone"
    );
    let reasons: Vec<_> = p.events.iter().map(|e| (e.warning, e.reason)).collect();
    assert_eq!(
        reasons,
        [
            (false, SUCCEEDED_DAEMON_POD_REASON),
            (true, FAILED_DAEMON_POD_REASON)
        ]
    );
    assert_eq!(
        p.events[1].message,
        "Found failed daemon pod default/broken on node n2, will try to kill it"
    );
    assert_eq!(
        p.events[0].message,
        "Found succeeded daemon pod default/done on node n1, will try to delete it"
    );
}

#[test]
fn failed_pod_deletions_back_off_per_node() {
    let nodes = [node("n1").build()];
    let failed = [pod("f1").on("n1").phase("Failed").build()];
    let mut backoff = Backoff::default();
    let first = manage_with(ds("agent"), &nodes, &failed, &mut backoff, now());
    assert_eq!(first.pods_to_delete, ["f1"]);
    // The next failure 0.5 s later waits for the 1 s backoff.
    let again = [pod("f2").on("n1").phase("Failed").build()];
    let soon = manage_with(
        ds("agent"),
        &nodes,
        &again,
        &mut backoff,
        t(0) + jiff::SignedDuration::from_millis(500),
    );
    assert!(soon.pods_to_delete.is_empty());
    assert_eq!(soon.requeue_after, Some(Duration::from_secs(1)));
    // After it: deleted, and the delay doubles.
    let later = manage_with(ds("agent"), &nodes, &again, &mut backoff, t(1));
    assert_eq!(later.pods_to_delete, ["f2"]);
    let key = plan::failed_pods_backoff_key(&ds("agent").build(), "n1");
    assert_eq!(backoff.get(&key), Duration::from_secs(2));
}

#[test]
fn backoff_doubles_to_the_max_and_expires() {
    let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(8));
    for (i, want) in [1, 2, 4, 8, 8].into_iter().enumerate() {
        b.next("k", t(i as i64));
        assert_eq!(b.get("k"), Duration::from_secs(want));
    }
    assert!(b.is_in_back_off_since_update("k", t(5)));
    assert!(!b.is_in_back_off_since_update("k", t(4 + 8)));
    // Untouched for more than twice the max: starts over.
    b.next("k", t(4 + 17));
    assert_eq!(b.get("k"), Duration::from_secs(1));
    b.gc(t(100));
    assert_eq!(b.get("k"), Duration::ZERO);
}

fn surge() -> DsBuilder {
    ds("agent")
        .surge(IntOrString::Int(1))
        .unavailable(IntOrString::Int(0))
}

#[test]
fn surge_keeps_old_until_new_is_available() {
    let nodes = [node("n1").build()];
    let old = pod("old")
        .on("n1")
        .hash("old")
        .ready_since(t(-100))
        .created(t(-100));
    let new_not_ready = pod("new").on("n1").hash("new").created(t(-5));
    let p = manage(surge(), &nodes, &[old.build(), new_not_ready.build()]);
    assert!(p.pods_to_delete.is_empty());
    let old = pod("old")
        .on("n1")
        .hash("old")
        .ready_since(t(-100))
        .created(t(-100));
    let new_ready = pod("new").on("n1").hash("new").created(t(-5)).ready_since(t(-1));
    let p = manage(surge(), &nodes, &[old.build(), new_ready.build()]);
    assert_eq!(p.pods_to_delete, ["old"]);
}

#[test]
fn surge_replaces_an_unready_old_pod_at_once_and_prunes_extras() {
    let nodes = [node("n1").build()];
    let pods = [
        pod("old")
            .on("n1")
            .hash("old")
            .created(t(-100))
            .phase("Running")
            .build(),
        pod("old2").on("n1").hash("old").created(t(-50)).build(),
        pod("new").on("n1").hash("new").created(t(-5)).build(),
        pod("new2").on("n1").hash("new").created(t(-4)).build(),
    ];
    let p = manage(surge(), &nodes, &pods);
    assert_eq!(p.pods_to_delete, ["old2", "new2", "old"]);
}

#[test]
fn surge_min_ready_seconds_counts() {
    let nodes = [node("n1").build()];
    let pods = [
        pod("old")
            .on("n1")
            .hash("old")
            .ready_since(t(-100))
            .created(t(-100))
            .build(),
        pod("new")
            .on("n1")
            .hash("new")
            .created(t(-10))
            .ready_since(t(-5))
            .build(),
    ];
    assert!(
        manage(surge().min_ready_seconds(10), &nodes, &pods)
            .pods_to_delete
            .is_empty()
    );
    assert_eq!(
        manage(surge().min_ready_seconds(5), &nodes, &pods).pods_to_delete,
        ["old"]
    );
}

#[test]
fn unscheduled_pods_of_vanished_nodes_are_deleted() {
    let pods = [
        pod("ghost").pinned("gone").build(),
        pod("bound").on("gone").build(),
    ];
    let p = manage(ds("agent"), &[node("n1").build()], &pods);
    assert_eq!(p.nodes_needing_daemon_pods, ["n1"]);
    assert_eq!(p.pods_to_delete, ["ghost"], "bound pods are the pod GC's");
}

#[test]
fn deleted_terminal_pods_are_invisible_unless_asked_for() {
    let pods = [pod("f").on("n1").phase("Failed").deleting().build()];
    assert!(plan::get_nodes_to_daemon_pods(pods.iter(), false).is_empty());
    assert_eq!(plan::get_nodes_to_daemon_pods(pods.iter(), true).len(), 1);
}
