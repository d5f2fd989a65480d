//! networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy: defaulting
//! and validation.
//!
//! Upstream: `pkg/apis/networking/v1/defaults.go` (a NetworkPolicy port's
//! protocol is TCP; `policyTypes` is `[Ingress]`, plus `Egress` when egress
//! rules are given; an IngressClass's parameters scope is `Cluster`; an
//! Ingress path's `pathType` has no default in v1) and
//! `pkg/apis/networking/validation/validation.go` (`ValidateIngressCreate`,
//! `ValidateIngressClass`, `ValidateIngressClassUpdate`,
//! `ValidateNetworkPolicySpec`). The strategies
//! (`pkg/registry/networking/*/strategy.go`) start an Ingress's status empty
//! and bump `metadata.generation` on a spec change, which the generic code in
//! [`super`] does for every kind with a generation.
//!
//! Simplified: the relaxations upstream grants to objects stored by older
//! versions (invalid secret names, wildcard-host rules, CIDRs) are not
//! needed, nothing older ever stored them; a CIDR is checked for shape (an
//! IP, `/`, a prefix length the family allows), not for leading zeros; the
//! Ingress status (`ValidateIngressStatusUpdate`) is not validated.

use std::net::IpAddr;

use serde_json::{Value, json};

use super::{child, default_key, items, items_mut};
use crate::error::FieldError;
use crate::jsonpath::str_at;
use crate::labels::validation::validate_label_selector;
use crate::validation::{is_dns1035_label, is_dns1123_subdomain, regex_error};

use super::pod::port_name_errors;

/// The annotation an Ingress named its class with before `ingressClassName`.
const ANNOTATION_INGRESS_CLASS: &str = "kubernetes.io/ingress.class";
/// The longest IngressClass controller name.
const MAX_LEN_INGRESS_CLASS_CONTROLLER: usize = 250;
/// Path types, sorted as upstream's `sets.String.List()` prints them.
const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
/// What an Exact or Prefix path may not contain.
const INVALID_PATH_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
/// What an Exact or Prefix path may not end with.
const INVALID_PATH_SUFFIXES: [&str; 2] = ["/..", "/."];
/// IngressClass parameter scopes.
const SCOPES: [&str; 2] = ["Cluster", "Namespace"];
/// NetworkPolicy protocols, in upstream's order.
const PROTOCOLS: [&str; 3] = ["TCP", "UDP", "SCTP"];
/// NetworkPolicy policy types.
const POLICY_TYPES: [&str; 2] = ["Ingress", "Egress"];

// ---------------------------------------------------------------------------
// Defaulting

/// `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`.
pub fn default_network_policy(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    for rules in ["ingress", "egress"] {
        for rule in items_mut(spec, rules) {
            for port in items_mut(rule, "ports") {
                default_key(port, "protocol", json!("TCP"));
            }
        }
    }
    let no_types = spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_types {
        let has_egress = items(spec, "egress").next().is_some();
        let types = if has_egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        spec["policyTypes"] = types;
    }
}

/// `SetDefaults_IngressClass`: parameters without a scope are cluster-scoped.
pub fn default_ingress_class(obj: &mut Value) {
    if let Some(params) = obj.pointer_mut("/spec/parameters").filter(|p| p.is_object()) {
        default_key(params, "scope", json!("Cluster"));
    }
}

// ---------------------------------------------------------------------------
// Ingress

/// The part of `ValidateIngressCreate` that applies on create only: the
/// class annotation, when given beside `ingressClassName`, must name the same class.
pub fn validate_ingress_class_annotation(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let annotation = obj
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(ANNOTATION_INGRESS_CLASS))
        .and_then(Value::as_str);
    let class = obj.pointer("/spec/ingressClassName").and_then(Value::as_str);
    if let (Some(annotation), Some(class)) = (annotation, class)
        && annotation != class
    {
        errs.push(FieldError::invalid(
            format!("annotations.{ANNOTATION_INGRESS_CLASS}"),
            json!(annotation),
            "must match `ingressClassName` when both are specified",
        ));
    }
    errs
}

