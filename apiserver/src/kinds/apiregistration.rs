//! apiregistration.k8s.io/v1: APIService, and the group priorities that
//! order discovery.
//!
//! Upstream: `staging/src/k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/defaults.go`
//! (service port 443), `.../apiregistration/validation/validation.go`,
//! `.../registry/apiservice/strategy.go` (a new APIService's status is
//! cleared; the availability controller fills it), and the
//! `apiVersionPriorities` tables of `cmd/kube-apiserver/app/aggregator.go`
//! and `pkg/controlplane/apiserver/aggregator.go`, from which the API server
//! makes one APIService per group-version it serves (`makeAPIService`).
//!
//! Simplified: there is no availability controller. A local APIService
//! (no `spec.service`) is Available from its creation, with upstream's
//! reason and message; one that names a service gets no condition (upstream
//! would probe the service and report `False (ServiceNotFound)` or similar).
//! The APIService of apiregistration.k8s.io itself is given priority 18000/15
//! (upstream lists its group first in discovery, at priority 20001).

use std::cmp::Reverse;

use serde_json::{Value, json};

use crate::error::FieldError;
use crate::jsonpath::at;
use crate::validation::{is_dns1035_label, is_dns1123_subdomain};

/// The label on the APIServices the server makes for its own group-versions.
pub const AUTOMANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";

/// `(groupPriorityMinimum, versionPriority)` of a built-in group-version,
/// from upstream's `apiVersionPriorities`.
pub fn priority(group: &str, version: &str) -> Option<(i64, i64)> {
    Some(match (group, version) {
        ("", "v1") => (18000, 1),
        ("apiregistration.k8s.io", "v1") => (18000, 15),
        ("apps", "v1") => (17800, 15),
        ("events.k8s.io", "v1") => (17750, 15),
        ("authentication.k8s.io", "v1") => (17700, 15),
        ("authorization.k8s.io", "v1") => (17600, 15),
        ("autoscaling", "v1") => (17500, 15),
        ("autoscaling", "v2") => (17500, 30),
        ("batch", "v1") => (17400, 15),
        ("certificates.k8s.io", "v1") => (17300, 15),
        ("networking.k8s.io", "v1") => (17200, 15),
        ("policy", "v1") => (17100, 15),
        ("rbac.authorization.k8s.io", "v1") => (17000, 15),
        ("storage.k8s.io", "v1") => (16800, 15),
        ("apiextensions.k8s.io", "v1") => (16700, 15),
        ("admissionregistration.k8s.io", "v1") => (16700, 15),
        ("scheduling.k8s.io", "v1") => (16600, 15),
        ("coordination.k8s.io", "v1") => (16500, 15),
        ("node.k8s.io", "v1") => (16300, 15),
        ("discovery.k8s.io", "v1") => (16200, 15),
        ("flowcontrol.apiserver.k8s.io", "v1") => (16100, 21),
        _ => return None,
    })
}

/// Group-versions in discovery order (upstream `SortedByGroupAndVersion`,
/// with the aggregator's own group first): core, apiregistration.k8s.io,
/// then by group priority (highest first, ties by name), and within a group
/// by version priority (highest first: the preferred version leads). Custom
/// group-versions without a table entry sort as priority 1000, as a
/// CustomResourceDefinition's APIService does.
pub fn discovery_order(mut gvs: Vec<(String, String)>) -> Vec<(String, String)> {
    let key = |(g, v): &(String, String)| {
        let (group_priority, version_priority) = priority(g, v).unwrap_or((1000, 100));
        let first = match g.as_str() {
            "" => 0,
            "apiregistration.k8s.io" => 1,
            _ => 2,
        };
        (
            first,
            Reverse(group_priority),
            g.clone(),
            Reverse(version_priority),
            kube_aware(v),
        )
    };
    gvs.sort_by_key(key);
    gvs
}

/// Versions of equal priority in upstream's kube-aware order
/// (`version.CompareKubeAwareVersionStrings`): GA, then beta, then alpha,
/// each by higher number first (`v2`, `v1`, `v1beta2`, `v1beta1`,
/// `v1alpha1`), then anything else alphabetically.
fn kube_aware(v: &str) -> (u8, Reverse<u64>, Reverse<u64>, String) {
    let parsed = v.strip_prefix('v').and_then(|rest| {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        match &rest[digits..] {
            "" => Some((0, major, 0)),
            tail => {
                let (class, n) = match tail.strip_prefix("beta") {
                    Some(n) => (1, n),
                    None => (2, tail.strip_prefix("alpha")?),
                };
                Some((class, major, n.parse().ok()?))
            }
        }
    });
    match parsed {
        Some((class, major, minor)) => (class, Reverse(major), Reverse(minor), String::new()),
        None => (3, Reverse(0), Reverse(0), v.to_string()),
    }
}

/// The APIService the server keeps for one of its group-versions (upstream
/// `makeAPIService` and the autoregister controller's label), or `None`
/// for a group-version without a priority (upstream skips those too).
pub fn local_api_service(group: &str, version: &str) -> Option<Value> {
    let (group_priority, version_priority) = priority(group, version)?;
    Some(json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": format!("{version}.{group}"), "labels": {AUTOMANAGED_LABEL: "onstart"}},
        "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority,
                 "versionPriority": version_priority, "service": null},
    }))
}

/// `SetDefaults_ServiceReference`: port 443.
pub fn default_api_service(obj: &mut Value) {
    if let Some(s) = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut("service"))
        .filter(|s| s.is_object())
    {
        super::default_key(s, "port", json!(443));
    }
}

