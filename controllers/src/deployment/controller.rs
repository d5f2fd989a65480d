//! The Deployment controller: which changes wake which Deployment, and the worker loop.
//!
//! Upstream: `pkg/controller/deployment/deployment_controller.go` (`NewDeploymentController`, the
//! `add`/`update`/`delete` handlers for Deployments, ReplicaSets and Pods, `getDeploymentsForReplicaSet`,
//! `getDeploymentForPod`, `resolveControllerRef`, `Run`). The sync itself is in [`super::sync`].
//!
//! | change | enqueued |
//! | --- | --- |
//! | any Deployment change | that Deployment |
//! | ReplicaSet with a controller reference to a Deployment | that Deployment (and the previous controller, if it changed) |
//! | orphan ReplicaSet added, or relabelled / released | every Deployment of its namespace whose selector matches (adoption) |
//! | ReplicaSet deleted | its controlling Deployment |
//! | Pod deleted | its Deployment, if that uses `Recreate` and has no pods left |
//!
//! Simplified: one key type (`namespace/name`), no metrics, and ReplicaSet resyncs (same
//! resourceVersion) are ignored as upstream does; Deployment resyncs are not. The handlers only map
//! a change to keys (no expectations), so they run on [`Feeds::watch_keys`] tasks instead of
//! informer callbacks.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::DeploymentSync;
use crate::controller_ref_manager::resolve_controller_ref;
use crate::controller_utils::selector::selector_of;
use crate::runtime::informer::{NAMESPACE_INDEX, OWNER_INDEX};
use crate::runtime::{
    Action, BoxFuture, Change, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, Store,
    TracingClient, WorkQueue, get_controller_of, key_of,
};

/// The controller's name, in the trace and the logs.
pub const NAME: &str = "deployment";

/// The Deployment controller. Build it before the informers run, then [`DeploymentController::run`].
pub struct DeploymentController {
    sync: Arc<DeploymentSync>,
    feeds: Feeds<String>,
}

impl DeploymentController {
    /// Subscribes to the three informers (call before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        deployments: &Informer<Deployment>,
        replicasets: &Informer<ReplicaSet>,
        pods: &Informer<Pod>,
    ) -> Self {
        let handlers = Arc::new(EventHandlers::new(
            deployments.store(),
            replicasets.store(),
            pods.store(),
        ));
        let client = TracingClient::wrap(client, NAME);
        let sync = DeploymentSync::new(
            client,
            clock.clone(),
            recorder,
            deployments.store(),
            replicasets.store(),
            pods.store(),
        );
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        let h = handlers.clone();
        feeds.watch_keys(deployments, move |c| h.on_deployment(c));
        let h = handlers.clone();
        feeds.watch_keys(replicasets, move |c| h.on_replica_set(c));
        feeds.watch_keys(pods, move |c| handlers.on_pod(c));
        DeploymentController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Turns changes into keys and, once the caches have synced, runs `workers` workers until
    /// `shutdown`; returns once they stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for DeploymentSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_deployment(&key).await })
    }
}

/// The event handlers: each maps one change to the Deployments to sync, reading the caches.
pub struct EventHandlers {
    deployments: Store<Deployment>,
    replicasets: Store<ReplicaSet>,
    pods: Store<Pod>,
}

impl EventHandlers {
    /// Handlers over the three caches.
    pub fn new(deployments: Store<Deployment>, replicasets: Store<ReplicaSet>, pods: Store<Pod>) -> Self {
        EventHandlers {
            deployments,
            replicasets,
            pods,
        }
    }

    /// `addDeployment` / `updateDeployment` / `deleteDeployment`: the Deployment itself.
    pub fn on_deployment(&self, change: &Change<Deployment>) -> Vec<String> {
        let d = match change {
            Change::Added(d) | Change::Deleted(d) | Change::Updated { new: d, .. } => d,
        };
        vec![key_of(&d.metadata)]
    }

    /// `addReplicaSet` / `updateReplicaSet` / `deleteReplicaSet`.
    pub fn on_replica_set(&self, change: &Change<ReplicaSet>) -> Vec<String> {
        match change {
            Change::Added(rs) if rs.metadata.deletion_timestamp.is_some() => self.owner_key(&rs.metadata),
            Change::Added(rs) => self.owner_or_matching(&rs.metadata),
            Change::Updated { old, new } => self.on_replica_set_update(&old.metadata, &new.metadata),
            Change::Deleted(rs) => self.owner_key(&rs.metadata),
        }
    }

