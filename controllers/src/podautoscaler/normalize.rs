//! Pure: from the metrics' recommendation to the replica count the HPA writes — bounds,
//! stabilization windows and `behavior` scaling policies.
//!
//! Upstream: `pkg/controller/podautoscaler/horizontal.go` (`stabilizeRecommendation`,
//! `normalizeDesiredReplicas`, `normalizeDesiredReplicasWithBehaviors`,
//! `stabilizeRecommendationWithBehaviors`, `convertDesiredReplicasWithBehaviorRate`,
//! `convertDesiredReplicasWithRules`, `calculateScaleUpLimit`,
//! `calculateScaleUpLimitWithScalingRules`, `calculateScaleDownLimitWithBehaviors`,
//! `getReplicasChangePerPeriod`, `storeScaleEvent`, `markScaleEventsOutdated`,
//! `getLongestPolicyPeriod`, `recordInitialRecommendation`).
//!
//! Upstream keeps, per HPA, the recent recommendations and scale events in the controller's
//! maps; here they are a [`ScaleHistory`] the sync keeps per key and hands in. Two cases:
//!
//! ```text
//! no spec.behavior:  stabilized = max(recommendations of the last 5 min, this one)
//!                    desired    = clamp(stabilized, minReplicas, min(maxReplicas, max(2×current, 4)))
//! spec.behavior:     up   limit = min(recommendations within scaleUp.stabilizationWindowSeconds)
//!                    down limit = max(recommendations within scaleDown.stabilizationWindowSeconds)
//!                    stabilized = current pulled up to `up` and down to `down`
//!                    desired    = stabilized, within the policies' rate (replicas added or removed
//!                                 in each policy's period, from the scale events) and min/max
//! ```
//!
//! Worked example (scaleDown window 60 s, syncs every 15 s): recommendations 6, 6, 2, 2 at
//! t = 0, 15, 30, 45 keep the HPA at 6 — the highest of the last minute; at t = 75 the 6s have
//! left the window and it scales down to 2.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{HPAScalingRules, HorizontalPodAutoscalerBehavior};

/// `scaleUpLimitFactor`: without a behavior, at most double the replicas...
pub const SCALE_UP_LIMIT_FACTOR: f64 = 2.0;
/// `scaleUpLimitMinimum`: ...or go to 4, whichever is more.
pub const SCALE_UP_LIMIT_MINIMUM: f64 = 4.0;
/// Upstream `--horizontal-pod-autoscaler-downscale-stabilization`: 5 minutes.
pub const DEFAULT_DOWNSCALE_STABILIZATION_WINDOW: i32 = 300;

/// A recommendation and when it was made (upstream `timestampedRecommendation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimestampedRecommendation {
    /// Replicas recommended by the metrics (before normalization).
    pub recommendation: i32,
    /// When.
    pub timestamp: Timestamp,
}

/// A scale event (upstream `timestampedScaleEvent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimestampedScaleEvent {
    /// Replicas added (scale-up list) or removed (scale-down list).
    pub replica_change: i32,
    /// When.
    pub timestamp: Timestamp,
    /// Older than every policy's period: its slot may be reused.
    pub outdated: bool,
}

/// One HPA's memory between syncs: upstream's `recommendations`, `scaleUpEvents` and
/// `scaleDownEvents` entries for its key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScaleHistory {
    /// Unstabilized recommendations.
    pub recommendations: Vec<TimestampedRecommendation>,
    /// Scale-ups done.
    pub scale_up_events: Vec<TimestampedScaleEvent>,
    /// Scale-downs done.
    pub scale_down_events: Vec<TimestampedScaleEvent>,
}

/// How a normalization went: the replicas, and the two conditions it sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// The replica count to scale to.
    pub replicas: i32,
    /// `AbleToScale` (always True here): `ReadyForNewScale` or `Scale{Up,Down}Stabilized`.
    pub able_to_scale: (&'static str, &'static str),
    /// `ScalingLimited`: whether the count was limited, why, and the message.
    pub scaling_limited: (bool, &'static str, &'static str),
}

