//! discovery.k8s.io/v1 EndpointSlice: defaulting and validation.
//!
//! Upstream: `pkg/apis/discovery/v1/defaults.go` (port name `""` and
//! protocol TCP) and `pkg/apis/discovery/validation/validation.go`
//! (addressType, endpoints, ports; addressType immutable on update).
//!
//! Simplified: an address is checked against its addressType (IPv4, IPv6 or
//! FQDN) and, for IPs, against the unspecified and link-local ranges, but
//! loopback addresses are accepted, unlike upstream's `ValidateEndpointIP`:
//! miniplane listens on loopback only, and its own `default/kubernetes`
//! EndpointSlice points there (see `api/kubernetes_service.rs`). Endpoint
//! hints are not validated.

use std::net::IpAddr;

use serde_json::{Value, json};

use super::meta::NameRule;
use super::{default_key, items, items_mut};
use crate::error::FieldError;
use crate::jsonpath::str_at;
use crate::labels::validation::validate_labels;
use crate::validation;

/// The address types a new EndpointSlice may have.
const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
/// Port protocols.
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
/// Most endpoints in one slice.
const MAX_ENDPOINTS: usize = 1000;
/// Most addresses in one endpoint.
const MAX_ADDRESSES: usize = 100;
/// Most ports in one slice.
const MAX_PORTS: usize = 20000;
/// Most `deprecatedTopology` labels on one endpoint.
const MAX_TOPOLOGY_LABELS: usize = 16;

/// Each port gets `name: ""` and `protocol: TCP` when unset.
pub fn default_endpoint_slice(obj: &mut Value) {
    for port in items_mut(obj, "ports") {
        default_key(port, "name", json!(""));
        default_key(port, "protocol", json!("TCP"));
    }
}

/// `ValidateEndpointSlice` without ObjectMeta (checked by the caller).
pub fn validate_endpoint_slice(obj: &Value) -> Vec<FieldError> {
    let address_type = str_at(obj, &["addressType"]);
    let mut errs = Vec::new();
    if address_type.is_empty() {
        errs.push(FieldError::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errs.push(FieldError::not_supported(
            "addressType",
            json!(address_type),
            &ADDRESS_TYPES,
        ));
    }
    errs.extend(validate_endpoints(obj, address_type));
    errs.extend(validate_ports(obj));
    errs
}

/// `addressType` may not change.
pub fn validate_endpoint_slice_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let (new_type, old_type) = (new.get("addressType"), old.get("addressType"));
    if new_type == old_type {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "addressType",
        new_type.cloned().unwrap_or(json!("")),
        "field is immutable",
    )]
}

