//! Table tests of [`checks`]: the queries a metric becomes, and what their
//! values make of the check, against a [`Query`] answering fixed values per
//! query text.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde_json::json;
use sim_metrics::{Query, QueryError, Sample, Value};

use crate::canary::checks::{CheckOutcome, Subjects, check_metric, metric_query, render, single_value};
use crate::canary::types::CanaryMetric;

fn subjects() -> Subjects {
    Subjects {
        id: "podinfo.default".into(),
        namespace: "default".into(),
        target: "podinfo".into(),
        primary: "podinfo-primary".into(),
        canary_service: "podinfo-canary".into(),
        primary_service: "podinfo-primary".into(),
    }
}

fn metric(v: serde_json::Value) -> CanaryMetric {
    serde_json::from_value(v).unwrap()
}

/// Answers by query text; a query it does not know has no values.
struct Answers(BTreeMap<String, Result<Value, QueryError>>);

impl Query for Answers {
    fn instant(&self, expr: &str, _at: SystemTime) -> Result<Value, QueryError> {
        self.0.get(expr).cloned().unwrap_or(Ok(Value::Vector(Vec::new())))
    }
}

fn one(v: f64) -> Result<Value, QueryError> {
    Ok(Value::Vector(vec![Sample {
        labels: BTreeMap::new(),
        value: v,
    }]))
}

#[test]
fn built_in_queries_read_the_canary_service() {
    let s = subjects();
    let m = metric(json!({"name": "request-success-rate", "interval": "30s"}));
    assert_eq!(
        metric_query(&m, &s, false).unwrap(),
        r#"sum(rate(http_requests_total{namespace="default",service="podinfo-canary",code!~"5.."}[30s])) / sum(rate(http_requests_total{namespace="default",service="podinfo-canary"}[30s])) * 100"#
    );
    let m = metric(json!({"name": "request-duration"}));
    assert_eq!(
        metric_query(&m, &s, true).unwrap(),
        r#"histogram_quantile(0.99, sum(rate(http_request_duration_seconds_bucket{namespace="default",service="podinfo-primary"}[1m])) by (le)) * 1000"#
    );
    assert_eq!(metric_query(&metric(json!({"name": "custom"})), &s, false), None);
}

#[test]
fn custom_queries_get_flaggers_variables() {
    assert_eq!(
        render(
            "x{ns=\"{{ namespace }}\",d=\"{{target}}\",s=\"{{ service }}\"}[{{ interval }}]",
            "default",
            "podinfo",
            "podinfo-canary",
            "1m"
        ),
        "x{ns=\"default\",d=\"podinfo\",s=\"podinfo-canary\"}[1m]"
    );
}

#[test]
fn values_are_the_first_sample_and_nan_is_none() {
    assert_eq!(single_value(&Value::Scalar(3.0)), Some(3.0));
    assert_eq!(single_value(&one(2.5).unwrap()), Some(2.5));
    assert_eq!(single_value(&Value::Vector(Vec::new())), None);
    assert_eq!(single_value(&Value::Scalar(f64::NAN)), None);
}

#[test]
fn threshold_ranges_decide_the_check() {
    let s = subjects();
    let rate = metric(json!({"name": "request-success-rate", "thresholdRange": {"min": 99}}));
    let q = metric_query(&rate, &s, false).unwrap();
    let cases = [
        (one(99.5), "passed"),
        (
            one(78.5234),
            "Halt podinfo.default advancement request-success-rate 78.52 < 99",
        ),
        (Ok(Value::Vector(Vec::new())), "no values"),
        (
            Err(QueryError::Parse("bad".into())),
            "Metric query failed for request-success-rate: bad",
        ),
    ];
    for (answer, want) in cases {
        let db = Answers(BTreeMap::from([(q.clone(), answer)]));
        let got = check_metric(&rate, &s, &db, SystemTime::UNIX_EPOCH);
        match got {
            CheckOutcome::Passed { .. } => assert_eq!(want, "passed"),
            CheckOutcome::Failed { message, .. } | CheckOutcome::Error { message } => {
                assert_eq!(message, want)
            }
            CheckOutcome::NoValues { message } => {
                assert_eq!(want, "no values");
                assert!(
                    message.contains("podinfo.default is not receiving traffic"),
                    "{message}"
                );
            }
        }
    }
    let duration = metric(json!({"name": "request-duration", "thresholdRange": {"max": 500}}));
    let q = metric_query(&duration, &s, false).unwrap();
    let db = Answers(BTreeMap::from([(q, one(990.0))]));
    assert_eq!(
        check_metric(&duration, &s, &db, SystemTime::UNIX_EPOCH),
        CheckOutcome::Failed {
            value: 990.0,
            message: "Halt podinfo.default advancement request-duration 990.00 > 500".into()
        }
    );
}

#[test]
fn a_relative_check_compares_canary_with_primary() {
    let s = subjects();
    // The canary at 97% passes an absolute 95% minimum, but is 2.9 points
    // below a primary at 99.9%, more than the 1 point allowed.
    let m = metric(json!({"name": "request-success-rate",
        "thresholdRange": {"min": 95}, "relativeThresholdRange": {"min": -1}}));
    let canary_q = metric_query(&m, &s, false).unwrap();
    let primary_q = metric_query(&m, &s, true).unwrap();
    let db = Answers(BTreeMap::from([
        (canary_q.clone(), one(97.0)),
        (primary_q.clone(), one(99.9)),
    ]));
    match check_metric(&m, &s, &db, SystemTime::UNIX_EPOCH) {
        CheckOutcome::Failed { value, message } => {
            assert!((value + 2.9).abs() < 1e-9);
            assert_eq!(
                message,
                "Halt podinfo.default advancement request-success-rate canary − primary -2.90 < -1 (canary 97.00, primary 99.90)"
            );
        }
        other => panic!("{other:?}"),
    }
    // Both at 99.5: passes.
    let db = Answers(BTreeMap::from([(canary_q, one(99.5)), (primary_q, one(99.5))]));
    assert_eq!(
        check_metric(&m, &s, &db, SystemTime::UNIX_EPOCH),
        CheckOutcome::Passed { value: 0.0 }
    );
}
