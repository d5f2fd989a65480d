//! Pod and PodSpec: defaults, the create-time admission defaults a real
//! cluster applies to every pod, QoS class, validation essentials and the
//! pod update rules.
//!
//! Upstream: `pkg/apis/core/v1/defaults.go` (`SetDefaults_Pod`,
//! `SetDefaults_PodSpec`, `SetDefaults_Container`, probes, volumes),
//! `pkg/registry/core/pod/strategy.go` (status on create, generation),
//! `pkg/apis/core/helper/qos` (QoS class),
//! `plugin/pkg/admission/{serviceaccount,defaulttolerationseconds,priority}`,
//! `pkg/apis/core/validation/validation.go` (`ValidatePodSpec`,
//! `validateContainerCommon`, `ValidatePodUpdate`).
//!
//! Simplified: no projected service-account token volume; resource
//! quantities are not validated (limits >= requests etc.) and not
//! canonicalized; `spec.priority` comes from the stored PriorityClasses by
//! the Priority admission plugin (`admission/priority.rs`), which runs
//! first — the two system classes here only serve a pod prepared without
//! admission, as in this module's tests; affinity,
//! security contexts, probes' handlers, topology spread and most volume
//! sources are not validated; the diff appended to the pod-update error is a
//! short field list, not upstream's full `cmp.Diff` of the internal PodSpec.

use serde_json::{Value, json};

use super::meta::{self, NameRule};
use super::{child, default_key, items, items_mut, sem_eq, set};
use crate::error::FieldError;
use crate::jsonpath::{at, str_at};
use crate::labels::validation::validate_labels;
use crate::validation::{self, is_dns1123_label, range_error};

/// Defaults of a Pod object (PodSpec defaults plus the Pod-only ones).
pub fn default_pod(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_pod_spec(spec);
    default_key(spec, "enableServiceLinks", json!(true));
    let host_network = spec.get("hostNetwork").and_then(Value::as_bool) == Some(true);
    for list in ["containers", "initContainers"] {
        for c in items_mut(spec, list) {
            requests_from_limits(c);
            if host_network {
                for p in items_mut(c, "ports") {
                    let cp = p.get("containerPort").cloned().unwrap_or(json!(0));
                    if p.get("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0 {
                        set(p, "hostPort", cp);
                    }
                }
            }
        }
    }
}

/// Defaults of an embedded pod template (`spec.template` of workloads):
/// `metadata.creationTimestamp: null` as v1.33 serializes it, then PodSpec.
pub fn default_template(template: &mut Value) {
    if let Some(meta) = child(template, "metadata") {
        default_key(meta, "creationTimestamp", Value::Null);
    }
    if let Some(spec) = child(template, "spec") {
        default_pod_spec(spec);
    }
}

/// `SetDefaults_PodSpec` and everything nested in it.
pub fn default_pod_spec(spec: &mut Value) {
    default_key(spec, "dnsPolicy", json!("ClusterFirst"));
    default_key(spec, "restartPolicy", json!("Always"));
    default_key(spec, "terminationGracePeriodSeconds", json!(30));
    default_key(spec, "securityContext", json!({}));
    default_key(spec, "schedulerName", json!("default-scheduler"));
    if spec
        .get("serviceAccountName")
        .is_none_or(|v| v.as_str() == Some(""))
        && let Some(sa) = spec.get("serviceAccount").cloned()
    {
        set(spec, "serviceAccountName", sa);
    }
    if let Some(sa) = spec.get("serviceAccountName").cloned() {
        set(spec, "serviceAccount", sa);
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for c in items_mut(spec, list) {
            default_container(c);
        }
    }
    for v in items_mut(spec, "volumes") {
        default_volume(v);
    }
}

fn default_container(c: &mut Value) {
    if str_at(c, &["imagePullPolicy"]).is_empty() {
        let policy = if image_tag(str_at(c, &["image"])) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        set(c, "imagePullPolicy", json!(policy));
    }
    default_key(c, "terminationMessagePath", json!("/dev/termination-log"));
    default_key(c, "terminationMessagePolicy", json!("File"));
    default_key(c, "resources", json!({}));
    for p in items_mut(c, "ports") {
        default_key(p, "protocol", json!("TCP"));
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).filter(|p| p.is_object()) {
            default_probe(p);
        }
    }
    for hook in ["postStart", "preStop"] {
        if let Some(h) = c.get_mut("lifecycle").and_then(|l| l.get_mut(hook))
            && let Some(http) = h.get_mut("httpGet").filter(|x| x.is_object())
        {
            default_http_get(http);
        }
    }
    for e in items_mut(c, "env") {
        if let Some(fr) = e.get_mut("valueFrom").and_then(|v| v.get_mut("fieldRef")) {
            default_key(fr, "apiVersion", json!("v1"));
        }
    }
}

