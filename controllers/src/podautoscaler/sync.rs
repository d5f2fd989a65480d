//! One HPA sync: read the target's scale, ask the metrics, normalize, rescale, write the status.
//!
//! Upstream: `pkg/controller/podautoscaler/horizontal.go` (`reconcileKey`,
//! `reconcileAutoscaler`, `scaleForResourceMappings`, `updateStatusIfNeeded`, `updateStatus`).
//!
//! ```text
//! reconcile_key(key)
//!   HPA gone                         → forget its history, Done
//!   reconcile_autoscaler             (errors are logged; upstream retries at the next resync)
//!   RequeueAfter(sync period, 15 s)  (upstream --horizontal-pod-autoscaler-sync-period)
//!
//! reconcile_autoscaler
//!   GET <target>/scale               fail → FailedGetScale (event, AbleToScale False)
//!   spec.replicas 0 (minReplicas ≠ 0) → ScalingActive False ScalingDisabled, no rescale
//!   above maxReplicas / below minReplicas → straight to the bound
//!   else compute_replicas_for_metrics → normalize (with or without behavior)
//!   desired ≠ current                → PATCH <target>/scale; SuccessfulRescale "New size: N; reason: R"
//!   status (current/desired replicas, currentMetrics, lastScaleTime, conditions) if it changed
//! ```
//!
//! Simplified against upstream:
//! * The scale target's resource comes from a fixed table (Deployment, ReplicaSet, StatefulSet,
//!   ReplicationController), else from the kind in lower case plus `s` (`ies` for a `y`), in
//!   the `apiVersion`'s group: there is no discovery-backed REST mapper.
//! * The scale is written with a merge patch of `spec.replicas` on `scale` (no resourceVersion
//!   precondition), where upstream PUTs the Scale it read.
//! * Timestamps written (conditions, `lastScaleTime`) are whole seconds, as they read back.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{HPAScalingRules, HorizontalPodAutoscaler};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use sim_metrics::Query;
use store::Clock;

