//! Normalization tables: bounds and the default scale-up limit, stabilization windows, and the
//! `behavior` policies (after upstream's `TestNormalizeDesiredReplicas*`,
//! `TestScalingWithRules`, `TestStoreScaleEvents` and `TestStabilizeRecommendationWithBehaviors`
//! in `horizontal_test.go`).

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::autoscaling::v2::{HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscalerBehavior};

use super::fixtures::now;
use crate::podautoscaler::normalize::*;

fn ago(s: i64) -> Timestamp {
    now() - SignedDuration::from_secs(s)
}

fn rec(recommendation: i32, secs_ago: i64) -> TimestampedRecommendation {
    TimestampedRecommendation {
        recommendation,
        timestamp: ago(secs_ago),
    }
}

fn event(replica_change: i32, secs_ago: i64) -> TimestampedScaleEvent {
    TimestampedScaleEvent {
        replica_change,
        timestamp: ago(secs_ago),
        outdated: false,
    }
}

fn policy(type_: &str, value: i32, period_seconds: i32) -> HPAScalingPolicy {
    HPAScalingPolicy {
        type_: type_.to_string(),
        value,
        period_seconds,
    }
}

fn rules(select: &str, window: i32, policies: Vec<HPAScalingPolicy>) -> HPAScalingRules {
    HPAScalingRules {
        select_policy: Some(select.to_string()),
        stabilization_window_seconds: Some(window),
        policies: Some(policies),
        tolerance: None,
    }
}

/// The API server's defaults (`defaultHPAScaleUpRules`, `defaultHPAScaleDownRules` with the
/// controller's 300 s window).
fn defaults() -> (HPAScalingRules, HPAScalingRules) {
    behavior_with_defaults(&HorizontalPodAutoscalerBehavior::default(), 300)
}

