//! The TaintEviction controller's wiring: informer events → pod keys → workers.
//!
//! Upstream: `pkg/controller/tainteviction/taint_eviction.go` (`New`, `Run`, `PodUpdated`,
//! `NodeUpdated`). The sync itself is [`super::sync::TaintEvictionSync::sync_pod`].
//!
//! ```text
//! Node informer ── NoExecute taints changed (or added, deleted) ──▶ every pod bound to it ─┐
//! Pod informer  ── added, deleted, tolerations or nodeName changed ──▶ the pod ───────────┼─▶ WorkQueue ─▶ sync_pod
//! a scheduled eviction ── RequeueAfter(until due) ────────────────────────────────────────┘
//! ```

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::plan::no_execute_taints;
use super::sync::TaintEvictionSync;
use crate::runtime::informer::{Change, NODE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, Store, TracingClient,
    WorkQueue, key_of,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "taint-eviction";

/// Build it with [`TaintEvictionController::new`] before the informers run, then run it.
pub struct TaintEvictionController {
    sync: Arc<TaintEvictionSync>,
    feeds: Feeds<String>,
}

impl TaintEvictionController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        nodes: &Informer<Node>,
        pods: &Informer<Pod>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = TaintEvictionSync::new(client, clock.clone(), recorder, nodes.store(), pods.store());
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let pod_store = pods.store();
        feeds.watch_keys(nodes, move |change| node_updated(&pod_store, change));
        feeds.watch_keys(pods, pod_updated);
        TaintEvictionController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// The sync, for tests to look at the scheduled evictions.
    pub fn sync(&self) -> &Arc<TaintEvictionSync> {
        &self.sync
    }

    /// Runs until `shutdown`: once both caches have synced, `workers` workers sync pods.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for TaintEvictionSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_pod(&key).await })
    }
}

/// Upstream `NodeUpdated`: when the node's `NoExecute` taints change, every pod bound to it.
fn node_updated(pods: &Store<Pod>, change: &Change<Node>) -> Vec<String> {
    let node = match change {
        Change::Updated { old, new } if no_execute_taints(old) == no_execute_taints(new) => {
            return Vec::new();
        }
        Change::Added(n) | Change::Deleted(n) | Change::Updated { new: n, .. } => n,
    };
    let Some(name) = node.metadata.name.as_deref() else {
        return Vec::new();
    };
    pods.by_index(NODE_INDEX, name)
        .iter()
        .map(|p| key_of(&p.metadata))
        .collect()
}

/// Upstream `PodUpdated`: a pod added or deleted, or whose tolerations or node changed.
fn pod_updated(change: &Change<Pod>) -> Vec<String> {
    let pod = match change {
        Change::Updated { old, new } => {
            let tolerations = |p: &Pod| p.spec.as_ref().and_then(|s| s.tolerations.clone());
            let node = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone());
            if tolerations(old) == tolerations(new) && node(old) == node(new) {
                return Vec::new();
            }
            new
        }
        Change::Added(p) | Change::Deleted(p) => p,
    };
    vec![key_of(&pod.metadata)]
}
