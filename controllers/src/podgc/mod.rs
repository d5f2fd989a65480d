//! The pod garbage collector: deletes terminated pods beyond a threshold, terminating pods on
//! out-of-service nodes, pods bound to nodes that no longer exist, and terminating pods never
//! scheduled.
//!
//! Upstream: `pkg/controller/podgc/`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | the pod and node informers, the periodic key, `run` | `gc_controller.go`: `NewPodGC`, `Run` |
//! | [`sync`] | one pass: read the caches → plan → mark Failed → delete (grace 0); the live node GET | `gc_controller.go`: `gc`, `discoverDeletedNodes`, `markFailedAndDeletePodWithCondition` |
//! | [`plan`] | pure: which pods each of the four collections deletes, in which order; the Failed patch | `gc_controller.go`: `gcTerminated`, `gcTerminating`, `gcOrphaned`, `gcUnscheduledTerminating`, `byEvictionAndCreationTimestamp` |
//! | [`quarantine`] | pure: nodes missing from the cache wait 40 s before the live check | `gc_controller.go`: `nodeQueue`, `quarantineTime` |
//! | `tests/` | `controller.rs` against a real API on paused time; `plan.rs` table tests | `gc_controller_test.go` |
//!
//! The pass runs every 20 s of the injected clock (a `RequeueAfter` of its one key). Where to
//! start reading: [`sync::PodGcSync::gc`], then [`plan`].

pub mod controller;
pub mod plan;
pub mod quarantine;
pub mod sync;

#[cfg(test)]
mod tests;
