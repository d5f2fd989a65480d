//! The Canary controller (rollouts.miniplane.dev): progressive delivery of a
//! Deployment. It keeps a `<target>-primary` copy serving all traffic, and
//! when the target's pod template changes it shifts traffic to the new
//! version step by step through an HTTPRoute while the metrics hold, then
//! promotes it (copies the template to the primary) or rolls it back.
//!
//! Upstream: Flagger (`fluxcd/flagger`), whose Canary [`types`] follows.
//! Laid out as every controller here:
//!
//! | file | role | Flagger |
//! | --- | --- | --- |
//! | [`types`] | the Canary resource | `pkg/apis/flagger/v1beta1/canary.go`, `status.go` |
//! | [`controller`] | informers (Canary, Deployment, Job, HTTPRoute) → keys → queue; `impl Reconciler`; `run` | `pkg/controller/controller.go`, `scheduler.go` (`scheduleCanaries`) |
//! | [`sync`] | one sync: caches → checks when due → [`plan`] → writes → status | `pkg/controller/scheduler.go` (`advanceCanary`'s IO) |
//! | [`plan`] | pure: the [`plan::Phase`] machine, one transition per sync as [`plan::Step`]s | `scheduler.go` (`advanceCanary`, `runCanary`, `runBlueGreen`, `runAB`, `rollback`), `scheduler_hooks.go` |
//! | [`decisions`] | pure: the sentences each transition records in the causal journal | `scheduler.go` (`advanceCanary`, `runAnalysis`, `checkCanaryStatus`, `rollback`, `promote`) |
//! | [`checks`] | pure given a query: the metric checks of one step | `scheduler_metrics.go`, `pkg/metrics/observers/` |
//! | [`objects`] | pure builders of the primary, Services, route, HPA copy, hook Jobs; `apply`, `scale` | `pkg/canary/deployment_controller.go`, `pkg/router/` |
//! | `tests/` | `plan.rs`, `checks.rs`, `decisions.rs` table tests; `controller.rs` against a real API on paused time | `scheduler_*_test.go` |
//!
//! Only [`controller`], [`sync`] and `objects::apply` perform IO. Where to
//! start reading: [`plan`]'s module doc (the lifecycle), then
//! [`sync::CanarySync::sync_canary`].

pub mod checks;
pub mod controller;
pub mod decisions;
pub mod objects;
pub mod plan;
pub mod sync;
pub mod types;

#[cfg(test)]
mod tests;
