//! Scenario tables of [`crate::statefulset::plan::update_stateful_set`] (after upstream
//! `stateful_set_control_test.go`): scale up and down in both policies, the rolling update with
//! partition and maxUnavailable, OnDelete, finished pods, claims, a set being deleted.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::fixtures::{PodExt, SetExt, now, pod, set};
use crate::runtime::name_of;
use crate::statefulset::plan::{Plan, PlanInput, Step, update_stateful_set};
use crate::statefulset::utils::{
    apply_revision, get_persistent_volume_claims, get_pod_revision, new_revision,
};

/// Plans `set` whose current revision holds `current`'s template (the update revision holds
/// `set`'s). Returns the plan and the (current, update) revision names.
fn plan_with(
    set: &StatefulSet,
    current: &StatefulSet,
    pods: &[Pod],
    claims: &[PersistentVolumeClaim],
) -> (Plan, String, String) {
    let cur = new_revision(current, 1, 0);
    let upd = new_revision(set, 2, 0);
    let current_set = apply_revision(set, &cur).expect("applies");
    let update_set = apply_revision(set, &upd).expect("applies");
    let refs: Vec<&Pod> = pods.iter().collect();
    let claims: BTreeMap<String, &PersistentVolumeClaim> = claims
        .iter()
        .map(|c| (name_of(&c.metadata).to_owned(), c))
        .collect();
    let (cn, un) = (
        name_of(&cur.metadata).to_owned(),
        name_of(&upd.metadata).to_owned(),
    );
    let plan = update_stateful_set(&PlanInput {
        set,
        current_set: &current_set,
        update_set: &update_set,
        current_revision: &cn,
        update_revision: &un,
        collision_count: 0,
        pods: &refs,
        claims: &claims,
        now: now(),
    })
    .expect("plans");
    (plan, cn, un)
}

fn plan(set: &StatefulSet, pods: &[Pod]) -> Plan {
    plan_with(set, set, pods, &[]).0
}

/// The revision name of `set`'s template.
fn rev(set: &StatefulSet) -> String {
    name_of(&new_revision(set, 1, 0).metadata).to_owned()
}

/// One line per step.
fn steps(plan: &Plan) -> Vec<String> {
    plan.steps
        .iter()
        .map(|s| match s {
            Step::CreateClaims { pod, claims } => {
                let names: Vec<&str> = claims.iter().map(|c| name_of(&c.metadata)).collect();
                format!("claims {pod} {names:?}")
            }
            Step::CreatePod(p) => format!("create {}", name_of(&p.metadata)),
            Step::UpdatePod(p) => format!("update {}", name_of(&p.metadata)),
            Step::SetClaimOwners { claim, .. } => format!("owners {claim}"),
            Step::DeletePod { name, reason } => format!("delete {name} {reason:?}"),
        })
        .collect()
}

#[test]
fn ordered_ready_creates_one_pod_at_a_time() {
    let s = set(3);
    let r = rev(&s);
    assert_eq!(steps(&plan(&s, &[])), ["create web-0"]);
    assert_eq!(
        steps(&plan(&s, &[pod(&s, 0, &r)])),
        Vec::<String>::new(),
        "web-0 not ready: wait"
    );
    assert_eq!(
        steps(&plan(&s, &[pod(&s, 0, &r).running()])),
        Vec::<String>::new()
    );
    assert_eq!(steps(&plan(&s, &[pod(&s, 0, &r).ready()])), ["create web-1"]);
    let all = [
        pod(&s, 0, &r).ready(),
        pod(&s, 1, &r).ready(),
        pod(&s, 2, &r).ready(),
    ];
    let p = plan(&s, &all);
    assert!(p.steps.is_empty());
    assert_eq!(p.status.replicas, 3);
    assert_eq!(p.status.ready_replicas, Some(3));
    assert_eq!(p.status.current_revision.as_deref(), Some(r.as_str()));
}

#[test]
fn ordered_ready_waits_for_min_ready_seconds() {
    let s = set(2).min_ready(30);
    let r = rev(&s);
    let fresh = pod(&s, 0, &r).ready_since(now());
    assert!(plan(&s, &[fresh]).steps.is_empty(), "web-0 is not available yet");
    let old = pod(&s, 0, &r).ready();
    assert_eq!(steps(&plan(&s, &[old])), ["create web-1"]);
}

#[test]
fn parallel_creates_every_missing_pod() {
    let s = set(4).parallel();
    let r = rev(&s);
    assert_eq!(
        steps(&plan(&s, &[pod(&s, 1, &r)])),
        ["create web-0", "create web-2", "create web-3"]
    );
}

