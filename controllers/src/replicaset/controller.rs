//! The ReplicaSet controller's wiring: informer events → keys → workers.
//!
//! Upstream: `pkg/controller/replicaset/replica_set.go` (`NewBaseController`,
//! `Run`, the handlers `addRS`/`updateRS`/`deleteRS`, `addPod`/`updatePod`/
//! `deletePod`, `resolveControllerRef`, `getPodReplicaSets`). The sync itself
//! is [`super::sync::ReplicaSetSync::sync_replica_set`].
//!
//! ```text
//! ReplicaSet informer ── add/update/delete ──▶ key of the RS ─────────────┐
//! Pod informer ── add ────▶ controllerRef? owner: creation observed       │
//!                           orphan: every RS whose selector matches       ├─▶ WorkQueue ─▶ workers ─▶ sync
//!             ── update ──▶ deletionTimestamp set: as a delete           │
//!                           controllerRef changed: old owner too         │
//!             ── delete ──▶ owner: deletion observed ────────────────────┘
//! ```
//!
//! Simplified against upstream: no tombstones (the informer always hands
//! over the last known pod), no metrics, and the handlers run on
//! [`Feeds`] tasks reading the informers' change channels instead of
//! informer callbacks.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::ReplicaSetSync;
use crate::controller_ref_manager::resolve_controller_ref;
use crate::controller_utils::pods::is_pod_ready;
use crate::controller_utils::selector::selector_of;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::lessons::Lessons;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, Store, TracingClient,
    UidTrackingControllerExpectations, WorkQueue, get_controller_of, key_of,
};

/// The queue the handlers feed.
type Queue = WorkQueue<String>;

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "replicaset";

/// The ReplicaSet controller: build it with [`ReplicaSetController::new`]
/// before the informers run, then [`ReplicaSetController::run`] it.
pub struct ReplicaSetController {
    sync: Arc<ReplicaSetSync>,
    feeds: Feeds<String>,
}

