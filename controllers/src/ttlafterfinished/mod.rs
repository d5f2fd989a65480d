//! The TTL-after-finished controller: deletes a finished Job once its
//! `ttlSecondsAfterFinished` has passed since it finished; the garbage collector then
//! deletes its pods (the delete is Foreground).
//!
//! Upstream: `pkg/controller/ttlafterfinished/`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | Job informer → handler (finished with a TTL → key) → queue; `impl Reconciler`; `run` | `ttlafterfinished_controller.go`: `New`, `addJob`, `updateJob`, `Run` |
//! | [`sync`] | one sync: cache → expired? → fresh GET → expired still? → delete (Foreground, uid precondition) | `ttlafterfinished_controller.go`: `processJob` |
//! | [`plan`] | pure: whether a Job needs cleanup, when it finished, how long is left | `ttlafterfinished_controller.go`: `processTTL`, `needsCleanup`, `timeLeft`, `jobFinishTime` |
//! | `tests/` | `plan.rs` table; `controller.rs` against a real API on paused time | `ttlafterfinished_controller_test.go` |
//!
//! Where to start reading: [`sync::TtlAfterFinishedSync::process_job`], then [`plan::time_left`].

pub mod controller;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
