//! The Deployment controller's planning core: pure functions that decide what one sync of a
//! Deployment should do. Nothing here performs I/O or reads a clock; `now` is always a parameter.
//!
//! Upstream: `pkg/controller/deployment/` and `pkg/controller/deployment/util/`.
//!
//! | file | upstream |
//! |---|---|
//! | [`util`] | `util/deployment_util.go`, `ComputeHash` and ReplicaSet orderings from `controller_utils.go` |
//! | [`rolling`] | `rolling.go` |
//! | [`recreate`] | `recreate.go` |
//! | [`scale`] | `sync.go`: `scale`, `cleanupDeployment` |
//! | [`status`] | `sync.go`: `calculateStatus`, `checkPausedConditions`; `progress.go` |
//! | [`plan`] | `deployment_controller.go`: `syncDeployment`; `sync.go`: `getNewReplicaSet` and friends |
//!
//! A sync is: read the Deployment, the ReplicaSets it controls and their pods from the cache, call
//! [`plan::plan_rollout`], then apply the returned [`plan::Action`]s in order, stopping at the first
//! failure.

pub mod plan;
pub mod recreate;
pub mod rolling;
pub mod scale;
pub mod status;
pub mod util;

#[cfg(test)]
mod tests;
