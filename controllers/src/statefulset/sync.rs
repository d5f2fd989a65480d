//! One StatefulSet sync: the async shell around [`super::plan`].
//!
//! Upstream: `stateful_set.go` (`sync`, `getPodsForStatefulSet`, `adoptOrphanRevisions`,
//! `syncStatefulSet`), `stateful_set_control.go` (`UpdateStatefulSet`, `performUpdate`,
//! `getStatefulSetRevisions`' writes, `truncateHistory`' deletes), `stateful_pod_control.go` (the
//! pod and claim writes and their events) and `stateful_set_status_updater.go`.
//!
//! ```text
//! sync_stateful_set(key)
//!   set not in cache         → forget expectations, Done
//!   pods                     = members of the namespace (name <set>-<n>), claimed
//!   revisions                = the namespace's, claimed (orphans adopted), sorted
//!   update revision          = reuse | renumber (rollback) | create (collisions counted)
//!   current revision         = status.currentRevision's, else the update revision
//!   plan                     = update_stateful_set(set, revisions applied, pods, claims, now)
//!   expectations satisfied?  → apply the steps in order, stop at the first failure
//!   status                   = completeRollingUpdate; written if it differs
//!   history                  = non-live revisions beyond revisionHistoryLimit deleted
//! ```
//!
//! The expectations: every pod create and delete of a sync is expected; the pod handlers lower
//! them as the informer reports the pods. Until then the next sync writes status only, so a plan
//! never acts on a cache that has not caught up with the previous sync's writes.
//!
//! Simplified against upstream: the revision's renumbering and the status write retry once on a
//! conflict with a fresh GET (upstream `RetryOnConflict` tries more often); a pod update
//! replaces the pod (no retry loop).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::join_all;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use store::Clock;

