//! Table tests of [`crate::nodelifecycle::taints`] and [`crate::nodelifecycle::pods`]: the taints
//! wanted from conditions, the swap, and a pod marked not ready.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod, Taint};
use serde_json::json;

use crate::nodelifecycle::pods::mark_pod_not_ready;
use crate::nodelifecycle::taints::{no_execute_taint, no_schedule_taints, reconcile_taints, wanted_taints};

fn now() -> Timestamp {
    "2025-05-01T10:00:00Z".parse().unwrap()
}

fn node(conditions: &[(&str, &str)], unschedulable: bool, taints: serde_json::Value) -> Node {
    let conditions: Vec<_> = conditions
        .iter()
        .map(|(t, s)| json!({"type": t, "status": s}))
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "spec": {"unschedulable": unschedulable, "taints": taints},
        "status": {"conditions": conditions},
    }))
    .unwrap()
}

fn keys(taints: &[Taint]) -> Vec<String> {
    taints.iter().map(|t| format!("{}:{}", t.key, t.effect)).collect()
}

/// (conditions, cordoned, the taints wanted as `key:effect`).
type ConditionCase = (
    &'static [(&'static str, &'static str)],
    bool,
    &'static [&'static str],
);

#[test]
fn conditions_call_for_no_schedule_taints() {
    let cases: [ConditionCase; 7] = [
        (&[("Ready", "True")], false, &[]),
        (
            &[("Ready", "False")],
            false,
            &["node.kubernetes.io/not-ready:NoSchedule"],
        ),
        (
            &[("Ready", "Unknown")],
            false,
            &["node.kubernetes.io/unreachable:NoSchedule"],
        ),
        (
            &[
                ("Ready", "True"),
                ("MemoryPressure", "True"),
                ("DiskPressure", "False"),
            ],
            false,
            &["node.kubernetes.io/memory-pressure:NoSchedule"],
        ),
        (
            &[("PIDPressure", "True"), ("NetworkUnavailable", "True")],
            false,
            &[
                "node.kubernetes.io/pid-pressure:NoSchedule",
                "node.kubernetes.io/network-unavailable:NoSchedule",
            ],
        ),
        (
            &[("Ready", "True")],
            true,
            &["node.kubernetes.io/unschedulable:NoSchedule"],
        ),
        // No Ready condition yet: nothing (upstream maps only conditions that exist).
        (&[], false, &[]),
    ];
    for (conditions, unschedulable, want) in cases {
        let n = node(conditions, unschedulable, json!(null));
        assert_eq!(
            keys(&no_schedule_taints(&n)),
            want,
            "{conditions:?} {unschedulable}"
        );
    }
}

#[test]
fn the_ready_condition_calls_for_one_no_execute_taint() {
    let key = |s: Option<&str>| no_execute_taint(s).map(|t| format!("{}:{}", t.key, t.effect));
    assert_eq!(key(Some("True")), None);
    assert_eq!(key(None), None);
    assert_eq!(
        key(Some("False")).as_deref(),
        Some("node.kubernetes.io/not-ready:NoExecute")
    );
    assert_eq!(
        key(Some("Unknown")).as_deref(),
        Some("node.kubernetes.io/unreachable:NoExecute")
    );
}

#[test]
fn an_unreachable_node_gets_both_taints_with_their_time_and_keeps_the_users() {
    let user = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]);
    let n = node(&[("Ready", "Unknown")], false, user);
    let existing = n.spec.as_ref().unwrap().taints.clone().unwrap();
    let taints = reconcile_taints(&existing, &wanted_taints(&n), now()).expect("a change");
    assert_eq!(
        keys(&taints),
        [
            "dedicated:NoSchedule",
            "node.kubernetes.io/unreachable:NoSchedule",
            "node.kubernetes.io/unreachable:NoExecute"
        ]
    );
    assert_eq!(taints[0].time_added, None, "the user's taint is untouched");
    assert!(
        taints[1..]
            .iter()
            .all(|t| t.time_added.as_ref().map(|t| t.0) == Some(now()))
    );
    // Applied once, nothing more to change.
    assert_eq!(reconcile_taints(&taints, &wanted_taints(&n), now()), None);
}

#[test]
fn a_ready_node_loses_the_controllers_taints_only() {
    let taints = json!([
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2025-05-01T09:00:00Z"},
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unreachable", "effect": "PreferNoSchedule"},
        {"key": "example.com/maintenance", "effect": "NoExecute"},
    ]);
    let n = node(&[("Ready", "True")], false, taints);
    let existing = n.spec.as_ref().unwrap().taints.clone().unwrap();
    let left = reconcile_taints(&existing, &wanted_taints(&n), now()).expect("a change");
    assert_eq!(
        keys(&left),
        [
            "node.kubernetes.io/unreachable:PreferNoSchedule",
            "example.com/maintenance:NoExecute"
        ]
    );
}

#[test]
fn not_ready_and_unreachable_exclude_each_other() {
    let taints = json!([
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2025-05-01T09:00:00Z"},
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
    ]);
    let n = node(&[("Ready", "False")], false, taints);
    let existing = n.spec.as_ref().unwrap().taints.clone().unwrap();
    let swapped = reconcile_taints(&existing, &wanted_taints(&n), now()).expect("a swap");
    assert_eq!(
        keys(&swapped),
        [
            "node.kubernetes.io/not-ready:NoSchedule",
            "node.kubernetes.io/not-ready:NoExecute"
        ]
    );
}

fn pod(ready: Option<&str>) -> Pod {
    let conditions: Vec<_> = ready
        .map(|s| json!({"type": "Ready", "status": s, "lastTransitionTime": "2025-05-01T09:00:00Z"}))
        .into_iter()
        .chain([json!({"type": "PodScheduled", "status": "True"})])
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running", "conditions": conditions},
    }))
    .unwrap()
}

#[test]
fn a_ready_pod_on_a_not_ready_node_is_marked_not_ready_once() {
    let status = mark_pod_not_ready(&pod(Some("True")), now()).expect("a change");
    let ready = status
        .conditions
        .as_ref()
        .unwrap()
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(ready.status, "False");
    assert_eq!(ready.last_transition_time.as_ref().unwrap().0, now());
    assert_eq!(
        status.phase.as_deref(),
        Some("Running"),
        "only the condition changes"
    );
    assert_eq!(mark_pod_not_ready(&pod(Some("False")), now()), None);
    assert_eq!(mark_pod_not_ready(&pod(None), now()), None);
}
