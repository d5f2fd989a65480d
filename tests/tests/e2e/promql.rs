//! The simulated world's metrics over HTTP, end to end: a miniplane whose
//! `SimConfig::metrics` store the test fills by hand (what the traffic
//! simulation does), then Prometheus's query API over HTTPS with the
//! kubeconfig's token (and through `kubectl get --raw`), and `/metrics`.
//!
//! Covered:
//! * `GET` and `POST` (form body) `/api/v1/query` answer the success-rate
//!   ratio query written for Prometheus with the configured rate, as
//!   Prometheus's JSON (`resultType: vector`, `[time, "value"]`);
//! * a Flagger-style `histogram_quantile(0.99, sum(rate(..._bucket[1m])) by (le))`;
//! * `/api/v1/query_range` (a matrix), `/api/v1/labels`, label values;
//! * bad queries and parameters are 400 `bad_data`, evaluation errors 422
//!   `execution`, never 5xx; anonymous callers get what `/metrics` gives
//!   them; under RBAC, any authenticated user may query (a non-resource
//!   URL under `/api/*`, as `system:discovery` allows);
//! * `/metrics` has the server's own series and the simulated ones, typed;
//! * core resources under `/api/v1` are still served.

use std::time::{Duration, SystemTime};

use e2e::{Cluster, Config};
use miniplane::cluster::SimConfig;
use serde_json::{Value, json};

const SUCCESS_RATE: &str = r#"sum(rate(http_requests_total{namespace="shop",code!~"5.."}[1m])) / sum(rate(http_requests_total{namespace="shop"}[1m]))"#;
const LATENCY_P99: &str = r#"histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{namespace="shop",service="web"}[1m])) by (le))"#;

/// Percent-encodes a query parameter value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// A cluster with no nodes and `authorization`, serving a store of its own; returns the cluster and the
/// instant (on its clock, an hour ahead so nothing else samples later) of
/// the last of two minutes of samples: pods `web-a` and `web-b` in `shop`,
/// 20 requests a second each, 4% of them 503s, every one taking 0.12 s.
async fn cluster_with_traffic(authorization: &str) -> (Cluster, SystemTime) {
    let metrics = SimConfig::default().metrics;
    let cluster = Cluster::start_with(Config {
        sim: Some(SimConfig {
            nodes: 0,
            metrics: metrics.clone(),
            ..SimConfig::default()
        }),
        authorization: authorization.parse().expect("an authorization mode"),
        ..Config::ephemeral()
    })
    .await;
    let start = cluster.server().api().clock().now() + Duration::from_secs(3600);
    let buckets = [0.05, 0.1, 0.15, 0.2, 0.5, 1.0];
    let mut last = start;
    for step in 0..=24u32 {
        for pod in ["web-a", "web-b"] {
            let base = [
                ("namespace", "shop"),
                ("service", "web"),
                ("pod", pod),
                ("route", "shop/web"),
            ];
            for (code, n) in [("200", 96.0), ("503", 4.0)] {
                let mut l = base.to_vec();
                l.push(("code", code));
                metrics.counter_add("http_requests_total", &l, n);
            }
            metrics.histogram_observe("http_request_duration_seconds", &base, &buckets, 0.12, 100);
        }
        last = start + Duration::from_secs(5 * u64::from(step));
        metrics.scrape(last);
    }
    (cluster, last)
}

async fn get(cluster: &Cluster, path: &str) -> e2e::HttpResponse {
    e2e::http(cluster.server(), "GET", path, &[], b"").await
}

async fn post_form(cluster: &Cluster, path: &str, form: &str) -> e2e::HttpResponse {
    let headers = [("Content-Type", "application/x-www-form-urlencoded")];
    e2e::http(cluster.server(), "POST", path, &headers, form.as_bytes()).await
}

