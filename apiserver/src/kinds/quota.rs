//! core/v1 ResourceQuota and LimitRange: defaulting and validation.
//!
//! Upstream: `pkg/apis/core/validation/validation.go` (`ValidateResourceQuota`,
//! `ValidateResourceQuotaSpec`, `validateResourceQuotaScopes`,
//! `ValidateResourceQuotaResourceName`, `ValidateResourceQuantityValue`,
//! `ValidateLimitRange`), `pkg/apis/core/helper/helpers.go` (the standard
//! resource names), `pkg/apis/core/v1/defaults.go` (`SetDefaults_LimitRangeItem`)
//! and `pkg/registry/core/resourcequota/strategy.go`.
//!
//! Simplified: `scopeSelector` is checked for its scope names and operators
//! only; the value of a Quantity in an error is printed as its string
//! (upstream prints some as Go structs); extended resources (`example.com/gpu`)
//! are accepted without the overcommit rule.

use serde_json::{Map, Value, json};

use super::child;
use crate::error::FieldError;
use crate::gofmt::go_quote;
use crate::quantity::Quantity;
use crate::validation::{invalid_raw, is_qualified_name};

/// `standardQuotaResources`: what a quota may limit without a `/` in the name.
const STANDARD_QUOTA_RESOURCES: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// `standardResources`: resource names valid anywhere without a `/`.
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `integerResources`: counted in whole units.
const INTEGER_RESOURCES: [&str; 9] = [
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// The scopes a quota may name (`standardResourceQuotaScopes`).
const STANDARD_SCOPES: [&str; 6] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
];

/// The limit types of a LimitRange (`standardLimitRangeTypes`).
const LIMIT_TYPES: [&str; 3] = ["Pod", "Container", "PersistentVolumeClaim"];

const IS_NEGATIVE: &str = "must be greater than or equal to 0";
const NOT_INTEGER: &str = "must be an integer";

fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
        || name.starts_with("limits.hugepages-")
}

/// `validateResourceName`: a qualified name; without a `/`, a standard one.
fn validate_resource_name(name: &str, path: &str) -> Vec<FieldError> {
    let errs: Vec<FieldError> = is_qualified_name(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path, json!(name), msg))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    if !name.contains('/') && !STANDARD_RESOURCES.contains(&name) && !is_hugepages(name) {
        return vec![FieldError::invalid(
            path,
            json!(name),
            "must be a standard resource type or fully qualified",
        )];
    }
    Vec::new()
}

/// `ValidateResourceQuotaResourceName`.
fn validate_quota_resource_name(name: &str, path: &str) -> Vec<FieldError> {
    let mut errs = validate_resource_name(name, path);
    if !name.contains('/') && !STANDARD_QUOTA_RESOURCES.contains(&name) && !is_hugepages(name) {
        errs.push(FieldError::invalid(
            path,
            json!(name),
            "must be a standard resource for quota",
        ));
    }
    errs
}

/// The quantity at `path`, or the error that it is not one.
fn parse_quantity(v: &Value, path: &str) -> Result<Quantity, FieldError> {
    Quantity::from_json(v).ok_or_else(|| {
        FieldError::invalid(
            path,
            v.clone(),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        )
    })
}

/// `ValidateResourceQuantityValue`: non-negative, whole for counted resources.
fn validate_quantity_value(name: &str, v: &Value, path: &str) -> Vec<FieldError> {
    let q = match parse_quantity(v, path) {
        Ok(q) => q,
        Err(e) => return vec![e],
    };
    let mut errs = Vec::new();
    if q.is_negative() {
        errs.push(FieldError::invalid(path, json!(q.to_string()), IS_NEGATIVE));
    }
    if INTEGER_RESOURCES.contains(&name) && !q.is_integer() {
        errs.push(FieldError::invalid(path, json!(q.to_string()), NOT_INTEGER));
    }
    errs
}

/// A `ResourceList` at `path` checked by `check(name, value, "path[name]")`.
fn each_resource(
    list: Option<&Value>,
    path: &str,
    mut check: impl FnMut(&str, &Value, &str) -> Vec<FieldError>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (name, v) in list.and_then(Value::as_object).into_iter().flatten() {
        errs.extend(check(name, v, &format!("{path}[{name}]")));
    }
    errs
}

fn quota_list(list: Option<&Value>, path: &str) -> Vec<FieldError> {
    each_resource(list, path, |name, v, p| {
        let mut e = validate_quota_resource_name(name, p);
        e.extend(validate_quantity_value(name, v, p));
        e
    })
}

