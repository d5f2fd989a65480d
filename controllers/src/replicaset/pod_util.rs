//! Pod helpers shared by the workload controllers.
//!
//! Ported from upstream `pkg/api/v1/pod/util.go` (readiness, availability),
//! `pkg/controller/controller_utils.go` (active pods, the two deletion orderings, slow start, pod
//! construction) and `pkg/controller/controller_ref_manager.go` (adoption and release). Names follow
//! upstream in snake_case.
//!
//! Simplifications against upstream:
//! * Feature gates are fixed at their current defaults: `PodDeletionCost` and `LogarithmicScaleDown` on.
//! * Go's zero `metav1.Time` is modelled as an absent (`None`) timestamp.
//! * The adoption/release functions only *decide*; the live re-check of the owner's deletionTimestamp
//!   (`RecheckDeletionTimestamp`) and the PATCH calls belong to the caller. The patch bodies are provided.
//! * Sorting uses a hand-written merge sort: upstream's comparators are not always transitive (the
//!   logarithmic buckets with the UID tie-break can form cycles), and Rust's `sort_by` may panic on such
//!   comparators while a merge sort only produces some order.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};

/// Annotation that lets users say which pods of a ReplicaSet are cheaper to delete (lower goes first).
pub const POD_DELETION_COST_ANNOTATION: &str = "controller.kubernetes.io/pod-deletion-cost";

/// The first slow-start batch creates this many pods (upstream `SlowStartInitialBatchSize`).
pub const SLOW_START_INITIAL_BATCH_SIZE: usize = 1;

// ---------------------------------------------------------------------------------------------------------
// Phase, readiness and availability
// ---------------------------------------------------------------------------------------------------------

/// The pod's phase, or `""` when the status has none yet.
pub fn pod_phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

/// The node the pod is bound to, or `""` when it is unscheduled.
pub fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
}

fn is_terminal_phase(phase: &str) -> bool {
    phase == "Succeeded" || phase == "Failed"
}

/// Upstream `IsPodActive`: not Succeeded, not Failed, and not being deleted.
pub fn is_pod_active(pod: &Pod) -> bool {
    !is_terminal_phase(pod_phase(pod)) && pod.metadata.deletion_timestamp.is_none()
}

/// Upstream `IsPodTerminating`: not in a terminal phase but already carrying a deletionTimestamp.
pub fn is_pod_terminating(pod: &Pod) -> bool {
    !is_terminal_phase(pod_phase(pod)) && pod.metadata.deletion_timestamp.is_some()
}

/// The first condition of type `Ready` (upstream `GetPodReadyCondition`).
pub fn pod_ready_condition(pod: &Pod) -> Option<&PodCondition> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    conditions.iter().find(|c| c.type_ == "Ready")
}

/// Upstream `IsPodReady`: the `Ready` condition exists and is `True`.
pub fn is_pod_ready(pod: &Pod) -> bool {
    pod_ready_condition(pod).is_some_and(|c| c.status == "True")
}

/// Upstream `IsPodAvailable`: ready, and ready for at least `min_ready_seconds` at `now`.
///
/// The boundary is inclusive, as in recent upstream: ready since exactly `min_ready_seconds` counts.
/// A ready pod with no lastTransitionTime is only available when `min_ready_seconds` is 0.
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    let Some(ready) = pod_ready_condition(pod).filter(|c| c.status == "True") else {
        return false;
    };
    if min_ready_seconds <= 0 {
        return true;
    }
    let Some(since) = &ready.last_transition_time else {
        return false;
    };
    let available_at = since.0.as_nanosecond() + i128::from(min_ready_seconds) * 1_000_000_000;
    available_at <= now.as_nanosecond()
}

/// Upstream `podReadyTime`: when a ready pod became Ready; `None` if not ready or the time is unset.
pub fn pod_ready_time(pod: &Pod) -> Option<Timestamp> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let ready = conditions
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")?;
    ready.last_transition_time.as_ref().map(|t| t.0)
}

