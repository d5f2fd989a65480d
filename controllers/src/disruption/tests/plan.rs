//! Table tests of [`crate::disruption::plan`], after upstream's `disruption_test.go`
//! (`TestNoSelector`, `TestUnavailable`, `TestIntegerMaxUnavailable`, `TestBasicFinderFunctions`
//! in spirit: the counts a budget reaches for a given set of pods and controllers).

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::disruption::plan::*;

fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).unwrap()
}

fn ago(secs: i64) -> Timestamp {
    now() - SignedDuration::from_secs(secs)
}

fn pod(name: &str, ready: bool) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: None,
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    })
}

fn deleting(name: &str) -> Arc<Pod> {
    let mut p = (*pod(name, true)).clone();
    p.metadata.deletion_timestamp = Some(Time(ago(1)));
    Arc::new(p)
}

fn pdb(min: Option<IntOrString>, max: Option<IntOrString>) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some("web".into()),
            generation: Some(1),
            ..Default::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            min_available: min,
            max_unavailable: max,
            ..Default::default()
        }),
        status: Some(PodDisruptionBudgetStatus::default()),
    }
}

fn scale(count: i32) -> Result<ExpectedScale, String> {
    Ok(ExpectedScale {
        count,
        unmanaged: Vec::new(),
    })
}

fn int(n: i32) -> Option<IntOrString> {
    Some(IntOrString::Int(n))
}

fn pct(s: &str) -> Option<IntOrString> {
    Some(IntOrString::String(s.into()))
}

#[test]
fn expected_and_desired_counts_follow_the_budget_kind() {
    // (budget, pods, scale of their controllers) → (expected, desired)
    let cases = [
        (pdb(int(2), None), 3, scale(5), (3, 2)),
        (pdb(pct("50%"), None), 3, scale(3), (3, 2)),
        (pdb(pct("34%"), None), 3, scale(3), (3, 2)),
        (pdb(None, int(1)), 3, scale(3), (3, 2)),
        (pdb(None, pct("50%")), 3, scale(3), (3, 1)),
        (pdb(None, int(5)), 3, scale(3), (3, 0)),
        (pdb(None, None), 3, scale(3), (0, 0)),
    ];
    for (budget, pods, scale, (expected, desired)) in cases {
        let got = get_expected_pod_count(&budget, pods, &scale).unwrap();
        assert_eq!(
            (got.expected, got.desired_healthy),
            (expected, desired),
            "{:?}",
            budget.spec
        );
    }
}

#[test]
fn an_integer_min_available_needs_no_controller() {
    let unknown = Err("found no controllers for pod \"x\"".to_string());
    assert!(get_expected_pod_count(&pdb(int(1), None), 2, &unknown).is_ok());
    assert_eq!(
        get_expected_pod_count(&pdb(pct("50%"), None), 2, &unknown).unwrap_err(),
        "found no controllers for pod \"x\""
    );
}

#[test]
fn percentages_round_up() {
    assert_eq!(scaled_value(&IntOrString::String("10%".into()), 3), Ok(1));
    assert_eq!(scaled_value(&IntOrString::String("100%".into()), 7), Ok(7));
    assert_eq!(scaled_value(&IntOrString::String("0%".into()), 7), Ok(0));
    assert!(scaled_value(&IntOrString::String("x".into()), 7).is_err());
}

#[test]
fn healthy_pods_are_ready_not_deleting_and_not_just_evicted() {
    let pods = [
        pod("a", true),
        pod("b", false),
        deleting("c"),
        pod("d", true),
        pod("e", true),
    ];
    let mut disrupted = BTreeMap::new();
    disrupted.insert("d".to_string(), Time(ago(10)));
    disrupted.insert("e".to_string(), Time(ago(200)));
    // e's eviction is older than the deletion timeout: it counts again.
    assert_eq!(count_healthy_pods(&pods, &disrupted, now()), 2);
}

#[test]
fn disrupted_pod_entries_expire_after_the_deletion_timeout() {
    let mut budget = pdb(int(1), None);
    let mut map = BTreeMap::new();
    map.insert("fresh".to_string(), Time(ago(30)));
    map.insert("stale".to_string(), Time(ago(121)));
    map.insert("deleting".to_string(), Time(ago(5)));
    map.insert("gone".to_string(), Time(ago(5)));
    budget.status.as_mut().unwrap().disrupted_pods = Some(map);
    let pods = [pod("fresh", true), pod("stale", true), deleting("deleting")];
    let got = build_disrupted_pod_map(&pods, &budget, now());
    assert_eq!(got.kept.keys().collect::<Vec<_>>(), ["fresh"]);
    assert_eq!(got.not_deleted, ["stale"]);
    // Looked at again when the fresh entry expires: 90 s from now.
    assert_eq!(got.recheck, Some(now() + SignedDuration::from_secs(90)));
}

#[test]
fn the_status_allows_healthy_minus_desired_and_says_so() {
    let budget = pdb(int(2), None);
    let expected = get_expected_pod_count(&budget, 3, &scale(3)).unwrap();
    let status = update_pdb_status(&budget, 3, &expected, BTreeMap::new(), now()).unwrap();
    assert_eq!(
        (
            status.current_healthy,
            status.desired_healthy,
            status.expected_pods,
            status.disruptions_allowed
        ),
        (3, 2, 3, 1)
    );
    assert_eq!(status.observed_generation, Some(1));
    let c = &status.conditions.as_ref().unwrap()[0];
    assert_eq!(
        (c.type_.as_str(), c.status.as_str(), c.reason.as_str()),
        ("DisruptionAllowed", "True", "SufficientPods")
    );

    // Written once, it is up to date: nothing more to write.
    let mut written = budget.clone();
    written.status = Some(status);
    assert_eq!(
        update_pdb_status(&written, 3, &expected, BTreeMap::new(), now()),
        None
    );

    // One pod less ready: no disruption left, the condition flips.
    let status = update_pdb_status(&written, 2, &expected, BTreeMap::new(), ago(-5)).unwrap();
    assert_eq!(status.disruptions_allowed, 0);
    let c = &status.conditions.as_ref().unwrap()[0];
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "InsufficientPods")
    );
    assert_eq!(c.last_transition_time, Time(ago(-5)));
}

#[test]
fn no_disruption_is_allowed_while_no_pod_is_expected() {
    let budget = pdb(int(0), None);
    let expected = get_expected_pod_count(&budget, 0, &scale(0)).unwrap();
    let status = update_pdb_status(&budget, 0, &expected, BTreeMap::new(), now()).unwrap();
    assert_eq!(status.disruptions_allowed, 0);
}

#[test]
fn a_failed_sync_allows_no_disruption() {
    let mut budget = pdb(pct("50%"), None);
    budget.status.as_mut().unwrap().disruptions_allowed = 3;
    let status = fail_safe(&budget, "found no controllers for pod \"x\"", now());
    assert_eq!(status.disruptions_allowed, 0);
    let c = &status.conditions.as_ref().unwrap()[0];
    assert_eq!((c.status.as_str(), c.reason.as_str()), ("False", "SyncFailed"));
    assert_eq!(c.message, "found no controllers for pod \"x\"");
}
