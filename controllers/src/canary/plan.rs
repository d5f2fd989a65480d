//! The Canary's lifecycle as a pure transition: what the caches show (and,
//! at an analysis step, what the metrics say) in, the next status and the
//! writes that get there out.
//!
//! Flagger: `pkg/controller/scheduler.go` (`advanceCanary`, `runCanary`,
//! `runBlueGreen`, `runAB`, `rollback`, `shouldSkipAnalysis`,
//! `checkCanaryStatus`, `hasCanaryRevisionChanged`, `nextStepWeight`,
//! `maxWeight`), `pkg/controller/scheduler_hooks.go` (the gates),
//! `pkg/apis/flagger/v1beta1/status.go` (phases), `pkg/canary/status.go`
//! (`MakeStatusConditions`).
//!
//! ```text
//!           first sight                     primary ready
//!   (none) ───────────▶ Initializing ───────────────────────▶ Initialized
//!                                                                 │ new revision (template hash ≠ lastAppliedSpec)
//!            confirm-rollout hooks not done                        ▼
//!   Waiting ◀──────────────────────────────────────────────── (scale the target up)
//!      │ done                                                     │
//!      └─────────────────────────────▶ Progressing ◀──────────────┘
//!                 every interval: checks pass → step (weight / iteration)
//!                                     checks fail → failedChecks + 1
//!                 failedChecks = threshold, progress deadline, abort → Failed
//!                 last step passed, confirm-promotion gate closed → WaitingPromotion
//!                 last step passed, gate open (or promote annotation) → Promoting
//!   Promoting: the primary runs the target's template and is ready → Finalising
//!   Finalising: all traffic to the primary, target scaled to 0 → Succeeded
//! ```
//!
//! Each sync runs [`advance`] once: one transition at most (a few phases
//! take two in one go where nothing is waited for in between). Analysis
//! steps happen only on a *tick*: `analysis.interval` after the last step
//! (`status.lastTransitionTime`, which Flagger also moves at every step);
//! any other sync between ticks only keeps the route and the target's scale
//! where the status says they are.
//!
//! Differences from Flagger, on purpose:
//! * `threshold` defaults to 5 (Flagger: 1), `stepWeight` to 10 when neither
//!   it nor `stepWeights` is set (Flagger: no progress); `maxWeight` as
//!   Flagger: the last `stepWeights` entry, else `maxWeight`, else 100.
//! * The rollback happens at the check that reaches `threshold` (Flagger
//!   waits for the next tick), so `status.failedChecks` ends equal to it.
//! * "No values" from a metric query (the canary has not been scraped yet)
//!   halts the step without counting a failed check; a query error counts.
//! * Hooks are Jobs, one per hook and revision: a `rollout` hook fails the
//!   check once its Job failed (running is fine); a `pre-rollout` hook must
//!   have succeeded by the first step; `confirm-*` hooks wait for success;
//!   `rollback` and `post-rollout` hooks are started, not waited for.
//! * A confirm hook without a `jobTemplate` is only opened by the promote
//!   annotation (which promotes at once).
//! * A/B testing and blue/green work on the Gateway API route; mirroring,
//!   `stepWeightPromotion` and session affinity are not implemented.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::checks::{CheckOutcome, CheckResult};
use super::objects::{HookState, Strategy, strategy};
use super::types::{
    ABORT_ANNOTATION, Canary, CanaryCondition, CanaryStatus, PROMOTE_ANNOTATION, RETRY_ANNOTATION,
};
use crate::runtime::EventType;

/// `analysis.interval` when unset (Flagger's default).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
/// `analysis.threshold` when unset.
pub const DEFAULT_THRESHOLD: i32 = 5;
/// `analysis.stepWeight` when neither it nor `stepWeights` is set.
pub const DEFAULT_STEP_WEIGHT: i32 = 10;
/// `spec.progressDeadlineSeconds` when unset (Flagger's default).
pub const DEFAULT_PROGRESS_DEADLINE_SECONDS: i32 = 600;
/// All the traffic (Flagger's `totalWeight`).
pub const TOTAL_WEIGHT: i32 = 100;
/// How soon a phase that waits for other objects looks again if no event
/// wakes it first.
const WAIT_REQUEUE: Duration = Duration::from_secs(5);

