//! Indexed Jobs: completion indexes, their interval strings (`status.completedIndexes: "1,3-5"`), and
//! the per-index failure bookkeeping of `backoffLimitPerIndex`.
//!
//! Upstream: `pkg/controller/job/indexed_job_utils.go`.
//!
//! An interval string lists ascending, disjoint intervals: `first-last`, a lone `n`, and two
//! adjacent indexes as `n,n+1` (upstream writes `0,1`, never `0-1`). Parsing is lenient as upstream:
//! a part that is not a number is skipped, an interval starting at or after `completions` ends the
//! list, and one ending after it is cut at `completions - 1`.
//!
//! Simplified: an index is an `i64` (upstream `int`); a pod without a valid index is `None` (upstream
//! `unknownCompletionIndex = -1`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, ObjectFieldSelector, Pod, PodTemplateSpec};

use super::backoff::finished_time;
use super::pod_failure_policy::{PodFailurePolicyAction, match_pod_failure_policy};
use super::tracking::has_job_tracking_finalizer;
use super::util::{completions, is_pod_failed, spec};
use crate::controller_utils::pods::pod_phase;
use crate::controller_utils::ranking::sort_active_pods;

/// Annotation and label with a pod's completion index (`JobCompletionIndexAnnotation`).
pub const COMPLETION_INDEX_ANNOTATION: &str = "batch.kubernetes.io/job-completion-index";
/// Annotation: failures counted against `backoffLimitPerIndex` so far in this index.
pub const INDEX_FAILURE_COUNT_ANNOTATION: &str = "batch.kubernetes.io/job-index-failure-count";
/// Annotation: failures of this index that an `Ignore` rule did not count.
pub const INDEX_IGNORED_FAILURE_COUNT_ANNOTATION: &str =
    "batch.kubernetes.io/job-index-ignored-failure-count";
/// The environment variable with the completion index (`completionIndexEnvName`).
pub const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// Longest generateName prefix the API server keeps whole (`names.MaxGeneratedNameLength`: 63 − 5).
pub const MAX_GENERATED_NAME_LENGTH: usize = 58;

/// The closed interval `first..=last` of indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// First index.
    pub first: i64,
    /// Last index (inclusive).
    pub last: i64,
}

/// Ascending, disjoint, non-adjacent intervals (upstream `orderedIntervals`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OrderedIntervals(pub Vec<Interval>);

impl OrderedIntervals {
    /// Upstream `withOrderedIndexes`: these intervals plus `new_indexes` (ascending).
    pub fn with_ordered_indexes(&self, new_indexes: &[i64]) -> OrderedIntervals {
        let singles = new_indexes
            .iter()
            .map(|&i| Interval { first: i, last: i })
            .collect();
        self.merge(&OrderedIntervals(singles))
    }

    /// Upstream `merge`: the union of two ordered lists, adjacent intervals joined.
    pub fn merge(&self, other: &OrderedIntervals) -> OrderedIntervals {
        let mut result: Vec<Interval> = Vec::new();
        let mut push = |next: Interval| match result.last_mut() {
            Some(last) if next.first <= last.last + 1 => last.last = last.last.max(next.last),
            _ => result.push(next),
        };
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            if a[i].first < b[j].first {
                push(a[i]);
                i += 1;
            } else {
                push(b[j]);
                j += 1;
            }
        }
        a[i..].iter().chain(&b[j..]).for_each(|&iv| push(iv));
        OrderedIntervals(result)
    }

    /// Upstream `total`: how many indexes the intervals hold.
    pub fn total(&self) -> i64 {
        self.0.iter().map(|iv| iv.last - iv.first + 1).sum()
    }

    /// Upstream `has`: whether `ix` is in one of the intervals (binary search).
    pub fn has(&self, ix: i64) -> bool {
        let pos = self.0.partition_point(|iv| iv.last < ix);
        self.0.get(pos).is_some_and(|iv| iv.first <= ix)
    }

    /// No index at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every index, ascending.
    pub fn indexes(&self) -> impl Iterator<Item = i64> + '_ {
        self.0.iter().flat_map(|iv| iv.first..=iv.last)
    }
}

impl fmt::Display for OrderedIntervals {
    /// Upstream `String`: `0,1,3-5` (two adjacent indexes as a pair, three or more as a range).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, iv) in self.0.iter().enumerate() {
            if n > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", iv.first)?;
            if iv.last > iv.first {
                let sep = if iv.last == iv.first + 1 { ',' } else { '-' };
                write!(f, "{sep}{}", iv.last)?;
            }
        }
        Ok(())
    }
}