/// The tag `ParseImageName` finds: `latest` when neither tag nor digest is
/// given, `""` for digest-only references.
fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((n, _)) => (n, true),
        None => (image, false),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    match name[last_slash..].rfind(':') {
        Some(i) => &name[last_slash + i + 1..],
        None if digest => "",
        None => "latest",
    }
}

fn default_probe(p: &mut Value) {
    default_key(p, "timeoutSeconds", json!(1));
    default_key(p, "periodSeconds", json!(10));
    default_key(p, "successThreshold", json!(1));
    default_key(p, "failureThreshold", json!(3));
    if let Some(http) = p.get_mut("httpGet").filter(|x| x.is_object()) {
        default_http_get(http);
    }
    if let Some(grpc) = p.get_mut("grpc").filter(|x| x.is_object()) {
        default_key(grpc, "service", json!(""));
    }
}

fn default_http_get(http: &mut Value) {
    default_key(http, "path", json!("/"));
    default_key(http, "scheme", json!("HTTP"));
}

fn default_volume(v: &mut Value) {
    let has_source = v
        .as_object()
        .is_some_and(|m| m.iter().any(|(k, x)| k != "name" && !x.is_null()));
    if !has_source {
        set(v, "emptyDir", json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = v.get_mut(source).filter(|x| x.is_object()) {
            default_key(s, "defaultMode", json!(420));
            for item in items_mut(s, "items") {
                if let Some(fr) = item.get_mut("fieldRef") {
                    default_key(fr, "apiVersion", json!("v1"));
                }
            }
        }
    }
    if let Some(p) = v.get_mut("projected") {
        for src in items_mut(p, "sources") {
            if let Some(tok) = src.get_mut("serviceAccountToken") {
                default_key(tok, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(hp) = v.get_mut("hostPath").filter(|x| x.is_object()) {
        default_key(hp, "type", json!(""));
    }
}

/// Requests copied from limits for keys missing in requests (Pod only).
fn requests_from_limits(c: &mut Value) {
    let Some(limits) = at(c, &["resources", "limits"])
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let Some(requests) = child(c, "resources").and_then(|r| child(r, "requests")) else {
        return;
    };
    for (k, v) in limits {
        default_key(requests, &k, v);
    }
}

/// Create-time admission defaults (ServiceAccount, DefaultTolerationSeconds,
/// Priority) and the deprecated `serviceAccount` mirror.
pub fn prepare_pod_create(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    if str_at(spec, &["serviceAccountName"]).is_empty() {
        set(spec, "serviceAccountName", json!("default"));
    }
    let sa = spec
        .get("serviceAccountName")
        .cloned()
        .unwrap_or(json!("default"));
    set(spec, "serviceAccount", sa);
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        if !tolerates_no_execute(spec, key) {
            let tol =
                json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300});
            match spec.get_mut("tolerations").and_then(Value::as_array_mut) {
                Some(list) => list.push(tol),
                None => set(spec, "tolerations", json!([tol])),
            }
        }
    }
    let priority = match str_at(spec, &["priorityClassName"]) {
        "system-node-critical" => 2_000_001_000,
        "system-cluster-critical" => 2_000_000_000,
        _ => 0,
    };
    default_key(spec, "priority", json!(priority));
    default_key(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
}

fn tolerates_no_execute(spec: &Value, taint_key: &str) -> bool {
    items(spec, "tolerations").any(|t| {
        let effect_ok = matches!(str_at(t, &["effect"]), "" | "NoExecute");
        let key = str_at(t, &["key"]);
        let op = str_at(t, &["operator"]);
        let key_ok = (key.is_empty() && op == "Exists")
            || (key == taint_key && (op == "Exists" || str_at(t, &["value"]).is_empty()));
        effect_ok && key_ok
    })
}

/// Status of a new pod: Pending, its QoS class, and the SchedulingGated
/// condition when scheduling gates are present.
pub fn initial_status(obj: &Value) -> Value {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut status = json!({"phase": "Pending", "qosClass": qos_class(spec)});
    if items(spec, "schedulingGates").next().is_some() {
        status["conditions"] = json!([{
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": null,
            "lastTransitionTime": null,
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
        }]);
    }
    status
}

/// Upstream `GetPodQOS`: BestEffort without any cpu/memory request or
/// limit; Guaranteed when every container limits both and the summed
/// requests equal the summed limits; Burstable otherwise.
pub fn qos_class(spec: &Value) -> &'static str {
    let mut requests = [0f64; 2];
    let mut limits = [0f64; 2];
    let mut any = false;
    let mut all_limited = true;
    let containers = items(spec, "containers").chain(items(spec, "initContainers"));
    for c in containers {
        let mut limited = [false; 2];
        for (i, res) in ["cpu", "memory"].iter().enumerate() {
            let q = |kind: &str| {
                at(c, &["resources", kind, res])
                    .and_then(quantity_value)
                    .filter(|v| *v > 0.0)
            };
            if let Some(r) = q("requests") {
                requests[i] += r;
                any = true;
            }
            if let Some(l) = q("limits") {
                limits[i] += l;
                limited[i] = true;
                any = true;
            }
        }
        all_limited &= limited[0] && limited[1];
    }
    if !any {
        "BestEffort"
    } else if all_limited && requests == limits {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// A resource quantity as a number (`500m` = 0.5, `1Gi` = 2^30); `None`
/// when it does not parse.
pub fn quantity_value(v: &Value) -> Option<f64> {
    if let Some(n) = v.as_f64() {
        return Some(n);
    }
    let s = v.as_str()?.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * mult)
}

// ---------------------------------------------------------------------------
// Validation

/// A Pod object: its spec plus the pod-only container rules.
pub fn validate_pod(obj: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut errs = validate_pod_spec(spec, "spec");
    for (i, c) in items(spec, "containers").enumerate() {
        let image = str_at(c, &["image"]);
        if image.len() != image.trim().len() {
            errs.push(FieldError::invalid(
                format!("spec.containers[{i}].image"),
                json!(image),
                "must not have leading or trailing whitespace",
            ));
        }
    }
    errs
}

/// A `PodTemplateSpec` at `path` (labels, annotations, spec).
pub fn validate_pod_template(template: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(t) = template else {
        return vec![FieldError::required(path, "")];
    };
    let mut errs = validate_labels(at(t, &["metadata", "labels"]), &format!("{path}.labels"));
    errs.extend(meta::validate_annotations(
        at(t, &["metadata", "annotations"]),
        &format!("{path}.annotations"),
    ));
    let empty = json!({});
    errs.extend(validate_pod_spec(
        t.get("spec").unwrap_or(&empty),
        &format!("{path}.spec"),
    ));
    errs
}

/// `ValidatePodSpec` essentials.
pub fn validate_pod_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let volumes = volume_names(spec);
    let mut errs = validate_volumes(spec, path);
    let containers: Vec<&Value> = items(spec, "containers").collect();
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{path}.containers"), ""));
    }
    let mut seen: Vec<String> = Vec::new();
    for list in ["initContainers", "containers"] {
        for (i, c) in items(spec, list).enumerate() {
            let cpath = format!("{path}.{list}[{i}]");
            let name = str_at(c, &["name"]);
            if !name.is_empty() && seen.iter().any(|n| n == name) {
                errs.push(FieldError::duplicate(format!("{cpath}.name"), json!(name)));
            }
            seen.push(name.to_string());
            errs.extend(validate_container(c, &cpath, &volumes));
        }
    }
    errs.extend(validate_enum(
        spec.get("restartPolicy"),
        &format!("{path}.restartPolicy"),
        &["Always", "OnFailure", "Never"],
    ));
    errs.extend(validate_enum(
        spec.get("dnsPolicy"),
        &format!("{path}.dnsPolicy"),
        &["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"],
    ));
    errs.extend(validate_spec_scalars(spec, path));
    errs
}

fn validate_spec_scalars(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(ads) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && !(1..=i64::from(i32::MAX)).contains(&ads)
    {
        errs.push(FieldError::invalid(
            format!("{path}.activeDeadlineSeconds"),
            json!(ads),
            range_error(1, i64::from(i32::MAX)),
        ));
    }
    let sa = str_at(spec, &["serviceAccountName"]);
    if !sa.is_empty() {
        for msg in NameRule::Subdomain.check(sa, false) {
            errs.push(FieldError::invalid(
                format!("{path}.serviceAccountName"),
                json!(sa),
                msg,
            ));
        }
    }
    let node = str_at(spec, &["nodeName"]);
    if !node.is_empty() {
        for msg in NameRule::Subdomain.check(node, false) {
            errs.push(FieldError::invalid(format!("{path}.nodeName"), json!(node), msg));
        }
    }
    errs.extend(validate_labels(
        spec.get("nodeSelector"),
        &format!("{path}.nodeSelector"),
    ));
    errs
}

/// `Required value` when empty, `Unsupported value` when not in `allowed`.
pub fn validate_enum(v: Option<&Value>, path: &str, allowed: &[&str]) -> Vec<FieldError> {
    let s = v.and_then(Value::as_str).unwrap_or_default();
    if s.is_empty() {
        vec![FieldError::required(path, "")]
    } else if !allowed.contains(&s) {
        vec![FieldError::not_supported(path, json!(s), allowed)]
    } else {
        Vec::new()
    }
}

fn volume_names(spec: &Value) -> Vec<String> {
    items(spec, "volumes")
        .map(|v| str_at(v, &["name"]).to_string())
        .collect()
}

fn validate_volumes(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, v) in items(spec, "volumes").enumerate() {
        let npath = format!("{path}.volumes[{i}].name");
        let name = str_at(v, &["name"]);
        if name.is_empty() {
            errs.push(FieldError::required(npath, ""));
            continue;
        }
        for msg in is_dns1123_label(name) {
            errs.push(FieldError::invalid(&npath, json!(name), msg));
        }
        if seen.contains(&name) {
            errs.push(FieldError::duplicate(npath, json!(name)));
        }
        seen.push(name);
    }
    errs
}