#[test]
fn defaults_are_upstreams() {
    let (up, down) = defaults();
    assert_eq!(
        up,
        rules("Max", 0, vec![policy("Pods", 4, 15), policy("Percent", 100, 15)])
    );
    assert_eq!(down, rules("Max", 300, vec![policy("Percent", 100, 15)]));
    // A given window wins over the controller's default.
    let given = HorizontalPodAutoscalerBehavior {
        scale_down: Some(HPAScalingRules {
            stabilization_window_seconds: Some(60),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        behavior_with_defaults(&given, 300).1.stabilization_window_seconds,
        Some(60)
    );
}

#[test]
fn stabilization_keeps_the_highest_recent_recommendation() {
    let mut h = ScaleHistory {
        recommendations: vec![rec(9, 400), rec(6, 10)],
        ..Default::default()
    };
    // 9 is older than the window and does not count; 6 does.
    assert_eq!(stabilize_recommendation(&mut h, 2, 300, now()), 6);
    // The expired entry's slot now holds this recommendation.
    assert_eq!(h.recommendations, vec![rec(2, 0), rec(6, 10)]);
    // A higher recommendation than any recent one is taken as it is.
    assert_eq!(stabilize_recommendation(&mut h, 8, 300, now()), 8);
    assert_eq!(h.recommendations.len(), 3);
}

#[test]
fn record_initial_recommendation_only_once() {
    let mut h = ScaleHistory::default();
    record_initial_recommendation(&mut h, 3, ago(30));
    record_initial_recommendation(&mut h, 7, now());
    assert_eq!(h.recommendations, vec![rec(3, 30)]);
}

/// Upstream `TestNormalizeDesiredReplicas`-like: (current, desired, min, max) → (replicas,
/// limited, reason), with no recent recommendations.
#[test]
fn normalize_without_behavior_bounds_and_scale_up_limit() {
    let cases = [
        ("within range", 4, 6, 1, 10, (6, false, "DesiredWithinRange")),
        (
            "at most max(2 x current, 4) from 1",
            1,
            10,
            1,
            20,
            (4, true, "ScaleUpLimit"),
        ),
        (
            "at most 2 x current from 5",
            5,
            30,
            1,
            20,
            (10, true, "ScaleUpLimit"),
        ),
        (
            "maxReplicas below the rate limit",
            5,
            30,
            1,
            8,
            (8, true, "TooManyReplicas"),
        ),
        ("below minReplicas", 5, 1, 3, 10, (3, true, "TooFewReplicas")),
    ];
    for (name, current, desired, min, max, (want, limited, reason)) in cases {
        let mut h = ScaleHistory::default();
        let n = normalize_desired_replicas(&mut h, current, desired, min, max, 300, now());
        assert_eq!(n.replicas, want, "{name}");
        assert_eq!(
            (n.scaling_limited.0, n.scaling_limited.1),
            (limited, reason),
            "{name}"
        );
        assert_eq!(n.able_to_scale.0, "ReadyForNewScale", "{name}");
    }
}

#[test]
fn normalize_without_behavior_holds_a_scale_down_for_the_window() {
    let mut h = ScaleHistory {
        recommendations: vec![rec(6, 120)],
        ..Default::default()
    };
    let n = normalize_desired_replicas(&mut h, 6, 2, 1, 10, 300, now());
    assert_eq!(n.replicas, 6);
    assert_eq!(n.able_to_scale.0, "ScaleDownStabilized");
    assert_eq!(
        n.able_to_scale.1,
        "recent recommendations were higher than current one, applying the highest recent recommendation"
    );
    // Six minutes later the 6 has left the window.
    let later = now() + SignedDuration::from_mins(6);
    let n = normalize_desired_replicas(&mut h, 6, 2, 1, 10, 300, later);
    assert_eq!(n.replicas, 2);
}

/// After upstream `TestScalingWithRules`: (name, up rules, down rules, scale-up events,
/// scale-down events, min, max, current, desired) → (replicas, ScalingLimited reason).
#[test]
fn behavior_policies_limit_the_rate() {
    let (default_up, default_down) = defaults();
    type Case = (
        &'static str,
        HPAScalingRules,
        HPAScalingRules,
        Vec<TimestampedScaleEvent>,
        Vec<TimestampedScaleEvent>,
        (i32, i32, i32, i32),
        (i32, &'static str),
    );
    let cases: Vec<Case> = vec![
        (
            "default scale-up: the larger of +4 and +100% per 15 s",
            default_up.clone(),
            default_down.clone(),
            vec![],
            vec![],
            (1, 1000, 10, 50),
            (20, "ScaleUpLimit"),
        ),
        (
            "pods policy larger than percent policy",
            rules(
                "Max",
                0,
                vec![policy("Pods", 100, 60), policy("Percent", 100, 60)],
            ),
            default_down.clone(),
            vec![],
            vec![],
            (1, 1000, 10, 500),
            (110, "ScaleUpLimit"),
        ),
        (
            "selectPolicy Min takes the smaller change",
            rules("Min", 0, vec![policy("Pods", 4, 15), policy("Percent", 100, 15)]),
            default_down.clone(),
            vec![],
            vec![],
            (1, 1000, 10, 50),
            (14, "ScaleUpLimit"),
        ),
        (
            "scale-up Disabled",
            rules("Disabled", 0, vec![policy("Pods", 4, 15)]),
            default_down.clone(),
            vec![],
            vec![],
            (1, 1000, 10, 50),
            (10, "ScaleUpLimit"),
        ),
        (
            "maxReplicas below the rate limit",
            default_up.clone(),
            default_down.clone(),
            vec![],
            vec![],
            (1, 12, 10, 50),
            (12, "TooManyReplicas"),
        ),
        (
            "replicas added within the period count against it",
            rules("Max", 0, vec![policy("Pods", 4, 60)]),
            default_down.clone(),
            vec![event(3, 30)],
            vec![],
            (1, 1000, 10, 50),
            (11, "ScaleUpLimit"),
        ),
        (
            "events older than the period do not count",
            rules("Max", 0, vec![policy("Pods", 4, 60)]),
            default_down.clone(),
            vec![event(3, 90)],
            vec![],
            (1, 1000, 10, 50),
            (14, "ScaleUpLimit"),
        ),
        (
            "the period's budget spent: no further scale-up",
            rules("Max", 0, vec![policy("Pods", 4, 60)]),
            default_down.clone(),
            vec![event(5, 10)],
            vec![],
            (1, 1000, 10, 50),
            (10, "ScaleUpLimit"),
        ),
        (
            "a scale-down within the period gives its replicas back to the scale-up budget",
            rules("Max", 0, vec![policy("Pods", 4, 60)]),
            default_down.clone(),
            vec![],
            vec![event(2, 10)],
            (1, 1000, 10, 50),
            (16, "ScaleUpLimit"),
        ),
        (
            "default scale-down: 100% at once, bounded by minReplicas",
            default_up.clone(),
            default_down.clone(),
            vec![],
            vec![],
            (1, 1000, 10, 1),
            (1, "DesiredWithinRange"),
        ),
        (
            "below minReplicas",
            default_up.clone(),
            default_down.clone(),
            vec![],
            vec![],
            (3, 1000, 10, 1),
            (3, "TooFewReplicas"),
        ),
        (
            "scale-down by pods",
            default_up.clone(),
            rules("Max", 0, vec![policy("Pods", 2, 60)]),
            vec![],
            vec![],
            (1, 1000, 10, 1),
            (8, "ScaleDownLimit"),
        ),
        (
            "scale-down by percent, with replicas removed in the period",
            default_up.clone(),
            rules("Max", 0, vec![policy("Percent", 50, 60)]),
            vec![],
            vec![event(2, 30)],
            (1, 1000, 10, 1),
            (6, "ScaleDownLimit"),
        ),
        (
            "scale-down selectPolicy Min: the smaller change",
            default_up.clone(),
            rules("Min", 0, vec![policy("Pods", 2, 60), policy("Percent", 50, 60)]),
            vec![],
            vec![],
            (1, 1000, 10, 1),
            (8, "ScaleDownLimit"),
        ),
        (
            "scale-down selectPolicy Max: the larger change",
            default_up.clone(),
            rules("Max", 0, vec![policy("Pods", 2, 60), policy("Percent", 50, 60)]),
            vec![],
            vec![],
            (1, 1000, 10, 1),
            (5, "ScaleDownLimit"),
        ),
        (
            "scale-down Disabled",
            default_up.clone(),
            rules("Disabled", 0, vec![policy("Pods", 2, 60)]),
            vec![],
            vec![],
            (1, 1000, 10, 1),
            (10, "ScaleDownLimit"),
        ),
    ];
    for (name, up, down, up_events, down_events, (min, max, current, desired), (want, reason)) in cases {
        let h = ScaleHistory {
            recommendations: vec![],
            scale_up_events: up_events,
            scale_down_events: down_events,
        };
        let arg = NormalizationArg {
            scale_up_behavior: &up,
            scale_down_behavior: &down,
            min_replicas: min,
            max_replicas: max,
            current_replicas: current,
            desired_replicas: desired,
        };
        let (got, got_reason, _) = convert_desired_replicas_with_behavior_rate(&h, &arg, now());
        assert_eq!((got, got_reason), (want, reason), "{name}");
    }
}

#[test]
fn behavior_stabilization_windows_both_ways() {
    let (_, default_down) = defaults();
    let up = rules("Max", 30, vec![policy("Pods", 100, 15)]);
    let down = rules("Max", 60, vec![policy("Percent", 100, 15)]);
    let arg = |current, desired| NormalizationArg {
        scale_up_behavior: &up,
        scale_down_behavior: &down,
        min_replicas: 1,
        max_replicas: 100,
        current_replicas: current,
        desired_replicas: desired,
    };
    // Scale-down: the highest recommendation of the last 60 s.
    let mut h = ScaleHistory {
        recommendations: vec![rec(9, 90), rec(6, 30), rec(2, 15)],
        ..Default::default()
    };
    let (r, reason, _) = stabilize_recommendation_with_behaviors(&mut h, &arg(6, 2), now());
    assert_eq!((r, reason), (6, "ScaleDownStabilized"));
    // The 90 s old entry was older than both windows: its slot was reused.
    assert_eq!(h.recommendations[0], rec(2, 0));
    // Scale-up: the lowest recommendation of the last 30 s.
    let mut h = ScaleHistory {
        recommendations: vec![rec(3, 10)],
        ..Default::default()
    };
    let (r, reason, message) = stabilize_recommendation_with_behaviors(&mut h, &arg(3, 8), now());
    assert_eq!((r, reason), (3, "ScaleUpStabilized"));
    assert_eq!(
        message,
        "recent recommendations were lower than current one, applying the lowest recent recommendation"
    );
    // With the default scale-up window (0) a scale-up is immediate.
    let arg0 = NormalizationArg {
        scale_up_behavior: &defaults().0,
        scale_down_behavior: &default_down,
        ..arg(3, 8)
    };
    let mut h = ScaleHistory {
        recommendations: vec![rec(3, 10)],
        ..Default::default()
    };
    assert_eq!(stabilize_recommendation_with_behaviors(&mut h, &arg0, now()).0, 8);
}

/// The worked example of `normalize.rs`: a scale-down window of 60 s and a sync every 15 s;
/// recommendations 6, 6, then 2 from t = 30 keep the HPA at 6 until t = 75.
#[test]
fn a_scale_down_waits_out_the_window() {
    let up = defaults().0;
    let down = rules("Max", 60, vec![policy("Percent", 100, 15)]);
    let start = now();
    let mut h = ScaleHistory::default();
    let mut current = 6;
    let mut scaled_at = None;
    for step in 0..10 {
        let t = start + SignedDuration::from_secs(15 * step);
        let recommendation = if step < 2 { 6 } else { 2 };
        let arg = NormalizationArg {
            scale_up_behavior: &up,
            scale_down_behavior: &down,
            min_replicas: 1,
            max_replicas: 10,
            current_replicas: current,
            desired_replicas: recommendation,
        };
        let n = normalize_desired_replicas_with_behaviors(&mut h, &arg, t);
        if n.replicas != current {
            store_scale_event(&mut h, Some((&up, &down)), current, n.replicas, t);
            current = n.replicas;
            scaled_at.get_or_insert(15 * step);
        } else if recommendation < current {
            assert_eq!(n.able_to_scale.0, "ScaleDownStabilized", "t = {}", 15 * step);
        }
    }
    assert_eq!(current, 2);
    assert_eq!(scaled_at, Some(75));
}

#[test]
fn scale_events_reuse_outdated_slots() {
    let up = rules("Max", 0, vec![policy("Pods", 4, 60)]);
    let down = rules("Max", 0, vec![policy("Pods", 4, 30)]);
    let mut h = ScaleHistory {
        scale_up_events: vec![event(2, 120), event(1, 10)],
        ..Default::default()
    };
    store_scale_event(&mut h, Some((&up, &down)), 3, 7, now());
    let mut want = event(2, 120);
    want.outdated = true;
    assert_eq!(h.scale_up_events, vec![event(4, 0), event(1, 10)]);
    store_scale_event(&mut h, Some((&up, &down)), 7, 5, now());
    assert_eq!(h.scale_down_events, vec![event(2, 0)]);
    // Without a behavior nothing is stored.
    let mut none = ScaleHistory::default();
    store_scale_event(&mut none, None, 3, 7, now());
    assert_eq!(none, ScaleHistory::default());
    let _ = want;
}

#[test]
fn replicas_change_per_period_counts_recent_events() {
    let events = [event(3, 10), event(2, 50), event(5, 70)];
    assert_eq!(get_replicas_change_per_period(60, &events, now()), 5);
    assert_eq!(get_replicas_change_per_period(15, &events, now()), 3);
    assert_eq!(calculate_scale_up_limit(1), 4);
    assert_eq!(calculate_scale_up_limit(7), 14);
}
