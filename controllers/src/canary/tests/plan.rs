//! Table tests of [`plan::advance`]: one transition at a time, from a
//! Canary in a given phase and what the caches show.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Value, json};

use crate::canary::checks::{CheckOutcome, CheckResult};
use crate::canary::objects::HookState;
use crate::canary::plan::{
    self, Observed, Phase, PrimaryState, Split, Step, TargetState, advance, max_weight, next_step_weight,
    parse_go_duration,
};
use crate::canary::types::{ABORT_ANNOTATION, Canary, PROMOTE_ANNOTATION, RETRY_ANNOTATION};
use crate::runtime::EventType;

/// 2023-11-14T22:13:20Z.
fn t0() -> Timestamp {
    Timestamp::from_second(1_700_000_000).unwrap()
}

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + secs).unwrap()
}

/// A Canary `podinfo` targeting Deployment `podinfo`, with `analysis`
/// merged over interval 1m, threshold 3, stepWeight 10, maxWeight 30.
fn canary(analysis: Value) -> Canary {
    let mut a = json!({"interval": "1m", "threshold": 3, "stepWeight": 10, "maxWeight": 30});
    if let (Some(a), Some(extra)) = (a.as_object_mut(), analysis.as_object()) {
        for (k, v) in extra {
            if v.is_null() {
                a.remove(k);
            } else {
                a.insert(k.clone(), v.clone());
            }
        }
    }
    serde_json::from_value(json!({
        "apiVersion": "rollouts.miniplane.dev/v1beta1", "kind": "Canary",
        "metadata": {"name": "podinfo", "namespace": "default", "generation": 1, "uid": "u1"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"},
            "service": {"port": 9898},
            "analysis": a,
        },
    }))
    .unwrap()
}

/// `c` in `phase` with weight/failed/iterations, analysing revision `rev`,
/// last step at `last`.
fn in_phase(
    mut c: Canary,
    phase: Phase,
    weight: i32,
    failed: i32,
    iterations: i32,
    last: Timestamp,
) -> Canary {
    let status = c.status.get_or_insert_with(Default::default);
    status.phase = Some(phase.as_str().into());
    status.canary_weight = weight;
    status.failed_checks = failed;
    status.iterations = iterations;
    status.last_applied_spec = Some("rev2".into());
    status.last_promoted_spec = Some("rev1".into());
    status.last_transition_time = Some(Time(last));
    c
}

fn annotated(mut c: Canary, key: &str) -> Canary {
    c.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(key.into(), "true".into());
    c
}

fn target(revision: &str, replicas: i32, ready: bool) -> Option<TargetState> {
    Some(TargetState {
        revision: revision.into(),
        replicas,
        ready,
    })
}

fn primary(revision: &str, ready: bool) -> Option<PrimaryState> {
    Some(PrimaryState {
        replicas: 2,
        ready,
        revision: Some(revision.into()),
    })
}

/// The canary analysing rev2 with 2 ready pods, primary on rev1 ready, route at `weight`.
fn observed(c: &Canary) -> Observed<'_> {
    let weight = c.status.as_ref().map_or(0, |s| s.canary_weight);
    Observed {
        canary: c,
        target: target("rev2", 2, true),
        primary: primary("rev1", true),
        route: Some(Split::with_canary(weight)),
        hooks: BTreeMap::new(),
        checks: Some(Vec::new()),
    }
}

fn passed(metric: &str, value: f64) -> CheckResult {
    CheckResult {
        metric: metric.into(),
        outcome: CheckOutcome::Passed { value },
    }
}

fn failed(metric: &str, value: f64) -> CheckResult {
    CheckResult {
        metric: metric.into(),
        outcome: CheckOutcome::Failed {
            value,
            message: format!("Halt podinfo.default advancement {metric} {value:.2} < 99"),
        },
    }
}

fn phase(d: &plan::Decision) -> Phase {
    Phase::of(&d.status)
}