/// Upstream `maxContainerRestarts`: the highest restart count among the regular containers (0 if none).
pub fn max_container_restarts(pod: &Pod) -> i32 {
    let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
    statuses
        .into_iter()
        .flatten()
        .map(|c| c.restart_count)
        .max()
        .unwrap_or(0)
        .max(0)
}

/// Upstream `GetDeletionCostFromPodAnnotations`; a missing or invalid value counts as 0.
///
/// Valid values are base-10 int32 without a `+` sign or leading zeros (`"0"` itself is fine).
pub fn pod_deletion_cost(pod: &Pod) -> i32 {
    let annotations = pod.metadata.annotations.as_ref();
    let Some(value) = annotations.and_then(|a| a.get(POD_DELETION_COST_ANNOTATION)) else {
        return 0;
    };
    if !valid_first_digit(value) {
        return 0;
    }
    value.parse::<i32>().unwrap_or(0)
}

fn valid_first_digit(value: &str) -> bool {
    match value.as_bytes().first() {
        Some(b'-') | Some(b'1'..=b'9') => true,
        Some(b'0') => value == "0",
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------------------
// Deletion orderings
// ---------------------------------------------------------------------------------------------------------

/// Pending < Unknown < Running; every other phase (including none) counts as Pending.
fn pod_phase_ordinal(pod: &Pod) -> u8 {
    match pod_phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}

fn creation_time(pod: &Pod) -> Option<Timestamp> {
    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or("")
}

/// Unassigned pods first (only when exactly one of the two is unassigned).
fn cmp_unassigned(a: &Pod, b: &Pod) -> Ordering {
    let (na, nb) = (node_name(a), node_name(b));
    if na == nb || (!na.is_empty() && !nb.is_empty()) {
        return Ordering::Equal;
    }
    if na.is_empty() {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

fn cmp_phase(a: &Pod, b: &Pod) -> Ordering {
    pod_phase_ordinal(a).cmp(&pod_phase_ordinal(b))
}

/// Not-ready pods first.
fn cmp_not_ready(a: &Pod, b: &Pod) -> Ordering {
    is_pod_ready(a).cmp(&is_pod_ready(b))
}

/// More restarts first.
fn cmp_restarts(a: &Pod, b: &Pod) -> Ordering {
    max_container_restarts(b).cmp(&max_container_restarts(a))
}

/// Upstream `afterOrZero` as an ordering: a zero (absent) time first, then the later time first.
fn cmp_after_or_zero(a: Option<Timestamp>, b: Option<Timestamp>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => y.cmp(&x),
    }
}

/// Upstream's logarithmic bucket: `floor(log2(now - t))` in nanoseconds, or -1 when `now - t <= 0`.
pub fn logarithmic_rank(t: Timestamp, now: Timestamp) -> i64 {
    let elapsed = now.as_nanosecond() - t.as_nanosecond();
    if elapsed <= 0 {
        return -1;
    }
    // i128 → f64 loses precision only far beyond any realistic pod age; upstream converts the same way.
    (elapsed as f64).log2().floor() as i64
}

/// The time comparison used by `ActivePodsWithRanks` under `LogarithmicScaleDown`: the younger bucket
/// first, ties inside a bucket broken by the smaller UID. Zero times fall back to [`cmp_after_or_zero`].
fn cmp_log_scaled(a: (&Pod, Option<Timestamp>), b: (&Pod, Option<Timestamp>), now: Timestamp) -> Ordering {
    match (a.1, b.1) {
        (Some(ta), Some(tb)) if ta != tb => {
            let by_bucket = logarithmic_rank(ta, now).cmp(&logarithmic_rank(tb, now));
            by_bucket.then_with(|| uid(a.0).cmp(uid(b.0)))
        }
        (ta, tb) => cmp_after_or_zero(ta, tb),
    }
}

/// Ready time, compared only when both pods are ready.
fn cmp_ready_time(a: &Pod, b: &Pod, now: Option<Timestamp>) -> Ordering {
    if !(is_pod_ready(a) && is_pod_ready(b)) {
        return Ordering::Equal;
    }
    let (ra, rb) = (pod_ready_time(a), pod_ready_time(b));
    match now {
        Some(now) => cmp_log_scaled((a, ra), (b, rb), now),
        None => cmp_after_or_zero(ra, rb),
    }
}

fn cmp_creation(a: &Pod, b: &Pod, now: Option<Timestamp>) -> Ordering {
    let (ca, cb) = (creation_time(a), creation_time(b));
    match now {
        Some(now) => cmp_log_scaled((a, ca), (b, cb), now),
        None => cmp_after_or_zero(ca, cb),
    }
}

/// Upstream `ActivePods.Less` as an ordering: `Less` means "delete `a` before `b`".
///
/// Unassigned < assigned; Pending < Unknown < Running; not ready < ready; more recently ready first;
/// more restarts first; newer first (absent times count as newest).
pub fn cmp_active_pods(a: &Pod, b: &Pod) -> Ordering {
    cmp_unassigned(a, b)
        .then_with(|| cmp_phase(a, b))
        .then_with(|| cmp_not_ready(a, b))
        .then_with(|| cmp_ready_time(a, b, None))
        .then_with(|| cmp_restarts(a, b))
        .then_with(|| cmp_creation(a, b, None))
}

/// A pod with its rank: how many active related pods share its node (upstream `ActivePodsWithRanks`).
#[derive(Clone, Copy, Debug)]
pub struct RankedPod<'a> {
    /// The pod being ordered.
    pub pod: &'a Pod,
    /// Active related pods on the same node; higher ranks are deleted first.
    pub rank: usize,
}

/// Upstream `ActivePodsWithRanks.Less` as an ordering: `Less` means "delete `a` before `b`".
///
/// The first three rules are those of [`cmp_active_pods`]; then lower pod-deletion-cost, higher rank,
/// ready time and creation time in logarithmic buckets relative to `now`, and more restarts.
pub fn cmp_pods_with_ranks(a: &RankedPod<'_>, b: &RankedPod<'_>, now: Timestamp) -> Ordering {
    let (pa, pb) = (a.pod, b.pod);
    cmp_unassigned(pa, pb)
        .then_with(|| cmp_phase(pa, pb))
        .then_with(|| cmp_not_ready(pa, pb))
        .then_with(|| pod_deletion_cost(pa).cmp(&pod_deletion_cost(pb)))
        .then_with(|| b.rank.cmp(&a.rank))
        .then_with(|| cmp_ready_time(pa, pb, Some(now)))
        .then_with(|| cmp_restarts(pa, pb))
        .then_with(|| cmp_creation(pa, pb, Some(now)))
}

/// Sorts pods so that the ones to delete first come first (upstream `sort.Sort(ActivePods(..))`).
pub fn sort_active_pods(pods: &mut [&Pod]) {
    merge_sort_by(pods, |a, b| cmp_active_pods(a, b));
}

/// Sorts ranked pods so that the ones to delete first come first (upstream `ActivePodsWithRanks`).
pub fn sort_pods_with_ranks(pods: &mut [RankedPod<'_>], now: Timestamp) {
    merge_sort_by(pods, |a, b| cmp_pods_with_ranks(a, b, now));
}

/// Upstream `getPodsRankedByRelatedPodsOnSameNode`: ranks each pod by the number of *active* pods in
/// `related_pods` on the same node (the empty node name is counted like any other).
pub fn rank_by_related_pods_on_same_node<'a, P, R>(
    pods_to_rank: &'a [P],
    related_pods: &[R],
) -> Vec<RankedPod<'a>>
where
    P: Borrow<Pod>,
    R: Borrow<Pod>,
{
    let mut pods_on_node: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in related_pods
        .iter()
        .map(Borrow::borrow)
        .filter(|p| is_pod_active(p))
    {
        *pods_on_node.entry(node_name(pod)).or_default() += 1;
    }
    let rank_of = |pod: &Pod| pods_on_node.get(node_name(pod)).copied().unwrap_or(0);
    pods_to_rank
        .iter()
        .map(|p| RankedPod {
            pod: p.borrow(),
            rank: rank_of(p.borrow()),
        })
        .collect()
}

/// A stable merge sort that tolerates comparators which are not a strict total order.
fn merge_sort_by<T: Copy>(items: &mut [T], cmp: impl Fn(&T, &T) -> Ordering + Copy) {
    if items.len() < 2 {
        return;
    }
    let mid = items.len() / 2;
    merge_sort_by(&mut items[..mid], cmp);
    merge_sort_by(&mut items[mid..], cmp);
    let merged = merge(&items[..mid], &items[mid..], cmp);
    items.copy_from_slice(&merged);
}

fn merge<T: Copy>(left: &[T], right: &[T], cmp: impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        // Take from the right only when it strictly precedes, which keeps equal elements stable.
        if cmp(&right[j], &left[i]) == Ordering::Less {
            out.push(right[j]);
            j += 1;
        } else {
            out.push(left[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&left[i..]);
    out.extend_from_slice(&right[j..]);
    out
}

// ---------------------------------------------------------------------------------------------------------
// Slow start
// ---------------------------------------------------------------------------------------------------------

/// The batch sizes of upstream `slowStartBatch`: 1, 2, 4, … each capped by what is left, summing to
/// `count`.
///
/// The caller issues one batch at a time and stops after a batch with any failure; the sizes of the
/// batches it never issued are the "skipped" creations it must remove from its expectations.
pub fn slow_start_batches(count: usize, initial_batch_size: usize) -> Vec<usize> {
    let mut batches = Vec::new();
    let mut remaining = count;
    let mut size = remaining.min(initial_batch_size.max(1));
    while size > 0 {
        batches.push(size);
        remaining -= size;
        size = remaining.min(size.saturating_mul(2));
    }
    batches
}

// ---------------------------------------------------------------------------------------------------------
// Label selectors
// ---------------------------------------------------------------------------------------------------------

/// Whether `labels` satisfy a (typed) label selector, as `metav1.LabelSelectorAsSelector(..).Matches`.
///
/// An empty selector matches everything. An unknown operator, or `In`/`NotIn` without values, is an
/// invalid selector and matches nothing (the API server rejects such selectors on write anyway).
pub fn selector_matches(selector: &LabelSelector, labels: Option<&BTreeMap<String, String>>) -> bool {
    let empty = BTreeMap::new();
    let labels = labels.unwrap_or(&empty);
    let match_labels = selector.match_labels.iter().flatten();
    let labels_ok = match_labels.into_iter().all(|(k, v)| labels.get(k) == Some(v));
    let expressions = selector.match_expressions.iter().flatten();
    labels_ok
        && expressions
            .into_iter()
            .all(|e| requirement_matches(&e.operator, &e.key, e.values.as_deref(), labels))
}

fn requirement_matches(
    operator: &str,
    key: &str,
    values: Option<&[String]>,
    labels: &BTreeMap<String, String>,
) -> bool {
    let values = values.unwrap_or(&[]);
    let value = labels.get(key);
    let in_values = value.is_some_and(|v| values.contains(v));
    match operator {
        "In" => !values.is_empty() && in_values,
        "NotIn" => !values.is_empty() && !in_values,
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------------------
// Controller ownerReferences
// ---------------------------------------------------------------------------------------------------------

/// Upstream `metav1.GetControllerOf`: the ownerReference with `controller: true`, if any.
pub fn get_controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    let refs = meta.owner_references.as_ref()?;
    refs.iter().find(|r| r.controller == Some(true))
}

/// Upstream `metav1.IsControlledBy`: the object's controller reference points at `owner_uid`.
pub fn is_controlled_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    get_controller_of(meta).is_some_and(|r| r.uid == owner_uid)
}

/// Upstream `metav1.NewControllerRef`: a reference with `controller` and `blockOwnerDeletion` set.
pub fn new_controller_ref(owner: &ObjectMeta, api_version: &str, kind: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: owner.name.clone().unwrap_or_default(),
        uid: owner.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Adoption and release (controller_ref_manager.go ClaimObject)
// ---------------------------------------------------------------------------------------------------------

/// What the owner should do with one pod during a claim (upstream `ClaimObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimDecision {
    /// Already controlled by the owner and still matching: it belongs to the owner.
    Keep,
    /// An orphan that matches: patch in the owner's controller reference, then it belongs to the owner.
    Adopt,
    /// Controlled by the owner but no longer matching: patch the reference away; it is not the owner's.
    Release,
    /// Controlled by someone else, or not a candidate for adoption or release: leave it alone.
    Ignore,
}

/// Upstream `ClaimObject`'s decision for one pod, given whether the pod matches the owner's selector.
///
/// * Owned by another controller → [`ClaimDecision::Ignore`].
/// * Owned by us: matching → `Keep`; not matching → `Release`, unless the owner is being deleted.
/// * Orphan: adopted only if it matches, neither the owner nor the pod is being deleted, and it lives in the
///   owner's namespace.
pub fn claim_decision(owner: &ObjectMeta, pod: &Pod, matches: bool) -> ClaimDecision {
    let owner_uid = owner.uid.as_deref().unwrap_or("");
    let owner_deleting = owner.deletion_timestamp.is_some();
    match get_controller_of(&pod.metadata) {
        Some(r) if r.uid != owner_uid => ClaimDecision::Ignore,
        Some(_) if matches => ClaimDecision::Keep,
        Some(_) if owner_deleting => ClaimDecision::Ignore,
        Some(_) => ClaimDecision::Release,
        None if owner_deleting || !matches || pod.metadata.deletion_timestamp.is_some() => {
            ClaimDecision::Ignore
        }
        None if !same_namespace(owner, &pod.metadata) => ClaimDecision::Ignore,
        None => ClaimDecision::Adopt,
    }
}

fn same_namespace(owner: &ObjectMeta, obj: &ObjectMeta) -> bool {
    let owner_ns = owner.namespace.as_deref().unwrap_or("");
    owner_ns.is_empty() || owner_ns == obj.namespace.as_deref().unwrap_or("")
}

/// The outcome of claiming a list of pods (upstream `ClaimPods`, before its API calls).
#[derive(Debug, Default)]
pub struct ClaimPlan<'a> {
    /// Pods the owner already controls and that still match.
    pub owned: Vec<&'a Pod>,
    /// Matching orphans to adopt; each one that is patched successfully joins `owned`.
    pub adopt: Vec<&'a Pod>,
    /// Owned pods that stopped matching and must be released.
    pub release: Vec<&'a Pod>,
}

/// Splits `pods` into kept, to-adopt and to-release, matching each against the owner's `selector`.
pub fn claim_pods<'a, P: Borrow<Pod>>(
    owner: &ObjectMeta,
    selector: &LabelSelector,
    pods: &'a [P],
) -> ClaimPlan<'a> {
    let mut plan = ClaimPlan::default();
    for pod in pods.iter().map(Borrow::borrow) {
        let matches = selector_matches(selector, pod.metadata.labels.as_ref());
        match claim_decision(owner, pod, matches) {
            ClaimDecision::Keep => plan.owned.push(pod),
            ClaimDecision::Adopt => plan.adopt.push(pod),
            ClaimDecision::Release => plan.release.push(pod),
            ClaimDecision::Ignore => {}
        }
    }
    plan
}

/// Strategic-merge patch that adopts a pod (upstream `ownerRefControllerPatch`).
///
/// The `uid` doubles as a precondition: the patch fails if the pod was replaced by a namesake.
pub fn adopt_patch(controller_ref: &OwnerReference, pod_uid: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": { "ownerReferences": [controller_ref], "uid": pod_uid }
    })
}

