//! The sentences a StatefulSet sync records in the causal journal: each pod write of its plan and
//! the wait that holds an OrderedReady set back, with the numbers and the upstream function.
//!
//! Upstream: `stateful_set_control.go` (`updateStatefulSet`, `processReplica`,
//! `processCondemned`, `updateStatefulSetAfterInvariantEstablished`). Upstream logs these at
//! `-v=4` ("StatefulSet is waiting for Pod to be Running and Ready") without the numbers.
//!
//! The message functions take plain values and are tested by their exact sentences;
//! [`plan_decisions`] and [`wait`] read a [`Plan`] and its [`PlanInput`] and pick the sentences.
//! [`wait`] re-reads the pods the way the plan does to say which pod it stopped at; it never
//! changes what the plan does.

use k8s_openapi::api::core::v1::Pod;

use super::plan::{DeleteReason, Plan, PlanInput, Step};
use super::utils::{
    ON_DELETE, PARALLEL, allows_burst, get_end_ordinal, get_ordinal, get_pod_name, get_pod_revision,
    get_start_ordinal, get_stateful_set_max_unavailable, is_finished, is_running_and_available,
    is_running_and_ready, is_terminating, max_unavailable, min_ready_seconds, partition, replicas,
    update_strategy_type,
};
use crate::runtime::name_of;

pub use crate::runtime::Decision;
use crate::runtime::decision;

/// `processReplica` creating a missing pod.
pub fn create_pod(pod: &str, revision: &str, ordinal: i32, replicas: i32, policy: &str) -> Decision {
    decision(
        "processReplica",
        format!("creating {pod} at revision {revision} (ordinal {ordinal} of replicas {replicas}, {policy})"),
    )
}

/// `processReplica` deleting a Failed or Succeeded pod so that it is recreated.
pub fn delete_finished(pod: &str) -> Decision {
    decision(
        "processReplica",
        format!(
            "deleting {pod}: it has finished (Failed or Succeeded); a new pod of the same ordinal replaces it"
        ),
    )
}

/// `processReplica` writing back a pod whose identity or storage does not match the set.
pub fn update_pod(pod: &str) -> Decision {
    decision(
        "processReplica",
        format!("updating {pod}: its identity or storage does not match the set"),
    )
}

/// `createPersistentVolumeClaims` for a pod.
pub fn create_claims(pod: &str, claims: &[String]) -> Decision {
    decision(
        "createPersistentVolumeClaims",
        format!("creating claims {} for {pod}", claims.join(", ")),
    )
}

/// `processCondemned` deleting a pod whose ordinal is out of range.
pub fn delete_condemned(pod: &str, ordinal: i32, start: i32, replicas: i32, policy: &str) -> Decision {
    let range = if start == 0 {
        format!("ordinal {ordinal} ≥ replicas {replicas}")
    } else {
        format!("ordinal {ordinal} outside {start}..{}", start + replicas)
    };
    let order = if policy == PARALLEL {
        "all at once"
    } else {
        "highest ordinal first, one at a time"
    };
    decision(
        "processCondemned",
        format!("deleting {pod} ({range}: scale down, {policy}: {order})"),
    )
}

/// The rolling update deleting an outdated pod so that it is recreated at the update revision.
/// `max_unavailable` is `(maxUnavailable, unavailable pods)` when the field is set.
pub fn delete_to_update(
    pod: &str,
    from: &str,
    to: &str,
    partition: i32,
    max_unavailable: Option<(i32, usize)>,
) -> Decision {
    match max_unavailable {
        None => decision(
            "updateStatefulSet",
            format!(
                "deleting {pod} to update it: revision {from} → {to} (partition {partition}, highest ordinal first)"
            ),
        ),
        Some((max, unavailable)) => decision(
            "updateStatefulSetAfterInvariantEstablished",
            format!(
                "deleting {pod} to update it: revision {from} → {to} (partition {partition}, maxUnavailable {max}, \
                 {unavailable} unavailable before this sync, highest ordinal first)"
            ),
        ),
    }
}

/// What a pod is waited for (upstream's predicates, in the order the plan checks them).
pub fn waited_for(pod: &Pod, min_ready: i32, now: jiff::Timestamp) -> Option<String> {
    if is_terminating(pod) {
        Some("finish terminating".to_owned())
    } else if !is_running_and_ready(pod) {
        Some("be Running and Ready".to_owned())
    } else if !is_running_and_available(pod, min_ready, now) {
        Some(format!("be available (minReadySeconds {min_ready})"))
    } else {
        None
    }
}

