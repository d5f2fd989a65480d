//! Pure: is a node's kubelet still alive? Upstream `tryUpdateNodeHealth`.
//!
//! The controller keeps, per node, the last Ready condition and Lease renewal it saw and *its own*
//! time of seeing a change ([`NodeHealth::probe_timestamp`]), rather than trusting the timestamps the
//! kubelet wrote (upstream does this against clock skew; here it also means a controller that starts
//! late gives every node a full grace period). A node neither of whose signals changed for longer than
//! its grace period gets the four conditions the kubelet owns set to `Unknown`.
//!
//! ```text
//! observed (cache)                 saved                   → probe_timestamp
//! no saved health                  -                       → now
//! Ready heartbeat time changed     earlier heartbeat       → now (transition: now if its transition time changed)
//! Lease renewTime later            earlier renewTime       → now
//! nothing changed                                          → unchanged
//! now > probe + grace  → Ready, MemoryPressure, DiskPressure, PIDPressure Unknown
//!                        ("NodeStatusUnknown", "Kubelet stopped posting node status."),
//!                        missing ones added ("NodeStatusNeverUpdated", "Kubelet never posted node status.")
//! ```
//!
//! Simplified against upstream: the saved Lease survives a change of the Ready condition (upstream
//! drops it there, so the next unchanged Lease counts as a renewal once more).

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// kube-controller-manager `--node-monitor-period`: how often every node's health is looked at.
pub const NODE_MONITOR_PERIOD: Duration = Duration::from_secs(5);
/// kube-controller-manager `--node-monitor-grace-period` (50 s since 1.32): how long a running
/// node's kubelet may be silent before the node is `Unknown`.
pub const NODE_MONITOR_GRACE_PERIOD: Duration = Duration::from_secs(50);
/// kube-controller-manager `--node-startup-grace-period`: the same for a node that never posted a
/// Ready condition.
pub const NODE_STARTUP_GRACE_PERIOD: Duration = Duration::from_secs(60);
/// The shortest grace period in *real* time, at any `--time-scale`: the simulated kubelet
/// heartbeats at most once per real second (`kubelet_sim::run::heartbeat_period`), so at
/// `--time-scale 100` its heartbeats are 100 simulated seconds apart, more than upstream's grace
/// period. Eight real seconds keep five-plus heartbeats of margin, as upstream's 50 s do for the
/// kubelet's 10 s.
pub const MIN_REAL_GRACE_PERIOD: Duration = Duration::from_secs(8);
/// The shortest monitor period in real time, for the same reason.
pub const MIN_REAL_MONITOR_PERIOD: Duration = Duration::from_secs(1);

/// The condition types the controller sets `Unknown` (not NetworkUnavailable: the control plane owns it).
pub const KUBELET_CONDITIONS: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];
/// Reason of a condition the kubelet stopped refreshing.
pub const NODE_STATUS_UNKNOWN: &str = "NodeStatusUnknown";
/// Message of a condition the kubelet stopped refreshing.
pub const NODE_STATUS_UNKNOWN_MESSAGE: &str = "Kubelet stopped posting node status.";
/// Reason of a condition the kubelet never posted.
pub const NODE_STATUS_NEVER_UPDATED: &str = "NodeStatusNeverUpdated";
/// Message of a condition the kubelet never posted.
pub const NODE_STATUS_NEVER_UPDATED_MESSAGE: &str = "Kubelet never posted node status.";

/// The controller's periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Periods {
    /// How often each node is looked at.
    pub monitor: Duration,
    /// Grace period of a node with a Ready condition.
    pub grace: Duration,
    /// Grace period of a node without one.
    pub startup_grace: Duration,
}

impl Periods {
    /// kube-controller-manager's defaults, never shorter than [`MIN_REAL_GRACE_PERIOD`] /
    /// [`MIN_REAL_MONITOR_PERIOD`] of real time at `time_scale` simulated seconds per second.
    pub fn for_time_scale(time_scale: f64) -> Self {
        let scale = if time_scale.is_finite() && time_scale > 0.0 {
            time_scale
        } else {
            1.0
        };
        let floor = MIN_REAL_GRACE_PERIOD.mul_f64(scale);
        Periods {
            monitor: NODE_MONITOR_PERIOD.max(MIN_REAL_MONITOR_PERIOD.mul_f64(scale)),
            grace: NODE_MONITOR_GRACE_PERIOD.max(floor),
            startup_grace: NODE_STARTUP_GRACE_PERIOD.max(floor),
        }
    }
}

impl Default for Periods {
    fn default() -> Self {
        Periods::for_time_scale(1.0)
    }
}

/// What the controller remembers of one node (upstream `nodeHealthData`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeHealth {
    /// When the controller last saw a sign of life (its own clock).
    pub probe_timestamp: Timestamp,
    /// When the controller last saw the Ready condition transition.
    pub ready_transition_timestamp: Timestamp,
    /// The Ready condition last seen (`None`: the node had none).
    pub ready: Option<NodeCondition>,
    /// The Lease's `renewTime` last seen.
    pub lease_renew_time: Option<Timestamp>,
}

impl NodeHealth {
    fn fresh(now: Timestamp, ready: Option<NodeCondition>, lease_renew_time: Option<Timestamp>) -> Self {
        NodeHealth {
            probe_timestamp: now,
            ready_transition_timestamp: now,
            ready,
            lease_renew_time,
        }
    }
}