/// `ValidateResourceQuota` (the spec; ObjectMeta is checked by the caller).
pub fn validate_resource_quota(obj: &Value) -> Vec<FieldError> {
    let spec = obj.get("spec").cloned().unwrap_or(json!({}));
    let mut errs = quota_list(spec.get("hard"), "spec.hard");
    errs.extend(validate_scopes(&spec));
    errs.extend(validate_scope_selector(&spec));
    errs
}

/// `ValidateResourceQuotaStatusUpdate`: the names and values of `status`.
pub fn validate_resource_quota_status(obj: &Value) -> Vec<FieldError> {
    let status = obj.get("status").cloned().unwrap_or(json!({}));
    let mut errs = quota_list(status.get("hard"), "status.hard");
    errs.extend(quota_list(status.get("used"), "status.used"));
    errs
}

/// Whether `scope` may restrict a quota of `resource`
/// (`IsResourceQuotaScopeValidForResource`).
fn scope_valid_for(scope: &str, resource: &str) -> bool {
    const COMPUTE: [&str; 6] = [
        "cpu",
        "memory",
        "limits.cpu",
        "limits.memory",
        "requests.cpu",
        "requests.memory",
    ];
    match scope {
        "BestEffort" => resource == "pods",
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || COMPUTE.contains(&resource),
        _ => true,
    }
}

/// `validateResourceQuotaScopes`.
fn validate_scopes(spec: &Value) -> Vec<FieldError> {
    let scopes: Vec<String> = spec
        .get("scopes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    if scopes.is_empty() {
        return Vec::new();
    }
    let quoted: Vec<String> = scopes.iter().map(|s| go_quote(s)).collect();
    let shown = format!("[]core.ResourceQuotaScope{{{}}}", quoted.join(", "));
    let mut hard: Vec<&String> = spec
        .get("hard")
        .and_then(Value::as_object)
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    hard.sort();
    let mut errs = Vec::new();
    for scope in &scopes {
        if !STANDARD_SCOPES.contains(&scope.as_str()) {
            errs.push(invalid_raw("spec.scopes", shown.clone(), "unsupported scope"));
        }
        for resource in &hard {
            if STANDARD_QUOTA_RESOURCES.contains(&resource.as_str()) && !scope_valid_for(scope, resource) {
                errs.push(invalid_raw(
                    "spec.scopes",
                    shown.clone(),
                    "unsupported scope applied to resource",
                ));
            }
        }
    }
    let has = |s: &str| scopes.iter().any(|x| x == s);
    for (a, b) in [("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")] {
        if has(a) && has(b) {
            errs.push(invalid_raw("spec.scopes", shown.clone(), "conflicting scopes"));
        }
    }
    errs
}

