//! The pure core of one StatefulSet sync: given the set, its two revisions (already applied to the
//! set), its pods and the claims of its namespace, what to create, fix and delete, in order, and
//! the status to report.
//!
//! Upstream: `stateful_set_control.go` (`updateStatefulSet`, `processReplica`, `processCondemned`,
//! `runForAll`, `updateStatefulSetAfterInvariantEstablished`) and the claim part of
//! `stateful_pod_control.go` (`createMissingPersistentVolumeClaims`, `UpdateStatefulPod`).
//!
//! ```text
//! slots[start..=end]  ← the pods with an ordinal in range; empty slots get a new pod
//!                       (current revision below the partition, update revision above)
//! condemned           ← pods with a valid ordinal out of range, highest ordinal first
//! set deleting        → status only
//! 1. each slot (OrderedReady: in order, stopping at the first that blocks; Parallel: all)
//!      finished pod → delete it          missing → its claims, then the pod
//!      OrderedReady: terminating, not Running+Ready or not available → stop here
//!      identity / storage / claim owners wrong → fix
//! 2. claim owners of condemned pods
//! 3. condemned, highest first: OrderedReady waits on a terminating or unhealthy one (unless it
//!    is the first unhealthy pod) and deletes one per sync; Parallel deletes them all
//! 4. OnDelete → done. RollingUpdate: from the highest ordinal down to the partition, delete the
//!    first pod not at the update revision (maxUnavailable of them when set), waiting while an
//!    updated pod is unavailable
//! ```
//!
//! Why the guarantee holds (never two pods of one ordinal, never more than `replicas` created):
//! a pod's name is its identity and the API refuses a second object of one name, so a replacement
//! can only be created once the old pod is gone from the API; the plan creates only in-range
//! ordinals; and the sync plans pod writes only while its expectations are satisfied, so it never
//! acts on a cache that has not yet seen its own last writes. After a restart the expectations are
//! empty and the caches are synced before any worker runs, so the first plan sees every pod.
//!
//! The sync applies the steps in order for OrderedReady, and per pod in slow-start batches of
//! concurrent calls for Parallel (upstream `runForAll` / `slowStartBatch`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::claims::{claim_owner_matches_set_and_pod, claim_owner_refs_for_set_and_pod};
use super::status::compute_replica_status;
use super::utils::{
    ON_DELETE, allows_burst, get_end_ordinal, get_ordinal, get_persistent_volume_claims, get_pod_revision,
    get_start_ordinal, get_stateful_set_max_unavailable, identity_matches, is_finished, is_pending,
    is_running_and_available, is_running_and_ready, is_terminating, max_unavailable, min_ready_seconds,
    new_versioned_stateful_set_pod, partition, pod_in_ordinal_range, replicas, storage_matches,
    update_identity, update_storage, update_strategy_type,
};
use crate::runtime::name_of;

/// Why a pod is deleted (for the trace and tests; the event is the same `SuccessfulDelete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteReason {
    /// The pod failed or succeeded; a new one takes its place.
    Finished,
    /// Its ordinal is out of range (scale-down).
    ScaleDown,
    /// It is not at the update revision (rolling update).
    Update,
}

/// One write of the plan, applied in order by the sync.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Create the claims that do not exist yet for `pod` (upstream `createPersistentVolumeClaims`).
    CreateClaims {
        /// The pod they are for.
        pod: String,
        /// The missing claims.
        claims: Vec<PersistentVolumeClaim>,
    },
    /// Create this pod.
    CreatePod(Box<Pod>),
    /// Write this pod back (identity or storage repaired).
    UpdatePod(Box<Pod>),
    /// Set a claim's owner references (retention policy).
    SetClaimOwners {
        /// The claim.
        claim: String,
        /// The pod it belongs to.
        pod: String,
        /// The complete new list.
        owner_references: Vec<OwnerReference>,
    },
    /// Delete this pod.
    DeletePod {
        /// Its name.
        name: String,
        /// Why.
        reason: DeleteReason,
    },
}

/// What one sync does: the writes in order, and the status to report.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The writes, in order; the sync stops at the first failure.
    pub steps: Vec<Step>,
    /// The status (before `completeRollingUpdate`).
    pub status: StatefulSetStatus,
}

/// Everything the plan reads.
pub struct PlanInput<'a> {
    /// The set as read from the cache.
    pub set: &'a StatefulSet,
    /// The set with the current revision's template.
    pub current_set: &'a StatefulSet,
    /// The set with the update revision's template.
    pub update_set: &'a StatefulSet,
    /// The current revision's name.
    pub current_revision: &'a str,
    /// The update revision's name.
    pub update_revision: &'a str,
    /// The collision count to report.
    pub collision_count: i32,
    /// The set's pods (claimed, members by name).
    pub pods: &'a [&'a Pod],
    /// The claims of the namespace, by name.
    pub claims: &'a BTreeMap<String, &'a PersistentVolumeClaim>,
    /// The sync's time.
    pub now: Timestamp,
}

