//! The other core/v1 kinds (Namespace, Node, Service, Endpoints, ConfigMap,
//! Secret, Event) and apps/v1 ControllerRevision. ServiceAccount and Lease
//! only get the ObjectMeta rules of [`super::meta`], events.k8s.io Events
//! those and the namespace rule of core/v1 Events.
//!
//! Upstream: `pkg/apis/core/v1/defaults.go`, `pkg/apis/core/v1/conversion.go`
//! (Secret `stringData` folded into `data`),
//! `pkg/registry/core/{namespace,service,node}/strategy.go`,
//! `pkg/registry/core/service/storage/alloc.go` (IP family defaults),
//! `pkg/apis/core/validation/validation.go`.
//!
//! Simplified: ClusterIP allocation belongs to the caller (only the family
//! fields and the copy of an omitted clusterIP on update are done here);
//! the cluster is single-stack IPv4; Service validation covers names, ports,
//! types and the primary clusterIP rules but not load-balancer source
//! ranges, external IPs or health-check node ports; Secret type-specific
//! rules cover `kubernetes.io/tls` and `kubernetes.io/dockerconfigjson`.

use serde_json::{Value, json};

use super::pod::{port_name_errors, validate_enum};
use super::{child, copy_key, default_key, items, items_mut, sem_eq, set};
use crate::error::FieldError;
use crate::gofmt::go_string_list;
use crate::jsonpath::{at, str_at};
use crate::labels::validation::validate_labels;
use crate::validation::{self, invalid_raw, max_len_error, nonnegative, range_error, regex_error};

// ---------------------------------------------------------------------------
// Namespace

/// Label `kubernetes.io/metadata.name` = name (forced), `status.phase`
/// Active.
pub fn default_namespace(obj: &mut Value) {
    let name = str_at(obj, &["metadata", "name"]).to_string();
    if !name.is_empty()
        && let Some(labels) = child(obj, "metadata").and_then(|m| child(m, "labels"))
    {
        set(labels, "kubernetes.io/metadata.name", json!(name));
    }
    if let Some(status) = child(obj, "status") {
        default_key(status, "phase", json!("Active"));
    }
}

/// The name label (for generated names) and the `kubernetes` finalizer.
pub fn prepare_namespace_create(obj: &mut Value) {
    default_namespace(obj);
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    let has = super::items(spec, "finalizers").any(|f| f.as_str() == Some("kubernetes"));
    if !has {
        match spec.get_mut("finalizers").and_then(Value::as_array_mut) {
            Some(list) => list.push(json!("kubernetes")),
            None => set(spec, "finalizers", json!(["kubernetes"])),
        }
    }
}

/// `spec.finalizers` change only through `/finalize`.
pub fn prepare_namespace_update(new: &mut Value, old: &Value) {
    let old_finalizers = at(old, &["spec", "finalizers"]).cloned();
    if let Some(spec) = child(new, "spec") {
        match old_finalizers {
            Some(f) => set(spec, "finalizers", f),
            None => super::remove(spec, "finalizers"),
        }
    }
}