/// `validateScopeSelector`: known scope names and operators.
fn validate_scope_selector(spec: &Value) -> Vec<FieldError> {
    let path = "spec.scopeSelector.matchExpressions";
    let exprs = spec
        .pointer("/scopeSelector/matchExpressions")
        .and_then(Value::as_array);
    let mut errs = Vec::new();
    for (i, req) in exprs.into_iter().flatten().enumerate() {
        let name = req.get("scopeName").and_then(Value::as_str).unwrap_or("");
        if !STANDARD_SCOPES.contains(&name) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}].scopeName"),
                json!(name),
                "unsupported scope",
            ));
        }
        let op = req.get("operator").and_then(Value::as_str).unwrap_or("");
        if !["In", "NotIn", "Exists", "DoesNotExist"].contains(&op) {
            errs.push(FieldError::invalid(
                format!("{path}[{i}].operator"),
                json!(op),
                "not a valid selector operator",
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------
// LimitRange

/// `SetDefaults_LimitRangeItem`: for a Container item, `default` from `max`,
/// then `defaultRequest` from `default`, then from `min`.
pub fn default_limit_range(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    let Some(limits) = spec.get_mut("limits").and_then(Value::as_array_mut) else {
        return;
    };
    for item in limits.iter_mut().filter(|i| i.is_object()) {
        if item.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        let list = |item: &Value, key: &str| -> Map<String, Value> {
            item.get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let mut default = list(item, "default");
        for (k, v) in list(item, "max") {
            default.entry(k).or_insert(v);
        }
        let mut default_request = list(item, "defaultRequest");
        for (k, v) in default
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(list(item, "min"))
        {
            default_request.entry(k).or_insert(v);
        }
        for (key, map) in [("default", default), ("defaultRequest", default_request)] {
            if !map.is_empty() {
                item[key] = Value::Object(map);
            }
        }
    }
}

/// `validateLimitRangeTypeName`.
fn validate_limit_type(t: &str, path: &str) -> Vec<FieldError> {
    let errs: Vec<FieldError> = is_qualified_name(t)
        .into_iter()
        .map(|msg| FieldError::invalid(path, json!(t), msg))
        .collect();
    if errs.is_empty() && !t.contains('/') && !LIMIT_TYPES.contains(&t) {
        return vec![FieldError::invalid(
            path,
            json!(t),
            "must be a standard limit type or fully qualified",
        )];
    }
    errs
}

/// `validateLimitRangeResourceName`: Pod and Container items name container
/// resources; other types any resource.
fn validate_limit_resource_name(limit_type: &str, name: &str, path: &str) -> Vec<FieldError> {
    match limit_type {
        "Pod" | "Container" => {
            let mut errs = validate_resource_name(name, path);
            if errs.is_empty()
                && !name.contains('/')
                && !["cpu", "memory", "ephemeral-storage"].contains(&name)
                && !name.starts_with("hugepages-")
            {
                errs.push(FieldError::invalid(
                    path,
                    json!(name),
                    "must be a standard resource for containers",
                ));
            }
            errs
        }
        _ => validate_resource_name(name, path),
    }
}

/// One item's quantities by field (`min`, `max`, ...), by resource name.
type Bounds = std::collections::BTreeMap<String, std::collections::BTreeMap<&'static str, Quantity>>;

/// `ValidateLimitRange` (the spec).
pub fn validate_limit_range(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen_types: Vec<String> = Vec::new();
    let items = obj.pointer("/spec/limits").and_then(Value::as_array);
    for (i, item) in items.into_iter().flatten().enumerate() {
        let path = format!("spec.limits[{i}]");
        let limit_type = item.get("type").and_then(Value::as_str).unwrap_or("");
        errs.extend(validate_limit_type(limit_type, &format!("{path}.type")));
        if seen_types.iter().any(|t| t == limit_type) {
            errs.push(FieldError::duplicate(format!("{path}.type"), json!(limit_type)));
        }
        seen_types.push(limit_type.to_string());
        let mut bounds = Bounds::new();
        let mut fields = vec!["max", "min"];
        if limit_type == "Pod" {
            for field in ["default", "defaultRequest"] {
                if item
                    .get(field)
                    .and_then(Value::as_object)
                    .is_some_and(|m| !m.is_empty())
                {
                    errs.push(FieldError::forbidden(
                        format!("{path}.{field}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            fields.extend(["default", "defaultRequest"]);
        }
        fields.push("maxLimitRequestRatio");
        for field in fields {
            errs.extend(each_resource(
                item.get(field),
                &format!("{path}.{field}"),
                |name, v, p| {
                    let mut e = validate_limit_resource_name(limit_type, name, p);
                    match parse_quantity(v, p) {
                        Ok(q) => {
                            bounds.entry(name.to_string()).or_default().insert(field, q);
                        }
                        Err(err) => e.push(err),
                    }
                    e
                },
            ));
        }
        if limit_type == "PersistentVolumeClaim"
            && item.pointer("/min/storage").is_none()
            && item.pointer("/max/storage").is_none()
        {
            errs.push(FieldError::required(
                format!("{path}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        for (name, b) in &bounds {
            errs.extend(validate_bounds(&path, name, b));
        }
    }
    errs
}

/// The order rules between one resource's min, max, default, defaultRequest
/// and maxLimitRequestRatio.
fn validate_bounds(
    path: &str,
    name: &str,
    b: &std::collections::BTreeMap<&'static str, Quantity>,
) -> Vec<FieldError> {
    let (min, max) = (b.get("min"), b.get("max"));
    let (default, request) = (b.get("default"), b.get("defaultRequest"));
    let ratio = b.get("maxLimitRequestRatio");
    let at = |field: &str| format!("{path}.{field}[{name}]");
    let mut errs = Vec::new();
    let mut check = |cond: bool, field: &str, value: Quantity, msg: String| {
        if cond {
            errs.push(FieldError::invalid(at(field), json!(value.to_string()), msg));
        }
    };
    if let (Some(min), Some(max)) = (min, max) {
        check(
            min > max,
            "min",
            *min,
            format!("min value {min} is greater than max value {max}"),
        );
    }
    if let Some(req) = request {
        if let Some(min) = min {
            check(
                min > req,
                "defaultRequest",
                *req,
                format!("min value {min} is greater than default request value {req}"),
            );
        }
        if let Some(max) = max {
            check(
                req > max,
                "defaultRequest",
                *req,
                format!("default request value {req} is greater than max value {max}"),
            );
        }
        if let Some(def) = default {
            check(
                req > def,
                "defaultRequest",
                *req,
                format!("default request value {req} is greater than default limit value {def}"),
            );
        }
    }
    if let Some(def) = default {
        if let Some(min) = min {
            check(
                min > def,
                "default",
                *min,
                format!("min value {min} is greater than default value {def}"),
            );
        }
        if let Some(max) = max {
            check(
                def > max,
                "default",
                *max,
                format!("default value {def} is greater than max value {max}"),
            );
        }
    }
    if let Some(ratio) = ratio {
        check(
            *ratio < Quantity::from_int(1),
            "maxLimitRequestRatio",
            *ratio,
            format!("ratio {ratio} is less than 1"),
        );
        if let (Some(min), Some(max)) = (min, max)
            && min.milli_value() > 0
        {
            let limit = max.milli_value() as f64 / min.milli_value() as f64;
            let r = ratio.milli_value() as f64 / 1000.0;
            check(
                r > limit,
                "maxLimitRequestRatio",
                *ratio,
                format!("ratio {ratio} is greater than max/min = {limit:.6}"),
            );
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn quota_hard_values_must_be_non_negative_standard_names() {
        let rq = json!({"spec": {"hard": {"pods": "-1", "requests.cpu": "1", "bogus": "1", "count/deployments.apps": "2"}}});
        assert_eq!(
            messages(&validate_resource_quota(&rq)),
            [
                "spec.hard[bogus]: Invalid value: \"bogus\": must be a standard resource type or fully qualified",
                "spec.hard[bogus]: Invalid value: \"bogus\": must be a standard resource for quota",
                "spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0",
            ]
        );
        let half = json!({"spec": {"hard": {"pods": "500m"}}});
        assert_eq!(
            messages(&validate_resource_quota(&half)),
            ["spec.hard[pods]: Invalid value: \"500m\": must be an integer"]
        );
    }

    #[test]
    fn quota_scopes_conflict_and_apply_only_to_pod_resources() {
        let rq = json!({"spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort", "NotBestEffort"]}});
        assert_eq!(
            messages(&validate_resource_quota(&rq)),
            [
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: conflicting scopes"
            ]
        );
        let rq = json!({"spec": {"hard": {"secrets": "1"}, "scopes": ["Terminating"]}});
        assert_eq!(
            messages(&validate_resource_quota(&rq)),
            [
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Terminating\"}: unsupported scope applied to resource"
            ]
        );
    }

    #[test]
    fn limit_range_container_defaults_come_from_max_then_default_then_min() {
        let mut lr = json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "64Mi"}},
            {"type": "Pod", "max": {"cpu": "2"}},
        ]}});
        default_limit_range(&mut lr);
        assert_eq!(lr["spec"]["limits"][0]["default"], json!({"cpu": "1"}));
        assert_eq!(
            lr["spec"]["limits"][0]["defaultRequest"],
            json!({"cpu": "1", "memory": "64Mi"})
        );
        assert_eq!(lr["spec"]["limits"][1].get("default"), None);
    }

    #[test]
    fn limit_range_bounds_are_ordered() {
        let lr = json!({"spec": {"limits": [{"type": "Container",
            "min": {"cpu": "500m"}, "max": {"cpu": "200m"}, "default": {"cpu": "300m"}, "defaultRequest": {"cpu": "300m"}}]}});
        assert_eq!(
            messages(&validate_limit_range(&lr)),
            [
                "spec.limits[0].min[cpu]: Invalid value: \"500m\": min value 500m is greater than max value 200m",
                "spec.limits[0].defaultRequest[cpu]: Invalid value: \"300m\": min value 500m is greater than default request value 300m",
                "spec.limits[0].defaultRequest[cpu]: Invalid value: \"300m\": default request value 300m is greater than max value 200m",
                "spec.limits[0].default[cpu]: Invalid value: \"500m\": min value 500m is greater than default value 300m",
                "spec.limits[0].default[cpu]: Invalid value: \"200m\": default value 300m is greater than max value 200m",
            ]
        );
        let pod = json!({"spec": {"limits": [{"type": "Pod", "default": {"cpu": "1"}}, {"type": "Pod"}]}});
        assert_eq!(
            messages(&validate_limit_range(&pod)),
            [
                "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
                "spec.limits[1].type: Duplicate value: \"Pod\"",
            ]
        );
    }
}
