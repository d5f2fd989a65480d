//! A Service's pods as endpoints, grouped into the slices they belong in:
//! pure.
//!
//! Upstream: `staging/src/k8s.io/endpointslice/utils.go` (`podToEndpoint`,
//! `getEndpointPorts`, `getEndpointAddresses`, `newEndpointSlice`,
//! `setEndpointSliceLabels`, `getAddressTypesForService`) and the first half
//! of `reconciler.reconcile` (desired endpoints by address type and port set).
//!
//! ```text
//! for each pod the selector picks that has an IP and has not finished (terminating ones too):
//!   ports    = each service port whose targetPort the pod has, by name (headless without ports: none)
//!   for each address type of the Service (IPv4, IPv6):
//!     endpoint = the pod's IPs of that type, conditions, nodeName, targetRef (+ hostname)
//!     → the group (address type, ports)
//! ```

use std::collections::BTreeMap;
use std::net::IpAddr;

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::controller_utils::pods::is_pod_ready;
use crate::endpoint::plan::{HEADLESS_LABEL, is_headless};
use crate::endpoint::pods::{find_port, pod_reference, should_pod_be_in_endpoints, should_set_hostname};
use crate::runtime::new_controller_ref;

/// Names the Service a slice belongs to (upstream `discovery.LabelServiceName`).
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// Names the controller that manages a slice (upstream `discovery.LabelManagedBy`).
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// This controller's value of [`MANAGED_BY_LABEL`] (upstream `ControllerName`).
pub const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// At most this many endpoints per slice (`--max-endpoints-per-slice`'s default).
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;

/// A port set as an ordered, comparable key (upstream `NewPortMapKey`).
pub type PortsKey = Vec<(Option<String>, Option<i32>, Option<String>, Option<String>)>;

/// The key of a port list, independent of its order.
pub fn ports_key(ports: &[EndpointPort]) -> PortsKey {
    let mut key: PortsKey = ports
        .iter()
        .map(|p| (p.name.clone(), p.port, p.protocol.clone(), p.app_protocol.clone()))
        .collect();
    key.sort();
    key
}

/// The endpoints that share an address type and a port set: they go in the
/// same slices (upstream `endpointMeta` with its endpoint set).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// `IPv4` or `IPv6`.
    pub address_type: String,
    /// The ports, in the Service's order.
    pub ports: Vec<EndpointPort>,
    /// The endpoints, ordered by pod namespace, name and address.
    pub endpoints: Vec<Endpoint>,
}

fn is_ipv6(ip: &str) -> bool {
    matches!(ip.parse::<IpAddr>(), Ok(IpAddr::V6(_)))
}

/// The address type of an IP family name.
fn address_type_of_family(family: &str) -> Option<&'static str> {
    match family {
        "IPv4" => Some("IPv4"),
        "IPv6" => Some("IPv6"),
        _ => None,
    }
}

/// Upstream `getAddressTypesForService`: from `ipFamilies`, else the
/// ClusterIP's family, else (headless, legacy) both.
pub fn address_types(service: &Service) -> Vec<&'static str> {
    let spec = service.spec.as_ref();
    let mut types: Vec<&'static str> = spec
        .and_then(|s| s.ip_families.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|f| address_type_of_family(f))
        .collect();
    types.sort_unstable();
    types.dedup();
    if !types.is_empty() {
        return types;
    }
    match spec.and_then(|s| s.cluster_ip.as_deref()) {
        Some(ip) if !ip.is_empty() && ip != "None" => vec![if is_ipv6(ip) { "IPv6" } else { "IPv4" }],
        _ => vec!["IPv4", "IPv6"],
    }
}

/// Upstream `getAddressTypeForService`: the one address type of a
/// placeholder slice.
pub fn placeholder_address_type(service: &Service) -> &'static str {
    let spec = service.spec.as_ref();
    let first_family = spec
        .and_then(|s| s.ip_families.as_ref())
        .and_then(|f| f.first())
        .and_then(|f| address_type_of_family(f));
    if let Some(t) = first_family {
        return t;
    }
    match spec.and_then(|s| s.cluster_ip.as_deref()) {
        Some(ip) if ip != "None" && is_ipv6(ip) => "IPv6",
        _ => "IPv4",
    }
}

/// Upstream `getEndpointPorts`: each service port the pod has, with the
/// number its `targetPort` resolves to; none for a headless Service without
/// ports.
pub fn endpoint_ports(service: &Service, pod: &Pod) -> Vec<EndpointPort> {
    let ports = service.spec.as_ref().and_then(|s| s.ports.as_ref());
    ports
        .into_iter()
        .flatten()
        .filter_map(|port| {
            let number = find_port(pod, port)?;
            Some(EndpointPort {
                name: Some(port.name.clone().unwrap_or_default()),
                port: Some(number),
                protocol: Some(port.protocol.clone().unwrap_or_else(|| "TCP".into())),
                app_protocol: port.app_protocol.clone(),
            })
        })
        .collect()
}

