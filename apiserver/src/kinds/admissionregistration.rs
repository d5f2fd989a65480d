//! admissionregistration.k8s.io/v1: ValidatingWebhookConfiguration,
//! MutatingWebhookConfiguration, ValidatingAdmissionPolicy and
//! ValidatingAdmissionPolicyBinding.
//!
//! Upstream: `pkg/apis/admissionregistration/v1/defaults.go` (and the
//! generated `SetObjectDefaults_*` that call them per webhook, rule and
//! service reference), `pkg/apis/admissionregistration/validation/validation.go`,
//! `staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go` (webhook
//! URL and service), and the strategies of `pkg/registry/admissionregistration/*`
//! (generation follows `webhooks` / `spec`).
//!
//! These objects are stored and validated; miniplane never calls a webhook
//! and never evaluates a policy. Simplified: CEL expressions (validations,
//! match conditions, variables, audit annotations) are checked for presence
//! only, not compiled; update validation uses the create rules (upstream
//! relaxes a few for objects that were already stored before a rule
//! existed).

use serde_json::{Value, json};

use super::{child, default_key, items, items_mut};
use crate::error::FieldError;
use crate::labels::validation::validate_label_selector;
use crate::validation::{is_dns1035_label, is_dns1123_subdomain};

// ---------------------------------------------------------------------------
// Defaulting

/// `SetObjectDefaults_{Validating,Mutating}WebhookConfiguration`.
pub fn default_webhook_configuration(obj: &mut Value, mutating: bool) {
    for hook in items_mut(obj, "webhooks") {
        default_key(hook, "failurePolicy", json!("Fail"));
        default_key(hook, "matchPolicy", json!("Equivalent"));
        default_key(hook, "namespaceSelector", json!({}));
        default_key(hook, "objectSelector", json!({}));
        default_key(hook, "timeoutSeconds", json!(10));
        if mutating {
            default_key(hook, "reinvocationPolicy", json!("Never"));
        }
        if let Some(service) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .filter(|s| s.is_object())
        {
            default_key(service, "port", json!(443));
        }
        for rule in items_mut(hook, "rules") {
            default_key(rule, "scope", json!("*"));
        }
    }
}

/// `SetObjectDefaults_ValidatingAdmissionPolicy`: failurePolicy Fail, and the
/// match constraints' defaults.
pub fn default_policy(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_key(spec, "failurePolicy", json!("Fail"));
    if let Some(m) = spec.get_mut("matchConstraints").filter(|m| m.is_object()) {
        default_match_resources(m);
    }
}

/// `SetObjectDefaults_ValidatingAdmissionPolicyBinding`: the match resources' defaults.
pub fn default_binding(obj: &mut Value) {
    if let Some(m) = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut("matchResources"))
        .filter(|m| m.is_object())
    {
        default_match_resources(m);
    }
}

/// `SetDefaults_MatchResources` plus `SetDefaults_Rule` on every rule.
fn default_match_resources(m: &mut Value) {
    default_key(m, "matchPolicy", json!("Equivalent"));
    default_key(m, "namespaceSelector", json!({}));
    default_key(m, "objectSelector", json!({}));
    for key in ["resourceRules", "excludeResourceRules"] {
        for rule in items_mut(m, key) {
            default_key(rule, "scope", json!("*"));
        }
    }
}

// ---------------------------------------------------------------------------
// Webhook configurations

