//! The sentences a Canary sync records in the causal journal: the analysis
//! step's verdict, the weight or iteration it moves to, the rollback or the
//! promotion it starts, and the other phase changes of the lifecycle.
//!
//! Flagger: `pkg/controller/scheduler.go` (`advanceCanary`, `runAnalysis`,
//! `checkCanaryStatus`, `rollback`) and `scheduler_metrics.go`. Flagger says
//! the same in its events ("Advance podinfo.test canary weight 20") without
//! the numbers the step was decided from.
//!
//! The message functions take plain values and are tested by their exact
//! sentences; [`transition`] picks the values from what the plan read
//! ([`Observed`]) and what it decided ([`plan::Decision`]), comparing the
//! status before and after.

use super::checks::{CheckOutcome, CheckResult};
use super::objects::{Strategy, strategy};
use super::plan::{self, Observed, Phase, Step, max_weight, next_step_weight, threshold};
use super::types::{ABORT_ANNOTATION, CanaryStatus, PROMOTE_ANNOTATION, ThresholdRange};
use crate::runtime::EventType;

pub use crate::runtime::Decision;
use crate::runtime::decision;

/// What the metric checks of a step said, as an advance names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The first step of an analysis (Flagger does not check metrics before it).
    FirstStep,
    /// Every metric (this many) in range.
    InRange(usize),
}

impl Verdict {
    fn text(self) -> String {
        match self {
            Verdict::FirstStep => "first analysis step".to_string(),
            Verdict::InRange(0) => "no metrics to check".to_string(),
            Verdict::InRange(1) => "the 1 metric in range".to_string(),
            Verdict::InRange(n) => format!("all {n} metrics in range"),
        }
    }
}

/// `runAnalysis`: a metric out of its range, counted as a failed check.
pub fn metric_failed(
    metric: &str,
    value: f64,
    range: &ThresholdRange,
    relative: bool,
    failed: i32,
    threshold: i32,
) -> Decision {
    let what = if relative {
        format!("{metric} canary − primary")
    } else {
        metric.to_string()
    };
    let bound = match (range.min, range.max) {
        (Some(min), _) if value < min => format!(" < min {min}"),
        (_, Some(max)) if value > max => format!(" > max {max}"),
        _ => String::new(),
    };
    decision(
        "runAnalysis",
        format!("{what} {value:.2}{bound}: failed check {failed} of threshold {threshold}"),
    )
}

/// `runAnalysis`: any other failed check (a query error, a failed hook), with its event message.
pub fn check_failed(message: &str, failed: i32, threshold: i32) -> Decision {
    decision(
        "runAnalysis",
        format!("{message}: failed check {failed} of threshold {threshold}"),
    )
}

/// `runAnalysis`: a metric without values halts the step without a failed check.
pub fn no_values(metric: &str) -> Decision {
    decision(
        "runAnalysis",
        format!(
            "{metric} returned no values (the canary is not receiving traffic yet): halting without a failed check"
        ),
    )
}

/// `advanceCanary`: the canary strategy's next weight.
pub fn advance_weight(verdict: Verdict, from: i32, to: i32, step: i32, max: i32) -> Decision {
    decision(
        "advanceCanary",
        format!(
            "{}: weight {from} → {to} (stepWeight {step}, maxWeight {max})",
            verdict.text()
        ),
    )
}

/// `advanceCanary`: the blue/green or A/B strategy's next iteration.
pub fn advance_iteration(verdict: Verdict, from: i32, to: i32, iterations: i32) -> Decision {
    decision(
        "advanceCanary",
        format!("{}: iteration {from} → {to} of {iterations}", verdict.text()),
    )
}

/// `advanceCanary`: blue/green, every iteration passed: all traffic to the canary.
pub fn route_to_canary(verdict: Verdict, iterations: i32) -> Decision {
    decision(
        "advanceCanary",
        format!(
            "{}: {iterations} iterations done: routing 100% to the canary",
            verdict.text()
        ),
    )
}

/// `rollback`: why, and what it does.
pub fn rollback(reason: &str, target: &str) -> Decision {
    decision(
        "rollback",
        format!("{reason}: routing 100% to primary, scaling {target} to 0"),
    )
}

