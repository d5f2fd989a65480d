//! The two orders in which a controller deletes pods (first in the order goes first).
//!
//! Upstream: `pkg/controller/controller_utils.go` (`ActivePods`, `ActivePodsWithRanks`,
//! `afterOrZero`) and `pkg/controller/replicaset/replica_set.go` (`getPodsRankedByRelatedPodsOnSameNode`).
//!
//! Simplified: the feature gates `PodDeletionCost` and `LogarithmicScaleDown` are fixed on. Sorting
//! uses a hand-written merge sort: upstream's comparators are not always transitive (the logarithmic
//! buckets with the UID tie-break can form cycles), and Rust's `sort_by` may panic on such
//! comparators while a merge sort only produces some order.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;

use super::pods::{
    is_pod_active, is_pod_ready, max_container_restarts, node_name, pod_deletion_cost, pod_phase,
    pod_ready_time,
};

/// Pending < Unknown < Running; every other phase (including none) counts as Pending.
fn pod_phase_ordinal(pod: &Pod) -> u8 {
    match pod_phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

fn creation_time(pod: &Pod) -> Option<Timestamp> {
    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or("")
}

/// Unassigned pods first (only when exactly one of the two is unassigned).
fn cmp_unassigned(a: &Pod, b: &Pod) -> Ordering {
    let (na, nb) = (node_name(a), node_name(b));
    if na == nb || (!na.is_empty() && !nb.is_empty()) {
        return Ordering::Equal;
    }
    if na.is_empty() {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

fn cmp_phase(a: &Pod, b: &Pod) -> Ordering {
    pod_phase_ordinal(a).cmp(&pod_phase_ordinal(b))
}

/// Not-ready pods first.
fn cmp_not_ready(a: &Pod, b: &Pod) -> Ordering {
    is_pod_ready(a).cmp(&is_pod_ready(b))
}

/// More restarts first.
fn cmp_restarts(a: &Pod, b: &Pod) -> Ordering {
    max_container_restarts(b).cmp(&max_container_restarts(a))
}

/// Upstream `afterOrZero` as an ordering: a zero (absent) time first, then the later time first.
fn cmp_after_or_zero(a: Option<Timestamp>, b: Option<Timestamp>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => y.cmp(&x),
    }
}

/// Upstream's logarithmic bucket: `floor(log2(now - t))` in nanoseconds, or -1 when `now - t <= 0`.
pub fn logarithmic_rank(t: Timestamp, now: Timestamp) -> i64 {
    let elapsed = now.as_nanosecond() - t.as_nanosecond();
    if elapsed <= 0 {
        return -1;
    }
    // i128 → f64 loses precision only far beyond any realistic pod age; upstream converts the same way.
    (elapsed as f64).log2().floor() as i64
}

/// The time comparison used by `ActivePodsWithRanks` under `LogarithmicScaleDown`: the younger bucket
/// first, ties inside a bucket broken by the smaller UID. Zero times fall back to [`cmp_after_or_zero`].
fn cmp_log_scaled(a: (&Pod, Option<Timestamp>), b: (&Pod, Option<Timestamp>), now: Timestamp) -> Ordering {
    match (a.1, b.1) {
        (Some(ta), Some(tb)) if ta != tb => {
            let by_bucket = logarithmic_rank(ta, now).cmp(&logarithmic_rank(tb, now));
            by_bucket.then_with(|| uid(a.0).cmp(uid(b.0)))
        }
        (ta, tb) => cmp_after_or_zero(ta, tb),
    }
}

/// Ready time, compared only when both pods are ready.
fn cmp_ready_time(a: &Pod, b: &Pod, now: Option<Timestamp>) -> Ordering {
    if !(is_pod_ready(a) && is_pod_ready(b)) {
        return Ordering::Equal;
    }
    let (ra, rb) = (pod_ready_time(a), pod_ready_time(b));
    match now {
        Some(now) => cmp_log_scaled((a, ra), (b, rb), now),
        None => cmp_after_or_zero(ra, rb),
    }
}

fn cmp_creation(a: &Pod, b: &Pod, now: Option<Timestamp>) -> Ordering {
    let (ca, cb) = (creation_time(a), creation_time(b));
    match now {
        Some(now) => cmp_log_scaled((a, ca), (b, cb), now),
        None => cmp_after_or_zero(ca, cb),
    }
}

/// Upstream `ActivePods.Less` as an ordering: `Less` means "delete `a` before `b`".
///
/// Unassigned < assigned; Pending < Unknown < Running; not ready < ready; more recently ready first;
/// more restarts first; newer first (absent times count as newest).
pub fn cmp_active_pods(a: &Pod, b: &Pod) -> Ordering {
    cmp_unassigned(a, b)
        .then_with(|| cmp_phase(a, b))
        .then_with(|| cmp_not_ready(a, b))
        .then_with(|| cmp_ready_time(a, b, None))
        .then_with(|| cmp_restarts(a, b))
        .then_with(|| cmp_creation(a, b, None))
}

/// A pod with its rank: how many active related pods share its node (upstream `ActivePodsWithRanks`).
#[derive(Clone, Copy, Debug)]
pub struct RankedPod<'a> {
    /// The pod being ordered.
    pub pod: &'a Pod,
    /// Active related pods on the same node; higher ranks are deleted first.
    pub rank: usize,
}

/// Upstream `ActivePodsWithRanks.Less` as an ordering: `Less` means "delete `a` before `b`".
///
/// The first three rules are those of [`cmp_active_pods`]; then lower pod-deletion-cost, higher rank,
/// ready time and creation time in logarithmic buckets relative to `now`, and more restarts.
pub fn cmp_pods_with_ranks(a: &RankedPod<'_>, b: &RankedPod<'_>, now: Timestamp) -> Ordering {
    let (pa, pb) = (a.pod, b.pod);
    cmp_unassigned(pa, pb)
        .then_with(|| cmp_phase(pa, pb))
        .then_with(|| cmp_not_ready(pa, pb))
        .then_with(|| pod_deletion_cost(pa).cmp(&pod_deletion_cost(pb)))
        .then_with(|| b.rank.cmp(&a.rank))
        .then_with(|| cmp_ready_time(pa, pb, Some(now)))
        .then_with(|| cmp_restarts(pa, pb))
        .then_with(|| cmp_creation(pa, pb, Some(now)))
}

/// The rule of [`cmp_pods_with_ranks`] that puts `a` before `b`, in words (`not ready before
/// ready`), for the causal journal's account of a scale-down; `None` when nothing tells them apart.
pub fn deciding_rule(a: &RankedPod<'_>, b: &RankedPod<'_>, now: Timestamp) -> Option<&'static str> {
    let (pa, pb) = (a.pod, b.pod);
    let rules: [(Ordering, &'static str); 8] = [
        (cmp_unassigned(pa, pb), "unscheduled before scheduled"),
        (cmp_phase(pa, pb), "Pending before Unknown before Running"),
        (cmp_not_ready(pa, pb), "not ready before ready"),
        (
            pod_deletion_cost(pa).cmp(&pod_deletion_cost(pb)),
            "lower pod-deletion-cost first",
        ),
        (b.rank.cmp(&a.rank), "more related pods on the same node first"),
        (cmp_ready_time(pa, pb, Some(now)), "ready more recently first"),
        (cmp_restarts(pa, pb), "more restarts first"),
        (cmp_creation(pa, pb, Some(now)), "newer first"),
    ];
    rules
        .into_iter()
        .find(|(order, _)| *order != Ordering::Equal)
        .map(|(_, rule)| rule)
}

/// Sorts pods so that the ones to delete first come first (upstream `sort.Sort(ActivePods(..))`).
pub fn sort_active_pods(pods: &mut [&Pod]) {
    merge_sort_by(pods, |a, b| cmp_active_pods(a, b));
}

/// Sorts ranked pods so that the ones to delete first come first (upstream `ActivePodsWithRanks`).
pub fn sort_pods_with_ranks(pods: &mut [RankedPod<'_>], now: Timestamp) {
    merge_sort_by(pods, |a, b| cmp_pods_with_ranks(a, b, now));
}

/// Upstream `getPodsRankedByRelatedPodsOnSameNode`: ranks each pod by the number of *active* pods in
/// `related_pods` on the same node (the empty node name is counted like any other).
pub fn rank_by_related_pods_on_same_node<'a, P, R>(
    pods_to_rank: &'a [P],
    related_pods: &[R],
) -> Vec<RankedPod<'a>>
where
    P: Borrow<Pod>,
    R: Borrow<Pod>,
{
    let mut pods_on_node: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in related_pods
        .iter()
        .map(Borrow::borrow)
        .filter(|p| is_pod_active(p))
    {
        *pods_on_node.entry(node_name(pod)).or_default() += 1;
    }
    let rank_of = |pod: &Pod| pods_on_node.get(node_name(pod)).copied().unwrap_or(0);
    pods_to_rank
        .iter()
        .map(|p| RankedPod {
            pod: p.borrow(),
            rank: rank_of(p.borrow()),
        })
        .collect()
}

/// A stable merge sort that tolerates comparators which are not a strict total order.
fn merge_sort_by<T: Copy>(items: &mut [T], cmp: impl Fn(&T, &T) -> Ordering + Copy) {
    if items.len() < 2 {
        return;
    }
    let mid = items.len() / 2;
    merge_sort_by(&mut items[..mid], cmp);
    merge_sort_by(&mut items[mid..], cmp);
    let merged = merge(&items[..mid], &items[mid..], cmp);
    items.copy_from_slice(&merged);
}

fn merge<T: Copy>(left: &[T], right: &[T], cmp: impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        // Take from the right only when it strictly precedes, which keeps equal elements stable.
        if cmp(&right[j], &left[i]) == Ordering::Less {
            out.push(right[j]);
            j += 1;
        } else {
            out.push(left[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&left[i..]);
    out.extend_from_slice(&right[j..]);
    out
}