/// What [`normalize_desired_replicas_with_behaviors`] works on (upstream `NormalizationArg`).
#[derive(Clone, Debug)]
pub struct NormalizationArg<'a> {
    /// `spec.behavior.scaleUp` (defaults filled in).
    pub scale_up_behavior: &'a HPAScalingRules,
    /// `spec.behavior.scaleDown` (defaults filled in, the window too).
    pub scale_down_behavior: &'a HPAScalingRules,
    /// `spec.minReplicas`.
    pub min_replicas: i32,
    /// `spec.maxReplicas`.
    pub max_replicas: i32,
    /// The target's `spec.replicas`.
    pub current_replicas: i32,
    /// The recommendation being normalized.
    pub desired_replicas: i32,
}

fn seconds(s: i32) -> SignedDuration {
    SignedDuration::from_secs(i64::from(s))
}

fn before(now: Timestamp, s: i32) -> Timestamp {
    now.checked_sub(seconds(s)).unwrap_or(Timestamp::MIN)
}

/// Upstream `recordInitialRecommendation`: the first sync remembers the current scale.
pub fn record_initial_recommendation(history: &mut ScaleHistory, current_replicas: i32, now: Timestamp) {
    if history.recommendations.is_empty() {
        history.recommendations.push(TimestampedRecommendation {
            recommendation: current_replicas,
            timestamp: now,
        });
    }
}

/// Upstream `stabilizeRecommendation`: the highest recommendation of the last `window_seconds`
/// (this one included); this one replaces an expired entry, or is appended.
pub fn stabilize_recommendation(
    history: &mut ScaleHistory,
    prenormalized_desired_replicas: i32,
    window_seconds: i32,
    now: Timestamp,
) -> i32 {
    let mut max_recommendation = prenormalized_desired_replicas;
    let mut old_sample = None;
    let cutoff = before(now, window_seconds);
    for (i, rec) in history.recommendations.iter().enumerate() {
        if rec.timestamp < cutoff {
            old_sample = Some(i);
        } else if rec.recommendation > max_recommendation {
            max_recommendation = rec.recommendation;
        }
    }
    let entry = TimestampedRecommendation {
        recommendation: prenormalized_desired_replicas,
        timestamp: now,
    };
    match old_sample {
        Some(i) => history.recommendations[i] = entry,
        None => history.recommendations.push(entry),
    }
    max_recommendation
}

/// Upstream `normalizeDesiredReplicas`: for an HPA without `behavior`.
pub fn normalize_desired_replicas(
    history: &mut ScaleHistory,
    current_replicas: i32,
    prenormalized_desired_replicas: i32,
    min_replicas: i32,
    max_replicas: i32,
    downscale_stabilization_window: i32,
    now: Timestamp,
) -> Normalized {
    let stabilized = stabilize_recommendation(
        history,
        prenormalized_desired_replicas,
        downscale_stabilization_window,
        now,
    );
    let able_to_scale = if stabilized != prenormalized_desired_replicas {
        (
            "ScaleDownStabilized",
            "recent recommendations were higher than current one, applying the highest recent recommendation",
        )
    } else {
        ("ReadyForNewScale", "recommended size matches current size")
    };
    let (replicas, reason, message) =
        convert_desired_replicas_with_rules(current_replicas, stabilized, min_replicas, max_replicas);
    Normalized {
        replicas,
        able_to_scale,
        scaling_limited: (replicas != stabilized, reason, message),
    }
}

/// Upstream `normalizeDesiredReplicasWithBehaviors`: stabilize (both windows), then limit the
/// rate by the policies and bound by min/max.
pub fn normalize_desired_replicas_with_behaviors(
    history: &mut ScaleHistory,
    arg: &NormalizationArg<'_>,
    now: Timestamp,
) -> Normalized {
    let (stabilized, reason, message) = stabilize_recommendation_with_behaviors(history, arg, now);
    let able_to_scale = if stabilized != arg.desired_replicas {
        (reason, message)
    } else {
        ("ReadyForNewScale", "recommended size matches current size")
    };
    let arg = NormalizationArg {
        desired_replicas: stabilized,
        ..arg.clone()
    };
    let (replicas, reason, message) = convert_desired_replicas_with_behavior_rate(history, &arg, now);
    Normalized {
        replicas,
        able_to_scale,
        scaling_limited: (replicas != stabilized, reason, message),
    }
}