/// `ValidateIngressSpec`.
pub fn validate_ingress(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let rules: Vec<&Value> = items(spec, "rules").collect();
    let default_backend = spec.get("defaultBackend").filter(|b| !b.is_null());
    let mut errs = Vec::new();
    if rules.is_empty() && default_backend.is_none() {
        errs.push(crate::validation::invalid_raw(
            "spec",
            "[]networking.IngressRule(nil)".to_string(),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = default_backend {
        errs.extend(validate_backend(backend, "spec.defaultBackend"));
    }
    for (i, rule) in rules.iter().enumerate() {
        errs.extend(validate_rule(rule, &format!("spec.rules[{i}]")));
    }
    for (i, tls) in items(spec, "tls").enumerate() {
        errs.extend(validate_tls(tls, &format!("spec.tls[{i}]")));
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        for msg in is_dns1123_subdomain(class) {
            errs.push(FieldError::invalid("spec.ingressClassName", json!(class), msg));
        }
    }
    errs
}

/// One rule: its host (a DNS name or a wildcard one, never an IP) and its
/// HTTP paths.
fn validate_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let host = str_at(rule, &["host"]);
    if !host.is_empty() {
        errs.extend(host_errors(host, &format!("{path}.host")));
    }
    if let Some(http) = rule.get("http").filter(|h| !h.is_null()) {
        let paths: Vec<&Value> = items(http, "paths").collect();
        if paths.is_empty() {
            errs.push(FieldError::required(format!("{path}.http.paths"), ""));
        }
        for (i, p) in paths.iter().enumerate() {
            errs.extend(validate_http_path(p, &format!("{path}.http.paths[{i}]")));
        }
    }
    errs
}

/// A rule's host.
fn host_errors(host: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if host.parse::<IpAddr>().is_ok() {
        errs.push(FieldError::invalid(
            path,
            json!(host),
            "must be a DNS name, not an IP address",
        ));
    }
    for msg in dns_or_wildcard_errors(host) {
        errs.push(FieldError::invalid(path, json!(host), msg));
    }
    errs
}

/// `IsDNS1123Subdomain`, or `IsWildcardDNS1123Subdomain` when the name holds a `*`.
fn dns_or_wildcard_errors(host: &str) -> Vec<String> {
    if !host.contains('*') {
        return is_dns1123_subdomain(host);
    }
    let mut errs = Vec::new();
    if host.len() > 253 {
        errs.push(crate::validation::max_len_error(253));
    }
    let valid = host
        .strip_prefix("*.")
        .is_some_and(|rest| is_dns1123_subdomain(rest).is_empty());
    if !valid {
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["*.example.com"],
        ));
    }
    errs
}

/// `validateHTTPIngressPath`: a pathType is required; Exact and Prefix
/// paths are absolute and clean.
fn validate_http_path(p: &Value, path: &str) -> Vec<FieldError> {
    let Some(path_type) = p.get("pathType").and_then(Value::as_str) else {
        return vec![FieldError::required(
            format!("{path}.pathType"),
            "pathType must be specified",
        )];
    };
    let value = str_at(p, &["path"]);
    let field = format!("{path}.path");
    let mut errs = Vec::new();
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    &field,
                    json!(value),
                    "must be an absolute path",
                ));
            }
            for seq in INVALID_PATH_SEQUENCES.iter().filter(|s| value.contains(*s)) {
                errs.push(FieldError::invalid(
                    &field,
                    json!(value),
                    format!("must not contain '{seq}'"),
                ));
            }
            for suffix in INVALID_PATH_SUFFIXES.iter().filter(|s| value.ends_with(*s)) {
                errs.push(FieldError::invalid(
                    &field,
                    json!(value),
                    format!("cannot end with '{suffix}'"),
                ));
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(
                    &field,
                    json!(value),
                    "must be an absolute path",
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.pathType"),
            json!(other),
            &PATH_TYPES,
        )),
    }
    errs.extend(validate_backend(
        p.get("backend").unwrap_or(&Value::Null),
        &format!("{path}.backend"),
    ));
    errs
}

/// `validateIngressBackend`: exactly one of a resource and a service; a
/// service has a DNS-1035 name and a port name or number.
fn validate_backend(backend: &Value, path: &str) -> Vec<FieldError> {
    let resource = backend.get("resource").filter(|r| !r.is_null());
    let service = backend.get("service").filter(|s| !s.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => vec![FieldError::invalid(
            path,
            json!(""),
            "cannot set both resource and service backends",
        )],
        (Some(resource), None) => validate_typed_reference(resource, &format!("{path}.resource")),
        (None, Some(service)) => validate_service_backend(service, path),
        (None, None) => vec![FieldError::invalid(
            path,
            json!(""),
            "resource or service backend is required",
        )],
    }
}

