//! Queries against a store filled by hand.

use std::time::{Duration, SystemTime};

use super::*;
use crate::names::{DURATION_BUCKETS, HTTP_REQUEST_DURATION_SECONDS, HTTP_REQUESTS_TOTAL};

fn at(secs: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + secs)
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn vector(db: &Tsdb, q: &str, t: u64) -> Vec<(Labels, f64)> {
    match query(db, q, at(t)) {
        Ok(Value::Vector(v)) => v.into_iter().map(|s| (s.labels, s.value)).collect(),
        other => panic!("{q}: expected a vector, got {other:?}"),
    }
}

fn one(db: &Tsdb, q: &str, t: u64) -> f64 {
    match query(db, q, at(t)) {
        Ok(Value::Scalar(v)) => v,
        Ok(Value::Vector(v)) if v.len() == 1 => v[0].value,
        other => panic!("{q}: expected one value, got {other:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Pods `a` and `b` in namespace `x` (and `c` in `y`), each answering
/// `per_sec` requests a second for 10 minutes, `errors` of every 100 with a
/// 503, latency `latency` seconds; scraped every 5 s.
fn traffic(per_sec: f64, errors: f64, latency: f64) -> Tsdb {
    let db = Tsdb::new();
    for step in 0..=120u64 {
        for (ns, pod) in [("x", "a"), ("x", "b"), ("y", "c")] {
            let ok = per_sec * 5.0 * (100.0 - errors) / 100.0;
            let bad = per_sec * 5.0 * errors / 100.0;
            let base = [
                ("namespace", ns),
                ("service", "web"),
                ("pod", pod),
                ("route", "x/web"),
            ];
            let with_code = |code| {
                let mut l = base.to_vec();
                l.push(("code", code));
                l
            };
            db.counter_add(HTTP_REQUESTS_TOTAL, &with_code("200"), ok);
            db.counter_add(HTTP_REQUESTS_TOTAL, &with_code("503"), bad);
            let n = (per_sec * 5.0) as u64;
            db.histogram_observe(
                HTTP_REQUEST_DURATION_SECONDS,
                &base,
                &DURATION_BUCKETS,
                latency,
                n,
            );
        }
        db.scrape(at(step * 5));
    }
    db
}

#[test]
fn selectors_take_the_latest_sample_within_five_minutes() {
    let db = Tsdb::new();
    db.gauge_set("g", &[("a", "1")], 1.0);
    db.gauge_set("g", &[("a", "2")], 2.0);
    db.scrape(at(0));
    db.gauge_set("g", &[("a", "1")], 10.0);
    db.scrape(at(60));
    db.forget("a", "2");
    db.scrape(at(120));
    assert_eq!(one(&db, r#"g{a="1"}"#, 30), 1.0);
    assert_eq!(one(&db, r#"g{a="1"}"#, 60), 10.0);
    assert_eq!(one(&db, r#"g{a="1"} offset 1m"#, 60), 1.0);
    // a=2 was forgotten after its sample at 60: it drops out 5 minutes later.
    assert_eq!(vector(&db, "g", 359).len(), 2);
    assert_eq!(vector(&db, "g", 360).len(), 1);
    assert_eq!(
        vector(&db, r#"{__name__="g", a=~"1|3"}"#, 60),
        vec![(labels(&[("__name__", "g"), ("a", "1")]), 10.0)]
    );
    assert_eq!(vector(&db, r#"{__name__=~"g|h", a!="1"}"#, 60).len(), 1);
    assert_eq!(vector(&db, r#"g{b=""}"#, 60).len(), 2, "a missing label is empty");
    assert!(vector(&db, "g", 0).len() == 2 && vector(&db, "missing", 60).is_empty());
    // Before any sample.
    assert!(vector(&db, "g", 0).iter().all(|(_, v)| *v < 3.0));
}

#[test]
fn out_of_order_scrapes_are_ignored() {
    let db = Tsdb::new();
    db.gauge_set("g", &[], 1.0);
    db.scrape(at(60));
    db.gauge_set("g", &[], 2.0);
    db.scrape(at(30));
    db.scrape(at(60));
    assert_eq!(one(&db, "count_over_time(g[5m])", 60), 1.0);
    assert_eq!(one(&db, "g", 60), 1.0);
}

#[test]
fn rate_of_a_steady_counter_is_its_slope() {
    let db = traffic(10.0, 0.0, 0.1);
    for q in [
        r#"rate(http_requests_total{pod="a",code="200"}[1m])"#,
        r#"irate(http_requests_total{pod="a",code="200"}[1m])"#,
        r#"deriv(http_requests_total{pod="a",code="200"}[1m])"#,
    ] {
        let v = vector(&db, q, 300);
        assert_eq!(v.len(), 1, "{q}");
        assert!(close(v[0].1, 10.0), "{q}: {}", v[0].1);
        assert!(!v[0].0.contains_key("__name__"), "{q} drops the name");
    }
    assert!(close(
        one(
            &db,
            r#"increase(http_requests_total{pod="a",code="200"}[1m])"#,
            300
        ),
        600.0
    ));
    assert!(close(
        one(&db, r#"delta(http_requests_total{pod="a",code="200"}[2m])"#, 300),
        1200.0
    ));
    assert!(close(
        one(&db, r#"idelta(http_requests_total{pod="a",code="200"}[1m])"#, 300),
        50.0
    ));
}

#[test]
fn rate_survives_a_counter_reset() {
    let db = Tsdb::new();
    let mut v = 0.0;
    for i in 0..=12u64 {
        if i == 6 {
            // The pod restarted: its counter starts over.
            v = 0.0;
        }
        v += 50.0;
        db.gauge_set("c_total", &[], v);
        db.scrape(at(i * 5));
    }
    assert!(close(one(&db, "rate(c_total[1m])", 60), 10.0));
    assert_eq!(one(&db, "resets(c_total[1m])", 60), 1.0);
    assert_eq!(one(&db, "changes(c_total[1m])", 60), 11.0);
}

#[test]
fn success_rate_query() {
    let db = traffic(20.0, 7.0, 0.1);
    let q = r#"sum(rate(http_requests_total{namespace="x",code!~"5.."}[1m])) / sum(rate(http_requests_total{namespace="x"}[1m]))"#;
    let v = vector(&db, q, 600);
    assert_eq!(v, vec![(Labels::new(), v[0].1)]);
    assert!(close(v[0].1, 0.93), "{}", v[0].1);
    // The same as a percentage, by pod.
    let by_pod = vector(
        &db,
        r#"100 * sum by (pod) (rate(http_requests_total{namespace="x",code=~"5.."}[1m])) / sum(rate(http_requests_total{namespace="x"}[1m])) by (pod)"#,
        600,
    );
    assert_eq!(by_pod.len(), 2);
    for (l, v) in by_pod {
        assert!(close(v, 7.0), "{l:?} {v}");
    }
}

#[test]
fn histogram_quantile_flagger_style() {
    // Every request takes 0.12 s: it lands in (0.1, 0.15].
    let db = traffic(10.0, 0.0, 0.12);
    let q = r#"histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{namespace="x",service="web"}[1m])) by (le))"#;
    let v = vector(&db, q, 300);
    assert_eq!(v.len(), 1);
    assert!(close(v[0].1, 0.1 + 0.05 * 0.99), "{}", v[0].1);
    // By pod, the le-less labels stay.
    let v = vector(
        &db,
        r#"histogram_quantile(0.5, sum by (pod, le) (rate(http_request_duration_seconds_bucket[1m])))"#,
        300,
    );
    assert_eq!(v.len(), 3);
    assert_eq!(v[0].0, labels(&[("pod", "a")]));
    // Average latency from _sum / _count.
    let avg = one(
        &db,
        r#"sum(rate(http_request_duration_seconds_sum{pod="a"}[1m])) / sum(rate(http_request_duration_seconds_count{pod="a"}[1m]))"#,
        300,
    );
    assert!(close(avg, 0.12), "{avg}");
    // No traffic: NaN.
    let idle = vector(
        &db,
        r#"histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{pod="a"}[1m] offset 1h)) by (le))"#,
        300,
    );
    assert!(idle.is_empty());
}

#[test]
fn aggregations() {
    let db = Tsdb::new();
    for (pod, ns, v) in [
        ("a", "x", 1.0),
        ("b", "x", 3.0),
        ("c", "y", 8.0),
        ("d", "y", -1.0),
    ] {
        db.gauge_set("g", &[("pod", pod), ("namespace", ns)], v);
    }
    db.scrape(at(0));
    let by_ns = |q: &str| -> Vec<(String, f64)> {
        vector(&db, q, 0)
            .into_iter()
            .map(|(l, v)| (l.get("namespace").cloned().unwrap_or_default(), v))
            .collect()
    };
    assert_eq!(
        by_ns(r#"sum by (namespace) (g{pod!="d"})"#),
        vec![("x".into(), 4.0), ("y".into(), 8.0)]
    );
    assert_eq!(
        by_ns(r#"avg(g{pod!="d"}) by (namespace)"#),
        vec![("x".into(), 2.0), ("y".into(), 8.0)]
    );
    assert_eq!(
        by_ns("count by (namespace) (g)"),
        vec![("x".into(), 2.0), ("y".into(), 2.0)]
    );
    assert_eq!(
        by_ns("max by (namespace) (g)"),
        vec![("x".into(), 3.0), ("y".into(), 8.0)]
    );
    assert_eq!(
        by_ns("min by (namespace) (g)"),
        vec![("x".into(), 1.0), ("y".into(), -1.0)]
    );
    assert_eq!(
        by_ns("sum without (pod) (g{pod!=\"d\"})"),
        vec![("x".into(), 4.0), ("y".into(), 8.0)]
    );
    assert_eq!(one(&db, r#"stddev(g{namespace="x"})"#, 0), 1.0);
    assert_eq!(one(&db, r#"stdvar(g{namespace="x"})"#, 0), 1.0);
    assert_eq!(one(&db, r#"quantile(0.5, g{pod!="d"})"#, 0), 3.0);
    let top: Vec<f64> = vector(&db, "topk(2, g)", 0).into_iter().map(|(_, v)| v).collect();
    assert_eq!(top, vec![8.0, 3.0]);
    let bottom = vector(&db, "bottomk(1, g)", 0);
    assert_eq!(
        bottom[0].0.get("__name__").map(String::as_str),
        Some("g"),
        "topk keeps labels"
    );
    assert_eq!(bottom[0].1, -1.0);
    assert!(vector(&db, "topk(0, g)", 0).is_empty());
    assert_eq!(one(&db, "count(g)", 0), 4.0);
    // Dropping the name may leave two series with one labelset.
    db.gauge_set("h", &[("pod", "a"), ("namespace", "x")], 5.0);
    db.scrape(at(1));
    assert_eq!(
        query(&db, r#"{__name__=~"g|h", pod="a"} * 2"#, at(1)),
        Err(QueryError::Execution(
            "vector cannot contain metrics with the same labelset".into()
        ))
    );
    assert_eq!(one(&db, r#"sum({__name__=~"g|h", pod="a"} * 2)"#, 1), 12.0);
    assert_eq!(one(&db, "group(g)", 0), 1.0);
}

#[test]
fn binary_operators() {
    let db = Tsdb::new();
    db.gauge_set("a", &[("pod", "p"), ("node", "n1")], 6.0);
    db.gauge_set("a", &[("pod", "q"), ("node", "n2")], 2.0);
    db.gauge_set("b", &[("pod", "p"), ("node", "n1")], 3.0);
    db.gauge_set("limit", &[("node", "n1"), ("zone", "z")], 4.0);
    db.scrape(at(0));
    assert_eq!(one(&db, "1 + 2 * 3 ^ 2 - -1", 0), 20.0);
    assert_eq!(one(&db, "2 ^ 3 ^ 2", 0), 512.0);
    assert_eq!(one(&db, "-2 ^ 2", 0), -4.0);
    assert_eq!(one(&db, "7 % 4 + (1 > bool 0) + (1 == bool 2)", 0), 4.0);
    assert_eq!(
        vector(&db, "a / b", 0),
        vec![(labels(&[("node", "n1"), ("pod", "p")]), 2.0)]
    );
    assert_eq!(
        vector(&db, "a > 3", 0),
        vec![(labels(&[("__name__", "a"), ("node", "n1"), ("pod", "p")]), 6.0)]
    );
    assert_eq!(vector(&db, "3 < a", 0).len(), 1);
    assert_eq!(vector(&db, "a > bool 3", 0).len(), 2);
    assert_eq!(vector(&db, "a * 2", 0)[0].1, 12.0);
    assert_eq!(vector(&db, "10 - a", 0)[0].1, 4.0);
    assert_eq!(
        vector(&db, "a > b", 0),
        vec![(labels(&[("__name__", "a"), ("node", "n1"), ("pod", "p")]), 6.0)]
    );
    assert_eq!(vector(&db, "a == bool b", 0)[0].1, 0.0);
    assert_eq!(vector(&db, "a and b", 0).len(), 1);
    assert_eq!(vector(&db, "a unless b", 0).len(), 1);
    assert_eq!(vector(&db, "b or a", 0).len(), 2);
    assert_eq!(
        vector(&db, "a + on(node) limit", 0),
        vec![(labels(&[("node", "n1")]), 10.0)]
    );
    assert_eq!(vector(&db, "a + ignoring(pod, zone) limit", 0).len(), 1);
    assert_eq!(
        vector(&db, "a * on(node) group_left(zone) limit", 0),
        vec![(labels(&[("node", "n1"), ("pod", "p"), ("zone", "z")]), 24.0)]
    );
    assert_eq!(
        vector(&db, "limit - on(node) group_right a", 0),
        vec![(labels(&[("node", "n1"), ("pod", "p")]), -2.0)]
    );
    // Many-to-one without group_left is an execution error.
    assert!(matches!(
        query(&db, "a + on() limit", at(0)),
        Err(QueryError::Execution(_))
    ));
    assert!(matches!(
        query(&db, "limit + on() a", at(0)),
        Err(QueryError::Execution(_))
    ));
}

#[test]
fn functions() {
    let db = Tsdb::new();
    for (i, v) in [1.0, 4.0, 2.0, 8.0].into_iter().enumerate() {
        db.gauge_set("g", &[], v);
        db.gauge_set("n", &[("s", "x")], -2.5);
        db.scrape(at(i as u64 * 10));
    }
    assert_eq!(one(&db, "avg_over_time(g[1m])", 30), 3.75);
    assert_eq!(one(&db, "sum_over_time(g[1m])", 30), 15.0);
    assert_eq!(one(&db, "min_over_time(g[1m])", 30), 1.0);
    assert_eq!(one(&db, "max_over_time(g[1m])", 30), 8.0);
    assert_eq!(one(&db, "count_over_time(g[1m])", 30), 4.0);
    assert_eq!(one(&db, "count_over_time(g[15s])", 30), 2.0, "left-open window");
    assert_eq!(one(&db, "last_over_time(g[1m])", 30), 8.0);
    assert_eq!(one(&db, "quantile_over_time(0.5, g[1m])", 30), 3.0);
    assert_eq!(one(&db, "present_over_time(g[1m])", 30), 1.0);
    assert_eq!(one(&db, "abs(n)", 30), 2.5);
    assert_eq!(one(&db, "ceil(n)", 30), -2.0);
    assert_eq!(one(&db, "floor(n)", 30), -3.0);
    assert_eq!(one(&db, "round(n)", 30), -2.0);
    assert_eq!(one(&db, "round(g, 5)", 30), 10.0);
    assert_eq!(one(&db, "clamp_min(n, 0)", 30), 0.0);
    assert_eq!(one(&db, "clamp_max(g, 5)", 30), 5.0);
    assert_eq!(one(&db, "clamp(g, 0, 3)", 30), 3.0);
    assert_eq!(one(&db, "sqrt(g) + scalar(sgn(n))", 30), 8f64.sqrt() - 1.0);
    assert_eq!(one(&db, "scalar(g) * 2", 30), 16.0);
    assert!(one(&db, "scalar(nothing)", 30).is_nan());
    assert_eq!(one(&db, "vector(3) + 1", 30), 4.0);
    assert_eq!(one(&db, "time()", 30), 1_000_030.0);
    assert!(vector(&db, "absent(g)", 30).is_empty());
    assert_eq!(
        vector(&db, r#"absent(nothing{job="a", x=~"y"})"#, 30),
        vec![(labels(&[("job", "a")]), 1.0)]
    );
    assert_eq!(one(&db, "absent_over_time(g[1m] offset 1h)", 30), 1.0);
    let sorted: Vec<f64> = vector(&db, "sort_desc(g or n)", 30)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert_eq!(sorted, vec![8.0, -2.5]);
    assert!(matches!(query(&db, "g[1m]", at(30)), Ok(Value::Matrix(m)) if m[0].1.len() == 4));
}

#[test]
fn subqueries() {
    let db = Tsdb::new();
    // A counter at 1/s for 5 minutes, then 3/s for 5 minutes.
    let mut v = 0.0;
    for i in 0..=120u64 {
        v += if i <= 60 { 5.0 } else { 15.0 };
        db.gauge_set("c_total", &[("pod", "a")], v);
        db.scrape(at(i * 5));
    }
    // The highest 1m rate over the last 10 minutes, every 30 s.
    assert!(close(
        one(&db, "max_over_time(rate(c_total[1m])[10m:30s])", 600),
        3.0
    ));
    assert!(close(
        one(&db, "min_over_time(rate(c_total[1m])[8m:30s])", 600),
        1.0
    ));
    // 30 s steps over 10 minutes: 20 points (the window is left-open).
    assert_eq!(one(&db, "count_over_time(c_total[10m:30s])", 600), 20.0);
    // The default step is a minute; an offset shifts the window.
    assert_eq!(one(&db, "count_over_time(c_total[10m:])", 600), 10.0);
    assert!(close(
        one(&db, "max_over_time(rate(c_total[1m])[2m:30s] offset 6m)", 600),
        1.0
    ));
    assert!(
        matches!(query(&db, "rate(c_total[1m])[5m:1m]", at(600)), Ok(Value::Matrix(m)) if m[0].1.len() == 5)
    );
    // Nested subqueries past the step budget fail instead of running for ever.
    assert!(matches!(
        query(
            &db,
            "max_over_time(max_over_time(c_total[1d:1s])[1d:1s])",
            at(600)
        ),
        Err(QueryError::Execution(_))
    ));
}

#[test]
fn range_queries_step_through_time() {
    let db = traffic(10.0, 0.0, 0.1);
    let Ok(Value::Matrix(m)) = query_range(
        &db,
        r#"sum(rate(http_requests_total{namespace="x"}[1m]))"#,
        at(120),
        at(300),
        Duration::from_secs(60),
    ) else {
        panic!("a matrix");
    };
    assert_eq!(m.len(), 1);
    let times: Vec<i64> = m[0].1.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        times,
        vec![1_000_120_000, 1_000_180_000, 1_000_240_000, 1_000_300_000]
    );
    assert!(m[0].1.iter().all(|(_, v)| close(*v, 20.0)));
    assert!(matches!(
        query_range(&db, "x[1m]", at(0), at(1), Duration::from_secs(1)),
        Err(QueryError::Parse(_))
    ));
}

#[test]
// CPU time is what is measured here, not simulated time.
#[allow(clippy::disallowed_methods)]
fn a_query_over_500_series_is_fast() {
    let db = Tsdb::new();
    for step in 0..360u64 {
        for pod in 0..250 {
            let pod = format!("pod-{pod}");
            for code in ["200", "503"] {
                db.counter_add(
                    HTTP_REQUESTS_TOTAL,
                    &[("namespace", "x"), ("pod", &pod), ("code", code)],
                    5.0,
                );
            }
        }
        db.scrape(at(step * 5));
    }
    let q = r#"sum(rate(http_requests_total{namespace="x",code!~"5.."}[1m])) / sum(rate(http_requests_total{namespace="x"}[1m]))"#;
    // Warm up, then time it (a debug build: release is ~10x faster).
    assert!(close(one(&db, q, 1795), 0.5));
    let start = std::time::Instant::now();
    for _ in 0..10 {
        one(&db, q, 1795);
    }
    let each = start.elapsed() / 10;
    eprintln!("{each:?} per query");
    assert!(each < Duration::from_millis(50), "{each:?} per query");
}

proptest::proptest! {
    #[test]
    fn random_input_never_panics(s in "\\PC{0,40}") {
        let db = traffic_small();
        let _ = query(&db, &s, at(60));
    }

    #[test]
    fn random_promql_shaped_input_never_panics(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "sum", "rate", "(", ")", "[1m]", "{", "}", "a", "=", "\"x\"", ",", "by", "(le)", "+", "-", "*",
                "/", "^", "1", "0", "offset", "5m", "histogram_quantile", "0.5", "on", "group_left", "bool",
                ">", "and", "or", "topk", "le", "=~", "\"5..\"", "!~", "g", "[", "]", ":", "NaN", "Inf",
            ]),
            0..20,
        )
    ) {
        let db = traffic_small();
        let _ = query(&db, &parts.join(" "), at(60));
        let _ = query(&db, &parts.concat(), at(60));
    }
}

fn traffic_small() -> Tsdb {
    let db = Tsdb::new();
    for i in 0..13u64 {
        db.counter_add("a", &[("x", "1"), ("le", "0.5")], 1.0);
        db.counter_add("a", &[("x", "1"), ("le", "+Inf")], 2.0);
        db.gauge_set("g", &[("x", "2")], i as f64);
        db.scrape(at(i * 5));
    }
    db
}