/// The behavior with upstream's defaults for what is unset (the API server fills them in;
/// this keeps the controller right for an object that bypassed defaulting), and the scale-down
/// window from `downscale_stabilization_window` when unset (upstream
/// `maybeInitScaleDownStabilizationWindow`).
pub fn behavior_with_defaults(
    behavior: &HorizontalPodAutoscalerBehavior,
    downscale_stabilization_window: i32,
) -> (HPAScalingRules, HPAScalingRules) {
    use k8s_openapi::api::autoscaling::v2::HPAScalingPolicy;
    let policy = |type_: &str, value, period_seconds| HPAScalingPolicy {
        type_: type_.to_string(),
        value,
        period_seconds,
    };
    let fill = |given: Option<&HPAScalingRules>, window: i32, policies: Vec<HPAScalingPolicy>| {
        let given = given.cloned().unwrap_or_default();
        HPAScalingRules {
            stabilization_window_seconds: Some(given.stabilization_window_seconds.unwrap_or(window)),
            select_policy: Some(given.select_policy.unwrap_or_else(|| "Max".to_string())),
            policies: Some(given.policies.unwrap_or(policies)),
            tolerance: given.tolerance,
        }
    };
    let up = fill(
        behavior.scale_up.as_ref(),
        0,
        vec![policy("Pods", 4, 15), policy("Percent", 100, 15)],
    );
    let down = fill(
        behavior.scale_down.as_ref(),
        downscale_stabilization_window,
        vec![policy("Percent", 100, 15)],
    );
    (up, down)
}

fn window(rules: &HPAScalingRules) -> i32 {
    rules.stabilization_window_seconds.unwrap_or(0)
}

/// Upstream `stabilizeRecommendationWithBehaviors`: the current count, raised to the lowest
/// recommendation of the scale-up window and lowered to the highest of the scale-down window.
/// The recommendation is recorded, replacing one older than both windows.
pub fn stabilize_recommendation_with_behaviors(
    history: &mut ScaleHistory,
    arg: &NormalizationArg<'_>,
    now: Timestamp,
) -> (i32, &'static str, &'static str) {
    let up_cutoff = before(now, window(arg.scale_up_behavior));
    let down_cutoff = before(now, window(arg.scale_down_behavior));
    let mut up_recommendation = arg.desired_replicas;
    let mut down_recommendation = arg.desired_replicas;
    let mut old_sample = None;
    for (i, rec) in history.recommendations.iter().enumerate() {
        if rec.timestamp > up_cutoff {
            up_recommendation = up_recommendation.min(rec.recommendation);
        }
        if rec.timestamp > down_cutoff {
            down_recommendation = down_recommendation.max(rec.recommendation);
        }
        if rec.timestamp < up_cutoff && rec.timestamp < down_cutoff {
            old_sample = Some(i);
        }
    }
    let recommendation = arg
        .current_replicas
        .max(up_recommendation)
        .min(down_recommendation);
    let entry = TimestampedRecommendation {
        recommendation: arg.desired_replicas,
        timestamp: now,
    };
    match old_sample {
        Some(i) => history.recommendations[i] = entry,
        None => history.recommendations.push(entry),
    }
    if arg.desired_replicas >= arg.current_replicas {
        (
            recommendation,
            "ScaleUpStabilized",
            "recent recommendations were lower than current one, applying the lowest recent recommendation",
        )
    } else {
        (
            recommendation,
            "ScaleDownStabilized",
            "recent recommendations were higher than current one, applying the highest recent recommendation",
        )
    }
}

