//! The HorizontalPodAutoscaler end to end: the real `kubectl` against an in-process miniplane
//! (3 simulated nodes, every controller, the scheduler, the kubelet and its traffic simulation;
//! nothing mocked) whose clock runs [`SCALE`] times faster than real time.
//!
//! `examples/workloads/hpa-cpu.yaml`: a Deployment of 2 pods requesting 100m cpu behind a
//! Service at 10 requests/s (10 millicores per request/s: 50m, 50% each), and an HPA with a
//! 50% cpu target and a 60 s scale-down window. Covered:
//! * the HPA settles at 2 replicas, `kubectl get hpa` shows `cpu: N%/50%` and `2` replicas;
//! * the request rate triples: the HPA scales to ⌈2 × 150 / 50⌉ = 6 (upstream's arithmetic;
//!   the total usage is fixed by the rate, so 6 is where it settles), with upstream's event;
//! * the rate falls back: the HPA holds 6 through the 60 s window (`ScaleDownStabilized`),
//!   then scales to 2; `kubectl describe hpa` shows the conditions and the rescale events.
//!
//! Every wait is bounded ([`e2e::PATIENCE`] of real time per poll).

use std::time::{Duration, SystemTime};

use e2e::{Cluster, Config};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 30.0;

const MANIFEST: &str = include_str!("../../../examples/workloads/hpa-cpu.yaml");
const RPS: &str = "sim.miniplane.dev/requests-per-second";

async fn cluster() -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        sim: Some(SimConfig {
            nodes: 3,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    })
    .await
}

fn status_i64(hpa: &Value, field: &str) -> i64 {
    hpa["status"][field].as_i64().unwrap_or(-1)
}

fn cpu_utilization(hpa: &Value) -> Option<i64> {
    hpa["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"].as_i64()
}