/// A slot of the ordinal range: an existing pod, or the one to create.
enum Slot<'a> {
    Existing(&'a Pod),
    New(Box<Pod>),
}

impl Slot<'_> {
    fn pod(&self) -> &Pod {
        match self {
            Slot::Existing(p) => p,
            Slot::New(p) => p,
        }
    }
}

/// Upstream `isUnavailable` of a slot: not created, terminating, or not running and available.
fn is_unavailable(slot: &Slot<'_>, min_ready: i32, now: Timestamp) -> bool {
    match slot {
        Slot::New(_) => true,
        Slot::Existing(p) => is_terminating(p) || !is_running_and_available(p, min_ready, now),
    }
}

/// Upstream `updateStatefulSet`: the plan of one sync. A template the API would refuse (e.g. one
/// without labels) is an error.
pub fn update_stateful_set(input: &PlanInput<'_>) -> Result<Plan, String> {
    let set = input.set;
    let min_ready = min_ready_seconds(set);
    let mut status = StatefulSetStatus {
        observed_generation: set.metadata.generation,
        current_revision: Some(input.current_revision.to_owned()),
        update_revision: Some(input.update_revision.to_owned()),
        collision_count: Some(input.collision_count),
        ..StatefulSetStatus::default()
    };
    compute_replica_status(
        &mut status,
        input.pods.iter().copied(),
        min_ready,
        input.current_revision,
        input.update_revision,
        input.now,
    );

    let start = get_start_ordinal(set);
    let end = get_end_ordinal(set);
    let mut by_ordinal: BTreeMap<i32, &Pod> = BTreeMap::new();
    let mut condemned: Vec<&Pod> = Vec::new();
    for pod in input.pods {
        if pod_in_ordinal_range(pod, set) {
            by_ordinal.insert(get_ordinal(pod), pod);
        } else if get_ordinal(pod) >= 0 {
            condemned.push(pod);
        }
    }
    let mut slots = Vec::with_capacity(usize::try_from(replicas(set)).unwrap_or(0));
    for ordinal in start..=end {
        slots.push(match by_ordinal.get(&ordinal) {
            Some(pod) => Slot::Existing(pod),
            None => Slot::New(Box::new(
                new_versioned_stateful_set_pod(
                    input.current_set,
                    input.update_set,
                    input.current_revision,
                    input.update_revision,
                    ordinal,
                )
                .map_err(|e| e.to_string())?,
            )),
        });
    }
    condemned.sort_by_key(|p| std::cmp::Reverse(get_ordinal(p)));

    // The first unhealthy pod: in range in order, else condemned from the lowest ordinal.
    let first_unhealthy: Option<&str> = slots
        .iter()
        .find(|s| is_unavailable(s, min_ready, input.now))
        .map(|s| name_of(&s.pod().metadata))
        .or_else(|| {
            condemned
                .iter()
                .rev()
                .find(|p| is_terminating(p) || !is_running_and_available(p, min_ready, input.now))
                .map(|p| name_of(&p.metadata))
        });

    let mut steps = Vec::new();
    if set.metadata.deletion_timestamp.is_some() {
        return Ok(Plan { steps, status });
    }
    let monotonic = !allows_burst(set);

    for slot in &slots {
        if process_replica(input, slot, monotonic, &mut steps) && monotonic {
            return Ok(Plan { steps, status });
        }
    }

    for pod in &condemned {
        fix_claim_owners(input, pod, &mut steps);
    }

    for pod in &condemned {
        if is_terminating(pod) {
            if monotonic {
                return Ok(Plan { steps, status });
            }
            continue;
        }
        let first = first_unhealthy == Some(name_of(&pod.metadata));
        if monotonic
            && !first
            && (!is_running_and_ready(pod) || !is_running_and_available(pod, min_ready, input.now))
        {
            return Ok(Plan { steps, status });
        }
        steps.push(Step::DeletePod {
            name: name_of(&pod.metadata).to_owned(),
            reason: DeleteReason::ScaleDown,
        });
        if monotonic {
            return Ok(Plan { steps, status });
        }
    }

    if update_strategy_type(set) == ON_DELETE {
        return Ok(Plan { steps, status });
    }
    rolling_update(input, &slots, &mut status, &mut steps)?;
    Ok(Plan { steps, status })
}