/// Upstream `convertDesiredReplicasWithBehaviorRate`: the policies' rate limit, then min/max.
pub fn convert_desired_replicas_with_behavior_rate(
    history: &ScaleHistory,
    arg: &NormalizationArg<'_>,
    now: Timestamp,
) -> (i32, &'static str, &'static str) {
    if arg.desired_replicas > arg.current_replicas {
        let scale_up_limit = calculate_scale_up_limit_with_scaling_rules(
            arg.current_replicas,
            &history.scale_up_events,
            &history.scale_down_events,
            arg.scale_up_behavior,
            now,
        )
        .max(arg.current_replicas);
        let (maximum, reason, message) = if arg.max_replicas > scale_up_limit {
            (
                scale_up_limit,
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate",
            )
        } else {
            (
                arg.max_replicas,
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            )
        };
        if arg.desired_replicas > maximum {
            return (maximum, reason, message);
        }
    } else if arg.desired_replicas < arg.current_replicas {
        let scale_down_limit = calculate_scale_down_limit_with_behaviors(
            arg.current_replicas,
            &history.scale_up_events,
            &history.scale_down_events,
            arg.scale_down_behavior,
            now,
        )
        .min(arg.current_replicas);
        let (minimum, reason, message) = if arg.min_replicas < scale_down_limit {
            (
                scale_down_limit,
                "ScaleDownLimit",
                "the desired replica count is decreasing faster than the maximum scale rate",
            )
        } else {
            (
                arg.min_replicas,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
            )
        };
        if arg.desired_replicas < minimum {
            return (minimum, reason, message);
        }
    }
    (
        arg.desired_replicas,
        "DesiredWithinRange",
        "the desired count is within the acceptable range",
    )
}

/// Upstream `convertDesiredReplicasWithRules`: min/max, and at most [`calculate_scale_up_limit`].
pub fn convert_desired_replicas_with_rules(
    current_replicas: i32,
    desired_replicas: i32,
    hpa_min_replicas: i32,
    hpa_max_replicas: i32,
) -> (i32, &'static str, &'static str) {
    let scale_up_limit = calculate_scale_up_limit(current_replicas);
    let (maximum, mut reason, mut message) = if hpa_max_replicas > scale_up_limit {
        (
            scale_up_limit,
            "ScaleUpLimit",
            "the desired replica count is increasing faster than the maximum scale rate",
        )
    } else {
        (
            hpa_max_replicas,
            "TooManyReplicas",
            "the desired replica count is more than the maximum replica count",
        )
    };
    if desired_replicas < hpa_min_replicas {
        reason = "TooFewReplicas";
        message = "the desired replica count is less than the minimum replica count";
        return (hpa_min_replicas, reason, message);
    }
    if desired_replicas > maximum {
        return (maximum, reason, message);
    }
    (
        desired_replicas,
        "DesiredWithinRange",
        "the desired count is within the acceptable range",
    )
}

/// Upstream `calculateScaleUpLimit`: `max(2 × current, 4)`.
pub fn calculate_scale_up_limit(current_replicas: i32) -> i32 {
    let limit = (SCALE_UP_LIMIT_FACTOR * f64::from(current_replicas)).max(SCALE_UP_LIMIT_MINIMUM);
    if limit >= f64::from(i32::MAX) {
        i32::MAX
    } else {
        limit as i32
    }
}

/// Upstream `getReplicasChangePerPeriod`: the replicas changed by the events of the last
/// `period_seconds`.
pub fn get_replicas_change_per_period(
    period_seconds: i32,
    scale_events: &[TimestampedScaleEvent],
    now: Timestamp,
) -> i32 {
    let cutoff = before(now, period_seconds);
    scale_events
        .iter()
        .filter(|e| e.timestamp > cutoff)
        .map(|e| e.replica_change)
        .fold(0i32, i32::saturating_add)
}

/// The replicas at the start of a policy's period: now, less what was added, plus what was
/// removed within it.
fn period_start_replicas(
    current_replicas: i32,
    period_seconds: i32,
    scale_up_events: &[TimestampedScaleEvent],
    scale_down_events: &[TimestampedScaleEvent],
    now: Timestamp,
) -> i32 {
    let added = get_replicas_change_per_period(period_seconds, scale_up_events, now);
    let deleted = get_replicas_change_per_period(period_seconds, scale_down_events, now);
    current_replicas.saturating_sub(added).saturating_add(deleted)
}

fn clamp_i32(v: f64) -> i32 {
    if v >= f64::from(i32::MAX) {
        i32::MAX
    } else if v <= f64::from(i32::MIN) {
        i32::MIN
    } else {
        v as i32
    }
}