#[test]
fn ordered_ready_scales_down_from_the_highest_ordinal_one_at_a_time() {
    let s5 = set(5);
    let r = rev(&s5);
    let pods: Vec<Pod> = (0..5).map(|i| pod(&s5, i, &r).ready()).collect();
    let s2 = set(2);
    assert_eq!(steps(&plan(&s2, &pods)), ["delete web-4 ScaleDown"]);
    // web-4 terminating: wait for it to go.
    let mut waiting = pods.clone();
    waiting[4] = waiting[4].clone().terminating();
    assert!(plan(&s2, &waiting).steps.is_empty());
    // Gone: web-3 next.
    assert_eq!(steps(&plan(&s2, &pods[..4])), ["delete web-3 ScaleDown"]);
    // Parallel deletes them all at once.
    assert_eq!(
        steps(&plan(&s2.clone().parallel(), &pods)),
        [
            "delete web-4 ScaleDown",
            "delete web-3 ScaleDown",
            "delete web-2 ScaleDown"
        ]
    );
}

#[test]
fn scale_down_waits_for_unhealthy_pods_unless_it_is_the_first_unhealthy() {
    let s5 = set(5);
    let r = rev(&s5);
    let s3 = set(3);
    // web-3 (condemned) is not ready and is the first unhealthy one: web-4 waits on it?
    // Condemned are processed from the highest: web-4 is healthy → deleted.
    let pods: Vec<Pod> = (0..5)
        .map(|i| {
            if i == 3 {
                pod(&s5, i, &r).running()
            } else {
                pod(&s5, i, &r).ready()
            }
        })
        .collect();
    assert_eq!(steps(&plan(&s3, &pods)), ["delete web-4 ScaleDown"]);
    // web-4 unhealthy while web-3 is the first unhealthy: web-4 must wait.
    let pods: Vec<Pod> = (0..5)
        .map(|i| {
            if i >= 3 {
                pod(&s5, i, &r).running()
            } else {
                pod(&s5, i, &r).ready()
            }
        })
        .collect();
    assert!(plan(&s3, &pods).steps.is_empty());
    // Only web-4 unhealthy: it is the first unhealthy one, so it goes.
    let pods: Vec<Pod> = (0..5)
        .map(|i| {
            if i == 4 {
                pod(&s5, i, &r).running()
            } else {
                pod(&s5, i, &r).ready()
            }
        })
        .collect();
    assert_eq!(steps(&plan(&s3, &pods)), ["delete web-4 ScaleDown"]);
}

#[test]
fn rolling_update_replaces_the_highest_outdated_pod_down_to_the_partition() {
    let old = set(5);
    let new = set(5).image("nginx:2");
    let (r_old, r_new) = (rev(&old), rev(&new));
    let pods: Vec<Pod> = (0..5).map(|i| pod(&old, i, &r_old).ready()).collect();
    let (p, _, un) = plan_with(&new, &old, &pods, &[]);
    assert_eq!(un, r_new);
    assert_eq!(steps(&p), ["delete web-4 Update"]);
    assert_eq!(
        p.status.current_replicas,
        Some(4),
        "one fewer current replica reported"
    );
    // web-4 recreated at the new revision but not ready yet: wait.
    let mut pods2 = pods.clone();
    pods2[4] = pod(&new, 4, &r_new).running();
    assert!(plan_with(&new, &old, &pods2, &[]).0.steps.is_empty());
    // Ready: web-3 next.
    pods2[4] = pod(&new, 4, &r_new).ready();
    assert_eq!(
        steps(&plan_with(&new, &old, &pods2, &[]).0),
        ["delete web-3 Update"]
    );
    // With partition 3, web-2 is never touched.
    let partitioned = new.clone().partition(3);
    pods2[3] = pod(&new, 3, &r_new).ready();
    assert!(
        plan_with(&partitioned, &old.clone().partition(3), &pods2, &[])
            .0
            .steps
            .is_empty()
    );
    // A missing pod below the partition is recreated at the current revision.
    let without_1: Vec<Pod> = pods2
        .iter()
        .filter(|p| name_of(&p.metadata) != "web-1")
        .cloned()
        .collect();
    let (p, cn, _) = plan_with(&partitioned, &old.clone().partition(3), &without_1, &[]);
    let created = p.steps.iter().find_map(|s| match s {
        Step::CreatePod(p) => Some(p.clone()),
        _ => None,
    });
    assert_eq!(created.as_deref().map(get_pod_revision), Some(cn.as_str()));
}