/// OrderedReady stopping at an unhealthy pod of the range, with `blocked` the write it holds back.
pub fn waiting_in_order(pod: &str, until: &str, blocked: &str) -> Decision {
    decision(
        "updateStatefulSet",
        format!("waiting for {pod} to {until} before {blocked} (OrderedReady)"),
    )
}

/// OrderedReady holding a condemned pod back: it is not the first unhealthy pod.
pub fn waiting_condemned(pod: &str, until: &str, blocked: &str) -> Decision {
    decision(
        "processCondemned",
        format!("waiting for condemned {pod} to {until} before {blocked} (scale down, OrderedReady)"),
    )
}

/// The rolling update stopping at an unavailable pod before the next outdated one.
pub fn waiting_to_update(pod: &str, until: &str, next: &str, from: &str, to: &str) -> Decision {
    decision(
        "updateStatefulSet",
        format!("waiting for {pod} to {until} before updating the next: {next} ({from} → {to})"),
    )
}

/// The rolling update with `maxUnavailable` and no room left.
pub fn waiting_max_unavailable(max: i32, unavailable: usize, next: &str) -> Decision {
    decision(
        "updateStatefulSetAfterInvariantEstablished",
        format!(
            "maxUnavailable {max}, {unavailable} pods unavailable: no room to update {next} until one is available"
        ),
    )
}

/// Expectations hold the plan's writes back until the pod cache has seen the last ones.
pub fn waiting_expectations(adds: i64, dels: i64, writes: usize) -> Decision {
    decision(
        "sync",
        format!(
            "expectations not satisfied: waiting to see {adds} creations and {dels} deletions in the pod cache \
             before the {writes} planned writes"
        ),
    )
}

fn policy(input: &PlanInput<'_>) -> &'static str {
    if allows_burst(input.set) {
        PARALLEL
    } else {
        "OrderedReady"
    }
}

fn pod_by_ordinal<'a>(input: &PlanInput<'a>, ordinal: i32) -> Option<&'a Pod> {
    input.pods.iter().copied().find(|p| get_ordinal(p) == ordinal)
}

fn revision_of<'a>(input: &PlanInput<'a>, name: &str) -> &'a str {
    input
        .pods
        .iter()
        .find(|p| name_of(&p.metadata) == name)
        .map_or("", |p| get_pod_revision(p))
}

/// Pods of the range that are unavailable (not created, terminating, not running and available).
fn unavailable_count(input: &PlanInput<'_>) -> usize {
    let min_ready = min_ready_seconds(input.set);
    (get_start_ordinal(input.set)..=get_end_ordinal(input.set))
        .filter(|o| match pod_by_ordinal(input, *o) {
            None => true,
            Some(p) => is_terminating(p) || !is_running_and_available(p, min_ready, input.now),
        })
        .count()
}

/// The sentence of one step of the plan.
pub fn step_decision(input: &PlanInput<'_>, step: &Step) -> Decision {
    let set = input.set;
    match step {
        Step::CreatePod(pod) => create_pod(
            name_of(&pod.metadata),
            get_pod_revision(pod),
            get_ordinal(pod),
            replicas(set),
            policy(input),
        ),
        Step::UpdatePod(pod) => update_pod(name_of(&pod.metadata)),
        Step::CreateClaims { pod, claims } => {
            let names: Vec<String> = claims.iter().map(|c| name_of(&c.metadata).to_owned()).collect();
            create_claims(pod, &names)
        }
        Step::SetClaimOwners { claim, pod, .. } => decision(
            "updatePodClaimForRetentionPolicy",
            format!(
                "setting the owners of claim {claim} of {pod} to follow persistentVolumeClaimRetentionPolicy"
            ),
        ),
        Step::DeletePod { name, reason } => delete_decision(input, name, *reason),
    }
}

fn delete_decision(input: &PlanInput<'_>, name: &str, reason: DeleteReason) -> Decision {
    let set = input.set;
    match reason {
        DeleteReason::Finished => delete_finished(name),
        DeleteReason::ScaleDown => {
            let ordinal = super::utils::get_parent_name_and_ordinal(name).map_or(-1, |(_, o)| o);
            delete_condemned(
                name,
                ordinal,
                get_start_ordinal(set),
                replicas(set),
                policy(input),
            )
        }
        DeleteReason::Update => {
            let max = max_unavailable(set)
                .and_then(|m| get_stateful_set_max_unavailable(Some(m), replicas(set)).ok())
                .map(|m| (m, unavailable_count(input)));
            delete_to_update(
                name,
                revision_of(input, name),
                input.update_revision,
                partition(set).unwrap_or(0),
                max,
            )
        }
    }
}

