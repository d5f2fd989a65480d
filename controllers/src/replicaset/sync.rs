//! One ReplicaSet sync: the thin async shell around the pure planner.
//!
//! Upstream: `pkg/controller/replicaset/replica_set.go` (`syncReplicaSet`,
//! `manageReplicas`, `claimPods`, `slowStartBatch`, `updateReplicaSetStatus`
//! in `replica_set_utils.go`) and `RealPodControl` of
//! `pkg/controller/controller_utils.go` (the events of a create or delete).
//!
//! ```text
//! sync_replica_set(key)
//!   RS not in cache        → forget its expectations, Done
//!   needs_sync             = expectations satisfied
//!   pods                   = active pods of the namespace (cache), claimed
//!                            (ControllerRefManager: keep, adopt, release)
//!   needs_sync && !deleting → manage_replicas: plan_replicas → create (slow start) | delete
//!   status                 = calculate_status; written only when it changed
//!   manage failed          → Err (retried with backoff)
//!   all ready, not yet all available → RequeueAfter(minReadySeconds)
//! ```
//!
//! Lessons ([`crate::runtime::lessons`]) can switch off the expectations (every sync manages
//! replicas), the deletion ranking (the oldest pods go first) and the ControllerRef check (every
//! matching pod is taken).
//!
//! Simplified against upstream:
//! * Pods are read from the informer's namespace index, not a lister.
//! * Claiming is [`crate::controller_ref_manager`]'s, with its simplifications.
//! * The `NamespaceTerminating` status cause of a failed create is not
//!   special-cased: such a create counts as a failure and gets an event.
//! * Template errors (no labels, bad controllerRef) fail the whole create step
//!   at once instead of once per pod.
//! * A failed status write is retried once after a fresh GET, as upstream
//!   (`statusUpdateRetries = 1`), but only on a conflict.

use std::sync::Arc;

use futures::future::join_all;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetStatus};
use k8s_openapi::api::core::v1::Pod;
use store::Clock;

use super::controller::NAME;
use super::plan::{self, BURST_REPLICAS, DeletionOrder, PodRef, ReplicasPlan};
use super::status;
use crate::controller_ref_manager::{ClaimMode, ControllerRefManager};
use crate::controller_utils::pods::is_pod_active;
use crate::controller_utils::selector::selector_of;
use crate::controller_utils::slow_start::{SLOW_START_INITIAL_BATCH_SIZE, slow_start_batches};
use crate::controller_utils::template::pod_from_template;
use crate::runtime::client::{Client, ClientError, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::lessons::Lessons;
use crate::runtime::{
    Action, ReconcileError, UidTrackingControllerExpectations, clock_now, journal_ref, new_controller_ref,
    split_key,
};

/// Event reason of a created pod (upstream `SuccessfulCreatePodReason`).
pub const SUCCESSFUL_CREATE: &str = "SuccessfulCreate";
/// Event reason of a failed create (upstream `FailedCreatePodReason`).
pub const FAILED_CREATE: &str = "FailedCreate";
/// Event reason of a deleted pod (upstream `SuccessfulDeletePodReason`).
pub const SUCCESSFUL_DELETE: &str = "SuccessfulDelete";
/// Event reason of a failed delete (upstream `FailedDeletePodReason`).
pub const FAILED_DELETE: &str = "FailedDelete";

/// Everything one sync reads and writes: the caches, the API, the
/// expectations shared with the event handlers, and the event recorder.
pub struct ReplicaSetSync {
    /// ReplicaSet calls (status writes, the pre-adoption GET).
    replicasets_api: Typed<ReplicaSet>,
    /// Pod calls (create, patch, delete).
    pods_api: Typed<Pod>,
    replicasets: Store<ReplicaSet>,
    pods: Store<Pod>,
    /// Creations and deletions not yet seen in the pod cache, per RS key.
    expectations: UidTrackingControllerExpectations,
    /// Events on the ReplicaSet (`SuccessfulCreate`, ...).
    recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    clock: Clock,
    /// At most this many creations or deletions per sync (upstream `burstReplicas`).
    burst_replicas: usize,
    /// Which pods a scale-down deletes first (upstream's ranking, unless a lesson switched it off).
    deletion_order: DeletionOrder,
    /// What the claim counts as owned (the ControllerRef, unless a lesson switched it off).
    claim_mode: ClaimMode,
}

impl ReplicaSetSync {
    /// A syncer reading the given caches, writing through `client`, and sharing `expectations`
    /// with the event handlers.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        expectations: UidTrackingControllerExpectations,
        replicasets: Store<ReplicaSet>,
        pods: Store<Pod>,
    ) -> Self {
        ReplicaSetSync {
            replicasets_api: Typed::new(client.clone()),
            pods_api: Typed::new(client),
            replicasets,
            pods,
            expectations,
            recorder,
            clock,
            burst_replicas: BURST_REPLICAS,
            deletion_order: DeletionOrder::Ranked,
            claim_mode: ClaimMode::ControllerRef,
        }
    }

    /// The same syncer with the deletion ranking or the ControllerRef check switched off as
    /// `lessons` says (`--disable pod-deletion-ranking`, `--disable controller-ref-claim`).
    /// Expectations are switched off where they are made ([`UidTrackingControllerExpectations::disabled`]).
    pub fn with_lessons(mut self, lessons: &Lessons) -> Self {
        self.deletion_order = match lessons.disable_pod_deletion_ranking {
            true => DeletionOrder::OldestFirst,
            false => DeletionOrder::Ranked,
        };
        self.claim_mode = ClaimMode::of(lessons.disable_controller_ref_claim);
        self
    }

    /// The expectations this sync raises and the event handlers lower.
    pub fn expectations(&self) -> &UidTrackingControllerExpectations {
        &self.expectations
    }
}

