//! The Canary resource (rollouts.miniplane.dev/v1beta1), as Rust types.
//!
//! Modelled on Flagger's Canary (flagger.app/v1beta1) so that its users
//! recognise the fields: a `targetRef` Deployment stays as the user wrote
//! it, the controller creates `<target>-primary` beside it, three Services
//! (`<service>`, `<service>-primary`, `<service>-canary`) and an HTTPRoute,
//! and moves traffic between the two by the route's weights. Differences
//! from Flagger: hooks run as Jobs (`analysis.hooks`, not HTTP webhooks),
//! a metric may also be checked relative to the primary
//! (`relativeThresholdRange`), and a custom metric is an inline PromQL
//! `query` (no MetricTemplate kind).

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::{Metadata, NamespaceResourceScope, Resource};
use serde::{Deserialize, Serialize};

use crate::gateway::types::{HTTPRouteMatch, ParentReference};

/// The API group.
pub const GROUP: &str = "rollouts.miniplane.dev";

/// Annotation `miniplane rollout promote` sets: promote now (skips the
/// remaining steps and any confirm-promotion gate). Removed once acted on.
pub const PROMOTE_ANNOTATION: &str = "rollouts.miniplane.dev/promote";
/// Annotation `miniplane rollout abort` sets: roll back now.
pub const ABORT_ANNOTATION: &str = "rollouts.miniplane.dev/abort";
/// Annotation `miniplane rollout retry` sets: start a failed rollout's analysis again.
pub const RETRY_ANNOTATION: &str = "rollouts.miniplane.dev/retry";

/// A Canary: how new versions of a Deployment are rolled out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Canary {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CanarySpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CanaryStatus>,
}

impl Resource for Canary {
    const API_VERSION: &'static str = "rollouts.miniplane.dev/v1beta1";
    const GROUP: &'static str = GROUP;
    const KIND: &'static str = "Canary";
    const VERSION: &'static str = "v1beta1";
    const URL_PATH_SEGMENT: &'static str = "canaries";
    type Scope = NamespaceResourceScope;
}

impl Metadata for Canary {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanarySpec {
    /// The Deployment rolled out (kind Deployment, apiVersion apps/v1).
    #[serde(default)]
    pub target_ref: LocalObjectReference,
    /// A HorizontalPodAutoscaler of the target: a copy `<name>-primary` scales the primary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaler_ref: Option<LocalObjectReference>,
    #[serde(default)]
    pub service: CanaryService,
    /// Seconds a rollout may make no progress before it is rolled back (default 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
    /// Promote without analysis.
    #[serde(default)]
    pub skip_analysis: bool,
    #[serde(default)]
    pub analysis: CanaryAnalysis,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalObjectReference {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
}

/// The Services and the HTTPRoute the controller makes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryService {
    /// The apex Service's (and the route's) name; default: the target's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub port: i32,
    /// The pods' port (default: `port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<IntOrString>,
    /// The Gateways the HTTPRoute attaches to (its parentRefs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gateway_refs: Vec<ParentReference>,
    /// The route's hostnames.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// The analysis: when to step, how far, and what must hold at each step.
/// The strategy follows from the fields, as in Flagger: `iterations`
/// (without weights) is blue/green, `iterations` with `match` is A/B
/// testing, otherwise canary weights (`stepWeight` up to `maxWeight`, or
/// `stepWeights`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryAnalysis {
    /// Time between checks, a Go duration (`1m`, `30s`; default `1m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Failed checks before a rollback (default 1... see the controller's defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_weight: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_weight: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_weights: Vec<i32>,
    /// Checks to pass (blue/green, A/B) before promotion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<i32>,
    /// Requests matching any of these go to the canary (A/B testing).
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub match_: Vec<HTTPRouteMatch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<CanaryMetric>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<CanaryHook>,
}

/// One metric checked at every step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryMetric {
    /// `request-success-rate` (percent) and `request-duration` (p99, ms)
    /// are built in; any other name needs a `query`.
    pub name: String,
    /// The range the canary's value must lie in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_range: Option<ThresholdRange>,
    /// The range `canary − primary` must lie in (a relative check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_threshold_range: Option<ThresholdRange>,
    /// The range vector's length in the built-in queries (default `1m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// A PromQL query returning one number; `{{ namespace }}`, `{{ target }}`,
    /// `{{ service }}` and `{{ interval }}` are substituted (Flagger's
    /// template variables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThresholdRange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// A hook: a Job run at one point of the rollout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryHook {
    pub name: String,
    /// `pre-rollout`, `rollout`, `confirm-rollout`, `confirm-promotion`,
    /// `post-rollout` or `rollback` (Flagger's hook types).
    #[serde(rename = "type")]
    pub type_: String,
    /// The Job to run; a confirm hook without one waits for `miniplane rollout promote`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_template: Option<JobTemplateSpec>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Initializing, Initialized, Waiting, Progressing, WaitingPromotion,
    /// Promoting, Finalising, Succeeded, Failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default)]
    pub canary_weight: i32,
    #[serde(default)]
    pub failed_checks: i32,
    #[serde(default)]
    pub iterations: i32,
    /// The hash of the target's pod template last seen (the revision under analysis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_spec: Option<String>,
    /// The hash of the pod template the primary runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_promoted_spec: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<CanaryCondition>,
}

/// Flagger's condition: type `Promoted`, with a reason per phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanaryCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