/// The one value of a successful one-element vector answer, checking its shape.
fn single_value(r: &e2e::HttpResponse, at: f64) -> f64 {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body = r.json();
    assert_eq!(body["status"], "success", "{body}");
    assert_eq!(body["data"]["resultType"], "vector", "{body}");
    let result = body["data"]["result"].as_array().expect("a result array");
    assert_eq!(result.len(), 1, "{body}");
    assert_eq!(result[0]["metric"], json!({}), "{body}");
    let value = &result[0]["value"];
    assert!((value[0].as_f64().expect("a time") - at).abs() < 1e-3, "{body}");
    value[1]
        .as_str()
        .expect("a string value")
        .parse()
        .expect("a number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_queries_run_unchanged() {
    let (cluster, at) = cluster_with_traffic("always-allow").await;
    let t = unix(at);
    let path = format!("/api/v1/query?query={}&time={t}", encode(SUCCESS_RATE));
    let rate = single_value(&get(&cluster, &path).await, t);
    assert!((rate - 0.96).abs() < 0.01, "success rate {rate}");

    // POST with a form body; RFC 3339 time.
    let rfc3339 = rfc3339(at);
    let form = format!("query={}&time={}", encode(SUCCESS_RATE), encode(&rfc3339));
    let posted = single_value(
        &post_form(&cluster, "/api/v1/query", &form).await,
        unix(at).floor(),
    );
    assert!((posted - 0.96).abs() < 0.01, "success rate {posted}");

    // Flagger's latency check: every request took 0.12 s, in (0.1, 0.15].
    let form = format!("query={}&time={t}", encode(LATENCY_P99));
    let p99 = single_value(&post_form(&cluster, "/api/v1/query", &form).await, t);
    assert!((p99 - (0.1 + 0.05 * 0.99)).abs() < 1e-6, "p99 {p99}");

    // By pod: each pod's request rate.
    let by_pod = format!(
        "/api/v1/query?query={}&time={t}",
        encode(r#"sum by (pod) (rate(http_requests_total{namespace="shop"}[1m]))"#)
    );
    let body = get(&cluster, &by_pod).await.json();
    let result = body["data"]["result"].as_array().expect("a result array").clone();
    let pods: Vec<&str> = result
        .iter()
        .filter_map(|r| r["metric"]["pod"].as_str())
        .collect();
    assert_eq!(pods, vec!["web-a", "web-b"]);
    for r in &result {
        let v: f64 = r["value"][1]
            .as_str()
            .and_then(|s| s.parse().ok())
            .expect("a value");
        assert!((v - 20.0).abs() < 1e-6, "{r}");
    }

    // The same through kubectl, as a user would ask.
    let raw = cluster.ok(&["get", "--raw", &path]).await;
    let body: Value = serde_json::from_str(&raw).expect("JSON from kubectl get --raw");
    assert_eq!(body["data"]["resultType"], "vector");
}

/// `at` as RFC 3339 (whole seconds, UTC), without a date crate.
fn rfc3339(at: SystemTime) -> String {
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_labels_errors_and_metrics() {
    // RBAC: the query API is authorized as the non-resource URLs it is.
    let (cluster, at) = cluster_with_traffic("rbac").await;
    let t = unix(at);

    // A range query: one series, a point a step.
    let path = format!(
        "/api/v1/query_range?query={}&start={}&end={t}&step=30s",
        encode(r#"sum(rate(http_requests_total{namespace="shop"}[1m]))"#),
        t - 60.0
    );
    let r = get(&cluster, &path).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let body = r.json();
    assert_eq!(body["data"]["resultType"], "matrix");
    let values = body["data"]["result"][0]["values"]
        .as_array()
        .expect("values")
        .clone();
    assert_eq!(values.len(), 3, "{body}");
    for v in &values {
        let rate: f64 = v[1].as_str().and_then(|s| s.parse().ok()).expect("a value");
        assert!((rate - 40.0).abs() < 1e-6, "{body}");
    }

    // Label names and values.
    let labels = get(&cluster, "/api/v1/labels").await.json();
    for name in ["__name__", "code", "le", "namespace", "pod", "route", "service"] {
        assert!(
            labels["data"].as_array().expect("names").contains(&json!(name)),
            "{labels}"
        );
    }
    let codes = get(&cluster, "/api/v1/label/code/values").await.json();
    assert_eq!(codes["data"], json!(["200", "503"]));

    // Errors, as Prometheus sends them; never a 5xx.
    let cases = [
        ("/api/v1/query?query=sum(", 400, "bad_data"),
        ("/api/v1/query?query=rate(http_requests_total)", 400, "bad_data"),
        ("/api/v1/query?query=up&time=yesterday", 400, "bad_data"),
        ("/api/v1/query", 400, "bad_data"),
        (
            "/api/v1/query_range?query=up&start=10&end=0&step=1",
            400,
            "bad_data",
        ),
        ("/api/v1/query_range?query=up&start=0&end=10", 400, "bad_data"),
    ];
    for (path, status, kind) in cases {
        let r = get(&cluster, path).await;
        assert_eq!(r.status, status, "{path}: {}", String::from_utf8_lossy(&r.body));
        let body = r.json();
        assert_eq!(body["status"], "error", "{path}");
        assert_eq!(body["errorType"], kind, "{path}");
        assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "{path}");
    }
    // Matching the per-pod series to the one total by `on()` is many-to-one
    // without `group_left`: an evaluation error.
    let many = format!(
        "/api/v1/query?query={}&time={t}",
        encode(r#"http_requests_total + on() sum(http_requests_total)"#)
    );
    let r = get(&cluster, &many).await;
    assert_eq!(r.status, 422, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["errorType"], "execution");

    // /metrics: the server's own series, then the simulated world's.
    let r = get(&cluster, "/metrics").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = String::from_utf8_lossy(&r.body).into_owned();
    assert!(text.contains("apiserver_request"), "{text}");
    assert!(text.contains("# TYPE http_requests_total counter"), "{text}");
    assert!(
        text.contains("# TYPE http_request_duration_seconds histogram"),
        "{text}"
    );
    assert!(
        text.contains(r#"http_requests_total{code="503",namespace="shop",pod="web-a",route="shop/web",service="web"} 100"#),
        "{text}"
    );
    assert!(
        text.contains(r#"http_request_duration_seconds_bucket{le="+Inf",namespace="shop",pod="web-a",route="shop/web",service="web"} 2500"#),
        "{text}"
    );

    // Anonymous callers are treated like on /metrics.
    let anonymous_metrics = e2e::http_anonymous(cluster.server(), "GET", "/metrics", &[], b"").await;
    let anonymous_query =
        e2e::http_anonymous(cluster.server(), "GET", "/api/v1/query?query=1", &[], b"").await;
    assert_eq!(anonymous_query.status, anonymous_metrics.status);
    assert_ne!(anonymous_query.status, 200);

    // Authorized as the non-resource path it is: under `/api/*`, which
    // upstream's `system:discovery` role grants every authenticated user
    // (unlike /metrics, which needs a `nonResourceURLs` rule of its own).
    let jane = ["--as", "jane"];
    let refused = cluster
        .fails(&[&["get", "--raw", "/metrics"][..], &jane].concat())
        .await;
    assert!(refused.contains(r#"cannot get path "/metrics""#), "{refused}");
    let answered = cluster
        .ok(&[&["get", "--raw", "/api/v1/query?query=1"][..], &jane].concat())
        .await;
    assert!(answered.contains(r#""status":"success""#), "{answered}");

    // Core resources under /api/v1 are still served.
    cluster.ok(&["get", "namespaces", "default"]).await;
    let pods = get(&cluster, "/api/v1/namespaces/default/pods").await;
    assert_eq!(pods.status, 200);
    assert_eq!(pods.json()["kind"], "PodList");
}
