//! Table tests of [`crate::nodelifecycle::health`]: the health decision from heartbeat and Lease
//! times, the grace periods, and the grace periods at a time scale.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, NodeCondition};
use serde_json::json;

use crate::nodelifecycle::health::{NodeHealth, Periods, try_update_node_health};

fn t0() -> Timestamp {
    "2025-05-01T10:00:00Z".parse().unwrap()
}

fn at(secs: i64) -> Timestamp {
    t0() + SignedDuration::from_secs(secs)
}

/// A node created at `t0` whose kubelet last posted its four conditions (`ready`) at `heartbeat`
/// seconds; `None` posts no conditions at all.
fn node(ready: Option<(&str, i64)>) -> Node {
    let mut v = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "n1", "uid": "u1", "creationTimestamp": t0().to_string()},
        "status": {},
    });
    if let Some((status, heartbeat)) = ready {
        let time = at(heartbeat).to_string();
        let created = t0().to_string();
        let pressure = |t: &str| {
            json!({"type": t, "status": "False", "reason": "KubeletHasNoPressure",
            "lastHeartbeatTime": time, "lastTransitionTime": created})
        };
        v["status"]["conditions"] = json!([
            pressure("MemoryPressure"), pressure("DiskPressure"), pressure("PIDPressure"),
            {"type": "Ready", "status": status, "reason": "KubeletReady", "message": "kubelet is posting ready status",
             "lastHeartbeatTime": time, "lastTransitionTime": created},
        ]);
    }
    serde_json::from_value(v).unwrap()
}

fn lease(renewed: i64) -> Lease {
    serde_json::from_value(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40,
                 "renewTime": at(renewed).strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()},
    }))
    .unwrap()
}

fn ready_of(n: &Node) -> Option<NodeCondition> {
    crate::nodelifecycle::health::node_condition(n, "Ready").cloned()
}

/// The health the controller saved when it last saw `n` (and the lease renewed at `lease`) at `seen`.
fn saved(n: &Node, lease: Option<i64>, seen: i64) -> NodeHealth {
    NodeHealth {
        probe_timestamp: at(seen),
        ready_transition_timestamp: at(seen),
        ready: ready_of(n),
        lease_renew_time: lease.map(at),
    }
}

fn periods() -> Periods {
    Periods::default()
}

#[test]
fn default_periods_are_kube_controller_managers() {
    let p = periods();
    assert_eq!(p.monitor, Duration::from_secs(5));
    assert_eq!(p.grace, Duration::from_secs(50));
    assert_eq!(p.startup_grace, Duration::from_secs(60));
}

#[test]
fn periods_never_fall_below_a_few_real_seconds_at_high_time_scales() {
    // (time scale, monitor, grace, startup grace) in simulated seconds.
    let cases = [
        (1.0, 5, 50, 60),
        (5.0, 5, 50, 60),
        (10.0, 10, 80, 80),
        (40.0, 40, 320, 320),
        (100.0, 100, 800, 800),
        (0.0, 5, 50, 60),
        (f64::NAN, 5, 50, 60),
    ];
    for (scale, monitor, grace, startup) in cases {
        let p = Periods::for_time_scale(scale);
        let secs = |d: Duration| d.as_secs();
        assert_eq!(
            (secs(p.monitor), secs(p.grace), secs(p.startup_grace)),
            (monitor, grace, startup),
            "scale {scale}"
        );
    }
}

#[test]
fn a_node_seen_for_the_first_time_gets_a_full_grace_period() {
    // Its heartbeat is an hour old: the controller (just started) counts from now, not from it.
    let n = node(Some(("True", 0)));
    let update = try_update_node_health(&n, None, None, &periods(), at(3600));
    assert_eq!(update.health.probe_timestamp, at(3600));
    assert_eq!(update.status, None);
    assert_eq!(update.current_ready.unwrap().status, "True");
}

