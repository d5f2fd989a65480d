//! The persistent-volume controller: binds every claim to a volume — an
//! existing Available one that fits, or one it provisions for the claim's
//! StorageClass — and applies a volume's reclaim policy once its claim is gone.
//!
//! Upstream: `pkg/controller/volume/persistentvolume/` (the binder) plus,
//! in miniature, what an external provisioner such as kind's
//! `rancher.io/local-path` does for a claim (create a `pvc-<uid>` volume).
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers (claims, volumes, classes) → keys → queue; `impl Reconciler`; `run` | `pv_controller_base.go` |
//! | [`sync`] | one sync of a claim or a volume: read the caches → [`plan`] → write | `pv_controller.go`: `syncClaim`, `syncVolume` |
//! | [`plan`] | pure: bind, provision, release, reclaim | `pv_controller.go`, `index.go`, `util.go` |
//! | `tests/` | `controller.rs` against a real API; `plan.rs` table tests | `pv_controller_test.go`, `binder_test.go` |
//!
//! WaitForFirstConsumer classes: the claim waits until the scheduler, binding
//! a pod that uses it, sets `volume.kubernetes.io/selected-node`; the
//! volume is then provisioned on that node and bound.
//!
//! Where to start reading: [`plan::plan_claim`], then [`plan::plan_volume`].

pub mod controller;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