impl ReplicaSetSync {
    /// Upstream `syncReplicaSet`: brings the ReplicaSet named by `key`
    /// (`namespace/name`) to its desired number of pods and reports its status.
    pub async fn sync_replica_set(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(rs) = self.replicasets.get(ns, name) else {
            self.expectations.delete_expectations(key);
            return Ok(Action::Done);
        };
        let needs_sync = self.expectations.satisfied(key);
        let Some(selector) = rs.spec.as_ref().map(|s| selector_of(&s.selector)) else {
            return Err(ReconcileError::terminal(format!("replicaset {key} has no spec")));
        };
        let active: Vec<Arc<Pod>> = self
            .pods
            .by_index(NAMESPACE_INDEX, ns.unwrap_or(""))
            .into_iter()
            .filter(|p| is_pod_active(p))
            .collect();
        let owned = ControllerRefManager::new(rs.as_ref(), &selector, &self.replicasets_api, &self.pods_api)
            .with_mode(self.claim_mode)
            .journal(&self.clock)
            .claim(&active)
            .await?;
        let now = clock_now(&self.clock)?;
        if !needs_sync {
            self.decide_waiting(&rs, key);
        }
        let manage = if needs_sync && rs.metadata.deletion_timestamp.is_none() {
            self.manage_replicas(&rs, key, &owned, now).await
        } else {
            Ok(())
        };
        let manage_err = manage.as_ref().err().map(ToString::to_string);
        let new_status = status::calculate_status(&rs, &owned, manage_err.as_deref(), now);
        let written = self.update_status(&rs, new_status).await?;
        manage?;
        Ok(match status::availability_requeue_after(&rs, &written, true) {
            Some(after) => Action::RequeueAfter(after),
            None => Action::Done,
        })
    }

    // ---------------------------------------------------------------------------
    // manageReplicas
    // ---------------------------------------------------------------------------

    /// Upstream `manageReplicas`: plan, then create or delete.
    async fn manage_replicas(
        &self,
        rs: &ReplicaSet,
        key: &str,
        owned: &[Arc<Pod>],
        now: Timestamp,
    ) -> Result<(), ClientError> {
        let related = self.related_pods(rs, owned.len());
        let order = self.deletion_order;
        let planned = plan::plan_replicas_in_order(rs, owned, &related, now, self.burst_replicas, order);
        self.decide_manage(rs, owned, &related, now, &planned);
        match planned {
            ReplicasPlan::Nothing => Ok(()),
            ReplicasPlan::Create { count } => self.create_pods(rs, key, count).await,
            ReplicasPlan::Delete { pods } => self.delete_pods(rs, key, &pods).await,
        }
    }

