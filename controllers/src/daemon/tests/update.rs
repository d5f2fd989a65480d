//! Table tests of the rolling-update arithmetic ([`surge_count`], [`unavailable_count`],
//! [`updated_desired_node_counts`]) and of [`rolling_update`] (upstream `update_test.go`).

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::fixtures::{DsBuilder, ds, node, now, pod, t};
use crate::daemon::plan;
use crate::daemon::update::*;

fn int(i: i32) -> IntOrString {
    IntOrString::Int(i)
}

fn pct(s: &str) -> IntOrString {
    IntOrString::String(s.into())
}

fn nodes(n: usize) -> Vec<Node> {
    (1..=n).map(|i| node(&format!("n{i}")).build()).collect()
}

#[test]
fn limits_round_up_and_default_to_one_unavailable() {
    // (surge, unavailable, desired nodes) → (maxSurge, maxUnavailable)
    let cases: Vec<(IntOrString, IntOrString, usize, (i32, i32))> = vec![
        (int(0), int(1), 5, (0, 1)),
        (int(0), pct("50%"), 3, (0, 2)),
        (int(0), pct("10%"), 3, (0, 1)),
        (pct("34%"), int(0), 3, (2, 0)),
        (pct("1%"), int(0), 100, (1, 0)),
        (pct("100%"), int(0), 7, (7, 0)),
        (int(0), int(0), 3, (0, 1)),
        (pct("0%"), pct("0%"), 3, (0, 1)),
        (int(2), int(3), 10, (2, 3)),
    ];
    for (surge, unavailable, n, want) in cases {
        let d = ds("agent")
            .surge(surge.clone())
            .unavailable(unavailable.clone())
            .build();
        let nodes = nodes(n);
        let refs: Vec<&Node> = nodes.iter().collect();
        let limits = updated_desired_node_counts(&d, &refs, &mut Default::default()).unwrap();
        assert_eq!(
            (limits.max_surge, limits.max_unavailable),
            want,
            "{surge:?}/{unavailable:?} of {n}"
        );
        assert_eq!(limits.desired_number_scheduled, n as i32);
    }
}

#[test]
fn no_nodes_no_forced_unavailability() {
    let d = ds("agent").unavailable(int(0)).build();
    let limits = updated_desired_node_counts(&d, &[], &mut Default::default()).unwrap();
    assert_eq!((limits.max_surge, limits.max_unavailable), (0, 0));
}

#[test]
fn on_delete_and_bad_values() {
    let d = ds("agent").surge(int(3)).on_delete().build();
    assert_eq!(surge_count(&d, 10), Ok(0));
    assert_eq!(unavailable_count(&d, 10), Ok(0));
    assert!(!allows_surge(&d));
    let bad = ds("agent").unavailable(pct("lots")).build();
    assert!(unavailable_count(&bad, 3).is_err());
    assert!(
        allows_surge(&ds("agent").surge(pct("1%")).build()),
        "1% of one node rounds up to 1"
    );
}

fn update(d: DsBuilder, n: usize, pods: &[Pod]) -> RollingUpdatePlan {
    let d = d.build();
    let nodes = nodes(n);
    let refs: Vec<&Node> = nodes.iter().collect();
    let by_node = plan::get_nodes_to_daemon_pods(pods.iter(), false);
    rolling_update(&d, &refs, &by_node, "new", now()).unwrap()
}

fn old_ready(name: &str, node: &str) -> Pod {
    pod(name).on(node).hash("old").ready_since(t(-100)).build()
}

#[test]
fn without_surge_deletes_up_to_max_unavailable() {
    let pods: Vec<Pod> = (1..=4)
        .map(|i| old_ready(&format!("p{i}"), &format!("n{i}")))
        .collect();
    let p = update(ds("agent").unavailable(int(2)), 4, &pods);
    assert_eq!(p.pods_to_delete, ["p1", "p2"]);
    assert!(p.nodes_to_create.is_empty());
}

#[test]
fn without_surge_unavailable_nodes_use_up_the_budget() {
    let pods = vec![
        pod("new1").on("n1").hash("new").build(), // new, not available
        old_ready("p2", "n2"),
        old_ready("p3", "n3"),
    ];
    assert!(update(ds("agent"), 3, &pods).pods_to_delete.is_empty());
    // A node with no pod at all counts too.
    let pods = vec![old_ready("p2", "n2"), old_ready("p3", "n3")];
    assert!(update(ds("agent"), 3, &pods).pods_to_delete.is_empty());
}