fn validate_container(c: &Value, path: &str, volumes: &[String]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_at(c, &["name"]);
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    } else {
        for msg in is_dns1123_label(name) {
            errs.push(FieldError::invalid(format!("{path}.name"), json!(name), msg));
        }
    }
    if str_at(c, &["image"]).is_empty() {
        errs.push(FieldError::required(format!("{path}.image"), ""));
    }
    errs.extend(validate_enum(
        c.get("terminationMessagePolicy"),
        &format!("{path}.terminationMessagePolicy"),
        &["File", "FallbackToLogsOnError"],
    ));
    errs.extend(validate_container_ports(c, path));
    errs.extend(validate_env(c, path));
    errs.extend(validate_mounts(c, path, volumes));
    errs.extend(validate_enum(
        c.get("imagePullPolicy"),
        &format!("{path}.imagePullPolicy"),
        &["Always", "IfNotPresent", "Never"],
    ));
    errs
}

fn validate_port_number(v: Option<&Value>, path: &str, required: bool) -> Vec<FieldError> {
    match v.and_then(Value::as_i64).unwrap_or(0) {
        0 if required => vec![FieldError::required(path, "")],
        0 => Vec::new(),
        n if !(1..=65535).contains(&n) => {
            vec![FieldError::invalid(path, json!(n), range_error(1, 65535))]
        }
        _ => Vec::new(),
    }
}