/// The outcome of [`try_update_node_health`].
#[derive(Clone, Debug, PartialEq)]
pub struct HealthUpdate {
    /// What to remember of the node (before any write; see [`HealthUpdate::written`]).
    pub health: NodeHealth,
    /// The Ready condition as observed (a made-up `Unknown` one when the node has none).
    pub observed_ready: NodeCondition,
    /// The Ready condition after this update (`None`: the node has none and is in its grace period).
    pub current_ready: Option<NodeCondition>,
    /// The status to write: the node is overdue and its Ready condition changed.
    pub status: Option<NodeStatus>,
}

impl HealthUpdate {
    /// What to remember once [`HealthUpdate::status`] is written at `now`.
    pub fn written(&self, now: Timestamp) -> NodeHealth {
        NodeHealth {
            probe_timestamp: self.health.probe_timestamp,
            ready_transition_timestamp: now,
            ready: self.current_ready.clone(),
            lease_renew_time: self.health.lease_renew_time,
        }
    }
}

/// The node's condition of type `type_` (upstream `GetNodeCondition`).
pub fn node_condition<'a>(node: &'a Node, type_: &str) -> Option<&'a NodeCondition> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

/// The status of the node's Ready condition (`None` without one).
pub fn ready_status(node: &Node) -> Option<&str> {
    node_condition(node, "Ready").map(|c| c.status.as_str())
}

/// Upstream `tryUpdateNodeHealth`: the node's health after observing `node` and its `lease` at
/// `now`, given what was `saved` before.
pub fn try_update_node_health(
    node: &Node,
    lease: Option<&Lease>,
    saved: Option<&NodeHealth>,
    periods: &Periods,
    now: Timestamp,
) -> HealthUpdate {
    let created = node.metadata.creation_timestamp.clone();
    let current = node_condition(node, "Ready").cloned();
    let (observed_ready, grace) = match &current {
        Some(ready) => (ready.clone(), periods.grace),
        None => {
            let unknown = NodeCondition {
                type_: "Ready".into(),
                status: "Unknown".into(),
                last_heartbeat_time: created.clone(),
                last_transition_time: created.clone(),
                ..NodeCondition::default()
            };
            (unknown, periods.startup_grace)
        }
    };
    let saved_lease = saved.and_then(|h| h.lease_renew_time);
    let mut health = match saved {
        None => NodeHealth::fresh(now, current.clone(), None),
        Some(h) => match (&h.ready, &current) {
            // Neither has a Ready condition: a node in its startup grace period.
            (None, None) => h.clone(),
            // A Ready condition appeared or disappeared: start counting again.
            (None, Some(_)) | (Some(_), None) => NodeHealth::fresh(now, current.clone(), saved_lease),
            (Some(before), Some(ready)) if before.last_heartbeat_time != ready.last_heartbeat_time => {
                let transitioned = before.last_transition_time != ready.last_transition_time;
                NodeHealth {
                    probe_timestamp: now,
                    ready_transition_timestamp: if transitioned {
                        now
                    } else {
                        h.ready_transition_timestamp
                    },
                    ready: current.clone(),
                    lease_renew_time: saved_lease,
                }
            }
            (Some(_), Some(_)) => h.clone(),
        },
    };
    if saved.is_none() && current.is_none() {
        // Never posted: count the startup grace period from the node's creation.
        if let Some(created) = &created {
            health.probe_timestamp = created.0;
            health.ready_transition_timestamp = created.0;
        }
    }
    let renewed = lease
        .and_then(|l| l.spec.as_ref()?.renew_time.as_ref())
        .map(|t| t.0);
    if let Some(renewed) = renewed
        && saved_lease.is_none_or(|before| before < renewed)
    {
        health.lease_renew_time = Some(renewed);
        health.probe_timestamp = now;
    }

    let overdue = now > after(health.probe_timestamp, grace);
    let mut status = None;
    let mut current_ready = current;
    if overdue {
        let mut new_status = node.status.clone().unwrap_or_default();
        mark_unknown(&mut new_status, created.as_ref(), now);
        current_ready = new_status
            .conditions
            .as_ref()
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
            .cloned();
        if current_ready.as_ref() != Some(&observed_ready) {
            status = Some(new_status);
        }
    }
    HealthUpdate {
        health,
        observed_ready,
        current_ready,
        status,
    }
}

/// Sets the kubelet's conditions `Unknown` (transitioning at `now`), adding missing ones.
fn mark_unknown(status: &mut NodeStatus, created: Option<&Time>, now: Timestamp) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    for type_ in KUBELET_CONDITIONS {
        match conditions.iter_mut().find(|c| c.type_ == type_) {
            None => conditions.push(NodeCondition {
                type_: type_.into(),
                status: "Unknown".into(),
                reason: Some(NODE_STATUS_NEVER_UPDATED.into()),
                message: Some(NODE_STATUS_NEVER_UPDATED_MESSAGE.into()),
                last_heartbeat_time: created.cloned(),
                last_transition_time: Some(Time(now)),
            }),
            Some(c) if c.status != "Unknown" => {
                c.status = "Unknown".into();
                c.reason = Some(NODE_STATUS_UNKNOWN.into());
                c.message = Some(NODE_STATUS_UNKNOWN_MESSAGE.into());
                c.last_transition_time = Some(Time(now));
            }
            Some(_) => {}
        }
    }
}

/// `t + d`, saturating.
pub fn after(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|d| t.checked_add(d).ok())
        .unwrap_or(Timestamp::MAX)
}
