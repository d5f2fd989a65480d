//! The DaemonSet controller: keeps one pod of each DaemonSet on every node that should run it,
//! and replaces them when the template changes (RollingUpdate with maxUnavailable / maxSurge, or
//! OnDelete), recording each template as a ControllerRevision.
//!
//! Upstream: `pkg/controller/daemon/`. Laid out as every controller here:
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers (DaemonSets, pods, nodes, revisions) → handlers → queue; `impl Reconciler`; `run` | `daemon_controller.go`: `NewDaemonSetsController`, the `add*`/`update*`/`delete*` handlers, `Run` |
//! | [`sync`] | one sync: history → claim pods → manage → rolling update → cleanup → status | `daemon_controller.go`: `syncDaemonSet`, `manage`, `syncNodes`, `updateDaemonSetStatus`; `update.go`: `constructHistory`, `snapshot`, `cleanupHistory` |
//! | [`placement`] | pure: should a node run the DaemonSet, default tolerations, the pod pinned to a node | `daemon_controller.go`: `NodeShouldRunDaemonPod`, `predicates`; `util/daemonset_util.go` |
//! | [`plan`] | pure: `manage` — nodes needing a pod, pods to delete (failed, extra, misplaced) | `daemon_controller.go`: `podsShouldBeOnNode`, `getUnscheduledPodsWithoutNode` |
//! | [`update`] | pure: the RollingUpdate pass, with and without surge | `update.go`: `rollingUpdate`, `findUpdatedPodsOnNode`, `updatedDesiredNodeCounts`; `util`: `SurgeCount`, `UnavailableCount` |
//! | [`history`] | pure: revision data, matching, snapshot object, dedup and cleanup choices | `update.go`: `getPatch`, `Match`, `snapshot`, `dedupCurHistories`, `cleanupHistory` |
//! | [`status`] | pure: the status counters | `daemon_controller.go`: `updateDaemonSetStatus`, `storeDaemonSetStatus` |
//! | [`decisions`] | pure: the sentences the sync records in the causal journal (`manage`'s nodes and reasons, the backoff wait, the rolling update's arithmetic) | `daemon_controller.go` `manage`, `podsShouldBeOnNode`; `update.go` `rollingUpdate` |
//! | [`backoff`] | pure: the per-node backoff between deletions of failed pods | client-go `util/flowcontrol/backoff.go` |
//! | `tests/` | `controller.rs` against a real API (paused time); `placement.rs`, `plan.rs`, `update.rs`, `status.rs`, `history.rs`, `handlers.rs` table tests; `fixtures.rs` | `daemon_controller_test.go`, `update_test.go`, `util/daemonset_util_test.go` |
//! | `properties.rs` | a surge update never leaves a node without an available pod | — |
//!
//! Only [`controller`] and [`sync`] perform IO. The generic revision helpers are
//! [`crate::history`]; the pod-template hash is the Deployment controller's
//! ([`crate::deployment::util::compute_hash`]); claiming is [`crate::controller_ref_manager`].
//!
//! Where to start reading: [`sync::DaemonSetsSync::sync_daemon_set`], then
//! [`placement::node_should_run_daemon_pod`], [`plan::manage`] and [`update::rolling_update`].

pub mod backoff;
pub mod controller;
pub mod decisions;
pub mod history;
pub mod placement;
pub mod plan;
pub mod status;
pub mod sync;
pub mod update;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