fn events(d: &plan::Decision) -> Vec<String> {
    d.steps
        .iter()
        .filter_map(|s| match s {
            Step::Event(_, m) => Some(m.clone()),
            _ => None,
        })
        .collect()
}

fn routes(d: &plan::Decision) -> Vec<(Split, bool)> {
    d.steps
        .iter()
        .filter_map(|s| match s {
            Step::SetRoute { split, ab_testing } => Some((*split, *ab_testing)),
            _ => None,
        })
        .collect()
}

fn has(d: &plan::Decision, step: &Step) -> bool {
    d.steps.contains(step)
}

#[test]
fn go_durations_parse() {
    let cases = [
        ("1m", Some(60_000)),
        ("30s", Some(30_000)),
        ("1m30s", Some(90_000)),
        ("1.5h", Some(5_400_000)),
        ("500ms", Some(500)),
        ("0", Some(0)),
        ("", None),
        ("10", None),
        ("5x", None),
        ("-1s", None),
    ];
    for (s, want) in cases {
        assert_eq!(parse_go_duration(s).map(|d| d.as_millis() as u64), want, "{s}");
    }
}

#[test]
fn step_weights_follow_flagger() {
    let c = canary(json!({"stepWeight": null, "maxWeight": null, "stepWeights": [1, 5, 20, 50]}));
    assert_eq!(max_weight(&c), 50);
    let mut w = 0;
    let mut seen = Vec::new();
    while w < max_weight(&c) {
        w += next_step_weight(&c, w);
        seen.push(w);
    }
    assert_eq!(seen, [1, 5, 20, 50]);
    // Defaults: no maxWeight is all the traffic; no step at all is 10.
    let c = canary(json!({"stepWeight": null, "maxWeight": null}));
    assert_eq!((max_weight(&c), next_step_weight(&c, 0)), (100, 10));
}

#[test]
fn first_sight_creates_the_primary_services_and_route_then_waits_for_the_primary() {
    let c = canary(json!({}));
    let mut obs = observed(&c);
    obs.target = target("rev1", 2, true);
    obs.primary = None;
    obs.route = None;
    let d = advance(&obs, t0());
    assert_eq!(phase(&d), Phase::Initializing);
    assert!(has(&d, &Step::ApplyPrimary { replicas: None }));
    assert!(has(&d, &Step::ApplyServices));
    assert_eq!(routes(&d), [(Split::PRIMARY, false)]);
    assert!(!d.steps.iter().any(|s| matches!(s, Step::ScaleTarget(_))));

    // The primary is ready: the target goes to 0, Initialized.
    let c = d.status.clone();
    let c = Canary {
        status: Some(c),
        ..canary(json!({}))
    };
    let mut obs = observed(&c);
    obs.target = target("rev1", 2, true);
    obs.primary = primary("rev1", true);
    obs.route = Some(Split::PRIMARY);
    let d = advance(&obs, at(5));
    assert_eq!(phase(&d), Phase::Initialized);
    assert!(has(&d, &Step::ScaleTarget(0)));
    assert_eq!(d.status.last_applied_spec.as_deref(), Some("rev1"));
    assert_eq!(d.status.last_promoted_spec.as_deref(), Some("rev1"));
    assert_eq!(events(&d), ["Initialization done! podinfo.default"]);
    assert_eq!(d.status.conditions[0].reason.as_deref(), Some("Initialized"));
    assert_eq!(d.status.conditions[0].status, "True");
}

#[test]
fn a_new_revision_scales_the_target_up_to_the_primarys_replicas() {
    let mut c = in_phase(canary(json!({})), Phase::Succeeded, 0, 0, 0, t0());
    c.status.as_mut().unwrap().last_applied_spec = Some("rev1".into());
    let mut obs = observed(&c);
    obs.target = target("rev2", 0, true);
    let d = advance(&obs, at(30));
    assert_eq!(phase(&d), Phase::Progressing);
    assert!(has(&d, &Step::ScaleTarget(2)));
    assert_eq!(d.status.last_applied_spec.as_deref(), Some("rev2"));
    assert_eq!(d.status.last_transition_time, Some(Time(at(30))));
    assert_eq!(events(&d), ["New revision detected! Scaling up podinfo.default"]);
}