/// Upstream `podToEndpoint`: the pod as an endpoint of `address_type`;
/// `None` when it has no IP of that type.
pub fn pod_to_endpoint(pod: &Pod, service: &Service, address_type: &str) -> Option<Endpoint> {
    let status = pod.status.as_ref()?;
    let mut ips: Vec<&str> = status.pod_ips.iter().flatten().map(|ip| ip.ip.as_str()).collect();
    if ips.is_empty() {
        ips.extend(status.pod_ip.as_deref());
    }
    let want_v6 = address_type == "IPv6";
    let addresses: Vec<String> = ips
        .into_iter()
        .filter(|ip| is_ipv6(ip) == want_v6)
        .map(str::to_string)
        .collect();
    if addresses.is_empty() {
        return None;
    }
    let serving = is_pod_ready(pod);
    let terminating = pod.metadata.deletion_timestamp.is_some();
    // A terminating pod is never "ready", unless every pod is published.
    let publish = service.spec.as_ref().and_then(|s| s.publish_not_ready_addresses) == Some(true);
    let ready = publish || (serving && !terminating);
    let spec = pod.spec.as_ref();
    Some(Endpoint {
        addresses,
        conditions: Some(EndpointConditions {
            ready: Some(ready),
            serving: Some(serving),
            terminating: Some(terminating),
        }),
        node_name: spec.and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty()),
        hostname: should_set_hostname(pod, service)
            .then(|| spec.and_then(|s| s.hostname.clone()))
            .flatten(),
        target_ref: Some(pod_reference(pod)),
        ..Default::default()
    })
}

/// The desired groups of `service` over `pods` (the pods its selector picks),
/// in (address type, ports) order.
pub fn desired_groups(service: &Service, pods: &[&Pod]) -> Vec<Group> {
    let types = address_types(service);
    let mut groups: BTreeMap<(String, PortsKey), Group> = BTreeMap::new();
    for pod in pods {
        if !should_pod_be_in_endpoints(pod, true) {
            continue;
        }
        let ports = endpoint_ports(service, pod);
        for address_type in &types {
            let Some(endpoint) = pod_to_endpoint(pod, service, address_type) else {
                continue;
            };
            let key = (address_type.to_string(), ports_key(&ports));
            let group = groups.entry(key).or_insert_with(|| Group {
                address_type: address_type.to_string(),
                ports: ports.clone(),
                endpoints: Vec::new(),
            });
            group.endpoints.push(endpoint);
        }
    }
    let mut groups: Vec<Group> = groups.into_values().collect();
    for group in &mut groups {
        group
            .endpoints
            .sort_by(|a, b| endpoint_order(a).cmp(&endpoint_order(b)));
    }
    groups
}

/// Endpoints are ordered by their pod's namespace and name, then address.
fn endpoint_order(e: &Endpoint) -> (Option<&str>, Option<&str>, &[String]) {
    let pod = e.target_ref.as_ref();
    (
        pod.and_then(|r| r.namespace.as_deref()),
        pod.and_then(|r| r.name.as_deref()),
        &e.addresses,
    )
}

/// Upstream `setEndpointSliceLabels`: the Service's labels (but the
/// reserved ones), the headless label for a headless Service, the Service's
/// name and this controller's.
pub fn slice_labels(service: &Service) -> BTreeMap<String, String> {
    let reserved = [SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL];
    let mut labels: BTreeMap<String, String> = service
        .metadata
        .labels
        .iter()
        .flatten()
        .filter(|(k, _)| !reserved.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if is_headless(service) {
        labels.insert(HEADLESS_LABEL.to_string(), String::new());
    }
    let name = service.metadata.name.clone().unwrap_or_default();
    labels.insert(SERVICE_NAME_LABEL.to_string(), name);
    labels.insert(MANAGED_BY_LABEL.to_string(), CONTROLLER_NAME.to_string());
    labels
}

/// Upstream `newEndpointSlice`: a new slice of `service` named
/// `<service>-<random>` (generateName), controlled by the Service.
pub fn new_slice(
    service: &Service,
    address_type: &str,
    ports: &[EndpointPort],
    endpoints: Vec<Endpoint>,
) -> EndpointSlice {
    let name = service.metadata.name.clone().unwrap_or_default();
    EndpointSlice {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: service.metadata.namespace.clone(),
            labels: Some(slice_labels(service)),
            owner_references: Some(vec![new_controller_ref(&service.metadata, "v1", "Service")]),
            ..Default::default()
        },
        address_type: address_type.to_string(),
        endpoints,
        ports: (!ports.is_empty()).then(|| ports.to_vec()),
    }
}
