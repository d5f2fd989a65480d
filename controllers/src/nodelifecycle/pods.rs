//! Pure: the pods of a node that is not Ready. Upstream `MarkPodsNotReady`
//! (`pkg/controller/util/node/controller_utils.go`) and `UpdatePodCondition`
//! (`pkg/api/v1/pod/util.go`).
//!
//! A pod on a node whose Ready condition is not True gets its own Ready condition set False (its
//! reason and message kept), so Services stop sending it traffic while nobody can tell whether it
//! still runs; each such write also records a `NodeNotReady` Warning on the pod. The kubelet, once
//! back, reports the pod's real readiness again.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Event reason on a pod marked not ready, and of the node's status change event.
pub const NODE_NOT_READY: &str = "NodeNotReady";
/// Message of the pod's `NodeNotReady` Warning.
pub const NODE_NOT_READY_MESSAGE: &str = "Node is not ready";

/// Upstream `UpdatePodCondition`: puts `condition` in `status` (its transition time `now` when
/// its status changes, the old one otherwise); returns whether anything changed.
pub fn update_pod_condition(status: &mut PodStatus, mut condition: PodCondition, now: Timestamp) -> bool {
    condition.last_transition_time = Some(Time(now));
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let Some(old) = conditions.iter_mut().find(|c| c.type_ == condition.type_) else {
        conditions.push(condition);
        return true;
    };
    if condition.status == old.status {
        condition.last_transition_time = old.last_transition_time.clone();
    }
    let changed = *old != condition;
    *old = condition;
    changed
}

/// Upstream `MarkPodsNotReady` for one pod: its status with the Ready condition False, or `None`
/// when it has no Ready condition or it is False already.
pub fn mark_pod_not_ready(pod: &Pod, now: Timestamp) -> Option<PodStatus> {
    let mut status = pod.status.clone()?;
    let ready = status
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")?
        .clone();
    let not_ready = PodCondition {
        status: "False".into(),
        ..ready
    };
    update_pod_condition(&mut status, not_ready, now).then_some(status)
}
