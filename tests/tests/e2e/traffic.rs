//! Simulated traffic, end to end: the real `kubectl` applies a Gateway, an
//! HTTPRoute (50 requests per simulated second), a Service and a
//! Deployment of 3 pods answering 20% errors
//! (`examples/workloads/httproute-traffic.yaml`); the simulated kubelet's
//! traffic loop routes the requests to the ready endpoints and counts the
//! answers into the cluster's metrics store. Checked on one simulated minute
//! of it:
//! * the success rate is 0.8 within a point;
//! * the route's rate is 50/s, split evenly over the three pods;
//! * each pod's CPU counter grows by its base plus its requests' cost;
//! * scaled to 0 replicas, the gateway answers 503 with `pod=""`.
//!
//! The store is read from the test through a clone of the handle the
//! server was given (`SimConfig::metrics`), as its text exposition.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::{Cluster, Config};
use miniplane::cluster::SimConfig;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 60.0;
const NS: &str = "traffic";
const EXAMPLE: &str = include_str!("../../../examples/workloads/httproute-traffic.yaml");
/// Real-time bound of every poll.
const WAIT: Duration = Duration::from_secs(30);

/// Percent-encodes a query string value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The one value of an instant PromQL query, over HTTPS (`/api/v1/query`),
/// as Prometheus answers it.
async fn query(cluster: &Cluster, expr: &str) -> f64 {
    let path = format!("/api/v1/query?query={}", encode(expr));
    let response = e2e::http(cluster.server(), "GET", &path, &[], b"").await;
    let body = response.json();
    assert_eq!(response.status, 200, "{expr}: {body}");
    assert_eq!(body["status"], "success", "{expr}: {body}");
    let result = &body["data"]["result"];
    assert_eq!(result.as_array().map(Vec::len), Some(1), "{expr}: {body}");
    result[0]["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{expr}: {body}"))
}

/// One series of the exposition: name, labels, value.
type Series = (String, BTreeMap<String, String>, f64);

/// Parses the text exposition (`name{k="v",...} value` lines).
fn parse_exposition(text: &str) -> Vec<Series> {
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (head, value) = line.rsplit_once(' ').expect("value");
        let value: f64 = value.parse().expect("number");
        let (name, labels) = match head.split_once('{') {
            Some((name, rest)) => (name, rest.trim_end_matches('}')),
            None => (head, ""),
        };
        let mut map = BTreeMap::new();
        // Label values here have no quotes or commas of their own.
        for pair in labels.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').expect("label");
            map.insert(k.to_string(), v.trim_matches('"').to_string());
        }
        out.push((name.to_string(), map, value));
    }
    out
}

