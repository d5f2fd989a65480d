//! The NodeLifecycle controller's wiring: informer events → node names → workers.
//!
//! Upstream: `pkg/controller/nodelifecycle/node_lifecycle_controller.go`
//! (`NewNodeLifecycleController`, `Run`, `podUpdated`, the node handlers). The sync itself is
//! [`super::sync::NodeLifecycleSync::sync_node`].
//!
//! ```text
//! Node informer ── add/update/delete ──────────────▶ node name ─┐
//! Pod informer  ── add, or nodeName changed ───────▶ its node ──┼─▶ WorkQueue ─▶ workers ─▶ sync_node
//! Lease informer (read by the sync; no keys)                   │
//! every sync    ── RequeueAfter(monitor period) ───────────────┘
//! ```
//!
//! Simplified against upstream: upstream's `monitorNodeHealth` loops over every node every
//! `--node-monitor-period` on one goroutine; here each node requeues itself after that period, so
//! nodes are looked at independently (and also on every change of the Node). The DaemonSet
//! informer upstream waits for is not needed (it only served the eviction path that taint-based
//! eviction replaced).

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::health::Periods;
use super::sync::NodeLifecycleSync;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, TracingClient,
    WorkQueue,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "node-lifecycle";

/// Build it with [`NodeLifecycleController::new`] before the informers run, then run it.
pub struct NodeLifecycleController {
    sync: Arc<NodeLifecycleSync>,
    feeds: Feeds<String>,
}

impl NodeLifecycleController {
    /// Wires the controller to its informers (subscribing, so call this before they run), with
    /// kube-controller-manager's default periods at the clock's time scale
    /// ([`Periods::for_time_scale`]).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        nodes: &Informer<Node>,
        pods: &Informer<Pod>,
        leases: &Informer<Lease>,
    ) -> Self {
        let periods = Periods::for_time_scale(clock.scale());
        Self::with_periods(client, clock, recorder, nodes, pods, leases, periods)
    }

    /// [`NodeLifecycleController::new`] with other periods (`--node-monitor-period`,
    /// `--node-monitor-grace-period`, `--node-startup-grace-period`).
    pub fn with_periods(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        nodes: &Informer<Node>,
        pods: &Informer<Pod>,
        leases: &Informer<Lease>,
        periods: Periods,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = NodeLifecycleSync::new(
            client,
            clock.clone(),
            recorder,
            periods,
            nodes.store(),
            pods.store(),
            leases.store(),
        );
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(nodes, on_node);
        feeds.watch_keys(pods, on_pod);
        // The sync reads the Leases from the cache; the monitor period paces it, not their changes.
        feeds.watch_keys(leases, |_: &Change<Lease>| Vec::new());
        NodeLifecycleController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: once every cache has synced, `workers` workers sync nodes.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for NodeLifecycleSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_node(&key).await })
    }
}

/// Every change of a Node syncs it (a deletion too: the sync records `RemovingNode`).
fn on_node(change: &Change<Node>) -> Vec<String> {
    let node = match change {
        Change::Added(n) | Change::Deleted(n) | Change::Updated { new: n, .. } => n,
    };
    node.metadata.name.clone().into_iter().collect()
}

/// Upstream `podUpdated`: a pod newly bound to a node syncs that node (which marks it not
/// ready if the node is not Ready).
fn on_pod(change: &Change<Pod>) -> Vec<String> {
    let node_of = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
    match change {
        Change::Added(pod) => node_of(pod).into_iter().collect(),
        Change::Updated { old, new } if node_of(old) != node_of(new) => node_of(new).into_iter().collect(),
        _ => Vec::new(),
    }
}
