//! The ClusterRole aggregation controller: keeps the `rules` of every
//! ClusterRole with an `aggregationRule` equal to the union of the rules
//! of the ClusterRoles its `clusterRoleSelectors` match (this is how
//! `admin`, `edit` and `view` grow when a CRD's install labels a role
//! `rbac.authorization.k8s.io/aggregate-to-view: "true"`).
//!
//! Upstream: `pkg/controller/clusterroleaggregation/`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | the ClusterRole informer → every aggregating role's key → queue; `impl Reconciler`; `run` | `clusterroleaggregation_controller.go`: `NewClusterRoleAggregation`, `enqueue`, `Run` |
//! | [`sync`] | one sync: read the cache → [`plan`] → write the rules | `syncClusterRole`, `applyClusterRoles` |
//! | [`plan`] | pure: the aggregated rules, or nothing to do | `syncClusterRole`'s loop, `ruleExists` |
//! | `tests/` | `controller.rs` against a real API; `plan.rs` table tests | `clusterroleaggregation_controller_test.go` |
//!
//! Where to start reading: [`sync::AggregationSync::sync_cluster_role`],
//! then [`plan::aggregate_rules`].

pub mod controller;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