    /// Records the `manageReplicas` decision in the causal journal: the diff, and which pods go
    /// and why (the ranking rule) or how the creations are batched.
    fn decide_manage(
        &self,
        rs: &ReplicaSet,
        owned: &[Arc<Pod>],
        related: &[Pod],
        now: Timestamp,
        planned: &ReplicasPlan,
    ) {
        let (have, want) = (owned.len(), plan::desired_replicas(rs));
        let message = || match planned {
            ReplicasPlan::Nothing => String::new(),
            ReplicasPlan::Create { count } => {
                let batches: Vec<String> = slow_start_batches(*count, SLOW_START_INITIAL_BATCH_SIZE)
                    .into_iter()
                    .map(|b| b.to_string())
                    .collect();
                format!(
                    "diff +{} ({have} active pods, spec.replicas {want}): creating {count} in slow-start batches of {}",
                    want - have,
                    batches.join(", ")
                )
            }
            ReplicasPlan::Delete { pods } => {
                let names: Vec<&str> = pods.iter().map(|p| p.name.as_str()).collect();
                let why = match self.deletion_order {
                    DeletionOrder::Ranked => plan::deletion_reason(owned, related, pods.len(), now),
                    DeletionOrder::OldestFirst => "oldest first: the ranking is switched off".to_string(),
                };
                format!(
                    "diff −{} ({have} active pods, spec.replicas {want}): deleting {} ({why})",
                    have - want,
                    names.join(", ")
                )
            }
        };
        if *planned != ReplicasPlan::Nothing {
            self.clock
                .decide(NAME, "manageReplicas", Some(journal_ref(rs)), message);
        }
    }

    /// Records that expectations hold this sync back (upstream `syncReplicaSet` skips
    /// `manageReplicas` until the informer has shown the last creations and deletions).
    fn decide_waiting(&self, rs: &ReplicaSet, key: &str) {
        let pending = self.expectations.counts().get(key);
        let (add, del) = pending.map_or((0, 0), |e| (e.add.max(0), e.del.max(0)));
        self.clock.decide(NAME, "syncReplicaSet", Some(journal_ref(rs)), || {
            format!(
                "expectations not satisfied: waiting to see {add} creations and {del} deletions in the pod cache before managing replicas again"
            )
        });
    }

    /// The pods of the sibling ReplicaSets, for ranking a scale-down; empty when
    /// nothing will be deleted.
    fn related_pods(&self, rs: &ReplicaSet, owned: usize) -> Vec<Pod> {
        if owned <= plan::desired_replicas(rs) {
            return Vec::new();
        }
        let ns = rs.metadata.namespace.as_deref().unwrap_or("");
        let siblings = self.replicasets.by_index(NAMESPACE_INDEX, ns);
        let pods = self.pods.by_index(NAMESPACE_INDEX, ns);
        plan::indirectly_related_pods(rs, &siblings, &pods)
            .into_iter()
            .cloned()
            .collect()
    }

    /// Creates `count` pods in slow-start batches (1, 2, 4, ...). The
    /// expectations are raised for all of them first; every creation that did
    /// not succeed (failed, or skipped after a failed batch) is taken off again,
    /// since no informer event will ever report it.
    async fn create_pods(&self, rs: &ReplicaSet, key: &str, count: usize) -> Result<(), ClientError> {
        self.expectations.expect_creations(key, count as i64);
        let result = self.create_in_batches(rs, count).await;
        let created = match &result {
            Ok(()) => count,
            Err((created, _)) => *created,
        };
        let skipped = count - created;
        if skipped > 0 {
            tracing::debug!(key, skipped, "slow-start failure; lowering creation expectations");
            self.expectations.lower_expectations(key, skipped as i64, 0);
        }
        result.map_err(|(_, e)| e)
    }