/// `spec.finalizers` names must be standard or fully qualified.
pub fn validate_namespace(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, f) in items(obj.get("spec").unwrap_or(&Value::Null), "finalizers").enumerate() {
        let f = f.as_str().unwrap_or_default();
        let path = format!("spec.finalizers[{i}]");
        for msg in validation::is_qualified_name(f) {
            errs.push(FieldError::invalid(&path, json!(f), msg));
        }
        if !f.contains('/') && !matches!(f, "kubernetes" | "orphan" | "foregroundDeletion") {
            errs.push(FieldError::invalid(
                path,
                json!(f),
                "name is neither a standard finalizer name nor is it fully qualified",
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------
// Node, Endpoints

/// `status.allocatable := status.capacity` when unset.
pub fn default_node(obj: &mut Value) {
    let Some(capacity) = at(obj, &["status", "capacity"]).cloned() else {
        return;
    };
    if let Some(status) = child(obj, "status") {
        default_key(status, "allocatable", capacity);
    }
}

/// Port protocol TCP.
pub fn default_endpoints(obj: &mut Value) {
    for subset in items_mut(obj, "subsets") {
        for p in items_mut(subset, "ports") {
            default_key(p, "protocol", json!("TCP"));
        }
    }
}

// ---------------------------------------------------------------------------
// Service

/// type, sessionAffinity, port protocol and targetPort, traffic policies,
/// allocateLoadBalancerNodePorts.
pub fn default_service(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_key(spec, "type", json!("ClusterIP"));
    default_key(spec, "sessionAffinity", json!("None"));
    match str_at(spec, &["sessionAffinity"]) {
        "None" => super::remove(spec, "sessionAffinityConfig"),
        "ClientIP" => {
            if let Some(c) = child(spec, "sessionAffinityConfig").and_then(|c| child(c, "clientIP")) {
                default_key(c, "timeoutSeconds", json!(10800));
            }
        }
        _ => {}
    }
    for p in items_mut(spec, "ports") {
        default_key(p, "protocol", json!("TCP"));
        let unset = match p.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(v) => v.as_i64() == Some(0),
        };
        if unset {
            let port = p.get("port").cloned().unwrap_or(json!(0));
            set(p, "targetPort", port);
        }
    }
    let ty = str_at(spec, &["type"]).to_string();
    let has_external_ips = items(spec, "externalIPs").next().is_some();
    if ty == "NodePort" || ty == "LoadBalancer" || (ty == "ClusterIP" && has_external_ips) {
        default_key(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if ty != "ExternalName" {
        default_key(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        default_key(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

fn is_headless_selectorless(spec: &Value) -> bool {
    str_at(spec, &["clusterIP"]) == "None"
        && spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty())
}

/// IP family fields of a new Service on a single-stack IPv4 cluster
/// (clusterIP itself is allocated by the caller).
pub fn prepare_service_create(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    if str_at(spec, &["type"]) == "ExternalName" {
        return;
    }
    let policy = if is_headless_selectorless(spec) {
        "RequireDualStack"
    } else {
        "SingleStack"
    };
    default_key(spec, "ipFamilyPolicy", json!(policy));
    default_key(spec, "ipFamilies", json!(["IPv4"]));
}

/// On update, omitted clusterIP(s) and family fields keep the stored values.
pub fn prepare_service_update(new: &mut Value, old: &Value) {
    let Some(old_spec) = old.get("spec") else {
        return;
    };
    let Some(spec) = child(new, "spec") else {
        return;
    };
    if str_at(spec, &["type"]) == "ExternalName" {
        return;
    }
    for key in ["clusterIP", "clusterIPs", "ipFamilyPolicy", "ipFamilies"] {
        let missing = match spec.get(key) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            Some(_) => false,
        };
        if missing && old_spec.get(key).is_some() {
            copy_key(spec, old_spec, key);
        }
    }
}

const SERVICE_TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

/// The ClusterIP of the `default/kubernetes` Service: the first address of
/// the service CIDR 10.96.0.0/12 (kube-apiserver's default range). The API
/// server keeps it for that Service alone.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

/// No Service but `default/kubernetes` may take [`KUBERNETES_SERVICE_IP`]:
/// upstream's allocator holds it for that Service, so a create asking for
/// it fails as an allocation of a taken address does.
pub fn validate_reserved_cluster_ip(obj: &Value) -> Vec<FieldError> {
    let namespace = str_at(obj, &["metadata", "namespace"]);
    let name = str_at(obj, &["metadata", "name"]);
    if (namespace, name) == ("default", "kubernetes") {
        return Vec::new();
    }
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let primary = str_at(spec, &["clusterIP"]);
    let taken = primary == KUBERNETES_SERVICE_IP
        || items(spec, "clusterIPs").any(|ip| ip.as_str() == Some(KUBERNETES_SERVICE_IP));
    if !taken {
        return Vec::new();
    }
    let shown = match spec.get("clusterIPs").filter(|v| v.is_array()) {
        Some(ips) => go_string_list(Some(ips)),
        None => go_string_list(Some(&json!([primary]))),
    };
    let detail = format!("failed to allocate IP {KUBERNETES_SERVICE_IP}: provided IP is already allocated");
    vec![invalid_raw("spec.clusterIPs", shown, &detail)]
}

/// `ValidateService` essentials.
pub fn validate_service(obj: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let ty = str_at(spec, &["type"]);
    let mut errs = validate_enum(spec.get("type"), "spec.type", &SERVICE_TYPES);
    let ports: Vec<&Value> = items(spec, "ports").collect();
    if ty == "ExternalName" {
        let ext = str_at(spec, &["externalName"]);
        if ext.is_empty() {
            errs.push(FieldError::required("spec.externalName", ""));
        }
    } else if ports.is_empty() && str_at(spec, &["clusterIP"]) != "None" {
        errs.push(FieldError::required("spec.ports", ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, p) in ports.iter().enumerate() {
        errs.extend(validate_service_port(p, i, ports.len() > 1, &mut names, ty));
    }
    errs.extend(validate_enum(
        spec.get("sessionAffinity"),
        "spec.sessionAffinity",
        &["ClientIP", "None"],
    ));
    errs.extend(validate_cluster_ip(spec));
    if ty != "ExternalName" {
        errs.extend(validate_labels(spec.get("selector"), "spec.selector"));
    }
    errs
}

fn validate_service_port<'a>(
    p: &'a Value,
    i: usize,
    multi: bool,
    names: &mut Vec<&'a str>,
    ty: &str,
) -> Vec<FieldError> {
    let path = format!("spec.ports[{i}]");
    let mut errs = Vec::new();
    let name = str_at(p, &["name"]);
    if multi && name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    } else if !name.is_empty() {
        for msg in validation::is_dns1123_label(name) {
            errs.push(FieldError::invalid(format!("{path}.name"), json!(name), msg));
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
        } else {
            names.push(name);
        }
    }
    let port = p.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            format!("{path}.port"),
            json!(port),
            range_error(1, 65535),
        ));
    }
    errs.extend(validate_enum(
        p.get("protocol"),
        &format!("{path}.protocol"),
        &["SCTP", "TCP", "UDP"],
    ));
    errs.extend(validate_target_port(
        p.get("targetPort"),
        &format!("{path}.targetPort"),
    ));
    let node_port = p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
    if node_port != 0 && ty == "ClusterIP" {
        errs.push(FieldError::forbidden(
            format!("{path}.nodePort"),
            "may not be used when `type` is 'ClusterIP'",
        ));
    } else if node_port != 0 && !(1..=65535).contains(&node_port) {
        errs.push(FieldError::invalid(
            format!("{path}.nodePort"),
            json!(node_port),
            range_error(1, 65535),
        ));
    }
    errs
}

fn validate_target_port(v: Option<&Value>, path: &str) -> Vec<FieldError> {
    match v {
        Some(Value::String(s)) => port_name_errors(s)
            .into_iter()
            .map(|m| FieldError::invalid(path, json!(s), m))
            .collect(),
        Some(v) => {
            let n = v.as_i64().unwrap_or(0);
            if (1..=65535).contains(&n) {
                Vec::new()
            } else {
                vec![FieldError::invalid(path, json!(n), range_error(1, 65535))]
            }
        }
        None => Vec::new(),
    }
}

fn is_ipv4(s: &str) -> bool {
    s.parse::<std::net::Ipv4Addr>().is_ok()
}

fn validate_cluster_ip(spec: &Value) -> Vec<FieldError> {
    let ip = str_at(spec, &["clusterIP"]);
    if ip.is_empty() || ip == "None" {
        return Vec::new();
    }
    if str_at(spec, &["type"]) == "ExternalName" {
        return vec![FieldError::forbidden(
            "spec.clusterIPs",
            "may not be set for ExternalName services",
        )];
    }
    if ip.parse::<std::net::IpAddr>().is_err() {
        return vec![FieldError::invalid(
            "spec.clusterIPs[0]",
            json!(ip),
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )];
    }
    if !is_ipv4(ip) && spec.get("ipFamilies").is_some() {
        return vec![FieldError::invalid(
            "spec.clusterIPs[0]",
            json!(ip),
            "expected an IPv4 value as indicated by `ipFamilies[0]`",
        )];
    }
    Vec::new()
}

/// The primary clusterIP may not change once set (except to and from
/// ExternalName).
pub fn validate_service_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let old_ip = str_at(old, &["spec", "clusterIP"]);
    let new_ip = str_at(new, &["spec", "clusterIP"]);
    let to_external = str_at(new, &["spec", "type"]) == "ExternalName";
    let from_external = str_at(old, &["spec", "type"]) == "ExternalName";
    if old_ip.is_empty() || to_external || from_external || old_ip == new_ip {
        return Vec::new();
    }
    let shown = at(new, &["spec", "clusterIPs"]).filter(|v| v.is_array());
    let detail = if new_ip.is_empty() {
        "primary clusterIP can not be unset"
    } else {
        "may not change once set"
    };
    vec![invalid_raw("spec.clusterIPs[0]", go_string_list(shown), detail)]
}

// ---------------------------------------------------------------------------
// ConfigMap and Secret

const DATA_LIMIT: usize = 1024 * 1024;

fn config_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push(max_len_error(253));
    }
    let charset_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if !charset_ok {
        errs.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    match key {
        "." => errs.push("must not be '.'".into()),
        ".." => errs.push("must not be '..'".into()),
        k if k.starts_with("..") => errs.push("must not start with '..'".into()),
        _ => {}
    }
    errs
}

/// Key syntax of `data`/`binaryData`; returns the total value bytes.
fn validate_data_keys(obj: &Value, field: &str, errs: &mut Vec<FieldError>) -> usize {
    let mut total = 0;
    let Some(m) = obj.get(field).and_then(Value::as_object) else {
        return 0;
    };
    for (k, v) in m {
        for msg in config_key_errors(k) {
            errs.push(FieldError::invalid(format!("{field}[{k}]"), json!(k), msg));
        }
        total += v.as_str().map_or(0, str::len);
    }
    total
}

/// Keys are config keys, unique across data and binaryData; total size
/// capped at 1 MiB.
pub fn validate_configmap(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let total = validate_data_keys(obj, "data", &mut errs) + validate_data_keys(obj, "binaryData", &mut errs);
    if let (Some(d), Some(b)) = (
        obj.get("data").and_then(Value::as_object),
        obj.get("binaryData").and_then(Value::as_object),
    ) {
        for k in b.keys().filter(|k| d.contains_key(*k)) {
            errs.push(FieldError::invalid(
                format!("data[{k}]"),
                json!(k),
                "duplicate of key present in binaryData",
            ));
        }
    }
    if total > DATA_LIMIT {
        errs.push(FieldError::too_long(
            "",
            format!("must have at most {DATA_LIMIT} bytes"),
        ));
    }
    errs
}

fn immutable_flag_errors(new: &Value, old: &Value, fields: &[&str]) -> Vec<FieldError> {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return Vec::new();
    }
    let msg = "field is immutable when `immutable` is set";
    let mut errs = Vec::new();
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errs.push(FieldError::forbidden("immutable", msg));
    }
    for f in fields {
        if !sem_eq(new.get(*f), old.get(*f)) {
            errs.push(FieldError::forbidden(*f, msg));
        }
    }
    errs
}

