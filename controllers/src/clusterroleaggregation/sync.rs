//! One sync of an aggregating ClusterRole.
//!
//! Upstream: `syncClusterRole` and `applyClusterRoles` of
//! `pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go`.
//!
//! ```text
//! sync_cluster_role(key)
//!   not in cache, or no aggregationRule → Done
//!   plan = aggregate_rules(role, every cached ClusterRole)
//!   Nothing → Done;  SetRules(r) → write `rules: r`;  BadSelector → terminal error
//! ```
//!
//! Simplified: upstream writes the rules with a forced server-side apply
//! (field manager `clusterrole-aggregation-controller`); here a JSON merge
//! patch of `rules` (which replaces the list whole, as the apply does).

use k8s_openapi::api::rbac::v1::ClusterRole;
use serde_json::json;

use super::plan::{Plan, aggregate_rules};
use crate::runtime::client::{PatchType, Typed};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, split_key};

/// The cache the sync reads and the client it writes through.
pub struct AggregationSync {
    cluster_roles_api: Typed<ClusterRole>,
    cluster_roles: Store<ClusterRole>,
}

impl AggregationSync {
    /// A sync writing through `api` and reading `cluster_roles`.
    pub fn new(api: Typed<ClusterRole>, cluster_roles: Store<ClusterRole>) -> Self {
        AggregationSync {
            cluster_roles_api: api,
            cluster_roles,
        }
    }

    /// Upstream `syncClusterRole`.
    pub async fn sync_cluster_role(&self, key: &str) -> Result<Action, ReconcileError> {
        let (_, name) = split_key(key)?;
        let Some(role) = self.cluster_roles.get(None, name) else {
            return Ok(Action::Done);
        };
        match aggregate_rules(&role, &self.cluster_roles.list()) {
            Plan::Nothing => Ok(Action::Done),
            Plan::BadSelector(why) => Err(ReconcileError::terminal(format!(
                "clusterrole {name}: invalid clusterRoleSelector: {why}"
            ))),
            Plan::SetRules(rules) => {
                let patch = json!({"rules": rules});
                self.cluster_roles_api
                    .patch(None, name, PatchType::Merge, patch)
                    .await
                    .map_err(ReconcileError::from)?;
                Ok(Action::Done)
            }
        }
    }
}
