//! The Job controller's wiring: informer events → work items → workers.
//!
//! Upstream: `pkg/controller/job/job_controller.go` (`NewController`, `Run`, the handlers
//! `addJob`/`updateJob`/`deleteJob`, `addPod`/`updatePod`/`deletePod`, `resolveControllerRef`,
//! `getPodJobs`, `enqueueSyncJobImmediately`/`Batched`/`WithDelay`, `cleanupPodFinalizers`,
//! `enqueueOrphanPod`). The syncs are [`super::sync::JobSync::sync_job`] and
//! [`super::sync::JobSync::sync_orphan_pod`].
//!
//! ```text
//! Job informer ── add, spec change ──────▶ Job key now ───────────────────────────┐
//!              ── status-only update ────▶ Job key after 1 s (batching)            │
//!              ── finished / deleted ────▶ its pods that still have the finalizer  ├─▶ WorkQueue ─▶ workers
//! Pod informer ── add / update / delete ─▶ owner's key after 1 s; expectations,    │
//!                                          finalizer expectations observed          │
//!              ── orphan with finalizer ─▶ OrphanPod key ───────────────────────────┘
//! ```
//!
//! Simplified against upstream: one queue carries both kinds of work ([`WorkItem`]) where upstream
//! has a second queue for orphan pods; no tombstones (the informer always hands over the last known
//! pod); no metrics.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::plan::SYNC_JOB_BATCH_PERIOD;
use super::sync::JobSync;
use super::tracking::{FinalizerExpectations, has_job_tracking_finalizer};
use super::util::{is_job_finished, managed_by_external_controller, spec};
use crate::controller_ref_manager::resolve_controller_ref;
use crate::controller_utils::selector::selector_of;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, ControllerExpectations, Feeds, Informer, ReconcileError, Reconciler, Recorder,
    Store, TracingClient, WorkQueue, get_controller_of, is_controlled_by, key_of,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "job";

/// What a worker does: sync a Job, or take the tracking finalizer off an orphan pod (upstream's
/// `queue` and `orphanQueue`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WorkItem {
    /// `namespace/name` of a Job to sync.
    Job(String),
    /// `namespace/name` of a pod that may still carry the finalizer of a Job that no longer needs it.
    OrphanPod(String),
}

/// The queue the handlers feed.
type Queue = WorkQueue<WorkItem>;

/// Build it with [`JobController::new`] before the informers run, then run it.
pub struct JobController {
    sync: Arc<JobSync>,
    feeds: Feeds<WorkItem>,
}

impl JobController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        jobs: &Informer<Job>,
        pods: &Informer<Pod>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let expectations = ControllerExpectations::new(clock.clone());
        let finalizer_expectations = FinalizerExpectations::default();
        let sync = JobSync::new(
            client,
            clock.clone(),
            recorder,
            expectations.clone(),
            finalizer_expectations.clone(),
            jobs.store(),
            pods.store(),
        );
        let handlers = Arc::new(EventHandlers {
            jobs: jobs.store(),
            pods: pods.store(),
            expectations,
            finalizer_expectations,
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let h = handlers.clone();
        feeds.watch(jobs, move |c, q| h.on_job(c, q));
        feeds.watch(pods, move |c, q| handlers.on_pod(c, q));
        JobController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: handles informer events at once, starts `workers` workers once both
    /// caches have synced, and returns after the workers stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for JobSync {
    type Key = WorkItem;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, item: &WorkItem) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let item = item.clone();
        Box::pin(async move {
            match &item {
                WorkItem::Job(key) => self.sync_job(key).await,
                WorkItem::OrphanPod(key) => self.sync_orphan_pod(key).await,
            }
        })
    }
}

/// The informer event handlers: each maps a change to the work items that must run, and keeps the
/// expectations up to date.
pub struct EventHandlers {
    jobs: Store<Job>,
    pods: Store<Pod>,
    expectations: ControllerExpectations,
    finalizer_expectations: FinalizerExpectations,
}

