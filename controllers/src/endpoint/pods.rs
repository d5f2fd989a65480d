//! Pods as endpoints: which pods count, their address for a Service, and
//! the port a Service port's `targetPort` names. Pure; shared by the
//! Endpoints and EndpointSlice controllers.
//!
//! Upstream: `staging/src/k8s.io/endpointslice/util/controller_utils.go`
//! (`ShouldPodBeInEndpoints`, `ShouldSetHostname`, `GetPodServiceMemberships`),
//! `pkg/api/v1/pod/util.go` (`FindPort`) and `podToEndpointAddressForService`
//! of `pkg/controller/endpoint/endpoints_controller.go`.
//!
//! Simplified: a Service's IP family is its first `ipFamilies` entry, else
//! that of its ClusterIP, else that of the pod's IP (as upstream); dual-stack
//! pods are matched by family as upstream, but miniplane's pods have one IP.

use std::net::IpAddr;

use k8s_openapi::api::core::v1::{ObjectReference, Pod, Service, ServicePort};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::controller_utils::pods::{is_terminal_phase, pod_phase};

/// Upstream `ShouldPodBeInEndpoints`: a pod that has an IP and has not
/// finished; a pod being deleted only when `include_terminating`.
pub fn should_pod_be_in_endpoints(pod: &Pod, include_terminating: bool) -> bool {
    if is_terminal_phase(pod_phase(pod)) {
        return false;
    }
    let status = pod.status.as_ref();
    let has_ip = status
        .and_then(|s| s.pod_ip.as_deref())
        .is_some_and(|ip| !ip.is_empty())
        || status
            .and_then(|s| s.pod_ips.as_ref())
            .is_some_and(|ips| !ips.is_empty());
    if !has_ip {
        return false;
    }
    include_terminating || pod.metadata.deletion_timestamp.is_none()
}

/// Upstream `ShouldSetHostname`: the pod asked for a hostname in the
/// Service's subdomain.
pub fn should_set_hostname(pod: &Pod, service: &Service) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return false;
    };
    let hostname = spec.hostname.as_deref().unwrap_or("");
    !hostname.is_empty()
        && spec.subdomain.as_deref() == service.metadata.name.as_deref()
        && pod.metadata.namespace == service.metadata.namespace
}

/// Whether the Service's selector picks the pod: every `key: value` of
/// `spec.selector` is a label of the pod (upstream
/// `labels.Set(selector).AsSelectorPreValidated()`). A Service without a
/// selector picks nothing.
pub fn service_selects(service: &Service, pod: &Pod) -> bool {
    let Some(selector) = service.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
        return false;
    };
    let labels = pod.metadata.labels.as_ref();
    selector
        .iter()
        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
}

/// Whether the Service gets endpoints from a controller: it has a selector
/// and is not of type `ExternalName`.
pub fn has_managed_endpoints(service: &Service) -> bool {
    let Some(spec) = service.spec.as_ref() else {
        return false;
    };
    spec.selector.is_some() && spec.type_.as_deref() != Some("ExternalName")
}

/// `true` when the Service's address family is IPv6 (upstream's choice in
/// `podToEndpointAddressForService`).
pub fn service_wants_ipv6(service: &Service, pod: &Pod) -> bool {
    let spec = service.spec.as_ref();
    if let Some(family) = spec.and_then(|s| s.ip_families.as_ref()).and_then(|f| f.first()) {
        return family == "IPv6";
    }
    let cluster_ip = spec.and_then(|s| s.cluster_ip.as_deref()).unwrap_or("");
    if !cluster_ip.is_empty() && cluster_ip != "None" {
        return is_ipv6(cluster_ip);
    }
    pod.status
        .as_ref()
        .and_then(|s| s.pod_ip.as_deref())
        .is_some_and(is_ipv6)
}

fn is_ipv6(ip: &str) -> bool {
    matches!(ip.parse::<IpAddr>(), Ok(IpAddr::V6(_)))
}

/// The pod's IP of the Service's family, if it has one.
pub fn pod_ip_for_service<'a>(service: &Service, pod: &'a Pod) -> Option<&'a str> {
    let want_v6 = service_wants_ipv6(service, pod);
    let status = pod.status.as_ref()?;
    let from_list = status
        .pod_ips
        .iter()
        .flatten()
        .map(|ip| ip.ip.as_str())
        .find(|ip| is_ipv6(ip) == want_v6);
    from_list.or_else(|| {
        status
            .pod_ip
            .as_deref()
            .filter(|ip| !ip.is_empty() && is_ipv6(ip) == want_v6)
    })
}

/// The reference an address carries to its pod.
pub fn pod_reference(pod: &Pod) -> ObjectReference {
    ObjectReference {
        kind: Some("Pod".into()),
        namespace: pod.metadata.namespace.clone(),
        name: pod.metadata.name.clone(),
        uid: pod.metadata.uid.clone(),
        ..Default::default()
    }
}

/// Upstream `FindPort`: the container port a Service port's `targetPort`
/// names. A number is taken as it is; a name is looked up among the ports of
/// the pod's containers (and restartable init containers, the sidecars) with
/// the Service port's protocol. `None`: the pod has no such port.
pub fn find_port(pod: &Pod, port: &ServicePort) -> Option<i32> {
    let protocol = port.protocol.as_deref().unwrap_or("TCP");
    match port.target_port.as_ref() {
        Some(IntOrString::Int(n)) => Some(*n),
        None => Some(port.port),
        Some(IntOrString::String(name)) => {
            let spec = pod.spec.as_ref()?;
            let sidecars = spec
                .init_containers
                .iter()
                .flatten()
                .filter(|c| c.restart_policy.as_deref() == Some("Always"));
            spec.containers
                .iter()
                .chain(sidecars)
                .flat_map(|c| c.ports.iter().flatten())
                .find(|p| {
                    p.name.as_deref() == Some(name) && p.protocol.as_deref().unwrap_or("TCP") == protocol
                })
                .map(|p| p.container_port)
        }
    }
}
