//! The pure core of miniplane's stub scheduler: given a pending pod, the
//! nodes and the pods already bound to them, decide where the pod goes or
//! why it cannot go anywhere. No I/O, no clock, no randomness; the caller
//! watches the store, calls [`decide::schedule`], and writes the Binding or
//! the `PodScheduled=False` condition and FailedScheduling event.
//!
//! It follows kube-scheduler's default profile (upstream
//! pkg/scheduler/schedule_one.go and pkg/scheduler/framework/plugins/...),
//! restricted to the plugins that make sense without volumes, host ports,
//! DRA or inter-pod affinity:
//!
//! * [`filter`](mod@filter): NodeUnschedulable, NodeName, TaintToleration (plus the
//!   condition taints the node lifecycle controller would add), NodeAffinity,
//!   NodeResourcesFit, with upstream's reason strings;
//! * [`score`]: LeastAllocated, BalancedAllocation, PreferNoSchedule taints,
//!   preferred node affinity, default topology spreading by controller
//!   owner; ties go to the smallest node name instead of a random pick;
//! * [`decide`]: the whole attempt and the exact FailedScheduling message,
//!   including its preemption part (preemption itself is not performed);
//! * [`resources`] and [`quantity`]: request arithmetic and the Kubernetes
//!   quantity format.
//! * [`volumes`]: the VolumeBinding PreFilter (claims missing or unbound,
//!   WaitForFirstConsumer claims to annotate with the chosen node).
//!
//! [`run`] is the one impure part: the [`Scheduler`] loop that watches pods
//! and nodes through informers, calls [`decide::schedule`] and writes the
//! Binding, the condition and the Events through the API.
//!
//! Not modelled: NodePorts, volume plugins beyond [`volumes`], InterPodAffinity, explicit
//! `topologySpreadConstraints`, ImageLocality, extended resources,
//! pod-level resources, scheduling gates, and actual preemption.

pub mod decide;
pub mod filter;
pub mod quantity;
pub mod resources;
pub mod run;
pub mod score;
pub mod volumes;

#[cfg(test)]
mod fixtures;

pub use decide::{Decision, schedule};
pub use filter::{Unfit, filter};
pub use run::Scheduler;
