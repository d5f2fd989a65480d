//! The RollingUpdate strategy's scaling decisions.
//!
//! Upstream: `pkg/controller/deployment/rolling.go` (`rolloutRolling` and helpers).
//!
//! Simplified / different from upstream: the functions here never call the API. They change the
//! `spec.replicas` of the working copies they are given and return a [`ScaleChange`] per ReplicaSet whose
//! size they changed; [`super::plan`] turns those into steps (and the `ScalingReplicaSet` events). The
//! order of changes is the order upstream would issue the updates in. Because nothing can fail halfway,
//! there is no error path for a failed update.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use super::util::{
    IntOrPercentError, by_creation_timestamp, get_available_replica_count_for_replica_sets,
    get_replica_count_for_replica_sets, is_active, max_unavailable, new_rs_new_replicas, rs_available,
    rs_replicas, set_rs_replicas, spec_replicas,
};
use crate::runtime::name_of;

/// One planned resize of a ReplicaSet: `from` is its size before, `to` the size to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleChange {
    /// ReplicaSet name.
    pub name: String,
    /// `spec.replicas` before the change.
    pub from: i32,
    /// `spec.replicas` to write.
    pub to: i32,
}

/// Resizes the working copy and records the change (nothing when the size is already `to`).
pub(crate) fn resize(rs: &mut ReplicaSet, to: i32) -> Option<ScaleChange> {
    let from = rs_replicas(rs);
    if from == to {
        return None;
    }
    set_rs_replicas(rs, to);
    Some(ScaleChange {
        name: name_of(&rs.metadata).to_string(),
        from,
        to,
    })
}

/// Upstream `reconcileNewReplicaSet`: scale the new ReplicaSet down to `spec.replicas` if it is above,
/// otherwise up as far as `NewRSNewReplicas` allows. `old_rss` are all old ReplicaSets (inactive ones
/// contribute nothing). Returns the change, if any ("scaled" upstream).
pub fn reconcile_new_replica_set(
    d: &Deployment,
    old_rss: &[ReplicaSet],
    new_rs: &mut ReplicaSet,
) -> Result<Option<ScaleChange>, IntOrPercentError> {
    let replicas = spec_replicas(d);
    let current = rs_replicas(new_rs);
    if current == replicas {
        return Ok(None);
    }
    if current > replicas {
        return Ok(resize(new_rs, replicas));
    }
    let target = new_rs_new_replicas(d, old_rss.iter().chain(std::iter::once(&*new_rs)), new_rs)?;
    Ok(resize(new_rs, target))
}

/// Upstream `reconcileOldReplicaSets`: how far the active old ReplicaSets may shrink without dropping
/// below `minAvailable`, not counting the new ReplicaSet's unavailable pods as headroom. First removes
/// unhealthy old replicas, then scales down available ones. `old_rss` are all old ReplicaSets; only the
/// active ones (spec > 0 on entry) take part. An empty result means "not scaled".
///
/// # Why the new ReplicaSet's unavailable pods are subtracted
///
/// The budget looks like it should be `all_pods − min_available`: every pod above the floor may go.
/// But a new pod that is not available yet is counted in `all_pods` while serving nothing. If it
/// counted as headroom, a new version whose pods never become ready (a crash loop, an image that does
/// not exist) would let every sync trade one working old pod for one broken new pod, until nothing
/// served at all. So the budget is `all_pods − min_available − new_unavailable`: only capacity that
/// really exists pays for a scale-down.
///
/// Take replicas 4, maxSurge 1, maxUnavailable 1, so at most 5 pods and `min_available` 3.
///
/// * **A bad version, then a rollback.** The template changes; the new ReplicaSet grows to 1 (the
///   surge), the old one shrinks to 3 (one may be unavailable), the new one grows to 2. Its pods crash.
///   Now `all_pods` = 3 + 2 = 5, `new_unavailable` = 2, budget = 5 − 3 − 2 = 0: the three old pods
///   keep serving and the rollout stalls (until `progressDeadlineSeconds` reports it) instead of
///   taking the service down. The user runs `kubectl rollout undo`: the old ReplicaSet is the new
///   one again, with 3 available pods, so `new_unavailable` = 0 and the budget is 5 − 3 − 0 = 2. It is
///   spent on the two crashing pods, and the next sync grows the restored ReplicaSet back to 4.
/// * **A roll-over.** Instead of undoing, the user pushes a third template while the second is still
///   failing. The third ReplicaSet starts at 0 replicas, because 5 pods already exist; with no pods it
///   has none unavailable, so the budget is again 5 − 3 − 0 = 2, and the two broken pods of the second
///   ReplicaSet make room for the third one.
///
/// # Why unhealthy replicas are cleaned up first
///
/// In both cases the budget must be spent on the broken pods, not on the healthy ones. Removing a pod
/// that is not available costs no availability at all, so [`cleanup_unhealthy_replicas`] spends the
/// budget on those first (oldest ReplicaSet first). Only then does
/// [`scale_down_old_replica_sets_for_rolling_update`] take available pods, and it counts availability
/// afresh, so it never goes below `min_available`: in the roll-over above it finds 3 available pods
/// against a floor of 3 and removes none of them.
pub fn reconcile_old_replica_sets(
    d: &Deployment,
    old_rss: &mut [ReplicaSet],
    new_rs: &ReplicaSet,
) -> OldScaleDown {
    let mut active: Vec<&mut ReplicaSet> = old_rss.iter_mut().filter(|rs| is_active(rs)).collect();
    let old_pods = get_replica_count_for_replica_sets(active.iter().map(|rs| &**rs));
    if old_pods == 0 {
        return OldScaleDown::default();
    }
    let all_pods = old_pods + rs_replicas(new_rs);
    let min_available = spec_replicas(d) - max_unavailable(d);
    let new_unavailable = rs_replicas(new_rs) - rs_available(new_rs);
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return OldScaleDown::default();
    }
    let mut changes = match cleanup_unhealthy_replicas(&mut active, max_scaled_down) {
        Ok((changes, _)) => changes,
        // Upstream swallows the error: "not scaled" this sync, though what was resized before the
        // refusal has been written.
        Err(refused) => {
            return OldScaleDown {
                changes: refused.done,
                scaled: false,
            };
        }
    };
    changes.extend(scale_down_old_replica_sets_for_rolling_update(
        d,
        &mut active,
        Some(new_rs),
    ));
    OldScaleDown {
        scaled: !changes.is_empty(),
        changes,
    }
}

