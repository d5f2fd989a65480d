//! The ServiceAccounts controller's wiring: namespace and ServiceAccount
//! changes → namespace names → workers.
//!
//! Upstream: `pkg/controller/serviceaccount/serviceaccounts_controller.go`
//! (`NewServiceAccountsController`, the handlers, `Run`).
//!
//! ```text
//! Namespace informer      ── add / update ──▶ its name ─┐
//! ServiceAccount informer ── delete ────────▶ its namespace ─┴─▶ WorkQueue ─▶ workers ─▶ sync_namespace
//! ```
//!
//! Simplified against upstream: no tombstones; the handlers run on
//! [`Feeds`] tasks.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::ServiceAccountsSync;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, TracingClient, WorkQueue,
};

/// The controller's name: the queue's, the trace's and its client's.
pub const NAME: &str = "serviceaccount-controller";

/// The ServiceAccounts controller: build it with
/// [`ServiceAccountsController::new`] before the informers run, then
/// [`ServiceAccountsController::run`] it.
pub struct ServiceAccountsController {
    sync: Arc<ServiceAccountsSync>,
    feeds: Feeds<String>,
}

impl ServiceAccountsController {
    /// Wires the controller to the two informers (subscribing to both, so
    /// call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        namespaces: &Informer<Namespace>,
        service_accounts: &Informer<ServiceAccount>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = ServiceAccountsSync::new(client, namespaces.store(), service_accounts.store());
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(namespaces, namespace_changed);
        feeds.watch_keys(service_accounts, service_account_changed);
        ServiceAccountsController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: `workers` workers once both caches have synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for ServiceAccountsSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_namespace(&key).await })
    }
}

/// Upstream `namespaceAdded` / `namespaceUpdated`: the namespace syncs.
fn namespace_changed(change: &Change<Namespace>) -> Vec<String> {
    match change {
        Change::Added(ns) | Change::Updated { new: ns, .. } => ns.metadata.name.iter().cloned().collect(),
        Change::Deleted(_) => Vec::new(),
    }
}

/// Upstream `serviceAccountDeleted`: the namespace of a deleted account
/// syncs, so that an ensured account comes back.
fn service_account_changed(change: &Change<ServiceAccount>) -> Vec<String> {
    match change {
        Change::Deleted(sa) => sa.metadata.namespace.iter().cloned().collect(),
        Change::Added(_) | Change::Updated { .. } => Vec::new(),
    }
}