/// The status a new APIService starts with: local ones are Available.
pub fn initial_status(obj: &Value) -> Value {
    if at(obj, &["spec", "service"]).is_some_and(Value::is_object) {
        return json!({});
    }
    let since = at(obj, &["metadata", "creationTimestamp"])
        .cloned()
        .unwrap_or(Value::Null);
    json!({"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": since,
        "reason": "Local", "message": "Local APIServices are always available"}]})
}

/// `ValidateAPIService` (the name rule included: `<version>.<group>`).
pub fn validate_api_service(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let group = spec["group"].as_str().unwrap_or("");
    let version = spec["version"].as_str().unwrap_or("");
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let required = format!("{version}.{group}");
    if !name.is_empty() && name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            json!(name),
            format!(
                "must be `spec.version+\".\"+spec.group`: {}",
                crate::gofmt::go_quote(&required)
            ),
        ));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for msg in is_dns1123_subdomain(group) {
            errs.push(FieldError::invalid("spec.group", json!(group), msg));
        }
    }
    for msg in is_dns1035_label(version) {
        errs.push(FieldError::invalid("spec.version", json!(version), msg));
    }
    let gpm = spec["groupPriorityMinimum"].as_i64().unwrap_or(0);
    if !(1..=20000).contains(&gpm) {
        errs.push(FieldError::invalid(
            "spec.groupPriorityMinimum",
            json!(gpm),
            "must be positive and less than 20000",
        ));
    }
    let vp = spec["versionPriority"].as_i64().unwrap_or(0);
    if !(1..=1000).contains(&vp) {
        errs.push(FieldError::invalid(
            "spec.versionPriority",
            json!(vp),
            "must be positive and less than 1000",
        ));
    }
    errs.extend(validate_service(spec));
    errs
}

fn validate_service(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ca = spec["caBundle"].as_str().unwrap_or("");
    let insecure = spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false);
    let Some(service) = spec.get("service").filter(|s| s.is_object()) else {
        if !ca.is_empty() {
            // upstream prints the length of the decoded bytes
            let bytes = ca.len() / 4 * 3;
            errs.push(crate::validation::invalid_raw(
                "spec.caBundle",
                format!("\"{bytes} bytes\""),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(FieldError::invalid(
                "spec.insecureSkipTLSVerify",
                json!(true),
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    for field in ["namespace", "name"] {
        if service[field].as_str().unwrap_or("").is_empty() {
            errs.push(FieldError::required(format!("spec.service.{field}"), ""));
        }
    }
    let port = service["port"].as_i64().unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            "spec.service.port",
            json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if insecure && !ca.is_empty() {
        errs.push(FieldError::invalid(
            "spec.insecureSkipTLSVerify",
            json!(true),
            "may not be true if caBundle is present",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gv(g: &str, v: &str) -> (String, String) {
        (g.to_string(), v.to_string())
    }

    #[test]
    fn discovery_puts_core_then_apiregistration_then_by_priority() {
        let sorted = discovery_order(vec![
            gv("storage.k8s.io", "v1"),
            gv("autoscaling", "v1"),
            gv("example.com", "v1"),
            gv("apps", "v1"),
            gv("autoscaling", "v2"),
            gv("apiregistration.k8s.io", "v1"),
            gv("", "v1"),
            gv("admissionregistration.k8s.io", "v1"),
            gv("apiextensions.k8s.io", "v1"),
        ]);
        assert_eq!(
            sorted,
            vec![
                gv("", "v1"),
                gv("apiregistration.k8s.io", "v1"),
                gv("apps", "v1"),
                gv("autoscaling", "v2"),
                gv("autoscaling", "v1"),
                gv("storage.k8s.io", "v1"),
                gv("admissionregistration.k8s.io", "v1"),
                gv("apiextensions.k8s.io", "v1"),
                gv("example.com", "v1"),
            ]
        );
    }

    #[test]
    fn local_api_services_validate_and_are_available() {
        let mut core = local_api_service("", "v1").unwrap();
        assert_eq!(core["metadata"]["name"], "v1.");
        core["metadata"]["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(validate_api_service(&core), Vec::new());
        let status = initial_status(&core);
        assert_eq!(status["conditions"][0]["reason"], "Local");
        assert_eq!(
            status["conditions"][0]["message"],
            "Local APIServices are always available"
        );
        assert_eq!(
            local_api_service("autoscaling", "v2").unwrap()["spec"]["versionPriority"],
            30
        );
        assert!(local_api_service("example.com", "v1").is_none());
    }

    #[test]
    fn the_name_must_be_version_dot_group() {
        let o = json!({"metadata": {"name": "v1.wrong"}, "spec": {"group": "metrics.k8s.io",
            "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
            "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}}});
        let msgs: Vec<String> = validate_api_service(&o).iter().map(ToString::to_string).collect();
        assert_eq!(
            msgs,
            [
                "metadata.name: Invalid value: \"v1.wrong\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\""
            ]
        );
    }

    #[test]
    fn custom_versions_sort_kube_aware() {
        let gvs = ["v1alpha1", "v1", "v2beta1", "foo", "v1beta2", "v2", "v1beta1"]
            .iter()
            .map(|v| ("example.com".to_string(), v.to_string()))
            .collect();
        let order: Vec<String> = discovery_order(gvs).into_iter().map(|(_, v)| v).collect();
        assert_eq!(
            order,
            ["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
        );
    }
}