fn validate_container_ports(c: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, p) in items(c, "ports").enumerate() {
        let ppath = format!("{path}.ports[{i}]");
        let name = str_at(p, &["name"]);
        if !name.is_empty() {
            let msgs = port_name_errors(name);
            if !msgs.is_empty() {
                for msg in msgs {
                    errs.push(FieldError::invalid(format!("{ppath}.name"), json!(name), msg));
                }
            } else if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{ppath}.name"), json!(name)));
            } else {
                names.push(name);
            }
        }
        errs.extend(validate_port_number(
            p.get("containerPort"),
            &format!("{ppath}.containerPort"),
            true,
        ));
        errs.extend(validate_port_number(
            p.get("hostPort"),
            &format!("{ppath}.hostPort"),
            false,
        ));
        errs.extend(validate_enum(
            p.get("protocol"),
            &format!("{ppath}.protocol"),
            &["SCTP", "TCP", "UDP"],
        ));
    }
    errs
}

/// IANA service name rules (`IsValidPortName`).
pub fn port_name_errors(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(validation::max_len_error(15));
    }
    if port.is_empty()
        || !port
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.chars().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

fn validate_env(c: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, e) in items(c, "env").enumerate() {
        let npath = format!("{path}.env[{i}].name");
        let name = str_at(e, &["name"]);
        if name.is_empty() {
            errs.push(FieldError::required(npath, ""));
        } else if name
            .chars()
            .any(|ch| !ch.is_ascii_graphic() && ch != ' ' || ch == '=')
        {
            errs.push(FieldError::invalid(
                npath,
                json!(name),
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
    }
    errs
}

fn validate_mounts(c: &Value, path: &str, volumes: &[String]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, m) in items(c, "volumeMounts").enumerate() {
        let mpath = format!("{path}.volumeMounts[{i}]");
        let name = str_at(m, &["name"]);
        if name.is_empty() {
            errs.push(FieldError::required(format!("{mpath}.name"), ""));
        } else if !volumes.iter().any(|v| v == name) {
            errs.push(FieldError::not_found(format!("{mpath}.name"), json!(name)));
        }
        if str_at(m, &["mountPath"]).is_empty() {
            errs.push(FieldError::required(format!("{mpath}.mountPath"), ""));
        }
    }
    errs
}

// ---------------------------------------------------------------------------
// Update

const POD_UPDATE_MSG: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// Upstream `ValidatePodUpdate`: only images, a shrinking
/// activeDeadlineSeconds, added tolerations and the negative grace-period
/// fix may change.
pub fn validate_pod_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let ns = new.get("spec").unwrap_or(&empty);
    let os = old.get("spec").unwrap_or(&empty);
    let count = |s: &Value, k: &str| items(s, k).count();
    if count(ns, "containers") != count(os, "containers") {
        return vec![FieldError::forbidden(
            "spec.containers",
            "pod updates may not add or remove containers",
        )];
    }
    let mut errs = Vec::new();
    if let Some(e) = active_deadline_error(ns, os) {
        return vec![e];
    }
    errs.extend(validate_only_added_tolerations(ns, os));
    let mut munged = ns.clone();
    for list in ["containers", "initContainers"] {
        if count(ns, list) == count(os, list) {
            let old_images: Vec<Value> = items(os, list)
                .map(|c| c.get("image").cloned().unwrap_or(Value::Null))
                .collect();
            for (c, img) in items_mut(&mut munged, list).zip(old_images) {
                set(c, "image", img);
            }
        }
    }
    for key in ["activeDeadlineSeconds", "tolerations"] {
        super::copy_key(&mut munged, os, key);
    }
    let old_grace = os.get("terminationGracePeriodSeconds").and_then(Value::as_i64);
    let new_grace = ns.get("terminationGracePeriodSeconds").and_then(Value::as_i64);
    if old_grace.is_some_and(|g| g < 0) && new_grace == Some(1) {
        super::copy_key(&mut munged, os, "terminationGracePeriodSeconds");
    }
    if !sem_eq(Some(&munged), Some(os)) {
        errs.push(FieldError::forbidden(
            "spec",
            format!("{POD_UPDATE_MSG}\n{}", spec_diff(os, &munged)),
        ));
    }
    errs
}

