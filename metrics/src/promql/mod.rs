//! A PromQL subset: what rollout analysis and autoscaling queries use.
//!
//! [`query`] parses (`parser.rs`, over the tokens of `lexer.rs`) and
//! evaluates (`eval.rs`, `functions.rs`) at one instant; [`query_range`]
//! at every step of a range. Supported: number literals; instant and range
//! vector selectors with `=`, `!=`, `=~`, `!~` matchers (fully anchored RE2
//! regexes) and `offset`; every arithmetic, comparison (with `bool`) and
//! set operator, with `on`/`ignoring` and `group_left`/`group_right`; the
//! aggregations `sum avg min max count group stddev stdvar topk bottomk
//! quantile` with `by`/`without`; and the functions listed in `parser.rs`
//! (`rate`, `irate`, `increase`, `delta`, `idelta`, `deriv`, `changes`,
//! `resets`, the `*_over_time` family, `histogram_quantile`, `abs`, `ceil`,
//! `floor`, `round`, `sqrt`, `exp`, `ln`, `log2`, `log10`, `sgn`, `clamp`,
//! `clamp_min`, `clamp_max`, `scalar`, `vector`, `time`, `absent`, `sort`,
//! `sort_desc`); subqueries (`rate(x[1m])[10m:30s]`, step 1m by default).
//! Not supported (a parse error says so): the `@` modifier, string-valued expressions, `label_replace`/`label_join`,
//! `count_values`, date functions and native histograms.

mod eval;
mod functions;
mod lexer;
mod parser;

pub use lexer::parse_duration;

use std::time::{Duration, SystemTime};

use crate::tsdb::{Labels, Tsdb, millis};

/// One element of an instant vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Its labels (with `__name__` when it still has a metric name).
    pub labels: Labels,
    /// Its value.
    pub value: f64,
}

/// A query's result.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A number.
    Scalar(f64),
    /// One value per series, at the query's instant.
    Vector(Vec<Sample>),
    /// Samples over a range per series (ms since the epoch, value).
    Matrix(Vec<(Labels, Vec<(i64, f64)>)>),
}

/// Why a query failed (Prometheus's `errorType`s: `bad_data` for a parse error,
/// `execution` for an evaluation error).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum QueryError {
    /// The expression does not parse.
    #[error("{0}")]
    Parse(String),
    /// It parses but cannot be evaluated.
    #[error("{0}")]
    Execution(String),
}

/// Checks that `expr` parses (and type-checks), without evaluating it.
pub fn validate(expr: &str) -> Result<(), QueryError> {
    parser::parse(expr).map(|_| ())
}

/// Evaluates `expr` at `at`.
pub fn query(db: &Tsdb, expr: &str, at: SystemTime) -> Result<Value, QueryError> {
    let e = parser::parse(expr)?;
    let budget = std::cell::Cell::new(eval::SUBQUERY_BUDGET);
    let v = eval::Eval {
        db,
        t: millis(at),
        budget: &budget,
    }
    .eval(&e)?;
    if let Value::Vector(samples) = &v {
        unique_labelsets(samples)?;
    }
    Ok(v)
}

/// Upstream's check on a result: two samples with the same labels (say
/// `rate` over two metrics that differ only in name) are an error.
fn unique_labelsets(samples: &[Sample]) -> Result<(), QueryError> {
    let mut seen = std::collections::HashSet::with_capacity(samples.len());
    if samples.iter().all(|s| seen.insert(&s.labels)) {
        Ok(())
    } else {
        Err(QueryError::Execution(
            "vector cannot contain metrics with the same labelset".into(),
        ))
    }
}

/// Upstream's cap on the points of one series in a range query.
const MAX_POINTS: i64 = 11_000;

/// Evaluates `expr` at `start`, `start + step`, ... up to `end`; the
/// result is a matrix (a scalar becomes one series without labels).
pub fn query_range(
    db: &Tsdb,
    expr: &str,
    start: SystemTime,
    end: SystemTime,
    step: Duration,
) -> Result<Value, QueryError> {
    let e = parser::parse(expr)?;
    if e.ty() == parser::Type::Matrix {
        return Err(QueryError::Parse(
            "invalid expression type \"range vector\" for range query, must be Scalar or instant Vector"
                .into(),
        ));
    }
    let (start, end) = (millis(start), millis(end));
    let step = i64::try_from(step.as_millis()).unwrap_or(i64::MAX);
    if end < start {
        return Err(QueryError::Parse(
            "end timestamp must not be before start time".into(),
        ));
    }
    if step <= 0 {
        return Err(QueryError::Parse(
            "zero or negative query resolution step widths are not accepted. Try a positive integer".into(),
        ));
    }
    if (end - start) / step >= MAX_POINTS {
        return Err(QueryError::Parse(
            "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"
                .into(),
        ));
    }
    let mut series: std::collections::BTreeMap<Labels, Vec<(i64, f64)>> = std::collections::BTreeMap::new();
    let budget = std::cell::Cell::new(eval::SUBQUERY_BUDGET);
    let mut t = start;
    while t <= end {
        match (eval::Eval {
            db,
            t,
            budget: &budget,
        })
        .eval(&e)?
        {
            Value::Scalar(v) => series.entry(Labels::new()).or_default().push((t, v)),
            Value::Vector(v) => {
                unique_labelsets(&v)?;
                for s in v {
                    series.entry(s.labels).or_default().push((t, s.value));
                }
            }
            Value::Matrix(_) => {
                return Err(QueryError::Execution(
                    "a range query's steps must be instant".into(),
                ));
            }
        }
        t += step;
    }
    Ok(Value::Matrix(series.into_iter().collect()))
}

#[cfg(test)]
mod tests;
