//! The StatefulSet controller's wiring: informer events → keys → workers.
//!
//! Upstream: `pkg/controller/statefulset/stateful_set.go` (`NewStatefulSetController`, `Run`,
//! `addPod`/`updatePod`/`deletePod`, `resolveControllerRef`, `getStatefulSetsForPod`,
//! `enqueueStatefulSet`). The sync is [`super::sync::StatefulSetSync::sync_stateful_set`].
//!
//! ```text
//! StatefulSet informer ── any change ─────────────▶ key of the set ─────────┐
//! Pod informer ── add ────▶ owner: creation observed; orphan: matching sets │
//!             ── update ──▶ deletionTimestamp set: deletion observed        ├─▶ WorkQueue ─▶ sync
//!                           became Ready with minReadySeconds: again later  │
//!             ── delete ──▶ owner: deletion observed ──────────────────────┘
//! ControllerRevision informer ── change ──▶ the owning set (a revision deleted by hand)
//! PVC informer ── (read by the sync; watched so its cache is synced before the workers run)
//! ```
//!
//! Simplified against upstream: no tombstones, no metrics; handlers run on [`Feeds`] tasks.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::{Caches, StatefulSetSync};
use crate::controller_ref_manager::resolve_controller_ref;
use crate::controller_utils::pods::is_pod_ready;
use crate::controller_utils::selector::selector_of;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, Store, TracingClient,
    UidTrackingControllerExpectations, WorkQueue, get_controller_of, key_of,
};

/// The queue the handlers feed.
type Queue = WorkQueue<String>;

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "statefulset";

/// Build it with [`StatefulSetController::new`] before the informers run, then run it.
pub struct StatefulSetController {
    sync: Arc<StatefulSetSync>,
    feeds: Feeds<String>,
}

impl StatefulSetController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        statefulsets: &Informer<StatefulSet>,
        pods: &Informer<Pod>,
        revisions: &Informer<ControllerRevision>,
        claims: &Informer<PersistentVolumeClaim>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let expectations = UidTrackingControllerExpectations::new(clock.clone());
        let sync = StatefulSetSync::new(
            client,
            clock.clone(),
            recorder,
            expectations.clone(),
            Caches {
                sets: statefulsets.store(),
                pods: pods.store(),
                revisions: revisions.store(),
                claims: claims.store(),
            },
        );
        let handlers = Arc::new(EventHandlers {
            sets: statefulsets.store(),
            expectations,
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let h = handlers.clone();
        feeds.watch(statefulsets, move |c, q| h.on_set(c, q));
        let h = handlers.clone();
        feeds.watch(pods, move |c, q| h.on_pod(c, q));
        feeds.watch(revisions, move |c, q| handlers.on_revision(c, q));
        feeds.watch_keys(claims, |_| Vec::new());
        StatefulSetController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// The expectations shared by the sync and the event handlers.
    pub fn expectations(&self) -> &UidTrackingControllerExpectations {
        self.sync.expectations()
    }

    /// Runs until `shutdown`: workers start once every cache has synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for StatefulSetSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_stateful_set(&key).await })
    }
}

/// The informer event handlers.
pub struct EventHandlers {
    sets: Store<StatefulSet>,
    expectations: UidTrackingControllerExpectations,
}

impl EventHandlers {
    /// Every set change syncs the set; a deleted set forgets its expectations.
    pub fn on_set(&self, change: &Change<StatefulSet>, queue: &Queue) {
        match change {
            Change::Added(set) => queue.add(key_of(&set.metadata)),
            Change::Updated { old, new } => {
                if old.metadata.uid != new.metadata.uid {
                    self.expectations.delete_expectations(&key_of(&old.metadata));
                }
                queue.add(key_of(&new.metadata));
            }
            Change::Deleted(set) => {
                let key = key_of(&set.metadata);
                self.expectations.delete_expectations(&key);
                queue.add(key);
            }
        }
    }

    /// Upstream `addPod` / `updatePod` / `deletePod`.
    pub fn on_pod(&self, change: &Change<Pod>, queue: &Queue) {
        match change {
            Change::Added(pod) => self.add_pod(queue, pod),
            Change::Updated { old, new } => self.update_pod(queue, old, new),
            Change::Deleted(pod) => self.delete_pod(queue, pod),
        }
    }

    /// A revision change wakes its owner (e.g. a revision deleted by hand is recreated).
    pub fn on_revision(&self, change: &Change<ControllerRevision>, queue: &Queue) {
        let revision = match change {
            Change::Added(r) | Change::Deleted(r) => r,
            Change::Updated { new, .. } => new,
        };
        if let Some(set) = self.resolve(&revision.metadata) {
            queue.add(key_of(&set.metadata));
        }
    }

    fn add_pod(&self, queue: &Queue, pod: &Pod) {
        if pod.metadata.deletion_timestamp.is_some() {
            self.delete_pod(queue, pod);
            return;
        }
        match self.resolve(&pod.metadata) {
            Some(set) => {
                let key = key_of(&set.metadata);
                self.expectations.creation_observed(&key);
                queue.add(key);
            }
            None if get_controller_of(&pod.metadata).is_none() => self.enqueue_matching(queue, pod),
            None => {}
        }
    }

    fn update_pod(&self, queue: &Queue, old: &Pod, new: &Pod) {
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        if new.metadata.deletion_timestamp.is_some() {
            self.delete_pod(queue, new);
            return;
        }
        let old_set = self.resolve(&old.metadata);
        let new_set = self.resolve(&new.metadata);
        if let Some(o) = &old_set
            && new_set.as_ref().is_none_or(|n| n.metadata.uid != o.metadata.uid)
        {
            queue.add(key_of(&o.metadata));
        }
        match new_set {
            Some(set) => {
                let key = key_of(&set.metadata);
                let min_ready = set.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
                if min_ready > 0 && !is_pod_ready(old) && is_pod_ready(new) {
                    queue.add_after(
                        key.clone(),
                        Duration::from_secs(u64::from(min_ready.unsigned_abs())),
                    );
                }
                queue.add(key);
            }
            None if get_controller_of(&new.metadata).is_none() => self.enqueue_matching(queue, new),
            None => {}
        }
    }

    fn delete_pod(&self, queue: &Queue, pod: &Pod) {
        let Some(set) = self.resolve(&pod.metadata) else {
            return;
        };
        let key = key_of(&set.metadata);
        self.expectations.deletion_observed(&key, &key_of(&pod.metadata));
        queue.add(key);
    }

    /// Upstream `resolveControllerRef`: the set the object's controller reference names.
    fn resolve(&self, meta: &ObjectMeta) -> Option<Arc<StatefulSet>> {
        let owner: &OwnerReference = get_controller_of(meta)?;
        if owner.kind != "StatefulSet" || owner.api_version.split('/').next() != Some("apps") {
            return None;
        }
        resolve_controller_ref(&self.sets, meta.namespace.as_deref(), owner)
    }

    /// Upstream `getStatefulSetsForPod`: the sets whose selector matches an orphan.
    fn enqueue_matching(&self, queue: &Queue, pod: &Pod) {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        let labels = pod.metadata.labels.as_ref();
        for set in self.sets.by_index(NAMESPACE_INDEX, ns) {
            let matches = set.spec.as_ref().is_some_and(|s| {
                let selector = selector_of(&s.selector);
                !selector.is_empty() && selector.matches(&labels)
            });
            if matches {
                queue.add(key_of(&set.metadata));
            }
        }
    }
}