/// The Canary's phase (`status.phase`), Flagger's `CanaryPhase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// First sight: the primary, the Services and the route are being made;
    /// left when the primary is ready.
    Initializing,
    /// The primary serves all traffic; the target is scaled to 0. Left at a new revision.
    Initialized,
    /// A new revision waits for its confirm-rollout hooks.
    Waiting,
    /// The new revision is analysed step by step.
    Progressing,
    /// The analysis is done; the confirm-promotion gate is closed. Checks go on.
    WaitingPromotion,
    /// The primary is rolling out the new template.
    Promoting,
    /// The primary runs the new template; traffic goes back to it and the target is scaled down.
    Finalising,
    /// The last revision was promoted.
    Succeeded,
    /// The last revision was rolled back.
    Failed,
}

impl Phase {
    /// The phase as `status.phase` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Initializing => "Initializing",
            Phase::Initialized => "Initialized",
            Phase::Waiting => "Waiting",
            Phase::Progressing => "Progressing",
            Phase::WaitingPromotion => "WaitingPromotion",
            Phase::Promoting => "Promoting",
            Phase::Finalising => "Finalising",
            Phase::Succeeded => "Succeeded",
            Phase::Failed => "Failed",
        }
    }

    /// The phase of `status` (none or unknown: [`Phase::Initializing`]).
    pub fn of(status: &CanaryStatus) -> Phase {
        match status.phase.as_deref() {
            Some("Initialized") => Phase::Initialized,
            Some("Waiting") => Phase::Waiting,
            Some("Progressing") => Phase::Progressing,
            Some("WaitingPromotion") => Phase::WaitingPromotion,
            Some("Promoting") => Phase::Promoting,
            Some("Finalising") => Phase::Finalising,
            Some("Succeeded") => Phase::Succeeded,
            Some("Failed") => Phase::Failed,
            _ => Phase::Initializing,
        }
    }

    /// A rollout under analysis: what abort and promote act on.
    pub fn is_analysing(self) -> bool {
        matches!(
            self,
            Phase::Waiting | Phase::Progressing | Phase::WaitingPromotion
        )
    }

    /// The `Promoted` condition's status and message (Flagger's `MakeStatusConditions`).
    fn condition(self) -> (&'static str, &'static str) {
        match self {
            Phase::Initializing => ("Unknown", "New deployment detected, starting initialization."),
            Phase::Initialized => ("True", "Deployment initialization completed."),
            Phase::Waiting => ("Unknown", "Waiting for approval."),
            Phase::Progressing => ("Unknown", "New revision detected, progressing canary analysis."),
            Phase::WaitingPromotion => ("Unknown", "Waiting for approval."),
            Phase::Promoting => (
                "Unknown",
                "Canary analysis completed, starting primary rolling update.",
            ),
            Phase::Finalising => (
                "Unknown",
                "Canary analysis completed, routing all traffic to primary.",
            ),
            Phase::Succeeded => (
                "True",
                "Canary analysis completed successfully, promotion finished.",
            ),
            Phase::Failed => ("False", "Canary analysis failed, Deployment scaled to zero."),
        }
    }
}

/// The target Deployment as the plan needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetState {
    /// Its pod template's hash (the revision).
    pub revision: String,
    /// `spec.replicas`.
    pub replicas: i32,
    /// Rolled out (every wanted pod updated and available).
    pub ready: bool,
}

/// The primary Deployment as the plan needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimaryState {
    /// `spec.replicas`.
    pub replicas: i32,
    /// Rolled out.
    pub ready: bool,
    /// The hash of the target template it was built from.
    pub revision: Option<String>,
}

/// The route's split, as read back from the HTTPRoute or as to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// The primary's weight.
    pub primary: i32,
    /// The canary's weight.
    pub canary: i32,
}

impl Split {
    /// All traffic to the primary.
    pub const PRIMARY: Split = Split {
        primary: TOTAL_WEIGHT,
        canary: 0,
    };
    /// All traffic to the canary.
    pub const CANARY: Split = Split {
        primary: 0,
        canary: TOTAL_WEIGHT,
    };

    /// `canary` to the canary, the rest to the primary.
    pub fn with_canary(canary: i32) -> Split {
        let canary = canary.clamp(0, TOTAL_WEIGHT);
        Split {
            primary: TOTAL_WEIGHT - canary,
            canary,
        }
    }
}

