//! The CronJob controller's wiring: informer events → keys → workers.
//!
//! Upstream: `pkg/controller/cronjob/cronjob_controllerv2.go` (`NewControllerV2`, `Run`,
//! `addJob` / `updateJob` / `deleteJob`, `updateCronJob`, `resolveControllerRef`). The sync
//! itself is [`super::sync::CronJobSync::sync_cronjob`].
//!
//! ```text
//! CronJob informer ── add / delete ──────────────────▶ key now
//!                  ── update: schedule or timeZone changed ─▶ key at the next scheduled time
//!                                                     (unparseable: UnParseableCronJobSchedule)
//!                  ── update: anything else ─────────▶ key now
//! Job informer ── add / update / delete ──▶ its controller (a CronJob of that uid) ──▶ key now
//! sync ──▶ RequeueAfter(next scheduled time − now + 100 ms): the queue's clock-driven timer
//! ```
//!
//! The requeue delay is measured on the injected clock, so with `--time-scale 60` an
//! every-minute CronJob runs every real second.
//!
//! Simplified against upstream: no tombstones, no metrics; handlers run on [`Feeds`] tasks.

use std::sync::Arc;

use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::plan::requeue_for_new_schedule;
use super::sync::CronJobSync;
use crate::controller_ref_manager::resolve_controller_ref;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, EventType, Feeds, Informer, ObjectRef, ReconcileError, Reconciler, Recorder,
    Store, TracingClient, WorkQueue, clock_now, get_controller_of, key_of,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "cronjob";

/// The queue the handlers feed.
type Queue = WorkQueue<String>;

/// Build it with [`CronJobController::new`] before the informers run, then run it.
pub struct CronJobController {
    sync: Arc<CronJobSync>,
    feeds: Feeds<String>,
}

impl CronJobController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        cronjobs: &Informer<CronJob>,
        jobs: &Informer<Job>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = CronJobSync::new(
            client,
            clock.clone(),
            recorder.clone(),
            cronjobs.store(),
            jobs.store(),
        );
        let handlers = Arc::new(EventHandlers {
            cronjobs: cronjobs.store(),
            recorder,
            clock: clock.clone(),
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let h = handlers.clone();
        feeds.watch(cronjobs, move |c, q| h.on_cronjob(c, q));
        feeds.watch_keys(jobs, move |c| handlers.on_job(c));
        CronJobController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: handles informer events at once, starts `workers` workers once
    /// both caches have synced, and returns after the workers stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for CronJobSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_cronjob(&key).await })
    }
}

/// The informer event handlers: each maps a change to the CronJobs that must sync.
pub struct EventHandlers {
    cronjobs: Store<CronJob>,
    /// For `UnParseableCronJobSchedule`, recorded when an update brings a bad schedule.
    recorder: Recorder,
    /// `now` for the delay until a changed schedule's next time.
    clock: Clock,
}

impl EventHandlers {
    /// Dispatches one CronJob change.
    pub fn on_cronjob(&self, change: &Change<CronJob>, queue: &Queue) {
        match change {
            Change::Added(cj) | Change::Deleted(cj) => queue.add(key_of(&cj.metadata)),
            Change::Updated { old, new } => self.update_cronjob(queue, old, new),
        }
    }

    /// Upstream `updateCronJob`: a new schedule or zone requeues the CronJob for its next
    /// scheduled time (an earlier pending requeue still wins); any other change syncs now.
    fn update_cronjob(&self, queue: &Queue, old: &CronJob, new: &CronJob) {
        let schedule = |cj: &CronJob| {
            cj.spec
                .as_ref()
                .map(|s| (s.schedule.clone(), s.time_zone.clone()))
        };
        if schedule(old) == schedule(new) {
            queue.add(key_of(&new.metadata));
            return;
        }
        let Ok(now) = clock_now(&self.clock) else {
            queue.add(key_of(&new.metadata));
            return;
        };
        match requeue_for_new_schedule(new, now) {
            Ok(Some(after)) => queue.add_after(key_of(&new.metadata), after),
            Ok(None) => queue.add(key_of(&new.metadata)),
            Err(message) => {
                let object = ObjectRef::of(new);
                self.recorder.record(
                    &object,
                    EventType::Warning,
                    "UnParseableCronJobSchedule",
                    &message,
                );
            }
        }
    }

    /// Upstream `addJob` / `updateJob` / `deleteJob`: the Job's controller, and on an update
    /// whose controller reference changed, the old one too. Orphans concern no one.
    pub fn on_job(&self, change: &Change<Job>) -> Vec<String> {
        match change {
            Change::Added(job) | Change::Deleted(job) => self.owner_keys(job, None),
            Change::Updated { old, new } => {
                if old.metadata.resource_version == new.metadata.resource_version {
                    return Vec::new();
                }
                let old_ref = get_controller_of(&old.metadata);
                let new_ref = get_controller_of(&new.metadata);
                let previous = (old_ref != new_ref).then_some(old_ref).flatten();
                let mut keys = self.owner_keys(new, previous.map(|r| (old.as_ref(), r)));
                keys.dedup();
                keys
            }
        }
    }

    fn owner_keys(&self, job: &Job, previous: Option<(&Job, &OwnerReference)>) -> Vec<String> {
        let mut keys = Vec::new();
        if let Some((old, owner)) = previous
            && let Some(cj) = resolve_controller_ref(&self.cronjobs, old.metadata.namespace.as_deref(), owner)
        {
            keys.push(key_of(&cj.metadata));
        }
        if let Some(owner) = get_controller_of(&job.metadata)
            && let Some(cj) = resolve_controller_ref(&self.cronjobs, job.metadata.namespace.as_deref(), owner)
        {
            keys.push(key_of(&cj.metadata));
        }
        keys
    }
}
