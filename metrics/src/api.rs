//! Prometheus's HTTP API answers (`/api/v1/query`, `/api/v1/query_range`,
//! `/api/v1/labels`, `/api/v1/label/<name>/values`) and the text
//! exposition format (0.0.4).
//!
//! The HTTP server (the apiserver) hands over the request's parameters
//! (query string and form body, in order) and its clock's now; the
//! answer is a status code and the JSON body, as Prometheus would send:
//! `{"status":"success","data":{"resultType":…,"result":…}}`, or
//! `{"status":"error","errorType":"bad_data"|"execution","error":…}` with
//! 400 or 422.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use serde_json::{Value as Json, json};

use crate::promql::{self, QueryError, Value};
use crate::tsdb::{Inner, MetricKind, Tsdb};

/// The content type of [`Tsdb::exposition`].
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// An API answer: the HTTP status and the JSON body.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// 200, 400 (`bad_data`) or 422 (`execution`).
    pub status: u16,
    /// The body.
    pub body: Json,
}

/// A float as Prometheus writes sample values (Go's `strconv.FormatFloat(f,
/// 'f', -1, 64)`: shortest round-trip digits, no exponent; `NaN`, `+Inf`, `-Inf`).
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

/// Milliseconds as the API's seconds: a whole number when whole (as Go's
/// `'f', -1` formatting writes it), else with the milliseconds.
fn seconds(ms: i64) -> Json {
    if ms % 1000 == 0 {
        json!(ms / 1000)
    } else {
        json!(ms as f64 / 1000.0)
    }
}

fn point(ms: i64, v: f64) -> Json {
    json!([seconds(ms), format_value(v)])
}

fn metric(labels: &crate::tsdb::Labels) -> Json {
    Json::Object(
        labels
            .iter()
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect(),
    )
}

/// `data` of a successful query evaluated at `at` (ms).
pub fn data(value: &Value, at_ms: i64) -> Json {
    match value {
        Value::Scalar(v) => json!({"resultType": "scalar", "result": point(at_ms, *v)}),
        Value::Vector(samples) => json!({
            "resultType": "vector",
            "result": samples
                .iter()
                .map(|s| json!({"metric": metric(&s.labels), "value": point(at_ms, s.value)}))
                .collect::<Vec<_>>(),
        }),
        Value::Matrix(series) => json!({
            "resultType": "matrix",
            "result": series
                .iter()
                .map(|(l, pts)| json!({
                    "metric": metric(l),
                    "values": pts.iter().map(|(t, v)| point(*t, *v)).collect::<Vec<_>>(),
                }))
                .collect::<Vec<_>>(),
        }),
    }
}

fn success(data: Json) -> Answer {
    Answer {
        status: 200,
        body: json!({"status": "success", "data": data}),
    }
}

/// A `bad_data` error (400).
pub fn bad_data(msg: &str) -> Answer {
    Answer {
        status: 400,
        body: json!({"status": "error", "errorType": "bad_data", "error": msg}),
    }
}

/// The answer for a failed query: `bad_data` (400) when it does not parse,
/// `execution` (422) when it cannot be evaluated.
pub fn error(e: &QueryError) -> Answer {
    match e {
        QueryError::Parse(m) => bad_data(m),
        QueryError::Execution(m) => Answer {
            status: 422,
            body: json!({"status": "error", "errorType": "execution", "error": m}),
        },
    }
}

fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A timestamp parameter: RFC 3339 or (float) Unix seconds.
pub fn parse_time(s: &str) -> Option<SystemTime> {
    if let Ok(secs) = s.parse::<f64>() {
        if !secs.is_finite() {
            return None;
        }
        let d = Duration::try_from_secs_f64(secs.abs()).ok()?;
        return if secs >= 0.0 {
            SystemTime::UNIX_EPOCH.checked_add(d)
        } else {
            SystemTime::UNIX_EPOCH.checked_sub(d)
        };
    }
    let ts: jiff::Timestamp = s.parse().ok()?;
    Some(SystemTime::from(ts))
}

