//! What the Endpoints of a Service should be, and what to write: pure.
//!
//! Upstream: `syncService` of `pkg/controller/endpoint/endpoints_controller.go`
//! (the loop over pods and service ports, `addEndpointSubset`,
//! `endpointPortFromServicePort`, the equality check before a write).
//!
//! ```text
//! for each pod the selector picks that should be in endpoints:
//!   address = pod IP of the Service's family, nodeName, targetRef (+ hostname)
//!   no service ports: headless → one subset without ports; otherwise nothing
//!   for each service port whose targetPort the pod has:
//!     ready (or publishNotReadyAddresses) → {addresses: [a], ports: [p]}
//!     otherwise                           → {notReadyAddresses: [a], ports: [p]}
//! repack → compare with the live Endpoints (subsets, labels) → Nothing | Create | Update
//! ```
//!
//! Simplified against upstream:
//! * `endpoints.kubernetes.io/last-change-trigger-time` is the latest of the
//!   Service's creation and its pods' Ready transitions (upstream tracks the
//!   earliest change not yet written, per sync, in a `TriggerTimeTracker`).
//! * No truncation at 1000 addresses (`endpoints.kubernetes.io/over-capacity`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort, EndpointSubset, Endpoints, Pod, Service, ServicePort,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::pods::{
    find_port, pod_ip_for_service, pod_reference, should_pod_be_in_endpoints, should_set_hostname,
};
use super::repack::repack_subsets;
use crate::controller_utils::pods::{is_pod_ready, pod_ready_condition};

/// The label an Endpoints of a headless Service carries (upstream `v1.IsHeadlessService`).
pub const HEADLESS_LABEL: &str = "service.kubernetes.io/headless";
/// When the last change the Endpoints reflect happened (upstream `v1.EndpointsLastChangeTriggerTime`).
pub const LAST_CHANGE_TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// One sync's decision.
#[derive(Clone, Debug, PartialEq)]
pub enum EndpointsPlan {
    /// The live Endpoints are right.
    Nothing,
    /// Create these Endpoints.
    Create(Endpoints),
    /// Replace the live Endpoints with these (same resourceVersion).
    Update(Endpoints),
}

/// Whether the Service is headless (`clusterIP: None` or none at all).
pub fn is_headless(service: &Service) -> bool {
    let ip = service
        .spec
        .as_ref()
        .and_then(|s| s.cluster_ip.as_deref())
        .unwrap_or("");
    ip.is_empty() || ip == "None"
}

fn publish_not_ready(service: &Service) -> bool {
    service
        .spec
        .as_ref()
        .and_then(|s| s.publish_not_ready_addresses)
        .unwrap_or(false)
}

/// Upstream `podToEndpointAddressForService` plus `ShouldSetHostname`: the
/// pod's address for the Service, `None` without an IP of its family.
pub fn endpoint_address(service: &Service, pod: &Pod) -> Option<EndpointAddress> {
    let ip = pod_ip_for_service(service, pod)?;
    let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
    let hostname = should_set_hostname(pod, service)
        .then(|| pod.spec.as_ref().and_then(|s| s.hostname.clone()))
        .flatten();
    Some(EndpointAddress {
        ip: ip.to_string(),
        hostname,
        node_name: Some(node.unwrap_or_default()),
        target_ref: Some(pod_reference(pod)),
    })
}

/// Upstream `endpointPortFromServicePort`.
fn endpoint_port(port: &ServicePort, number: i32) -> EndpointPort {
    EndpointPort {
        name: port.name.clone().filter(|n| !n.is_empty()),
        port: number,
        protocol: port.protocol.clone(),
        app_protocol: port.app_protocol.clone(),
    }
}

