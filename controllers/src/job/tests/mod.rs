//! The Job controller's tests: table tests of the pure files (upstream's backoff cases from
//! `testdata/job_backoff.json`, and cases of our own), and [`controller`] against a real API.

mod backoff;
mod controller;
pub(crate) mod fixtures;
mod indexed;
mod plan;
mod pod_failure_policy;
mod success_policy;
