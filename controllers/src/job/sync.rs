//! One Job sync: the async shell around the pure steps of [`super::plan`] and [`super::tracking`].
//!
//! Upstream: `pkg/controller/job/job_controller.go` (`syncJob`, `getPodsForJob`, `manageJob`'s
//! writes, `deleteActivePods`, `deleteJobPods`, `trackJobStatusAndRemoveFinalizers`,
//! `flushUncountedAndRemoveFinalizers`, `removeTrackingFinalizerFromPods`, `recordJobFinished`,
//! `syncOrphanPod`) and `RealPodControl` of `pkg/controller/controller_utils.go` (the events of a
//! create or delete).
//!
//! ```text
//! sync_job(key)
//!   Job gone                → forget expectations and backoff, Done
//!   managed elsewhere, finished, unknown completionMode → Done
//!   satisfied               = creations/deletions all observed
//!   pods                    = claimed (adopted pods get the tracking finalizer)
//!   ctx                     = new_sync_ctx(now); evaluate_finish
//!   finishing               → delete every active pod (finalizers kept: they are counted as failed)
//!   else if satisfied       → manage_job: delete (finalizer first) | wait for backoff | create
//!                             check_completion: SuccessCriteriaMet, Suspended / Resumed
//!   track status            → write uncounted uids and interim condition, remove finalizers,
//!                             move uids to the counters, write Complete / Failed when all counted
//! sync_orphan_pod(key)      → remove the tracking finalizer of a pod no running Job owns
//! ```
//!
//! Simplified against upstream: no metrics; a creation refused because the namespace is
//! terminating counts as a failure; the backoff requeue is the sync's `RequeueAfter` (upstream adds
//! it to the queue from inside `manageJob`), and so is the `activeDeadlineSeconds` requeue; adopted
//! pods get the finalizer with a second patch after the adoption (upstream puts both in one patch).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;
use store::Clock;