/// `immutable: true` freezes data, binaryData and the flag.
pub fn validate_configmap_update(new: &Value, old: &Value) -> Vec<FieldError> {
    immutable_flag_errors(new, old, &["data", "binaryData"])
}

/// `type` Opaque; `stringData` folded into `data` (base64), as the v1
/// conversion does.
pub fn default_secret(obj: &mut Value) {
    default_key(obj, "type", json!("Opaque"));
    let Some(Value::Object(string_data)) = obj.as_object_mut().and_then(|m| m.remove("stringData")) else {
        return;
    };
    if let Some(data) = child(obj, "data") {
        for (k, v) in string_data {
            let s = v.as_str().unwrap_or_default();
            set(data, &k, json!(base64(s.as_bytes())));
        }
    }
}

fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Data keys, size, and the rules of the well-known secret types.
pub fn validate_secret(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let total = validate_data_keys(obj, "data", &mut errs);
    let has = |k: &str| at(obj, &["data", k]).is_some();
    match str_at(obj, &["type"]) {
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    errs.push(FieldError::required(format!("data[{key}]"), ""));
                }
            }
        }
        "kubernetes.io/dockerconfigjson" if !has(".dockerconfigjson") => {
            errs.push(FieldError::required("data[.dockerconfigjson]", ""));
        }
        "kubernetes.io/service-account-token"
            if str_at(
                obj,
                &["metadata", "annotations", "kubernetes.io/service-account.name"],
            )
            .is_empty() =>
        {
            errs.push(FieldError::required(
                "metadata.annotations[kubernetes.io/service-account.name]",
                "",
            ));
        }
        _ => {}
    }
    if total > DATA_LIMIT {
        errs.push(FieldError::too_long(
            "data",
            format!("must have at most {DATA_LIMIT} bytes"),
        ));
    }
    errs
}