/// Strategic-merge patch that releases a pod (upstream `GenerateDeleteOwnerRefStrategicMergeBytes`).
pub fn release_patch(owner_uid: &str, pod_uid: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": { "ownerReferences": [{ "$patch": "delete", "uid": owner_uid }], "uid": pod_uid }
    })
}

// ---------------------------------------------------------------------------------------------------------
// Pods from templates
// ---------------------------------------------------------------------------------------------------------

/// Why a pod cannot be built from a template (upstream refuses the create for the same reasons).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodTemplateError {
    /// The template has no labels; such a pod could never be matched back to its owner.
    NoLabels,
    /// The controller reference lacks apiVersion/kind or `controller`/`blockOwnerDeletion` is not true.
    InvalidControllerRef(&'static str),
}

impl fmt::Display for PodTemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoLabels => f.write_str("unable to create pods, no labels"),
            Self::InvalidControllerRef(why) => write!(f, "invalid controllerRef: {why}"),
        }
    }
}

impl std::error::Error for PodTemplateError {}

/// Upstream `validateControllerRef`.
fn validate_controller_ref(r: &OwnerReference) -> Result<(), PodTemplateError> {
    let problem = if r.api_version.is_empty() {
        Some("controllerRef has empty APIVersion")
    } else if r.kind.is_empty() {
        Some("controllerRef has empty Kind")
    } else if r.controller != Some(true) {
        Some("controllerRef.Controller is not set to true")
    } else if r.block_owner_deletion != Some(true) {
        Some("controllerRef.BlockOwnerDeletion is not set")
    } else {
        None
    };
    problem.map_or(Ok(()), |why| Err(PodTemplateError::InvalidControllerRef(why)))
}