/// Drives a canary from Progressing at weight 0 through every tick with
/// passing checks: the weights step 10, 20, 30, then the promotion.
#[test]
fn a_good_canary_steps_to_max_weight_then_promotes() {
    let mut c = in_phase(canary(json!({})), Phase::Progressing, 0, 0, 0, t0());
    let mut weights = Vec::new();
    let mut now = t0();
    for _ in 0..10 {
        now += Duration::from_secs(60);
        let mut obs = observed(&c);
        obs.checks = Some(vec![passed("request-success-rate", 100.0)]);
        let d = advance(&obs, now);
        for (split, _) in routes(&d) {
            weights.push(split.canary);
        }
        c.status = Some(d.status.clone());
        if phase(&d) == Phase::Promoting {
            assert!(has(&d, &Step::ApplyPrimary { replicas: Some(2) }));
            assert!(
                events(&d)
                    .contains(&"Copying podinfo.default template spec to podinfo-primary.default".into())
            );
            break;
        }
    }
    assert_eq!(weights, [10, 20, 30]);
    assert_eq!(Phase::of(c.status.as_ref().unwrap()), Phase::Promoting);

    // The primary has the new template but is not ready: wait.
    let mut obs = observed(&c);
    obs.primary = primary("rev2", false);
    obs.route = Some(Split::with_canary(30));
    let d = advance(&obs, now + Duration::from_secs(1));
    assert_eq!(phase(&d), Phase::Promoting);
    assert!(routes(&d).is_empty());

    // Ready: all traffic back to the primary.
    obs.primary = primary("rev2", true);
    let d = advance(&obs, now + Duration::from_secs(2));
    assert_eq!(phase(&d), Phase::Finalising);
    assert_eq!(routes(&d), [(Split::PRIMARY, false)]);
    assert_eq!(events(&d), ["Routing all traffic to primary"]);

    // Finalising: the target goes to 0; Succeeded.
    c.status = Some(d.status);
    let mut obs = observed(&c);
    obs.primary = primary("rev2", true);
    obs.route = Some(Split::PRIMARY);
    let d = advance(&obs, now + Duration::from_secs(3));
    assert_eq!(phase(&d), Phase::Succeeded);
    assert!(has(&d, &Step::ScaleTarget(0)));
    assert_eq!(d.status.last_promoted_spec.as_deref(), Some("rev2"));
    assert_eq!(events(&d), ["Promotion completed! Scaling down podinfo.default"]);
}

#[test]
fn no_step_before_the_interval_has_passed() {
    let c = in_phase(canary(json!({})), Phase::Progressing, 10, 0, 0, t0());
    let d = advance(&observed(&c), at(59));
    assert!(d.steps.is_empty(), "{:?}", d.steps);
    assert_eq!(d.requeue_after, Some(Duration::from_secs(1)));
    assert!(!plan::analysis_due(&c, at(59)));
    assert!(plan::analysis_due(&c, at(60)));
}

#[test]
fn failed_checks_count_and_roll_back_at_exactly_the_threshold() {
    let mut c = in_phase(canary(json!({})), Phase::Progressing, 10, 0, 0, t0());
    let mut now = t0();
    for n in 1..=3 {
        now += Duration::from_secs(60);
        let mut obs = observed(&c);
        obs.checks = Some(vec![failed("request-success-rate", 78.52)]);
        let d = advance(&obs, now);
        assert_eq!(d.status.failed_checks, n);
        let ev = events(&d);
        assert_eq!(
            ev[0],
            "Halt podinfo.default advancement request-success-rate 78.52 < 99"
        );
        if n < 3 {
            assert_eq!(phase(&d), Phase::Progressing);
            assert!(routes(&d).is_empty(), "a failed check holds the weight");
        } else {
            assert_eq!(phase(&d), Phase::Failed);
            assert_eq!(routes(&d), [(Split::PRIMARY, false)]);
            assert!(has(&d, &Step::ScaleTarget(0)));
            assert!(!d.steps.iter().any(|s| matches!(s, Step::ApplyPrimary { .. })));
            assert_eq!(
                ev[1..],
                [
                    "Rolling back podinfo.default failed checks threshold reached 3".to_string(),
                    "Canary failed! Scaling down podinfo.default".to_string(),
                ]
            );
            assert_eq!(d.status.canary_weight, 0);
            assert_eq!(d.status.conditions[0].status, "False");
        }
        c.status = Some(d.status);
    }
}

