//! The Canary's journal sentences: the message functions by their exact
//! text, and [`decisions::transition`] over the transitions of
//! [`plan::advance`] that step, fail, roll back and promote.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use crate::canary::checks::{CheckOutcome, CheckResult};
use crate::canary::decisions::{self, Verdict};
use crate::canary::plan::{Observed, Phase, PrimaryState, Split, TargetState, advance};
use crate::canary::types::{ABORT_ANNOTATION, Canary, ThresholdRange};
use crate::runtime::decision;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + secs).unwrap()
}

/// Canary `podinfo` (threshold 3, stepWeight 10, maxWeight 30, one metric:
/// request-success-rate min 99) in `phase` at `weight` with `failed` checks,
/// its last step at 0 s.
fn canary(phase: Phase, weight: i32, failed: i32) -> Canary {
    let mut c: Canary = serde_json::from_value(json!({
        "apiVersion": "rollouts.miniplane.dev/v1beta1", "kind": "Canary",
        "metadata": {"name": "podinfo", "namespace": "default", "generation": 1, "uid": "u1"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"},
            "service": {"port": 9898},
            "analysis": {
                "interval": "1m", "threshold": 3, "stepWeight": 10, "maxWeight": 30,
                "metrics": [{"name": "request-success-rate", "thresholdRange": {"min": 99}}],
            },
        },
    }))
    .unwrap();
    let status = c.status.get_or_insert_with(Default::default);
    status.phase = Some(phase.as_str().into());
    status.canary_weight = weight;
    status.failed_checks = failed;
    status.last_applied_spec = Some("rev2".into());
    status.last_promoted_spec = Some("rev1".into());
    status.last_transition_time = Some(Time(at(0)));
    c
}

/// The target on rev2 and the primary on rev1, both ready; `checks` evaluated.
fn observed(c: &Canary, checks: Vec<CheckResult>) -> Observed<'_> {
    let weight = c.status.as_ref().map_or(0, |s| s.canary_weight);
    Observed {
        canary: c,
        target: Some(TargetState {
            revision: "rev2".into(),
            replicas: 2,
            ready: true,
        }),
        primary: Some(PrimaryState {
            replicas: 2,
            ready: true,
            revision: Some("rev1".into()),
        }),
        route: Some(Split::with_canary(weight)),
        hooks: BTreeMap::new(),
        checks: Some(checks),
    }
}

fn passed(metric: &str, value: f64) -> CheckResult {
    CheckResult {
        metric: metric.into(),
        outcome: CheckOutcome::Passed { value },
    }
}

fn failed(value: f64) -> CheckResult {
    CheckResult {
        metric: "request-success-rate".into(),
        outcome: CheckOutcome::Failed {
            value,
            message: format!("Halt podinfo.default advancement request-success-rate {value:.2} < 99"),
        },
    }
}

/// The decisions of one transition of `obs` one interval after the last step.
fn decided(obs: &Observed<'_>) -> Vec<(&'static str, String)> {
    let plan = advance(obs, at(60));
    decisions::transition(obs, &plan)
        .into_iter()
        .map(|d| (d.function, d.message))
        .collect()
}

#[test]
fn the_messages_read_as_sentences() {
    let min = ThresholdRange {
        min: Some(99.0),
        max: None,
    };
    let cases = [
        (
            decisions::metric_failed("request-success-rate", 79.789, &min, false, 1, 2),
            "runAnalysis",
            "request-success-rate 79.79 < min 99: failed check 1 of threshold 2",
        ),
        (
            decisions::advance_weight(Verdict::InRange(2), 10, 20, 10, 50),
            "advanceCanary",
            "all 2 metrics in range: weight 10 → 20 (stepWeight 10, maxWeight 50)",
        ),
        (
            decisions::advance_iteration(Verdict::InRange(1), 1, 2, 10),
            "advanceCanary",
            "the 1 metric in range: iteration 1 → 2 of 10",
        ),
        (
            decisions::rollback("failedChecks 2 ≥ threshold 2", "podinfo"),
            "rollback",
            "failedChecks 2 ≥ threshold 2: routing 100% to primary, scaling podinfo to 0",
        ),
        (
            decisions::promote("weight 50 = maxWeight 50", "podinfo-primary"),
            "promote",
            "weight 50 = maxWeight 50: copying the template to podinfo-primary",
        ),
        (
            decisions::no_values("request-success-rate"),
            "runAnalysis",
            "request-success-rate returned no values (the canary is not receiving traffic yet): halting without a failed check",
        ),
    ];
    for (d, function, message) in cases {
        assert_eq!(d, decision(function, message.to_string()));
    }
}