    fn on_replica_set_update(&self, old: &ObjectMeta, new: &ObjectMeta) -> Vec<String> {
        if old.resource_version == new.resource_version {
            // A resync: nothing changed.
            return Vec::new();
        }
        let old_ref = get_controller_of(old);
        let new_ref = get_controller_of(new);
        let ref_changed = old_ref != new_ref;
        let mut keys = Vec::new();
        if ref_changed && old_ref.is_some() {
            // The previous controller must learn it lost this ReplicaSet.
            keys.extend(self.owner_key(old));
        }
        if new_ref.is_some() {
            keys.extend(self.owner_key(new));
        } else if ref_changed || old.labels != new.labels {
            // An orphan that may now match someone: let them try to adopt it.
            keys.extend(self.matching_deployments(new));
        }
        keys
    }

    /// A controlled ReplicaSet wakes its controller; an orphan wakes every matching Deployment.
    fn owner_or_matching(&self, rs: &ObjectMeta) -> Vec<String> {
        if get_controller_of(rs).is_some() {
            self.owner_key(rs)
        } else {
            self.matching_deployments(rs)
        }
    }

    /// The key of the Deployment controlling `obj`, if the reference resolves.
    fn owner_key(&self, obj: &ObjectMeta) -> Vec<String> {
        let Some(owner) = get_controller_of(obj) else {
            return Vec::new();
        };
        resolve_controller_ref(&self.deployments, obj.namespace.as_deref(), owner)
            .map(|d| key_of(&d.metadata))
            .into_iter()
            .collect()
    }

    /// Upstream `getDeploymentsForReplicaSet`: Deployments of the namespace whose (non-empty)
    /// selector matches the ReplicaSet's labels.
    fn matching_deployments(&self, rs: &ObjectMeta) -> Vec<String> {
        let ns = rs.namespace.as_deref().unwrap_or("");
        let mut keys = Vec::new();
        for d in self.deployments.by_index(NAMESPACE_INDEX, ns) {
            let Some(spec) = d.spec.as_ref() else { continue };
            let selector = selector_of(&spec.selector);
            if !selector.is_empty() && selector.matches(&rs.labels.as_ref()) {
                keys.push(key_of(&d.metadata));
            }
        }
        keys
    }

    /// `deletePod`: a Recreate Deployment waits for its old pods to be gone, so the deletion of
    /// its last pod wakes it. Other pod changes do not matter to Deployments.
    pub fn on_pod(&self, change: &Change<Pod>) -> Vec<String> {
        let Change::Deleted(pod) = change else {
            return Vec::new();
        };
        let Some(d) = self.deployment_for_pod(pod) else {
            return Vec::new();
        };
        let recreate = d
            .spec
            .as_ref()
            .and_then(|s| s.strategy.as_ref())
            .and_then(|s| s.type_.as_deref())
            == Some("Recreate");
        if recreate && self.pod_count(&d) == 0 {
            vec![key_of(&d.metadata)]
        } else {
            Vec::new()
        }
    }

    /// Upstream `getDeploymentForPod`: pod → controlling ReplicaSet → controlling Deployment.
    fn deployment_for_pod(&self, pod: &Pod) -> Option<Arc<Deployment>> {
        let owner = get_controller_of(&pod.metadata)?;
        let ns = pod.metadata.namespace.as_deref();
        let rs = resolve_controller_ref(&self.replicasets, ns, owner)?;
        let rs_owner = get_controller_of(&rs.metadata)?;
        resolve_controller_ref(&self.deployments, ns, rs_owner)
    }

    /// How many cached pods the Deployment's ReplicaSets control.
    fn pod_count(&self, d: &Deployment) -> usize {
        let Some(uid) = d.metadata.uid.as_deref() else {
            return 0;
        };
        self.replicasets
            .by_index(OWNER_INDEX, uid)
            .iter()
            .filter_map(|rs| rs.metadata.uid.clone())
            .map(|rs_uid| self.pods.by_index(OWNER_INDEX, &rs_uid).len())
            .sum()
    }
}