/// What [`reconcile_old_replica_sets`] decided: the resizes to write, in order, and whether the step
/// counts as "scaled down" (upstream's boolean result, which decides whether the sync stops there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OldScaleDown {
    /// The resizes, oldest ReplicaSet first.
    pub changes: Vec<ScaleChange>,
    /// Upstream's `scaled`: false after a refused cleanup even if earlier resizes were made.
    pub scaled: bool,
}

/// Upstream's "got invalid request to scale down": an old ReplicaSet whose status reports more
/// available pods than its spec wants (the ReplicaSet controller has not caught up with the last
/// scale-down) would have been *grown* by the cleanup. Upstream refuses the whole cleanup instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidScaleDown {
    /// The resizes made before the refusal (upstream had already written them).
    pub done: Vec<ScaleChange>,
    /// Upstream's error text.
    pub message: String,
}

/// Upstream `cleanupUnhealthyReplicas`: oldest first, shrink each old ReplicaSet by its unavailable
/// replicas until `max_cleanup_count` is used up. Returns the changes and the total removed, or
/// [`InvalidScaleDown`] when a ReplicaSet's status lags its spec so far that "shrinking" it would grow it.
pub fn cleanup_unhealthy_replicas(
    old_rss: &mut [&mut ReplicaSet],
    max_cleanup_count: i32,
) -> Result<(Vec<ScaleChange>, i32), InvalidScaleDown> {
    old_rss.sort_by(|a, b| by_creation_timestamp(a, b));
    let mut changes = Vec::new();
    let mut total = 0;
    for rs in old_rss.iter_mut() {
        if total >= max_cleanup_count {
            break;
        }
        let (spec, available) = (rs_replicas(rs), rs_available(rs));
        if spec == 0 || spec == available {
            continue;
        }
        let count = (max_cleanup_count - total).min(spec - available);
        if count < 0 {
            let message = format!(
                "when cleaning up unhealthy replicas, got invalid request to scale down {}/{} {spec} -> {}",
                rs.metadata.namespace.as_deref().unwrap_or_default(),
                name_of(&rs.metadata),
                spec - count
            );
            return Err(InvalidScaleDown {
                done: changes,
                message,
            });
        }
        changes.extend(resize(rs, spec - count));
        total += count;
    }
    Ok((changes, total))
}

/// Upstream `scaleDownOldReplicaSetsForRollingUpdate`: the available pods above `minAvailable` (counted
/// over `old_rss` plus `new_rs`) may go; take them from the old ReplicaSets, oldest first.
pub fn scale_down_old_replica_sets_for_rolling_update(
    d: &Deployment,
    old_rss: &mut [&mut ReplicaSet],
    new_rs: Option<&ReplicaSet>,
) -> Vec<ScaleChange> {
    let min_available = spec_replicas(d) - max_unavailable(d);
    let available =
        get_available_replica_count_for_replica_sets(old_rss.iter().map(|rs| &**rs).chain(new_rs));
    if available <= min_available {
        return Vec::new();
    }
    old_rss.sort_by(|a, b| by_creation_timestamp(a, b));
    let budget = available - min_available;
    let mut done = 0;
    let mut changes = Vec::new();
    for rs in old_rss.iter_mut() {
        if done >= budget {
            break;
        }
        let spec = rs_replicas(rs);
        if spec == 0 {
            continue;
        }
        let count = spec.min(budget - done);
        changes.extend(resize(rs, spec - count));
        done += count;
    }
    changes
}