/// Upstream `addEndpointSubset`: one subset holding one address.
fn subset(address: EndpointAddress, port: Option<EndpointPort>, ready: bool) -> EndpointSubset {
    let (addresses, not_ready) = match ready {
        true => (Some(vec![address]), None),
        false => (None, Some(vec![address])),
    };
    EndpointSubset {
        addresses,
        not_ready_addresses: not_ready,
        ports: Some(port.into_iter().collect()),
    }
}

/// The repacked subsets of `service` over `pods` (the pods its selector
/// picks, in any order).
pub fn desired_subsets(service: &Service, pods: &[&Pod]) -> Vec<EndpointSubset> {
    let tolerate_unready = publish_not_ready(service);
    let ports = service
        .spec
        .as_ref()
        .and_then(|s| s.ports.clone())
        .unwrap_or_default();
    let mut subsets = Vec::new();
    for pod in pods {
        if !should_pod_be_in_endpoints(pod, tolerate_unready) {
            continue;
        }
        let Some(address) = endpoint_address(service, pod) else {
            continue;
        };
        let ready = tolerate_unready || is_pod_ready(pod);
        if ports.is_empty() {
            // A headless Service may have no ports; any other gets no endpoints.
            if is_headless(service) {
                subsets.push(subset(address, None, ready));
            }
            continue;
        }
        for port in &ports {
            if let Some(number) = find_port(pod, port) {
                subsets.push(subset(address.clone(), Some(endpoint_port(port, number)), ready));
            }
        }
    }
    repack_subsets(&subsets)
}

/// The latest of the Service's creation and its pods' Ready transitions (see
/// the module doc).
pub fn last_change_trigger_time(service: &Service, pods: &[&Pod]) -> Option<Timestamp> {
    let created = service.metadata.creation_timestamp.as_ref().map(|t| t.0);
    let transitions = pods
        .iter()
        .filter_map(|p| pod_ready_condition(p)?.last_transition_time.as_ref().map(|t| t.0));
    created.into_iter().chain(transitions).max()
}

/// The labels the Endpoints must carry: the Service's, plus the headless label.
fn wanted_labels(service: &Service) -> BTreeMap<String, String> {
    let mut labels = service.metadata.labels.clone().unwrap_or_default();
    if is_headless(service) {
        labels.insert(HEADLESS_LABEL.to_string(), String::new());
    }
    labels
}

/// The tail of `syncService`: compare `live` (the cached Endpoints, `None`
/// when missing) with what `service` over `pods` should have, and say what to
/// write. Like upstream, pods' resourceVersions are not compared (the
/// targetRefs carry none), so a pod update that changes nothing written
/// writes nothing.
pub fn plan_endpoints(service: &Service, pods: &[&Pod], live: Option<&Endpoints>) -> EndpointsPlan {
    let subsets = desired_subsets(service, pods);
    let labels = wanted_labels(service);
    if let Some(live) = live {
        let live_subsets = live.subsets.clone().unwrap_or_default();
        let live_labels = live.metadata.labels.clone().unwrap_or_default();
        if live_subsets == subsets && live_labels == labels {
            return EndpointsPlan::Nothing;
        }
    }
    let mut next = live.cloned().unwrap_or_else(|| Endpoints {
        metadata: ObjectMeta {
            name: service.metadata.name.clone(),
            namespace: service.metadata.namespace.clone(),
            ..Default::default()
        },
        ..Default::default()
    });
    next.subsets = (!subsets.is_empty()).then_some(subsets);
    next.metadata.labels = (!labels.is_empty()).then_some(labels);
    let annotations = next.metadata.annotations.get_or_insert_with(BTreeMap::new);
    match last_change_trigger_time(service, pods) {
        Some(t) => annotations.insert(LAST_CHANGE_TRIGGER_TIME.to_string(), t.to_string()),
        None => annotations.remove(LAST_CHANGE_TRIGGER_TIME),
    };
    if annotations.is_empty() {
        next.metadata.annotations = None;
    }
    match live {
        None => EndpointsPlan::Create(next),
        Some(_) => EndpointsPlan::Update(next),
    }
}
