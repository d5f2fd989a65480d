//! The Endpoints controller's wiring: Service, Pod and Endpoints changes →
//! service keys → workers.
//!
//! Upstream: `pkg/controller/endpoint/endpoints_controller.go`
//! (`NewEndpointController`, `onServiceUpdate`, `onServiceDelete`,
//! `addPod`, `updatePod`, `deletePod`, `onEndpointsDelete`, `Run`) and
//! `staging/src/k8s.io/endpointslice/util/controller_utils.go`
//! (`GetPodServiceMemberships`, `GetServicesToUpdateOnPodChange`,
//! `podEndpointsChanged`).
//!
//! ```text
//! Service informer   ── add / update / delete ─────────▶ its key ──────────────────┐
//! Pod informer       ── add / delete ──▶ the Services selecting it ────────────────┼─▶ WorkQueue ─▶ sync_service
//!                    ── update ───────▶ (labels changed: old and new Services;    │
//!                                        else, if its endpoint changed: its own) │
//! Endpoints informer ── delete ────────▶ the Service of that name ─────────────────┘
//! ```
//!
//! Simplified against upstream: no tombstones; no batching of pod updates
//! (`endpointUpdatesBatchPeriod` is 0 by default upstream too).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::pods::service_selects;
use super::sync::EndpointsSync;
use crate::controller_utils::pods::is_pod_ready;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Store, TracingClient, WorkQueue,
    key_of,
};

/// The controller's name: the queue's, the trace's and its client's.
pub const NAME: &str = "endpoint-controller";

/// The Endpoints controller: build it with [`EndpointsController::new`]
/// before the informers run, then [`EndpointsController::run`] it.
pub struct EndpointsController {
    sync: Arc<EndpointsSync>,
    feeds: Feeds<String>,
}

impl EndpointsController {
    /// Wires the controller to the three informers (subscribing to each, so
    /// call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        services: &Informer<Service>,
        pods: &Informer<Pod>,
        endpoints: &Informer<Endpoints>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = EndpointsSync::new(client, services.store(), pods.store(), endpoints.store());
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(services, service_changed);
        let selecting = services.store();
        feeds.watch_keys(pods, move |change| services_to_update(&selecting, change));
        feeds.watch_keys(endpoints, endpoints_changed);
        EndpointsController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: `workers` workers once the caches have synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for EndpointsSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_service(&key).await })
    }
}

/// Upstream `onServiceUpdate` / `onServiceDelete`: the Service syncs.
pub fn service_changed(change: &Change<Service>) -> Vec<String> {
    match change {
        Change::Added(s) | Change::Updated { new: s, .. } | Change::Deleted(s) => vec![key_of(&s.metadata)],
    }
}

/// Upstream `onEndpointsDelete`: deleted Endpoints are put back by their
/// Service's sync.
fn endpoints_changed(change: &Change<Endpoints>) -> Vec<String> {
    match change {
        Change::Deleted(e) => vec![key_of(&e.metadata)],
        Change::Added(_) | Change::Updated { .. } => Vec::new(),
    }
}

/// Upstream `GetPodServiceMemberships`: the keys of the Services of the
/// pod's namespace whose selector picks it.
pub fn pod_service_memberships(services: &Store<Service>, pod: &Pod) -> Vec<String> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    services
        .by_index(NAMESPACE_INDEX, ns)
        .iter()
        .filter(|s| service_selects(s, pod))
        .map(|s| key_of(&s.metadata))
        .collect()
}

/// Upstream `GetServicesToUpdateOnPodChange`: a new or deleted pod syncs
/// its Services; an update syncs the Services of the old and the new labels
/// when they differ, else the pod's Services when something an endpoint
/// shows changed (upstream `podEndpointsChanged`).
pub fn services_to_update(services: &Store<Service>, change: &Change<Pod>) -> Vec<String> {
    match change {
        Change::Added(pod) | Change::Deleted(pod) => pod_service_memberships(services, pod),
        Change::Updated { old, new } => {
            if old.metadata.resource_version == new.metadata.resource_version {
                return Vec::new();
            }
            if old.metadata.labels != new.metadata.labels {
                let mut keys = pod_service_memberships(services, old);
                keys.extend(pod_service_memberships(services, new));
                keys.sort();
                keys.dedup();
                return keys;
            }
            if pod_endpoints_changed(old, new) {
                pod_service_memberships(services, new)
            } else {
                Vec::new()
            }
        }
    }
}

/// Upstream `podEndpointsChanged`: readiness, deletion, IPs, node, name,
/// hostname or subdomain, or the container ports differ.
pub fn pod_endpoints_changed(old: &Pod, new: &Pod) -> bool {
    let ips = |p: &Pod| p.status.as_ref().map(|s| (s.pod_ip.clone(), s.pod_ips.clone()));
    let placement = |p: &Pod| {
        p.spec
            .as_ref()
            .map(|s| (s.node_name.clone(), s.hostname.clone(), s.subdomain.clone()))
    };
    let ports = |p: &Pod| {
        p.spec.as_ref().map(|s| {
            let containers = s.containers.iter().chain(s.init_containers.iter().flatten());
            containers.map(|c| c.ports.clone()).collect::<Vec<_>>()
        })
    };
    is_pod_ready(old) != is_pod_ready(new)
        || old.metadata.deletion_timestamp.is_some() != new.metadata.deletion_timestamp.is_some()
        || ips(old) != ips(new)
        || placement(old) != placement(new)
        || old.metadata.name != new.metadata.name
        || ports(old) != ports(new)
        || old.status.as_ref().and_then(|s| s.phase.clone())
            != new.status.as_ref().and_then(|s| s.phase.clone())
}
