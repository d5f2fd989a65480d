//! The pod GC's wiring: two informers whose caches a periodic pass reads.
//!
//! Upstream: `pkg/controller/podgc/gc_controller.go` (`NewPodGC`, `Run`: wait for the pod and
//! node caches, then `wait.UntilWithContext(gc, gcCheckPeriod)`). The pass itself is
//! [`super::sync::PodGcSync::gc`].
//!
//! ```text
//! Pod informer  ──┐ (no handler: only their caches are read, and waited for)
//! Node informer ──┘
//! new():  queue.add("gc")  ──▶ worker ──▶ gc() ──▶ RequeueAfter(20 s) ──▶ queue (on the clock)
//! ```
//!
//! Upstream runs the pass on a timer outside any queue; here the timer is the work queue's
//! `add_after` on the injected clock, so paused-time tests step through passes and the trace
//! shows each one. The single key means one pass at a time, whatever the worker count.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::PodGcSync;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, TracingClient, WorkQueue,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "podgc";

/// The one key of the queue: "run a pass".
pub const GC_KEY: &str = "gc";

/// Build it with [`PodGcController::new`] before the informers run, then run it.
pub struct PodGcController {
    sync: PodGcSync,
    feeds: Feeds<&'static str>,
}

impl PodGcController {
    /// Wires the controller to its informers (subscribing, so call this before they run), with
    /// kube-controller-manager's default terminated-pod threshold (12500).
    pub fn new(client: Arc<dyn Client>, clock: Clock, pods: &Informer<Pod>, nodes: &Informer<Node>) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = PodGcSync::new(client, clock.clone(), pods.store(), nodes.store());
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        // Handlers that enqueue nothing: the feeds are how `run` waits for both caches.
        feeds.watch_keys(pods, |_| Vec::new());
        feeds.watch_keys(nodes, |_| Vec::new());
        feeds.queue().add(GC_KEY);
        PodGcController { sync, feeds }
    }

    /// kube-controller-manager's `--terminated-pod-gc-threshold`: how many terminated pods
    /// (Succeeded, Failed) are kept before the oldest are deleted; 0 keeps them all.
    pub fn with_terminated_pod_threshold(mut self, threshold: usize) -> Self {
        self.sync.set_terminated_pod_threshold(threshold);
        self
    }

    /// Runs until `shutdown`: the first pass once both caches have synced, then one every
    /// 20 s of the clock.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(Arc::new(self.sync), workers, shutdown).await;
    }
}

impl Reconciler for PodGcSync {
    type Key = &'static str;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, _key: &&'static str) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        Box::pin(self.gc())
    }

    /// The pass never fails, but a panic inside it is retried by the worker as an error: it
    /// must never be dropped from the queue, or no pass would run again.
    fn max_retries(&self) -> u32 {
        u32::MAX
    }
}
