//! The NodeLifecycle controller: keeps each Node's conditions and taints telling the truth about
//! its kubelet — a node whose kubelet stopped posting status and renewing its Lease for the grace
//! period becomes `Unknown` (`NotReady`), tainted `node.kubernetes.io/unreachable` (`NoSchedule` and
//! `NoExecute`), and its pods are marked not Ready; a node that is Ready again loses those taints.
//! The `NoExecute` taint is what the taint-eviction controller ([`crate::tainteviction`]) evicts
//! pods for.
//!
//! Upstream: `pkg/controller/nodelifecycle/`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers (Node, Pod, Lease) → node names → queue; `impl Reconciler`; `run` | `node_lifecycle_controller.go`: `NewNodeLifecycleController`, `Run`, `podUpdated` |
//! | [`sync`] | one node: health → status write → events → taints → pods | `node_lifecycle_controller.go`: `monitorNodeHealth`, `processTaintBaseEviction`, `doNoScheduleTaintingPass`, `processPod`; `util/node/controller_utils.go`: `RecordNodeEvent`, `RecordNodeStatusChange` |
//! | [`health`] | pure: the grace periods; is the kubelet alive, which conditions become `Unknown` | `node_lifecycle_controller.go`: `tryUpdateNodeHealth`; `config/v1alpha1/defaults.go` |
//! | [`taints`] | pure: the taints the conditions call for, and the swap | `node_lifecycle_controller.go`: `nodeConditionToTaintKeyStatusMap`, `doNoExecuteTaintingPass`, `markNodeAsReachable`; `util/node/controller_utils.go`: `SwapNodeControllerTaint` |
//! | [`pods`] | pure: a pod's Ready condition set False | `util/node/controller_utils.go`: `MarkPodsNotReady`; `api/v1/pod/util.go`: `UpdatePodCondition` |
//! | `tests/` | `controller.rs` against a real API on paused time; `health.rs`, `taints.rs` tables | `node_lifecycle_controller_test.go` |
//! | `properties.rs` | property tests: the taint swap, the health decision over random heartbeat histories | |
//!
//! Where to start reading: [`sync::NodeLifecycleSync::sync_node`], then
//! [`health::try_update_node_health`].
//!
//! Simplified against upstream (each file says more): no zones, no disruption modes and no
//! eviction rate limit (a node is tainted as soon as it is not Ready); at high `--time-scale` the
//! grace periods never drop below a few real seconds ([`health::Periods::for_time_scale`]).

pub mod controller;
pub mod health;
pub mod pods;
pub mod sync;
pub mod taints;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
