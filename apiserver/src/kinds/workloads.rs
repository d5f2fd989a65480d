//! apps/v1 workloads: Deployment, ReplicaSet, StatefulSet, DaemonSet.
//!
//! Upstream: `pkg/apis/apps/v1/defaults.go`, `pkg/apis/apps/v1/conversion.go`
//! (the DaemonSet `deprecated.daemonset.template.generation` annotation),
//! `pkg/apis/apps/validation/validation.go`, and the strategies in
//! `pkg/registry/apps/{deployment,replicaset,statefulset,daemonset}/strategy.go`
//! (generation, templateGeneration, selector immutability for apps/v1).
//!
//! Simplified: the `%#v` rendering of a whole strategy struct (unsupported
//! strategy type) prints pointers as `(nil)` or `{...}` instead of an
//! address; StatefulSet `maxUnavailable` follows the 1.33 default gate (off)
//! and is not defaulted.

use serde_json::{Value, json};

use super::meta;
use super::pod::{default_template, validate_pod_template};
use super::{child, default_key, items_mut, sem_eq, set};
use crate::error::{FieldError, FieldErrorType};
use crate::gofmt::{go_int_or_string, go_label_selector, go_quoted_list, go_string_map};
use crate::jsonpath::{at, str_at};
use crate::labels::Selector;
use crate::labels::validation::{validate_label_selector, validate_labels};
use crate::validation::{self, invalid_raw, nonnegative};

/// The annotation carrying a DaemonSet's template generation in apps/v1.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

fn default_spec_template(obj: &mut Value) -> Option<&mut Value> {
    let spec = child(obj, "spec")?;
    if let Some(t) = child(spec, "template") {
        default_template(t);
    }
    Some(spec)
}

/// replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10,
/// progressDeadlineSeconds 600.
pub fn default_deployment(obj: &mut Value) {
    let Some(spec) = default_spec_template(obj) else {
        return;
    };
    default_key(spec, "replicas", json!(1));
    if let Some(strategy) = child(spec, "strategy") {
        default_key(strategy, "type", json!("RollingUpdate"));
        if str_at(strategy, &["type"]) == "RollingUpdate"
            && let Some(ru) = child(strategy, "rollingUpdate")
        {
            default_key(ru, "maxUnavailable", json!("25%"));
            default_key(ru, "maxSurge", json!("25%"));
        }
    }
    default_key(spec, "revisionHistoryLimit", json!(10));
    default_key(spec, "progressDeadlineSeconds", json!(600));
}

/// replicas 1.
pub fn default_replicaset(obj: &mut Value) {
    if let Some(spec) = default_spec_template(obj) {
        default_key(spec, "replicas", json!(1));
    }
}

/// podManagementPolicy, updateStrategy (partition only when rollingUpdate is
/// present), PVC retention policy, replicas, revisionHistoryLimit, and PVC
/// defaults of the claim templates.
pub fn default_statefulset(obj: &mut Value) {
    let Some(spec) = default_spec_template(obj) else {
        return;
    };
    default_key(spec, "podManagementPolicy", json!("OrderedReady"));
    if let Some(us) = child(spec, "updateStrategy") {
        if str_at(us, &["type"]).is_empty() {
            set(us, "type", json!("RollingUpdate"));
            default_key(us, "rollingUpdate", json!({}));
        }
        if str_at(us, &["type"]) == "RollingUpdate"
            && let Some(ru) = us.get_mut("rollingUpdate").filter(|r| r.is_object())
        {
            default_key(ru, "partition", json!(0));
        }
    }
    if let Some(p) = child(spec, "persistentVolumeClaimRetentionPolicy") {
        default_key(p, "whenDeleted", json!("Retain"));
        default_key(p, "whenScaled", json!("Retain"));
    }
    default_key(spec, "replicas", json!(1));
    default_key(spec, "revisionHistoryLimit", json!(10));
    for pvc in items_mut(spec, "volumeClaimTemplates") {
        default_claim_template(pvc);
    }
}

fn default_claim_template(pvc: &mut Value) {
    default_key(pvc, "apiVersion", json!("v1"));
    default_key(pvc, "kind", json!("PersistentVolumeClaim"));
    if let Some(m) = child(pvc, "metadata") {
        default_key(m, "creationTimestamp", Value::Null);
    }
    if let Some(s) = child(pvc, "spec") {
        default_key(s, "volumeMode", json!("Filesystem"));
    }
    if let Some(s) = child(pvc, "status") {
        default_key(s, "phase", json!("Pending"));
    }
}

