//! The TTL-after-finished controller's wiring: Job events → keys → workers.
//!
//! Upstream: `pkg/controller/ttlafterfinished/ttlafterfinished_controller.go` (`New`,
//! `addJob`, `updateJob`, `Run`). The sync is
//! [`super::sync::TtlAfterFinishedSync::process_job`].
//!
//! ```text
//! Job informer ── add / update: not deleting, finished, TTL set ──▶ key ──▶ sync
//! sync ──▶ RequeueAfter(expire − now) until it expires, on the injected clock
//! ```
//!
//! Simplified against upstream: no metrics; handlers run on [`Feeds`] tasks.

use std::sync::Arc;

use k8s_openapi::api::batch::v1::Job;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::plan::needs_cleanup;
use super::sync::TtlAfterFinishedSync;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, TracingClient,
    WorkQueue, key_of,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "ttl-after-finished";

/// Build it with [`TtlAfterFinishedController::new`] before the informers run, then run it.
pub struct TtlAfterFinishedController {
    sync: Arc<TtlAfterFinishedSync>,
    feeds: Feeds<String>,
}

impl TtlAfterFinishedController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    /// Upstream records no events; `recorder` is taken for the shared constructor shape.
    pub fn new(client: Arc<dyn Client>, clock: Clock, recorder: Recorder, jobs: &Informer<Job>) -> Self {
        let _ = recorder;
        let client = TracingClient::wrap(client, NAME);
        let sync = TtlAfterFinishedSync::new(client, clock.clone(), jobs.store());
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(jobs, on_job);
        TtlAfterFinishedController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for TtlAfterFinishedSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.process_job(&key).await })
    }
}

/// Upstream `addJob` / `updateJob`: a finished Job with a TTL that is not being deleted.
pub fn on_job(change: &Change<Job>) -> Vec<String> {
    let job = match change {
        Change::Added(job) | Change::Updated { new: job, .. } => job,
        Change::Deleted(_) => return Vec::new(),
    };
    if job.metadata.deletion_timestamp.is_none() && needs_cleanup(job) {
        vec![key_of(&job.metadata)]
    } else {
        Vec::new()
    }
}