/// Upstream `parseIndexesFromString` (see the module doc for the leniency).
pub fn parse_indexes_from_string(indexes: &str, completions: i64) -> OrderedIntervals {
    let mut result: Vec<Interval> = Vec::new();
    if indexes.is_empty() {
        return OrderedIntervals(result);
    }
    for part in indexes.split(',') {
        let limits: Vec<&str> = part.split('-').collect();
        let Some(first) = limits.first().and_then(|s| parse_go_int(s)) else {
            continue;
        };
        if first >= completions {
            break;
        }
        let last = match limits.get(1) {
            Some(s) => match parse_go_int(s) {
                Some(last) => last.min(completions - 1),
                None => continue,
            },
            None => first,
        };
        let inter = Interval { first, last };
        match result.last_mut() {
            Some(prev) if prev.last == inter.first - 1 => prev.last = inter.last,
            _ => result.push(inter),
        }
    }
    OrderedIntervals(result)
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits.
fn parse_go_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Upstream `getCompletionIndex`: the pod's index annotation, if a non-negative integer.
pub fn completion_index(pod: &Pod) -> Option<i64> {
    let value = pod
        .metadata
        .annotations
        .as_ref()?
        .get(COMPLETION_INDEX_ANNOTATION)?;
    parse_go_int(value).filter(|i| *i >= 0)
}

/// The pod's index, if valid and below `completions`.
pub fn valid_index(pod: &Pod, completions: i64) -> Option<i64> {
    completion_index(pod).filter(|ix| *ix < completions)
}

/// `spec.completions` of an Indexed Job as an index bound (0 when missing: no valid index).
pub fn index_bound(job: &Job) -> i64 {
    i64::from(completions(job).unwrap_or(0))
}

/// Upstream `calculateSucceededIndexes`: the indexes in `status.completedIndexes`, and those plus the
/// indexes of succeeded pods not yet counted (still carrying the tracking finalizer).
pub fn calculate_succeeded_indexes(job: &Job, pods: &[Arc<Pod>]) -> (OrderedIntervals, OrderedIntervals) {
    let bound = index_bound(job);
    let completed = job.status.as_ref().and_then(|s| s.completed_indexes.as_deref());
    let prev = parse_indexes_from_string(completed.unwrap_or(""), bound);
    let new: BTreeSet<i64> = pods
        .iter()
        .filter(|p| pod_phase(p) == "Succeeded" && has_job_tracking_finalizer(p))
        .filter_map(|p| valid_index(p, bound))
        .collect();
    let result = prev.with_ordered_indexes(&new.into_iter().collect::<Vec<_>>());
    (prev, result)
}

/// Upstream `calculateFailedIndexes`: the indexes in `status.failedIndexes` plus those of pods not yet
/// counted whose failure fails the index ([`is_index_failed`]).
pub fn calculate_failed_indexes(job: &Job, pods: &[Arc<Pod>]) -> OrderedIntervals {
    let bound = index_bound(job);
    let failed = job.status.as_ref().and_then(|s| s.failed_indexes.as_deref());
    let prev = parse_indexes_from_string(failed.unwrap_or(""), bound);
    let new: BTreeSet<i64> = pods
        .iter()
        .filter(|p| has_job_tracking_finalizer(p) && is_index_failed(job, p))
        .filter_map(|p| valid_index(p, bound))
        .collect();
    prev.with_ordered_indexes(&new.into_iter().collect::<Vec<_>>())
}

/// Upstream `isIndexFailed`: the pod failed and either a `FailIndex` rule matched or the index has
/// used up `backoffLimitPerIndex` (counting this failure unless an `Ignore` rule matched).
pub fn is_index_failed(job: &Job, pod: &Pod) -> bool {
    if !is_pod_failed(pod, job) {
        return false;
    }
    let counted = match &spec(job).pod_failure_policy {
        Some(policy) => {
            let m = match_pod_failure_policy(policy, pod);
            if m.action == Some(PodFailurePolicyAction::FailIndex) {
                return true;
            }
            m.count_failed
        }
        None => true,
    };
    let limit = spec(job).backoff_limit_per_index.unwrap_or(0);
    counted && index_failure_count(pod) >= limit
}

/// Upstream `firstPendingIndexes`: the lowest `count` indexes below `completions` that no active pod
/// runs and that neither succeeded nor failed (nor, when replacements wait for terminal pods, have a
/// terminating pod).
pub fn first_pending_indexes(
    active: &[Arc<Pod>],
    terminating: Option<&[Arc<Pod>]>,
    succeeded: &OrderedIntervals,
    failed: Option<&OrderedIntervals>,
    count: usize,
    completions: i64,
) -> Vec<i64> {
    if count == 0 {
        return Vec::new();
    }
    let mut non_pending = succeeded.with_ordered_indexes(&indexes_of(active));
    if let Some(terminating) = terminating {
        non_pending = non_pending.with_ordered_indexes(&indexes_of(terminating));
    }
    if let Some(failed) = failed {
        non_pending = non_pending.merge(failed);
    }
    let mut result = Vec::with_capacity(count);
    let mut candidate = 0;
    for iv in &non_pending.0 {
        while candidate < completions && result.len() < count && candidate < iv.first {
            result.push(candidate);
            candidate += 1;
        }
        candidate = candidate.max(iv.last + 1);
    }
    while candidate < completions && result.len() < count {
        result.push(candidate);
        candidate += 1;
    }
    result
}

/// Upstream `getIndexes`: the distinct valid indexes of `pods`, ascending.
pub fn indexes_of(pods: &[Arc<Pod>]) -> Vec<i64> {
    let set: BTreeSet<i64> = pods.iter().filter_map(|p| completion_index(p)).collect();
    set.into_iter().collect()
}

/// Upstream `appendDuplicatedIndexPodsForRemoval`: of the active `pods`, those to delete because
/// their index is missing, out of range, or duplicated (all but one per index, the one kept being
/// the last in `ActivePods` order); and the pods left.
pub fn duplicated_index_pods_for_removal(
    pods: &[Arc<Pod>],
    completions: i64,
) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
    let mut by_index: BTreeMap<Option<i64>, Vec<Arc<Pod>>> = BTreeMap::new();
    for pod in pods {
        let ix = completion_index(pod).filter(|ix| *ix < completions);
        let out_of_range = completion_index(pod).is_some() && ix.is_none();
        // An out-of-range index is removed like a missing one.
        let key = if out_of_range { None } else { ix };
        by_index.entry(key).or_default().push(pod.clone());
    }
    let (mut rm, mut left) = (Vec::new(), Vec::new());
    for (ix, mut group) in by_index {
        if ix.is_none() {
            rm.extend(group);
            continue;
        }
        sort_arc_active_pods(&mut group);
        if let Some(kept) = group.pop() {
            left.push(kept);
        }
        rm.extend(group);
    }
    (rm, left)
}