/// `promote`: why, and the copy it starts.
pub fn promote(reason: &str, primary: &str) -> Decision {
    decision("promote", format!("{reason}: copying the template to {primary}"))
}

/// `advanceCanary`: the last step passed but the confirm-promotion gate is closed.
pub fn waiting_promotion(reason: &str) -> Decision {
    decision(
        "advanceCanary",
        format!("{reason}: confirm-promotion gate closed: waiting (WaitingPromotion)"),
    )
}

/// Any other phase change, with what it means.
pub fn phase_change(function: &'static str, from: Phase, to: Phase, what: &str) -> Decision {
    decision(
        function,
        format!("phase {} → {}: {what}", from.as_str(), to.as_str()),
    )
}

/// The decisions of one transition: what the analysis said (when it counted
/// a failure or halted), then the move it made (none when it only waited).
pub fn transition(obs: &Observed<'_>, plan: &plan::Decision) -> Vec<Decision> {
    let old = obs.canary.status.clone().unwrap_or_default();
    let mut found = Vec::new();
    found.extend(analysis(obs, plan, &old));
    found.extend(movement(obs, plan, &old));
    found
}

/// The analysis verdict worth recording: a failed check or a halt.
fn analysis(obs: &Observed<'_>, plan: &plan::Decision, old: &CanaryStatus) -> Option<Decision> {
    let new = &plan.status;
    let checks = obs.checks.as_deref().unwrap_or_default();
    if new.failed_checks > old.failed_checks {
        let t = threshold(obs.canary);
        let event = first_warning(&plan.steps).unwrap_or_default();
        return Some(match failed_metric(obs, checks, event) {
            Some(m) => metric_failed(m.name, m.value, &m.range, m.relative, new.failed_checks, t),
            None => check_failed(event, new.failed_checks, t),
        });
    }
    let halted = checks.iter().find_map(|c| match &c.outcome {
        CheckOutcome::NoValues { message } => Some((c.metric.as_str(), message)),
        _ => None,
    })?;
    let reported = plan
        .steps
        .iter()
        .any(|s| matches!(s, Step::Event(EventType::Warning, m) if m == halted.1));
    reported.then(|| no_values(halted.0))
}

/// A metric out of its range.
struct OutOfRange<'a> {
    name: &'a str,
    value: f64,
    range: ThresholdRange,
    relative: bool,
}

/// The metric whose out-of-range value is the failed check's event, if it is one.
fn failed_metric<'a>(obs: &Observed<'_>, checks: &'a [CheckResult], event: &str) -> Option<OutOfRange<'a>> {
    let check = checks.iter().find(|c| match &c.outcome {
        CheckOutcome::Failed { message, .. } | CheckOutcome::Error { message } => message == event,
        _ => false,
    })?;
    let CheckOutcome::Failed { value, message } = &check.outcome else {
        return None;
    };
    let metric = obs
        .canary
        .spec
        .analysis
        .metrics
        .iter()
        .find(|m| m.name == check.metric)?;
    let relative = message.contains("canary − primary");
    let range = match relative {
        true => metric.relative_threshold_range.clone(),
        false => metric.threshold_range.clone(),
    }?;
    Some(OutOfRange {
        name: &check.metric,
        value: *value,
        range,
        relative,
    })
}

fn first_warning(steps: &[Step]) -> Option<&str> {
    steps.iter().find_map(|s| match s {
        Step::Event(EventType::Warning, m) => Some(m.as_str()),
        _ => None,
    })
}