impl EventHandlers {
    /// Dispatches one Job change.
    pub fn on_job(&self, change: &Change<Job>, queue: &Queue) {
        match change {
            Change::Added(job) => queue.add(WorkItem::Job(key_of(&job.metadata))),
            Change::Updated { old, new } => self.update_job(queue, old, new),
            Change::Deleted(job) => {
                queue.add(WorkItem::Job(key_of(&job.metadata)));
                self.cleanup_pod_finalizers(queue, job);
            }
        }
    }

    /// Dispatches one pod change.
    pub fn on_pod(&self, change: &Change<Pod>, queue: &Queue) {
        match change {
            Change::Added(pod) => self.add_pod(queue, pod),
            Change::Updated { old, new } => self.update_pod(queue, old, new),
            Change::Deleted(pod) => self.delete_pod(queue, pod, true),
        }
    }

    /// Upstream `updateJob`: a spec change syncs at once, a status change after the batch period; a
    /// finished Job's pods lose their finalizers; a changed `activeDeadlineSeconds` is looked at when
    /// it passes.
    fn update_job(&self, queue: &Queue, old: &Job, new: &Job) {
        let key = key_of(&new.metadata);
        if old.metadata.generation == new.metadata.generation {
            queue.add_after(WorkItem::Job(key.clone()), SYNC_JOB_BATCH_PERIOD);
        } else {
            queue.add(WorkItem::Job(key.clone()));
        }
        if is_job_finished(new) {
            self.cleanup_pod_finalizers(queue, new);
        }
        let start = new.status.as_ref().and_then(|s| s.start_time.as_ref());
        let (Some(start), Some(deadline)) = (start, spec(new).active_deadline_seconds) else {
            return;
        };
        if spec(old).active_deadline_seconds != Some(deadline) {
            let Ok(now) = jiff::Timestamp::try_from(queue.clock().now()) else {
                return;
            };
            let passed = now.duration_since(start.0);
            let left = jiff::SignedDuration::from_secs(deadline) - passed;
            queue.add_after(
                WorkItem::Job(key),
                Duration::try_from(left).unwrap_or(Duration::ZERO),
            );
        }
    }

    /// Upstream `cleanupPodFinalizers`: the pods of a finished or deleted Job that still carry the
    /// tracking finalizer are queued for its removal.
    fn cleanup_pod_finalizers(&self, queue: &Queue, job: &Job) {
        let Some(selector) = spec(job).selector.as_ref().map(selector_of) else {
            return;
        };
        let uid = job.metadata.uid.as_deref().unwrap_or("");
        let ns = job.metadata.namespace.as_deref().unwrap_or("");
        for pod in self.pods.by_index(NAMESPACE_INDEX, ns) {
            let matches = selector.matches(&pod.metadata.labels.as_ref());
            if matches && is_controlled_by(&pod.metadata, uid) && has_job_tracking_finalizer(&pod) {
                queue.add(WorkItem::OrphanPod(key_of(&pod.metadata)));
            }
        }
    }

    /// Upstream `addPod`: an owned pod is an observed creation; an orphan wakes every Job that may
    /// adopt it (and loses a leftover finalizer).
    fn add_pod(&self, queue: &Queue, pod: &Pod) {
        if pod.metadata.deletion_timestamp.is_some() {
            // Seen for the first time already deleting: not a creation anyone waits for.
            self.delete_pod(queue, pod, false);
            return;
        }
        if let Some(owner) = get_controller_of(&pod.metadata) {
            if let Some(job) = self.resolve_controller_ref(pod, owner) {
                let key = key_of(&job.metadata);
                self.expectations.creation_observed(&key);
                queue.add_after(WorkItem::Job(key), SYNC_JOB_BATCH_PERIOD);
            }
            return;
        }
        if has_job_tracking_finalizer(pod) {
            queue.add(WorkItem::OrphanPod(key_of(&pod.metadata)));
        }
        for job in self.pod_jobs(pod) {
            queue.add_after(WorkItem::Job(key_of(&job.metadata)), SYNC_JOB_BATCH_PERIOD);
        }
    }

