//! batch/v1: Job and CronJob.
//!
//! Upstream: `pkg/apis/batch/v1/defaults.go`,
//! `pkg/registry/batch/job/strategy.go` (`generateSelector`: the
//! `controller-uid` / `job-name` labels and the selector built from the
//! UID), `pkg/apis/batch/validation/validation.go`.
//!
//! Simplified: the labels that upstream's defaulting copies from the
//! template when a Job has none are copied once more after the selector is
//! generated, giving what a read-back shows (upstream re-defaults on every
//! read). Schedules and time zones are checked by [`cron`] (robfig/cron's
//! `ParseStandard` rules and texts, jiff's tz database), the module the CronJob
//! controller evaluates schedules with. An update is checked by the create
//! rules (upstream allows a `TZ=` schedule to stay on update if it was there
//! before; this server never accepts one, so there is none to keep).
//! Template immutability prints `core.PodTemplateSpec{...}` instead of the
//! whole struct; elastic Indexed jobs and the mutable scheduling directives
//! of suspended jobs are supported in their simple form.

pub mod cron;

use serde_json::{Value, json};

use super::pod::{default_template, validate_enum, validate_pod_template};
use super::{child, default_key, sem_eq, set, set_meta};
use crate::error::FieldError;
use crate::gofmt::{go_label_selector, go_string_map};
use crate::jsonpath::{at, str_at};
use crate::labels::Selector;
use crate::labels::validation::validate_label_selector;
use crate::validation::{invalid_raw, nonnegative};

const LEGACY_UID_LABEL: &str = "controller-uid";
const UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
const LEGACY_NAME_LABEL: &str = "job-name";
const NAME_LABEL: &str = "batch.kubernetes.io/job-name";

/// `SetDefaults_Job` plus pod template defaults.
pub fn default_job(obj: &mut Value) {
    if let Some(spec) = child(obj, "spec") {
        default_job_spec(spec);
    }
    copy_template_labels(obj);
}

fn default_job_spec(spec: &mut Value) {
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        set(spec, "completions", json!(1));
        set(spec, "parallelism", json!(1));
    }
    default_key(spec, "parallelism", json!(1));
    let per_index = spec.get("backoffLimitPerIndex").is_some_and(|v| !v.is_null());
    default_key(
        spec,
        "backoffLimit",
        json!(if per_index { i64::from(i32::MAX) } else { 6 }),
    );
    default_key(spec, "completionMode", json!("NonIndexed"));
    default_key(spec, "suspend", json!(false));
    let has_pfp = spec.get("podFailurePolicy").is_some_and(|v| v.is_object());
    default_key(
        spec,
        "podReplacementPolicy",
        json!(if has_pfp { "Failed" } else { "TerminatingOrFailed" }),
    );
    default_key(spec, "manualSelector", json!(false));
    if let Some(rules) = spec
        .get_mut("podFailurePolicy")
        .and_then(|p| p.get_mut("rules"))
        .and_then(Value::as_array_mut)
    {
        for rule in rules {
            for cond in super::items_mut(rule, "onPodConditions") {
                default_key(cond, "status", json!("True"));
            }
        }
    }
    if let Some(t) = child(spec, "template") {
        default_template(t);
    }
}

/// Job labels := template labels when the Job has none.
fn copy_template_labels(obj: &mut Value) {
    let job_has_labels = at(obj, &["metadata", "labels"])
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty());
    if job_has_labels {
        return;
    }
    if let Some(labels) = at(obj, &["spec", "template", "metadata", "labels"]).cloned()
        && labels.is_object()
    {
        set_meta(obj, "labels", labels);
    }
}

fn manual_selector(obj: &Value) -> bool {
    at(obj, &["spec", "manualSelector"]).and_then(Value::as_bool) == Some(true)
}

/// Unless `manualSelector` is true: the four generated template labels
/// and `selector.matchLabels[batch.kubernetes.io/controller-uid]`.
pub fn prepare_job_create(obj: &mut Value) {
    if manual_selector(obj) {
        return;
    }
    let uid = str_at(obj, &["metadata", "uid"]).to_string();
    let name = str_at(obj, &["metadata", "name"]).to_string();
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    if let Some(labels) = child(spec, "template")
        .and_then(|t| child(t, "metadata"))
        .and_then(|m| child(m, "labels"))
    {
        for (key, value) in [
            (LEGACY_NAME_LABEL, &name),
            (NAME_LABEL, &name),
            (LEGACY_UID_LABEL, &uid),
            (UID_LABEL, &uid),
        ] {
            default_key(labels, key, json!(value));
        }
    }
    if let Some(ml) = child(spec, "selector").and_then(|s| child(s, "matchLabels")) {
        default_key(ml, UID_LABEL, json!(uid));
    }
    copy_template_labels(obj);
}

