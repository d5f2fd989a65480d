//! The primary Deployment: a copy of the target whose pods carry the
//! selector label's value with `-primary` appended, so that the target's
//! and the primary's pods never select each other.
//!
//! Flagger: `pkg/canary/deployment_controller.go` (`createPrimaryDeployment`,
//! `getSelectorLabel`, `Promote`), `pkg/canary/util.go` (`makePrimaryLabels`),
//! `pkg/canary/ready.go` (`isDeploymentReady`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::{canary_labels, names, owner_ref};
use crate::canary::types::Canary;
use crate::deployment::util::compute_hash;

/// The primary's annotation recording the hash ([`template_hash`]) of the
/// target template it was built from.
pub const TEMPLATE_HASH_ANNOTATION: &str = "rollouts.miniplane.dev/template-hash";

/// The selector labels Flagger looks for, in order (its `-selector-labels` default).
pub const SELECTOR_LABELS: [&str; 3] = ["app", "name", "app.kubernetes.io/name"];

/// The suffix of the primary's names and of its selector label's value.
pub const PRIMARY_SUFFIX: &str = "-primary";

/// Flagger's `getSelectorLabel`: the first of [`SELECTOR_LABELS`] in the
/// target's `selector.matchLabels`, with its value.
pub fn selector_label(target: &Deployment) -> Option<(String, String)> {
    let match_labels = target.spec.as_ref()?.selector.match_labels.as_ref()?;
    SELECTOR_LABELS
        .iter()
        .find_map(|l| match_labels.get(*l).map(|v| (l.to_string(), v.clone())))
}

/// Flagger's error when the target has no selector label (the controller's
/// event message); `None` when it has one.
pub fn selector_error(target: &Deployment) -> Option<String> {
    if selector_label(target).is_some() {
        return None;
    }
    Some(format!(
        "deployment {}.{} spec.selector.matchLabels must contain one of [{}]",
        target.metadata.name.as_deref().unwrap_or(""),
        target.metadata.namespace.as_deref().unwrap_or(""),
        SELECTOR_LABELS.join(" ")
    ))
}

/// The revision of the target's pod template: the Deployment controller's
/// `pod-template-hash` ([`compute_hash`]). Replicas and everything else
/// outside the template leave it unchanged.
pub fn template_hash(target: &Deployment) -> String {
    let template = target
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    compute_hash(&template, None)
}

/// The selector label of the primary: the target's, with `-primary`
/// appended to its value. Without one of [`SELECTOR_LABELS`] (see
/// [`selector_error`]), `app: <target>-primary` is added instead, so the
/// primary's pods still differ from the target's.
fn primary_label(canary: &Canary, target: &Deployment) -> (String, String) {
    match selector_label(target) {
        Some((key, value)) => (key, format!("{value}{PRIMARY_SUFFIX}")),
        None => ("app".to_string(), names(canary).primary),
    }
}

/// Flagger's `makePrimaryLabels`: `labels` with `key` set to `value`.
fn with_label(labels: Option<&BTreeMap<String, String>>, key: &str, value: &str) -> BTreeMap<String, String> {
    let mut out = labels.cloned().unwrap_or_default();
    out.insert(key.to_string(), value.to_string());
    out
}

/// The selector of the primary's pods: the target's `matchLabels` with the
/// selector label rewritten (the apex and `-primary` Services select by it too).
pub fn primary_selector(canary: &Canary, target: &Deployment) -> BTreeMap<String, String> {
    let (key, value) = primary_label(canary, target);
    let match_labels = target
        .spec
        .as_ref()
        .and_then(|s| s.selector.match_labels.as_ref());
    with_label(match_labels, &key, &value)
}

/// The selector of the target's pods (its `matchLabels`).
pub fn target_selector(target: &Deployment) -> BTreeMap<String, String> {
    target
        .spec
        .as_ref()
        .and_then(|s| s.selector.match_labels.clone())
        .unwrap_or_default()
}

/// `<target>-primary`: the target's template, strategy, minReadySeconds,
/// revisionHistoryLimit and progressDeadlineSeconds, its selector label
/// rewritten in the selector and the template's labels, `replicas` (or the
/// target's) replicas, owned by `canary`, annotated with the template hash
/// it was built from. Used to create the primary and, at promotion, to copy
/// the target's template into it. When an HPA scales the primary, pass the
/// primary's current replicas so the write does not undo it.
pub fn primary_deployment(canary: &Canary, target: &Deployment, replicas: Option<i32>) -> Deployment {
    let (key, value) = primary_label(canary, target);
    let spec = target.spec.clone().unwrap_or_default();
    let mut template = spec.template.clone();
    let template_meta = template.metadata.get_or_insert_with(ObjectMeta::default);
    template_meta.labels = Some(with_label(template_meta.labels.as_ref(), &key, &value));
    let selector = LabelSelector {
        match_labels: Some(primary_selector(canary, target)),
        match_expressions: spec.selector.match_expressions.clone(),
    };
    let mut labels = with_label(target.metadata.labels.as_ref(), &key, &value);
    labels.extend(canary_labels(canary));
    let annotations = BTreeMap::from([(TEMPLATE_HASH_ANNOTATION.to_string(), template_hash(target))]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(names(canary).primary),
            namespace: canary.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references: Some(vec![owner_ref(canary)]),
            ..Default::default()
        },
        spec: Some(DeploymentSpec {
            replicas: replicas.or(spec.replicas),
            selector,
            template,
            strategy: spec.strategy,
            min_ready_seconds: spec.min_ready_seconds,
            revision_history_limit: spec.revision_history_limit,
            progress_deadline_seconds: spec.progress_deadline_seconds,
            paused: None,
        }),
        status: None,
    }
}

/// The hash of the target template the primary was built from (its
/// [`TEMPLATE_HASH_ANNOTATION`]).
pub fn primary_template_hash(primary: &Deployment) -> Option<&str> {
    primary
        .metadata
        .annotations
        .as_ref()?
        .get(TEMPLATE_HASH_ANNOTATION)
        .map(String::as_str)
}

/// Rolled out: the controller has seen the latest spec (`observedGeneration
/// ≥ generation`), and every pod it wants is updated and available
/// (`updatedReplicas == replicas == availableReplicas == spec.replicas`).
pub fn is_deployment_ready(d: &Deployment) -> bool {
    let Some(status) = &d.status else {
        return false;
    };
    let generation = d.metadata.generation.unwrap_or(0);
    let observed = status.observed_generation.unwrap_or(-1);
    let wanted = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let replicas = status.replicas.unwrap_or(0);
    observed >= generation
        && status.updated_replicas.unwrap_or(0) == replicas
        && status.available_replicas.unwrap_or(0) == replicas
        && replicas == wanted
}