fn active_deadline_error(ns: &Value, os: &Value) -> Option<FieldError> {
    let path = "spec.activeDeadlineSeconds";
    let old = os.get("activeDeadlineSeconds").and_then(Value::as_i64);
    match ns.get("activeDeadlineSeconds").and_then(Value::as_i64) {
        Some(n) if !(0..=i64::from(i32::MAX)).contains(&n) => Some(FieldError::invalid(
            path,
            json!(n),
            range_error(0, i64::from(i32::MAX)),
        )),
        Some(n) if old.is_some_and(|o| o < n) => Some(FieldError::invalid(
            path,
            json!(n),
            "must be less than or equal to previous value",
        )),
        None if old.is_some() => Some(FieldError::invalid(
            path,
            Value::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => None,
    }
}

fn validate_only_added_tolerations(ns: &Value, os: &Value) -> Vec<FieldError> {
    let new: Vec<&Value> = items(ns, "tolerations").collect();
    let all_kept = items(os, "tolerations").all(|o| new.iter().any(|n| sem_eq(Some(n), Some(o))));
    if all_kept {
        Vec::new()
    } else {
        vec![FieldError::forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        )]
    }
}

/// A short cmp-style listing of the top-level PodSpec fields that differ.
fn spec_diff(old: &Value, new: &Value) -> String {
    let mut keys: Vec<&String> = Vec::new();
    for v in [old, new] {
        keys.extend(v.as_object().into_iter().flat_map(|m| m.keys()));
    }
    keys.sort();
    keys.dedup();
    let mut out = String::from("  core.PodSpec{\n");
    for k in keys {
        let (o, n) = (old.get(k.as_str()), new.get(k.as_str()));
        if sem_eq(o, n) {
            continue;
        }
        let field = go_field_name(k);
        let show = |v: Option<&Value>| v.map_or("nil".to_string(), Value::to_string);
        out.push_str(&format!("- \t{field}: {},\n+ \t{field}: {},\n", show(o), show(n)));
    }
    out.push_str("  }\n");
    out
}

fn go_field_name(k: &str) -> String {
    let mut c = k.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}
