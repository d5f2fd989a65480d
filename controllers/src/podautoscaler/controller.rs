//! The HPA controller's wiring: HPA changes → keys → workers, every HPA again each sync period.
//!
//! Upstream: `pkg/controller/podautoscaler/horizontal.go` (`NewHorizontalController`, `Run`,
//! `enqueueHPA`, `updateHPA`, `deleteHPA`, `processNextWorkItem`). The sync itself is
//! [`super::sync::HorizontalSync::reconcile_key`].
//!
//! ```text
//! HPA informer ── add ───────────────▶ key now
//!              ── update (spec) ─────▶ key now
//!              ── delete ────────────▶ key (the sync forgets its history)
//! Pod informer ── (cache only, read by the replica calculator; waited for)
//! every sync ends with RequeueAfter(15 s): each HPA is looked at once per sync period
//! ```
//!
//! Simplified against upstream: a new or changed HPA syncs at once (upstream's rate limiter
//! delays every add by the resync period), and a status-only update (its own write) does not
//! requeue: the periodic requeue already stands.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::replica_calculator::ReplicaCalculator;
use super::sync::HorizontalSync;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, TracingClient, key_of,
};

/// The controller's name (its client's field manager, the Events' source).
pub const NAME: &str = "horizontal-pod-autoscaler";

/// The HorizontalPodAutoscaler controller: build it with [`HorizontalController::new`] before
/// the informers run, then [`HorizontalController::run`] it.
pub struct HorizontalController {
    sync: HorizontalSync,
    feeds: Feeds<String>,
}

impl HorizontalController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        hpas: &Informer<HorizontalPodAutoscaler>,
        pods: &Informer<Pod>,
        metrics: Arc<dyn sim_metrics::Query>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = HorizontalSync::new(
            client,
            clock.clone(),
            recorder,
            hpas.store(),
            pods.store(),
            metrics,
        );
        let mut feeds = Feeds::new(crate::runtime::WorkQueue::named(clock, NAME));
        feeds.watch_keys(hpas, on_hpa);
        // Read only through its cache; watched so the workers wait until it has synced.
        feeds.watch_keys(pods, |_| Vec::new());
        HorizontalController { sync, feeds }
    }

    /// The sync period (upstream `--horizontal-pod-autoscaler-sync-period`, 15 s).
    pub fn with_sync_period(mut self, period: Duration) -> Self {
        self.sync.sync_period = period;
        self
    }

    /// The default scale-down stabilization window in seconds (upstream
    /// `--horizontal-pod-autoscaler-downscale-stabilization`, 300).
    pub fn with_downscale_stabilization_window(mut self, seconds: i32) -> Self {
        self.sync.downscale_stabilization_window = seconds;
        self
    }

    /// The tolerance and readiness settings of the replica calculator.
    pub fn with_replica_calculator(mut self, calc: ReplicaCalculator) -> Self {
        self.sync.calc = calc;
        self
    }

    /// Runs until `shutdown`: handlers at once, `workers` workers once both caches have synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(Arc::new(self.sync), workers, shutdown).await;
    }
}

impl Reconciler for HorizontalSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.reconcile_key(&key).await })
    }
}

/// Upstream `enqueueHPA` / `updateHPA` / `deleteHPA`: the HPA's key; an update only when the
/// spec changed (its generation), not for the controller's own status writes.
fn on_hpa(change: &Change<HorizontalPodAutoscaler>) -> Vec<String> {
    match change {
        Change::Added(h) | Change::Deleted(h) => vec![key_of(&h.metadata)],
        Change::Updated { old, new } => {
            if old.metadata.generation != new.metadata.generation || old.metadata.uid != new.metadata.uid {
                vec![key_of(&new.metadata)]
            } else {
                Vec::new()
            }
        }
    }
}