/// Upstream `GetPodFromTemplate` plus the checks of `createPods`.
///
/// Copies labels, annotations, finalizers and spec from the template, adds `controller_ref`, sets
/// `generateName` to `<owner>-` (see [`pods_prefix`]) and the owner's namespace (upstream leaves the
/// namespace to the request path; setting it here is equivalent).
pub fn pod_from_template(
    template: &PodTemplateSpec,
    owner: &ObjectMeta,
    controller_ref: OwnerReference,
) -> Result<Pod, PodTemplateError> {
    validate_controller_ref(&controller_ref)?;
    let template_meta = template.metadata.clone().unwrap_or_default();
    if template_meta.labels.as_ref().is_none_or(BTreeMap::is_empty) {
        return Err(PodTemplateError::NoLabels);
    }
    let metadata = ObjectMeta {
        generate_name: Some(pods_prefix(owner.name.as_deref().unwrap_or(""))),
        namespace: owner.namespace.clone(),
        labels: template_meta.labels,
        annotations: template_meta.annotations,
        finalizers: template_meta.finalizers,
        owner_references: Some(vec![controller_ref]),
        ..ObjectMeta::default()
    };
    Ok(Pod {
        metadata,
        spec: template.spec.clone(),
        status: None,
    })
}

/// Upstream `getPodsPrefix`: `<name>-` when that is a valid generateName for a pod, else `<name>`.
pub fn pods_prefix(controller_name: &str) -> String {
    let prefix = format!("{controller_name}-");
    if is_dns1123_subdomain(&mask_trailing_dash(&prefix)) {
        prefix
    } else {
        controller_name.to_owned()
    }
}

/// Upstream `maskTrailingDash`: a generateName may end in `-`, so validate it as if it ended in `a`.
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(stem) if name.len() > 1 => {
            let cut = stem.char_indices().last().map_or(0, |(i, _)| i);
            format!("{}a", &stem[..cut])
        }
        _ => name.to_owned(),
    }
}

fn is_dns1123_subdomain(name: &str) -> bool {
    name.len() <= 253 && !name.is_empty() && name.split('.').all(is_dns1123_label_part)
}

fn is_dns1123_label_part(part: &str) -> bool {
    let bytes = part.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    alnum(first) && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
}
