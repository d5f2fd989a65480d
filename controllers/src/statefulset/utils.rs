//! Pure helpers of the StatefulSet controller: pod identity (names, ordinals, labels, hostname),
//! storage (claims from `volumeClaimTemplates`), revisions (the `data` patch and applying it back),
//! pod predicates and the `maxUnavailable` fencepost.
//!
//! Upstream: `pkg/controller/statefulset/stateful_set_utils.go` (the functions keep their names in
//! snake case: `getParentNameAndOrdinal`, `identityMatches`, `storageMatches`, `updateIdentity`,
//! `updateStorage`, `newStatefulSetPod`, `newVersionedStatefulSetPod`, `getPatch`, `newRevision`,
//! `ApplyRevision`, `isRunningAndReady`, `getStatefulSetMaxUnavailable`, ...).
//!
//! Simplified against upstream: `apply_revision` replaces `spec.template` with the template in the
//! revision's data instead of running a general strategic merge patch (the data this controller
//! writes, and that `kubectl rollout undo` sends, holds only `spec.template` with
//! `$patch: replace`, for which both are the same).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::controller_utils::pods::{is_pod_available, is_pod_ready, pod_phase};
use crate::controller_utils::template::{PodTemplateError, pod_from_template};
use crate::deployment::util::get_scaled_value_from_int_or_percent;
use crate::history;
use crate::runtime::{name_of, new_controller_ref};

/// The label naming a pod of a StatefulSet (upstream `StatefulSetPodNameLabel`).
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label holding a pod's ordinal (upstream `PodIndexLabel`).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label naming the ControllerRevision a pod was made from (upstream
/// `ControllerRevisionHashLabelKey`).
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// `spec.podManagementPolicy` that creates and deletes without waiting.
pub const PARALLEL: &str = "Parallel";
/// `spec.updateStrategy.type` that replaces pods itself.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `spec.updateStrategy.type` that replaces pods only when the user deletes them.
pub const ON_DELETE: &str = "OnDelete";
/// A retention policy value: keep the claims.
pub const RETAIN: &str = "Retain";
/// A retention policy value: let the garbage collector delete the claims.
pub const DELETE: &str = "Delete";

/// The API version and kind of the owner references this controller writes.
pub const API_VERSION: &str = "apps/v1";
/// See [`API_VERSION`].
pub const KIND: &str = "StatefulSet";

/// The spec, or an empty one.
pub fn spec(set: &StatefulSet) -> StatefulSetSpec {
    set.spec.clone().unwrap_or_default()
}

/// `spec.replicas` (default 1), never negative.
pub fn replicas(set: &StatefulSet) -> i32 {
    set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1).max(0)
}

/// `spec.minReadySeconds` (default 0).
pub fn min_ready_seconds(set: &StatefulSet) -> i32 {
    set.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0)
}

/// The update strategy's type (default `RollingUpdate`).
pub fn update_strategy_type(set: &StatefulSet) -> &str {
    set.spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.type_.as_deref())
        .unwrap_or(ROLLING_UPDATE)
}

/// `rollingUpdate.partition` when the strategy has a `rollingUpdate` block (0 when unset).
pub fn partition(set: &StatefulSet) -> Option<i32> {
    set.spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .map(|r| r.partition.unwrap_or(0))
}

/// `rollingUpdate.maxUnavailable`, if set.
pub fn max_unavailable(set: &StatefulSet) -> Option<&IntOrString> {
    set.spec
        .as_ref()
        .and_then(|s| s.update_strategy.as_ref())
        .and_then(|u| u.rolling_update.as_ref())
        .and_then(|r| r.max_unavailable.as_ref())
}

/// Upstream `allowsBurst`: `podManagementPolicy: Parallel`.
pub fn allows_burst(set: &StatefulSet) -> bool {
    set.spec.as_ref().and_then(|s| s.pod_management_policy.as_deref()) == Some(PARALLEL)
}

/// Upstream `getStartOrdinal`: `spec.ordinals.start`, default 0.
pub fn get_start_ordinal(set: &StatefulSet) -> i32 {
    set.spec
        .as_ref()
        .and_then(|s| s.ordinals.as_ref())
        .and_then(|o| o.start)
        .unwrap_or(0)
        .max(0)
}