/// Everything one transition reads.
#[derive(Clone, Debug)]
pub struct Observed<'a> {
    /// The Canary (spec, status, annotations).
    pub canary: &'a Canary,
    /// The target; `None` when it does not exist.
    pub target: Option<TargetState>,
    /// The primary; `None` when it does not exist (yet).
    pub primary: Option<PrimaryState>,
    /// The route's split; `None` when the route does not exist or is an A/B route.
    pub route: Option<Split>,
    /// Each hook's Job state for the target's current revision, by hook name.
    pub hooks: BTreeMap<String, HookState>,
    /// The metric checks, evaluated by the sync when [`analysis_due`] said so.
    pub checks: Option<Vec<CheckResult>>,
}

/// One write, in the order the sync must make them.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Create the primary from the target, or copy the target's template
    /// into it (with these replicas; `None`: the target's).
    ApplyPrimary {
        /// The primary's replicas.
        replicas: Option<i32>,
    },
    /// Create or update the apex, `-primary` and `-canary` Services.
    ApplyServices,
    /// Create or update the primary's copy of `spec.autoscalerRef`.
    ApplyPrimaryAutoscaler,
    /// Write the route with this split (`ab_testing`: the header match goes to the canary).
    SetRoute {
        /// The weights.
        split: Split,
        /// A/B testing: matching requests to the canary, the rest to the primary.
        ab_testing: bool,
    },
    /// Scale the target.
    ScaleTarget(i32),
    /// Start the hook's Job for the current revision (if it does not exist).
    RunHook(String),
    /// Delete the current revision's hook Jobs (a retry runs them again).
    DeleteHookJobs,
    /// Record an Event on the Canary (reason `Synced`, as Flagger).
    Event(EventType, String),
    /// Remove an annotation (a manual request acted on).
    RemoveAnnotation(&'static str),
}

/// What one transition decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The writes, in order.
    pub steps: Vec<Step>,
    /// The status to write (if it differs from the current one).
    pub status: CanaryStatus,
    /// When to look again if nothing else happens.
    pub requeue_after: Option<Duration>,
}

// ---------------------------------------------------------------------------
// Spec defaults
// ---------------------------------------------------------------------------

/// Parses a Go duration (`1m`, `30s`, `1m30s`, `1.5h`, `500ms`); `None` when malformed or negative.
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let value: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += value * seconds;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// `analysis.interval` (default 1m; a malformed or zero one is the default too).
pub fn interval(canary: &Canary) -> Duration {
    canary
        .spec
        .analysis
        .interval
        .as_deref()
        .and_then(parse_go_duration)
        .filter(|d| !d.is_zero())
        .unwrap_or(DEFAULT_INTERVAL)
}

/// `analysis.threshold` (default [`DEFAULT_THRESHOLD`]; at least 1).
pub fn threshold(canary: &Canary) -> i32 {
    canary
        .spec
        .analysis
        .threshold
        .filter(|t| *t > 0)
        .unwrap_or(DEFAULT_THRESHOLD)
}

/// `spec.progressDeadlineSeconds` (default 600).
pub fn progress_deadline(canary: &Canary) -> Duration {
    let secs = canary
        .spec
        .progress_deadline_seconds
        .filter(|s| *s > 0)
        .unwrap_or(DEFAULT_PROGRESS_DEADLINE_SECONDS);
    Duration::from_secs(u64::from(secs.unsigned_abs()))
}

/// Flagger's `maxWeight`: the last `stepWeights` entry, else `maxWeight`, else all of it.
pub fn max_weight(canary: &Canary) -> i32 {
    let a = &canary.spec.analysis;
    if let Some(last) = a.step_weights.last() {
        return (*last).min(TOTAL_WEIGHT);
    }
    match a.max_weight {
        Some(w) if w > 0 => w.min(TOTAL_WEIGHT),
        _ => TOTAL_WEIGHT,
    }
}

/// Flagger's `nextStepWeight`: how much to add to `weight` at the next step.
/// With `stepWeights`, the next entry's difference (never past all of it).
pub fn next_step_weight(canary: &Canary, weight: i32) -> i32 {
    let a = &canary.spec.analysis;
    if let Some(step) = a.step_weight.filter(|s| *s > 0) {
        return step;
    }
    if a.step_weights.is_empty() {
        return DEFAULT_STEP_WEIGHT;
    }
    let max_step = TOTAL_WEIGHT - weight;
    if max_step <= 0 {
        return 1;
    }
    if weight == 0 {
        return max_step.min(a.step_weights[0]);
    }
    for pair in a.step_weights.windows(2) {
        if pair[0] == weight {
            return max_step.min(pair[1] - weight);
        }
    }
    max_step
}

