//! The TaintEviction controller: evicts pods from nodes with NoExecute taints they do not tolerate.
//!
//! Upstream: `pkg/controller/tainteviction/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