/// Upstream `getEndOrdinal`: the last ordinal in range (`start + replicas - 1`).
pub fn get_end_ordinal(set: &StatefulSet) -> i32 {
    get_start_ordinal(set).saturating_add(replicas(set)) - 1
}

/// Upstream `getParentNameAndOrdinal`: splits `<parent>-<digits>` (the regex `(.*)-([0-9]+)$`);
/// `None` when the name has no such suffix or the digits overflow an `i32`.
pub fn get_parent_name_and_ordinal(name: &str) -> Option<(&str, i32)> {
    let (parent, digits) = name.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, digits.parse().ok()?))
}

/// Upstream `getOrdinal`: the pod's ordinal, −1 when its name has none.
pub fn get_ordinal(pod: &Pod) -> i32 {
    get_parent_name_and_ordinal(name_of(&pod.metadata)).map_or(-1, |(_, o)| o)
}

/// Upstream `podInOrdinalRange`.
pub fn pod_in_ordinal_range(pod: &Pod, set: &StatefulSet) -> bool {
    let ordinal = get_ordinal(pod);
    ordinal >= get_start_ordinal(set) && ordinal <= get_end_ordinal(set)
}

/// Upstream `getPodName`: `<set>-<ordinal>`.
pub fn get_pod_name(set: &StatefulSet, ordinal: i32) -> String {
    format!("{}-{ordinal}", name_of(&set.metadata))
}

/// Upstream `isMemberOf`: the pod's name says it belongs to the set.
pub fn is_member_of(set: &StatefulSet, pod: &Pod) -> bool {
    get_parent_name_and_ordinal(name_of(&pod.metadata)).is_some_and(|(p, _)| p == name_of(&set.metadata))
}

/// Upstream `getPersistentVolumeClaimName`: `<claim template>-<set>-<ordinal>`.
pub fn get_persistent_volume_claim_name(
    set: &StatefulSet,
    claim: &PersistentVolumeClaim,
    ordinal: i32,
) -> String {
    format!(
        "{}-{}-{ordinal}",
        name_of(&claim.metadata),
        name_of(&set.metadata)
    )
}

fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref().and_then(|l| l.get(key)).map(String::as_str)
}

/// Upstream `identityMatches`: name, namespace and the pod-name label are the set's for the
/// pod's ordinal.
pub fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let name = name_of(&pod.metadata);
    let Some((parent, ordinal)) = get_parent_name_and_ordinal(name) else {
        return false;
    };
    parent == name_of(&set.metadata)
        && name == get_pod_name(set, ordinal)
        && pod.metadata.namespace == set.metadata.namespace
        && label(&pod.metadata, POD_NAME_LABEL) == Some(name)
}

/// Upstream `updateIdentity`: name, namespace and the pod-name and pod-index labels.
pub fn update_identity(set: &StatefulSet, pod: &mut Pod) {
    let ordinal = get_ordinal(pod);
    let name = get_pod_name(set, ordinal);
    pod.metadata.namespace = set.metadata.namespace.clone();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(POD_NAME_LABEL.to_owned(), name.clone());
    labels.insert(POD_INDEX_LABEL.to_owned(), ordinal.to_string());
    pod.metadata.name = Some(name);
}

/// Upstream `initIdentity`: [`update_identity`], then `hostname` = pod name and `subdomain` =
/// `spec.serviceName`.
pub fn init_identity(set: &StatefulSet, pod: &mut Pod) {
    update_identity(set, pod);
    let name = pod.metadata.name.clone();
    let service = set
        .spec
        .as_ref()
        .and_then(|s| s.service_name.clone())
        .filter(|s| !s.is_empty());
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.hostname = name;
    spec.subdomain = service;
}

/// The claim templates of the set.
pub fn claim_templates(set: &StatefulSet) -> &[PersistentVolumeClaim] {
    set.spec
        .as_ref()
        .and_then(|s| s.volume_claim_templates.as_deref())
        .unwrap_or(&[])
}