/// The number of iterations of a blue/green or A/B analysis.
fn iterations(canary: &Canary) -> i32 {
    canary.spec.analysis.iterations.unwrap_or(0).max(0)
}

/// Whether an analysis step is due at `now`: the rollout is analysing the
/// target's current revision and an interval has passed since the last step.
/// The sync evaluates the metric checks only then.
pub fn analysis_due(canary: &Canary, now: Timestamp) -> bool {
    let status = canary.status.clone().unwrap_or_default();
    matches!(Phase::of(&status), Phase::Progressing | Phase::WaitingPromotion)
        && next_tick(canary, &status).is_none_or(|t| t <= now)
}

/// When the next analysis step is due (`None`: now).
fn next_tick(canary: &Canary, status: &CanaryStatus) -> Option<Timestamp> {
    let last = status.last_transition_time.as_ref()?.0;
    let interval = SignedDuration::try_from(interval(canary)).ok()?;
    last.checked_add(interval).ok()
}

/// Whether the manual request `key` is on the Canary.
fn requested(canary: &Canary, key: &str) -> bool {
    canary
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

// ---------------------------------------------------------------------------
// The transition
// ---------------------------------------------------------------------------

/// One transition of `obs.canary` at `now`. Pure.
pub fn advance(obs: &Observed<'_>, now: Timestamp) -> Decision {
    let mut p = Planner::new(obs, now);
    p.run();
    p.finish()
}

/// The transition under construction.
struct Planner<'a> {
    obs: &'a Observed<'a>,
    canary: &'a Canary,
    now: Timestamp,
    status: CanaryStatus,
    steps: Vec<Step>,
    requeue_after: Option<Duration>,
}

impl<'a> Planner<'a> {
    fn new(obs: &'a Observed<'a>, now: Timestamp) -> Self {
        let canary = obs.canary;
        let mut status = canary.status.clone().unwrap_or_default();
        status.observed_generation = canary.metadata.generation;
        Planner {
            obs,
            canary,
            now,
            status,
            steps: Vec::new(),
            requeue_after: None,
        }
    }

    fn finish(self) -> Decision {
        Decision {
            steps: self.steps,
            status: self.status,
            requeue_after: self.requeue_after,
        }
    }

    // --- small helpers -----------------------------------------------------

    /// `<canary>.<namespace>`, as Flagger names the Canary in its messages.
    fn canary_id(&self) -> String {
        let m = &self.canary.metadata;
        format!(
            "{}.{}",
            m.name.as_deref().unwrap_or(""),
            m.namespace.as_deref().unwrap_or("")
        )
    }

    /// `<target>.<namespace>`.
    fn target_id(&self) -> String {
        format!(
            "{}.{}",
            self.canary.spec.target_ref.name,
            self.canary.metadata.namespace.as_deref().unwrap_or("")
        )
    }

    fn event(&mut self, type_: EventType, message: String) {
        self.steps.push(Step::Event(type_, message));
    }

    fn requeue(&mut self, after: Duration) {
        self.requeue_after = Some(self.requeue_after.map_or(after, |d| d.min(after)));
    }

    /// `now`, at the seconds the status can hold.
    fn now_time(&self) -> Time {
        Time(Timestamp::from_second(self.now.as_second()).unwrap_or(self.now))
    }

    /// Enters `phase` (and moves `lastTransitionTime` and the condition if it changes).
    fn set_phase(&mut self, phase: Phase) {
        if Phase::of(&self.status) == phase && self.status.phase.is_some() {
            return;
        }
        self.status.phase = Some(phase.as_str().to_string());
        self.status.last_transition_time = Some(self.now_time());
        let (status, message) = phase.condition();
        let now = self.now_time();
        let previous = self.status.conditions.iter().find(|c| c.type_ == "Promoted");
        let transition = match previous {
            Some(c) if c.status == status => c.last_transition_time.clone(),
            _ => Some(now.clone()),
        };
        self.status.conditions = vec![CanaryCondition {
            type_: "Promoted".into(),
            status: status.into(),
            last_update_time: Some(now),
            last_transition_time: transition,
            reason: Some(phase.as_str().into()),
            message: Some(message.into()),
        }];
    }

    fn set_route(&mut self, split: Split) {
        self.steps.push(Step::SetRoute {
            split,
            ab_testing: false,
        });
    }