use super::controller::NAME;
use super::decisions;
use super::horizontal::{HpaEvent, MetricsContext, ScaleView, compute_replicas_for_metrics};
use super::metrics::PromMetricsClient;
use super::normalize::{
    DEFAULT_DOWNSCALE_STABILIZATION_WINDOW, NormalizationArg, ScaleHistory, behavior_with_defaults,
    normalize_desired_replicas, normalize_desired_replicas_with_behaviors, record_initial_recommendation,
    store_scale_event,
};
use super::replica_calculator::ReplicaCalculator;
use super::status::{
    ABLE_TO_SCALE, SCALING_ACTIVE, SCALING_LIMITED, set_condition,
    set_current_replicas_and_metrics_in_status, set_status, status_needs_update,
};
use crate::runtime::client::{Client, PatchType, ResourceRef, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{Action, ReconcileError, clock_now, decision, split_key};

/// Upstream `--horizontal-pod-autoscaler-sync-period`.
pub const DEFAULT_SYNC_PERIOD: Duration = Duration::from_secs(15);

/// Everything one sync reads and writes, and the per-HPA history between syncs.
pub struct HorizontalSync {
    client: Arc<dyn Client>,
    hpa_api: Typed<HorizontalPodAutoscaler>,
    hpas: Store<HorizontalPodAutoscaler>,
    pods: Store<Pod>,
    metrics: Arc<dyn Query>,
    recorder: Recorder,
    clock: Clock,
    /// Tolerance, cpu initialization period, initial readiness delay.
    pub(super) calc: ReplicaCalculator,
    /// The default scale-down stabilization window, seconds.
    pub(super) downscale_stabilization_window: i32,
    /// How often each HPA is looked at.
    pub(super) sync_period: Duration,
    /// Recommendations and scale events by HPA key (upstream's maps). Locked only to read or
    /// update one entry, never across an await; the queue never syncs one key twice at once.
    histories: Mutex<BTreeMap<String, ScaleHistory>>,
}

impl HorizontalSync {
    /// A syncer over the caches, writing through `client`, reading metrics from `metrics`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        hpas: Store<HorizontalPodAutoscaler>,
        pods: Store<Pod>,
        metrics: Arc<dyn Query>,
    ) -> Self {
        HorizontalSync {
            hpa_api: Typed::new(client.clone()),
            client,
            hpas,
            pods,
            metrics,
            recorder,
            clock,
            calc: ReplicaCalculator::default(),
            downscale_stabilization_window: DEFAULT_DOWNSCALE_STABILIZATION_WINDOW,
            sync_period: DEFAULT_SYNC_PERIOD,
            histories: Mutex::new(BTreeMap::new()),
        }
    }

    fn with_history<T>(&self, key: &str, f: impl FnOnce(&mut ScaleHistory) -> T) -> T {
        let mut histories = self
            .histories
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(histories.entry(key.to_string()).or_default())
    }

    /// Upstream `reconcileKey`.
    pub async fn reconcile_key(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(hpa) = self.hpas.get(ns, name) else {
            self.histories
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .remove(key);
            return Ok(Action::Done);
        };
        let now = clock_now(&self.clock)?;
        let now = now.round(jiff::Unit::Second).unwrap_or(now);
        if let Err(e) = self.reconcile_autoscaler(&hpa, key, now).await {
            tracing::info!(key, "horizontal-pod-autoscaler: {e}");
        }
        Ok(Action::RequeueAfter(self.sync_period))
    }

    /// Upstream `reconcileAutoscaler`.
    async fn reconcile_autoscaler(
        &self,
        shared: &HorizontalPodAutoscaler,
        key: &str,
        now: Timestamp,
    ) -> Result<(), String> {
        let mut hpa = shared.clone();
        let original = hpa.status.clone();
        let mut events = Vec::new();
        let result = self.reconcile(&mut hpa, key, now, &mut events).await;
        let object = ObjectRef::of(shared);
        for e in &events {
            self.recorder.record(&object, e.type_, &e.reason, &e.message);
        }
        let written = self.update_status_if_needed(original.as_ref(), &hpa).await;
        result.and(written)
    }

    async fn reconcile(
        &self,
        hpa: &mut HorizontalPodAutoscaler,
        key: &str,
        now: Timestamp,
        events: &mut Vec<HpaEvent>,
    ) -> Result<(), String> {
        let spec = hpa.spec.clone().unwrap_or_default();
        let ns = hpa.metadata.namespace.clone().unwrap_or_default();
        let target = &spec.scale_target_ref;
        let reference = format!("{}/{ns}/{}", target.kind, target.name);
        let target_text = format!("{} {}", target.kind, target.name);

        let resource = resource_for(target.api_version.as_deref().unwrap_or(""), &target.kind);
        let scale = match resource.clone() {
            Ok(r) => self.get_scale(&r, &ns, &target.name).await,
            Err(e) => Err(e),
        };
        let (resource, scale) = match (resource, scale) {
            (Ok(r), Ok(s)) => (r, s),
            (_, Err(e)) => {
                events.push(HpaEvent::warning("FailedGetScale", e.clone()));
                let message = format!("the HPA controller was unable to get the target's current scale: {e}");
                set_condition(hpa, ABLE_TO_SCALE, false, "FailedGetScale", &message, now);
                return Err(format!("failed to query scale subresource for {reference}: {e}"));
            }
            (Err(e), Ok(_)) => return Err(e),
        };
        set_condition(
            hpa,
            ABLE_TO_SCALE,
            true,
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
            now,
        );
        let current_replicas = scale.spec_replicas;
        self.with_history(key, |h| record_initial_recommendation(h, current_replicas, now));

        let min_replicas = spec.min_replicas.unwrap_or(1);
        let max_replicas = spec.max_replicas;
        let mut metric_statuses = None;
        let mut partial_error = None;
        let mut rescale_reason = String::new();
        let desired_replicas;
        let rescale;
        if scale.spec_replicas == 0 && min_replicas != 0 {
            desired_replicas = 0;
            rescale = false;
            set_condition(
                hpa,
                SCALING_ACTIVE,
                false,
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now,
            );
        } else if current_replicas > max_replicas {
            rescale_reason = "Current number of replicas above Spec.MaxReplicas".to_string();
            desired_replicas = max_replicas;
            rescale = true;
            decision::record(&self.clock, NAME, &*hpa, || {
                let bound = "maxReplicas";
                [decisions::out_of_range(
                    current_replicas,
                    bound,
                    max_replicas,
                    &target_text,
                    &rescale_reason,
                )]
            });
        } else if current_replicas < min_replicas {
            rescale_reason = "Current number of replicas below Spec.MinReplicas".to_string();
            desired_replicas = min_replicas;
            rescale = true;
            decision::record(&self.clock, NAME, &*hpa, || {
                let bound = "minReplicas";
                [decisions::out_of_range(
                    current_replicas,
                    bound,
                    min_replicas,
                    &target_text,
                    &rescale_reason,
                )]
            });
        } else {
            let pods = self.pods.by_index(NAMESPACE_INDEX, &ns);
            let client = PromMetricsClient::new(&self.metrics, &self.pods, now);
            let cx = MetricsContext {
                calc: &self.calc,
                client: &client,
                namespace_pods: &pods,
                now,
            };
            let proposal = match compute_replicas_for_metrics(hpa, &scale, &cx, events) {
                Ok(p) => p,
                Err((statuses, e)) => {
                    set_current_replicas_and_metrics_in_status(hpa, current_replicas, Some(statuses), now);
                    events.push(HpaEvent::warning("FailedComputeMetricsReplicas", e.clone()));
                    return Err(format!(
                        "failed to compute desired number of replicas based on listed metrics for {reference}: {e}"
                    ));
                }
            };
            let tolerance = self.calc.tolerance;
            decision::record(&self.clock, NAME, &*hpa, || {
                [decisions::metrics(hpa, &proposal, tolerance)]
            });
            partial_error = proposal.partial_error.clone();
            metric_statuses = Some(proposal.statuses.clone());
            let mut desired = 0;
            let mut rescale_metric = String::new();
            if proposal.replicas > desired {
                desired = proposal.replicas;
                rescale_metric = proposal.metric.clone();
            }
            if desired > current_replicas {
                rescale_reason = format!("{rescale_metric} above target");
            }
            if desired < current_replicas {
                rescale_reason = "All metrics below target".to_string();
            }
            let normalized = match &spec.behavior {
                None => self.with_history(key, |h| {
                    decision::record(&self.clock, NAME, &*hpa, || {
                        let window = self.downscale_stabilization_window;
                        let bounds = (min_replicas, max_replicas);
                        let n = decisions::normalization(h, current_replicas, desired, bounds, window, now);
                        [decisions::normalized(
                            &n,
                            current_replicas,
                            &target_text,
                            &rescale_reason,
                        )]
                    });
                    normalize_desired_replicas(
                        h,
                        current_replicas,
                        desired,
                        min_replicas,
                        max_replicas,
                        self.downscale_stabilization_window,
                        now,
                    )
                }),
                Some(behavior) => {
                    let (up, down) = behavior_with_defaults(behavior, self.downscale_stabilization_window);
                    let arg = NormalizationArg {
                        scale_up_behavior: &up,
                        scale_down_behavior: &down,
                        min_replicas,
                        max_replicas,
                        current_replicas,
                        desired_replicas: desired,
                    };
                    self.with_history(key, |h| {
                        decision::record(&self.clock, NAME, &*hpa, || {
                            let n = decisions::normalization_with_behaviors(h, &arg, now);
                            [decisions::normalized(
                                &n,
                                current_replicas,
                                &target_text,
                                &rescale_reason,
                            )]
                        });
                        normalize_desired_replicas_with_behaviors(h, &arg, now)
                    })
                }
            };
            let (reason, message) = normalized.able_to_scale;
            set_condition(hpa, ABLE_TO_SCALE, true, reason, message, now);
            let (limited, reason, message) = normalized.scaling_limited;
            set_condition(hpa, SCALING_LIMITED, limited, reason, message, now);
            desired_replicas = normalized.replicas;
            rescale = desired_replicas != current_replicas;
        }

        if rescale {
            if let Err(e) = self
                .update_scale(&resource, &ns, &target.name, desired_replicas)
                .await
            {
                events.push(HpaEvent::warning(
                    "FailedRescale",
                    format!("New size: {desired_replicas}; reason: {rescale_reason}; error: {e}"),
                ));
                let message = format!("the HPA controller was unable to update the target scale: {e}");
                set_condition(hpa, ABLE_TO_SCALE, false, "FailedUpdateScale", &message, now);
                set_current_replicas_and_metrics_in_status(hpa, current_replicas, metric_statuses, now);
                return Err(format!("failed to rescale {reference}: {e}"));
            }
            let message =
                format!("the HPA controller was able to update the target scale to {desired_replicas}");
            set_condition(hpa, ABLE_TO_SCALE, true, "SucceededRescale", &message, now);
            events.push(HpaEvent {
                type_: EventType::Normal,
                reason: "SuccessfulRescale".to_string(),
                message: format!("New size: {desired_replicas}; reason: {rescale_reason}"),
            });
            let rules: Option<(HPAScalingRules, HPAScalingRules)> = spec
                .behavior
                .as_ref()
                .map(|b| behavior_with_defaults(b, self.downscale_stabilization_window));
            self.with_history(key, |h| {
                store_scale_event(
                    h,
                    rules.as_ref().map(|(u, d)| (u, d)),
                    current_replicas,
                    desired_replicas,
                    now,
                );
            });
            set_status(
                hpa,
                current_replicas,
                desired_replicas,
                metric_statuses,
                true,
                now,
            );
        } else {
            let desired = if scale.spec_replicas == 0 && min_replicas != 0 {
                0
            } else {
                current_replicas
            };
            set_status(hpa, current_replicas, desired, metric_statuses, false, now);
        }
        partial_error.map_or(Ok(()), Err)
    }

    /// Upstream `scaleForResourceMappings` for one mapping: `GET <target>/scale`.
    async fn get_scale(&self, r: &ResourceRef, ns: &str, name: &str) -> Result<ScaleView, String> {
        let scale = self
            .client
            .get_subresource(r, Some(ns), name, "scale")
            .await
            .map_err(|e| e.message)?;
        Ok(scale_view(&scale))
    }

    /// Writes `spec.replicas` through the target's `scale`.
    async fn update_scale(&self, r: &ResourceRef, ns: &str, name: &str, replicas: i32) -> Result<(), String> {
        let patch = json!({"spec": {"replicas": replicas}});
        self.client
            .patch(r, Some(ns), name, PatchType::Merge, patch, Some("scale"))
            .await
            .map(|_| ())
            .map_err(|e| e.message)
    }

    /// Upstream `updateStatusIfNeeded` / `updateStatus`: a `FailedUpdateStatus` event when the
    /// write fails.
    async fn update_status_if_needed(
        &self,
        original: Option<&k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus>,
        hpa: &HorizontalPodAutoscaler,
    ) -> Result<(), String> {
        if !status_needs_update(original, hpa.status.as_ref()) {
            return Ok(());
        }
        match self.hpa_api.update_status(hpa).await {
            Ok(_) => Ok(()),
            Err(e) => {
                let object = ObjectRef::of(hpa);
                self.recorder
                    .record(&object, EventType::Warning, "FailedUpdateStatus", &e.message);
                let name = hpa.metadata.name.as_deref().unwrap_or("");
                Err(format!("failed to update status for {name}: {e}"))
            }
        }
    }
}

