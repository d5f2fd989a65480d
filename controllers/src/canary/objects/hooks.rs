//! Hooks as Jobs: one Job per (Canary, hook, revision), named so that the
//! controller finds the Job of a hook again (and a new revision runs it anew),
//! and the hook's state read from the Job's conditions.
//!
//! Flagger calls webhooks over HTTP (`pkg/controller/webhook.go`); here a
//! hook is a Job from `jobTemplate`, as the issue asks.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{canary_labels, canary_name, owner_ref};
use crate::canary::types::{Canary, CanaryHook};
use crate::deployment::util::safe_encode_string;

/// The hook's name, on its Job.
pub const HOOK_LABEL: &str = "rollouts.miniplane.dev/hook";
/// The revision (template hash) the Job ran for.
pub const REVISION_LABEL: &str = "rollouts.miniplane.dev/revision";

/// The longest Job name: the Job controller copies it into a label value.
const MAX_NAME: usize = 63;

/// Where a hook's Job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookState {
    /// No Job (yet).
    Missing,
    /// The Job runs.
    Running,
    /// The Job's `Complete` condition is true.
    Succeeded,
    /// The Job's `Failed` condition is true.
    Failed,
}

/// The Job name of `hook` for `revision`: `<canary>-<hook>-<first 10 of
/// revision>`, lowercased to a DNS label; a longer one keeps 54 characters
/// and appends a hash of the whole, so that it stays unique and the same
/// for the same inputs.
pub fn hook_job_name(canary: &Canary, hook: &CanaryHook, revision: &str) -> String {
    let revision: String = revision.chars().take(10).collect();
    let full = dns_label(&format!("{}-{}-{}", canary_name(canary), hook.name, revision));
    if full.len() <= MAX_NAME {
        return full;
    }
    let hash = safe_encode_string(&fnv32a(full.as_bytes()).to_string());
    let hash: String = hash.chars().take(8).collect();
    let keep = MAX_NAME - hash.len() - 1;
    let prefix = full[..keep].trim_end_matches('-');
    format!("{prefix}-{hash}")
}

/// Lowercase ASCII letters, digits and `-`, other characters as `-`, no
/// `-` at either end.
fn dns_label(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = mapped.trim_matches('-');
    if trimmed.is_empty() {
        "hook".to_string()
    } else {
        trimmed.to_string()
    }
}

/// FNV-1a, 32-bit.
fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// A label value: at most 63 characters of the DNS-label form of `s`.
fn label_value(s: &str) -> String {
    let v = dns_label(s);
    v.chars()
        .take(63)
        .collect::<String>()
        .trim_end_matches('-')
        .to_string()
}

/// The Job of `hook` for `revision` (`None` without a `jobTemplate`):
/// [`hook_job_name`], the template's labels, annotations and spec, labelled
/// with the Canary, the hook and the revision, `backoffLimit` 0 unless the
/// template sets it, `restartPolicy` `Never` unless set, owned by `canary`.
pub fn hook_job(canary: &Canary, hook: &CanaryHook, revision: &str) -> Option<Job> {
    let template = hook.job_template.as_ref()?;
    let template_meta = template.metadata.clone().unwrap_or_default();
    let mut spec: JobSpec = template.spec.clone().unwrap_or_default();
    spec.backoff_limit = Some(spec.backoff_limit.unwrap_or(0));
    let pod = spec.template.spec.get_or_insert_with(Default::default);
    if !matches!(pod.restart_policy.as_deref(), Some("Never" | "OnFailure")) {
        pod.restart_policy = Some("Never".to_string());
    }
    let mut labels: BTreeMap<String, String> = template_meta.labels.unwrap_or_default();
    labels.extend(canary_labels(canary));
    labels.insert(HOOK_LABEL.to_string(), label_value(&hook.name));
    labels.insert(REVISION_LABEL.to_string(), label_value(revision));
    Some(Job {
        metadata: ObjectMeta {
            name: Some(hook_job_name(canary, hook, revision)),
            namespace: canary.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: template_meta.annotations,
            owner_references: Some(vec![owner_ref(canary)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    })
}

/// The state of a hook from its Job (`None`: no Job).
pub fn hook_state(job: Option<&Job>) -> HookState {
    let Some(job) = job else {
        return HookState::Missing;
    };
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let holds = |t: &str| conditions.iter().any(|c| c.type_ == t && c.status == "True");
    if holds("Complete") {
        HookState::Succeeded
    } else if holds("Failed") {
        HookState::Failed
    } else {
        HookState::Running
    }
}