/// A Job: generated-selector checks, then the spec.
pub fn validate_job(obj: &Value) -> Vec<FieldError> {
    let mut errs = validate_generated_selector(obj);
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    errs.extend(validate_job_spec(spec, "spec"));
    match spec.get("selector").filter(|s| s.is_object()) {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(sel) => {
            errs.extend(validate_label_selector(Some(sel), "spec.selector"));
            let labels = at(spec, &["template", "metadata", "labels"]);
            if Selector::from_json(sel).is_ok_and(|s| !s.matches(&labels)) {
                errs.push(invalid_raw(
                    "spec.template.metadata.labels",
                    go_string_map(labels),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
    errs
}

fn validate_generated_selector(obj: &Value) -> Vec<FieldError> {
    if manual_selector(obj) {
        return Vec::new();
    }
    let path = "spec.template.metadata.labels";
    let Some(labels) = at(obj, &["spec", "template", "metadata", "labels"]) else {
        return vec![FieldError::required(path, "")];
    };
    let uid = str_at(obj, &["metadata", "uid"]);
    let mut errs = Vec::new();
    for key in [LEGACY_UID_LABEL, UID_LABEL] {
        let v = str_at(labels, &[key]);
        if v != uid {
            errs.push(FieldError::invalid(
                format!("{path}[{key}]"),
                json!(v),
                format!("must be '{uid}'"),
            ));
        }
    }
    errs
}

/// `validateJobSpec` at `path` (`spec`, or `spec.jobTemplate.spec`).
fn validate_job_spec(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        errs.extend(nonnegative(spec.get(key), &format!("{path}.{key}")));
    }
    let mode = str_at(spec, &["completionMode"]);
    if !mode.is_empty() {
        if !matches!(mode, "NonIndexed" | "Indexed") {
            errs.push(FieldError::not_supported(
                format!("{path}.completionMode"),
                json!(mode),
                &["NonIndexed", "Indexed"],
            ));
        } else if mode == "Indexed" && spec.get("completions").is_none_or(Value::is_null) {
            errs.push(FieldError::required(
                format!("{path}.completions"),
                "when completion mode is Indexed",
            ));
        }
    }
    let tpath = format!("{path}.template");
    errs.extend(validate_pod_template(spec.get("template"), &tpath));
    let restart = str_at(spec, &["template", "spec", "restartPolicy"]);
    if !matches!(restart, "OnFailure" | "Never") {
        errs.push(FieldError::not_supported(
            format!("{tpath}.spec.restartPolicy"),
            json!(restart),
            &["OnFailure", "Never"],
        ));
    }
    errs
}

fn suspended_never_started(new: &Value, old: &Value) -> bool {
    let suspended = at(old, &["spec", "suspend"]).and_then(Value::as_bool) == Some(true)
        && at(new, &["spec", "suspend"]).and_then(Value::as_bool) == Some(true);
    suspended && at(old, &["status", "startTime"]).is_none_or(Value::is_null)
}

/// Job immutability: selector, completionMode, podFailurePolicy,
/// backoffLimitPerIndex, completions (except elastic Indexed jobs) and the
/// template (except scheduling directives while suspended and not started).
pub fn validate_job_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let ns = new.get("spec").unwrap_or(&empty);
    let os = old.get("spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    let elastic = str_at(ns, &["completionMode"]) == "Indexed"
        && ns.get("completions") == ns.get("parallelism")
        && os.get("completions") == os.get("parallelism");
    if !elastic && !sem_eq(ns.get("completions"), os.get("completions")) {
        errs.push(FieldError::invalid(
            "spec.completions",
            ns.get("completions").cloned().unwrap_or(Value::Null),
            "field is immutable",
        ));
    }
    if !sem_eq(ns.get("selector"), os.get("selector")) {
        errs.push(invalid_raw(
            "spec.selector",
            go_label_selector(ns.get("selector")),
            "field is immutable",
        ));
    }
    if !template_update_allowed(new, old) {
        errs.push(invalid_raw(
            "spec.template",
            "core.PodTemplateSpec{...}".to_string(),
            "field is immutable",
        ));
    }
    for key in ["completionMode", "podFailurePolicy", "backoffLimitPerIndex"] {
        if !sem_eq(ns.get(key), os.get(key)) {
            errs.push(FieldError::invalid(
                format!("spec.{key}"),
                ns.get(key).cloned().unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
    }
    errs
}

fn template_update_allowed(new: &Value, old: &Value) -> bool {
    let (nt, ot) = (at(new, &["spec", "template"]), at(old, &["spec", "template"]));
    if sem_eq(nt, ot) {
        return true;
    }
    if !suspended_never_started(new, old) {
        return false;
    }
    let mut nt = nt.cloned().unwrap_or(json!({}));
    let ot = ot.cloned().unwrap_or(json!({}));
    for path in [["metadata", "labels"], ["metadata", "annotations"]] {
        let v = at(&ot, &path).cloned();
        if let Some(m) = child(&mut nt, path[0]) {
            match v {
                Some(v) => set(m, path[1], v),
                None => super::remove(m, path[1]),
            }
        }
    }
    let ospec = ot.get("spec").cloned().unwrap_or(json!({}));
    if let Some(s) = child(&mut nt, "spec") {
        for key in ["nodeSelector", "affinity", "tolerations", "schedulingGates"] {
            super::copy_key(s, &ospec, key);
        }
    }
    sem_eq(Some(&nt), Some(&ot))
}

// ---------------------------------------------------------------------------
// CronJob

/// `SetDefaults_CronJob` plus the pod template defaults of the job template.
pub fn default_cronjob(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_key(spec, "concurrencyPolicy", json!("Allow"));
    default_key(spec, "suspend", json!(false));
    default_key(spec, "successfulJobsHistoryLimit", json!(3));
    default_key(spec, "failedJobsHistoryLimit", json!(1));
    let Some(jt) = child(spec, "jobTemplate") else {
        return;
    };
    if let Some(m) = child(jt, "metadata") {
        default_key(m, "creationTimestamp", Value::Null);
    }
    if let Some(t) = child(jt, "spec").and_then(|s| child(s, "template")) {
        default_template(t);
    }
}

/// CronJob names leave room for the 11-character job suffix.
pub fn validate_cronjob_name(obj: &Value) -> Vec<FieldError> {
    let name = str_at(obj, &["metadata", "name"]);
    if name.len() > 52 {
        vec![FieldError::invalid(
            "metadata.name",
            json!(name),
            "must be no more than 52 characters",
        )]
    } else {
        Vec::new()
    }
}

/// `ValidateCronJobSpec` essentials.
pub fn validate_cronjob(obj: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    let schedule = str_at(spec, &["schedule"]);
    let time_zone = spec.get("timeZone").and_then(Value::as_str);
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else {
        for msg in cron::validate_schedule_format(schedule, false, time_zone.is_some()) {
            errs.push(FieldError::invalid("spec.schedule", json!(schedule), msg));
        }
    }
    if let Some(tz) = time_zone {
        for msg in cron::validate_time_zone(tz) {
            errs.push(FieldError::invalid("spec.timeZone", json!(tz), msg));
        }
    }
    errs.extend(validate_enum(
        spec.get("concurrencyPolicy"),
        "spec.concurrencyPolicy",
        &["Allow", "Forbid", "Replace"],
    ));
    for key in [
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    ] {
        errs.extend(nonnegative(spec.get(key), &format!("spec.{key}")));
    }
    let jt_spec = at(spec, &["jobTemplate", "spec"]).unwrap_or(&empty);
    errs.extend(validate_job_spec(jt_spec, "spec.jobTemplate.spec"));
    if let Some(sel) = jt_spec.get("selector").filter(|s| !s.is_null()) {
        errs.push(invalid_raw(
            "spec.jobTemplate.spec.selector",
            go_label_selector(Some(sel)),
            "`selector` will be auto-generated",
        ));
    }
    if jt_spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        errs.push(FieldError::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            json!(true),
            &["nil", "false"],
        ));
    }
    errs
}
