//! Pure: the taints a node's conditions call for. Upstream `doNoScheduleTaintingPass`,
//! `doNoExecuteTaintingPass` / `processTaintBaseEviction` / `markNodeAsReachable`, and
//! `SwapNodeControllerTaint` (`pkg/controller/util/node/controller_utils.go`).
//!
//! | condition | status | `NoSchedule` taint (TaintNodesByCondition) | `NoExecute` taint (taint-based eviction) |
//! |---|---|---|---|
//! | Ready | False | `node.kubernetes.io/not-ready` | `node.kubernetes.io/not-ready` |
//! | Ready | Unknown | `node.kubernetes.io/unreachable` | `node.kubernetes.io/unreachable` |
//! | MemoryPressure | True | `node.kubernetes.io/memory-pressure` | |
//! | DiskPressure | True | `node.kubernetes.io/disk-pressure` | |
//! | PIDPressure | True | `node.kubernetes.io/pid-pressure` | |
//! | NetworkUnavailable | True | `node.kubernetes.io/network-unavailable` | |
//! | `spec.unschedulable` | true | `node.kubernetes.io/unschedulable` | |
//!
//! Only these taints are the controller's: it adds the ones the node calls for (with `timeAdded`),
//! removes the ones it no longer does, and leaves every other taint alone. The two `NoExecute` taints
//! exclude each other, as the Ready condition's values do.
//!
//! Simplified against upstream: the `NoExecute` taint follows the current Ready condition at once;
//! upstream queues the node on a per-zone rate-limited queue (0.1 nodes/s, slower or stopped when
//! a zone is mostly or fully disrupted) and taints it on the next pass. No zones, no disruption modes.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Taint of a node whose Ready condition is False (upstream `v1.TaintNodeNotReady`).
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// Taint of a node whose Ready condition is Unknown (upstream `v1.TaintNodeUnreachable`).
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Taint of a cordoned node (upstream `v1.TaintNodeUnschedulable`).
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// `NoSchedule`.
pub const NO_SCHEDULE: &str = "NoSchedule";
/// `NoExecute`.
pub const NO_EXECUTE: &str = "NoExecute";

/// Upstream `nodeConditionToTaintKeyStatusMap`: (condition, status) → taint key.
pub const CONDITION_TAINTS: [(&str, &str, &str); 6] = [
    ("Ready", "False", TAINT_NOT_READY),
    ("Ready", "Unknown", TAINT_UNREACHABLE),
    ("MemoryPressure", "True", "node.kubernetes.io/memory-pressure"),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];

fn taint(key: &str, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        effect: effect.into(),
        value: None,
        time_added: None,
    }
}

/// Whether the taint is one this controller manages (upstream `taintKeyToNodeConditionMap`, the
/// unschedulable taint, and the two `NoExecute` templates).
pub fn is_controller_taint(t: &Taint) -> bool {
    match t.effect.as_str() {
        NO_SCHEDULE => {
            t.key == TAINT_UNSCHEDULABLE || CONDITION_TAINTS.iter().any(|(_, _, key)| *key == t.key)
        }
        NO_EXECUTE => t.key == TAINT_NOT_READY || t.key == TAINT_UNREACHABLE,
        _ => false,
    }
}

/// Upstream `doNoScheduleTaintingPass`: the `NoSchedule` taints the node's conditions and
/// `spec.unschedulable` call for.
pub fn no_schedule_taints(node: &Node) -> Vec<Taint> {
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let mut taints: Vec<Taint> = conditions
        .iter()
        .filter_map(|c| {
            CONDITION_TAINTS
                .iter()
                .find(|(type_, status, _)| *type_ == c.type_ && *status == c.status)
                .map(|(_, _, key)| taint(key, NO_SCHEDULE))
        })
        .collect();
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        taints.push(taint(TAINT_UNSCHEDULABLE, NO_SCHEDULE));
    }
    taints
}

/// Upstream `processTaintBaseEviction` / `doNoExecuteTaintingPass`: the `NoExecute` taint a Ready
/// condition of status `ready` calls for (`None` for True, or no condition yet).
pub fn no_execute_taint(ready: Option<&str>) -> Option<Taint> {
    match ready? {
        "False" => Some(taint(TAINT_NOT_READY, NO_EXECUTE)),
        "Unknown" => Some(taint(TAINT_UNREACHABLE, NO_EXECUTE)),
        _ => None,
    }
}

/// Upstream `SwapNodeControllerTaint`: the node's taints with the controller's taints made
/// `wanted` (added with `timeAdded = now`; kept as they are when present, key and effect
/// matching; the controller's others removed). `None` when nothing changes.
pub fn reconcile_taints(existing: &[Taint], wanted: &[Taint], now: Timestamp) -> Option<Vec<Taint>> {
    let same = |a: &Taint, b: &Taint| a.key == b.key && a.effect == b.effect;
    let mut out: Vec<Taint> = existing
        .iter()
        .filter(|t| !is_controller_taint(t) || wanted.iter().any(|w| same(w, t)))
        .cloned()
        .collect();
    for w in wanted {
        if !out.iter().any(|t| same(t, w)) {
            let mut added = w.clone();
            added.time_added = Some(Time(now));
            out.push(added);
        }
    }
    (out.len() != existing.len() || out.iter().zip(existing).any(|(a, b)| a != b)).then_some(out)
}

/// Every taint the controller wants on the node, given its Ready condition's status.
pub fn wanted_taints(node: &Node) -> Vec<Taint> {
    let mut wanted = no_schedule_taints(node);
    wanted.extend(no_execute_taint(super::health::ready_status(node)));
    wanted
}