    /// Writes the route unless it already splits so.
    fn ensure_route(&mut self, split: Split) {
        if self.obs.route != Some(split) {
            self.set_route(split);
        }
    }

    fn ensure_target_scale(&mut self, replicas: i32) {
        if self.obs.target.as_ref().is_some_and(|t| t.replicas != replicas) {
            self.steps.push(Step::ScaleTarget(replicas));
        }
    }

    fn hook_state(&self, name: &str) -> HookState {
        self.obs.hooks.get(name).copied().unwrap_or(HookState::Missing)
    }

    /// The hooks of `type_`, in spec order.
    fn hooks_of(&self, type_: &str) -> Vec<(String, bool)> {
        self.canary
            .spec
            .analysis
            .hooks
            .iter()
            .filter(|h| h.type_ == type_)
            .map(|h| (h.name.clone(), h.job_template.is_some()))
            .collect()
    }

    /// Starts every hook of `type_` that has a Job template and none yet.
    fn start_hooks(&mut self, type_: &str) {
        for (name, has_job) in self.hooks_of(type_) {
            if has_job && self.hook_state(&name) == HookState::Missing {
                self.steps.push(Step::RunHook(name));
            }
        }
    }

    /// A confirm gate (`confirm-rollout`, `confirm-promotion`): starts the
    /// missing Jobs; the first hook that has not succeeded, if any.
    fn closed_gate(&mut self, type_: &str) -> Option<String> {
        self.start_hooks(type_);
        self.hooks_of(type_)
            .into_iter()
            .find(|(name, has_job)| !has_job || self.hook_state(name) != HookState::Succeeded)
            .map(|(name, _)| name)
    }

    // --- the spine ---------------------------------------------------------

    fn run(&mut self) {
        let Some(target) = self.obs.target.clone() else {
            // The sync reports the missing target; nothing to do until it exists.
            self.requeue(interval(self.canary));
            return;
        };
        let phase = Phase::of(&self.status);
        if phase == Phase::Initializing {
            self.initialize(&target);
            return;
        }
        let new_revision = self.status.last_applied_spec.as_deref() != Some(target.revision.as_str());
        if new_revision && !matches!(phase, Phase::Promoting | Phase::Finalising) {
            self.new_revision(phase, &target);
            return;
        }
        if self.manual_requests(phase) {
            return;
        }
        match phase {
            Phase::Initializing => {}
            Phase::Initialized | Phase::Succeeded | Phase::Failed => self.stable(),
            Phase::Waiting => self.waiting(),
            Phase::Progressing | Phase::WaitingPromotion => self.progressing(&target),
            Phase::Promoting => self.promoting(&target),
            Phase::Finalising => self.finalising(),
        }
    }

    /// First sight: make the primary, the Services, the route (and the
    /// primary's autoscaler); once the primary is ready, scale the target to 0.
    fn initialize(&mut self, target: &TargetState) {
        self.set_phase(Phase::Initializing);
        if self.obs.primary.is_none() {
            self.steps.push(Step::ApplyPrimary { replicas: None });
        }
        self.steps.push(Step::ApplyServices);
        if self.canary.spec.autoscaler_ref.is_some() {
            self.steps.push(Step::ApplyPrimaryAutoscaler);
        }
        self.ensure_route(Split::PRIMARY);
        if !self.obs.primary.as_ref().is_some_and(|p| p.ready) {
            self.requeue(WAIT_REQUEUE);
            return;
        }
        self.ensure_target_scale(0);
        self.status.last_applied_spec = Some(target.revision.clone());
        self.status.last_promoted_spec = Some(target.revision.clone());
        self.status.canary_weight = 0;
        self.status.failed_checks = 0;
        self.status.iterations = 0;
        self.set_phase(Phase::Initialized);
        let id = self.target_id();
        self.event(EventType::Normal, format!("Initialization done! {id}"));
    }

    /// A template not seen before: start its analysis (restarting one in progress).
    fn new_revision(&mut self, phase: Phase, target: &TargetState) {
        if phase.is_analysing() {
            self.set_route(Split::PRIMARY);
            let id = self.target_id();
            self.event(
                EventType::Normal,
                format!("New revision detected! Restarting analysis for {id}"),
            );
        }
        self.status.last_applied_spec = Some(target.revision.clone());
        self.steps.push(Step::ApplyServices);
        self.restart_analysis();
    }

