//! The PodGc controller: deletes terminated pods beyond a threshold and pods whose node is gone.
//!
//! Upstream: `pkg/controller/podgc/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
