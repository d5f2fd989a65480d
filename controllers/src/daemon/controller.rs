//! The DaemonSet controller's wiring: informer events → keys → workers.
//!
//! Upstream: `pkg/controller/daemon/daemon_controller.go` (`NewDaemonSetsController`, `Run`, the
//! handlers `addDaemonset`/`updateDaemonset`/`deleteDaemonset`, `addHistory`/`updateHistory`/
//! `deleteHistory`, `addPod`/`updatePod`/`deletePod`, `addNode`/`updateNode`,
//! `nodeInSameCondition`, `shouldIgnoreNodeUpdate`, `resolveControllerRef`, `getDaemonSetsForPod`,
//! `getDaemonSetsForHistory`). The sync is [`super::sync::DaemonSetsSync::sync_daemon_set`].
//!
//! ```text
//! DaemonSet informer ── add/update/delete ──▶ its key (delete: forget expectations) ─────┐
//! ControllerRevision ── controllerRef? its owner; orphan: every DS whose selector matches ├─▶ queue ─▶ sync
//! Pod informer ── add: owner (creation observed) | orphan: matching DaemonSets          │
//!             ── update: deletionTimestamp → as delete; owner (+ requeue after         │
//!                        minReadySeconds when it just became ready) | orphan            │
//!             ── delete: owner (deletion observed)                                      │
//! Node informer ── add: DaemonSets that should run there                                │
//!              ── update: DaemonSets whose shouldRun / shouldContinueRunning changed    │
//!              ── delete: DaemonSets that had a pod there or wanted one ────────────────┘
//! ```
//!
//! Simplified against upstream: no tombstones; the node-delete handler is miniplane's (upstream
//! relies on the pod GC and the next resync); `shouldIgnoreNodeUpdate` also ignores
//! `managedFields`, which every heartbeat rewrites.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::{Node, NodeCondition, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::placement::node_should_run_daemon_pod;
use super::sync::DaemonSetsSync;
use crate::controller_ref_manager::resolve_controller_ref;
use crate::controller_utils::pods::is_pod_ready;
use crate::controller_utils::selector::selector_of;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, ControllerExpectations, Feeds, Informer, ReconcileError, Reconciler, Recorder,
    Store, TracingClient, WorkQueue, get_controller_of, key_of,
};

/// The queue the handlers feed.
type Queue = WorkQueue<String>;

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "daemonset";

/// Build it with [`DaemonSetsController::new`] before the informers run, then run it.
pub struct DaemonSetsController {
    sync: Arc<DaemonSetsSync>,
    feeds: Feeds<String>,
}

impl DaemonSetsController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        daemonsets: &Informer<DaemonSet>,
        pods: &Informer<Pod>,
        nodes: &Informer<Node>,
        revisions: &Informer<ControllerRevision>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let expectations = ControllerExpectations::new(clock.clone());
        let sync = DaemonSetsSync::new(
            client,
            clock.clone(),
            recorder,
            expectations.clone(),
            daemonsets.store(),
            pods.store(),
            nodes.store(),
            revisions.store(),
        );
        let handlers = Arc::new(EventHandlers {
            daemonsets: daemonsets.store(),
            expectations,
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let h = handlers.clone();
        feeds.watch(daemonsets, move |c, q| h.on_daemonset(c, q));
        let h = handlers.clone();
        feeds.watch(revisions, move |c, q| h.on_history(c, q));
        let h = handlers.clone();
        feeds.watch(pods, move |c, q| h.on_pod(c, q));
        feeds.watch(nodes, move |c, q| handlers.on_node(c, q));
        DaemonSetsController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// The expectations shared by the sync and the event handlers.
    pub fn expectations(&self) -> &ControllerExpectations {
        self.sync.expectations()
    }

    /// Runs until `shutdown`: handles informer events at once, starts `workers` workers once every
    /// cache has synced, and returns after the workers stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for DaemonSetsSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_daemon_set(&key).await })
    }
}

/// The informer event handlers: each maps a change to the keys of the DaemonSets that must sync,
/// and keeps the expectations up to date.
pub struct EventHandlers {
    daemonsets: Store<DaemonSet>,
    expectations: ControllerExpectations,
}

