//! What one ReplicaSet sync should do about its pods: create some, delete some, or nothing.
//!
//! Ported from upstream `pkg/controller/replicaset/replica_set.go` (`manageReplicas`, `getPodsToDelete`,
//! `getPodsRankedByRelatedPodsOnSameNode`, `getIndirectlyRelatedPods`).
//!
//! Simplifications against upstream:
//! * The plan is a value; expectations, slow-start batching of the creates (see
//!   [`crate::controller_utils::slow_start::slow_start_batches`]) and the concurrent deletes are applied by the async sync.
//! * `manageReplicas` is only called upstream when expectations are satisfied and the ReplicaSet is not
//!   being deleted; the second check is folded in here ([`plan_replicas`] returns `Nothing`), the first
//!   stays with the caller.
//! * The sorting-age metric (`reportSortingDeletionAgeRatioMetric`) is not reported.
//!
//! A lesson switches the ranking off (`miniplane up --disable pod-deletion-ranking`,
//! [`DeletionOrder::OldestFirst`]): a scale-down then deletes the oldest pods first, and a
//! ReplicaSet scaled up and back down loses its ready pods while keeping the new, not yet
//! ready ones.

use std::borrow::Borrow;
use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;

use crate::controller_utils::ranking::{self, RankedPod};
use crate::controller_utils::selector::selector_of;
use crate::runtime::{get_controller_of, is_controlled_by};

/// Upstream `BurstReplicas`: at most this many creations or deletions per sync.
pub const BURST_REPLICAS: usize = 500;

/// Identifies a pod chosen for deletion; the UID lets the caller use it as a delete precondition and the
/// `namespace/name` key is what deletion expectations track.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRef {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub name: String,
    /// The pod's UID ("" if the cached pod had none).
    pub uid: String,
}

impl PodRef {
    /// Builds a reference from a pod's metadata.
    pub fn of(pod: &Pod) -> Self {
        let meta = &pod.metadata;
        Self {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
        }
    }

    /// Upstream `PodKey`: `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The outcome of [`plan_replicas`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicasPlan {
    /// The ReplicaSet has the right number of pods (or is being deleted).
    Nothing,
    /// Too few pods: create `count` (already capped by the burst limit) in slow-start batches.
    Create {
        /// Pods to create in this sync.
        count: usize,
    },
    /// Too many pods: delete these, in the order they were ranked (first = most deletable).
    Delete {
        /// Pods to delete in this sync (capped by the burst limit).
        pods: Vec<PodRef>,
    },
}

/// Which pods a scale-down deletes first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeletionOrder {
    /// Upstream's ranking ([`get_pods_to_delete`]): unscheduled before scheduled, pending
    /// before running, not ready before ready, then by related pods on the same node,
    /// deletion cost, restarts and youth.
    #[default]
    Ranked,
    /// A plain first-in, first-out order (`--disable pod-deletion-ranking`, a lesson):
    /// the oldest pods go first (by creationTimestamp, then name), whatever their state.
    OldestFirst,
}

/// The desired replica count; the API server defaults a missing `spec.replicas` to 1.
pub fn desired_replicas(rs: &ReplicaSet) -> usize {
    let replicas = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    usize::try_from(replicas).unwrap_or(0)
}

/// Upstream `manageReplicas`, without the API calls.
///
/// `filtered_active_pods` are the active pods this ReplicaSet owns after claiming. `related_pods` are the
/// pods used for ranking (see [`indirectly_related_pods`]); they decide which pods are deleted, not how many.
pub fn plan_replicas<P, R>(
    rs: &ReplicaSet,
    filtered_active_pods: &[P],
    related_pods: &[R],
    now: Timestamp,
    burst_replicas: usize,
) -> ReplicasPlan
where
    P: Borrow<Pod>,
    R: Borrow<Pod>,
{
    plan_replicas_in_order(
        rs,
        filtered_active_pods,
        related_pods,
        now,
        burst_replicas,
        DeletionOrder::Ranked,
    )
}

/// [`plan_replicas`], deleting in `order`.
pub fn plan_replicas_in_order<P, R>(
    rs: &ReplicaSet,
    filtered_active_pods: &[P],
    related_pods: &[R],
    now: Timestamp,
    burst_replicas: usize,
    order: DeletionOrder,
) -> ReplicasPlan
where
    P: Borrow<Pod>,
    R: Borrow<Pod>,
{
    if rs.metadata.deletion_timestamp.is_some() {
        return ReplicasPlan::Nothing;
    }
    let have = filtered_active_pods.len();
    let want = desired_replicas(rs);
    if have < want {
        return ReplicasPlan::Create {
            count: (want - have).min(burst_replicas),
        };
    }
    if have > want {
        let diff = (have - want).min(burst_replicas);
        let pods = match order {
            DeletionOrder::Ranked => get_pods_to_delete(filtered_active_pods, related_pods, diff, now),
            DeletionOrder::OldestFirst => oldest_pods(filtered_active_pods, diff),
        };
        return ReplicasPlan::Delete {
            pods: pods.into_iter().map(PodRef::of).collect(),
        };
    }
    ReplicasPlan::Nothing
}

