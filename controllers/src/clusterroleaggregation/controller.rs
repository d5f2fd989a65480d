//! The aggregation controller's wiring: any ClusterRole change → every
//! aggregating ClusterRole's key → workers.
//!
//! Upstream: `NewClusterRoleAggregation`, `enqueue` and `Run` of
//! `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`.
//! As upstream, a change to any ClusterRole queues every ClusterRole that
//! has an `aggregationRule`: the set is small and which selector matches
//! which labels is cheaper to re-evaluate than to track.

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::ClusterRole;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::AggregationSync;
use crate::runtime::client::Typed;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Store, TracingClient, WorkQueue,
    key_of,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "clusterrole-aggregation";

/// The field manager upstream's controller writes with (the client's name).
pub const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";

/// Build with [`ClusterRoleAggregationController::new`] before the
/// informer runs, then [`ClusterRoleAggregationController::run`] it.
pub struct ClusterRoleAggregationController {
    sync: Arc<AggregationSync>,
    feeds: Feeds<String>,
}

impl ClusterRoleAggregationController {
    /// Wires the controller to the ClusterRole informer.
    pub fn new(client: Arc<dyn Client>, clock: Clock, cluster_roles: &Informer<ClusterRole>) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = AggregationSync::new(Typed::new(client), cluster_roles.store());
        let store = cluster_roles.store();
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(cluster_roles, move |_change: &Change<ClusterRole>| {
            aggregating_keys(&store)
        });
        ClusterRoleAggregationController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown` with `workers` workers.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

/// Upstream `enqueue`: the key of every ClusterRole with an aggregationRule.
fn aggregating_keys(cluster_roles: &Store<ClusterRole>) -> Vec<String> {
    cluster_roles
        .list()
        .iter()
        .filter(|r| r.aggregation_rule.is_some())
        .map(|r| key_of(&r.metadata))
        .collect()
}

impl Reconciler for AggregationSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_cluster_role(&key).await })
    }
}