/// updateStrategy RollingUpdate with maxUnavailable 1 and maxSurge 0,
/// revisionHistoryLimit 10.
pub fn default_daemonset(obj: &mut Value) {
    let Some(spec) = default_spec_template(obj) else {
        return;
    };
    if let Some(us) = child(spec, "updateStrategy") {
        default_key(us, "type", json!("RollingUpdate"));
        if str_at(us, &["type"]) == "RollingUpdate"
            && let Some(ru) = child(us, "rollingUpdate")
        {
            default_key(ru, "maxUnavailable", json!(1));
            default_key(ru, "maxSurge", json!(0));
        }
    }
    default_key(spec, "revisionHistoryLimit", json!(10));
}

fn template_generation(obj: &Value) -> i64 {
    str_at(obj, &["metadata", "annotations", TEMPLATE_GENERATION_ANNOTATION])
        .parse()
        .unwrap_or(0)
}

fn set_template_generation(obj: &mut Value, g: i64) {
    if let Some(meta) = child(obj, "metadata")
        && let Some(a) = child(meta, "annotations")
    {
        set(a, TEMPLATE_GENERATION_ANNOTATION, json!(g.to_string()));
    }
}

/// templateGeneration starts at 1.
pub fn prepare_daemonset_create(obj: &mut Value) {
    let g = template_generation(obj).max(1);
    set_template_generation(obj, g);
}

/// templateGeneration := old, +1 on a template change; returns whether the
/// generation must be bumped (any spec change).
pub fn prepare_daemonset_update(new: &mut Value, old: &Value) -> bool {
    let mut g = template_generation(old).max(1);
    let template_changed = !sem_eq(at(new, &["spec", "template"]), at(old, &["spec", "template"]));
    if template_changed {
        g += 1;
    }
    set_template_generation(new, g);
    template_changed || !sem_eq(new.get("spec"), old.get("spec"))
}

// ---------------------------------------------------------------------------
// Validation

/// `Unsupported value` whose value is a Go struct rendering.
fn not_supported_raw(field: &str, raw: String, supported: &[&str]) -> FieldError {
    FieldError {
        kind: FieldErrorType::NotSupported,
        field: field.to_string(),
        value: None,
        detail: format!("{raw}: supported values: {}", go_quoted_list(supported)),
    }
}

/// How `spec.selector` and the template relate, per kind.
struct SelectorRules {
    /// `empty selector is invalid for <what>`.
    what: &'static str,
    /// Whether a missing selector is `Required value` (not for DaemonSet).
    required: bool,
}

/// Selector checks plus the template-labels match; returns the errors and
/// whether the selector parsed (upstream skips the template otherwise).
fn validate_selector(spec: &Value, rules: &SelectorRules) -> (Vec<FieldError>, bool) {
    let sel = spec.get("selector").filter(|s| s.is_object());
    let mut errs = Vec::new();
    let Some(sel) = sel else {
        if rules.required {
            errs.push(FieldError::required("spec.selector", ""));
        }
        errs.push(labels_mismatch(spec));
        return (errs, true);
    };
    errs.extend(validate_label_selector(Some(sel), "spec.selector"));
    // `LabelSelectorAsSelector`: an empty selector is rejected, a valid one
    // must match the template's labels.
    let selector = Selector::from_json(sel);
    let template_labels = at(spec, &["template", "metadata", "labels"]);
    match &selector {
        Ok(s) if s.is_empty() => errs.push(invalid_raw(
            "spec.selector",
            go_label_selector(Some(sel)),
            &format!("empty selector is invalid for {}", rules.what),
        )),
        Ok(s) if !s.matches(&template_labels) => errs.push(labels_mismatch(spec)),
        _ => {}
    }
    let parsed = selector.is_ok();
    if !parsed {
        errs.push(invalid_raw(
            "spec.selector",
            go_label_selector(Some(sel)),
            "invalid label selector",
        ));
    }
    (errs, parsed)
}

fn labels_mismatch(spec: &Value) -> FieldError {
    invalid_raw(
        "spec.template.metadata.labels",
        go_string_map(at(spec, &["template", "metadata", "labels"])),
        "`selector` does not match template `labels`",
    )
}

