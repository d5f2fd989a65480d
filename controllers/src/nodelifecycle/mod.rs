//! The NodeLifecycle controller: turns stale node heartbeats into Unknown conditions and taints.
//!
//! Upstream: `pkg/controller/nodelifecycle/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