fn validate_service_backend(service: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_at(service, &["name"]);
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.service.name"), ""));
    } else {
        for msg in is_dns1035_label(name) {
            errs.push(FieldError::invalid(
                format!("{path}.service.name"),
                json!(name),
                msg,
            ));
        }
    }
    let port_name = str_at(service, &["port", "name"]);
    let number = service
        .pointer("/port/number")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    match (port_name.is_empty(), number) {
        (false, n) if n != 0 => errs.push(FieldError::invalid(
            path,
            json!(""),
            "cannot set both port name & port number",
        )),
        (false, _) => {
            for msg in port_name_errors(port_name) {
                errs.push(FieldError::invalid(
                    format!("{path}.service.port.name"),
                    json!(port_name),
                    msg,
                ));
            }
        }
        (true, 0) => errs.push(FieldError::required(path, "port name or number is required")),
        (true, n) => errs.extend(port_number_errors(n, &format!("{path}.service.port.number"))),
    }
    errs
}

/// `IsValidPortNum`.
fn port_number_errors(n: i64, path: &str) -> Vec<FieldError> {
    if (1..=65535).contains(&n) {
        return Vec::new();
    }
    vec![FieldError::invalid(
        path,
        json!(n),
        crate::validation::range_error(1, 65535),
    )]
}

/// `validateIngressTypedLocalObjectReference` (and the shared part of the
/// IngressClass parameters reference): apiGroup, kind and name.
fn validate_typed_reference(r: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(group) = r.get("apiGroup").and_then(Value::as_str) {
        for msg in is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid(format!("{path}.apiGroup"), json!(group), msg));
        }
    }
    for key in ["kind", "name"] {
        let v = str_at(r, &[key]);
        if v.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        }
        for msg in path_segment_errors(v) {
            errs.push(FieldError::invalid(format!("{path}.{key}"), json!(v), msg));
        }
    }
    errs
}

/// `IsPathSegmentName` (an empty name gives no message; callers require it).
fn path_segment_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|s| name.contains(*s))
        .map(|s| format!("may not contain '{s}'"))
        .collect()
}

