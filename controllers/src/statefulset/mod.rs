//! The StatefulSet controller: keeps `spec.replicas` pods with stable ordinal identities
//! (`<set>-<ordinal>`, hostname, storage), created in order and replaced one at a time.
//!
//! Upstream: `pkg/controller/statefulset/`. Laid out as every controller here:
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers → handlers (change → keys, expectations) → queue; `impl Reconciler`; `run` | `stateful_set.go`: `NewStatefulSetController`, handlers, `Run` |
//! | [`sync`] | one sync: caches → claim pods and revisions → revisions → [`plan`] → writes → status → history | `stateful_set.go` `sync`; `stateful_set_control.go` `UpdateStatefulSet`; `stateful_pod_control.go`; `stateful_set_status_updater.go` |
//! | [`plan`] | pure: the ordered writes of one sync (scale, repair, scale down, rolling update) and the status | `stateful_set_control.go`: `updateStatefulSet`, `processReplica`, `processCondemned`, `updateStatefulSetAfterInvariantEstablished` |
//! | [`revisions`] | pure: reuse / renumber / create the update revision; which revisions to truncate | `stateful_set_control.go`: `getStatefulSetRevisions`, `truncateHistory` |
//! | [`status`] | pure: the counters, `completeRollingUpdate`, `inconsistentStatus` | `stateful_set_control.go`, `stateful_set_utils.go` |
//! | [`decisions`] | pure: the sentences the sync records in the causal journal (each pod write with its ordinal and revisions, the wait an OrderedReady set stops at) | `stateful_set_control.go`: `updateStatefulSet`, `processReplica`, `processCondemned` |
//! | [`claims`] | pure: `persistentVolumeClaimRetentionPolicy` as owner references | `stateful_set_utils.go` |
//! | [`utils`] | pure: identity, storage, revision data, pod predicates, `maxUnavailable` | `stateful_set_utils.go` |
//! | `tests/` | `controller.rs` against a real API; table tests (`controllers/testdata/statefulset.json`) | `stateful_set_control_test.go`, `stateful_set_utils_test.go` |
//! | `properties.rs` | the planner never makes two pods of one ordinal nor more than `replicas` | |
//!
//! The ControllerRevision helpers shared with the DaemonSet controller are [`crate::history`].
//!
//! Where to start reading: [`sync::StatefulSetSync::sync_stateful_set`], then
//! [`plan::update_stateful_set`].

pub mod claims;
pub mod controller;
pub mod decisions;
pub mod plan;
pub mod revisions;
pub mod status;
pub mod sync;
pub mod utils;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