/// Each case: the node's heartbeat, the lease's renewal, what was saved (heartbeat, lease, seen at),
/// now; then the expected probe timestamp and whether the conditions are written Unknown.
#[test]
fn the_node_is_unknown_when_neither_signal_changed_for_the_grace_period() {
    struct Case {
        name: &'static str,
        heartbeat: i64,
        lease: Option<i64>,
        saved: (i64, Option<i64>, i64),
        now: i64,
        probe: i64,
        unknown: bool,
    }
    let cases = [
        Case {
            name: "nothing changed, within the grace period",
            heartbeat: 0,
            lease: Some(0),
            saved: (0, Some(0), 0),
            now: 50,
            probe: 0,
            unknown: false,
        },
        Case {
            name: "nothing changed, one second past the grace period",
            heartbeat: 0,
            lease: Some(0),
            saved: (0, Some(0), 0),
            now: 51,
            probe: 0,
            unknown: true,
        },
        Case {
            name: "the lease was renewed: alive, though the status is old",
            heartbeat: 0,
            lease: Some(100),
            saved: (0, Some(90), 90),
            now: 120,
            probe: 120,
            unknown: false,
        },
        Case {
            name: "the status heartbeat changed: alive without a lease",
            heartbeat: 100,
            lease: None,
            saved: (90, None, 90),
            now: 120,
            probe: 120,
            unknown: false,
        },
        Case {
            name: "a lease older than the saved one is no sign of life",
            heartbeat: 0,
            lease: Some(10),
            saved: (0, Some(20), 20),
            now: 71,
            probe: 20,
            unknown: true,
        },
    ];
    for case in cases {
        let before = node(Some(("True", case.saved.0)));
        let saved = saved(&before, case.saved.1, case.saved.2);
        let n = node(Some(("True", case.heartbeat)));
        let l = case.lease.map(lease);
        let update = try_update_node_health(&n, l.as_ref(), Some(&saved), &periods(), at(case.now));
        assert_eq!(update.health.probe_timestamp, at(case.probe), "{}", case.name);
        assert_eq!(update.status.is_some(), case.unknown, "{}", case.name);
        assert_eq!(update.observed_ready.status, "True", "{}", case.name);
        let current = update.current_ready.unwrap().status;
        assert_eq!(current == "Unknown", case.unknown, "{}", case.name);
    }
}

#[test]
fn an_overdue_node_gets_its_four_kubelet_conditions_unknown() {
    let n = node(Some(("True", 0)));
    let update = try_update_node_health(&n, None, Some(&saved(&n, None, 0)), &periods(), at(60));
    let status = update.status.clone().expect("a status write");
    let conditions = status.conditions.unwrap();
    assert_eq!(conditions.len(), 4);
    for c in &conditions {
        assert_eq!(c.status, "Unknown", "{}", c.type_);
        assert_eq!(c.reason.as_deref(), Some("NodeStatusUnknown"));
        assert_eq!(c.message.as_deref(), Some("Kubelet stopped posting node status."));
        assert_eq!(c.last_transition_time.as_ref().unwrap().0, at(60));
        // The heartbeat time stays the kubelet's last one.
        assert_eq!(c.last_heartbeat_time.as_ref().unwrap().0, at(0));
    }
    // Once written, the saved health remembers the Unknown condition and the transition.
    let written = update.written(at(60));
    assert_eq!(written.ready_transition_timestamp, at(60));
    assert_eq!(written.ready.unwrap().status, "Unknown");
}

#[test]
fn a_node_already_unknown_is_not_written_again() {
    let mut n = node(Some(("True", 0)));
    let first = try_update_node_health(&n, None, Some(&saved(&n, None, 0)), &periods(), at(60));
    n.status = first.status.clone();
    let again = try_update_node_health(&n, None, Some(&first.written(at(60))), &periods(), at(65));
    assert_eq!(again.status, None);
    assert_eq!(again.observed_ready.status, "Unknown");
    assert_eq!(again.current_ready.unwrap().status, "Unknown");
}

#[test]
fn a_node_that_never_posted_status_has_the_startup_grace_period_from_its_creation() {
    let n = node(None);
    let within = try_update_node_health(&n, None, None, &periods(), at(60));
    assert_eq!(within.health.probe_timestamp, at(0));
    assert_eq!(within.status, None);
    assert_eq!(within.current_ready, None);
    assert_eq!(within.observed_ready.status, "Unknown");

    let past = try_update_node_health(&n, None, Some(&within.health), &periods(), at(61));
    let conditions = past.status.expect("a status write").conditions.unwrap();
    let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"]);
    for c in &conditions {
        assert_eq!(c.status, "Unknown");
        assert_eq!(c.reason.as_deref(), Some("NodeStatusNeverUpdated"));
        assert_eq!(c.message.as_deref(), Some("Kubelet never posted node status."));
        assert_eq!(
            c.last_heartbeat_time.as_ref().unwrap().0,
            at(0),
            "the creation time"
        );
    }
}

#[test]
fn a_node_whose_kubelet_posts_ready_again_starts_a_new_count() {
    // Saved: Unknown (written by the controller). Now the kubelet posts Ready with a new heartbeat.
    let mut stale = node(Some(("True", 0)));
    let first = try_update_node_health(&stale, None, Some(&saved(&stale, None, 0)), &periods(), at(60));
    stale.status = first.status.clone();
    let back = node(Some(("True", 300)));
    let update = try_update_node_health(&back, None, Some(&first.written(at(60))), &periods(), at(301));
    assert_eq!(update.health.probe_timestamp, at(301));
    assert_eq!(update.status, None);
    assert_eq!(update.current_ready.unwrap().status, "True");
}