/// The fields of an `autoscaling/v1` Scale the HPA reads.
pub fn scale_view(scale: &Value) -> ScaleView {
    let int = |p: &str| {
        scale
            .pointer(p)
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .unwrap_or(0)
    };
    ScaleView {
        spec_replicas: int("/spec/replicas"),
        status_replicas: int("/status/replicas"),
        selector: scale
            .pointer("/status/selector")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    }
}

/// The resource of a scale target (`apiVersion`, `kind`), as a REST mapper would find it.
pub fn resource_for(api_version: &str, kind: &str) -> Result<ResourceRef, String> {
    let (group, version) = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [v] if !v.is_empty() => (String::new(), (*v).to_string()),
        [g, v] if !g.is_empty() && !v.is_empty() => ((*g).to_string(), (*v).to_string()),
        _ => return Err(format!("unexpected GroupVersion string: {api_version}")),
    };
    if kind.is_empty() {
        return Err(format!("no matches for kind \"\" in group \"{group}\""));
    }
    let plural = match (group.as_str(), kind) {
        ("apps", "Deployment") => "deployments".to_string(),
        ("apps", "ReplicaSet") => "replicasets".to_string(),
        ("apps", "StatefulSet") => "statefulsets".to_string(),
        ("", "ReplicationController") => "replicationcontrollers".to_string(),
        _ => {
            let lower = kind.to_ascii_lowercase();
            match lower.strip_suffix('y') {
                Some(stem) => format!("{stem}ies"),
                None => format!("{lower}s"),
            }
        }
    };
    Ok(ResourceRef {
        group,
        version,
        plural,
        kind: kind.to_string(),
        namespaced: true,
    })
}