impl ReplicaSetController {
    /// Wires the controller to the two informers (subscribing to both, so
    /// call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        replicasets: &Informer<ReplicaSet>,
        pods: &Informer<Pod>,
    ) -> Self {
        Self::with_lessons(client, clock, recorder, replicasets, pods, &Lessons::default())
    }

    /// [`ReplicaSetController::new`] with the mechanisms `lessons` switches
    /// off (`--disable expectations`, `pod-deletion-ranking`,
    /// `controller-ref-claim`; see [`crate::runtime::lessons`]).
    pub fn with_lessons(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        replicasets: &Informer<ReplicaSet>,
        pods: &Informer<Pod>,
        lessons: &Lessons,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let expectations =
            UidTrackingControllerExpectations::new(clock.clone()).disabled(lessons.disable_expectations);
        let sync = ReplicaSetSync::new(
            client,
            clock.clone(),
            recorder,
            expectations.clone(),
            replicasets.store(),
            pods.store(),
        )
        .with_lessons(lessons);
        let handlers = Arc::new(EventHandlers {
            replicasets: replicasets.store(),
            expectations,
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let h = handlers.clone();
        feeds.watch(replicasets, move |c, q| h.on_replicaset(c, q));
        feeds.watch(pods, move |c, q| handlers.on_pod(c, q));
        ReplicaSetController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// The expectations shared by the sync and the event handlers.
    pub fn expectations(&self) -> &UidTrackingControllerExpectations {
        self.sync.expectations()
    }

    /// Runs until `shutdown`: handles informer events at once, starts
    /// `workers` workers once both caches have synced (upstream
    /// `WaitForNamedCacheSync`), and returns after the workers stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for ReplicaSetSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_replica_set(&key).await })
    }
}

/// The informer event handlers: each maps a change to the keys of the
/// ReplicaSets that must sync, and keeps the expectations up to date.
pub struct EventHandlers {
    replicasets: Store<ReplicaSet>,
    expectations: UidTrackingControllerExpectations,
}

impl EventHandlers {
    /// Dispatches one ReplicaSet change.
    pub fn on_replicaset(&self, change: &Change<ReplicaSet>, queue: &Queue) {
        match change {
            Change::Added(rs) => self.enqueue(queue, rs),
            Change::Updated { old, new } => self.update_rs(queue, old, new),
            Change::Deleted(rs) => self.delete_rs(queue, rs),
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

    fn enqueue(&self, queue: &Queue, rs: &ReplicaSet) {
        queue.add(key_of(&rs.metadata));
    }

    /// Upstream `updateRS`: a namesake with a new UID means the old one was
    /// deleted; every update syncs (a resync retries failed creations).
    fn update_rs(&self, queue: &Queue, old: &ReplicaSet, new: &ReplicaSet) {
        if old.metadata.uid != new.metadata.uid {
            self.delete_rs(queue, old);
        }
        self.enqueue(queue, new);
    }

    /// Upstream `deleteRS`: forget the expectations, so that a new
    /// ReplicaSet of the same name starts clean.
    fn delete_rs(&self, queue: &Queue, rs: &ReplicaSet) {
        let key = key_of(&rs.metadata);
        self.expectations.delete_expectations(&key);
        queue.add(key);
    }

    /// Upstream `addPod`: an owned pod is an observed creation; an orphan
    /// wakes every ReplicaSet that might adopt it.
    fn add_pod(&self, queue: &Queue, pod: &Pod) {
        if pod.metadata.deletion_timestamp.is_some() {
            // Seen for the first time already deleting (e.g. after a
            // restart): not a creation anyone waits for.
            self.delete_pod(queue, pod);
            return;
        }
        if let Some(owner) = get_controller_of(&pod.metadata) {
            if let Some(rs) = self.resolve_controller_ref(pod, owner) {
                let key = key_of(&rs.metadata);
                self.expectations.creation_observed(&key);
                queue.add(key);
            }
            return;
        }
        self.enqueue_matching(queue, pod);
    }

    /// Upstream `updatePod`.
    fn update_pod(&self, queue: &Queue, old: &Pod, new: &Pod) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return; // a resync: nothing changed
        }
        let labels_changed = old.metadata.labels != new.metadata.labels;
        if new.metadata.deletion_timestamp.is_some() {
            // Graceful deletion has begun: replace the pod now rather than
            // when the kubelet finally removes it.
            self.delete_pod(queue, new);
            if labels_changed {
                self.delete_pod(queue, old);
            }
            return;
        }
        let old_ref = get_controller_of(&old.metadata);
        let new_ref = get_controller_of(&new.metadata);
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(rs) = old_ref.and_then(|r| self.resolve_controller_ref(old, r)) {
            self.enqueue(queue, &rs);
        }
        if let Some(owner) = new_ref {
            if let Some(rs) = self.resolve_controller_ref(new, owner) {
                self.enqueue(queue, &rs);
                self.requeue_when_available(queue, &rs, old, new);
            }
            return;
        }
        if labels_changed || ref_changed {
            self.enqueue_matching(queue, new);
        }
    }

    /// A pod that just became Ready is available after minReadySeconds; look
    /// again then (plus a second against clock skew, as upstream).
    fn requeue_when_available(&self, queue: &Queue, rs: &ReplicaSet, old: &Pod, new: &Pod) {
        let min_ready = rs.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
        if min_ready > 0 && !is_pod_ready(old) && is_pod_ready(new) {
            let after = Duration::from_secs(u64::from(min_ready.unsigned_abs()) + 1);
            queue.add_after(key_of(&rs.metadata), after);
        }
    }

    /// Upstream `deletePod`: an owned pod's deletion is observed (once, by
    /// pod key); orphans concern no one.
    fn delete_pod(&self, queue: &Queue, pod: &Pod) {
        let Some(owner) = get_controller_of(&pod.metadata) else {
            return;
        };
        let Some(rs) = self.resolve_controller_ref(pod, owner) else {
            return;
        };
        let key = key_of(&rs.metadata);
        self.expectations.deletion_observed(&key, &key_of(&pod.metadata));
        queue.add(key);
    }

    /// Upstream `resolveControllerRef`, also checking the API group (`apps`).
    fn resolve_controller_ref(&self, pod: &Pod, owner: &OwnerReference) -> Option<Arc<ReplicaSet>> {
        if owner.api_version.split('/').next() != Some("apps") {
            return None;
        }
        resolve_controller_ref(&self.replicasets, pod.metadata.namespace.as_deref(), owner)
    }

    /// Enqueues every ReplicaSet that may adopt the orphan `pod`.
    fn enqueue_matching(&self, queue: &Queue, pod: &Pod) {
        for rs in self.pod_replicasets(pod) {
            self.enqueue(queue, &rs);
        }
    }

    /// Upstream `GetPodReplicaSets`: the ReplicaSets of the pod's namespace
    /// whose selector matches its labels. An empty selector matches nothing
    /// here, as upstream.
    fn pod_replicasets(&self, pod: &Pod) -> Vec<Arc<ReplicaSet>> {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        let labels = pod.metadata.labels.as_ref();
        self.replicasets
            .by_index(NAMESPACE_INDEX, ns)
            .into_iter()
            .filter(|rs| {
                rs.spec.as_ref().is_some_and(|s| {
                    let selector = selector_of(&s.selector);
                    !selector.is_empty() && selector.matches(&labels)
                })
            })
            .collect()
    }
}
