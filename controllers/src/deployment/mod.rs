//! The Deployment controller. Its planning core ([`plan`] and the files it dispatches to) is pure
//! functions that decide what one sync of a Deployment should do: no I/O, no clock (`now` is always a
//! parameter). [`sync`] does the I/O of one sync and [`controller`] wires informers to the work queue.
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
//! | [`sync`] | `deployment_controller.go`: `syncDeployment`, ReplicaSet adoption; the writes of `sync.go` |
//! | [`controller`] | `deployment_controller.go`: event handlers, `Run` |
//! | [`plan`] | `deployment_controller.go`: `syncDeployment`; `sync.go`: `getNewReplicaSet` and friends |
//!
//! A sync is: read the Deployment, the ReplicaSets it controls and their pods from the cache, call
//! [`plan::plan_rollout`], then apply the returned [`plan::Step`]s in order, stopping at the first
//! failure.

pub mod controller;
pub mod plan;
pub mod recreate;
pub mod rolling;
pub mod scale;
pub mod status;
pub mod sync;
pub mod util;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