/// A duration parameter: float seconds or a Prometheus duration (`1m30s`).
pub fn parse_step(s: &str) -> Option<Duration> {
    if let Ok(secs) = s.parse::<f64>() {
        return (secs.is_finite() && secs > 0.0)
            .then(|| Duration::try_from_secs_f64(secs).ok())
            .flatten();
    }
    let ms = promql::parse_duration(s)?;
    u64::try_from(ms).ok().map(Duration::from_millis)
}

fn time_param(params: &[(String, String)], name: &str, default: SystemTime) -> Result<SystemTime, Answer> {
    match param(params, name) {
        None | Some("") => Ok(default),
        Some(s) => parse_time(s).ok_or_else(|| {
            bad_data(&format!(
                "invalid parameter {name:?}: cannot parse {s:?} to a valid timestamp"
            ))
        }),
    }
}

/// `/api/v1/query`: `query`, `time` (default `now`).
pub fn instant_query(db: &Tsdb, params: &[(String, String)], now: SystemTime) -> Answer {
    let at = match time_param(params, "time", now) {
        Ok(t) => t,
        Err(a) => return a,
    };
    let expr = param(params, "query").unwrap_or("");
    match promql::query(db, expr, at) {
        Ok(v) => success(data(&v, crate::tsdb::millis(at))),
        Err(e) => error(&e),
    }
}

/// `/api/v1/query_range`: `query`, `start`, `end`, `step`.
pub fn range_query(db: &Tsdb, params: &[(String, String)]) -> Answer {
    let mut times = [SystemTime::UNIX_EPOCH; 2];
    for (slot, name) in times.iter_mut().zip(["start", "end"]) {
        let Some(s) = param(params, name) else {
            return bad_data(&format!(
                "invalid parameter {name:?}: cannot parse \"\" to a valid timestamp"
            ));
        };
        match parse_time(s) {
            Some(t) => *slot = t,
            None => {
                return bad_data(&format!(
                    "invalid parameter {name:?}: cannot parse {s:?} to a valid timestamp"
                ));
            }
        }
    }
    let step_text = param(params, "step").unwrap_or("");
    let Some(step) = parse_step(step_text) else {
        return bad_data(&format!(
            "invalid parameter \"step\": cannot parse {step_text:?} to a valid duration"
        ));
    };
    let expr = param(params, "query").unwrap_or("");
    match promql::query_range(db, expr, times[0], times[1], step) {
        Ok(v) => success(data(&v, 0)),
        Err(e) => error(&e),
    }
}

/// `/api/v1/labels`: every label name.
pub fn labels(db: &Tsdb) -> Answer {
    success(json!(db.label_names()))
}

/// `/api/v1/label/<name>/values`: every value of one label.
pub fn label_values(db: &Tsdb, name: &str) -> Answer {
    success(json!(db.label_values(name)))
}

/// `# HELP` text: backslash and newline escaped.
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A label value: backslash, double quote and newline escaped.
fn escape_value(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn write_series(out: &mut String, name: &str, labels: &crate::tsdb::Labels, value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", escape_value(v));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {}", format_value(value));
}

fn kind_name(kind: MetricKind) -> &'static str {
    match kind {
        MetricKind::Counter => "counter",
        MetricKind::Gauge => "gauge",
        MetricKind::Histogram => "histogram",
    }
}