    /// Upstream `updatePod`.
    fn update_pod(&self, queue: &Queue, old: &Pod, new: &Pod) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return; // a resync: nothing changed
        }
        if new.metadata.deletion_timestamp.is_some() {
            // Graceful deletion has begun: act now rather than when the pod is finally gone.
            self.delete_pod(queue, new, false);
            return;
        }
        let finalizer_removed = !has_job_tracking_finalizer(new);
        let old_ref = get_controller_of(&old.metadata);
        let new_ref = get_controller_of(&new.metadata);
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(job) = old_ref.and_then(|r| self.resolve_controller_ref(old, r)) {
            let key = key_of(&job.metadata);
            if finalizer_removed {
                let uid = new.metadata.uid.as_deref().unwrap_or("");
                self.finalizer_expectations.finalizer_removal_observed(&key, uid);
            }
            queue.add_after(WorkItem::Job(key), SYNC_JOB_BATCH_PERIOD);
        }
        if let Some(owner) = new_ref {
            if let Some(job) = self.resolve_controller_ref(new, owner) {
                let key = key_of(&job.metadata);
                if finalizer_removed {
                    let uid = new.metadata.uid.as_deref().unwrap_or("");
                    self.finalizer_expectations.finalizer_removal_observed(&key, uid);
                }
                queue.add_after(WorkItem::Job(key), SYNC_JOB_BATCH_PERIOD);
            }
            return;
        }
        if has_job_tracking_finalizer(new) {
            queue.add(WorkItem::OrphanPod(key_of(&new.metadata)));
        }
        if old.metadata.labels != new.metadata.labels || ref_changed {
            for job in self.pod_jobs(new) {
                queue.add_after(WorkItem::Job(key_of(&job.metadata)), SYNC_JOB_BATCH_PERIOD);
            }
        }
    }

    /// Upstream `deletePod`: the owner observes the deletion (and, when the pod is gone or lost the
    /// finalizer, its removal); a pod of no running Job keeps no finalizer.
    fn delete_pod(&self, queue: &Queue, pod: &Pod, is_final: bool) {
        let has_finalizer = has_job_tracking_finalizer(pod);
        let orphan_item = || WorkItem::OrphanPod(key_of(&pod.metadata));
        let Some(owner) = get_controller_of(&pod.metadata) else {
            if has_finalizer {
                queue.add(orphan_item());
            }
            return;
        };
        let job = self.resolve_controller_ref(pod, owner);
        let Some(job) = job.filter(|j| !is_job_finished(j)) else {
            if has_finalizer {
                queue.add(orphan_item());
            }
            return;
        };
        let key = key_of(&job.metadata);
        self.expectations.deletion_observed(&key);
        if is_final || !has_finalizer {
            let uid = pod.metadata.uid.as_deref().unwrap_or("");
            self.finalizer_expectations.finalizer_removal_observed(&key, uid);
        }
        queue.add_after(WorkItem::Job(key), SYNC_JOB_BATCH_PERIOD);
    }

    /// Upstream `resolveControllerRef`, also checking the API group (`batch`).
    fn resolve_controller_ref(&self, pod: &Pod, owner: &OwnerReference) -> Option<Arc<Job>> {
        if owner.api_version.split('/').next() != Some("batch") {
            return None;
        }
        resolve_controller_ref(&self.jobs, pod.metadata.namespace.as_deref(), owner)
    }

    /// Upstream `getPodJobs`: the Jobs of the pod's namespace whose selector matches it (an empty
    /// selector matches nothing), other controllers' Jobs left out.
    fn pod_jobs(&self, pod: &Pod) -> Vec<Arc<Job>> {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        let labels = pod.metadata.labels.as_ref();
        self.jobs
            .by_index(NAMESPACE_INDEX, ns)
            .into_iter()
            .filter(|job| managed_by_external_controller(job).is_none())
            .filter(|job| {
                spec(job).selector.as_ref().is_some_and(|s| {
                    let selector = selector_of(s);
                    !selector.is_empty() && selector.matches(&labels)
                })
            })
            .collect()
    }
}
