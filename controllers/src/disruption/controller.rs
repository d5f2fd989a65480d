//! The disruption controller's wiring: informer events → budget keys → workers.
//!
//! Upstream: `pkg/controller/disruption/disruption.go` (`NewDisruptionControllerInternal`, `Run`,
//! `addDB`/`updateDB`/`removeDB`, `addPod`/`updatePod`/`deletePod`, `getPdbForPod`). The sync
//! is [`super::sync::DisruptionSync::sync_pdb`].
//!
//! ```text
//! PDB informer ── add/update/delete ──▶ key of the budget ───────────┐
//! Pod informer ── add/update/delete ──▶ keys of the budgets whose    ├─▶ WorkQueue ─▶ workers ─▶ sync
//!                                       selector matches the pod ─────┘
//! RC, ReplicaSet, Deployment, StatefulSet informers: caches only (their scale), waited for
//! ```
//!
//! Simplified against upstream: a pod matching several budgets wakes them all (upstream picks
//! one and records `MultiplePodDisruptionBudgets`); the recheck queue is the work queue's
//! `RequeueAfter`; the stale `DisruptionTarget` pod condition is not cleaned up (nothing here
//! sets it).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::finders::Controllers;
use super::sync::DisruptionSync;
use crate::controller_utils::selector::selector_of;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, Store, TracingClient,
    WorkQueue, key_of,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "disruption";

/// The informers the controller reads.
pub struct DisruptionInformers<'a> {
    pub pdbs: &'a Informer<PodDisruptionBudget>,
    pub pods: &'a Informer<Pod>,
    pub replication_controllers: &'a Informer<ReplicationController>,
    pub replicasets: &'a Informer<ReplicaSet>,
    pub deployments: &'a Informer<Deployment>,
    pub statefulsets: &'a Informer<StatefulSet>,
}

/// The disruption controller: build it with [`DisruptionController::new`] before the informers
/// run, then [`DisruptionController::run`] it.
pub struct DisruptionController {
    sync: Arc<DisruptionSync>,
    feeds: Feeds<String>,
}

impl DisruptionController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        informers: DisruptionInformers<'_>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let controllers = Controllers {
            replication_controllers: informers.replication_controllers.store(),
            replicasets: informers.replicasets.store(),
            deployments: informers.deployments.store(),
            statefulsets: informers.statefulsets.store(),
        };
        let sync = DisruptionSync::new(
            client,
            clock.clone(),
            recorder,
            informers.pdbs.store(),
            informers.pods.store(),
            controllers,
        );
        let pdbs = informers.pdbs.store();
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(informers.pdbs, on_pdb);
        feeds.watch_keys(informers.pods, move |change| on_pod(&pdbs, change));
        // Read only through their caches; watched so the workers wait until they have synced.
        feeds.watch_keys(informers.replication_controllers, |_| Vec::new());
        feeds.watch_keys(informers.replicasets, |_| Vec::new());
        feeds.watch_keys(informers.deployments, |_| Vec::new());
        feeds.watch_keys(informers.statefulsets, |_| Vec::new());
        DisruptionController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: handlers at once, `workers` workers once every cache has synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for DisruptionSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_pdb(&key).await })
    }
}

/// Upstream `addDB` / `updateDB` / `removeDB`: the budget's own key.
fn on_pdb(change: &Change<PodDisruptionBudget>) -> Vec<String> {
    let pdb = match change {
        Change::Added(p) | Change::Deleted(p) | Change::Updated { new: p, .. } => p,
    };
    vec![key_of(&pdb.metadata)]
}

/// Upstream `addPod` / `updatePod` / `deletePod`: the budgets of the pod (on an update, of the
/// old labels too, so a budget the pod left recounts).
fn on_pod(pdbs: &Store<PodDisruptionBudget>, change: &Change<Pod>) -> Vec<String> {
    let mut keys = match change {
        Change::Added(p) | Change::Deleted(p) => pod_pdbs(pdbs, p),
        Change::Updated { old, new } => {
            let mut keys = pod_pdbs(pdbs, new);
            if old.metadata.labels != new.metadata.labels {
                keys.extend(pod_pdbs(pdbs, old));
            }
            keys
        }
    };
    keys.sort();
    keys.dedup();
    keys
}

/// Upstream `GetPodPodDisruptionBudgets` (policy/v1): the budgets of the pod's namespace whose
/// selector matches its labels; `{}` matches every pod, no selector none.
pub fn pod_pdbs(pdbs: &Store<PodDisruptionBudget>, pod: &Pod) -> Vec<String> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    let labels = pod.metadata.labels.as_ref();
    pdbs.by_index(NAMESPACE_INDEX, ns)
        .into_iter()
        .filter(|pdb| {
            pdb.spec
                .as_ref()
                .and_then(|s| s.selector.as_ref())
                .is_some_and(|s| selector_of(s).matches(&labels))
        })
        .map(|pdb| key_of(&pdb.metadata))
        .collect()
}