/// Upstream `getPodsToDelete`: the `diff` pods most worth deleting, ranked by `ActivePodsWithRanks`.
///
/// When every pod goes no sorting is needed and the input order is kept, as upstream.
pub fn get_pods_to_delete<'a, P, R>(
    filtered_pods: &'a [P],
    related_pods: &[R],
    diff: usize,
    now: Timestamp,
) -> Vec<&'a Pod>
where
    P: Borrow<Pod>,
    R: Borrow<Pod>,
{
    if diff >= filtered_pods.len() {
        return filtered_pods.iter().map(Borrow::borrow).collect();
    }
    let mut ranked: Vec<RankedPod<'a>> =
        ranking::rank_by_related_pods_on_same_node(filtered_pods, related_pods);
    ranking::sort_pods_with_ranks(&mut ranked, now);
    ranked.into_iter().take(diff).map(|r| r.pod).collect()
}

/// The `diff` oldest pods (by creationTimestamp, then name): [`DeletionOrder::OldestFirst`].
pub fn oldest_pods<P: Borrow<Pod>>(filtered_pods: &[P], diff: usize) -> Vec<&Pod> {
    let mut pods: Vec<&Pod> = filtered_pods.iter().map(Borrow::borrow).collect();
    pods.sort_by(|a, b| {
        let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
        let name = |p: &Pod| p.metadata.name.clone().unwrap_or_default();
        (created(a), name(a)).cmp(&(created(b), name(b)))
    });
    pods.truncate(diff);
    pods
}

/// Why [`get_pods_to_delete`] chose its first `diff` pods, in words for the causal journal: the
/// ranking rule that put the last chosen pod before the first kept one (`not ready before ready`),
/// or that every pod goes.
pub fn deletion_reason<P, R>(filtered_pods: &[P], related_pods: &[R], diff: usize, now: Timestamp) -> String
where
    P: Borrow<Pod>,
    R: Borrow<Pod>,
{
    if diff >= filtered_pods.len() {
        return "all of them go".to_string();
    }
    let mut ranked: Vec<RankedPod<'_>> =
        ranking::rank_by_related_pods_on_same_node(filtered_pods, related_pods);
    ranking::sort_pods_with_ranks(&mut ranked, now);
    let rule = match diff.checked_sub(1) {
        Some(last) => ranking::deciding_rule(&ranked[last], &ranked[diff], now),
        None => None,
    };
    format!(
        "ranked: {}",
        rule.unwrap_or("no rule tells them apart, kept in list order")
    )
}

/// Upstream `getIndirectlyRelatedPods`: the pods selected by any ReplicaSet that shares `rs`'s controller
/// (normally the sibling ReplicaSets of one Deployment, `rs` included), each pod once.
///
/// A ReplicaSet without a controller has no related pods, so all ranks are 0. Pods are matched by the
/// siblings' selectors and namespace, not by ownership, exactly as upstream lists them.
pub fn indirectly_related_pods<'a, S, P>(rs: &ReplicaSet, replica_sets: &[S], pods: &'a [P]) -> Vec<&'a Pod>
where
    S: Borrow<ReplicaSet>,
    P: Borrow<Pod>,
{
    let Some(controller) = get_controller_of(&rs.metadata) else {
        return Vec::new();
    };
    let siblings = replica_sets.iter().map(Borrow::borrow).filter(|s| {
        is_controlled_by(&s.metadata, &controller.uid) && s.metadata.namespace == rs.metadata.namespace
    });
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut related: Vec<&'a Pod> = Vec::new();
    for sibling in siblings {
        let Some(spec) = sibling.spec.as_ref() else {
            continue;
        };
        let selector = selector_of(&spec.selector);
        let ns = &sibling.metadata.namespace;
        let selected =
            |p: &&Pod| p.metadata.namespace == *ns && selector.matches(&p.metadata.labels.as_ref());
        for pod in pods.iter().map(Borrow::borrow).filter(selected) {
            if seen.insert(identity(pod)) {
                related.push(pod);
            }
        }
    }
    related
}

/// The UID, or the name for a pod that has none (only hand-built test pods lack one).
fn identity(pod: &Pod) -> &str {
    let meta = &pod.metadata;
    meta.uid.as_deref().or(meta.name.as_deref()).unwrap_or("")
}
