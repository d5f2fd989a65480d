//! The HPA's journal sentences: the message functions by their exact text, and the
//! normalization replayed on a history as the sync had it.

use jiff::Timestamp;
use k8s_openapi::api::autoscaling::v2::{HPAScalingPolicy, HPAScalingRules};

use crate::podautoscaler::decisions::{self, Normalization};
use crate::podautoscaler::normalize::{NormalizationArg, ScaleHistory, TimestampedRecommendation};
use crate::runtime::decision;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + secs).unwrap()
}

/// A history holding `recommendation` from `secs`.
fn history(recommendations: &[(i32, i64)]) -> ScaleHistory {
    ScaleHistory {
        recommendations: recommendations
            .iter()
            .map(|&(recommendation, secs)| TimestampedRecommendation {
                recommendation,
                timestamp: at(secs),
            })
            .collect(),
        ..ScaleHistory::default()
    }
}

#[test]
fn the_utilization_comparison_reads_as_a_sentence() {
    let outside = decisions::utilization("cpu", 75, 50, 0.1);
    assert_eq!(
        outside,
        "cpu utilization 75% / target 50% = usageRatio 1.50, outside tolerance 0.1"
    );
    assert_eq!(
        decisions::proposal(&[outside], 6, None),
        decision(
            "computeReplicasForMetrics",
            "cpu utilization 75% / target 50% = usageRatio 1.50, outside tolerance 0.1: desired 6".into()
        )
    );
    let within = decisions::utilization("cpu", 52, 50, 0.1);
    let other = decisions::value("pods metric qps", "12 average", "10 average");
    assert_eq!(
        decisions::proposal(&[within, other], 4, Some("pods metric qps")).message,
        "cpu utilization 52% / target 50% = usageRatio 1.04, within tolerance 0.1; \
         pods metric qps 12 average / target 10 average: desired 4, the largest proposal (pods metric qps)"
    );
}

#[test]
fn a_normalization_names_its_window_its_limit_and_the_rescale() {
    let n = Normalization {
        function: "normalizeDesiredReplicas",
        recommendation: 6,
        stabilization: "scale-down stabilization window 300s: highest recommendation".into(),
        stabilized: 6,
        limit: "within minReplicas 1, maxReplicas 10".into(),
        replicas: 6,
    };
    let reason = "cpu resource utilization (percentage of request) above target";
    assert_eq!(
        decisions::normalized(&n, 4, "Deployment web", reason).message,
        "recommendation 6; scale-down stabilization window 300s: highest recommendation 6; \
         within minReplicas 1, maxReplicas 10: scaling Deployment web 4 → 6 \
         (reason: cpu resource utilization (percentage of request) above target)"
    );
    assert_eq!(
        decisions::normalized(&n, 6, "Deployment web", "").message,
        "recommendation 6; scale-down stabilization window 300s: highest recommendation 6; \
         within minReplicas 1, maxReplicas 10: keep 6"
    );
    assert_eq!(
        decisions::out_of_range(
            12,
            "maxReplicas",
            10,
            "Deployment web",
            "Current number of replicas above Spec.MaxReplicas"
        ),
        decision(
            "reconcileAutoscaler",
            "current replicas 12 outside maxReplicas 10: scaling Deployment web 12 → 10 \
             (reason: Current number of replicas above Spec.MaxReplicas)"
                .into()
        )
    );
}

#[test]
fn the_scale_down_window_keeps_the_highest_recent_recommendation() {
    let h = history(&[(6, 0), (5, 100)]);
    let n = decisions::normalization(&h, 6, 3, (1, 10), 300, at(200));
    assert_eq!((n.stabilized, n.replicas), (6, 6));
    assert_eq!(
        decisions::normalized(&n, 6, "Deployment web", "All metrics below target").message,
        "recommendation 3; scale-down stabilization window 300s: highest recommendation 6; \
         within minReplicas 1, maxReplicas 10: keep 6"
    );
    assert_eq!(h.recommendations.len(), 2, "the sync's history is untouched");
}

#[test]
fn a_scale_up_policy_limits_the_rate() {
    let up = HPAScalingRules {
        stabilization_window_seconds: Some(0),
        select_policy: Some("Max".into()),
        policies: Some(vec![HPAScalingPolicy {
            type_: "Pods".into(),
            value: 4,
            period_seconds: 60,
        }]),
        tolerance: None,
    };
    let down = HPAScalingRules {
        stabilization_window_seconds: Some(300),
        ..up.clone()
    };
    let arg = NormalizationArg {
        scale_up_behavior: &up,
        scale_down_behavior: &down,
        min_replicas: 1,
        max_replicas: 20,
        current_replicas: 4,
        desired_replicas: 10,
    };
    let n = decisions::normalization_with_behaviors(&history(&[(4, 0)]), &arg, at(100));
    assert_eq!(
        decisions::normalized(&n, 4, "Deployment web", "cpu resource utilization (percentage of request) above target"),
        decision(
            "normalizeDesiredReplicasWithBehaviors",
            "recommendation 10; stabilization windows scaleUp 0s, scaleDown 300s: 10; \
             behavior scaleUp policies Pods 4 per 60s (selectPolicy Max) limit 10 → 8: \
             scaling Deployment web 4 → 8 (reason: cpu resource utilization (percentage of request) above target)"
                .into()
        )
    );
}
