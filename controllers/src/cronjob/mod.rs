//! The CronJob controller: creates a CronJob's Jobs on its schedule.
//!
//! Upstream: `pkg/controller/cronjob/`. SKELETON: the wiring is fixed (see `src/cluster.rs`);
//! the files of the template in ARCHITECTURE.md ("Writing a controller") follow.

pub mod controller;