#[test]
fn max_unavailable_replaces_several_pods_at_once() {
    let old = set(5);
    let new = set(5).image("nginx:2").max_unavailable(IntOrString::Int(2));
    let r_old = rev(&old);
    let pods: Vec<Pod> = (0..5).map(|i| pod(&old, i, &r_old).ready()).collect();
    assert_eq!(
        steps(&plan_with(&new, &old, &pods, &[]).0),
        ["delete web-4 Update", "delete web-3 Update"]
    );
    // One already unavailable: one more.
    let mut pods2 = pods.clone();
    pods2[0] = pods2[0].clone().running();
    let parallel = new.clone().parallel();
    assert_eq!(
        steps(&plan_with(&parallel, &old, &pods2, &[]).0),
        ["delete web-4 Update"]
    );
}

#[test]
fn on_delete_never_replaces_pods_itself() {
    let old = set(3).on_delete();
    let new = set(3).image("nginx:2").on_delete();
    let r_old = rev(&old);
    let pods: Vec<Pod> = (0..3).map(|i| pod(&old, i, &r_old).ready()).collect();
    assert!(plan_with(&new, &old, &pods, &[]).0.steps.is_empty());
    // A deleted pod comes back at the update revision.
    let (p, _, un) = plan_with(&new, &old, &pods[..2], &[]);
    let created = p.steps.iter().find_map(|s| match s {
        Step::CreatePod(p) => Some(p.clone()),
        _ => None,
    });
    assert_eq!(created.as_deref().map(get_pod_revision), Some(un.as_str()));
}

#[test]
fn a_failed_pod_is_deleted_then_recreated() {
    let s = set(2);
    let r = rev(&s);
    let pods = [pod(&s, 0, &r).failed(), pod(&s, 1, &r).ready()];
    assert_eq!(steps(&plan(&s, &pods)), ["delete web-0 Finished"]);
    assert_eq!(steps(&plan(&s, &pods[1..])), ["create web-0"]);
}

#[test]
fn claims_are_created_before_their_pod_and_owners_follow_the_policy() {
    let s = set(2).with_claims();
    assert_eq!(
        steps(&plan(&s, &[])),
        ["claims web-0 [\"www-web-0\"]", "create web-0"]
    );
    let r = rev(&s);
    let claim0 = get_persistent_volume_claims(&s, 0)["www"].clone();
    let (p, _, _) = plan_with(&s, &s, &[pod(&s, 0, &r).ready()], std::slice::from_ref(&claim0));
    assert_eq!(steps(&p), ["claims web-1 [\"www-web-1\"]", "create web-1"]);
    // whenDeleted: Delete wants the set as owner of the existing claim.
    let d = s.clone().retention("Delete", "Retain");
    let (p, _, _) = plan_with(
        &d,
        &d,
        &[pod(&d, 0, &rev(&d)).ready()],
        std::slice::from_ref(&claim0),
    );
    assert_eq!(
        steps(&p),
        ["owners www-web-0", "claims web-1 [\"www-web-1\"]", "create web-1"]
    );
}

#[test]
fn a_set_being_deleted_only_reports_status() {
    let mut s = set(3);
    s.metadata.deletion_timestamp = Some(Time(now()));
    let p = plan(&s, &[]);
    assert!(p.steps.is_empty());
    assert_eq!(p.status.replicas, 0);
    assert_eq!(p.status.observed_generation, Some(1));
}

#[test]
fn ordinals_start_at_spec_ordinals_start() {
    let s = set(2).start(3).parallel();
    assert_eq!(steps(&plan(&s, &[])), ["create web-3", "create web-4"]);
    // A pod below the new start is condemned.
    let r = rev(&s);
    let old = pod(&set(3), 2, &r).ready();
    let pods = [old, pod(&s, 3, &r).ready(), pod(&s, 4, &r).ready()];
    assert_eq!(steps(&plan(&s, &pods)), ["delete web-2 ScaleDown"]);
}

#[test]
fn parallel_steps_are_grouped_by_pod_in_plan_order() {
    let s = set(3).parallel().with_claims();
    let p = plan(&s, &[]);
    let groups = crate::statefulset::sync::group_by_pod(p.steps);
    let shape: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            steps(&Plan {
                steps: g.clone(),
                status: Default::default(),
            })
        })
        .collect();
    assert_eq!(
        shape,
        [
            ["claims web-0 [\"www-web-0\"]", "create web-0"],
            ["claims web-1 [\"www-web-1\"]", "create web-1"],
            ["claims web-2 [\"www-web-2\"]", "create web-2"],
        ]
    );
}