    /// Zeroes the counters and starts the analysis of `lastAppliedSpec`:
    /// promotes at once with `skipAnalysis`, else waits for the
    /// confirm-rollout gate, else scales the target up.
    fn restart_analysis(&mut self) {
        self.status.canary_weight = 0;
        self.status.failed_checks = 0;
        self.status.iterations = 0;
        if self.canary.spec.skip_analysis {
            self.set_route(Split::PRIMARY);
            self.promote();
            return;
        }
        self.waiting();
    }

    /// Waiting for the confirm-rollout gate; when open, scale the target up.
    fn waiting(&mut self) {
        if let Some(hook) = self.closed_gate("confirm-rollout") {
            if Phase::of(&self.status) != Phase::Waiting || self.status.phase.is_none() {
                let id = self.canary_id();
                self.event(
                    EventType::Normal,
                    format!("Halt {id} advancement waiting for approval {hook}"),
                );
            }
            self.set_phase(Phase::Waiting);
            self.requeue(interval(self.canary));
            return;
        }
        let replicas = self.obs.primary.as_ref().map_or(1, |p| p.replicas.max(1));
        let id = self.target_id();
        self.event(
            EventType::Normal,
            format!("New revision detected! Scaling up {id}"),
        );
        self.ensure_target_scale(replicas);
        // The phase moves even when it was Progressing already (a restart):
        // the step clock starts again.
        self.status.phase = None;
        self.set_phase(Phase::Progressing);
        self.start_hooks("pre-rollout");
        self.requeue(interval(self.canary));
    }

    /// The annotations `miniplane rollout promote|abort|retry` set; `true`
    /// when one was acted on (and nothing else happens in this sync).
    fn manual_requests(&mut self, phase: Phase) -> bool {
        if requested(self.canary, ABORT_ANNOTATION) {
            self.steps.push(Step::RemoveAnnotation(ABORT_ANNOTATION));
            if phase.is_analysing() {
                let id = self.canary_id();
                self.event(EventType::Warning, format!("Rolling back {id} aborted by user"));
                self.rollback();
                return true;
            }
        }
        if requested(self.canary, PROMOTE_ANNOTATION) {
            self.steps.push(Step::RemoveAnnotation(PROMOTE_ANNOTATION));
            if phase.is_analysing() {
                let id = self.canary_id();
                self.event(EventType::Normal, format!("Promotion of {id} requested by user"));
                self.promote();
                return true;
            }
        }
        if requested(self.canary, RETRY_ANNOTATION) {
            self.steps.push(Step::RemoveAnnotation(RETRY_ANNOTATION));
            if phase == Phase::Failed {
                let id = self.canary_id();
                self.event(EventType::Normal, format!("Retrying the analysis of {id}"));
                self.steps.push(Step::DeleteHookJobs);
                self.restart_analysis();
                return true;
            }
        }
        false
    }

    /// Initialized, Succeeded, Failed: all traffic to the primary, the target at 0.
    fn stable(&mut self) {
        self.ensure_route(Split::PRIMARY);
        self.ensure_target_scale(0);
    }

    /// The route the status implies while analysing (`None`: A/B, left as written).
    fn analysis_route(&self) -> Option<Split> {
        match strategy(self.canary) {
            Strategy::Canary => Some(Split::with_canary(self.status.canary_weight)),
            Strategy::BlueGreen if self.status.iterations > iterations(self.canary) => Some(Split::CANARY),
            Strategy::BlueGreen => Some(Split::PRIMARY),
            Strategy::ABTesting => None,
        }
    }

    /// Progressing and WaitingPromotion: keep the route and the scale, watch
    /// the progress deadline, and take an analysis step when one is due.
    fn progressing(&mut self, target: &TargetState) {
        if let Some(split) = self.analysis_route() {
            self.ensure_route(split);
        }
        if self.status.canary_weight == 0 && self.status.iterations == 0 {
            self.start_hooks("pre-rollout");
        }
        let canary_ready = target.ready && target.replicas > 0;
        if target.replicas == 0 {
            let replicas = self.obs.primary.as_ref().map_or(1, |p| p.replicas.max(1));
            self.steps.push(Step::ScaleTarget(replicas));
        }
        if !canary_ready {
            let deadline = self.status.last_transition_time.as_ref().and_then(|t| {
                t.0.checked_add(SignedDuration::try_from(progress_deadline(self.canary)).ok()?)
                    .ok()
            });
            match deadline {
                Some(d) if d <= self.now => {
                    let id = self.canary_id();
                    let target_id = self.target_id();
                    self.event(
                        EventType::Warning,
                        format!(
                            "Rolling back {id} progress deadline exceeded canary deployment {target_id} not ready"
                        ),
                    );
                    self.rollback();
                }
                Some(d) => self.requeue(until(self.now, d).min(WAIT_REQUEUE)),
                None => self.requeue(WAIT_REQUEUE),
            }
            return;
        }
        match next_tick(self.canary, &self.status) {
            Some(t) if t > self.now => self.requeue(until(self.now, t)),
            _ => self.tick(),
        }
    }

