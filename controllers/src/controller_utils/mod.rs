//! What every workload controller shares about pods: which are active, ready or available, which
//! to delete first, how many to create at once, and how to build one from a template.
//!
//! Upstream: `pkg/controller/controller_utils.go`, with the pod predicates of
//! `pkg/api/v1/pod/util.go`. The ReplicaSet controller uses all of it; the Deployment controller
//! the predicates and the selector; StatefulSet, DaemonSet and Job would use the rest. Claiming
//! (adopt / release) is [`crate::controller_ref_manager`]; expectations are
//! [`crate::runtime::expectations`].
//!
//! | module | upstream | what |
//! | --- | --- | --- |
//! | [`pods`] | `IsPodActive`, `IsPodReady`, `IsPodAvailable`, `podReadyTime`, `maxContainerRestarts` | predicates on one pod |
//! | [`ranking`] | `ActivePods`, `ActivePodsWithRanks`, `getPodsRankedByRelatedPodsOnSameNode` | deletion orders |
//! | [`slow_start`] | `slowStartBatch`, `SlowStartInitialBatchSize` | batch sizes 1, 2, 4, ... |
//! | [`template`] | `GetPodFromTemplate`, `getPodsPrefix`, `validateControllerRef` | a pod from a template |
//! | [`selector`] | metav1 `LabelSelectorAsSelector` | `spec.selector` as an `apiserver::labels::Selector` |
//!
//! Everything here is pure: no IO, no clock (`now` is a parameter). Names follow upstream in
//! snake_case.
//!
//! Simplified against upstream: the feature gates `PodDeletionCost` and `LogarithmicScaleDown` are
//! fixed on; Go's zero `metav1.Time` is an absent (`None`) timestamp; no `PodControl` interface
//! (the creates and deletes are the controllers' own, in their `sync.rs`).

pub mod pods;
pub mod ranking;
pub mod selector;
pub mod slow_start;
pub mod template;

#[cfg(test)]
mod tests;