impl EventHandlers {
    /// Dispatches one DaemonSet change.
    pub fn on_daemonset(&self, change: &Change<DaemonSet>, queue: &Queue) {
        match change {
            Change::Added(ds) => queue.add(key_of(&ds.metadata)),
            Change::Updated { old, new } => {
                if old.metadata.uid != new.metadata.uid {
                    self.delete_daemonset(queue, old);
                }
                queue.add(key_of(&new.metadata));
            }
            Change::Deleted(ds) => self.delete_daemonset(queue, ds),
        }
    }

    /// Upstream `deleteDaemonset`: forget the expectations so that a namesake starts clean.
    fn delete_daemonset(&self, queue: &Queue, ds: &DaemonSet) {
        let key = key_of(&ds.metadata);
        self.expectations.delete_expectations(&key);
        queue.add(key);
    }

    /// Dispatches one ControllerRevision change (upstream `addHistory`, `updateHistory`,
    /// `deleteHistory`).
    pub fn on_history(&self, change: &Change<ControllerRevision>, queue: &Queue) {
        match change {
            Change::Added(h) if h.metadata.deletion_timestamp.is_some() => {
                self.enqueue_owner(queue, &h.metadata)
            }
            Change::Added(h) => {
                if get_controller_of(&h.metadata).is_some() {
                    self.enqueue_owner(queue, &h.metadata);
                } else {
                    self.enqueue_matching(queue, &h.metadata);
                }
            }
            Change::Updated { old, new } => {
                if old.metadata.resource_version == new.metadata.resource_version {
                    return;
                }
                self.on_child_update(queue, &old.metadata, &new.metadata);
            }
            Change::Deleted(h) => self.enqueue_owner(queue, &h.metadata),
        }
    }

    /// Dispatches one pod change.
    pub fn on_pod(&self, change: &Change<Pod>, queue: &Queue) {
        match change {
            Change::Added(pod) => self.add_pod(queue, pod),
            Change::Updated { old, new } => self.update_pod(queue, old, new),
            Change::Deleted(pod) => self.delete_pod(queue, pod),
        }
    }

    /// Upstream `addPod`.
    fn add_pod(&self, queue: &Queue, pod: &Pod) {
        if pod.metadata.deletion_timestamp.is_some() {
            self.delete_pod(queue, pod);
            return;
        }
        if let Some(owner) = get_controller_of(&pod.metadata) {
            if let Some(ds) = self.resolve_controller_ref(&pod.metadata, owner) {
                let key = key_of(&ds.metadata);
                self.expectations.creation_observed(&key);
                queue.add(key);
            }
            return;
        }
        self.enqueue_matching(queue, &pod.metadata);
    }