/// Upstream `processReplica`; true when an OrderedReady sync must stop at this slot.
fn process_replica(input: &PlanInput<'_>, slot: &Slot<'_>, monotonic: bool, steps: &mut Vec<Step>) -> bool {
    let pod = match slot {
        Slot::New(pod) => {
            create_missing_claims(input, pod, steps);
            steps.push(Step::CreatePod(pod.clone()));
            return true;
        }
        Slot::Existing(pod) => *pod,
    };
    let name = name_of(&pod.metadata).to_owned();
    if is_finished(pod) {
        if !is_terminating(pod) {
            steps.push(Step::DeletePod {
                name,
                reason: DeleteReason::Finished,
            });
        }
        return true;
    }
    if is_pending(pod) {
        create_missing_claims(input, pod, steps);
    }
    let min_ready = min_ready_seconds(input.set);
    if monotonic
        && (is_terminating(pod)
            || !is_running_and_ready(pod)
            || !is_running_and_available(pod, min_ready, input.now))
    {
        return true;
    }
    fix_claim_owners(input, pod, steps);
    if !identity_matches(input.set, pod) || !storage_matches(input.set, pod) {
        let mut fixed = pod.clone();
        update_identity(input.update_set, &mut fixed);
        update_storage(input.update_set, &mut fixed);
        create_missing_claims(input, &fixed, steps);
        steps.push(Step::UpdatePod(Box::new(fixed)));
    }
    false
}

/// Upstream `createMissingPersistentVolumeClaims`: the pod's claims not in the cache.
fn create_missing_claims(input: &PlanInput<'_>, pod: &Pod, steps: &mut Vec<Step>) {
    let missing: Vec<PersistentVolumeClaim> =
        get_persistent_volume_claims(input.update_set, get_ordinal(pod))
            .into_values()
            .filter(|c| !input.claims.contains_key(name_of(&c.metadata)))
            .collect();
    if !missing.is_empty() {
        steps.push(Step::CreateClaims {
            pod: name_of(&pod.metadata).to_owned(),
            claims: missing,
        });
    }
}

/// Upstream `ClaimsMatchRetentionPolicy` / `UpdatePodClaimForRetentionPolicy`: owner references of
/// the pod's existing claims that do not follow the policy.
fn fix_claim_owners(input: &PlanInput<'_>, pod: &Pod, steps: &mut Vec<Step>) {
    for claim in get_persistent_volume_claims(input.update_set, get_ordinal(pod)).into_values() {
        let Some(existing) = input.claims.get(name_of(&claim.metadata)) else {
            continue;
        };
        if !claim_owner_matches_set_and_pod(existing, input.set, pod) {
            steps.push(Step::SetClaimOwners {
                claim: name_of(&existing.metadata).to_owned(),
                pod: name_of(&pod.metadata).to_owned(),
                owner_references: claim_owner_refs_for_set_and_pod(existing, input.set, pod),
            });
        }
    }
}

/// The rolling update: from the highest ordinal down to the partition, replace pods not at the
/// update revision. Without `maxUnavailable`, one at a time, waiting for an unavailable pod on the
/// way (upstream `updateStatefulSet`'s tail); with it, up to `maxUnavailable` minus the pods
/// already unavailable (upstream `updateStatefulSetAfterInvariantEstablished`).
fn rolling_update(
    input: &PlanInput<'_>,
    slots: &[Slot<'_>],
    status: &mut StatefulSetStatus,
    steps: &mut Vec<Step>,
) -> Result<(), String> {
    let set = input.set;
    let min_ready = min_ready_seconds(set);
    let update_min = usize::try_from(partition(set).unwrap_or(0)).unwrap_or(0);
    // A pod created by this very sync is at its revision already (current only below the
    // partition), so only existing pods are candidates.
    let outdated = |slot: &Slot<'_>| match slot {
        Slot::New(_) => false,
        Slot::Existing(pod) => get_pod_revision(pod) != input.update_revision && !is_terminating(pod),
    };
    let mut delete = |slot: &Slot<'_>, status: &mut StatefulSetStatus| {
        steps.push(Step::DeletePod {
            name: name_of(&slot.pod().metadata).to_owned(),
            reason: DeleteReason::Update,
        });
        status.current_replicas = Some(status.current_replicas.unwrap_or(0) - 1);
    };
    if let Some(max) = max_unavailable(set) {
        let max = get_stateful_set_max_unavailable(Some(max), replicas(set))?;
        let unavailable = slots
            .iter()
            .filter(|s| is_unavailable(s, min_ready, input.now))
            .count();
        let allowed = usize::try_from(max).unwrap_or(1).saturating_sub(unavailable);
        let mut deleted = 0;
        for slot in slots
            .iter()
            .enumerate()
            .rev()
            .filter(|(i, _)| *i >= update_min)
            .map(|(_, s)| s)
        {
            if deleted >= allowed {
                break;
            }
            if outdated(slot) {
                delete(slot, status);
                deleted += 1;
            }
        }
        return Ok(());
    }
    for slot in slots
        .iter()
        .enumerate()
        .rev()
        .filter(|(i, _)| *i >= update_min)
        .map(|(_, s)| s)
    {
        if outdated(slot) {
            delete(slot, status);
            return Ok(());
        }
        if is_unavailable(slot, min_ready, input.now) {
            return Ok(());
        }
    }
    Ok(())
}