    /// Upstream `slowStartBatch`: issues the batches one after another, each
    /// batch concurrently, and stops after the first batch with a failure.
    /// On failure returns how many pods were created, and the first error.
    async fn create_in_batches(&self, rs: &ReplicaSet, count: usize) -> Result<(), (usize, ClientError)> {
        let template = rs.spec.as_ref().and_then(|s| s.template.as_ref());
        let pod = template
            .ok_or_else(|| "replicaset has no pod template".to_string())
            .and_then(|t| {
                pod_from_template(
                    t,
                    &rs.metadata,
                    new_controller_ref(&rs.metadata, "apps/v1", "ReplicaSet"),
                )
                .map_err(|e| e.to_string())
            })
            .map_err(|message| (0, ClientError::new(422, "Invalid", message)))?;
        let mut created = 0;
        for batch in slow_start_batches(count, SLOW_START_INITIAL_BATCH_SIZE) {
            let results = join_all((0..batch).map(|_| self.create_pod(rs, &pod))).await;
            created += results.iter().filter(|r| r.is_ok()).count();
            if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
                return Err((created, e));
            }
        }
        Ok(())
    }

    /// Upstream `RealPodControl.CreatePods`: one create, with its event.
    async fn create_pod(&self, rs: &ReplicaSet, pod: &Pod) -> Result<(), ClientError> {
        let object = ObjectRef::of(rs);
        match self.pods_api.create(rs.metadata.namespace.as_deref(), pod).await {
            Ok(created) => {
                let name = created.metadata.name.as_deref().unwrap_or("");
                let message = format!("Created pod: {name}");
                self.recorder
                    .record(&object, EventType::Normal, SUCCESSFUL_CREATE, &message);
                Ok(())
            }
            Err(e) => {
                let message = format!("Error creating: {}", e.message);
                self.recorder
                    .record(&object, EventType::Warning, FAILED_CREATE, &message);
                Err(e)
            }
        }
    }

    /// Deletes `pods` concurrently, expecting each to disappear first. A failed
    /// delete lowers the expectations; NotFound is not a failure. Returns the
    /// first real error.
    async fn delete_pods(&self, rs: &ReplicaSet, key: &str, pods: &[PodRef]) -> Result<(), ClientError> {
        let keys: Vec<String> = pods.iter().map(PodRef::key).collect();
        self.expectations.expect_deletions(key, &keys);
        let results = join_all(pods.iter().map(|p| self.delete_pod(rs, p))).await;
        let mut first_error = None;
        for (pod, result) in pods.iter().zip(results) {
            if let Err(e) = result {
                self.expectations.deletion_observed(key, &pod.key());
                if !e.is_not_found() && first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Upstream `RealPodControl.DeletePod`: one delete, with its event (none when
    /// the pod was already gone).
    async fn delete_pod(&self, rs: &ReplicaSet, pod: &PodRef) -> Result<(), ClientError> {
        let object = ObjectRef::of(rs);
        match self.pods_api.delete(Some(&pod.namespace), &pod.name).await {
            Ok(()) => {
                let message = format!("Deleted pod: {}", pod.name);
                self.recorder
                    .record(&object, EventType::Normal, SUCCESSFUL_DELETE, &message);
                Ok(())
            }
            Err(e) if e.is_not_found() => Err(e),
            Err(e) => {
                let message = format!("Error deleting: {}", e.message);
                self.recorder
                    .record(&object, EventType::Warning, FAILED_DELETE, &message);
                Err(e)
            }
        }
    }

    // ---------------------------------------------------------------------------
    // Status (replica_set_utils.go updateReplicaSetStatus)
    // ---------------------------------------------------------------------------

    /// Writes `new_status` unless nothing changed; returns the status the
    /// ReplicaSet now has. A conflict is retried once on a fresh copy.
    async fn update_status(
        &self,
        rs: &ReplicaSet,
        new_status: ReplicaSetStatus,
    ) -> Result<ReplicaSetStatus, ClientError> {
        if !status::status_needs_update(rs, &new_status) {
            return Ok(new_status);
        }
        let mut next = rs.clone();
        next.status = Some(new_status.clone());
        match self.replicasets_api.update_status(&next).await {
            Err(e) if e.is_conflict() => {
                let meta = &rs.metadata;
                let name = meta.name.as_deref().unwrap_or("");
                let mut fresh = self.replicasets_api.get(meta.namespace.as_deref(), name).await?;
                fresh.status = Some(new_status);
                let written = self.replicasets_api.update_status(&fresh).await?;
                Ok(written.status.unwrap_or_default())
            }
            other => Ok(other?.status.unwrap_or_default()),
        }
    }
}