/// The text format of every live series (those not forgotten), one family
/// at a time with its `# HELP` (when declared) and `# TYPE`. A family's
/// type is the declared one; an undeclared family is a `histogram` when
/// it has `_bucket` and `_count` series, a `counter` when its name ends in
/// `_total`, else `untyped`. Histogram buckets are written in bound order.
pub(crate) fn exposition(inner: &Inner) -> String {
    // Family name → the series names it writes.
    let mut families: BTreeMap<String, (Option<MetricKind>, Vec<&str>)> = BTreeMap::new();
    for name in inner.series.keys() {
        let base = ["_bucket", "_sum", "_count"].iter().find_map(|suffix| {
            let base = name.strip_suffix(suffix)?;
            let declared = inner.families.get(base).map(|f| f.kind);
            let looks_like = inner.series.contains_key(&format!("{base}_bucket"))
                && inner.series.contains_key(&format!("{base}_count"));
            (declared == Some(MetricKind::Histogram) || declared.is_none() && looks_like).then_some(base)
        });
        let (family, kind) = match base {
            Some(b) => (b.to_string(), Some(MetricKind::Histogram)),
            None => (name.clone(), inner.families.get(name).map(|f| f.kind)),
        };
        let entry = families.entry(family).or_insert((kind, Vec::new()));
        entry.1.push(name.as_str());
    }
    let mut out = String::new();
    for (family, (kind, names)) in &families {
        let live = names.iter().any(|n| {
            inner
                .series
                .get(*n)
                .is_some_and(|s| s.values().any(|x| !x.current.is_nan()))
        });
        if !live {
            continue;
        }
        if let Some(f) = inner.families.get(family) {
            let _ = writeln!(out, "# HELP {family} {}", escape_help(&f.help));
        }
        let type_name = match kind {
            Some(k) => kind_name(*k),
            None if family.ends_with("_total") => "counter",
            None => "untyped",
        };
        let _ = writeln!(out, "# TYPE {family} {type_name}");
        let mut names = names.clone();
        // `_bucket`, then `_sum`, then `_count`, as client libraries write them.
        names.sort_by_key(|n| (!n.ends_with("_bucket"), !n.ends_with("_sum"), n.to_string()));
        for name in names {
            let Some(by_labels) = inner.series.get(name) else {
                continue;
            };
            let mut rows: Vec<(&crate::tsdb::Labels, f64)> = by_labels
                .iter()
                .filter(|(_, s)| !s.current.is_nan())
                .map(|(l, s)| (l, s.current))
                .collect();
            if name.ends_with("_bucket") {
                let bound = |l: &crate::tsdb::Labels| {
                    l.get("le")
                        .and_then(|b| b.parse::<f64>().ok())
                        .unwrap_or(f64::INFINITY)
                };
                rows.sort_by(|a, b| {
                    let strip = |l: &crate::tsdb::Labels| {
                        let mut l = l.clone();
                        l.remove("le");
                        l
                    };
                    strip(a.0)
                        .cmp(&strip(b.0))
                        .then(bound(a.0).total_cmp(&bound(b.0)))
                });
            }
            for (l, v) in rows {
                write_series(&mut out, name, l, v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn values_format_like_go() {
        assert_eq!(format_value(1.0), "1");
        assert_eq!(format_value(0.1), "0.1");
        assert_eq!(format_value(1e21), "1000000000000000000000");
        assert_eq!(format_value(1.5e-7), "0.00000015");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
    }

    #[test]
    fn instant_query_answers_like_prometheus() {
        let db = Tsdb::new();
        db.counter_add("up_total", &[("job", "a")], 3.0);
        db.scrape(at(1000));
        let a = instant_query(&db, &params(&[("query", "up_total"), ("time", "1000.5")]), at(5));
        assert_eq!(a.status, 200);
        assert_eq!(
            a.body,
            json!({"status": "success", "data": {"resultType": "vector", "result": [
                {"metric": {"__name__": "up_total", "job": "a"}, "value": [1000.5, "3"]}
            ]}})
        );
        // Default time: now; RFC 3339 accepted.
        let a = instant_query(&db, &params(&[("query", "1 + 1")]), at(1000));
        assert_eq!(
            a.body["data"],
            json!({"resultType": "scalar", "result": [1000, "2"]})
        );
        let a = instant_query(
            &db,
            &params(&[("query", "sum(up_total)"), ("time", "1970-01-01T00:16:40Z")]),
            at(5),
        );
        assert_eq!(a.body["data"]["result"][0]["value"], json!([1000, "3"]));
        // A matrix for a bare range selector.
        let a = instant_query(
            &db,
            &params(&[("query", "up_total[1m]"), ("time", "1000")]),
            at(5),
        );
        assert_eq!(a.body["data"]["resultType"], "matrix");
        assert_eq!(a.body["data"]["result"][0]["values"], json!([[1000, "3"]]));
    }

    #[test]
    fn errors_are_bad_data_or_execution() {
        let db = Tsdb::new();
        let a = instant_query(&db, &params(&[("query", "sum(")]), at(5));
        assert_eq!(a.status, 400);
        assert_eq!(a.body["status"], "error");
        assert_eq!(a.body["errorType"], "bad_data");
        assert!(
            a.body["error"].as_str().unwrap().starts_with("1:5: parse error"),
            "{}",
            a.body
        );
        let a = instant_query(&db, &params(&[("query", "1"), ("time", "yesterday")]), at(5));
        assert_eq!(
            a.body["error"],
            "invalid parameter \"time\": cannot parse \"yesterday\" to a valid timestamp"
        );
        assert_eq!(instant_query(&db, &params(&[]), at(5)).status, 400);
        assert_eq!(error(&QueryError::Execution("x".into())).status, 422);
        assert_eq!(
            error(&QueryError::Execution("x".into())).body["errorType"],
            "execution"
        );
    }

    #[test]
    fn range_query_steps() {
        let db = Tsdb::new();
        for i in 0..5u64 {
            db.counter_add("c_total", &[], 10.0);
            db.scrape(at(100 + 10 * i));
        }
        let a = range_query(
            &db,
            &params(&[
                ("query", "c_total * 2"),
                ("start", "100"),
                ("end", "140"),
                ("step", "20s"),
            ]),
        );
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(
            a.body["data"],
            json!({"resultType": "matrix", "result": [
                {"metric": {}, "values": [[100, "20"], [120, "60"], [140, "100"]]}
            ]})
        );
        let bad = |p: &[(&str, &str)]| range_query(&db, &params(p)).status;
        assert_eq!(
            bad(&[("query", "1"), ("start", "10"), ("end", "0"), ("step", "1")]),
            400
        );
        assert_eq!(
            bad(&[("query", "1"), ("start", "0"), ("end", "10"), ("step", "0")]),
            400
        );
        assert_eq!(
            bad(&[("query", "1"), ("start", "0"), ("end", "100000"), ("step", "1")]),
            400
        );
        assert_eq!(
            bad(&[("query", "1"), ("start", "x"), ("end", "10"), ("step", "1")]),
            400
        );
        assert_eq!(bad(&[("query", "1"), ("start", "0"), ("end", "10")]), 400);
        assert_eq!(
            bad(&[("query", "1"), ("start", "0"), ("end", "10"), ("step", "1.5")]),
            200
        );
    }

    #[test]
    fn exposition_text() {
        let db = Tsdb::new();
        db.describe(
            "http_requests_total",
            MetricKind::Counter,
            "Requests answered.\nBy code.",
        );
        db.counter_add("http_requests_total", &[("code", "200"), ("pod", "a\"b\\c")], 3.0);
        db.gauge_set("queue_depth", &[], 2.5);
        db.counter_add("other_total", &[], 1.0);
        db.describe("d_seconds", MetricKind::Histogram, "Durations.");
        db.histogram_observe("d_seconds", &[("pod", "p")], &[0.5, 10.0, 2.0], 1.0, 4);
        db.histogram_observe("gone", &[("pod", "x")], &[1.0], 0.5, 1);
        db.forget("pod", "x");
        let text = db.exposition();
        assert_eq!(
            text,
            "\
# HELP d_seconds Durations.
# TYPE d_seconds histogram
d_seconds_bucket{le=\"0.5\",pod=\"p\"} 0
d_seconds_bucket{le=\"2\",pod=\"p\"} 4
d_seconds_bucket{le=\"10\",pod=\"p\"} 4
d_seconds_bucket{le=\"+Inf\",pod=\"p\"} 4
d_seconds_sum{pod=\"p\"} 4
d_seconds_count{pod=\"p\"} 4
# HELP http_requests_total Requests answered.\\nBy code.
# TYPE http_requests_total counter
http_requests_total{code=\"200\",pod=\"a\\\"b\\\\c\"} 3
# TYPE other_total counter
other_total 1
# TYPE queue_depth untyped
queue_depth 2.5
"
        );
    }
}
