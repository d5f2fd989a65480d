//! Scaling events (proportional scaling) and old-ReplicaSet cleanup.
//!
//! Upstream: `pkg/controller/deployment/sync.go` — `scale` and `cleanupDeployment`.
//!
//! Simplified / different from upstream: pure functions. [`scale`] resizes the working copies it is
//! given and returns one [`ScaleChange`] per ReplicaSet it would write; in the proportional branch that
//! includes ReplicaSets whose size stays the same (`from == to`), because upstream rewrites them anyway to
//! refresh their `desired-replicas`/`max-replicas` annotations. [`cleanup_deployment`] returns the names to
//! delete instead of deleting; the caller stops at the first failed delete, as upstream does.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use super::rolling::{ScaleChange, resize};
use super::util::{
    by_revision, by_size_newer, by_size_older, find_active_or_latest, get_replica_count_for_replica_sets,
    get_replica_set_proportion, is_active, is_rolling_update, is_saturated, max_surge,
    revision_history_limit, rs_replicas, rs_status_replicas, set_rs_replicas, spec_replicas,
};
use crate::runtime::name_of;

/// Upstream `scale`: brings the sum of the ReplicaSets to the Deployment's size outside of a rollout
/// step (a scaling event, or a paused Deployment).
///
/// 1. At most one active ReplicaSet: it (or the newest one) simply gets `spec.replicas`.
/// 2. The new ReplicaSet is saturated: every active old one goes to 0.
/// 3. RollingUpdate: the difference to `spec.replicas + maxSurge` is spread over the active
///    ReplicaSets in proportion to their size; the first (largest) one absorbs the rounding leftover.
///
/// # Why proportional
///
/// A user may scale a Deployment in the middle of a rollout, when two or more ReplicaSets hold pods.
/// Giving all new replicas to the new ReplicaSet would run ahead of the rollout's pacing (the new
/// version might be broken, which is exactly what the pacing protects against); giving them all to the
/// old one would undo progress. So each active ReplicaSet keeps its share. Example: replicas 10,
/// maxSurge 25% (3 of 10), mid-rollout with old 8 and new 5 (13 = the ceiling). Scaling to 20 raises
/// the ceiling to 20 + 5 (25% of 20) = 25, so 12 pods are to add: old gets 8 × 25 / 13 − 8 ≈ 7, new
/// 5 × 25 / 13 − 5 ≈ 5, giving 15 + 10 = 25. Rounding can leave a pod or two over or under; the first
/// ReplicaSet in the order (the largest, newer first when growing, older first when shrinking) absorbs
/// the leftover so the total is exact. The rolling update then continues from the new sizes.
pub fn scale(
    d: &Deployment,
    new_rs: Option<&mut ReplicaSet>,
    old_rss: &mut [ReplicaSet],
) -> Vec<ScaleChange> {
    let has_new = new_rs.is_some();
    let mut all: Vec<&mut ReplicaSet> = old_rss.iter_mut().chain(new_rs).collect();
    if let Some(i) = active_or_latest_index(&all, has_new) {
        return resize(all[i], spec_replicas(d)).into_iter().collect();
    }
    if has_new && is_saturated(d, all.last().map(|rs| &**rs)) {
        let old_count = all.len() - 1;
        let olds = all.iter_mut().take(old_count).filter(|rs| is_active(rs));
        return olds.filter_map(|rs| resize(rs, 0)).collect();
    }
    if !is_rolling_update(d) {
        return Vec::new();
    }
    scale_proportionally(d, all.into_iter().filter(|rs| is_active(rs)).collect())
}

fn active_or_latest_index(all: &[&mut ReplicaSet], has_new: bool) -> Option<usize> {
    let view: Vec<&ReplicaSet> = all.iter().map(|rs| &**rs).collect();
    let old_count = view.len() - usize::from(has_new);
    let new_rs = has_new.then(|| view[old_count]);
    let chosen = find_active_or_latest(new_rs, &view[..old_count])?;
    view.iter().position(|rs| std::ptr::eq(*rs, chosen))
}

fn scale_proportionally(d: &Deployment, mut active: Vec<&mut ReplicaSet>) -> Vec<ScaleChange> {
    let replicas = spec_replicas(d);
    let allowed = if replicas > 0 { replicas + max_surge(d) } else { 0 };
    let to_add = allowed - get_replica_count_for_replica_sets(active.iter().map(|rs| &**rs));
    match to_add {
        1.. => active.sort_by(|a, b| by_size_newer(a, b)),
        ..0 => active.sort_by(|a, b| by_size_older(a, b)),
        0 => {}
    }
    let sizes = proportional_sizes(d, &active, to_add);
    active
        .into_iter()
        .zip(sizes)
        .map(|(rs, size)| record(rs, size))
        .collect()
}

/// The target size of every ReplicaSet (in `active`'s order), leftover already given to the first.
fn proportional_sizes(d: &Deployment, active: &[&mut ReplicaSet], to_add: i32) -> Vec<i32> {
    let mut added = 0;
    let mut sizes: Vec<i32> = Vec::with_capacity(active.len());
    for rs in active {
        let proportion = get_replica_set_proportion(rs, d, to_add, added);
        sizes.push(rs_replicas(rs) + proportion);
        added += proportion;
    }
    if let Some(first) = sizes.first_mut().filter(|_| to_add != 0) {
        *first = (*first + to_add - added).max(0);
    }
    sizes
}

/// Like [`resize`] but also records unchanged sizes (annotation refresh).
fn record(rs: &mut ReplicaSet, to: i32) -> ScaleChange {
    let from = rs_replicas(rs);
    set_rs_replicas(rs, to);
    ScaleChange {
        name: name_of(&rs.metadata).to_string(),
        from,
        to,
    }
}

/// Upstream `cleanupDeployment`: with a revision history limit, delete the oldest (by revision) old
/// ReplicaSets beyond the limit — only those that are fully scaled down (spec 0, status 0) and whose
/// latest generation the ReplicaSet controller has observed. Skipped candidates are not replaced by
/// newer ones. Returns the names to delete, in order.
pub fn cleanup_deployment(d: &Deployment, old_rss: &[ReplicaSet]) -> Vec<String> {
    let Some(limit) = revision_history_limit(d) else {
        return Vec::new();
    };
    let mut cleanable: Vec<&ReplicaSet> = old_rss
        .iter()
        .filter(|rs| rs.metadata.deletion_timestamp.is_none())
        .collect();
    let diff = i64::try_from(cleanable.len()).unwrap_or(i64::MAX) - i64::from(limit);
    if diff <= 0 {
        return Vec::new();
    }
    cleanable.sort_by(|a, b| by_revision(a, b));
    let candidates = cleanable
        .into_iter()
        .take(usize::try_from(diff).unwrap_or(usize::MAX));
    candidates
        .filter(|rs| is_deletable(rs))
        .map(|rs| name_of(&rs.metadata).to_string())
        .collect()
}

fn is_deletable(rs: &ReplicaSet) -> bool {
    let observed = rs
        .status
        .as_ref()
        .and_then(|s| s.observed_generation)
        .unwrap_or(0);
    rs_status_replicas(rs) == 0
        && rs_replicas(rs) == 0
        && rs.metadata.generation.unwrap_or(0) <= observed
        && rs.metadata.deletion_timestamp.is_none()
}
