//! The ReplicaSet controller: a pure core (what to create or delete, and what status to report) inside a
//! thin async shell.
//!
//! The core ([`plan`], [`status`], [`pod_util`]) performs no IO and reads no clock: every function takes
//! the objects it needs and, where time matters, a `now` supplied by the caller (read once per sync from
//! the injected clock).
//!
//! Where to start reading:
//! * [`plan::plan_replicas`] — upstream `manageReplicas`: how many pods to create, or which ones to delete.
//! * [`status::calculate_status`] — upstream `calculateStatus`: the counters and the `ReplicaFailure`
//!   condition.
//! * [`pod_util`] — the shared pod predicates (active, ready, available), the deletion ordering, the
//!   controller-ownerReference helpers, adoption/release decisions, slow-start batch sizes and pod
//!   construction from a template. Other workload controllers (Deployment, Job, DaemonSet) reuse these.
//!
//! The async shell (informer reads, expectations, API writes) is in [`sync`] (upstream `syncReplicaSet`,
//! `manageReplicas`) and [`controller`] (the informer event handlers and the workers); only those two
//! modules perform IO.

pub mod controller;
pub mod plan;
pub mod status;
pub mod sync;

#[cfg(test)]
mod properties;
#[cfg(test)]
pub(crate) mod tests;