/// Sorts pods in upstream's `ActivePods` order (the ones to delete first).
pub fn sort_arc_active_pods(pods: &mut [Arc<Pod>]) {
    let sorted: Vec<Arc<Pod>> = {
        let mut refs: Vec<&Pod> = pods.iter().map(AsRef::as_ref).collect();
        sort_active_pods(&mut refs);
        let by_address: HashMap<*const Pod, &Arc<Pod>> = pods.iter().map(|p| (Arc::as_ptr(p), p)).collect();
        refs.iter()
            .filter_map(|r| by_address.get(&std::ptr::from_ref(*r)).map(|p| Arc::clone(p)))
            .collect()
    };
    if sorted.len() == pods.len() {
        pods.clone_from_slice(&sorted);
    }
}

/// Upstream `getPodsWithDelayedDeletionPerIndex`: per index that is neither finished nor running,
/// the latest failed pod not yet counted. Its finalizer stays until a replacement was created, so
/// that the replacement can inherit its failure count.
pub fn pods_with_delayed_deletion_per_index(
    job: &Job,
    pods: &[Arc<Pod>],
    active: &[Arc<Pod>],
    removal_expected: &dyn Fn(&Pod) -> bool,
    succeeded: &OrderedIntervals,
    failed: &OrderedIntervals,
) -> BTreeMap<i64, Arc<Pod>> {
    let bound = index_bound(job);
    let active_indexes: BTreeSet<i64> = indexes_of(active).into_iter().collect();
    let mut result: BTreeMap<i64, Arc<Pod>> = BTreeMap::new();
    for pod in pods {
        if !has_job_tracking_finalizer(pod) || removal_expected(pod) || !is_pod_failed(pod, job) {
            continue;
        }
        let Some(ix) = valid_index(pod, bound) else {
            continue;
        };
        if succeeded.has(ix) || failed.has(ix) || active_indexes.contains(&ix) {
            continue;
        }
        let replace = match result.get(&ix) {
            Some(last) => {
                index_absolute_failure_count(last) <= index_absolute_failure_count(pod)
                    && finished_time(pod) >= finished_time(last)
            }
            None => true,
        };
        if replace {
            result.insert(ix, pod.clone());
        }
    }
    result
}

