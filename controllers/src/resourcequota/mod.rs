//! The ResourceQuota controller: keeps each quota's `status.hard` equal to
//! its `spec.hard` and its `status.used` equal to what the objects of its
//! namespace use.
//!
//! Upstream: `pkg/controller/resourcequota/` with the usage evaluators of
//! `pkg/quota/v1/evaluator/core/` (here shared with quota admission:
//! [`apiserver::admission::quota_evaluator`]).
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | quota and pod informers → handlers (spec change, replenishment) → queue; `impl Reconciler`; `run` | `resource_quota_controller.go`: `NewController`, `addQuota`, `updateQuota`, `replenishQuota`, `Run` |
//! | [`sync`] | one sync: read the quota and the objects it counts → [`plan`] → status write | `resource_quota_controller.go`: `syncResourceQuotaFromKey`, `syncResourceQuota` |
//! | [`plan`] | pure: which resources a quota counts, and its new status | `syncResourceQuota`, `quota.CalculateUsage` |
//! | `tests/` | `plan.rs` table tests; `controller.rs` against a real API | `resource_quota_controller_test.go` |
//!
//! Admission charges a create to `status.used` before the object is stored;
//! this controller gives usage back when objects go (a pod deleted or
//! finished) and recomputes every quota on a resync period.
//!
//! Where to start reading: [`sync::ResourceQuotaSync::sync_resource_quota`],
//! then [`plan::plan_status`].

pub mod controller;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