/// Upstream `calculateScaleUpLimitWithScalingRules`: the most replicas the policies allow now
/// (`Max`: the largest of the policies' limits, `Min`: the smallest, `Disabled`: no change).
pub fn calculate_scale_up_limit_with_scaling_rules(
    current_replicas: i32,
    scale_up_events: &[TimestampedScaleEvent],
    scale_down_events: &[TimestampedScaleEvent],
    rules: &HPAScalingRules,
    now: Timestamp,
) -> i32 {
    let select = rules.select_policy.as_deref().unwrap_or("Max");
    if select == "Disabled" {
        return current_replicas;
    }
    let min_change = select == "Min";
    let mut result = if min_change { i32::MAX } else { i32::MIN };
    for policy in rules.policies.iter().flatten() {
        let start = period_start_replicas(
            current_replicas,
            policy.period_seconds,
            scale_up_events,
            scale_down_events,
            now,
        );
        let proposed = match policy.type_.as_str() {
            "Pods" => start.saturating_add(policy.value),
            "Percent" => clamp_i32((f64::from(start) * (1.0 + f64::from(policy.value) / 100.0)).ceil()),
            _ => continue,
        };
        result = if min_change {
            result.min(proposed)
        } else {
            result.max(proposed)
        };
    }
    result
}

/// Upstream `calculateScaleDownLimitWithBehaviors`: the fewest replicas the policies allow now
/// (`Max`: the largest change, so the smallest limit; `Min`: the smallest change).
pub fn calculate_scale_down_limit_with_behaviors(
    current_replicas: i32,
    scale_up_events: &[TimestampedScaleEvent],
    scale_down_events: &[TimestampedScaleEvent],
    rules: &HPAScalingRules,
    now: Timestamp,
) -> i32 {
    let select = rules.select_policy.as_deref().unwrap_or("Max");
    if select == "Disabled" {
        return current_replicas;
    }
    let min_change = select == "Min";
    let mut result = if min_change { i32::MIN } else { i32::MAX };
    for policy in rules.policies.iter().flatten() {
        let start = period_start_replicas(
            current_replicas,
            policy.period_seconds,
            scale_up_events,
            scale_down_events,
            now,
        );
        let proposed = match policy.type_.as_str() {
            "Pods" => start.saturating_sub(policy.value),
            "Percent" => clamp_i32(f64::from(start) * (1.0 - f64::from(policy.value) / 100.0)),
            _ => continue,
        };
        result = if min_change {
            result.max(proposed)
        } else {
            result.min(proposed)
        };
    }
    result
}

/// Upstream `getLongestPolicyPeriod`.
pub fn get_longest_policy_period(rules: &HPAScalingRules) -> i32 {
    rules
        .policies
        .iter()
        .flatten()
        .map(|p| p.period_seconds)
        .max()
        .unwrap_or(0)
        .max(0)
}

/// Upstream `markScaleEventsOutdated`.
pub fn mark_scale_events_outdated(
    events: &mut [TimestampedScaleEvent],
    longest_policy_period: i32,
    now: Timestamp,
) {
    let cutoff = before(now, longest_policy_period);
    for event in events.iter_mut() {
        if event.timestamp < cutoff {
            event.outdated = true;
        }
    }
}

/// Upstream `storeScaleEvent`: remembers a scale-up or scale-down (reusing an outdated slot);
/// nothing without a behavior (the events are only read by its policies).
pub fn store_scale_event(
    history: &mut ScaleHistory,
    rules: Option<(&HPAScalingRules, &HPAScalingRules)>,
    prev_replicas: i32,
    new_replicas: i32,
    now: Timestamp,
) {
    let Some((up, down)) = rules else {
        return;
    };
    let (events, rules, change) = if new_replicas > prev_replicas {
        (
            &mut history.scale_up_events,
            up,
            new_replicas.saturating_sub(prev_replicas),
        )
    } else {
        (
            &mut history.scale_down_events,
            down,
            prev_replicas.saturating_sub(new_replicas),
        )
    };
    mark_scale_events_outdated(events, get_longest_policy_period(rules), now);
    let event = TimestampedScaleEvent {
        replica_change: change,
        timestamp: now,
        outdated: false,
    };
    match events.iter().rposition(|e| e.outdated) {
        Some(i) => events[i] = event,
        None => events.push(event),
    }
}