/// Upstream `getPersistentVolumeClaims`: the claims the pod of `ordinal` needs, by template name:
/// named [`get_persistent_volume_claim_name`], in the set's namespace, labelled with the template's
/// labels plus the set's `matchLabels`. Owner references are the retention policy's business
/// (see [`super::claims`]).
pub fn get_persistent_volume_claims(
    set: &StatefulSet,
    ordinal: i32,
) -> BTreeMap<String, PersistentVolumeClaim> {
    let match_labels = set
        .spec
        .as_ref()
        .and_then(|s| s.selector.match_labels.clone())
        .unwrap_or_default();
    claim_templates(set)
        .iter()
        .map(|template| {
            let mut labels = template.metadata.labels.clone().unwrap_or_default();
            labels.extend(match_labels.clone());
            let claim = PersistentVolumeClaim {
                metadata: ObjectMeta {
                    name: Some(get_persistent_volume_claim_name(set, template, ordinal)),
                    namespace: set.metadata.namespace.clone(),
                    labels: Some(labels),
                    annotations: template.metadata.annotations.clone(),
                    ..ObjectMeta::default()
                },
                spec: template.spec.clone(),
                status: None,
            };
            (name_of(&template.metadata).to_owned(), claim)
        })
        .collect()
}

/// The claim a pod volume points at, if it is a claim volume.
fn claim_name_of(volume: &Volume) -> Option<&str> {
    volume
        .persistent_volume_claim
        .as_ref()
        .map(|c| c.claim_name.as_str())
}

/// Upstream `storageMatches`: every claim template has a pod volume of its name pointing at the
/// pod's claim.
pub fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let ordinal = get_ordinal(pod);
    if ordinal < 0 {
        return false;
    }
    let volumes = pod
        .spec
        .as_ref()
        .and_then(|s| s.volumes.as_deref())
        .unwrap_or(&[]);
    claim_templates(set).iter().all(|template| {
        let want = get_persistent_volume_claim_name(set, template, ordinal);
        volumes
            .iter()
            .any(|v| v.name == name_of(&template.metadata) && claim_name_of(v) == Some(want.as_str()))
    })
}

/// Upstream `updateStorage`: a volume per claim template pointing at the pod's claim; pod volumes
/// of the same name are replaced, the others kept.
pub fn update_storage(set: &StatefulSet, pod: &mut Pod) {
    let ordinal = get_ordinal(pod);
    let claims = get_persistent_volume_claims(set, ordinal);
    if claims.is_empty() {
        return;
    }
    let spec = pod.spec.get_or_insert_with(Default::default);
    let mut volumes: Vec<Volume> = spec
        .volumes
        .take()
        .unwrap_or_default()
        .into_iter()
        .filter(|v| !claims.contains_key(&v.name))
        .collect();
    for (template_name, claim) in &claims {
        volumes.push(Volume {
            name: template_name.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: name_of(&claim.metadata).to_owned(),
                read_only: Some(false),
            }),
            ..Volume::default()
        });
    }
    spec.volumes = Some(volumes);
}

/// Upstream `newStatefulSetPod`: a pod from the template with the set as controller, its identity
/// for `ordinal`, and its storage.
pub fn new_stateful_set_pod(set: &StatefulSet, ordinal: i32) -> Result<Pod, PodTemplateError> {
    let template = set.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
    let mut pod = pod_from_template(
        &template,
        &set.metadata,
        new_controller_ref(&set.metadata, API_VERSION, KIND),
    )?;
    pod.metadata.generate_name = None;
    pod.metadata.name = Some(get_pod_name(set, ordinal));
    init_identity(set, &mut pod);
    update_storage(set, &mut pod);
    Ok(pod)
}

/// Upstream `getPodRevision`: the pod's `controller-revision-hash` label ("" if none).
pub fn get_pod_revision(pod: &Pod) -> &str {
    label(&pod.metadata, REVISION_LABEL).unwrap_or("")
}

/// Upstream `setPodRevision`.
pub fn set_pod_revision(pod: &mut Pod, revision: &str) {
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(REVISION_LABEL.to_owned(), revision.to_owned());
}