/// Upstream `getNewIndexFailureCounts`: the failure and ignored-failure counts a replacement of
/// `replaced` inherits (this failure added to one of them).
pub fn new_index_failure_counts(job: &Job, replaced: Option<&Pod>) -> (i32, i32) {
    let Some(pod) = replaced else {
        return (0, 0);
    };
    let (mut failures, mut ignored) = (index_failure_count(pod), index_ignored_failure_count(pod));
    let counted = spec(job)
        .pod_failure_policy
        .as_ref()
        .is_none_or(|policy| match_pod_failure_policy(policy, pod).count_failed);
    if counted {
        failures = failures.saturating_add(1);
    } else {
        ignored = ignored.saturating_add(1);
    }
    (failures, ignored)
}

/// Upstream `getIndexFailureCount`: the failure-count annotation, 0 when missing or invalid.
pub fn index_failure_count(pod: &Pod) -> i32 {
    annotation_i32(pod, INDEX_FAILURE_COUNT_ANNOTATION)
}

/// The ignored-failure-count annotation, 0 when missing or invalid.
pub fn index_ignored_failure_count(pod: &Pod) -> i32 {
    annotation_i32(pod, INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)
}

/// Upstream `getIndexAbsoluteFailureCount`: counted plus ignored failures.
pub fn index_absolute_failure_count(pod: &Pod) -> i32 {
    index_failure_count(pod).saturating_add(index_ignored_failure_count(pod))
}

/// Upstream `parseInt32`: a non-negative int32, else 0.
fn annotation_i32(pod: &Pod, key: &str) -> i32 {
    let value = pod.metadata.annotations.as_ref().and_then(|a| a.get(key));
    value
        .and_then(|v| parse_go_int(v))
        .and_then(|v| i32::try_from(v).ok())
        .filter(|v| *v >= 0)
        .unwrap_or(0)
}

/// Upstream `addCompletionIndexEnvVariables`: `JOB_COMPLETION_INDEX` from the index label, in every
/// init and regular container that does not set it already.
pub fn add_completion_index_env_variables(template: &mut PodTemplateSpec) {
    let Some(spec) = template.spec.as_mut() else {
        return;
    };
    let containers = spec
        .init_containers
        .iter_mut()
        .flatten()
        .chain(spec.containers.iter_mut());
    for container in containers {
        let env = container.env.get_or_insert_with(Vec::new);
        if env.iter().any(|v| v.name == COMPLETION_INDEX_ENV) {
            continue;
        }
        env.push(EnvVar {
            name: COMPLETION_INDEX_ENV.to_string(),
            value: None,
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: None,
                    field_path: format!("metadata.labels['{COMPLETION_INDEX_ANNOTATION}']"),
                }),
                ..EnvVarSource::default()
            }),
        });
    }
}

/// Upstream `addCompletionIndexAnnotation` and `addCompletionIndexLabel`, and the pod hostname
/// `<job>-<index>`.
pub fn set_completion_index(template: &mut PodTemplateSpec, job_name: &str, index: i64) {
    let meta = template.metadata.get_or_insert_with(Default::default);
    let value = index.to_string();
    meta.annotations
        .get_or_insert_with(Default::default)
        .insert(COMPLETION_INDEX_ANNOTATION.to_string(), value.clone());
    meta.labels
        .get_or_insert_with(Default::default)
        .insert(COMPLETION_INDEX_ANNOTATION.to_string(), value);
    if let Some(spec) = template.spec.as_mut() {
        spec.hostname = Some(format!("{job_name}-{index}"));
    }
}

/// Upstream `addIndexFailureCountAnnotation`: the inherited counts (the ignored count only when > 0).
pub fn set_index_failure_counts(template: &mut PodTemplateSpec, (failures, ignored): (i32, i32)) {
    let meta = template.metadata.get_or_insert_with(Default::default);
    let annotations = meta.annotations.get_or_insert_with(Default::default);
    annotations.insert(INDEX_FAILURE_COUNT_ANNOTATION.to_string(), failures.to_string());
    if ignored > 0 {
        annotations.insert(
            INDEX_IGNORED_FAILURE_COUNT_ANNOTATION.to_string(),
            ignored.to_string(),
        );
    }
}

/// Upstream `podGenerateNameWithIndex`: `<job>-<index>-`, the job name cut so that the prefix fits
/// the 58 characters the API server keeps of a generateName.
pub fn pod_generate_name_with_index(job_name: &str, index: i64) -> String {
    let suffix = format!("-{index}-");
    let prefix = format!("{job_name}{suffix}");
    if prefix.len() <= MAX_GENERATED_NAME_LENGTH {
        return prefix;
    }
    let keep = MAX_GENERATED_NAME_LENGTH.saturating_sub(suffix.len());
    // Job names are DNS subdomains (ASCII), so any byte offset is a char boundary; be safe anyway.
    let cut = (0..=keep.min(job_name.len()))
        .rev()
        .find(|i| job_name.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}{suffix}", &job_name[..cut])
}