/// The decisions of a plan about to be applied: one per step.
pub fn plan_decisions(input: &PlanInput<'_>, plan: &Plan) -> Vec<Decision> {
    plan.steps.iter().map(|s| step_decision(input, s)).collect()
}

/// The pod writes that would come next were nothing waited for: the first missing ordinal, the
/// highest condemned pod, or the highest outdated pod at or above the partition.
fn next_write(input: &PlanInput<'_>, after: i32) -> Option<String> {
    let set = input.set;
    if let Some(missing) = (after + 1..=get_end_ordinal(set)).find(|o| pod_by_ordinal(input, *o).is_none()) {
        return Some(format!("creating {}", get_pod_name(set, missing)));
    }
    if let Some(condemned) = condemned(input).first() {
        return Some(format!("deleting {} (scale down)", name_of(&condemned.metadata)));
    }
    next_outdated(input, get_end_ordinal(set)).map(|p| format!("updating {}", name_of(&p.metadata)))
}

/// Pods with an ordinal out of range, highest first.
fn condemned<'a>(input: &PlanInput<'a>) -> Vec<&'a Pod> {
    let (start, end) = (get_start_ordinal(input.set), get_end_ordinal(input.set));
    let mut pods: Vec<&Pod> = input
        .pods
        .iter()
        .copied()
        .filter(|p| get_ordinal(p) >= 0 && (get_ordinal(p) < start || get_ordinal(p) > end))
        .collect();
    pods.sort_by_key(|p| std::cmp::Reverse(get_ordinal(p)));
    pods
}

/// The highest pod at or below `from` and at or above the partition that is not at the update
/// revision (RollingUpdate only).
fn next_outdated<'a>(input: &PlanInput<'a>, from: i32) -> Option<&'a Pod> {
    if update_strategy_type(input.set) == ON_DELETE {
        return None;
    }
    let lowest = get_start_ordinal(input.set) + partition(input.set).unwrap_or(0).max(0);
    (lowest..=from)
        .rev()
        .filter_map(|o| pod_by_ordinal(input, o))
        .find(|p| get_pod_revision(p) != input.update_revision && !is_terminating(p))
}

/// The wait that holds this sync's progress back, if any: none when the plan writes a pod (it
/// acted) or when nothing would come next anyway (a no-op sync).
pub fn wait(input: &PlanInput<'_>, plan: &Plan) -> Option<Decision> {
    let acted = plan
        .steps
        .iter()
        .any(|s| matches!(s, Step::CreatePod(_) | Step::DeletePod { .. }));
    if acted || input.set.metadata.deletion_timestamp.is_some() {
        return None;
    }
    if !allows_burst(input.set)
        && let Some(found) = ordered_ready_wait(input)
    {
        return found;
    }
    rolling_update_wait(input)
}

/// OrderedReady: the first unhealthy pod of the range, then the condemned. `Some(None)` means the
/// plan stopped there with nothing blocked.
fn ordered_ready_wait(input: &PlanInput<'_>) -> Option<Option<Decision>> {
    let min_ready = min_ready_seconds(input.set);
    for ordinal in get_start_ordinal(input.set)..=get_end_ordinal(input.set) {
        let pod = pod_by_ordinal(input, ordinal)?;
        if is_finished(pod) {
            return Some(None);
        }
        if let Some(until) = waited_for(pod, min_ready, input.now) {
            let blocked = next_write(input, ordinal);
            return Some(blocked.map(|b| waiting_in_order(name_of(&pod.metadata), &until, &b)));
        }
    }
    let condemned = condemned(input);
    let first_unhealthy = condemned
        .iter()
        .rev()
        .find(|p| waited_for(p, min_ready, input.now).is_some())
        .map(|p| name_of(&p.metadata));
    let pod = condemned.first()?;
    let Some(until) = waited_for(pod, min_ready, input.now) else {
        return Some(None);
    };
    let name = name_of(&pod.metadata);
    if is_terminating(pod) {
        let blocked = condemned
            .iter()
            .find(|p| get_ordinal(p) < get_ordinal(pod) && !is_terminating(p))
            .map(|p| format!("deleting {}", name_of(&p.metadata)))
            .or_else(|| {
                next_outdated(input, get_end_ordinal(input.set))
                    .map(|p| format!("updating {}", name_of(&p.metadata)))
            });
        return Some(blocked.map(|b| waiting_condemned(name, &until, &b)));
    }
    match first_unhealthy == Some(name) {
        true => Some(None),
        false => Some(Some(waiting_condemned(name, &until, "deleting it"))),
    }
}

