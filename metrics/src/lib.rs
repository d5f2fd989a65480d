//! The simulated world's metrics, as a Prometheus server would hold them.
//!
//! The traffic simulation (kubelet-sim) counts requests, latencies and CPU
//! into a [`Tsdb`]; every scrape interval it takes a [`Tsdb::scrape`], a
//! sample of every series at that simulated instant. Readers ask in PromQL
//! ([`Query`]): the Canary controller's analysis, the HorizontalPodAutoscaler's
//! metrics, and anyone over HTTP (`/api/v1/query`, served by the apiserver,
//! answered by [`api`]). `/metrics` shows the current values in the
//! Prometheus text format ([`Tsdb::exposition`]).
//!
//! The series the simulation writes (the names a query uses) are listed in
//! [`names`].

pub mod api;
pub mod names;
pub mod promql;
mod tsdb;

pub use promql::{QueryError, Sample, Value};
pub use tsdb::{Labels, MetricKind, Tsdb};

use std::time::SystemTime;

/// Something that answers PromQL: the in-process [`Tsdb`], or (one day) a
/// real Prometheus over HTTP. The Canary analysis and the HPA's metrics
/// client read through it.
pub trait Query: Send + Sync {
    /// An instant query (`/api/v1/query?query=…&time=…`) evaluated at `at`.
    fn instant(&self, expr: &str, at: SystemTime) -> Result<Value, QueryError>;
}

impl Query for Tsdb {
    fn instant(&self, expr: &str, at: SystemTime) -> Result<Value, QueryError> {
        promql::query(self, expr, at)
    }
}