/// `type` never changes; `immutable: true` freezes data and the flag.
pub fn validate_secret_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (nt, ot) = (str_at(new, &["type"]), str_at(old, &["type"]));
    if nt != ot {
        errs.push(FieldError::invalid("type", json!(nt), "field is immutable"));
    }
    errs.extend(immutable_flag_errors(new, old, &["data"]));
    errs
}

// ---------------------------------------------------------------------------
// Event

/// Longest `reportingInstance`, `action` and `reason` of an Event with an
/// `eventTime`.
const EVENT_FIELD_LIMIT: usize = 128;
/// Longest `message` of an Event with an `eventTime`.
const EVENT_NOTE_LIMIT: usize = 1024;

/// Upstream's `legacyValidateEvent`, what a core/v1 Event must pass.
///
/// The namespace rule: an Event about a cluster-scoped object (no
/// `involvedObject.namespace`) lives in `default` (or `""`, for old
/// clients); any other Event lives in its object's namespace. An Event
/// written the events.k8s.io way (with `eventTime`) may also live in
/// `kube-system`, and must say who reported it and what was done.
pub fn validate_event(obj: &Value) -> Vec<FieldError> {
    let event_time = is_set(obj.get("eventTime"));
    let mut errs = event_namespace_errors(obj, "involvedObject", event_time);
    if !event_time {
        return errs;
    }
    let controller = str_at(obj, &["reportingComponent"]);
    if controller.is_empty() {
        errs.push(FieldError::required("reportingController", ""));
    }
    for msg in validation::is_qualified_name(controller) {
        errs.push(FieldError::invalid("reportingController", json!(controller), msg));
    }
    for (field, path, limit) in [
        ("reportingInstance", "reportingInstance", EVENT_FIELD_LIMIT),
        ("action", "action", EVENT_FIELD_LIMIT),
        ("reason", "reason", EVENT_FIELD_LIMIT),
    ] {
        let value = str_at(obj, &[field]);
        if value.is_empty() {
            errs.push(FieldError::required(path, ""));
        }
        if value.len() > limit {
            errs.push(FieldError::invalid(
                path,
                json!(""),
                format!("can have at most {limit} characters"),
            ));
        }
    }
    if str_at(obj, &["message"]).len() > EVENT_NOTE_LIMIT {
        errs.push(FieldError::invalid(
            "message",
            json!(""),
            format!("can have at most {EVENT_NOTE_LIMIT} characters"),
        ));
    }
    errs
}