    /// Upstream `updatePod`.
    fn update_pod(&self, queue: &Queue, old: &Pod, new: &Pod) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        if new.metadata.deletion_timestamp.is_some() {
            self.delete_pod(queue, new);
            return;
        }
        if let Some(ds) = self.on_child_update(queue, &old.metadata, &new.metadata) {
            let min_ready = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
            if min_ready > 0 && !is_pod_ready(old) && is_pod_ready(new) {
                let after = Duration::from_secs(u64::from(min_ready.unsigned_abs()) + 1);
                queue.add_after(key_of(&ds.metadata), after);
            }
        }
    }

    /// The part of `updatePod` / `updateHistory` shared by both kinds: wake the old controller if
    /// the reference changed, then the current one, or for an orphan whose labels or reference
    /// changed, every DaemonSet that may adopt it. Returns the current controller.
    fn on_child_update(&self, queue: &Queue, old: &ObjectMeta, new: &ObjectMeta) -> Option<Arc<DaemonSet>> {
        let old_ref = get_controller_of(old);
        let new_ref = get_controller_of(new);
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(ds) = old_ref.and_then(|r| self.resolve_controller_ref(old, r)) {
            queue.add(key_of(&ds.metadata));
        }
        if let Some(owner) = new_ref {
            let ds = self.resolve_controller_ref(new, owner)?;
            queue.add(key_of(&ds.metadata));
            return Some(ds);
        }
        if ref_changed || old.labels != new.labels {
            self.enqueue_matching(queue, new);
        }
        None
    }

    /// Upstream `deletePod`: the owner observes the deletion; orphans concern no one.
    fn delete_pod(&self, queue: &Queue, pod: &Pod) {
        let Some(owner) = get_controller_of(&pod.metadata) else {
            return;
        };
        if let Some(ds) = self.resolve_controller_ref(&pod.metadata, owner) {
            let key = key_of(&ds.metadata);
            self.expectations.deletion_observed(&key);
            queue.add(key);
        }
    }

    fn enqueue_owner(&self, queue: &Queue, meta: &ObjectMeta) {
        if let Some(owner) = get_controller_of(meta)
            && let Some(ds) = self.resolve_controller_ref(meta, owner)
        {
            queue.add(key_of(&ds.metadata));
        }
    }

    /// Upstream `resolveControllerRef`: the DaemonSet a controller reference names (kind and UID
    /// checked).
    fn resolve_controller_ref(&self, meta: &ObjectMeta, owner: &OwnerReference) -> Option<Arc<DaemonSet>> {
        if owner.api_version.split('/').next() != Some("apps") {
            return None;
        }
        resolve_controller_ref(&self.daemonsets, meta.namespace.as_deref(), owner)
    }

    /// Upstream `GetPodDaemonSets` / `GetHistoryDaemonSets`: the DaemonSets of the namespace whose
    /// (non-empty) selector matches the orphan's labels.
    fn enqueue_matching(&self, queue: &Queue, meta: &ObjectMeta) {
        let ns = meta.namespace.as_deref().unwrap_or("");
        for ds in self.daemonsets.by_index(NAMESPACE_INDEX, ns) {
            let matches = ds.spec.as_ref().is_some_and(|s| {
                let selector = selector_of(&s.selector);
                !selector.is_empty() && selector.matches(&meta.labels.as_ref())
            });
            if matches {
                queue.add(key_of(&ds.metadata));
            }
        }
    }

    /// Dispatches one node change (upstream `addNode`, `updateNode`; and a delete).
    pub fn on_node(&self, change: &Change<Node>, queue: &Queue) {
        match change {
            Change::Added(node) => {
                for ds in self.daemonsets.list() {
                    if node_should_run_daemon_pod(node, &ds).should_run {
                        queue.add(key_of(&ds.metadata));
                    }
                }
            }
            Change::Updated { old, new } => {
                if should_ignore_node_update(old, new) {
                    return;
                }
                for ds in self.daemonsets.list() {
                    if node_should_run_daemon_pod(old, &ds) != node_should_run_daemon_pod(new, &ds) {
                        queue.add(key_of(&ds.metadata));
                    }
                }
            }
            Change::Deleted(node) => {
                for ds in self.daemonsets.list() {
                    let should = node_should_run_daemon_pod(node, &ds);
                    if should.should_run || should.should_continue_running {
                        queue.add(key_of(&ds.metadata));
                    }
                }
            }
        }
    }
}

/// Upstream `nodeInSameCondition`: the same condition types are True in both.
pub fn node_in_same_condition(old: &[NodeCondition], cur: &[NodeCondition]) -> bool {
    let trues = |cs: &[NodeCondition]| {
        cs.iter()
            .filter(|c| c.status == "True")
            .map(|c| c.type_.clone())
            .collect::<std::collections::BTreeSet<_>>()
    };
    trues(old) == trues(cur)
}

/// Upstream `shouldIgnoreNodeUpdate`: the same True conditions and otherwise the same node (but
/// for resourceVersion, the conditions' timestamps and managedFields).
pub fn should_ignore_node_update(old: &Node, cur: &Node) -> bool {
    let conditions = |n: &Node| {
        n.status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default()
    };
    if !node_in_same_condition(&conditions(old), &conditions(cur)) {
        return false;
    }
    let normalize = |n: &Node| {
        let mut n = n.clone();
        n.metadata.resource_version = None;
        n.metadata.managed_fields = None;
        if let Some(s) = n.status.as_mut() {
            s.conditions = None;
        }
        n
    };
    normalize(old) == normalize(cur)
}
