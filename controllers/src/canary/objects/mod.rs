//! The Kubernetes objects the Canary controller makes and reads, as pure
//! builders, plus the two writes that put them on the server.
//!
//! Upstream: Flagger (`fluxcd/flagger`), whose Canary the
//! [`super::types::Canary`] follows. The controller's sync builds the
//! desired objects here, then [`apply`]s them.
//!
//! | file | role | Flagger |
//! | --- | --- | --- |
//! | this file | [`Names`] of everything made, the [`Strategy`] a Canary's analysis implies, owner references | `pkg/apis/flagger/v1beta1/canary.go` (`GetAnalysis`, names), `pkg/canary/util.go` |
//! | [`primary`] | `<target>-primary` from the target (selector label rewrite), the template hash, Deployment readiness | `pkg/canary/deployment_controller.go`: `createPrimaryDeployment`, `getSelectorLabel`, `makePrimaryLabels`, `Promote`; `pkg/canary/ready.go`: `isDeploymentReady` |
//! | [`services`] | the apex, `-primary` and `-canary` Services | `pkg/router/kubernetes_default.go`: `reconcileService` |
//! | [`route`] | the HTTPRoute splitting traffic by weight (A/B: by header match); reading the weights back | `pkg/router/gateway_api.go`: `Reconcile`, `GetRoutes`, `SetRoutes` |
//! | [`autoscaler`] | the `<hpa>-primary` copy that scales the primary | `pkg/canary/deployment_controller.go`: `reconcilePrimaryHpa` |
//! | [`hooks`] | a hook's Job and its state | (miniplane: Flagger's webhooks run as Jobs) `pkg/controller/webhook.go` |
//! | [`apply`] | create, or update the fields we own; scale | the `Get` → `IsNotFound` → `Create` / `Update` pattern of every Flagger reconciler |
//! | `tests/` | a test per builder; `apply.rs` against a real API | `*_test.go` |
//! | `properties.rs` | proptest: Job names are stable DNS labels, weights round-trip, one update brings an object to rest | — |
//!
//! Everything but [`apply`] is pure: no IO, no clock.

pub mod apply;
pub mod autoscaler;
pub mod hooks;
pub mod primary;
pub mod route;
pub mod services;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;

use k8s_openapi::Resource;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::types::Canary;
use crate::runtime::meta::new_controller_ref;

pub use apply::{apply, scale};
pub use autoscaler::primary_autoscaler;
pub use hooks::{HookState, hook_job, hook_job_name, hook_state};
pub use primary::{is_deployment_ready, primary_deployment, selector_error, selector_label, template_hash};
pub use route::{Weights, route, route_weights};
pub use services::services;

/// The request rate the traffic simulation sends (on an HTTPRoute, or on a
/// Service it then calls directly, as Flagger's load tester would).
pub const CANARY_RPS_ANNOTATION: &str = "sim.miniplane.dev/requests-per-second";
/// The share of simulated requests that carry the A/B match's header (on an HTTPRoute).
pub const HEADER_SHARE_ANNOTATION: &str = "sim.miniplane.dev/header-share";
/// The blue/green request rate when the Canary sets none.
pub const DEFAULT_CANARY_RPS: &str = "10";
/// The label naming the Canary on every object made for it.
pub const CANARY_LABEL: &str = "rollouts.miniplane.dev/canary";

/// The names of the objects made for one Canary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// `<target>-primary`.
    pub primary: String,
    /// `<service>`: selects the primary's pods; what clients call.
    pub apex_service: String,
    /// `<service>-primary`.
    pub primary_service: String,
    /// `<service>-canary`: selects the target's pods.
    pub canary_service: String,
    /// The HTTPRoute, `<service>`.
    pub route: String,
}

/// The names of `canary`'s objects: the service name is `spec.service.name`,
/// else the target's name (Flagger's `GetServiceNames`).
pub fn names(canary: &Canary) -> Names {
    let target = &canary.spec.target_ref.name;
    let service = canary
        .spec
        .service
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(target);
    Names {
        primary: format!("{target}-primary"),
        apex_service: service.to_string(),
        primary_service: format!("{service}-primary"),
        canary_service: format!("{service}-canary"),
        route: service.to_string(),
    }
}

/// How a Canary moves traffic, as its analysis implies (Flagger's rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Weighted steps: `stepWeight` up to `maxWeight`, or `stepWeights`.
    Canary,
    /// `iterations` without weights or matches: the new version is analysed
    /// with no routed traffic, then takes all of it at once.
    BlueGreen,
    /// `iterations` with `match`: matching requests go to the new version.
    ABTesting,
}

/// The strategy of `canary`: `iterations` with `match` is A/B testing,
/// `iterations` without any weight is blue/green, anything else is a canary.
pub fn strategy(canary: &Canary) -> Strategy {
    let a = &canary.spec.analysis;
    let weighted = a.step_weight.is_some_and(|w| w > 0)
        || a.max_weight.is_some_and(|w| w > 0)
        || !a.step_weights.is_empty();
    match a.iterations {
        Some(n) if n > 0 && !a.match_.is_empty() => Strategy::ABTesting,
        Some(n) if n > 0 && !weighted => Strategy::BlueGreen,
        _ => Strategy::Canary,
    }
}

/// The controller reference to `canary` every made object carries
/// (`metav1.NewControllerRef`).
pub fn owner_ref(canary: &Canary) -> OwnerReference {
    new_controller_ref(&canary.metadata, Canary::API_VERSION, Canary::KIND)
}

/// The Canary's name.
pub(crate) fn canary_name(canary: &Canary) -> &str {
    canary.metadata.name.as_deref().unwrap_or("")
}

/// The labels every made object carries, beside its own.
/// (none when the name is too long for a label value).
pub(crate) fn canary_labels(canary: &Canary) -> std::collections::BTreeMap<String, String> {
    let name = canary_name(canary);
    let mut labels = std::collections::BTreeMap::new();
    if name.len() <= 63 {
        labels.insert(CANARY_LABEL.to_string(), name.to_string());
    }
    labels
}
