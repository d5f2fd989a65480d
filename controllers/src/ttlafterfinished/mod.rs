//! The TtlAfterFinished controller: deletes finished Jobs once their ttlSecondsAfterFinished has passed.
//!
//! Upstream: `pkg/controller/ttlafterfinished/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
