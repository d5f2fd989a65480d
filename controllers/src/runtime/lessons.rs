//! Lessons that break the machinery on purpose: switches that turn one
//! mechanism off so a learner sees why it exists (`miniplane up --disable
//! expectations`, `--informer-lag 2s`; `docs/lessons/`).
//!
//! (being written)

use std::time::Duration;

/// Which mechanisms are switched off, and how late informers deliver.
/// The default switches nothing off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lessons {
    /// `--disable expectations`: the ReplicaSet controller (and every user
    /// of expectations) acts on whatever its cache shows.
    pub disable_expectations: bool,
    /// `--disable pod-deletion-ranking`: scale-down deletes pods in cache
    /// order instead of upstream's ranking (unscheduled, pending, not ready first).
    pub disable_pod_deletion_ranking: bool,
    /// `--disable controller-ref-claim`: controllers adopt every matching
    /// pod, whoever owns it (no ControllerRef check).
    pub disable_controller_ref_claim: bool,
    /// `--informer-lag`: every informer delivers each watch event this
    /// much later (simulated time).
    pub informer_lag: Option<Duration>,
}
