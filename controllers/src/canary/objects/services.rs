//! The three Services of a Canary: the apex `<service>` and
//! `<service>-primary` select the primary's pods, `<service>-canary` the
//! target's. The HTTPRoute splits traffic between the last two.
//!
//! Flagger: `pkg/router/kubernetes_default.go` (`Initialize`, `Reconcile`,
//! `reconcileService`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::primary::{primary_selector, target_selector};
use super::{CANARY_RPS_ANNOTATION, DEFAULT_CANARY_RPS, Strategy, canary_labels, names, owner_ref, strategy};
use crate::canary::types::Canary;

/// The name of the Services' one port (Flagger's `portName` default).
pub const PORT_NAME: &str = "http";

/// The apex, `-primary` and `-canary` Services, in that order: ClusterIP,
/// port `spec.service.port` to `targetPort` (default: the port), owned by
/// `canary`. In blue/green the `-canary` Service carries
/// [`CANARY_RPS_ANNOTATION`] (the Canary's own, default
/// [`DEFAULT_CANARY_RPS`]): the traffic simulation calls it directly, as
/// Flagger's load tester would, since the route sends it nothing.
pub fn services(canary: &Canary, target: &Deployment) -> Vec<Service> {
    let n = names(canary);
    let primary = primary_selector(canary, target);
    let canary_pods = target_selector(target);
    let mut canary_annotations = BTreeMap::new();
    if strategy(canary) == Strategy::BlueGreen {
        let rps = canary
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(CANARY_RPS_ANNOTATION))
            .map_or(DEFAULT_CANARY_RPS, String::as_str);
        canary_annotations.insert(CANARY_RPS_ANNOTATION.to_string(), rps.to_string());
    }
    vec![
        service(canary, &n.apex_service, primary.clone(), BTreeMap::new()),
        service(canary, &n.primary_service, primary, BTreeMap::new()),
        service(canary, &n.canary_service, canary_pods, canary_annotations),
    ]
}

/// One ClusterIP Service selecting `selector`.
fn service(
    canary: &Canary,
    name: &str,
    selector: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
) -> Service {
    let spec = &canary.spec.service;
    let target_port = spec.target_port.clone().unwrap_or(IntOrString::Int(spec.port));
    Service {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: canary.metadata.namespace.clone(),
            labels: Some(canary_labels(canary)),
            annotations: (!annotations.is_empty()).then_some(annotations),
            owner_references: Some(vec![owner_ref(canary)]),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".to_string()),
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some(PORT_NAME.to_string()),
                protocol: Some("TCP".to_string()),
                port: spec.port,
                target_port: Some(target_port),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    }
}