#[test]
fn no_values_halt_without_counting_a_failed_check() {
    let c = in_phase(canary(json!({})), Phase::Progressing, 10, 1, 0, t0());
    let mut obs = observed(&c);
    obs.checks = Some(vec![CheckResult {
        metric: "request-success-rate".into(),
        outcome: CheckOutcome::NoValues {
            message: "Halt advancement no values found".into(),
        },
    }]);
    let d = advance(&obs, at(60));
    assert_eq!(
        (phase(&d), d.status.failed_checks, d.status.canary_weight),
        (Phase::Progressing, 1, 10)
    );
}

#[test]
fn a_failing_pre_rollout_hook_keeps_the_rollout_from_starting() {
    let hooks = json!([{"name": "smoke", "type": "pre-rollout",
        "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "t", "image": "busybox"}]}}}}}]);
    let mut c = in_phase(canary(json!({"hooks": hooks})), Phase::Progressing, 0, 0, 0, t0());
    // Entering Progressing without a Job: it is started.
    let mut obs = observed(&c);
    obs.hooks = BTreeMap::from([("smoke".to_string(), HookState::Missing)]);
    let d = advance(&obs, at(1));
    assert!(has(&d, &Step::RunHook("smoke".into())));

    let mut now = t0();
    for n in 1..=3 {
        now += Duration::from_secs(60);
        let mut obs = observed(&c);
        obs.hooks = BTreeMap::from([("smoke".to_string(), HookState::Failed)]);
        let d = advance(&obs, now);
        assert_eq!(d.status.failed_checks, n);
        assert_eq!(d.status.canary_weight, 0, "the weight never moves");
        assert!(
            routes(&d).iter().all(|(s, _)| *s == Split::PRIMARY),
            "{:?}",
            routes(&d)
        );
        assert!(
            events(&d).contains(&"Halt podinfo.default advancement pre-rollout check smoke failed".into())
        );
        c.status = Some(d.status);
    }
    assert_eq!(Phase::of(c.status.as_ref().unwrap()), Phase::Failed);

    // A succeeded hook lets the first step happen.
    let c = in_phase(canary(json!({"hooks": hooks})), Phase::Progressing, 0, 0, 0, t0());
    let mut obs = observed(&c);
    obs.hooks = BTreeMap::from([("smoke".to_string(), HookState::Succeeded)]);
    let d = advance(&obs, at(60));
    assert_eq!(d.status.canary_weight, 10);
    assert!(events(&d).contains(&"Pre-rollout check smoke passed".into()));
}

#[test]
fn confirm_promotion_blocks_until_the_promote_annotation() {
    let hooks = json!([{"name": "approve", "type": "confirm-promotion"}]);
    let c = in_phase(
        canary(json!({"hooks": hooks})),
        Phase::Progressing,
        30,
        0,
        0,
        t0(),
    );
    let mut obs = observed(&c);
    obs.checks = Some(vec![passed("request-success-rate", 100.0)]);
    let d = advance(&obs, at(60));
    assert_eq!(phase(&d), Phase::WaitingPromotion);
    assert!(!d.steps.iter().any(|s| matches!(s, Step::ApplyPrimary { .. })));
    assert!(
        events(&d)
            .contains(&"Halt podinfo.default advancement waiting for promotion approval approve".into())
    );

    // Still blocked a tick later (and the checks still run).
    let c = Canary {
        status: Some(d.status),
        ..c
    };
    let mut obs = observed(&c);
    obs.checks = Some(vec![passed("request-success-rate", 100.0)]);
    let d = advance(&obs, at(120));
    assert_eq!(phase(&d), Phase::WaitingPromotion);

    // The annotation promotes at once, between ticks too, and is removed.
    let c = annotated(
        Canary {
            status: Some(d.status),
            ..c
        },
        PROMOTE_ANNOTATION,
    );
    let d = advance(&observed(&c), at(130));
    assert_eq!(phase(&d), Phase::Promoting);
    assert!(has(&d, &Step::RemoveAnnotation(PROMOTE_ANNOTATION)));
    assert!(has(&d, &Step::ApplyPrimary { replicas: Some(2) }));
}

#[test]
fn a_confirm_promotion_job_opens_the_gate_when_it_succeeds() {
    let hooks = json!([{"name": "approve", "type": "confirm-promotion",
        "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "t", "image": "busybox"}]}}}}}]);
    let c = in_phase(
        canary(json!({"hooks": hooks})),
        Phase::Progressing,
        30,
        0,
        0,
        t0(),
    );
    let mut obs = observed(&c);
    obs.hooks = BTreeMap::from([("approve".to_string(), HookState::Missing)]);
    let d = advance(&obs, at(60));
    assert_eq!(phase(&d), Phase::WaitingPromotion);
    assert!(has(&d, &Step::RunHook("approve".into())));
    let c = Canary {
        status: Some(d.status),
        ..c
    };
    let mut obs = observed(&c);
    obs.hooks = BTreeMap::from([("approve".to_string(), HookState::Succeeded)]);
    let d = advance(&obs, at(120));
    assert_eq!(phase(&d), Phase::Promoting);
}

#[test]
fn blue_green_keeps_all_traffic_on_the_primary_during_iterations_then_switches_at_once() {
    let mut c = in_phase(
        canary(json!({"stepWeight": null, "maxWeight": null, "iterations": 3})),
        Phase::Progressing,
        0,
        0,
        0,
        t0(),
    );
    let mut now = t0();
    let mut splits = Vec::new();
    for _ in 0..10 {
        now += Duration::from_secs(60);
        let mut obs = observed(&c);
        obs.route = Some(if c.status.as_ref().unwrap().iterations > 3 {
            Split::CANARY
        } else {
            Split::PRIMARY
        });
        obs.checks = Some(vec![passed("request-success-rate", 100.0)]);
        let d = advance(&obs, now);
        splits.extend(routes(&d).into_iter().map(|(s, _)| s.canary));
        let p = phase(&d);
        c.status = Some(d.status);
        if p == Phase::Promoting {
            break;
        }
    }
    let status = c.status.unwrap();
    assert_eq!(Phase::of(&status), Phase::Promoting);
    assert_eq!(status.iterations, 4);
    assert_eq!(splits, [100], "0% until the switch, then 100% at once");
}

#[test]
fn ab_testing_routes_the_match_to_the_canary() {
    let c = in_phase(
        canary(json!({"stepWeight": null, "maxWeight": null, "iterations": 2,
            "match": [{"headers": [{"name": "x-canary", "value": "insider"}]}]})),
        Phase::Progressing,
        0,
        0,
        0,
        t0(),
    );
    let mut obs = observed(&c);
    obs.route = None;
    let d = advance(&obs, at(60));
    assert_eq!(routes(&d), [(Split::PRIMARY, true)]);
    assert_eq!(d.status.iterations, 1);
}

#[test]
fn a_new_revision_during_analysis_restarts_it() {
    let c = in_phase(canary(json!({})), Phase::Progressing, 20, 1, 0, t0());
    let mut obs = observed(&c);
    obs.target = target("rev3", 2, true);
    let d = advance(&obs, at(10));
    assert_eq!(phase(&d), Phase::Progressing);
    assert_eq!(routes(&d)[0], (Split::PRIMARY, false));
    assert_eq!(
        (
            d.status.canary_weight,
            d.status.failed_checks,
            d.status.last_applied_spec.as_deref()
        ),
        (0, 0, Some("rev3"))
    );
    assert_eq!(d.status.last_transition_time, Some(Time(at(10))));
    assert_eq!(
        events(&d)[0],
        "New revision detected! Restarting analysis for podinfo.default"
    );
}

#[test]
fn abort_rolls_back_and_retry_restarts_the_analysis() {
    let c = annotated(
        in_phase(canary(json!({})), Phase::Progressing, 20, 0, 0, t0()),
        ABORT_ANNOTATION,
    );
    let d = advance(&observed(&c), at(10));
    assert_eq!(phase(&d), Phase::Failed);
    assert!(has(&d, &Step::RemoveAnnotation(ABORT_ANNOTATION)));
    assert_eq!(events(&d)[0], "Rolling back podinfo.default aborted by user");
    assert_eq!(routes(&d), [(Split::PRIMARY, false)]);

    let c = annotated(
        in_phase(canary(json!({})), Phase::Failed, 0, 3, 0, t0()),
        RETRY_ANNOTATION,
    );
    let mut obs = observed(&c);
    obs.target = target("rev2", 0, false);
    let d = advance(&obs, at(100));
    assert_eq!(phase(&d), Phase::Progressing);
    assert_eq!(d.status.failed_checks, 0);
    assert!(has(&d, &Step::RemoveAnnotation(RETRY_ANNOTATION)));
    assert!(has(&d, &Step::DeleteHookJobs));
    assert!(has(&d, &Step::ScaleTarget(2)));

    // Retry outside Failed: only the annotation goes.
    let c = annotated(
        in_phase(canary(json!({})), Phase::Succeeded, 0, 0, 0, t0()),
        RETRY_ANNOTATION,
    );
    let mut obs = observed(&c);
    obs.target = target("rev2", 0, false);
    obs.route = Some(Split::PRIMARY);
    let d = advance(&obs, at(100));
    assert_eq!(d.steps, [Step::RemoveAnnotation(RETRY_ANNOTATION)]);
}

#[test]
fn the_progress_deadline_rolls_back_a_canary_that_never_gets_ready() {
    let c = in_phase(canary(json!({})), Phase::Progressing, 0, 0, 0, t0());
    let mut obs = observed(&c);
    obs.target = target("rev2", 2, false);
    let d = advance(&obs, at(599));
    assert_eq!(phase(&d), Phase::Progressing);
    let d = advance(&obs, at(600));
    assert_eq!(phase(&d), Phase::Failed);
    assert!(events(&d)[0].contains("progress deadline exceeded"));
}

#[test]
fn skip_analysis_promotes_a_new_revision_at_once() {
    let mut c = in_phase(canary(json!({})), Phase::Succeeded, 0, 0, 0, t0());
    c.spec.skip_analysis = true;
    c.status.as_mut().unwrap().last_applied_spec = Some("rev1".into());
    let d = advance(&observed(&c), at(5));
    assert_eq!(phase(&d), Phase::Promoting);
    assert!(has(&d, &Step::ApplyPrimary { replicas: Some(2) }));
}

#[test]
fn stable_phases_keep_all_traffic_on_the_primary_and_the_target_at_zero() {
    let c = in_phase(canary(json!({})), Phase::Failed, 0, 3, 0, t0());
    let mut obs = observed(&c);
    obs.route = Some(Split::with_canary(20));
    obs.target = target("rev2", 2, true);
    let d = advance(&obs, at(5));
    assert_eq!(routes(&d), [(Split::PRIMARY, false)]);
    assert!(has(&d, &Step::ScaleTarget(0)));
    assert_eq!(d.requeue_after, None);
    assert!(events(&d).is_empty());
    let _ = EventType::Normal;
}
