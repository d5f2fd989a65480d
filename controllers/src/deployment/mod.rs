//! The Deployment controller: rolls a pod template out through ReplicaSets.
//!
//! Upstream: `pkg/controller/deployment/` and `pkg/controller/deployment/util/`. Laid out as every
//! controller here (see the ReplicaSet controller for the same files):
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers → handlers (change → keys) → queue; `impl Reconciler`; `run` | `deployment_controller.go`: event handlers, `Run` |
//! | [`sync`] | one sync: read the caches → claim the ReplicaSets → [`plan`] → apply the steps | `deployment_controller.go`: `syncDeployment`; the writes of `sync.go` |
//! | [`plan`] | pure: the ordered [`plan::Step`]s of one sync, and its [`decisions`] for the causal journal | `deployment_controller.go`: `syncDeployment`; `sync.go`: `getNewReplicaSet` and friends |
//! | [`rolling`] | pure: the RollingUpdate strategy | `rolling.go` |
//! | [`recreate`] | pure: the Recreate strategy | `recreate.go` |
//! | [`scale`] | pure: proportional scaling, history cleanup | `sync.go`: `scale`, `cleanupDeployment` |
//! | [`status`] | pure: status and conditions | `sync.go`: `calculateStatus`, `checkPausedConditions`; `progress.go` |
//! | [`util`] | pure: helpers of the above | `util/deployment_util.go`, `ComputeHash` and ReplicaSet orderings from `controller_utils.go` |
//! | `tests/` | `controller.rs` against a real API; `plan.rs` upstream table cases | `deployment_controller_test.go`, `sync_test.go`, ... |
//!
//! Only [`controller`] and [`sync`] perform IO; the rest reads no clock (`now` is a parameter, read
//! once per sync with [`crate::runtime::clock_now`]). Adoption and release of ReplicaSets are
//! [`crate::controller_ref_manager`].
//!
//! A sync is: read the Deployment, the ReplicaSets it controls and their pods from the cache, call
//! [`plan::plan_rollout`], then apply the returned [`plan::Step`]s in order, stopping at the first
//! failure.

pub mod controller;
pub mod decisions;
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