use super::controller::NAME;
use super::decisions;
use super::plan::{Plan, PlanInput, Step, update_stateful_set};
use super::revisions::{UpdateRevision, choose_update_revision, current_revision, truncate_history};
use super::status::{availability_requeue_after, complete_rolling_update, inconsistent_status};
use super::utils::{allows_burst, apply_revision, is_member_of};
use crate::controller_ref_manager::ControllerRefManager;
use crate::controller_utils::selector::selector_of;
use crate::controller_utils::slow_start::{SLOW_START_INITIAL_BATCH_SIZE, slow_start_batches};
use crate::history::{controller_revision_name_for, sort_controller_revisions};
use crate::runtime::client::{ClientError, PatchType, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{
    Action, Client, ReconcileError, UidTrackingControllerExpectations, clock_now, decision, name_of,
    object_key, split_key,
};

/// How often a revision name may collide before the sync gives up (and retries later).
const MAX_COLLISIONS: usize = 16;

/// The caches one sync reads.
pub struct Caches {
    /// StatefulSets.
    pub sets: Store<StatefulSet>,
    /// Pods.
    pub pods: Store<Pod>,
    /// ControllerRevisions.
    pub revisions: Store<ControllerRevision>,
    /// PersistentVolumeClaims.
    pub claims: Store<PersistentVolumeClaim>,
}

/// Everything one sync reads and writes.
pub struct StatefulSetSync {
    sets_api: Typed<StatefulSet>,
    pods_api: Typed<Pod>,
    revisions_api: Typed<ControllerRevision>,
    claims_api: Typed<PersistentVolumeClaim>,
    caches: Caches,
    /// Pod creations and deletions not yet seen in the pod cache, per set key.
    expectations: UidTrackingControllerExpectations,
    /// Events on the StatefulSet.
    recorder: Recorder,
    /// `now`, read once per sync.
    clock: Clock,
}

impl StatefulSetSync {
    /// A syncer over `caches` writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        expectations: UidTrackingControllerExpectations,
        caches: Caches,
    ) -> Self {
        StatefulSetSync {
            sets_api: Typed::new(client.clone()),
            pods_api: Typed::new(client.clone()),
            revisions_api: Typed::new(client.clone()),
            claims_api: Typed::new(client),
            caches,
            expectations,
            recorder,
            clock,
        }
    }

    /// The expectations shared with the event handlers.
    pub fn expectations(&self) -> &UidTrackingControllerExpectations {
        &self.expectations
    }

    /// Upstream `sync`: brings the StatefulSet named by `key` one step closer to its spec.
    pub async fn sync_stateful_set(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(set) = self.caches.sets.get(ns, name) else {
            self.expectations.delete_expectations(key);
            return Ok(Action::Done);
        };
        let Some(spec) = set.spec.as_ref() else {
            return Err(ReconcileError::terminal(format!("statefulset {key} has no spec")));
        };
        let selector = selector_of(&spec.selector);
        if selector.is_empty() {
            // Upstream refuses an empty selector: it would select every pod of the namespace.
            return Ok(Action::Done);
        }
        let ns_str = ns.unwrap_or("");
        let needs_sync = self.expectations.satisfied(key);

        let candidates: Vec<Arc<Pod>> = self
            .caches
            .pods
            .by_index(NAMESPACE_INDEX, ns_str)
            .into_iter()
            .filter(|p| is_member_of(&set, p))
            .collect();
        let pods = ControllerRefManager::new(set.as_ref(), &selector, &self.sets_api, &self.pods_api)
            .claim(&candidates)
            .await?;
        let revision_candidates = self.caches.revisions.by_index(NAMESPACE_INDEX, ns_str);
        let mut revisions =
            ControllerRefManager::new(set.as_ref(), &selector, &self.sets_api, &self.revisions_api)
                .claim(&revision_candidates)
                .await?;
        sort_controller_revisions(&mut revisions);

        let mut collision_count = set.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
        let update = self
            .update_revision(&set, &revisions, &mut collision_count)
            .await?;
        let current = current_revision(&set, &revisions, &update);
        let current_set = apply_revision(&set, &current).map_err(ReconcileError::terminal)?;
        let update_set = apply_revision(&set, &update).map_err(ReconcileError::terminal)?;

        let claims_of_ns = self.caches.claims.by_index(NAMESPACE_INDEX, ns_str);
        let claims: BTreeMap<String, &PersistentVolumeClaim> = claims_of_ns
            .iter()
            .map(|c| (name_of(&c.metadata).to_owned(), c.as_ref()))
            .collect();
        let pod_refs: Vec<&Pod> = pods.iter().map(AsRef::as_ref).collect();
        let now = clock_now(&self.clock)?;
        let input = PlanInput {
            set: &set,
            current_set: &current_set,
            update_set: &update_set,
            current_revision: name_of(&current.metadata),
            update_revision: name_of(&update.metadata),
            collision_count,
            pods: &pod_refs,
            claims: &claims,
            now,
        };
        let plan = update_stateful_set(&input).map_err(ReconcileError::terminal)?;
        self.record_decisions(key, needs_sync, &input, &plan);

        let Plan { steps, mut status } = plan;
        let applied = if needs_sync {
            self.apply(&set, key, steps).await
        } else {
            tracing::debug!(key, "expectations not yet satisfied; status only");
            Ok(())
        };
        complete_rolling_update(&set, &mut status);
        self.update_status(&set, &status).await?;
        let truncate = truncate_history(
            &set,
            pod_refs.iter().copied(),
            &revisions,
            name_of(&current.metadata),
            name_of(&update.metadata),
        );
        for revision in truncate {
            match self.revisions_api.delete(ns, &revision).await {
                Err(e) if !e.is_not_found() => return Err(e.into()),
                _ => {}
            }
        }
        applied?;
        Ok(match availability_requeue_after(&set, &status) {
            Some(after) => Action::RequeueAfter(after),
            None => Action::Done,
        })
    }

    /// Puts the plan's decisions into the causal journal, caused by this sync: its pod writes and
    /// the wait holding it back, or, while expectations hold the writes back, that wait.
    fn record_decisions(&self, key: &str, needs_sync: bool, input: &PlanInput<'_>, plan: &Plan) {
        decision::record(&self.clock, NAME, input.set, || match needs_sync {
            true => {
                let mut found = decisions::plan_decisions(input, plan);
                found.extend(decisions::wait(input, plan));
                found
            }
            false if plan.steps.is_empty() => Vec::new(),
            false => {
                let pending = self.expectations.counts().get(key);
                let (adds, dels) = pending.map_or((0, 0), |e| (e.add.max(0), e.del.max(0)));
                vec![decisions::waiting_expectations(adds, dels, plan.steps.len())]
            }
        });
    }

    /// The writes of upstream `getStatefulSetRevisions`: reuse, renumber or create the update
    /// revision; a name taken by other data bumps `collision_count` and tries the next name.
    async fn update_revision(
        &self,
        set: &StatefulSet,
        revisions: &[Arc<ControllerRevision>],
        collision_count: &mut i32,
    ) -> Result<Arc<ControllerRevision>, ReconcileError> {
        let ns = set.metadata.namespace.as_deref();
        match choose_update_revision(set, revisions, *collision_count) {
            UpdateRevision::Latest(r) => Ok(r),
            UpdateRevision::Rollback { existing, revision } => {
                let mut next = existing.as_ref().clone();
                next.revision = revision;
                let written = match self.revisions_api.update(&next).await {
                    Err(e) if e.is_conflict() => {
                        let mut fresh = self.revisions_api.get(ns, name_of(&existing.metadata)).await?;
                        fresh.revision = revision;
                        self.revisions_api.update(&fresh).await?
                    }
                    other => other?,
                };
                Ok(Arc::new(written))
            }
            UpdateRevision::Create(mut candidate) => {
                for _ in 0..MAX_COLLISIONS {
                    candidate.metadata.name = Some(controller_revision_name_for(
                        name_of(&set.metadata),
                        &candidate,
                        Some(*collision_count),
                    ));
                    match self.revisions_api.create(ns, &candidate).await {
                        Ok(created) => return Ok(Arc::new(created)),
                        Err(e) if e.is_already_exists() => {
                            let existing = self.revisions_api.get(ns, name_of(&candidate.metadata)).await?;
                            if existing.data.as_ref().map(|d| &d.0) == candidate.data.as_ref().map(|d| &d.0) {
                                return Ok(Arc::new(existing));
                            }
                            *collision_count = collision_count.saturating_add(1);
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(ReconcileError::retryable(format!(
                    "statefulset {}: {MAX_COLLISIONS} revision name collisions",
                    name_of(&set.metadata)
                )))
            }
        }
    }

    /// Applies the plan's steps, stopping at the first failure. Every pod create and delete is
    /// expected first; the ones that did not happen are taken off again.
    ///
    /// OrderedReady applies the steps one after another. Parallel groups them by pod and runs the
    /// groups in slow-start batches (1, 2, 4, ...) of concurrent calls, as upstream's
    /// `slowStartBatch`, stopping after a batch with a failure.
    async fn apply(&self, set: &StatefulSet, key: &str, steps: Vec<Step>) -> Result<(), ReconcileError> {
        if steps.is_empty() {
            return Ok(());
        }
        let ns = set.metadata.namespace.as_deref().unwrap_or("");
        let creates = steps.iter().filter(|s| matches!(s, Step::CreatePod(_))).count();
        let deletes: Vec<String> = steps
            .iter()
            .filter_map(|s| match s {
                Step::DeletePod { name, .. } => Some(object_key(Some(ns), name)),
                _ => None,
            })
            .collect();
        self.expectations.expect_deletions(key, &deletes);
        self.expectations
            .counts()
            .raise_expectations(key, creates as i64, 0);

        let (units, batches) = if allows_burst(set) {
            let units = group_by_pod(steps);
            let batches = slow_start_batches(units.len(), SLOW_START_INITIAL_BATCH_SIZE);
            (units, batches)
        } else {
            let units: Vec<Vec<Step>> = steps.into_iter().map(|s| vec![s]).collect();
            let batches = vec![1; units.len()];
            (units, batches)
        };
        let mut units = units.into_iter();
        let mut attempted_creates = 0i64;
        let mut attempted_deletes: Vec<String> = Vec::new();
        let mut failure = None;
        for size in batches {
            let batch: Vec<Vec<Step>> = units.by_ref().take(size).collect();
            let results = join_all(batch.into_iter().map(|unit| self.apply_unit(set, key, ns, unit))).await;
            for (created, deleted, result) in results {
                attempted_creates += created;
                attempted_deletes.extend(deleted);
                if let Err(e) = result {
                    failure.get_or_insert(e);
                }
            }
            if failure.is_some() {
                break;
            }
        }
        let Some(e) = failure else { return Ok(()) };
        // Nothing will report the writes that were never made.
        self.expectations
            .lower_expectations(key, creates as i64 - attempted_creates, 0);
        for d in deletes.iter().filter(|d| !attempted_deletes.contains(d)) {
            self.expectations.deletion_observed(key, d);
        }
        Err(e.into())
    }

    /// Applies the steps of one pod in order; returns how many creates and which deletes it
    /// attempted (a failed one already lowered its expectation), and the first error.
    async fn apply_unit(
        &self,
        set: &StatefulSet,
        key: &str,
        ns: &str,
        steps: Vec<Step>,
    ) -> (i64, Vec<String>, Result<(), ClientError>) {
        let mut created = 0;
        let mut deleted = Vec::new();
        for step in steps {
            let result = match &step {
                Step::CreateClaims { pod, claims } => self.create_claims(set, pod, claims).await,
                Step::CreatePod(pod) => {
                    created += 1;
                    let r = self.create_pod(set, pod).await;
                    if r.is_err() {
                        self.expectations.creation_observed(key);
                    }
                    r
                }
                Step::UpdatePod(pod) => self.update_pod(set, pod).await,
                Step::SetClaimOwners {
                    claim,
                    owner_references,
                    ..
                } => self.set_claim_owners(ns, claim, owner_references).await,
                Step::DeletePod { name, .. } => {
                    let pod_key = object_key(Some(ns), name);
                    deleted.push(pod_key.clone());
                    let r = self.delete_pod(set, name).await;
                    if r.is_err() {
                        self.expectations.deletion_observed(key, &pod_key);
                    }
                    r.or_else(|e| if e.is_not_found() { Ok(()) } else { Err(e) })
                }
            };
            if let Err(e) = result {
                return (created, deleted, Err(e));
            }
        }
        (created, deleted, Ok(()))
    }

    /// Upstream `createPersistentVolumeClaims`: each claim, with its event; one that exists
    /// already is fine.
    async fn create_claims(
        &self,
        set: &StatefulSet,
        pod: &str,
        claims: &[PersistentVolumeClaim],
    ) -> Result<(), ClientError> {
        let object = ObjectRef::of(set);
        let set_name = name_of(&set.metadata);
        for claim in claims {
            let claim_name = name_of(&claim.metadata);
            match self
                .claims_api
                .create(set.metadata.namespace.as_deref(), claim)
                .await
            {
                Ok(_) => self.recorder.record(
                    &object,
                    EventType::Normal,
                    "SuccessfulCreate",
                    &format!("create Claim {claim_name} Pod {pod} in StatefulSet {set_name} success"),
                ),
                Err(e) if e.is_already_exists() => {}
                Err(e) => {
                    self.recorder.record(
                        &object,
                        EventType::Warning,
                        "FailedCreate",
                        &format!(
                            "create Claim {claim_name} for Pod {pod} in StatefulSet {set_name} failed error: {}",
                            e.message
                        ),
                    );
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Upstream `recordPodEvent`: `Successful<Verb>` / `Failed<Verb>` with upstream's messages.
    fn record_pod_event(&self, verb: &str, set: &StatefulSet, pod: &str, err: Option<&ClientError>) {
        let object = ObjectRef::of(set);
        let set_name = name_of(&set.metadata);
        let title = format!("{}{}", verb[..1].to_uppercase(), &verb[1..]);
        match err {
            None => self.recorder.record(
                &object,
                EventType::Normal,
                &format!("Successful{title}"),
                &format!("{verb} Pod {pod} in StatefulSet {set_name} successful"),
            ),
            Some(e) => self.recorder.record(
                &object,
                EventType::Warning,
                &format!("Failed{title}"),
                &format!(
                    "{verb} Pod {pod} in StatefulSet {set_name} failed error: {}",
                    e.message
                ),
            ),
        }
    }

    /// Upstream `CreateStatefulPod` (the claims are a step of their own): AlreadyExists gets no
    /// event.
    async fn create_pod(&self, set: &StatefulSet, pod: &Pod) -> Result<(), ClientError> {
        let result = self.pods_api.create(set.metadata.namespace.as_deref(), pod).await;
        let name = name_of(&pod.metadata);
        match &result {
            Err(e) if e.is_already_exists() => {}
            Err(e) => self.record_pod_event("create", set, name, Some(e)),
            Ok(_) => self.record_pod_event("create", set, name, None),
        }
        result.map(drop)
    }

    /// Upstream `UpdateStatefulPod`: writes the repaired pod.
    async fn update_pod(&self, set: &StatefulSet, pod: &Pod) -> Result<(), ClientError> {
        let result = self.pods_api.update(pod).await;
        self.record_pod_event("update", set, name_of(&pod.metadata), result.as_ref().err());
        result.map(drop)
    }

    /// Upstream `DeleteStatefulPod`.
    async fn delete_pod(&self, set: &StatefulSet, name: &str) -> Result<(), ClientError> {
        let result = self
            .pods_api
            .delete(set.metadata.namespace.as_deref(), name)
            .await;
        match &result {
            Err(e) if e.is_not_found() => {}
            other => self.record_pod_event("delete", set, name, other.as_ref().err()),
        }
        result
    }

    /// Upstream `UpdatePodClaimForRetentionPolicy`: the claim's owner references, replaced.
    async fn set_claim_owners(
        &self,
        ns: &str,
        claim: &str,
        owner_references: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference],
    ) -> Result<(), ClientError> {
        let patch = serde_json::json!({"metadata": {"ownerReferences": owner_references}});
        match self
            .claims_api
            .patch(Some(ns), claim, PatchType::Merge, patch)
            .await
        {
            Err(e) if e.is_not_found() => Ok(()),
            other => other.map(drop),
        }
    }

    /// Upstream `updateStatefulSetStatus` + `UpdateStatefulSetStatus`: written only when it
    /// differs; a conflict is retried once on a fresh copy.
    async fn update_status(&self, set: &StatefulSet, status: &StatefulSetStatus) -> Result<(), ClientError> {
        if !inconsistent_status(set, status) {
            return Ok(());
        }
        let mut next = set.clone();
        next.status = Some(status.clone());
        match self.sets_api.update_status(&next).await {
            Err(e) if e.is_conflict() => {
                let mut fresh = self
                    .sets_api
                    .get(set.metadata.namespace.as_deref(), name_of(&set.metadata))
                    .await?;
                fresh.status = Some(status.clone());
                self.sets_api.update_status(&fresh).await.map(drop)
            }
            other => other.map(drop),
        }
    }
}

/// The pod a step is about.
fn pod_of(step: &Step) -> &str {
    match step {
        Step::CreateClaims { pod, .. } | Step::SetClaimOwners { pod, .. } => pod,
        Step::CreatePod(p) | Step::UpdatePod(p) => name_of(&p.metadata),
        Step::DeletePod { name, .. } => name,
    }
}

/// The steps grouped by pod, groups in the order of their first step, steps in plan order.
pub(crate) fn group_by_pod(steps: Vec<Step>) -> Vec<Vec<Step>> {
    let mut groups: Vec<(String, Vec<Step>)> = Vec::new();
    for step in steps {
        let pod = pod_of(&step).to_owned();
        match groups.iter_mut().find(|(p, _)| *p == pod) {
            Some((_, g)) => g.push(step),
            None => groups.push((pod, vec![step])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}
