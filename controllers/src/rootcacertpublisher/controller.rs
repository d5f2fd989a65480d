//! The root CA publisher's wiring: namespace and ConfigMap changes →
//! namespace names → workers.
//!
//! Upstream: `pkg/controller/certificates/rootcacertpublisher/publisher.go`
//! (`NewPublisher`, the handlers, `Run`).
//!
//! ```text
//! Namespace informer ── add; update while Active ──────────▶ its name ─┐
//! ConfigMap informer ── update / delete of kube-root-ca.crt ▶ its namespace ─┴─▶ WorkQueue ─▶ sync_namespace
//! ```
//!
//! Simplified against upstream: no tombstones, no metrics; the ConfigMap
//! informer caches every ConfigMap (upstream's does too).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::plan::ROOT_CA_CONFIG_MAP;
use super::sync::RootCaPublisherSync;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, TracingClient, WorkQueue,
};
use crate::serviceaccount::plan::is_active;

/// The controller's name (upstream's queue is `root_ca_cert_publisher`; its
/// client is `root-ca-cert-publisher`).
pub const NAME: &str = "root-ca-cert-publisher";

/// The publisher: build it with [`RootCaPublisher::new`] before the
/// informers run, then [`RootCaPublisher::run`] it.
pub struct RootCaPublisher {
    sync: Arc<RootCaPublisherSync>,
    feeds: Feeds<String>,
}

impl RootCaPublisher {
    /// Wires the publisher of `root_ca` (PEM) to the two informers.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        root_ca: String,
        namespaces: &Informer<Namespace>,
        config_maps: &Informer<ConfigMap>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = RootCaPublisherSync::new(client, root_ca, namespaces.store(), config_maps.store());
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(namespaces, namespace_changed);
        feeds.watch_keys(config_maps, config_map_changed);
        RootCaPublisher {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: `workers` workers once both caches have synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for RootCaPublisherSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_namespace(&key).await })
    }
}

/// Upstream `namespaceAdded` (every new namespace) and `namespaceUpdated`
/// (only while it is Active).
fn namespace_changed(change: &Change<Namespace>) -> Vec<String> {
    match change {
        Change::Added(ns) => ns.metadata.name.iter().cloned().collect(),
        Change::Updated { new, .. } if is_active(new) => new.metadata.name.iter().cloned().collect(),
        Change::Updated { .. } | Change::Deleted(_) => Vec::new(),
    }
}

/// Upstream `configMapUpdated` / `configMapDeleted`: a change to a
/// `kube-root-ca.crt` syncs its namespace.
fn config_map_changed(change: &Change<ConfigMap>) -> Vec<String> {
    let cm = match change {
        Change::Updated { new, .. } => new,
        Change::Deleted(cm) => cm,
        Change::Added(_) => return Vec::new(),
    };
    if cm.metadata.name.as_deref() != Some(ROOT_CA_CONFIG_MAP) {
        return Vec::new();
    }
    cm.metadata.namespace.iter().cloned().collect()
}