use super::backoff::BackoffStore;
use super::controller::NAME;
use super::decisions;
use super::plan::{self, ManagePlan, SyncJobCtx, status_mut};
use super::tracking::{
    self, FinalizerExpectations, JOB_TRACKING_FINALIZER, TrackingPlan,
    clean_uncounted_pods_without_finalizers, has_job_tracking_finalizer, remove_tracking_finalizer_patch,
};
use super::util::{is_job_finished, managed_by_external_controller, spec};
use crate::controller_ref_manager::{ControllerRefManager, resolve_controller_ref};
use crate::controller_utils::pods::is_pod_ready;
use crate::controller_utils::selector::selector_of;
use crate::controller_utils::slow_start::{SLOW_START_INITIAL_BATCH_SIZE, slow_start_batches};
use crate::runtime::client::{Client, ClientError, PatchType, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{
    Action, ControllerExpectations, ReconcileError, clock_now, decision, get_controller_of, split_key,
};

/// Event reason of a created pod (upstream `SuccessfulCreatePodReason`).
pub const SUCCESSFUL_CREATE: &str = "SuccessfulCreate";
/// Event reason of a failed create (upstream `FailedCreatePodReason`).
pub const FAILED_CREATE: &str = "FailedCreate";
/// Event reason of a deleted pod (upstream `SuccessfulDeletePodReason`).
pub const SUCCESSFUL_DELETE: &str = "SuccessfulDelete";
/// Event reason of a failed delete (upstream `FailedDeletePodReason`).
pub const FAILED_DELETE: &str = "FailedDelete";

/// Everything one sync reads and writes.
pub struct JobSync {
    /// Job calls (status writes, the pre-adoption GET).
    jobs_api: Typed<Job>,
    /// Pod calls (create, patch, delete).
    pods_api: Typed<Pod>,
    jobs: Store<Job>,
    pods: Store<Pod>,
    /// Pod creations and deletions not yet seen in the cache, per Job key.
    expectations: ControllerExpectations,
    /// Finalizer removals not yet seen in the cache, per Job key.
    finalizer_expectations: FinalizerExpectations,
    /// Failures since the last success, per Job key (the pod-creation backoff).
    backoff: BackoffStore,
    /// Events on the Job.
    recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    clock: Clock,
}

impl JobSync {
    /// A syncer reading the given caches, writing through `client`, sharing the expectations with the
    /// event handlers.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        expectations: ControllerExpectations,
        finalizer_expectations: FinalizerExpectations,
        jobs: Store<Job>,
        pods: Store<Pod>,
    ) -> Self {
        JobSync {
            jobs_api: Typed::new(client.clone()),
            pods_api: Typed::new(client),
            jobs,
            pods,
            expectations,
            finalizer_expectations,
            backoff: BackoffStore::default(),
            recorder,
            clock,
        }
    }

    /// Upstream `syncJob`: brings the Job named by `key` one step closer to finished, and writes its
    /// status.
    pub async fn sync_job(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(shared) = self.jobs.get(ns, name) else {
            self.expectations.delete_expectations(key);
            self.finalizer_expectations.delete_expectations(key);
            self.backoff.remove(key);
            return Ok(Action::Done);
        };
        if managed_by_external_controller(&shared).is_some() {
            return Ok(Action::Done);
        }
        if is_job_finished(&shared) {
            self.backoff.remove(key);
            return Ok(Action::Done);
        }
        if let Some(mode) = spec(&shared).completion_mode.as_deref()
            && mode != "NonIndexed"
            && mode != "Indexed"
        {
            let message = "Skipped Job sync because completion mode is unknown";
            self.recorder.record(
                &ObjectRef::of(shared.as_ref()),
                EventType::Warning,
                "UnknownCompletionMode",
                message,
            );
            return Ok(Action::Done);
        }
        let satisfied = self.expectations.satisfied(key);
        let pods = self.get_pods_for_job(&shared).await?;
        let now = clock_now(&self.clock)?;
        let expected_rm = self.finalizer_expectations.expected_uids(key);
        let mut ctx = plan::new_sync_ctx(&shared, pods, expected_rm, self.backoff.get(key), now);
        let mut requeue = plan::evaluate_finish(&mut ctx, now);
        let mut manage_err: Option<ClientError> = None;
        let mut suspend_changed = false;
        if ctx.finished_condition.is_some() {
            let active = ctx.active;
            self.decide_deleting_finished(&ctx);
            let (deleted_ready, deleted, err) = self.delete_active_pods(&ctx.job, &ctx.active_pods).await;
            if deleted != active || !satisfied {
                // Pods may remain, or be in flight: finish in a later sync.
                ctx.finished_condition = None;
            }
            ctx.active -= deleted;
            ctx.terminating += deleted;
            ctx.ready -= deleted_ready;
            manage_err = err;
        } else {
            let mut manage_job_called = false;
            if satisfied && ctx.job.metadata.deletion_timestamp.is_none() {
                match self.manage_job(key, &mut ctx, now).await {
                    Ok(after) => requeue = earliest(requeue, after),
                    Err(e) => manage_err = Some(e),
                }
                manage_job_called = true;
            }
            let check = plan::check_completion(&mut ctx, manage_job_called, now);
            if let Some((reason, message)) = check.event {
                self.recorder
                    .record(&ObjectRef::of(&ctx.job), EventType::Normal, reason, message);
            }
            suspend_changed = check.suspend_changed;
        }
        let old = shared.status.clone().unwrap_or_default();
        let needs_status_update = suspend_changed
            || ctx.active != old.active.unwrap_or(0)
            || Some(ctx.ready) != old.ready
            || Some(ctx.terminating) != old.terminating;
        let (active, ready, terminating) = (ctx.active, ctx.ready, ctx.terminating);
        let status = status_mut(&mut ctx.job);
        status.active = (active != 0).then_some(active);
        status.ready = Some(ready);
        status.terminating = Some(terminating);
        self.track_job_status_and_remove_finalizers(key, &mut ctx, needs_status_update, now)
            .await?;
        if let Some(e) = manage_err {
            return Err(e.into());
        }
        Ok(requeue.map_or(Action::Done, Action::RequeueAfter))
    }

    /// Upstream `getPodsForJob`: every pod of the namespace the Job controls after claiming; adopted
    /// pods get the tracking finalizer.
    async fn get_pods_for_job(&self, job: &Job) -> Result<Vec<Arc<Pod>>, ReconcileError> {
        let Some(selector) = spec(job).selector.as_ref().map(selector_of) else {
            let key = crate::runtime::key_of(&job.metadata);
            return Err(ReconcileError::terminal(format!("job {key} has no selector")));
        };
        let ns = job.metadata.namespace.as_deref().unwrap_or("");
        let candidates = self.pods.by_index(NAMESPACE_INDEX, ns);
        let orphans: HashSet<String> = candidates
            .iter()
            .filter(|p| get_controller_of(&p.metadata).is_none())
            .filter_map(|p| p.metadata.uid.clone())
            .collect();
        let owned = ControllerRefManager::new(job, &selector, &self.jobs_api, &self.pods_api)
            .claim(&candidates)
            .await?;
        let mut pods = Vec::with_capacity(owned.len());
        for pod in owned {
            let adopted = pod.metadata.uid.as_ref().is_some_and(|u| orphans.contains(u));
            if adopted && !has_job_tracking_finalizer(&pod) {
                match self.add_tracking_finalizer(&pod).await {
                    Ok(with) => pods.push(Arc::new(with)),
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e.into()),
                }
            } else {
                pods.push(pod);
            }
        }
        Ok(pods)
    }

    /// Adds the tracking finalizer to an adopted pod (a merge patch, guarded by its resourceVersion).
    async fn add_tracking_finalizer(&self, pod: &Pod) -> Result<Pod, ClientError> {
        let mut finalizers = pod.metadata.finalizers.clone().unwrap_or_default();
        finalizers.push(JOB_TRACKING_FINALIZER.to_string());
        let patch = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": pod.metadata.resource_version,
        }});
        let name = pod.metadata.name.as_deref().unwrap_or("");
        self.pods_api
            .patch(pod.metadata.namespace.as_deref(), name, PatchType::Merge, patch)
            .await
    }

    // ---------------------------------------------------------------------------
    // manageJob
    // ---------------------------------------------------------------------------

    /// Upstream `manageJob`: applies [`plan::manage_job`] and updates the counts in `ctx`. Returns
    /// when to look again (a running backoff).
    async fn manage_job(
        &self,
        key: &str,
        ctx: &mut SyncJobCtx,
        now: Timestamp,
    ) -> Result<Option<Duration>, ClientError> {
        let plan = match plan::manage_job(ctx, now) {
            Ok(plan) => plan,
            Err(e) => {
                let message = format!("Error creating: {e}");
                self.recorder.record(
                    &ObjectRef::of(&ctx.job),
                    EventType::Warning,
                    FAILED_CREATE,
                    &message,
                );
                return Err(ClientError::new(422, "Invalid", e.to_string()));
            }
        };
        decision::record(&self.clock, NAME, &ctx.job, || decisions::manage(ctx, &plan));
        match plan {
            ManagePlan::Nothing => Ok(None),
            ManagePlan::Backoff(after) => {
                // As upstream, the sync that waits reports no active pods.
                ctx.active = 0;
                Ok(Some(after))
            }
            ManagePlan::Delete(pods) => {
                self.expectations.expect_deletions(key, pods.len() as i64);
                let (removed_ready, removed, err) = self.delete_job_pods(key, &ctx.job, &pods).await;
                ctx.active -= removed;
                ctx.terminating += removed;
                ctx.ready -= removed_ready;
                err.map_or(Ok(None), Err)
            }
            ManagePlan::Create(pods) => {
                let (created, err) = self.create_pods(key, &ctx.job, &pods).await;
                ctx.active += created;
                err.map_or(Ok(None), Err)
            }
        }
    }

    /// Creates `pods` in slow-start batches, expecting each first; a failed or skipped creation is
    /// taken off the expectations. Returns how many were created and the first error.
    async fn create_pods(&self, key: &str, job: &Job, pods: &[Pod]) -> (i32, Option<ClientError>) {
        self.expectations.expect_creations(key, pods.len() as i64);
        let mut created = 0;
        let mut rest = pods;
        for batch in slow_start_batches(pods.len(), SLOW_START_INITIAL_BATCH_SIZE) {
            let (now, later) = rest.split_at(batch.min(rest.len()));
            rest = later;
            let results = join_all(now.iter().map(|p| self.create_pod(job, p))).await;
            let mut first_error = None;
            for result in results {
                match result {
                    Ok(()) => created += 1,
                    Err(e) => {
                        self.expectations.creation_observed(key);
                        first_error.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = first_error {
                self.expectations.lower_expectations(key, rest.len() as i64, 0);
                return (created, Some(e));
            }
        }
        (created, None)
    }

    /// Upstream `RealPodControl.CreatePodsWithGenerateName`: one create, with its event.
    async fn create_pod(&self, job: &Job, pod: &Pod) -> Result<(), ClientError> {
        let object = ObjectRef::of(job);
        match self.pods_api.create(job.metadata.namespace.as_deref(), pod).await {
            Ok(created) => {
                let name = created.metadata.name.as_deref().unwrap_or("");
                self.recorder.record(
                    &object,
                    EventType::Normal,
                    SUCCESSFUL_CREATE,
                    &format!("Created pod: {name}"),
                );
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

    /// Upstream `deleteJobPods`: removes the tracking finalizer, then deletes, each pod; a pod whose
    /// finalizer is gone this way is never counted. Returns the ready pods and all pods removed, and
    /// the first error (NotFound is not one).
    async fn delete_job_pods(
        &self,
        key: &str,
        job: &Job,
        pods: &[Arc<Pod>],
    ) -> (i32, i32, Option<ClientError>) {
        let results = join_all(pods.iter().map(|p| async move {
            if let Some(patch) = remove_tracking_finalizer_patch(p) {
                self.patch_pod(p, patch).await?;
            }
            self.delete_pod(job, p).await
        }))
        .await;
        let (mut ready, mut removed, mut first_error) = (0, 0, None);
        for (pod, result) in pods.iter().zip(results) {
            match result {
                Ok(()) => removed += 1,
                Err(e) => {
                    self.expectations.deletion_observed(key);
                    if e.is_not_found() {
                        removed += 1;
                    } else {
                        first_error.get_or_insert(e);
                        continue;
                    }
                }
            }
            if is_pod_ready(pod) {
                ready += 1;
            }
        }
        (ready, removed, first_error)
    }

    /// Upstream `deleteActivePods`: deletes the active pods of a finishing Job, keeping their
    /// finalizers (they are counted as failed first). Same return values as [`Self::delete_job_pods`].
    async fn delete_active_pods(&self, job: &Job, pods: &[Arc<Pod>]) -> (i32, i32, Option<ClientError>) {
        let results = join_all(pods.iter().map(|p| self.delete_pod(job, p))).await;
        let (mut ready, mut removed, mut first_error) = (0, 0, None);
        for (pod, result) in pods.iter().zip(results) {
            match result {
                Err(e) if !e.is_not_found() => {
                    first_error.get_or_insert(e);
                }
                _ => removed += 1,
            }
            if is_pod_ready(pod) {
                ready += 1;
            }
        }
        (ready, removed, first_error)
    }

    /// Upstream `RealPodControl.DeletePod`: one delete, with its event (none when already gone).
    async fn delete_pod(&self, job: &Job, pod: &Pod) -> Result<(), ClientError> {
        let object = ObjectRef::of(job);
        let name = pod.metadata.name.as_deref().unwrap_or("");
        match self
            .pods_api
            .delete(pod.metadata.namespace.as_deref(), name)
            .await
        {
            Ok(()) => {
                let message = format!("Deleted pod: {name}");
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

    async fn patch_pod(&self, pod: &Pod, patch: serde_json::Value) -> Result<Pod, ClientError> {
        let name = pod.metadata.name.as_deref().unwrap_or("");
        self.pods_api
            .patch(
                pod.metadata.namespace.as_deref(),
                name,
                PatchType::Strategic,
                patch,
            )
            .await
    }

    // ---------------------------------------------------------------------------
    // trackJobStatusAndRemoveFinalizers
    // ---------------------------------------------------------------------------

    /// Upstream `trackJobStatusAndRemoveFinalizers` and `flushUncountedAndRemoveFinalizers`: the
    /// three steps of [`super::tracking`], then the final condition and its event.
    async fn track_job_status_and_remove_finalizers(
        &self,
        key: &str,
        ctx: &mut SyncJobCtx,
        needs_flush: bool,
        now: Timestamp,
    ) -> Result<(), ReconcileError> {
        let TrackingPlan {
            pods_to_remove_finalizer,
            mut uids_with_finalizer,
            reached_max_uncounted_pods,
            mut needs_flush,
        } = tracking::plan_tracking(ctx, needs_flush, now);
        if needs_flush {
            ctx.job = self.jobs_api.update_status(&ctx.job).await?;
            self.backoff.update(key, ctx.new_backoff_record);
            needs_flush = false;
        }
        let mut rm_err = None;
        if !pods_to_remove_finalizer.is_empty() {
            let (removed, err) = self
                .remove_tracking_finalizer_from_pods(key, &pods_to_remove_finalizer)
                .await;
            for (pod, ok) in pods_to_remove_finalizer.iter().zip(removed) {
                if ok && let Some(uid) = &pod.metadata.uid {
                    uids_with_finalizer.remove(uid);
                }
            }
            rm_err = err;
        }
        if clean_uncounted_pods_without_finalizers(status_mut(&mut ctx.job), &uids_with_finalizer) {
            needs_flush = true;
        }
        if let Some(e) = rm_err {
            if needs_flush {
                self.jobs_api.update_status(&ctx.job).await?;
            }
            return Err(e.into());
        }
        let finished = !reached_max_uncounted_pods && tracking::enact_job_finished(ctx, now);
        if finished || needs_flush {
            ctx.job = self.jobs_api.update_status(&ctx.job).await?;
            if finished {
                self.record_job_finished(ctx);
            }
        }
        Ok(())
    }

    /// Upstream `removeTrackingFinalizerFromPods`: expects every removal first, then patches the pods
    /// concurrently. Returns, per pod, whether the finalizer is gone (a pod already deleted counts),
    /// and the first error.
    async fn remove_tracking_finalizer_from_pods(
        &self,
        key: &str,
        pods: &[Arc<Pod>],
    ) -> (Vec<bool>, Option<ClientError>) {
        let uids = pods.iter().filter_map(|p| p.metadata.uid.clone());
        self.finalizer_expectations.expect_finalizers_removed(key, uids);
        let results = join_all(pods.iter().map(|p| async move {
            match remove_tracking_finalizer_patch(p) {
                Some(patch) => self.patch_pod(p, patch).await.map(|_| true),
                None => Ok(false),
            }
        }))
        .await;
        let mut removed = Vec::with_capacity(pods.len());
        let mut first_error = None;
        for (pod, result) in pods.iter().zip(results) {
            match result {
                Ok(ok) => removed.push(ok),
                Err(e) => {
                    let uid = pod.metadata.uid.as_deref().unwrap_or("");
                    self.finalizer_expectations.finalizer_removal_observed(key, uid);
                    removed.push(e.is_not_found());
                    if !e.is_not_found() {
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        (removed, first_error)
    }

    /// Records that a finishing Job's active pods are deleted (upstream `syncJob`'s
    /// `deleteActivePods`); nothing when none is active.
    fn decide_deleting_finished(&self, ctx: &SyncJobCtx) {
        let Some(condition) = &ctx.finished_condition else {
            return;
        };
        if ctx.active_pods.is_empty() {
            return;
        }
        decision::record(&self.clock, NAME, &ctx.job, || {
            let names: Vec<String> = ctx
                .active_pods
                .iter()
                .map(|p| p.metadata.name.clone().unwrap_or_default())
                .collect();
            let reason = condition.reason.as_deref().unwrap_or("");
            [decisions::deleting_finished(reason, &names)]
        });
    }

    /// Upstream `recordJobFinished`: `Completed` (and `TooManySucceededPods`), or the failure reason.
    fn record_job_finished(&self, ctx: &SyncJobCtx) {
        let Some(finished) = &ctx.finished_condition else {
            return;
        };
        decision::record(&self.clock, NAME, &ctx.job, || {
            [decisions::finished(ctx, finished)]
        });
        let object = ObjectRef::of(&ctx.job);
        if finished.type_ == super::util::COMPLETE {
            if tracking::too_many_succeeded(ctx) {
                let message = "Too many succeeded pods running after completion count reached";
                self.recorder
                    .record(&object, EventType::Warning, "TooManySucceededPods", message);
            }
            self.recorder
                .record(&object, EventType::Normal, "Completed", "Job completed");
        } else {
            let reason = finished.reason.as_deref().unwrap_or("");
            let message = finished.message.as_deref().unwrap_or("");
            self.recorder.record(&object, EventType::Warning, reason, message);
        }
    }

    // ---------------------------------------------------------------------------
    // syncOrphanPod
    // ---------------------------------------------------------------------------

    /// Upstream `syncOrphanPod`: removes the tracking finalizer of a pod that no unfinished Job of
    /// this controller owns any more.
    pub async fn sync_orphan_pod(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(pod) = self.pods.get(ns, name) else {
            return Ok(Action::Done);
        };
        if let Some(owner) = get_controller_of(&pod.metadata) {
            if owner.kind != "Job" || owner.api_version != "batch/v1" {
                return Ok(Action::Done);
            }
            if let Some(job) = resolve_controller_ref(&self.jobs, ns, owner)
                && (managed_by_external_controller(&job).is_some() || !is_job_finished(&job))
            {
                return Ok(Action::Done);
            }
        }
        if let Some(patch) = remove_tracking_finalizer_patch(&pod) {
            match self.patch_pod(&pod, patch).await {
                Err(e) if !e.is_not_found() => return Err(e.into()),
                _ => {}
            }
        }
        Ok(Action::Done)
    }
}

fn earliest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