/// The HPA's `AbleToScale` reason.
fn able_to_scale(hpa: &Value) -> String {
    let conditions = hpa["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions
        .iter()
        .find(|c| c["type"] == "AbleToScale")
        .and_then(|c| c["reason"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The HPA's `SuccessfulRescale` events (simulated time first recorded, message), oldest first.
async fn rescale_events(c: &Cluster) -> Vec<(SystemTime, String)> {
    let events = c
        .json(&["get", "events", "--field-selector", "reason=SuccessfulRescale"])
        .await;
    let mut items: Vec<(SystemTime, String)> = events["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let at = e["firstTimestamp"].as_str().expect("firstTimestamp");
            let message = e["message"].as_str().unwrap_or("").to_string();
            (parse_time(at), message)
        })
        .collect();
    items.sort();
    items
}

/// The messages of the HPA's `SuccessfulRescale` events, oldest first.
async fn rescales(c: &Cluster) -> Vec<String> {
    rescale_events(c).await.into_iter().map(|(_, m)| m).collect()
}

/// An RFC 3339 time, read as `k8s_openapi`'s `Time` reads it.
fn parse_time(s: &str) -> SystemTime {
    let t: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time =
        serde_json::from_value(Value::String(s.to_string())).expect("an RFC 3339 time");
    t.0.into()
}

/// The server's simulated now.
fn sim_now(c: &Cluster) -> SystemTime {
    c.server().api().clock().now()
}

/// The (function, message) of each decision the causal journal holds about HPA web.
async fn decisions(c: &Cluster) -> Vec<(String, String)> {
    c.journal()
        .await
        .values()
        .filter(|e| {
            e["step"] == "decision"
                && e["actor"] == "horizontal-pod-autoscaler"
                && e["object"]["kind"] == "HorizontalPodAutoscaler"
                && e["object"]["name"] == "web"
        })
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (text("function"), text("message"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hpa_scales_with_the_request_rate_and_down_after_the_window() {
    let mut c = cluster().await;
    c.run_with_yaml(&["apply"], MANIFEST).await;

    // Settled at 2: the traffic has run a full rate window on Ready pods, at about 50% each.
    let hpa = c
        .eventually_json(&["get", "hpa", "web"], "the HPA at 2 replicas, near 50%", |h| {
            status_i64(h, "currentReplicas") == 2
                && cpu_utilization(h).is_some_and(|u| (40..=60).contains(&u))
        })
        .await;
    assert_eq!(status_i64(&hpa, "desiredReplicas"), 2);
    let row = c.ok(&["get", "hpa", "web", "--no-headers"]).await;
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cols[..2], &["web", "Deployment/web"], "{row}");
    assert_eq!(cols[2], "cpu:", "{row}");
    assert!(cols[3].ends_with("%/50%"), "TARGETS: {row}");
    assert_eq!(&cols[4..7], &["1", "10", "2"], "MINPODS MAXPODS REPLICAS: {row}");

    // Three times the requests: 150% each, ⌈2 × 3.0⌉ = 6.
    c.ok(&["annotate", "--overwrite", "service", "web", &format!("{RPS}=30")])
        .await;
    c.eventually_json(&["get", "hpa", "web"], "the HPA at 6 replicas", |h| {
        status_i64(h, "currentReplicas") == 6 && status_i64(h, "desiredReplicas") == 6
    })
    .await;
    c.eventually_json(&["get", "deployment", "web"], "6 ready pods", |d| {
        d["status"]["readyReplicas"].as_i64() == Some(6)
    })
    .await;
    let ups = rescales(&c).await;
    assert!(
        ups.last().is_some_and(|m| m.starts_with(
            "New size: 6; reason: cpu resource utilization (percentage of request) above target"
        )),
        "{ups:?}"
    );
    assert!(
        ups.iter().all(|m| m.ends_with("above target")),
        "only scale-ups so far: {ups:?}"
    );

    // Back to 10 requests/s: 100m over 6 pods, recommendation ⌈0.33 × 6⌉ = 2, held for the
    // 60 s window since the last higher recommendation.
    let lowered = sim_now(&c);
    c.ok(&["annotate", "--overwrite", "service", "web", &format!("{RPS}=10")])
        .await;
    let held = c
        .eventually_json(&["get", "hpa", "web"], "a stabilized scale-down", |h| {
            able_to_scale(h) == "ScaleDownStabilized"
        })
        .await;
    assert_eq!(status_i64(&held, "currentReplicas"), 6, "held at 6");
    let hpa = c
        .eventually_json(&["get", "hpa", "web"], "the HPA back at 2", |h| {
            status_i64(h, "desiredReplicas") == 2 && status_i64(h, "currentReplicas") == 2
        })
        .await;
    // (AbleToScale may still read ScaleDownStabilized: the remaining pods' 1m rates are still
    // catching up with their larger share, and a lower recommendation is held at 2.)
    assert_eq!(status_i64(&hpa, "currentReplicas"), 2);
    // Every scale-down came a full window after the rate fell (the 1m rate may take the count
    // down in steps, each one the highest recommendation of the last 60 s).
    let all = rescale_events(&c).await;
    let downs: Vec<&(SystemTime, String)> = all
        .iter()
        .filter(|(_, m)| m.ends_with("All metrics below target"))
        .collect();
    assert!(!downs.is_empty(), "{all:?}");
    for (at, message) in &downs {
        let waited = at.duration_since(lowered).unwrap_or_default();
        assert!(
            waited >= Duration::from_secs(60),
            "{message:?} {waited:?} after the rate fell (window 60 s): {all:?}"
        );
    }
    assert_eq!(
        downs.last().map(|(_, m)| m.as_str()),
        Some("New size: 2; reason: All metrics below target"),
        "{all:?}"
    );

    // The causal journal: each sync's proposal with its ratio, and the rescales it decided.
    let decided = decisions(&c).await;
    let of = |function: &str| -> Vec<&String> {
        decided
            .iter()
            .filter(|(f, _)| f == function)
            .map(|(_, m)| m)
            .collect()
    };
    let proposals = of("computeReplicasForMetrics");
    assert!(
        proposals.iter().any(|m| m.starts_with("cpu utilization ")
            && m.contains("% / target 50% = usageRatio ")
            && m.ends_with(": desired 6")),
        "{decided:#?}"
    );
    let normalized: Vec<&String> = decided
        .iter()
        .filter(|(f, _)| f.starts_with("normalizeDesiredReplicas"))
        .map(|(_, m)| m)
        .collect();
    assert!(
        normalized.iter().any(|m| m
            .ends_with(" → 6 (reason: cpu resource utilization (percentage of request) above target)")
            && m.contains("scaling Deployment web ")),
        "{decided:#?}"
    );
    assert!(
        normalized
            .iter()
            .any(|m| m.ends_with(" → 2 (reason: All metrics below target)")),
        "{decided:#?}"
    );

    // kubectl describe: the conditions and the events, as upstream's describer shows them.
    let described = c.ok(&["describe", "hpa", "web"]).await;
    for needle in [
        "Reference:",
        "Deployment/web",
        "resource cpu on pods  (as a percentage of request):",
        "Min replicas:",
        "Max replicas:",
        "Conditions:",
        "AbleToScale True",
        "ScalingActive True ValidMetricFound",
        "ScalingLimited",
        "Normal SuccessfulRescale",
        "New size: 6; reason: cpu resource utilization (percentage of request) above target",
        "New size: 2; reason: All metrics below target",
    ] {
        assert!(
            described.lines().any(|l| e2e::matches_words(l, needle)),
            "no {needle:?} in:\n{described}"
        );
    }
    c.stop().await;
}