/// The sum of the `name` series in our namespace matching `filter`.
fn sum(series: &[Series], name: &str, filter: impl Fn(&BTreeMap<String, String>) -> bool) -> f64 {
    series
        .iter()
        .filter(|(n, l, _)| n == name && l.get("namespace").map(String::as_str) == Some(NS) && filter(l))
        .map(|(_, _, v)| v)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_rate_follows_the_pods_error_rate() {
    let sim = SimConfig {
        nodes: 3,
        ..SimConfig::default()
    };
    let metrics = sim.metrics.clone();
    let cluster = Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        sim: Some(sim),
        ..Config::ephemeral()
    })
    .await;
    let clock = cluster.server().api().clock().clone();
    cluster.ok(&["create", "namespace", NS]).await;
    let f = cluster.file("traffic.yaml", EXAMPLE);
    cluster
        .ok(&["apply", "-n", NS, "-f", f.to_str().expect("utf-8 path")])
        .await;
    cluster
        .ok(&["rollout", "status", "-n", NS, "deployment/web", "--timeout=30s"])
        .await;

    // Traffic reaches the three pods.
    let read = || parse_exposition(&metrics.exposition());
    tokio::time::timeout(WAIT, async {
        loop {
            let series = read();
            let pods: std::collections::BTreeSet<String> = series
                .iter()
                .filter(|(n, l, _)| {
                    n == "http_requests_total" && l.get("namespace").map(String::as_str) == Some(NS)
                })
                .filter_map(|(_, l, _)| l.get("pod").filter(|p| p.starts_with("web-")).cloned())
                .collect();
            if pods.len() == 3 {
                break;
            }
            clock.sleep(Duration::from_secs(5)).await;
        }
    })
    .await
    .expect("requests answered by the three pods");

    // One simulated minute of traffic.
    let (t0, before) = (clock.now(), read());
    clock.sleep(Duration::from_secs(60)).await;
    let (t1, after) = (clock.now(), read());
    let elapsed = t1.duration_since(t0).expect("time moves forward").as_secs_f64();
    let delta = |name: &str, filter: &dyn Fn(&BTreeMap<String, String>) -> bool| {
        sum(&after, name, filter) - sum(&before, name, filter)
    };
    let all = delta("http_requests_total", &|l| l["route"] == "traffic/web");
    let ok = delta("http_requests_total", &|l| {
        l["route"] == "traffic/web" && !l["code"].starts_with('5')
    });
    let success = ok / all;
    assert!(
        (success - 0.8).abs() < 0.01,
        "success rate {success} ({ok} of {all})"
    );
    // Counts land every 5 s: the window is within one scrape of `elapsed`.
    let rate = all / elapsed;
    assert!(
        (rate - 50.0).abs() < 50.0 * 6.0 / elapsed,
        "{rate} requests/s over {elapsed} s"
    );
    let mut per_pod = BTreeMap::new();
    for (name, labels, _) in &after {
        if name == "http_requests_total" && labels.get("namespace").map(String::as_str) == Some(NS) {
            let pod = labels["pod"].clone();
            if pod.is_empty() {
                // 503s from before the endpoints were ready.
                continue;
            }
            per_pod.insert(pod.clone(), delta("http_requests_total", &|l| l["pod"] == pod));
        }
    }
    assert_eq!(per_pod.len(), 3, "{per_pod:?}");
    for (pod, n) in &per_pod {
        assert!((n / all - 1.0 / 3.0).abs() < 0.05, "{pod}: {n} of {all}");
        // CPU: 50 m base + 10 m per request. The exposition may be read
        // between a batch's request and CPU counters: one batch (5 s) of slack.
        let cpu = delta("container_cpu_usage_seconds_total", &|l| {
            &l["pod"] == pod && l["container"] == "app"
        });
        let expected = 0.050 * elapsed + 0.010 * n;
        let batch = (0.050 + 0.010 * n / elapsed) * 5.0;
        assert!(
            (cpu - expected).abs() < 2.0 * batch,
            "{pod}: cpu {cpu}, expected about {expected}"
        );
    }
    // The same, as a PromQL query written for Prometheus.
    let promql_success = query(
        &cluster,
        &format!(
            r#"sum(rate(http_requests_total{{namespace="{NS}",code!~"5.."}}[1m])) / sum(rate(http_requests_total{{namespace="{NS}"}}[1m]))"#
        ),
    )
    .await;
    assert!(
        (promql_success - 0.8).abs() < 0.01,
        "PromQL success rate {promql_success}"
    );
    let promql_rate = query(
        &cluster,
        &format!(r#"sum(rate(http_requests_total{{route="{NS}/web"}}[1m]))"#),
    )
    .await;
    assert!((promql_rate - 50.0).abs() < 5.0, "PromQL rate {promql_rate}");
    // Latency: median 40 ms (bucket 0.025–0.05), p99 300 ms (bucket 0.25–0.3, or just above).
    let quantile = |q: f64| {
        format!(
            r#"histogram_quantile({q}, sum(rate(http_request_duration_seconds_bucket{{namespace="{NS}"}}[1m])) by (le))"#
        )
    };
    let p50 = query(&cluster, &quantile(0.5)).await;
    let p99 = query(&cluster, &quantile(0.99)).await;
    assert!((0.025..=0.05).contains(&p50), "p50 {p50}");
    assert!((0.25..=0.4).contains(&p99), "p99 {p99}");

    // Cores in use: 3 × 50 m + 50 requests/s × 10 m.
    let cores = query(
        &cluster,
        &format!(r#"sum(rate(container_cpu_usage_seconds_total{{namespace="{NS}",container="app"}}[1m]))"#),
    )
    .await;
    assert!((cores - 0.65).abs() < 0.05, "cores {cores}");

    let durations = delta("http_request_duration_seconds_count", &|l| {
        l["route"] == "traffic/web"
    });
    // Every pod answer has a duration (within one batch: the exposition may
    // be read between a batch's counters and its histograms).
    let answered = all - delta("http_requests_total", &|l| l["pod"].is_empty());
    assert!(
        (durations - answered).abs() <= all / elapsed * 5.0,
        "{durations} durations for {answered} answers"
    );

    // No endpoints: the gateway answers 503.
    cluster
        .ok(&["scale", "-n", NS, "deployment/web", "--replicas=0"])
        .await;
    tokio::time::timeout(WAIT, async {
        loop {
            let before = read();
            clock.sleep(Duration::from_secs(15)).await;
            let after = read();
            let unavailable = |s: &[Series]| {
                sum(s, "http_requests_total", |l| {
                    l["code"] == "503" && l["pod"].is_empty()
                })
            };
            let answered = |s: &[Series]| sum(s, "http_requests_total", |l| !l["pod"].is_empty());
            if unavailable(&after) > unavailable(&before) && answered(&after) == answered(&before) {
                break;
            }
        }
    })
    .await
    .expect("503s once no pod is ready");
}
