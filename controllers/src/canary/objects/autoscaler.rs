//! The primary's HorizontalPodAutoscaler: a copy of the target's, named
//! `<hpa>-primary`, scaling `<target>-primary`, so that the primary stays
//! under autoscaling while the target is the canary.
//!
//! Flagger: `pkg/canary/deployment_controller.go` (`reconcilePrimaryHpa`).

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::primary::PRIMARY_SUFFIX;
use super::{canary_labels, names, owner_ref};
use crate::canary::types::Canary;

/// `<hpa>-primary`: `hpa`'s min/max replicas, metrics and behavior, its
/// scale target the primary Deployment, owned by `canary`.
pub fn primary_autoscaler(canary: &Canary, hpa: &HorizontalPodAutoscaler) -> HorizontalPodAutoscaler {
    let spec = hpa.spec.clone().unwrap_or_default();
    let target = &spec.scale_target_ref;
    let mut labels = hpa.metadata.labels.clone().unwrap_or_default();
    labels.extend(canary_labels(canary));
    HorizontalPodAutoscaler {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}{PRIMARY_SUFFIX}",
                hpa.metadata.name.as_deref().unwrap_or("")
            )),
            namespace: canary.metadata.namespace.clone(),
            labels: Some(labels),
            owner_references: Some(vec![owner_ref(canary)]),
            ..Default::default()
        },
        spec: Some(HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some(
                    target
                        .api_version
                        .clone()
                        .filter(|v| !v.is_empty())
                        .unwrap_or_else(|| "apps/v1".to_string()),
                ),
                kind: if target.kind.is_empty() {
                    "Deployment".to_string()
                } else {
                    target.kind.clone()
                },
                name: names(canary).primary,
            },
            min_replicas: spec.min_replicas,
            max_replicas: spec.max_replicas,
            metrics: spec.metrics,
            behavior: spec.behavior,
        }),
        status: None,
    }
}
