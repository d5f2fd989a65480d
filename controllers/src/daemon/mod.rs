//! The DaemonSets controller: keeps one pod on every node that should run the DaemonSet.
//!
//! Upstream: `pkg/controller/daemon/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