/// RollingUpdate: the unavailable pod the update stops at, or no room under `maxUnavailable`.
fn rolling_update_wait(input: &PlanInput<'_>) -> Option<Decision> {
    let set = input.set;
    let end = get_end_ordinal(set);
    let next = next_outdated(input, end)?;
    let next_name = name_of(&next.metadata);
    let from = get_pod_revision(next);
    if let Some(max) = max_unavailable(set) {
        let max = get_stateful_set_max_unavailable(Some(max), replicas(set)).ok()?;
        let unavailable = unavailable_count(input);
        return Some(waiting_max_unavailable(max, unavailable, next_name));
    }
    let min_ready = min_ready_seconds(set);
    let above = (get_ordinal(next) + 1..=end)
        .rev()
        .filter_map(|o| pod_by_ordinal(input, o));
    let blocking = above
        .into_iter()
        .find(|p| waited_for(p, min_ready, input.now).is_some())?;
    let until = waited_for(blocking, min_ready, input.now)?;
    Some(waiting_to_update(
        name_of(&blocking.metadata),
        &until,
        next_name,
        from,
        input.update_revision,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_names_the_ordinal_and_the_policy() {
        let d = create_pod("db-3", "db-abc", 3, 5, "OrderedReady");
        assert_eq!(d.function, "processReplica");
        assert_eq!(
            d.message,
            "creating db-3 at revision db-abc (ordinal 3 of replicas 5, OrderedReady)"
        );
    }

    #[test]
    fn scale_down_names_the_range() {
        let d = delete_condemned("db-4", 4, 0, 4, "OrderedReady");
        assert_eq!(d.function, "processCondemned");
        assert_eq!(
            d.message,
            "deleting db-4 (ordinal 4 ≥ replicas 4: scale down, OrderedReady: highest ordinal first, one at a time)"
        );
        let d = delete_condemned("db-1", 1, 2, 3, "Parallel");
        assert_eq!(
            d.message,
            "deleting db-1 (ordinal 1 outside 2..5: scale down, Parallel: all at once)"
        );
    }

    #[test]
    fn rolling_update_names_both_revisions() {
        let d = delete_to_update("db-7", "web-abc", "web-def", 0, None);
        assert_eq!(d.function, "updateStatefulSet");
        assert_eq!(
            d.message,
            "deleting db-7 to update it: revision web-abc → web-def (partition 0, highest ordinal first)"
        );
        let d = delete_to_update("db-7", "web-abc", "web-def", 2, Some((2, 1)));
        assert_eq!(d.function, "updateStatefulSetAfterInvariantEstablished");
        assert_eq!(
            d.message,
            "deleting db-7 to update it: revision web-abc → web-def (partition 2, maxUnavailable 2, \
             1 unavailable before this sync, highest ordinal first)"
        );
    }

    #[test]
    fn waits_say_what_they_hold_back() {
        assert_eq!(
            waiting_in_order("db-2", "be Running and Ready", "creating db-3").message,
            "waiting for db-2 to be Running and Ready before creating db-3 (OrderedReady)"
        );
        assert_eq!(
            waiting_condemned("db-4", "finish terminating", "deleting db-3").message,
            "waiting for condemned db-4 to finish terminating before deleting db-3 (scale down, OrderedReady)"
        );
        assert_eq!(
            waiting_to_update("db-6", "be Running and Ready", "db-5", "web-abc", "web-def").message,
            "waiting for db-6 to be Running and Ready before updating the next: db-5 (web-abc → web-def)"
        );
        assert_eq!(
            waiting_max_unavailable(1, 1, "db-2").message,
            "maxUnavailable 1, 1 pods unavailable: no room to update db-2 until one is available"
        );
        assert_eq!(
            waiting_expectations(1, 0, 2).message,
            "expectations not satisfied: waiting to see 1 creations and 0 deletions in the pod cache before the 2 planned writes"
        );
    }

    #[test]
    fn other_steps() {
        assert_eq!(
            delete_finished("db-1").message,
            "deleting db-1: it has finished (Failed or Succeeded); a new pod of the same ordinal replaces it"
        );
        assert_eq!(
            update_pod("db-1").message,
            "updating db-1: its identity or storage does not match the set"
        );
        assert_eq!(
            create_claims("db-1", &["data-db-1".to_owned()]).message,
            "creating claims data-db-1 for db-1"
        );
    }
}

/// [`plan_decisions`] and [`wait`] over real plans.
#[cfg(test)]
mod plan_tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::apps::v1::StatefulSet;
    use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

    use super::*;
    use crate::statefulset::plan::update_stateful_set;
    use crate::statefulset::tests::fixtures::{PodExt, SetExt, now, pod, set};
    use crate::statefulset::utils::{apply_revision, new_revision};

    /// The decisions of one plan of `set` (current revision `current`'s template).
    fn decisions_of(set: &StatefulSet, current: &StatefulSet, pods: &[Pod]) -> Vec<String> {
        let cur = new_revision(current, 1, 0);
        let upd = new_revision(set, 2, 0);
        let current_set = apply_revision(set, &cur).expect("applies");
        let update_set = apply_revision(set, &upd).expect("applies");
        let refs: Vec<&Pod> = pods.iter().collect();
        let claims: BTreeMap<String, &PersistentVolumeClaim> = BTreeMap::new();
        let input = PlanInput {
            set,
            current_set: &current_set,
            update_set: &update_set,
            current_revision: name_of(&cur.metadata),
            update_revision: name_of(&upd.metadata),
            collision_count: 0,
            pods: &refs,
            claims: &claims,
            now: now(),
        };
        let plan = update_stateful_set(&input).expect("plans");
        let mut all = plan_decisions(&input, &plan);
        all.extend(wait(&input, &plan));
        let rename = |m: &str| {
            m.replace(name_of(&upd.metadata), "UPD")
                .replace(name_of(&cur.metadata), "CUR")
        };
        all.iter()
            .map(|d| format!("{}: {}", d.function, rename(&d.message)))
            .collect()
    }

    #[test]
    fn ordered_ready_creates_then_waits() {
        let s = set(3);
        assert_eq!(
            decisions_of(&s, &s, &[]),
            ["processReplica: creating web-0 at revision UPD (ordinal 0 of replicas 3, OrderedReady)"]
        );
        assert_eq!(
            decisions_of(&s, &s, &[pod(&s, 0, "x")]),
            [
                "updateStatefulSet: waiting for web-0 to be Running and Ready before creating web-1 (OrderedReady)"
            ]
        );
    }

    #[test]
    fn a_no_op_sync_decides_nothing() {
        let s = set(2);
        let upd = name_of(&new_revision(&s, 2, 0).metadata).to_owned();
        let pods = [pod(&s, 0, &upd).ready(), pod(&s, 1, &upd).ready()];
        assert!(decisions_of(&s, &s, &pods).is_empty());
        // Not ready, but nothing waits for it.
        let pods = [pod(&s, 0, &upd).ready(), pod(&s, 1, &upd).running()];
        assert!(decisions_of(&s, &s, &pods).is_empty());
    }

    #[test]
    fn scale_down_takes_the_highest_ordinal() {
        let s = set(1);
        let upd = name_of(&new_revision(&s, 2, 0).metadata).to_owned();
        let pods = [
            pod(&s, 0, &upd).ready(),
            pod(&s, 1, &upd).ready(),
            pod(&s, 2, &upd).terminating(),
        ];
        assert_eq!(
            decisions_of(&s, &s, &pods),
            [
                "processCondemned: waiting for condemned web-2 to finish terminating before deleting web-1 \
              (scale down, OrderedReady)"
            ]
        );
        let pods = [pod(&s, 0, &upd).ready(), pod(&s, 1, &upd).ready()];
        assert_eq!(
            decisions_of(&s, &s, &pods),
            [
                "processCondemned: deleting web-1 (ordinal 1 ≥ replicas 1: scale down, OrderedReady: highest ordinal \
              first, one at a time)"
            ]
        );
    }

    #[test]
    fn rolling_update_deletes_then_waits() {
        let old = set(3);
        let new = set(3).image("nginx:2");
        let cur = name_of(&new_revision(&old, 1, 0).metadata).to_owned();
        let upd = name_of(&new_revision(&new, 2, 0).metadata).to_owned();
        let pods = [
            pod(&new, 0, &cur).ready(),
            pod(&new, 1, &cur).ready(),
            pod(&new, 2, &cur).ready(),
        ];
        assert_eq!(
            decisions_of(&new, &old, &pods),
            [
                "updateStatefulSet: deleting web-2 to update it: revision CUR → UPD (partition 0, highest ordinal first)"
            ]
        );
        let pods = [
            pod(&new, 0, &cur).ready(),
            pod(&new, 1, &cur).ready(),
            pod(&new, 2, &upd).running(),
        ];
        assert_eq!(
            decisions_of(&new, &old, &pods),
            [
                "updateStatefulSet: waiting for web-2 to be Running and Ready before updating web-1 (OrderedReady)"
            ]
        );
    }
}