/// `validate{Validating,Mutating}WebhookConfiguration` (metadata aside).
pub fn validate_webhook_configuration(obj: &Value, mutating: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, hook) in items(obj, "webhooks").enumerate() {
        let path = format!("webhooks[{i}]");
        errs.extend(validate_webhook(hook, &path, mutating));
        errs.extend(validate_admission_review_versions(
            hook.get("admissionReviewVersions"),
            &format!("{path}.admissionReviewVersions"),
        ));
        let name = hook["name"].as_str().unwrap_or("");
        if !name.is_empty() {
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

fn validate_webhook(hook: &Value, path: &str, mutating: bool) -> Vec<FieldError> {
    let mut errs = fully_qualified_name(hook["name"].as_str().unwrap_or(""), &format!("{path}.name"));
    for (i, rule) in items(hook, "rules").enumerate() {
        errs.extend(validate_rule_with_operations(rule, &format!("{path}.rules[{i}]")));
    }
    errs.extend(one_of(hook, path, "failurePolicy", &["Fail", "Ignore"]));
    errs.extend(one_of(hook, path, "matchPolicy", &["Equivalent", "Exact"]));
    let side_effects = &["None", "NoneOnDryRun"];
    if hook["sideEffects"].is_null() {
        errs.push(FieldError::required(
            format!("{path}.sideEffects"),
            format!("must specify one of {}", side_effects.join(", ")),
        ));
    }
    errs.extend(one_of(hook, path, "sideEffects", side_effects));
    if let Some(t) = hook["timeoutSeconds"].as_i64().filter(|t| !(1..=30).contains(t)) {
        errs.push(FieldError::invalid(
            format!("{path}.timeoutSeconds"),
            json!(t),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for key in ["namespaceSelector", "objectSelector"] {
        errs.extend(validate_label_selector(
            hook.get(key).filter(|s| s.is_object()),
            &format!("{path}.{key}"),
        ));
    }
    if mutating {
        errs.extend(one_of(hook, path, "reinvocationPolicy", &["IfNeeded", "Never"]));
    }
    errs.extend(validate_client_config(
        &hook["clientConfig"],
        &format!("{path}.clientConfig"),
    ));
    errs.extend(validate_match_conditions(
        hook,
        &format!("{path}.matchConditions"),
    ));
    errs
}

/// `NotSupported` when `obj[key]` is set to something outside `supported`.
fn one_of(obj: &Value, path: &str, key: &str, supported: &[&str]) -> Option<FieldError> {
    let v = obj.get(key)?.as_str()?;
    (!supported.contains(&v)).then(|| FieldError::not_supported(format!("{path}.{key}"), json!(v), supported))
}

/// `utilvalidation.IsFullyQualifiedName`: a DNS subdomain of three or more labels.
fn fully_qualified_name(name: &str, path: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let errs = is_dns1123_subdomain(name);
    if !errs.is_empty() {
        return vec![FieldError::invalid(path, json!(name), errs.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            path,
            json!(name),
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// The AdmissionReview versions a webhook may ask for (`AcceptedAdmissionReviewVersions`).
const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

fn validate_admission_review_versions(versions: Option<&Value>, path: &str) -> Vec<FieldError> {
    let list: Vec<&str> = versions
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    if list.is_empty() {
        return vec![FieldError::required(
            path,
            format!("must specify one of {}", ACCEPTED_REVIEW_VERSIONS.join(", ")),
        )];
    }
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        if seen.contains(v) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                json!(v),
                "duplicate version",
            ));
            continue;
        }
        seen.push(v);
        for msg in is_dns1035_label(v) {
            errs.push(FieldError::invalid(format!("{path}[{i}]"), json!(v), msg));
        }
    }
    if !list.iter().any(|v| ACCEPTED_REVIEW_VERSIONS.contains(v)) {
        errs.push(crate::validation::invalid_raw(
            path,
            go_slice("string", &list),
            &format!(
                "must include at least one of {}",
                ACCEPTED_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    errs
}

/// A slice of strings as `field.Error` prints it (Go's `%#v`):
/// `[]string{"a", "b"}`, with the element type upstream's field has.
fn go_slice(element: &str, list: &[&str]) -> String {
    format!("[]{element}{{{}}}", crate::gofmt::go_quoted_list(list))
}

fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    items(v, key).map(|s| s.as_str().unwrap_or("")).collect()
}

/// `validateRuleWithOperations` with subresources allowed.
fn validate_rule_with_operations(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ops = strings(rule, "operations");
    if ops.is_empty() {
        errs.push(FieldError::required(format!("{path}.operations"), ""));
    }
    if ops.len() > 1 && ops.contains(&"*") {
        errs.push(crate::validation::invalid_raw(
            format!("{path}.operations"),
            go_slice("admissionregistration.OperationType", &ops),
            "if '*' is present, must not specify other operations",
        ));
    }
    let supported = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
    for (i, op) in ops.iter().enumerate() {
        if !supported.contains(op) {
            errs.push(FieldError::not_supported(
                format!("{path}.operations[{i}]"),
                json!(op),
                &supported,
            ));
        }
    }
    errs.extend(validate_rule(rule, path));
    errs
}

/// `validateRule` with subresources allowed (`validateResources`).
fn validate_rule(rule: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let list = strings(rule, key);
        if list.is_empty() {
            errs.push(FieldError::required(format!("{path}.{key}"), ""));
        }
        if list.len() > 1 && list.contains(&"*") {
            errs.push(crate::validation::invalid_raw(
                format!("{path}.{key}"),
                go_slice("string", &list),
                &format!("if '*' is present, must not specify other {what}"),
            ));
        }
    }
    for (i, v) in strings(rule, "apiVersions").iter().enumerate() {
        if v.is_empty() {
            errs.push(FieldError::required(format!("{path}.apiVersions[{i}]"), ""));
        }
    }
    errs.extend(validate_resources(
        &strings(rule, "resources"),
        &format!("{path}.resources"),
    ));
    errs.extend(one_of(rule, path, "scope", &["*", "Cluster", "Namespaced"]));
    errs
}

fn validate_resources(resources: &[&str], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let (mut with_wildcard_sub, mut sub_with_wildcard_res) = (Vec::new(), Vec::new());
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, rs) in resources.iter().enumerate() {
        if rs.is_empty() {
            errs.push(FieldError::required(format!("{path}[{i}]"), ""));
            continue;
        }
        double |= *rs == "*/*";
        single |= *rs == "*";
        let Some((res, sub)) = rs.split_once('/') else {
            plain = *rs != "*";
            continue;
        };
        if with_wildcard_sub.contains(&res) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                json!(rs),
                format!("if '{res}/*' is present, must not specify {rs}"),
            ));
        }
        if sub_with_wildcard_res.contains(&sub) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}]"),
                json!(rs),
                format!("if '*/{sub}' is present, must not specify {rs}"),
            ));
        }
        if sub == "*" {
            with_wildcard_sub.push(res);
        }
        if res == "*" {
            sub_with_wildcard_res.push(sub);
        }
    }
    if resources.len() > 1 && double {
        errs.push(crate::validation::invalid_raw(
            path,
            go_slice("string", resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && plain {
        errs.push(crate::validation::invalid_raw(
            path,
            go_slice("string", resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// Exactly one of `url` (https, with a host, no user, query or fragment)
/// and `service` (name, namespace, a valid port and path).
fn validate_client_config(cc: &Value, path: &str) -> Vec<FieldError> {
    match (
        cc.get("url").and_then(Value::as_str),
        cc.get("service").filter(|s| s.is_object()),
    ) {
        (Some(url), None) => validate_webhook_url(url, &format!("{path}.url")),
        (None, Some(service)) => validate_webhook_service(service, &format!("{path}.service")),
        _ => vec![FieldError::required(
            path,
            "exactly one of url or service is required",
        )],
    }
}

/// `webhook.ValidateWebhookURL(..., forceHttps=true)`.
fn validate_webhook_url(url: &str, path: &str) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut errs = Vec::new();
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (rest, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let authority = if scheme.is_empty() {
        ""
    } else {
        rest.split('/').next().unwrap_or("")
    };
    let (user, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, authority),
    };
    if scheme != "https" {
        errs.push(FieldError::invalid(
            path,
            json!(scheme),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if host.is_empty() {
        errs.push(FieldError::invalid(
            path,
            json!(host),
            format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = user {
        errs.push(FieldError::invalid(
            path,
            json!(user),
            "user information is not permitted in the URL",
        ));
    }
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(
            path,
            json!(fragment),
            "fragments are not permitted in the URL",
        ));
    }
    if !query.is_empty() {
        errs.push(FieldError::invalid(
            path,
            json!(query),
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// `webhook.ValidateWebhookService`.
fn validate_webhook_service(s: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if s["name"].as_str().unwrap_or("").is_empty() {
        errs.push(FieldError::required(
            format!("{path}.name"),
            "service name is required",
        ));
    }
    if s["namespace"].as_str().unwrap_or("").is_empty() {
        errs.push(FieldError::required(
            format!("{path}.namespace"),
            "service namespace is required",
        ));
    }
    let port = s["port"].as_i64().unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            format!("{path}.port"),
            json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(p) = s["path"].as_str() else {
        return errs;
    };
    if p.is_empty() || p == "/" {
        return errs;
    }
    let ppath = format!("{path}.path");
    if p == "//" {
        errs.push(FieldError::invalid(
            ppath,
            json!(p),
            "segment[0] may not be empty",
        ));
        return errs;
    }
    if !p.starts_with('/') {
        errs.push(FieldError::invalid(&ppath, json!(p), "must start with a '/'"));
    }
    let inner = p.get(1..).unwrap_or("");
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    for (i, step) in inner.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                &ppath,
                json!(p),
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in is_dns1123_subdomain(step) {
            errs.push(FieldError::invalid(
                &ppath,
                json!(p),
                format!("segment[{i}]: {failure}"),
            ));
        }
    }
    errs
}

/// `validateMatchConditions`, the expressions checked for presence only.
fn validate_match_conditions(obj: &Value, path: &str) -> Vec<FieldError> {
    let conditions: Vec<&Value> = items(obj, "matchConditions").collect();
    let mut errs = Vec::new();
    if conditions.len() > 64 {
        errs.push(FieldError::too_many(path, conditions.len(), 64));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in conditions.iter().enumerate() {
        if c["expression"].as_str().unwrap_or("").trim().is_empty() {
            errs.push(FieldError::required(format!("{path}[{i}].expression"), ""));
        }
        let name = c["name"].as_str().unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{path}[{i}].name"), ""));
        } else if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{path}[{i}].name"), json!(name)));
        } else {
            names.push(name);
        }
    }
    errs
}

// ---------------------------------------------------------------------------
// ValidatingAdmissionPolicy and its binding

/// `validateValidatingAdmissionPolicySpec` without compiling CEL.
pub fn validate_policy(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut errs = Vec::new();
    if spec["failurePolicy"].is_null() {
        errs.push(FieldError::required("spec.failurePolicy", ""));
    }
    errs.extend(one_of(spec, "spec", "failurePolicy", &["Fail", "Ignore"]));
    if let Some(pk) = spec.get("paramKind").filter(|p| p.is_object()) {
        errs.extend(validate_param_kind(pk));
    }
    match spec.get("matchConstraints").filter(|m| m.is_object()) {
        None => errs.push(FieldError::required("spec.matchConstraints", "")),
        Some(m) => {
            errs.extend(validate_match_resources(m, "spec.matchConstraints"));
            if items(m, "resourceRules").next().is_none() {
                errs.push(FieldError::required("spec.matchConstraints.resourceRules", ""));
            }
        }
    }
    errs.extend(validate_match_conditions(spec, "spec.matchConditions"));
    for (i, v) in items(spec, "variables").enumerate() {
        if v["name"].as_str().unwrap_or("").trim().is_empty() {
            errs.push(FieldError::required(
                format!("spec.variables[{i}].name"),
                "name is not specified",
            ));
        }
        if v["expression"].as_str().unwrap_or("").trim().is_empty() {
            errs.push(FieldError::required(
                format!("spec.variables[{i}].expression"),
                "expression is not specified",
            ));
        }
    }
    let validations: Vec<&Value> = items(spec, "validations").collect();
    if validations.is_empty() && items(spec, "auditAnnotations").next().is_none() {
        let msg = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required("spec.validations", msg));
        errs.push(FieldError::required("spec.auditAnnotations", msg));
    }
    for (i, v) in validations.into_iter().enumerate() {
        errs.extend(validate_validation(v, &format!("spec.validations[{i}]")));
    }
    errs
}

/// `validateValidation`: an expression, a one-line message, a known reason.
fn validate_validation(v: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if v["expression"].as_str().unwrap_or("").trim().is_empty() {
        errs.push(FieldError::required(
            format!("{path}.expression"),
            "expression is not specified",
        ));
    }
    let me = v["messageExpression"].as_str().unwrap_or("");
    if !me.is_empty() && me.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.messageExpression"),
            json!(me),
            "must be non-empty if specified",
        ));
    }
    let msg = v["message"].as_str().unwrap_or("");
    if !msg.is_empty() && msg.trim().is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            json!(msg),
            "message must be non-empty if specified",
        ));
    } else if msg.trim().contains(['\n', '\r']) {
        errs.push(FieldError::invalid(
            format!("{path}.message"),
            json!(msg),
            "message must not contain line breaks",
        ));
    }
    errs.extend(one_of(
        v,
        path,
        "reason",
        &["Forbidden", "Invalid", "RequestEntityTooLarge"],
    ));
    errs
}

/// `validateParamKind`.
fn validate_param_kind(pk: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let av = pk["apiVersion"].as_str().unwrap_or("");
    if av.is_empty() {
        errs.push(FieldError::required("spec.paramKind.apiVersion", ""));
    } else if av.matches('/').count() > 1 {
        errs.push(FieldError::invalid(
            "spec.paramKind.apiVersion",
            json!(av),
            format!("unexpected GroupVersion string: {av}"),
        ));
    } else {
        let (group, version) = av.split_once('/').unwrap_or(("", av));
        let group_errs = if group.is_empty() {
            Vec::new()
        } else {
            is_dns1123_subdomain(group)
        };
        if !group_errs.is_empty() {
            errs.push(FieldError::invalid(
                "spec.paramKind.apiVersion",
                json!(group),
                group_errs.join(","),
            ));
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(
                "spec.paramKind.apiVersion",
                json!(av),
                "version must be specified",
            ));
        } else if !is_dns1035_label(version).is_empty() {
            let msg = is_dns1035_label(version).join(",");
            errs.push(FieldError::invalid(
                "spec.paramKind.apiVersion",
                json!(version),
                msg,
            ));
        }
    }
    let kind = pk["kind"].as_str().unwrap_or("");
    if kind.is_empty() {
        errs.push(FieldError::required("spec.paramKind.kind", ""));
    } else if !is_dns1035_label(&kind.to_lowercase()).is_empty() {
        let msg = is_dns1035_label(&kind.to_lowercase()).join(",");
        errs.push(FieldError::invalid(
            "spec.paramKind.kind",
            json!(kind),
            format!("may have mixed case, but should otherwise match: {msg}"),
        ));
    }
    errs
}

/// `validateMatchResources` (its defaults make the selectors and policy present).
fn validate_match_resources(m: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if m["matchPolicy"].is_null() {
        errs.push(FieldError::required(format!("{path}.matchPolicy"), ""));
    }
    errs.extend(one_of(m, path, "matchPolicy", &["Equivalent", "Exact"]));
    for key in ["namespaceSelector", "objectSelector"] {
        match m.get(key).filter(|s| s.is_object()) {
            None => errs.push(FieldError::required(format!("{path}.{key}"), "")),
            Some(s) => errs.extend(validate_label_selector(Some(s), &format!("{path}.{key}"))),
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in items(m, key).enumerate() {
            errs.extend(validate_rule_with_operations(rule, &format!("{path}.{key}[{i}]")));
        }
    }
    errs
}

/// `validateValidatingAdmissionPolicyBindingSpec`.
pub fn validate_binding(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut errs = Vec::new();
    let policy = spec["policyName"].as_str().unwrap_or("");
    if policy.is_empty() {
        errs.push(FieldError::required("spec.policyName", ""));
    }
    for msg in if policy.is_empty() {
        Vec::new()
    } else {
        is_dns1123_subdomain(policy)
    } {
        errs.push(FieldError::invalid("spec.policyName", json!(policy), msg));
    }
    if let Some(pr) = spec.get("paramRef").filter(|p| p.is_object()) {
        errs.extend(validate_param_ref(pr));
    }
    if let Some(m) = spec.get("matchResources").filter(|m| m.is_object()) {
        errs.extend(validate_match_resources(m, "spec.matchResources"));
    }
    errs.extend(validate_validation_actions(&strings(spec, "validationActions")));
    errs
}

fn validate_param_ref(pr: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = pr["name"].as_str().unwrap_or("");
    let selector = pr.get("selector").filter(|s| s.is_object());
    const EXCLUSIVE: &str = "name and selector are mutually exclusive";
    if !name.is_empty() {
        for bad in ["/", "%"] {
            if name.contains(bad) {
                errs.push(FieldError::invalid(
                    "spec.paramRef.name",
                    json!(name),
                    format!("may not contain '{bad}'"),
                ));
            }
        }
        if selector.is_some() {
            errs.push(FieldError::forbidden("spec.paramRef.name", EXCLUSIVE));
        }
    }
    if let Some(s) = selector {
        errs.extend(validate_label_selector(Some(s), "spec.paramRef.selector"));
        if !name.is_empty() {
            errs.push(FieldError::forbidden("spec.paramRef.selector", EXCLUSIVE));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required(
            "spec.paramRef",
            "one of name or selector must be specified",
        ));
    }
    match pr["parameterNotFoundAction"].as_str().unwrap_or("") {
        "" => errs.push(FieldError::required("spec.paramRef.parameterNotFoundAction", "")),
        "Deny" | "Allow" => {}
        other => errs.push(FieldError::not_supported(
            "spec.paramRef.parameterNotFoundAction",
            json!(other),
            &["Deny", "Allow"],
        )),
    }
    errs
}

fn validate_validation_actions(actions: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        if !["Audit", "Deny", "Warn"].contains(a) {
            errs.push(FieldError::not_supported(
                format!("spec.validationActions[{i}]"),
                json!(a),
                &["Audit", "Deny", "Warn"],
            ));
        }
        if seen.contains(a) {
            errs.push(FieldError::duplicate(
                format!("spec.validationActions[{i}]"),
                json!(a),
            ));
        }
        seen.push(a);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(crate::validation::invalid_raw(
            "spec.validationActions",
            go_slice("admissionregistration.ValidationAction", actions),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(
            "spec.validationActions",
            "at least one validation action is required",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn webhook(hook: Value) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
               "metadata": {"name": "c"}, "webhooks": [hook]})
    }

    fn valid_hook() -> Value {
        json!({"name": "validate.nginx.ingress.kubernetes.io", "sideEffects": "None",
               "admissionReviewVersions": ["v1"],
               "clientConfig": {"service": {"name": "svc", "namespace": "ns", "path": "/networking/v1/ingresses"}},
               "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["networking.k8s.io"],
                          "apiVersions": ["v1"], "resources": ["ingresses"]}]})
    }

    #[test]
    fn webhooks_get_upstream_defaults() {
        let mut o = webhook(valid_hook());
        default_webhook_configuration(&mut o, true);
        let h = &o["webhooks"][0];
        assert_eq!(h["failurePolicy"], "Fail");
        assert_eq!(h["matchPolicy"], "Equivalent");
        assert_eq!(h["namespaceSelector"], json!({}));
        assert_eq!(h["objectSelector"], json!({}));
        assert_eq!(h["timeoutSeconds"], 10);
        assert_eq!(h["reinvocationPolicy"], "Never");
        assert_eq!(h["clientConfig"]["service"]["port"], 443);
        assert_eq!(h["rules"][0]["scope"], "*");
    }

    #[test]
    fn a_defaulted_valid_webhook_passes() {
        let mut o = webhook(valid_hook());
        default_webhook_configuration(&mut o, false);
        assert_eq!(
            messages(&validate_webhook_configuration(&o, false)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn side_effects_review_versions_and_client_config_are_required() {
        let o = webhook(json!({"name": "hook", "clientConfig": {"url": "http://x?y=1"}}));
        assert_eq!(
            messages(&validate_webhook_configuration(&o, false)),
            [
                "webhooks[0].name: Invalid value: \"hook\": should be a domain with at least three segments separated by dots",
                "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
                "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "webhooks[0].clientConfig.url: Invalid value: \"y=1\": query parameters are not permitted in the URL",
                "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1",
            ]
        );
    }

    #[test]
    fn webhook_names_are_unique() {
        let mut o = json!({"webhooks": [valid_hook(), valid_hook()]});
        default_webhook_configuration(&mut o, false);
        assert_eq!(
            messages(&validate_webhook_configuration(&o, false)),
            ["webhooks[1].name: Duplicate value: \"validate.nginx.ingress.kubernetes.io\""]
        );
    }

    #[test]
    fn policies_need_validations_and_match_constraints() {
        let mut o = json!({"metadata": {"name": "p"}, "spec": {}});
        default_policy(&mut o);
        assert_eq!(
            messages(&validate_policy(&o)),
            [
                "spec.matchConstraints: Required value",
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
                "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
            ]
        );
        let mut ok = json!({"spec": {"matchConstraints": {"resourceRules": [{"operations": ["CREATE"],
            "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= 5"}]}});
        default_policy(&mut ok);
        assert_eq!(ok["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
        assert_eq!(messages(&validate_policy(&ok)), Vec::<String>::new());
    }

    #[test]
    fn bindings_need_a_policy_and_consistent_actions() {
        let o = json!({"spec": {"validationActions": ["Deny", "Warn"], "paramRef": {"name": "x"}}});
        assert_eq!(
            messages(&validate_binding(&o)),
            [
                "spec.policyName: Required value",
                "spec.paramRef.parameterNotFoundAction: Required value",
                "spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
            ]
        );
    }
}
