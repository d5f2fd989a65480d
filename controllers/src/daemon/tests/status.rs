//! Table tests of the status counters (upstream `TestUpdateDaemonSetStatus*`-style cases).

use k8s_openapi::api::core::v1::{Node, Pod};

use super::fixtures::{DsBuilder, ds, node, now, pod, t};
use crate::daemon::plan;
use crate::daemon::status::*;

fn counts(d: DsBuilder, nodes: &[Node], pods: &[Pod]) -> Counts {
    let refs: Vec<&Node> = nodes.iter().collect();
    let by_node = plan::get_nodes_to_daemon_pods(pods.iter(), false);
    calculate_counts(&d.build(), &refs, &by_node, "new", now())
}

#[test]
fn counters_follow_the_oldest_pod_per_node() {
    let nodes = [
        node("n1").label("role", "agent").build(),
        node("n2").label("role", "agent").build(),
        node("n3").label("role", "agent").build(),
        node("n4").build(),
    ];
    let pods = [
        // n1: an old ready pod and a newer, updated one: the old one counts.
        pod("a")
            .on("n1")
            .hash("old")
            .created(t(-100))
            .ready_since(t(-90))
            .build(),
        pod("b").on("n1").hash("new").created(t(-10)).build(),
        // n2: updated, ready for 5 s.
        pod("c")
            .on("n2")
            .hash("new")
            .created(t(-20))
            .ready_since(t(-5))
            .build(),
        // n3: nothing. n4: a misscheduled pod.
        pod("d").on("n4").hash("new").build(),
    ];
    let c = counts(ds("agent").node_selector("role", "agent"), &nodes, &pods);
    assert_eq!(
        c,
        Counts {
            desired_number_scheduled: 3,
            current_number_scheduled: 2,
            number_misscheduled: 1,
            number_ready: 2,
            updated_number_scheduled: 1,
            number_available: 2,
            number_unavailable: 1,
        }
    );
    let c = counts(
        ds("agent").node_selector("role", "agent").min_ready_seconds(10),
        &nodes,
        &pods,
    );
    assert_eq!(
        (c.number_ready, c.number_available, c.number_unavailable),
        (2, 1, 2)
    );
    let d = ds("agent").min_ready_seconds(10).build();
    assert_eq!(
        availability_requeue_after(&d, &c),
        Some(std::time::Duration::from_secs(10))
    );
}

#[test]
fn up_to_date_needs_counters_and_observed_generation() {
    let c = counts(ds("agent"), &[node("n1").build()], &[]);
    let d = ds("agent").build();
    assert!(!status_up_to_date(&d, &c), "observedGeneration 0 < generation 1");
    let mut written = d.clone();
    written.status = Some(apply_counts(None, &c, Some(1), true));
    assert!(status_up_to_date(&written, &c));
    let pending = apply_counts(None, &c, Some(1), false);
    assert_eq!(pending.observed_generation, None);
    assert_eq!(pending.desired_number_scheduled, 1);
    assert_eq!(pending.number_unavailable, Some(1));
    let _ = ds("agent").observed_generation(1);
}