    /// One analysis step (Flagger's `advanceCanary` from the hooks on).
    fn tick(&mut self) {
        self.status.last_transition_time = Some(self.now_time());
        self.requeue(interval(self.canary));
        let first = self.status.canary_weight == 0 && self.status.iterations == 0;
        if first {
            let id = self.target_id();
            self.event(EventType::Normal, format!("Starting canary analysis for {id}"));
            for (name, _) in self.hooks_of("pre-rollout") {
                let id = self.canary_id();
                match self.hook_state(&name) {
                    HookState::Succeeded => {
                        self.event(EventType::Normal, format!("Pre-rollout check {name} passed"));
                    }
                    HookState::Failed => {
                        return self
                            .failed_check(format!("Halt {id} advancement pre-rollout check {name} failed"));
                    }
                    HookState::Running | HookState::Missing => {
                        return self.failed_check(format!(
                            "Halt {id} advancement pre-rollout check {name} has not finished"
                        ));
                    }
                }
            }
            self.start_hooks("rollout");
        } else if !self.analysis_passed() {
            return;
        }
        match strategy(self.canary) {
            Strategy::Canary => self.step_canary(),
            Strategy::BlueGreen => self.step_blue_green(),
            Strategy::ABTesting => self.step_ab(),
        }
    }

    /// The rollout hooks and the metric checks (Flagger's `runAnalysis`);
    /// records a failed check (or a halt) and returns `false` when one fails.
    fn analysis_passed(&mut self) -> bool {
        self.start_hooks("rollout");
        for (name, _) in self.hooks_of("rollout") {
            if self.hook_state(&name) == HookState::Failed {
                let id = self.canary_id();
                self.failed_check(format!("Halt {id} advancement external check {name} failed"));
                return false;
            }
        }
        for check in self.obs.checks.clone().unwrap_or_default() {
            match check.outcome {
                CheckOutcome::Passed { .. } => {}
                CheckOutcome::Failed { message, .. } | CheckOutcome::Error { message } => {
                    self.failed_check(message);
                    return false;
                }
                CheckOutcome::NoValues { message } => {
                    self.event(EventType::Warning, message);
                    return false;
                }
            }
        }
        true
    }

    /// Counts a failed check; rolls back at the threshold.
    fn failed_check(&mut self, message: String) {
        self.event(EventType::Warning, message);
        self.status.failed_checks += 1;
        let threshold = threshold(self.canary);
        if self.status.failed_checks >= threshold {
            let id = self.canary_id();
            let n = self.status.failed_checks;
            self.event(
                EventType::Warning,
                format!("Rolling back {id} failed checks threshold reached {n}"),
            );
            self.rollback();
        }
    }

    /// Canary strategy: the next weight, or the promotion gate at the last one.
    fn step_canary(&mut self) {
        let weight = self.status.canary_weight;
        let max = max_weight(self.canary);
        if weight < max {
            let next = (weight + next_step_weight(self.canary, weight)).min(TOTAL_WEIGHT);
            self.status.canary_weight = next;
            self.set_route(Split::with_canary(next));
            let id = self.canary_id();
            self.event(EventType::Normal, format!("Advance {id} canary weight {next}"));
            return;
        }
        if self.promotion_gate_open() {
            self.promote();
        }
    }

    /// Blue/green: `iterations` checks with no routed traffic, then all of it at once, then promotion.
    fn step_blue_green(&mut self) {
        let n = iterations(self.canary);
        let i = self.status.iterations;
        if i < n {
            self.status.iterations = i + 1;
            let id = self.canary_id();
            self.event(
                EventType::Normal,
                format!("Advance {id} canary iteration {}/{n}", i + 1),
            );
            return;
        }
        if !self.promotion_gate_open() {
            return;
        }
        if i == n {
            self.event(EventType::Normal, "Routing all traffic to canary".into());
            self.set_route(Split::CANARY);
            self.status.canary_weight = TOTAL_WEIGHT;
            self.status.iterations = i + 1;
            return;
        }
        self.promote();
    }

