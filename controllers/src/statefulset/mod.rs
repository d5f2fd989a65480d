//! The StatefulSet controller: keeps `spec.replicas` pods with stable ordinal identities.
//!
//! Upstream: `pkg/controller/statefulset/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