/// The namespace rule of [`validate_event`] for an events.k8s.io/v1 Event,
/// whose object is `regarding` (upstream validates both versions on the
/// internal type, so the field path is `involvedObject.namespace`).
pub fn validate_event_v1_namespace(obj: &Value) -> Vec<FieldError> {
    event_namespace_errors(obj, "regarding", is_set(obj.get("eventTime")))
}

fn event_namespace_errors(obj: &Value, object_field: &str, event_time: bool) -> Vec<FieldError> {
    let namespace = str_at(obj, &["metadata", "namespace"]);
    let object_namespace = str_at(obj, &[object_field, "namespace"]);
    let allowed = match (object_namespace.is_empty(), event_time) {
        (true, false) => matches!(namespace, "" | "default"),
        (true, true) => matches!(namespace, "default" | "kube-system"),
        (false, false) => namespace == object_namespace,
        // Upstream checks no match for these.
        (false, true) => true,
    };
    if allowed {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "involvedObject.namespace",
        json!(object_namespace),
        "does not match event.namespace",
    )]
}

/// Whether a timestamp field holds a time (not absent, null or empty).
fn is_set(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str).is_some_and(|s| !s.is_empty())
}

// ---------------------------------------------------------------------------
// ControllerRevision

/// `data` is mandatory; `revision` non-negative.
pub fn validate_controller_revision(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if obj.get("data").is_none_or(Value::is_null) {
        errs.push(FieldError::required("data", "data is mandatory"));
    }
    errs.extend(nonnegative(obj.get("revision"), "revision"));
    errs
}

/// `data` never changes.
pub fn validate_controller_revision_update(new: &Value, old: &Value) -> Vec<FieldError> {
    if sem_eq(new.get("data"), old.get("data")) {
        Vec::new()
    } else {
        vec![invalid_raw(
            "data",
            "runtime.RawExtension{...}".to_string(),
            "field is immutable",
        )]
    }
}