    /// A/B testing: matching requests to the canary for `iterations` checks, then promotion.
    fn step_ab(&mut self) {
        let n = iterations(self.canary);
        let i = self.status.iterations;
        if i < n {
            if i == 0 {
                self.steps.push(Step::SetRoute {
                    split: Split::PRIMARY,
                    ab_testing: true,
                });
            }
            self.status.iterations = i + 1;
            let id = self.canary_id();
            self.event(
                EventType::Normal,
                format!("Advance {id} canary iteration {}/{n}", i + 1),
            );
            return;
        }
        if self.promotion_gate_open() {
            self.promote();
        }
    }

    /// The confirm-promotion gate; closed: WaitingPromotion.
    fn promotion_gate_open(&mut self) -> bool {
        let Some(hook) = self.closed_gate("confirm-promotion") else {
            return true;
        };
        let id = self.canary_id();
        self.event(
            EventType::Normal,
            format!("Halt {id} advancement waiting for promotion approval {hook}"),
        );
        let last_step = self.status.last_transition_time.clone();
        self.set_phase(Phase::WaitingPromotion);
        self.status.last_transition_time = last_step;
        false
    }

    /// Copies the target's template to the primary: Promoting.
    fn promote(&mut self) {
        let target = self.target_id();
        let ns = self.canary.metadata.namespace.as_deref().unwrap_or("");
        let primary = format!("{}-primary.{ns}", self.canary.spec.target_ref.name);
        self.event(
            EventType::Normal,
            format!("Copying {target} template spec to {primary}"),
        );
        let replicas = self.obs.primary.as_ref().map(|p| p.replicas);
        self.steps.push(Step::ApplyPrimary { replicas });
        self.set_phase(Phase::Promoting);
        self.requeue(WAIT_REQUEUE);
    }

    /// Promoting: once the primary runs the promoted template and is ready,
    /// route all traffic to it (Finalising).
    fn promoting(&mut self, target: &TargetState) {
        let applied = self.status.last_applied_spec.clone();
        let primary = self.obs.primary.clone();
        let runs_new = primary.as_ref().is_some_and(|p| p.revision == applied);
        if !runs_new {
            if applied.as_deref() == Some(target.revision.as_str()) {
                let replicas = primary.as_ref().map(|p| p.replicas);
                self.steps.push(Step::ApplyPrimary { replicas });
            }
            self.requeue(WAIT_REQUEUE);
            return;
        }
        if !primary.is_some_and(|p| p.ready) {
            self.requeue(WAIT_REQUEUE);
            return;
        }
        self.event(EventType::Normal, "Routing all traffic to primary".into());
        self.set_route(Split::PRIMARY);
        self.status.canary_weight = 0;
        self.set_phase(Phase::Finalising);
        self.requeue(WAIT_REQUEUE);
    }

    /// Finalising: scale the target down; Succeeded; post-rollout hooks.
    fn finalising(&mut self) {
        self.ensure_route(Split::PRIMARY);
        self.ensure_target_scale(0);
        self.status.last_promoted_spec = self.status.last_applied_spec.clone();
        self.set_phase(Phase::Succeeded);
        self.start_hooks("post-rollout");
        let id = self.target_id();
        let message = if self.canary.spec.skip_analysis {
            format!("Promotion completed! Canary analysis was skipped for {id}")
        } else {
            format!("Promotion completed! Scaling down {id}")
        };
        self.event(EventType::Normal, message);
    }

    /// Flagger's `rollback`: all traffic to the primary, the target to 0, Failed, rollback hooks.
    fn rollback(&mut self) {
        self.set_route(Split::PRIMARY);
        let id = self.canary_id();
        self.event(EventType::Warning, format!("Canary failed! Scaling down {id}"));
        self.ensure_target_scale(0);
        self.status.canary_weight = 0;
        self.set_phase(Phase::Failed);
        self.start_hooks("rollback");
    }
}

/// The time from `now` to `then` (zero when past).
fn until(now: Timestamp, then: Timestamp) -> Duration {
    Duration::try_from(then.duration_since(now)).unwrap_or(Duration::ZERO)
}
