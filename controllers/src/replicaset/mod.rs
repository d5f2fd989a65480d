//! The ReplicaSet controller: keeps `spec.replicas` pods running that match its selector.
//!
//! Upstream: `pkg/controller/replicaset/`. Laid out as every controller here (see the Deployment
//! controller for the same files):
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers → handlers (change → keys, expectations) → queue; `impl Reconciler`; `run` | `replica_set.go`: `NewBaseController`, the `add*`/`update*`/`delete*` handlers, `Run` |
//! | [`sync`] | one sync: read the caches → claim the pods → [`plan`] → create / delete → status | `replica_set.go`: `syncReplicaSet`, `manageReplicas`; `replica_set_utils.go`: `updateReplicaSetStatus` |
//! | [`plan`] | pure: how many pods to create, or which ones to delete | `replica_set.go`: `manageReplicas`, `getPodsToDelete` |
//! | [`status`] | pure: the counters and the `ReplicaFailure` condition | `replica_set_utils.go`: `calculateStatus` |
//! | `tests/` | `controller.rs` against a real API; `plan.rs`, `status.rs` table tests; `fixtures.rs` | `replica_set_test.go` |
//!
//! Only [`controller`] and [`sync`] perform IO; [`plan`] and [`status`] read no clock (`now` is a
//! parameter, read once per sync with [`crate::runtime::clock_now`]). The pod predicates, deletion
//! ranking, slow start and pods from templates are [`crate::controller_utils`]; adoption and release
//! are [`crate::controller_ref_manager`].
//!
//! Where to start reading: [`sync::ReplicaSetSync::sync_replica_set`], then
//! [`plan::plan_replicas`] and [`status::calculate_status`].

pub mod controller;
pub mod plan;
pub mod status;
pub mod sync;

#[cfg(test)]
mod properties;
#[cfg(test)]
pub(crate) mod tests;
