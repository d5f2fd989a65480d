//! The Job controller: runs a Job's pods until enough succeed, or the Job fails.
//!
//! Upstream: `pkg/controller/job/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
