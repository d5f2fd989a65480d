//! A PromQL subset: what rollout analysis and autoscaling queries use.
//! (to be written: parser, evaluator)

use std::time::SystemTime;

use crate::tsdb::{Labels, Tsdb};

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

/// Evaluates `expr` at `at`.
pub fn query(db: &Tsdb, expr: &str, at: SystemTime) -> Result<Value, QueryError> {
    let _ = (db, at);
    Err(QueryError::Execution(format!("not yet: {expr}")))
}