/// A TLS entry: its hosts and its secret name.
fn validate_tls(tls: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, host) in items(tls, "hosts").enumerate() {
        let host = host.as_str().unwrap_or_default();
        for msg in dns_or_wildcard_errors(host) {
            errs.push(FieldError::invalid(
                format!("{path}.hosts[{i}]"),
                json!(host),
                msg,
            ));
        }
    }
    let secret = str_at(tls, &["secretName"]);
    if !secret.is_empty() {
        for msg in is_dns1123_subdomain(secret) {
            errs.push(FieldError::invalid(
                format!("{path}.secretName"),
                json!(secret),
                msg,
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------
// IngressClass

/// `validateIngressClassSpec`: a controller that is a domain-prefixed path,
/// and a well-formed parameters reference.
pub fn validate_ingress_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let controller = str_at(obj, &["spec", "controller"]);
    let field = "spec.controller";
    if controller.is_empty() {
        errs.push(FieldError::required(field, ""));
    } else {
        if controller.len() > MAX_LEN_INGRESS_CLASS_CONTROLLER {
            errs.push(FieldError::too_long(
                field,
                format!("may not be more than {MAX_LEN_INGRESS_CLASS_CONTROLLER} bytes"),
            ));
        }
        errs.extend(domain_prefixed_path_errors(controller, field));
    }
    if let Some(params) = obj.pointer("/spec/parameters").filter(|p| !p.is_null()) {
        errs.extend(validate_parameters(params, "spec.parameters"));
    }
    errs
}

/// `spec.controller` may not change.
pub fn validate_ingress_class_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let (n, o) = (
        str_at(new, &["spec", "controller"]),
        str_at(old, &["spec", "controller"]),
    );
    if n == o {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "spec.controller",
        json!(n),
        "field is immutable",
    )]
}

/// `IsDomainPrefixedPath`.
fn domain_prefixed_path_errors(value: &str, field: &str) -> Vec<FieldError> {
    let Some((host, path)) = value
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        return vec![FieldError::invalid(
            field,
            json!(value),
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errs: Vec<FieldError> = is_dns1123_subdomain(host)
        .into_iter()
        .map(|msg| FieldError::invalid(field, json!(host), msg))
        .collect();
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(allowed) {
        errs.push(FieldError::invalid(
            field,
            json!(path),
            regex_error("Invalid path", r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+", &[]),
        ));
    }
    errs
}

/// `validateIngressClassParametersReference`.
fn validate_parameters(params: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = validate_typed_reference(params, path);
    let Some(scope) = params.get("scope").and_then(Value::as_str) else {
        errs.push(FieldError::required(format!("{path}.scope"), ""));
        return errs;
    };
    let namespace = params.get("namespace").and_then(Value::as_str);
    match (scope, namespace) {
        ("Namespace", None) => errs.push(FieldError::required(
            format!("{path}.namespace"),
            "`parameters.scope` is set to 'Namespace'",
        )),
        ("Namespace", Some(ns)) => {
            for msg in crate::validation::is_dns1123_label(ns) {
                errs.push(FieldError::invalid(format!("{path}.namespace"), json!(ns), msg));
            }
        }
        ("Cluster", Some(_)) => errs.push(FieldError::forbidden(
            format!("{path}.namespace"),
            "`parameters.scope` is set to 'Cluster'",
        )),
        ("Cluster", None) => {}
        (other, _) => errs.push(FieldError::not_supported(
            format!("{path}.scope"),
            json!(other),
            &SCOPES,
        )),
    }
    errs
}

// ---------------------------------------------------------------------------
// NetworkPolicy

/// `ValidateNetworkPolicySpec`.
pub fn validate_network_policy(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut errs = validate_label_selector(spec.get("podSelector"), "spec.podSelector");
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in items(spec, direction).enumerate() {
            let rule_path = format!("spec.{direction}[{i}]");
            for (j, port) in items(rule, "ports").enumerate() {
                errs.extend(validate_port(port, &format!("{rule_path}.ports[{j}]")));
            }
            for (j, peer) in items(rule, peers).enumerate() {
                errs.extend(validate_peer(peer, &format!("{rule_path}.{peers}[{j}]")));
            }
        }
    }
    let types: Vec<&Value> = items(spec, "policyTypes").collect();
    if types.len() > POLICY_TYPES.len() {
        let list: Vec<String> = types.iter().map(|t| crate::gofmt::go_value(t)).collect();
        errs.push(crate::validation::invalid_raw(
            "spec.policyTypes",
            format!("&[]networking.PolicyType{{{}}}", list.join(", ")),
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        let t = t.as_str().unwrap_or_default();
        if !POLICY_TYPES.contains(&t) {
            errs.push(FieldError::not_supported(
                format!("spec.policyTypes[{i}]"),
                json!(t),
                &POLICY_TYPES,
            ));
        }
    }
    errs
}

/// `ValidateNetworkPolicyPort`: protocol, port (number or name) and endPort.
fn validate_port(port: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(protocol) = port.get("protocol").and_then(Value::as_str)
        && !PROTOCOLS.contains(&protocol)
    {
        errs.push(FieldError::not_supported(
            format!("{path}.protocol"),
            json!(protocol),
            &PROTOCOLS,
        ));
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    let end_path = format!("{path}.endPort");
    match port.get("port").filter(|p| !p.is_null()) {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                errs.push(FieldError::invalid(
                    &end_path,
                    json!(end),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for msg in port_name_errors(name) {
                errs.push(FieldError::invalid(format!("{path}.port"), json!(name), msg));
            }
        }
        Some(number) => {
            let n = number.as_i64().unwrap_or(0);
            errs.extend(port_number_errors(n, &format!("{path}.port")));
            if let Some(end) = end {
                if end < n {
                    errs.push(FieldError::invalid(
                        &end_path,
                        json!(end),
                        "must be greater than or equal to `port`",
                    ));
                }
                errs.extend(port_number_errors(end, &end_path));
            }
        }
        None => {
            if let Some(end) = end {
                errs.push(FieldError::invalid(
                    &end_path,
                    json!(end),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`: at least one selector or an ipBlock, and an
/// ipBlock alone.
fn validate_peer(peer: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut count = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(key).filter(|s| !s.is_null()) {
            count += 1;
            errs.extend(validate_label_selector(Some(sel), &format!("{path}.{key}")));
        }
    }
    let ip_block = peer.get("ipBlock").filter(|b| !b.is_null());
    if let Some(block) = ip_block {
        count += 1;
        errs.extend(validate_ip_block(block, &format!("{path}.ipBlock")));
    }
    if count == 0 {
        errs.push(FieldError::required(path, "must specify a peer"));
    } else if count > 1 && ip_block.is_some() {
        errs.push(FieldError::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

/// `ValidateIPBlock`: a CIDR, and excepts strictly inside it.
fn validate_ip_block(block: &Value, path: &str) -> Vec<FieldError> {
    let cidr = str_at(block, &["cidr"]);
    if cidr.is_empty() {
        return vec![FieldError::required(format!("{path}.cidr"), "")];
    }
    let Some(outer) = parse_cidr(cidr) else {
        return vec![cidr_error(&format!("{path}.cidr"), cidr)];
    };
    let mut errs = Vec::new();
    for (i, except) in items(block, "except").enumerate() {
        let except = except.as_str().unwrap_or_default();
        let field = format!("{path}.except[{i}]");
        match parse_cidr(except) {
            None => errs.push(cidr_error(&field, except)),
            Some(inner) if !(outer.contains(inner.0) && outer.1 < inner.1) => {
                errs.push(FieldError::invalid(
                    &field,
                    json!(except),
                    "must be a strict subset of `cidr`",
                ));
            }
            Some(_) => {}
        }
    }
    errs
}

fn cidr_error(field: &str, value: &str) -> FieldError {
    FieldError::invalid(
        field,
        json!(value),
        "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
    )
}

/// An `IP/prefix` pair.
#[derive(Clone, Copy)]
struct Cidr(IpAddr, u8);

impl Cidr {
    /// Whether `ip` lies in this network.
    fn contains(self, ip: IpAddr) -> bool {
        match (self.0, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.1)).unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.1)).unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

fn parse_cidr(s: &str) -> Option<Cidr> {
    let (ip, prefix) = s.split_once('/')?;
    let ip: IpAddr = ip.parse().ok()?;
    let prefix: u8 = prefix.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (prefix <= max).then_some(Cidr(ip, prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn ingress(paths: Value) -> Value {
        json!({"spec": {"rules": [{"host": "example.com", "http": {"paths": paths}}]}})
    }

    fn backend() -> Value {
        json!({"service": {"name": "web", "port": {"number": 80}}})
    }

    #[test]
    fn network_policy_defaults_policy_types_and_protocols() {
        let mut np = json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}});
        default_network_policy(&mut np);
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], json!("TCP"));
        let mut only_ingress = json!({"spec": {"podSelector": {}}});
        default_network_policy(&mut only_ingress);
        assert_eq!(only_ingress["spec"]["policyTypes"], json!(["Ingress"]));
        let mut given = json!({"spec": {"policyTypes": ["Egress"]}});
        default_network_policy(&mut given);
        assert_eq!(given["spec"]["policyTypes"], json!(["Egress"]));
    }

    #[test]
    fn ingress_paths_need_a_type_and_an_absolute_clean_path() {
        let errs = validate_ingress(&ingress(json!([{"path": "/", "backend": backend()}])));
        assert_eq!(
            fields(&errs),
            ["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"]
        );
        let errs = validate_ingress(&ingress(json!([
            {"path": "api", "pathType": "Prefix", "backend": backend()},
            {"path": "/a//b/..", "pathType": "Exact", "backend": backend()},
            {"path": "/", "pathType": "Regex", "backend": backend()},
        ])));
        assert_eq!(
            fields(&errs),
            [
                "spec.rules[0].http.paths[0].path: Invalid value: \"api\": must be an absolute path",
                "spec.rules[0].http.paths[1].path: Invalid value: \"/a//b/..\": must not contain '//'",
                "spec.rules[0].http.paths[1].path: Invalid value: \"/a//b/..\": cannot end with '/..'",
                "spec.rules[0].http.paths[2].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"",
            ]
        );
    }

    #[test]
    fn ingress_backends_name_a_service_and_one_port() {
        let errs = validate_ingress(&ingress(json!([{"path": "/", "pathType": "Prefix", "backend": {
            "service": {"name": "Web", "port": {"name": "http", "number": 80}}}}])));
        let got = fields(&errs);
        assert!(
            got[0].starts_with(
                "spec.rules[0].http.paths[0].backend.service.name: Invalid value: \"Web\": a DNS-1035 label"
            ),
            "{got:?}"
        );
        assert_eq!(
            got[1],
            "spec.rules[0].http.paths[0].backend: Invalid value: \"\": cannot set both port name & port number"
        );
        let errs = validate_ingress(&json!({"spec": {"defaultBackend": {"service": {"name": "web"}}}}));
        assert_eq!(
            fields(&errs),
            ["spec.defaultBackend: Required value: port name or number is required"]
        );
        let errs = validate_ingress(&json!({"spec": {}}));
        assert_eq!(
            fields(&errs),
            [
                "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"
            ]
        );
    }

    #[test]
    fn ingress_hosts_are_dns_names_or_wildcards() {
        let mut obj = ingress(json!([{"path": "/", "pathType": "Prefix", "backend": backend()}]));
        obj["spec"]["rules"][0]["host"] = json!("*.example.com");
        assert!(validate_ingress(&obj).is_empty());
        obj["spec"]["rules"][0]["host"] = json!("10.0.0.1");
        assert_eq!(
            fields(&validate_ingress(&obj))[0],
            "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"
        );
    }

    #[test]
    fn ingress_class_annotation_must_match_the_class_name_on_create() {
        let mut obj = ingress(json!([{"path": "/", "pathType": "Prefix", "backend": backend()}]));
        obj["metadata"] = json!({"annotations": {"kubernetes.io/ingress.class": "a"}});
        obj["spec"]["ingressClassName"] = json!("b");
        assert_eq!(
            fields(&validate_ingress_class_annotation(&obj)),
            [
                "annotations.kubernetes.io/ingress.class: Invalid value: \"a\": must match `ingressClassName` when both are specified"
            ]
        );
    }

    #[test]
    fn ingress_class_controller_is_a_domain_prefixed_path_and_immutable() {
        let ok = json!({"spec": {"controller": "example.com/ingress"}});
        assert!(validate_ingress_class(&ok).is_empty());
        assert_eq!(
            fields(&validate_ingress_class(&json!({"spec": {"controller": "nginx"}}))),
            [
                "spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
            ]
        );
        assert_eq!(
            fields(&validate_ingress_class(&json!({"spec": {}}))),
            ["spec.controller: Required value"]
        );
        let changed = json!({"spec": {"controller": "example.com/other"}});
        assert_eq!(
            fields(&validate_ingress_class_update(&changed, &ok)),
            ["spec.controller: Invalid value: \"example.com/other\": field is immutable"]
        );
    }

    #[test]
    fn ingress_class_parameters_scope() {
        let mut obj = json!({"spec": {"controller": "example.com/c",
            "parameters": {"kind": "Config", "name": "p", "namespace": "x"}}});
        default_ingress_class(&mut obj);
        assert_eq!(obj["spec"]["parameters"]["scope"], json!("Cluster"));
        assert_eq!(
            fields(&validate_ingress_class(&obj)),
            ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]
        );
        obj["spec"]["parameters"]["scope"] = json!("Namespace");
        assert!(validate_ingress_class(&obj).is_empty());
    }

    #[test]
    fn network_policy_ports_and_peers() {
        let np = json!({"spec": {"podSelector": {}, "ingress": [{
            "ports": [{"port": 80, "endPort": 70}, {"port": "http", "endPort": 90}, {"endPort": 5}, {"protocol": "ICMP"}],
            "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16", "10.1.0.0/16"]}, "podSelector": {}}],
        }]}});
        assert_eq!(
            fields(&validate_network_policy(&np)),
            [
                "spec.ingress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to `port`",
                "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
                "spec.ingress[0].ports[2].endPort: Invalid value: 5: may not be specified when `port` is not specified",
                "spec.ingress[0].ports[3].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`",
                "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
            ]
        );
    }

    #[test]
    fn network_policy_types() {
        let np = json!({"spec": {"podSelector": {}, "policyTypes": ["Ingress", "Sideways"]}});
        assert_eq!(
            fields(&validate_network_policy(&np)),
            [
                "spec.policyTypes[1]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\""
            ]
        );
        let np = json!({"spec": {"podSelector": {"matchLabels": {"a": "-bad-"}}}});
        assert_eq!(
            fields(&validate_network_policy(&np))[0].split(':').next(),
            Some("spec.podSelector.matchLabels")
        );
    }
}
