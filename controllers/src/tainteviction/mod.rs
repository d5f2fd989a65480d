//! The TaintEviction controller: evicts pods from nodes with `NoExecute` taints they do not
//! tolerate — at once when some taint is not tolerated at all, after the smallest
//! `tolerationSeconds` when every taint is tolerated for a while — and cancels the eviction if the
//! taints go away first. Evicted pods get the `DisruptionTarget` condition, then are deleted.
//!
//! Upstream: `pkg/controller/tainteviction/` (kube-controller-manager's
//! `taint-eviction-controller`, separate from the node lifecycle controller since
//! `SeparateTaintEvictionController`).
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers (Node, Pod) → pod keys → queue; `impl Reconciler`; `run` | `taint_eviction.go`: `New`, `Run`, `NodeUpdated`, `PodUpdated` |
//! | [`sync`] | one pod: schedule, cancel or carry out its eviction; events | `taint_eviction.go`: `handlePodUpdate`, `handleNodeUpdate`, `deletePodHandler`, `addConditionAndDeletePod`; `timed_workers.go` |
//! | [`plan`] | pure: taints, tolerations, the decision and its time | `taint_eviction.go`: `processPodOnNode`, `getNoExecuteTaints`, `getMinTolerationTime`; `v1/helper`: `GetMatchingTolerations` |
//! | `tests/` | `controller.rs` against a real API on paused time; `plan.rs` table | `taint_eviction_test.go` |
//!
//! Where to start reading: [`sync::TaintEvictionSync::sync_pod`], then [`plan::process_pod_on_node`].
//! The `NoExecute` taints it acts on mostly come from the node lifecycle controller
//! ([`crate::nodelifecycle`]); any other `NoExecute` taint (`kubectl taint`) counts the same.

pub mod controller;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
