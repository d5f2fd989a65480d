//! The ReplicaSet controller's pure core: what to create or delete, and what status to report.
//!
//! Nothing in this module performs IO or reads a clock: every function takes the objects it needs and,
//! where time matters, a `now` supplied by the caller (read once per sync from the injected clock).
//!
//! Where to start reading:
//! * [`plan::plan_replicas`] — upstream `manageReplicas`: how many pods to create, or which ones to delete.
//! * [`status::calculate_status`] — upstream `calculateStatus`: the counters and the `ReplicaFailure`
//!   condition.
//! * [`pod_util`] — the shared pod predicates (active, ready, available), the deletion ordering, the
//!   controller-ownerReference helpers, adoption/release decisions, slow-start batch sizes and pod
//!   construction from a template. Other workload controllers (Deployment, Job, DaemonSet) reuse these.
//!
//! The async sync (informer reads, expectations, API writes) lives beside this module and is not part of it.

pub mod plan;
pub mod pod_util;
pub mod status;

#[cfg(test)]
mod tests;