#[test]
fn a_passing_step_records_the_next_weight() {
    let c = canary(Phase::Progressing, 10, 0);
    let obs = observed(
        &c,
        vec![passed("request-success-rate", 100.0), passed("latency", 0.3)],
    );
    assert_eq!(
        decided(&obs),
        [(
            "advanceCanary",
            "all 2 metrics in range: weight 10 → 20 (stepWeight 10, maxWeight 30)".to_string()
        )]
    );
}

#[test]
fn the_first_step_checks_nothing() {
    let c = canary(Phase::Progressing, 0, 0);
    let obs = observed(&c, vec![failed(50.0)]);
    assert_eq!(
        decided(&obs),
        [(
            "advanceCanary",
            "first analysis step: weight 0 → 10 (stepWeight 10, maxWeight 30)".to_string()
        )]
    );
}

#[test]
fn a_failed_check_below_the_threshold_holds_the_weight() {
    let c = canary(Phase::Progressing, 10, 1);
    assert_eq!(
        decided(&observed(&c, vec![failed(78.52)])),
        [(
            "runAnalysis",
            "request-success-rate 78.52 < min 99: failed check 2 of threshold 3".to_string()
        )]
    );
}

#[test]
fn the_failed_check_at_the_threshold_rolls_back() {
    let c = canary(Phase::Progressing, 20, 2);
    assert_eq!(
        decided(&observed(&c, vec![failed(78.52)])),
        [
            (
                "runAnalysis",
                "request-success-rate 78.52 < min 99: failed check 3 of threshold 3".to_string()
            ),
            (
                "rollback",
                "failedChecks 3 ≥ threshold 3: routing 100% to primary, scaling podinfo to 0".to_string()
            ),
        ]
    );
}

#[test]
fn an_abort_rolls_back() {
    let mut c = canary(Phase::Progressing, 20, 0);
    c.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(ABORT_ANNOTATION.into(), "true".into());
    let found = decided(&observed(&c, Vec::new()));
    assert_eq!(
        found.last().unwrap(),
        &(
            "rollback",
            "aborted by the user: routing 100% to primary, scaling podinfo to 0".to_string()
        )
    );
}

#[test]
fn the_step_at_max_weight_promotes() {
    let c = canary(Phase::Progressing, 30, 0);
    assert_eq!(
        decided(&observed(&c, vec![passed("request-success-rate", 100.0)])),
        [(
            "promote",
            "weight 30 = maxWeight 30: copying the template to podinfo-primary".to_string()
        )]
    );
}

#[test]
fn no_values_halt_the_step() {
    let c = canary(Phase::Progressing, 10, 0);
    let halt = CheckResult {
        metric: "request-success-rate".into(),
        outcome: CheckOutcome::NoValues {
            message: "Halt advancement no values found".into(),
        },
    };
    assert_eq!(
        decided(&observed(&c, vec![halt])),
        [(
            "runAnalysis",
            "request-success-rate returned no values (the canary is not receiving traffic yet): halting without a failed check"
                .to_string()
        )]
    );
}

#[test]
fn a_sync_between_steps_decides_nothing() {
    let c = canary(Phase::Progressing, 10, 0);
    let obs = observed(&c, Vec::new());
    let plan = advance(&obs, at(30));
    assert_eq!(decisions::transition(&obs, &plan), []);
}