/// Upstream `newVersionedStatefulSetPod`: the pod for an empty slot. Below the partition (or,
/// with `RollingUpdate` but no `rollingUpdate` block, below `start + status.currentReplicas`) it
/// is made from the current revision, otherwise from the update revision.
pub fn new_versioned_stateful_set_pod(
    current_set: &StatefulSet,
    update_set: &StatefulSet,
    current_revision: &str,
    update_revision: &str,
    ordinal: i32,
) -> Result<Pod, PodTemplateError> {
    let start = get_start_ordinal(current_set);
    let use_current = update_strategy_type(current_set) == ROLLING_UPDATE
        && match partition(current_set) {
            None => {
                let current = current_set
                    .status
                    .as_ref()
                    .and_then(|s| s.current_replicas)
                    .unwrap_or(0);
                ordinal < start.saturating_add(current)
            }
            Some(p) => ordinal < start.saturating_add(p),
        };
    let (set, revision) = if use_current {
        (current_set, current_revision)
    } else {
        (update_set, update_revision)
    };
    let mut pod = new_stateful_set_pod(set, ordinal)?;
    set_pod_revision(&mut pod, revision);
    Ok(pod)
}

/// Upstream `getPatch`: the revision data, `{"spec":{"template":{...,"$patch":"replace"}}}`.
pub fn get_patch(set: &StatefulSet) -> serde_json::Value {
    let template = set.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
    let mut template = serde_json::to_value(&template).unwrap_or_else(|_| serde_json::json!({}));
    if let Some(map) = template.as_object_mut() {
        map.insert("$patch".to_owned(), serde_json::Value::from("replace"));
    }
    serde_json::json!({ "spec": { "template": template } })
}

/// Upstream `newRevision`: the revision of the set's current template, numbered `revision`,
/// named with `collision_count`, carrying the set's annotations (so `kubectl rollout history`
/// shows `kubernetes.io/change-cause`).
pub fn new_revision(set: &StatefulSet, revision: i64, collision_count: i32) -> ControllerRevision {
    let labels = set
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.labels.as_ref());
    let mut cr = history::new_controller_revision(
        &set.metadata,
        API_VERSION,
        KIND,
        labels,
        get_patch(set),
        revision,
        Some(collision_count),
    );
    cr.metadata.annotations = set.metadata.annotations.clone();
    cr
}

/// Upstream `ApplyRevision`: the set with the revision's template (see the module doc). Data that
/// holds no template is an error.
pub fn apply_revision(set: &StatefulSet, revision: &ControllerRevision) -> Result<StatefulSet, String> {
    let template = revision
        .data
        .as_ref()
        .and_then(|d| d.0.get("spec"))
        .and_then(|s| s.get("template"))
        .ok_or_else(|| format!("revision {} holds no spec.template", name_of(&revision.metadata)))?;
    let mut template = template.clone();
    if let Some(map) = template.as_object_mut() {
        map.remove("$patch");
    }
    let template: PodTemplateSpec = serde_json::from_value(template)
        .map_err(|e| format!("revision {}: {e}", name_of(&revision.metadata)))?;
    let mut out = set.clone();
    out.spec.get_or_insert_with(Default::default).template = template;
    Ok(out)
}

/// Upstream `isRunningAndReady`: phase Running and the Ready condition true.
pub fn is_running_and_ready(pod: &Pod) -> bool {
    pod_phase(pod) == "Running" && is_pod_ready(pod)
}

/// Upstream `isRunningAndAvailable`: running and available for `min_ready_seconds` at `now`.
pub fn is_running_and_available(pod: &Pod, min_ready_seconds: i32, now: jiff::Timestamp) -> bool {
    pod_phase(pod) == "Running" && is_pod_available(pod, min_ready_seconds, now)
}

/// Upstream `isTerminating`.
pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// Upstream `isHealthy`: running, ready, not terminating.
pub fn is_healthy(pod: &Pod) -> bool {
    is_running_and_ready(pod) && !is_terminating(pod)
}

/// Upstream `isFailed` / `isSucceeded`: a finished pod, to be replaced.
pub fn is_finished(pod: &Pod) -> bool {
    matches!(pod_phase(pod), "Failed" | "Succeeded")
}

/// Upstream `isPending`.
pub fn is_pending(pod: &Pod) -> bool {
    pod_phase(pod) == "Pending"
}

/// Upstream `getStatefulSetMaxUnavailable`: `maxUnavailable` of `replicas`, rounded down, at
/// least 1; unset means 1.
pub fn get_stateful_set_max_unavailable(
    max_unavailable: Option<&IntOrString>,
    replicas: i32,
) -> Result<i32, String> {
    let value = match max_unavailable {
        None => 1,
        Some(v) => get_scaled_value_from_int_or_percent(v, replicas, false).map_err(|e| e.to_string())?,
    };
    Ok(value.max(1))
}