fn annotated(obs: &Observed<'_>, key: &str) -> bool {
    obs.canary
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

/// The move of the transition: rollback, promotion, a step, or a phase change.
fn movement(obs: &Observed<'_>, plan: &plan::Decision, old: &CanaryStatus) -> Option<Decision> {
    let new = &plan.status;
    let (from, to) = (Phase::of(old), Phase::of(new));
    let canary = obs.canary;
    let target = canary.spec.target_ref.name.as_str();
    if to == Phase::Failed && from != Phase::Failed {
        return Some(rollback(&rollback_reason(obs, new, from), target));
    }
    if to == Phase::Promoting && from != Phase::Promoting {
        let primary = format!("{target}-primary");
        return Some(promote(&promotion_reason(obs, old), &primary));
    }
    let verdict = verdict(obs, old);
    if to == Phase::WaitingPromotion && from != Phase::WaitingPromotion {
        return Some(waiting_promotion(&verdict.text()));
    }
    let analysing = from == to && matches!(to, Phase::Progressing | Phase::WaitingPromotion);
    let iterations = canary.spec.analysis.iterations.unwrap_or(0).max(0);
    match strategy(canary) {
        Strategy::Canary if analysing && new.canary_weight > old.canary_weight => {
            let step = next_step_weight(canary, old.canary_weight);
            let (a, b, max) = (old.canary_weight, new.canary_weight, max_weight(canary));
            return Some(advance_weight(verdict, a, b, step, max));
        }
        Strategy::BlueGreen if analysing && new.canary_weight > old.canary_weight => {
            return Some(route_to_canary(verdict, iterations));
        }
        _ if analysing && new.iterations > old.iterations => {
            return Some(advance_iteration(
                verdict,
                old.iterations,
                new.iterations,
                iterations,
            ));
        }
        _ => {}
    }
    (from != to).then(|| phase_decision(from, to, target))
}

/// What the checks said before a step (the first step checks nothing).
fn verdict(obs: &Observed<'_>, old: &CanaryStatus) -> Verdict {
    if old.canary_weight == 0 && old.iterations == 0 {
        return Verdict::FirstStep;
    }
    Verdict::InRange(obs.checks.as_ref().map_or(0, Vec::len))
}

fn rollback_reason(obs: &Observed<'_>, new: &CanaryStatus, from: Phase) -> String {
    let t = threshold(obs.canary);
    if annotated(obs, ABORT_ANNOTATION) && from.is_analysing() {
        return "aborted by the user".to_string();
    }
    if new.failed_checks >= t {
        return format!("failedChecks {} ≥ threshold {t}", new.failed_checks);
    }
    let secs = plan::progress_deadline(obs.canary).as_secs();
    let target = &obs.canary.spec.target_ref.name;
    format!("progress deadline {secs}s exceeded with {target} not ready")
}

fn promotion_reason(obs: &Observed<'_>, old: &CanaryStatus) -> String {
    let canary = obs.canary;
    if annotated(obs, PROMOTE_ANNOTATION) {
        return "promotion requested by the user".to_string();
    }
    if canary.spec.skip_analysis {
        return "skipAnalysis is set".to_string();
    }
    match strategy(canary) {
        Strategy::Canary => format!("weight {} = maxWeight {}", old.canary_weight, max_weight(canary)),
        _ => format!(
            "{} iterations done",
            canary.spec.analysis.iterations.unwrap_or(0).max(0)
        ),
    }
}

/// The phase changes that are neither a step, a rollback nor a promotion.
fn phase_decision(from: Phase, to: Phase, target: &str) -> Decision {
    let primary = format!("{target}-primary");
    match (from, to) {
        (_, Phase::Initialized) => phase_change(
            "checkCanaryStatus",
            from,
            to,
            &format!("{primary} is ready: routing 100% to primary, scaling {target} to 0"),
        ),
        (_, Phase::Waiting) => phase_change(
            "checkCanaryStatus",
            from,
            to,
            "new revision: waiting for the confirm-rollout hooks",
        ),
        (Phase::Waiting, Phase::Progressing) => phase_change(
            "checkCanaryStatus",
            from,
            to,
            "the confirm-rollout hooks passed: starting the analysis",
        ),
        (_, Phase::Progressing) => phase_change(
            "checkCanaryStatus",
            from,
            to,
            &format!("new revision of {target}: scaling it up, starting the analysis"),
        ),
        (_, Phase::Finalising) => phase_change(
            "advanceCanary",
            from,
            to,
            &format!("{primary} runs the promoted template and is ready: routing 100% to primary"),
        ),
        (_, Phase::Succeeded) => phase_change(
            "advanceCanary",
            from,
            to,
            &format!("promotion finished: scaling {target} to 0"),
        ),
        _ => phase_change("checkCanaryStatus", from, to, "the lifecycle moved on"),
    }
}
