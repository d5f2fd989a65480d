//! The HorizontalPodAutoscaler controller (autoscaling/v2): keeps each HPA's target scaled so
//! that its metrics meet their targets, within `minReplicas`..`maxReplicas`, at the rate its
//! `behavior` allows.
//!
//! Upstream: `pkg/controller/podautoscaler/`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers → handlers → queue; `impl Reconciler`; `run` | `horizontal.go`: `NewHorizontalController`, `Run`, `enqueueHPA`/`updateHPA`/`deleteHPA` |
//! | [`sync`] | one sync: scale GET → metrics → normalize → scale write → events → status | `horizontal.go`: `reconcileKey`, `reconcileAutoscaler`, `updateStatusIfNeeded` |
//! | [`horizontal`] | pure: each metric's proposal and status, `ScalingActive` | `horizontal.go`: `computeReplicasForMetrics`, `computeStatusFor*Metric` |
//! | [`replica_calculator`] | pure: replicas from usage, tolerance, unready and missing pods | `replica_calculator.go` |
//! | [`normalize`] | pure: stabilization windows, `behavior` policies, min/max | `horizontal.go`: `normalizeDesiredReplicas*`, `stabilizeRecommendation*`, `calculateScale*Limit*` |
//! | [`decisions`] | pure: the sentences a sync records in the causal journal (ratio, stabilization, limit, rescale) | `horizontal.go`, `replica_calculator.go` (what upstream logs at `-v=4`) |
//! | [`status`] | pure: conditions and status | `horizontal.go`: `setCondition`, `setStatus` |
//! | [`metrics`] | the metrics client over PromQL (the query of each metric source) | `metrics/interfaces.go`, `rest_metrics_client.go`, `utilization.go` |
//! | `tests/` | replica calculator table (upstream's cases), normalization tables, the controller on paused time | `replica_calculator_test.go`, `horizontal_test.go` |
//!
//! Only [`controller`] and [`sync`] perform IO; the metrics client reads the in-memory
//! time-series store synchronously, at the sync's `now`.
//!
//! Where to start reading: [`sync::HorizontalSync::reconcile_key`], then
//! [`horizontal::compute_replicas_for_metrics`], [`replica_calculator::ReplicaCalculator::get_resource_replicas`]
//! and [`normalize::normalize_desired_replicas_with_behaviors`].

pub mod controller;
pub mod decisions;
pub mod horizontal;
pub mod metrics;
pub mod normalize;
pub mod replica_calculator;
pub mod status;
pub mod sync;

#[cfg(test)]
mod tests;