fn validate_endpoints(obj: &Value, address_type: &str) -> Vec<FieldError> {
    let endpoints: Vec<&Value> = items(obj, "endpoints").collect();
    if endpoints.len() > MAX_ENDPOINTS {
        return vec![FieldError::too_many("endpoints", endpoints.len(), MAX_ENDPOINTS)];
    }
    let mut errs = Vec::new();
    for (i, endpoint) in endpoints.iter().enumerate() {
        let path = format!("endpoints[{i}]");
        let addresses: Vec<&str> = items(endpoint, "addresses")
            .map(|a| a.as_str().unwrap_or_default())
            .collect();
        if addresses.is_empty() {
            errs.push(FieldError::required(
                format!("{path}.addresses"),
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errs.push(FieldError::too_many(
                format!("{path}.addresses"),
                addresses.len(),
                MAX_ADDRESSES,
            ));
        }
        for (j, address) in addresses.iter().enumerate() {
            errs.extend(address_errors(
                &format!("{path}.addresses[{j}]"),
                address,
                address_type,
            ));
        }
        if let Some(node) = endpoint.get("nodeName").and_then(Value::as_str) {
            for msg in NameRule::Subdomain.check(node, false) {
                errs.push(FieldError::invalid(format!("{path}.nodeName"), json!(node), msg));
            }
        }
        let topology_path = format!("{path}.deprecatedTopology");
        let topology = endpoint.get("deprecatedTopology");
        let labels = topology.and_then(Value::as_object).map_or(0, |m| m.len());
        if labels > MAX_TOPOLOGY_LABELS {
            errs.push(FieldError::too_many(&topology_path, labels, MAX_TOPOLOGY_LABELS));
        }
        errs.extend(validate_labels(topology, &topology_path));
        if let Some(host) = endpoint.get("hostname").and_then(Value::as_str) {
            for msg in validation::is_dns1123_label(host) {
                errs.push(FieldError::invalid(format!("{path}.hostname"), json!(host), msg));
            }
        }
    }
    errs
}

/// The errors of one address of an endpoint of type `address_type` (other
/// types are not checked, as upstream).
fn address_errors(path: &str, address: &str, address_type: &str) -> Vec<FieldError> {
    let parsed = address.parse::<IpAddr>().ok();
    let mut errs = Vec::new();
    match address_type {
        "IPv4" if !parsed.is_some_and(|ip| ip.is_ipv4()) => errs.push(FieldError::invalid(
            path,
            json!(address),
            "must be a valid IPv4 address",
        )),
        "IPv6" if !parsed.is_some_and(|ip| ip.is_ipv6()) => errs.push(FieldError::invalid(
            path,
            json!(address),
            "must be a valid IPv6 address",
        )),
        "FQDN" => return fqdn_errors(path, address),
        "IPv4" | "IPv6" => {}
        _ => return errs,
    }
    errs.extend(endpoint_ip_errors(path, address, parsed));
    errs
}

/// Upstream's `ValidateEndpointIP`, but for loopback (see the module docs).
fn endpoint_ip_errors(path: &str, address: &str, parsed: Option<IpAddr>) -> Vec<FieldError> {
    let Some(ip) = parsed else {
        return vec![FieldError::invalid(
            path,
            json!(address),
            "must be a valid IP address",
        )];
    };
    let mut errs = Vec::new();
    if ip.is_unspecified() {
        errs.push(FieldError::invalid(
            path,
            json!(address),
            format!("may not be unspecified ({address})"),
        ));
    }
    let (link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => (v4.is_link_local(), v4.octets()[..3] == [224, 0, 0]),
        IpAddr::V6(v6) => (
            v6.segments()[0] & 0xffc0 == 0xfe80,
            v6.segments()[0] & 0xff0f == 0xff02,
        ),
    };
    if link_local {
        errs.push(FieldError::invalid(
            path,
            json!(address),
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errs.push(FieldError::invalid(
            path,
            json!(address),
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs
}

/// Upstream's `IsFullyQualifiedDomainName`.
fn fqdn_errors(path: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let msgs = validation::is_dns1123_subdomain(name);
    if !msgs.is_empty() {
        return vec![FieldError::invalid(path, json!(name), msgs.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            path,
            json!(name),
            "should be a domain with at least two segments separated by dots",
        )];
    }
    for label in name.split('.') {
        let msgs = validation::is_dns1123_label(label);
        if !msgs.is_empty() {
            return vec![FieldError::invalid(path, json!(label), msgs.join(","))];
        }
    }
    Vec::new()
}

fn validate_ports(obj: &Value) -> Vec<FieldError> {
    let ports: Vec<&Value> = items(obj, "ports").collect();
    if ports.len() > MAX_PORTS {
        return vec![FieldError::too_many("ports", ports.len(), MAX_PORTS)];
    }
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let path = format!("ports[{i}]");
        let name = str_at(port, &["name"]);
        for msg in validation::is_dns1123_label(name)
            .into_iter()
            .filter(|_| !name.is_empty())
        {
            errs.push(FieldError::invalid(format!("{path}.name"), json!(name), msg));
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
        } else {
            names.push(name);
        }
        match port.get("protocol").and_then(Value::as_str) {
            None => errs.push(FieldError::required(format!("{path}.protocol"), "")),
            Some(p) if !PROTOCOLS.contains(&p) => errs.push(FieldError::not_supported(
                format!("{path}.protocol"),
                json!(p),
                &PROTOCOLS,
            )),
            Some(_) => {}
        }
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            for msg in validation::is_qualified_name(app) {
                errs.push(FieldError::invalid(
                    format!("{path}.appProtocol"),
                    json!(app),
                    msg,
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(address_type: &str, addresses: &[&str]) -> Value {
        let mut obj = json!({
            "addressType": address_type,
            "endpoints": [{"addresses": addresses, "conditions": {"ready": true}}],
            "ports": [{"name": "https", "port": 6443}],
        });
        default_endpoint_slice(&mut obj);
        obj
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn ports_default_to_an_empty_name_and_tcp() {
        let mut obj = json!({"ports": [{"port": 80}, {"name": "x", "protocol": "UDP", "port": 53}]});
        default_endpoint_slice(&mut obj);
        assert_eq!(
            obj["ports"][0],
            json!({"name": "", "port": 80, "protocol": "TCP"})
        );
        assert_eq!(obj["ports"][1]["protocol"], "UDP");
    }

    #[test]
    fn a_valid_slice_passes_loopback_included() {
        assert!(validate_endpoint_slice(&slice("IPv4", &["10.0.0.2", "127.0.0.1"])).is_empty());
        assert!(validate_endpoint_slice(&slice("IPv6", &["::1", "fd00::2"])).is_empty());
        assert!(validate_endpoint_slice(&slice("FQDN", &["api.example.com."])).is_empty());
    }

    #[test]
    fn address_type_is_required_and_enumerated() {
        let mut obj = slice("IPv4", &["10.0.0.2"]);
        obj.as_object_mut().unwrap().remove("addressType");
        assert_eq!(
            messages(&validate_endpoint_slice(&obj)),
            ["addressType: Required value"]
        );
        assert_eq!(
            messages(&validate_endpoint_slice(&slice("IP", &["10.0.0.2"]))),
            [r#"addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6""#]
        );
    }

    #[test]
    fn addresses_must_match_the_address_type() {
        assert_eq!(
            messages(&validate_endpoint_slice(&slice("IPv4", &["fd00::2", "nope"]))),
            [
                r#"endpoints[0].addresses[0]: Invalid value: "fd00::2": must be a valid IPv4 address"#,
                r#"endpoints[0].addresses[1]: Invalid value: "nope": must be a valid IPv4 address"#,
                r#"endpoints[0].addresses[1]: Invalid value: "nope": must be a valid IP address"#,
            ]
        );
        assert_eq!(
            messages(&validate_endpoint_slice(&slice(
                "IPv4",
                &["0.0.0.0", "169.254.1.1"]
            ))),
            [
                r#"endpoints[0].addresses[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)"#,
                r#"endpoints[0].addresses[1]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)"#,
            ]
        );
        assert_eq!(
            messages(&validate_endpoint_slice(&slice("FQDN", &["single"]))),
            [
                r#"endpoints[0].addresses[0]: Invalid value: "single": should be a domain with at least two segments separated by dots"#
            ]
        );
        assert_eq!(
            messages(&validate_endpoint_slice(&slice("IPv4", &[]))),
            ["endpoints[0].addresses: Required value: must contain at least 1 address"]
        );
    }

    #[test]
    fn ports_need_unique_names_and_a_known_protocol() {
        let mut obj = slice("IPv4", &["10.0.0.2"]);
        obj["ports"] = json!([
            {"name": "Web", "port": 80, "protocol": "TCP"},
            {"name": "Web", "port": 81, "protocol": "ICMP"},
            {"name": "", "port": 82},
        ]);
        let msgs = messages(&validate_endpoint_slice(&obj));
        assert_eq!(msgs.len(), 5, "{msgs:?}");
        assert!(msgs[0].starts_with(r#"ports[0].name: Invalid value: "Web": a lowercase RFC 1123 label"#));
        assert_eq!(msgs[2], r#"ports[1].name: Duplicate value: "Web""#);
        assert_eq!(
            msgs[3],
            r#"ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP""#
        );
        assert_eq!(msgs[4], "ports[2].protocol: Required value");
    }

    #[test]
    fn the_address_type_is_immutable() {
        let (v4, v6) = (slice("IPv4", &["10.0.0.2"]), slice("IPv6", &["fd00::2"]));
        assert!(validate_endpoint_slice_update(&v4, &v4).is_empty());
        assert_eq!(
            messages(&validate_endpoint_slice_update(&v6, &v4)),
            [r#"addressType: Invalid value: "IPv6": field is immutable"#]
        );
    }
}
