//! Pure: should a pod on a tainted node go, and when? Upstream `processPodOnNode`,
//! `getNoExecuteTaints` and `getMinTolerationTime` (`pkg/controller/tainteviction/taint_eviction.go`),
//! `GetMatchingTolerations` (`pkg/apis/core/v1/helper/helpers.go`) and `ToleratesTaint`
//! (`staging/src/k8s.io/api/core/v1/toleration.go`).
//!
//! | node's `NoExecute` taints | pod's tolerations | decision |
//! |---|---|---|
//! | none | any | [`Decision::Cancel`] any scheduled eviction |
//! | some not tolerated | | [`Decision::EvictNow`] |
//! | all tolerated, none with `tolerationSeconds` | | [`Decision::Cancel`] (tolerated forever) |
//! | all tolerated, smallest `tolerationSeconds` = s (≤ 0 counts as 0) | nothing scheduled | [`Decision::EvictAt`] now + s |
//! | | an eviction already scheduled | [`Decision::EvictAt`] its time (the countdown is not restarted) |
//! | | the eviction already happened | [`Decision::Keep`] |
//!
//! The API server gives every pod `not-ready` and `unreachable` `NoExecute` tolerations of 300 s
//! (upstream's DefaultTolerationSeconds admission), so a pod of a node that stopped responding is
//! evicted five minutes after the taint arrives; DaemonSet pods tolerate those taints forever.
//!
//! The toleration predicate is written here rather than shared with `scheduler-stub`, which depends
//! on this crate (the same rules as its `filter::tolerates`).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Taint, Toleration};

use crate::nodelifecycle::health::after;

/// `NoExecute`.
pub const NO_EXECUTE: &str = "NoExecute";

/// An eviction the controller scheduled (upstream's `TimedWorkerQueue` entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduled {
    /// The pod is to be deleted at `fire_at`; the countdown started at `created_at`.
    Pending {
        /// When the eviction was scheduled.
        created_at: Timestamp,
        /// When the pod is deleted.
        fire_at: Timestamp,
    },
    /// The pod was deleted (kept, as upstream keeps the fired worker's key, so that it is not
    /// deleted again until the eviction is cancelled).
    Fired,
}

/// What to do about one pod (upstream `processPodOnNode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing to evict for: forget any scheduled eviction ("Cancelling deletion" if pending).
    Cancel,
    /// A taint the pod does not tolerate: delete it now.
    EvictNow,
    /// Delete it at `fire_at` (now or later).
    EvictAt {
        /// When the countdown started.
        created_at: Timestamp,
        /// When the pod is deleted.
        fire_at: Timestamp,
    },
    /// Already evicted: nothing more.
    Keep,
}

/// Upstream `getNoExecuteTaints`: the node's `NoExecute` taints.
pub fn no_execute_taints(node: &Node) -> Vec<Taint> {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .filter(|t| t.effect == NO_EXECUTE)
        .cloned()
        .collect()
}

/// Upstream `Toleration.ToleratesTaint`: an empty effect matches every effect, an empty key (with
/// `Exists`) every key; `Exists` ignores the value, `Equal` (the default) compares it.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "" | "Equal" => toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        "Exists" => true,
        _ => false,
    }
}

/// Upstream `GetMatchingTolerations`: for every taint the first toleration that tolerates it, or
/// `None` when some taint has none.
pub fn matching_tolerations<'a>(
    taints: &[Taint],
    tolerations: &'a [Toleration],
) -> Option<Vec<&'a Toleration>> {
    taints
        .iter()
        .map(|taint| tolerations.iter().find(|t| tolerates(t, taint)))
        .collect()
}

/// Upstream `getMinTolerationTime`: the smallest `tolerationSeconds` (a value ≤ 0, or no
/// tolerations at all, is 0); `None` when none sets it (tolerated forever).
pub fn min_toleration_time(used: &[&Toleration]) -> Option<Duration> {
    if used.is_empty() {
        return Some(Duration::ZERO);
    }
    let seconds = used.iter().filter_map(|t| t.toleration_seconds).min()?;
    Some(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// Upstream `processPodOnNode`: what to do about a pod with `tolerations` on a node with the
/// `NoExecute` `taints`, given the eviction already `scheduled` for it.
pub fn process_pod_on_node(
    taints: &[Taint],
    tolerations: &[Toleration],
    scheduled: Option<Scheduled>,
    now: Timestamp,
) -> Decision {
    if taints.is_empty() {
        return Decision::Cancel;
    }
    let Some(used) = matching_tolerations(taints, tolerations) else {
        return match scheduled {
            Some(Scheduled::Fired) => Decision::Keep,
            _ => Decision::EvictNow,
        };
    };
    let Some(min) = min_toleration_time(&used) else {
        return Decision::Cancel;
    };
    match scheduled {
        Some(Scheduled::Pending { created_at, fire_at }) => Decision::EvictAt { created_at, fire_at },
        Some(Scheduled::Fired) => Decision::Keep,
        None => Decision::EvictAt {
            created_at: now,
            fire_at: after(now, min),
        },
    }
}