/// Pod template rules for controllers whose pods always restart.
fn validate_always_template(spec: &Value, owner: &str, full: bool) -> Vec<FieldError> {
    let template = spec.get("template");
    let mut errs = if full {
        validate_pod_template(template, "spec.template")
    } else {
        let t = template.cloned().unwrap_or(json!({}));
        let mut e = validate_labels(at(&t, &["metadata", "labels"]), "spec.template.labels");
        e.extend(meta::validate_annotations(
            at(&t, &["metadata", "annotations"]),
            "spec.template.annotations",
        ));
        e
    };
    let restart = str_at(spec, &["template", "spec", "restartPolicy"]);
    if restart != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            json!(restart),
            &["Always"],
        ));
    }
    if at(spec, &["template", "spec", "activeDeadlineSeconds"]).is_some_and(|v| !v.is_null()) {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            format!("activeDeadlineSeconds in {owner} is not Supported"),
        ));
    }
    errs
}

fn spec_of(obj: &Value) -> Value {
    obj.get("spec").cloned().unwrap_or(json!({}))
}

/// `ValidateDeploymentSpec`.
pub fn validate_deployment(obj: &Value) -> Vec<FieldError> {
    let spec = spec_of(obj);
    let mut errs = nonnegative(spec.get("replicas"), "spec.replicas");
    let (sel_errs, parsed) = validate_selector(
        &spec,
        &SelectorRules {
            what: "deployment",
            required: true,
        },
    );
    errs.extend(sel_errs);
    if parsed {
        errs.extend(validate_always_template(&spec, "ReplicaSet", true));
    }
    errs.extend(validate_deployment_strategy(spec.get("strategy")));
    errs.extend(nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"));
    errs.extend(nonnegative(
        spec.get("revisionHistoryLimit"),
        "spec.revisionHistoryLimit",
    ));
    if let Some(pds) = spec.get("progressDeadlineSeconds").and_then(Value::as_i64) {
        errs.extend(nonnegative(
            spec.get("progressDeadlineSeconds"),
            "spec.progressDeadlineSeconds",
        ));
        let min_ready = spec.get("minReadySeconds").and_then(Value::as_i64).unwrap_or(0);
        if pds <= min_ready {
            errs.push(FieldError::invalid(
                "spec.progressDeadlineSeconds",
                json!(pds),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

fn go_rolling_update(ru: Option<&Value>, type_name: &str) -> String {
    match ru {
        Some(v) if v.is_object() => format!("(*{type_name})({{...}})"),
        _ => format!("(*{type_name})(nil)"),
    }
}

fn validate_deployment_strategy(strategy: Option<&Value>) -> Vec<FieldError> {
    let empty = json!({});
    let strategy = strategy.unwrap_or(&empty);
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match str_at(strategy, &["type"]) {
        "Recreate" if ru.is_some() => vec![FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )],
        "Recreate" => Vec::new(),
        "RollingUpdate" => match ru {
            None => vec![FieldError::required(
                "spec.strategy.rollingUpdate",
                "this should be defaulted and never be nil",
            )],
            Some(ru) => validate_rolling_update_deployment(ru),
        },
        other => vec![not_supported_raw(
            "spec.strategy",
            format!(
                "apps.DeploymentStrategy{{Type:{other:?}, RollingUpdate:{}}}",
                go_rolling_update(ru, "apps.RollingUpdateDeployment")
            ),
            &["Recreate", "RollingUpdate"],
        )],
    }
}

/// The number an IntOrString stands for: a valid percent's number, else
/// the integer (a non-numeric string counts as 0, like `IntValue`).
fn int_or_percent_value(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::String(s)) => s.trim_end_matches('%').parse().unwrap_or(0),
        Some(other) => other.as_i64().unwrap_or(0),
        None => 0,
    }
}

fn is_valid_percent(s: &str) -> bool {
    s.strip_suffix('%')
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// `ValidatePositiveIntOrPercent` plus the 100% cap when `cap` is set.
pub(crate) fn validate_int_or_percent(v: Option<&Value>, path: &str, cap: bool) -> Vec<FieldError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Vec::new();
    };
    match v {
        Value::String(s) if !is_valid_percent(s) => vec![invalid_raw(
            path,
            go_int_or_string(v),
            &validation::regex_error(
                "a valid percent string must be a numeric string followed by an ending '%'",
                "[0-9]+%",
                &["1%", "93%"],
            ),
        )],
        Value::String(_) if cap && int_or_percent_value(Some(v)) > 100 => {
            vec![invalid_raw(
                path,
                go_int_or_string(v),
                "must not be greater than 100%",
            )]
        }
        Value::String(_) => Vec::new(),
        other => nonnegative(Some(other), path),
    }
}

fn validate_rolling_update_deployment(ru: &Value) -> Vec<FieldError> {
    let path = "spec.strategy.rollingUpdate";
    let mu = ru.get("maxUnavailable");
    let ms = ru.get("maxSurge");
    let mut errs = validate_int_or_percent(mu, &format!("{path}.maxUnavailable"), false);
    errs.extend(validate_int_or_percent(ms, &format!("{path}.maxSurge"), false));
    if int_or_percent_value(mu) == 0 && int_or_percent_value(ms) == 0 {
        errs.push(invalid_raw(
            format!("{path}.maxUnavailable"),
            go_int_or_string(mu.unwrap_or(&json!(0))),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    if let Some(Value::String(_)) = mu
        && is_valid_percent(str_at(ru, &["maxUnavailable"]))
        && int_or_percent_value(mu) > 100
    {
        errs.push(invalid_raw(
            format!("{path}.maxUnavailable"),
            go_int_or_string(mu.unwrap_or(&Value::Null)),
            "must not be greater than 100%",
        ));
    }
    errs
}

/// `ValidateReplicaSetSpec` (its empty-selector message says
/// "deployment", as upstream's does).
pub fn validate_replicaset(obj: &Value) -> Vec<FieldError> {
    let spec = spec_of(obj);
    let mut errs = nonnegative(spec.get("replicas"), "spec.replicas");
    errs.extend(nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"));
    let (sel_errs, parsed) = validate_selector(
        &spec,
        &SelectorRules {
            what: "deployment",
            required: true,
        },
    );
    errs.extend(sel_errs);
    if parsed {
        errs.extend(validate_always_template(&spec, "ReplicaSet", true));
    }
    errs
}

/// `ValidateDaemonSetSpec`.
pub fn validate_daemonset(obj: &Value) -> Vec<FieldError> {
    let spec = spec_of(obj);
    let (mut errs, _) = validate_selector(
        &spec,
        &SelectorRules {
            what: "daemonset",
            required: false,
        },
    );
    errs.extend(validate_always_template(&spec, "DaemonSet", true));
    errs.extend(nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"));
    errs.extend(validate_daemonset_strategy(spec.get("updateStrategy")));
    errs.extend(nonnegative(
        spec.get("revisionHistoryLimit"),
        "spec.revisionHistoryLimit",
    ));
    errs
}

fn validate_daemonset_strategy(strategy: Option<&Value>) -> Vec<FieldError> {
    let empty = json!({});
    let strategy = strategy.unwrap_or(&empty);
    let path = "spec.updateStrategy";
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match (str_at(strategy, &["type"]), ru) {
        ("OnDelete", _) => Vec::new(),
        ("RollingUpdate", None) => vec![FieldError::required(format!("{path}.rollingUpdate"), "")],
        ("RollingUpdate", Some(ru)) => {
            validate_rolling_update_daemonset(ru, &format!("{path}.rollingUpdate"))
        }
        (other, ru) => vec![not_supported_raw(
            path,
            format!(
                "apps.DaemonSetUpdateStrategy{{Type:{other:?}, RollingUpdate:{}}}",
                go_rolling_update(ru, "apps.RollingUpdateDaemonSet")
            ),
            &["RollingUpdate", "OnDelete"],
        )],
    }
}

fn validate_rolling_update_daemonset(ru: &Value, path: &str) -> Vec<FieldError> {
    let mu = ru.get("maxUnavailable");
    let ms = ru.get("maxSurge");
    let mut errs = validate_int_or_percent(mu, &format!("{path}.maxUnavailable"), true);
    errs.extend(validate_int_or_percent(ms, &format!("{path}.maxSurge"), true));
    let has_unavailable = int_or_percent_value(mu) != 0;
    let has_surge = int_or_percent_value(ms) != 0;
    if has_unavailable && has_surge {
        errs.push(invalid_raw(
            format!("{path}.maxSurge"),
            go_int_or_string(ms.unwrap_or(&json!(0))),
            "may not be set when maxUnavailable is non-zero",
        ));
    } else if !has_unavailable && !has_surge {
        errs.push(FieldError::required(
            format!("{path}.maxUnavailable"),
            "cannot be 0 when maxSurge is 0",
        ));
    }
    errs
}

/// `ValidateStatefulSetSpec`. Upstream does not validate the pod template's
/// spec for StatefulSets (only its labels and annotations).
pub fn validate_statefulset(obj: &Value) -> Vec<FieldError> {
    let spec = spec_of(obj);
    let mut errs = Vec::new();
    match str_at(&spec, &["podManagementPolicy"]) {
        "" => errs.push(FieldError::required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            json!(other),
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errs.extend(validate_statefulset_strategy(spec.get("updateStrategy")));
    if let Some(p) = spec
        .get("persistentVolumeClaimRetentionPolicy")
        .filter(|p| p.is_object())
    {
        for key in ["whenDeleted", "whenScaled"] {
            let v = str_at(p, &[key]);
            if !matches!(v, "Retain" | "Delete") {
                errs.push(FieldError::not_supported(
                    format!("spec.persistentVolumeClaimRetentionPolicy.{key}"),
                    json!(v),
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    errs.extend(nonnegative(spec.get("replicas"), "spec.replicas"));
    errs.extend(nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds"));
    errs.extend(nonnegative(
        at(&spec, &["ordinals", "start"]),
        "spec.ordinals.start",
    ));
    let (sel_errs, parsed) = validate_selector(
        &spec,
        &SelectorRules {
            what: "statefulset",
            required: true,
        },
    );
    errs.extend(sel_errs);
    if parsed {
        errs.extend(validate_always_template(&spec, "StatefulSet", false));
    }
    errs
}

fn validate_statefulset_strategy(strategy: Option<&Value>) -> Vec<FieldError> {
    let empty = json!({});
    let strategy = strategy.unwrap_or(&empty);
    let path = "spec.updateStrategy";
    let ru = strategy.get("rollingUpdate").filter(|v| !v.is_null());
    match str_at(strategy, &["type"]) {
        "" => vec![FieldError::required(path, "")],
        "OnDelete" if ru.is_some() => vec![invalid_raw(
            format!("{path}.rollingUpdate"),
            "apps.RollingUpdateStatefulSetStrategy{...}".to_string(),
            "only allowed for updateStrategy 'RollingUpdate'",
        )],
        "OnDelete" => Vec::new(),
        "RollingUpdate" => {
            let Some(ru) = ru else {
                return Vec::new();
            };
            let mut errs = nonnegative(ru.get("partition"), &format!("{path}.rollingUpdate.partition"));
            let mu = ru.get("maxUnavailable").filter(|v| !v.is_null());
            if let Some(mu) = mu {
                let mpath = format!("{path}.rollingUpdate.maxUnavailable");
                errs.extend(validate_int_or_percent(Some(mu), &mpath, true));
                if int_or_percent_value(Some(mu)) == 0 {
                    errs.push(invalid_raw(&mpath, go_int_or_string(mu), "cannot be 0"));
                }
            }
            errs
        }
        other => vec![invalid_raw(
            path,
            format!(
                "apps.StatefulSetUpdateStrategy{{Type:{other:?}, RollingUpdate:{}}}",
                go_rolling_update(ru, "apps.RollingUpdateStatefulSetStrategy")
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )],
    }
}

/// apps/v1: `spec.selector` may not change (Deployment, ReplicaSet,
/// DaemonSet strategies).
pub fn validate_selector_immutable(new: &Value, old: &Value) -> Vec<FieldError> {
    let (n, o) = (at(new, &["spec", "selector"]), at(old, &["spec", "selector"]));
    if sem_eq(n, o) {
        return Vec::new();
    }
    vec![invalid_raw(
        "spec.selector",
        go_label_selector(n),
        "field is immutable",
    )]
}

const STATEFULSET_MUTABLE: [&str; 6] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// Only replicas, ordinals, template, updateStrategy, the PVC retention
/// policy and minReadySeconds may change.
pub fn validate_statefulset_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut n = spec_of(new);
    let o = spec_of(old);
    for key in STATEFULSET_MUTABLE {
        super::copy_key(&mut n, &o, key);
    }
    if sem_eq(Some(&n), Some(&o)) {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    )]
}