#[test]
fn without_surge_unavailable_old_pods_are_always_replaced() {
    let pods = vec![
        pod("sick1").on("n1").hash("old").build(),
        pod("sick2").on("n2").hash("old").build(),
        old_ready("p3", "n3"),
    ];
    let p = update(ds("agent"), 3, &pods);
    assert_eq!(p.pods_to_delete, ["sick1", "sick2"]);
}

#[test]
fn surge_creates_up_to_max_surge_beside_available_old_pods() {
    let pods: Vec<Pod> = (1..=3)
        .map(|i| old_ready(&format!("p{i}"), &format!("n{i}")))
        .collect();
    let p = update(ds("agent").surge(int(1)).unavailable(int(0)), 3, &pods);
    assert_eq!(p.nodes_to_create, ["n1"]);
    assert!(p.pods_to_delete.is_empty());
    let p = update(ds("agent").surge(pct("100%")).unavailable(int(0)), 3, &pods);
    assert_eq!(p.nodes_to_create, ["n1", "n2", "n3"]);
}

#[test]
fn surge_waits_for_the_new_pod_then_drops_the_old_one() {
    let waiting = vec![
        old_ready("p1", "n1"),
        pod("new1").on("n1").hash("new").build(),
        old_ready("p2", "n2"),
    ];
    let p = update(ds("agent").surge(int(1)).unavailable(int(0)), 2, &waiting);
    assert!(
        p.nodes_to_create.is_empty() && p.pods_to_delete.is_empty(),
        "{p:?}"
    );
    let done = vec![
        old_ready("p1", "n1"),
        pod("new1").on("n1").hash("new").ready_since(t(-1)).build(),
        old_ready("p2", "n2"),
    ];
    let p = update(ds("agent").surge(int(1)).unavailable(int(0)), 2, &done);
    assert_eq!(p.pods_to_delete, ["p1"]);
    assert_eq!(p.nodes_to_create, ["n2"]);
}

#[test]
fn surge_replaces_unavailable_old_pods_beyond_the_budget() {
    let pods = vec![
        pod("sick").on("n1").hash("old").build(),
        old_ready("p2", "n2"),
        old_ready("p3", "n3"),
    ];
    let p = update(ds("agent").surge(int(1)).unavailable(int(0)), 3, &pods);
    assert_eq!(p.nodes_to_create, ["n1", "n2"]);
}

#[test]
fn surge_gives_up_nodes_only_while_enough_are_available() {
    // n3 no longer fits (nodeSelector), its old pod is available; n1 and n2 fit.
    let nodes = [
        node("n1").label("role", "agent").build(),
        node("n2").label("role", "agent").build(),
        node("n3").build(),
    ];
    let d = ds("agent")
        .node_selector("role", "agent")
        .surge(int(1))
        .unavailable(int(0))
        .build();
    let refs: Vec<&Node> = nodes.iter().collect();
    let pods = [pod("p3").on("n3").hash("old").ready_since(t(-100)).build()];
    let by_node = plan::get_nodes_to_daemon_pods(pods.iter(), false);
    let p = rolling_update(&d, &refs, &by_node, "new", now()).unwrap();
    assert!(p.pods_to_delete.is_empty(), "1 available < 2 desired: keep it");
    let pods = [
        pod("p3").on("n3").hash("old").ready_since(t(-100)).build(),
        pod("a1").on("n1").hash("new").ready_since(t(-10)).build(),
        pod("a2").on("n2").hash("new").ready_since(t(-10)).build(),
    ];
    let by_node = plan::get_nodes_to_daemon_pods(pods.iter(), false);
    let p = rolling_update(&d, &refs, &by_node, "new", now()).unwrap();
    assert_eq!(p.pods_to_delete, ["p3"], "3 available > 2 desired");
}

#[test]
fn nodes_with_duplicates_are_left_to_manage() {
    let pods = vec![old_ready("a", "n1"), old_ready("b", "n1"), old_ready("c", "n2")];
    let p = update(ds("agent"), 2, &pods);
    assert!(p.pods_to_delete.is_empty(), "n1 counts as unavailable: {p:?}");
}
