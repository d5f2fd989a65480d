//! The ResourceQuota controller's wiring: informer events → quota keys → workers.
//!
//! Upstream: `pkg/controller/resourcequota/resource_quota_controller.go`
//! (`NewController`, `addQuota`, the quota informer's `UpdateFunc`,
//! `replenishQuota`, `Run`) and `resource_quota_monitor.go` (the
//! replenishment of pods).
//!
//! ```text
//! ResourceQuota informer ── add ──────────────────────▶ key of the quota ─┐
//!                        ── update, spec.hard changed ▶ key of the quota ─┤
//! Pod informer ── delete, or now Succeeded/Failed ──▶ every quota of the  ├─▶ WorkQueue ─▶ sync
//!                                                    pod's namespace      │
//! every sync ── RequeueAfter(resync period) ─────────────────────────────┘
//! ```
//!
//! Simplified against upstream: only pods are watched for replenishment;
//! every other counted kind is recounted on the resync period (upstream
//! starts a monitor per quota'd resource).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, ResourceQuota};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::ResourceQuotaSync;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, ResourceRef, Store,
    TracingClient, WorkQueue, key_of,
};

/// The queue the handlers feed.
type Queue = WorkQueue<String>;

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "resourcequota";

/// The ResourceQuota controller: build it with [`ResourceQuotaController::new`]
/// before the informers run, then [`ResourceQuotaController::run`] it.
pub struct ResourceQuotaController {
    sync: Arc<ResourceQuotaSync>,
    feeds: Feeds<String>,
}

impl ResourceQuotaController {
    /// Wires the controller to the quota and pod informers. `resources` are
    /// the listable resources (`count/<plural>.<group>` is counted by listing
    /// the one of that group and plural).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        quotas: &Informer<ResourceQuota>,
        pods: &Informer<Pod>,
        resources: Vec<ResourceRef>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = ResourceQuotaSync::new(client, quotas.store(), pods.store(), resources);
        let handlers = Arc::new(EventHandlers {
            quotas: quotas.store(),
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let h = handlers.clone();
        feeds.watch(quotas, move |c, q| h.on_quota(c, q));
        feeds.watch(pods, move |c, q| handlers.on_pod(c, q));
        ResourceQuotaController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: handles informer events at once, starts
    /// `workers` workers once both caches have synced, and returns after
    /// the workers stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for ResourceQuotaSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_resource_quota(&key).await })
    }
}

/// The informer event handlers: each maps a change to the quotas that must sync.
pub struct EventHandlers {
    quotas: Store<ResourceQuota>,
}

impl EventHandlers {
    /// Upstream `addQuota` on add, and on an update only when `spec.hard`
    /// changed (a status write, by admission or by the sync, is no reason).
    pub fn on_quota(&self, change: &Change<ResourceQuota>, queue: &Queue) {
        match change {
            Change::Added(q) => queue.add(key_of(&q.metadata)),
            Change::Updated { old, new } => {
                let hard = |q: &ResourceQuota| q.spec.as_ref().and_then(|s| s.hard.clone());
                let status_hard = new.status.as_ref().and_then(|s| s.hard.clone());
                if hard(old) != hard(new) || status_hard != hard(new) {
                    queue.add(key_of(&new.metadata));
                }
            }
            Change::Deleted(_) => {}
        }
    }

    /// Upstream `replenishQuota` for pods: a pod that is gone or has
    /// finished no longer uses quota, so every quota of its namespace syncs.
    pub fn on_pod(&self, change: &Change<Pod>, queue: &Queue) {
        let pod = match change {
            Change::Deleted(pod) => pod,
            Change::Updated { old, new } if !is_terminal(old) && is_terminal(new) => new,
            _ => return,
        };
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        for quota in self.quotas.by_index(NAMESPACE_INDEX, ns) {
            queue.add(key_of(&quota.metadata));
        }
    }
}

/// A pod that Succeeded or Failed.
fn is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}
