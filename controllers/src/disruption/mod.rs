//! The disruption controller: keeps each PodDisruptionBudget's status true to its pods — how
//! many are expected and healthy, how many must stay healthy, and how many may be disrupted
//! now (`disruptionsAllowed`, which the API server's eviction handler spends).
//!
//! Upstream: `pkg/controller/disruption/`. Laid out as every controller here:
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers → handlers (budget or pod change → budget keys) → queue; `impl Reconciler`; `run` | `disruption.go`: `NewDisruptionControllerInternal`, the `add*`/`update*`/`delete*` handlers, `Run` |
//! | [`sync`] | one sync: read the caches → [`plan`] → write `/status`; requeue when an eviction entry expires | `disruption.go`: `sync`, `trySync`, `writePdbStatus` |
//! | [`finders`] | the controllers of the pods and their scale, from the caches | `disruption.go`: `finders`, `getPod*`, `getExpectedScale` |
//! | [`plan`] | pure: expected and desired counts, healthy pods, the `disruptedPods` map, the status and its condition | `disruption.go`: `getExpectedPodCount`, `countHealthyPods`, `buildDisruptedPodMap`, `updatePdbStatus`, `failSafe`; `component-helpers/apps/poddisruptionbudget` |
//! | `tests/` | `controller.rs` against a real API; `plan.rs` table tests | `disruption_test.go` |
//!
//! The other half of disruption budgets is the API server's `pods/eviction`
//! (`apiserver/src/api/eviction.rs`): it checks and spends `disruptionsAllowed` and notes the
//! pod in `disruptedPods`, which [`plan::count_healthy_pods`] then no longer counts.
//!
//! Where to start reading: [`sync::DisruptionSync::sync_pdb`], then [`plan`].

pub mod controller;
pub mod finders;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
