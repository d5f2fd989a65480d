//! The CronJob controller's tests: [`schedule`] and [`plan`] are table tests of the pure core
//! (upstream's cases from `controllers/testdata/cronjob_schedule.json`); [`controller`] runs the
//! controller against a real API on paused time.

mod controller;
pub(crate) mod fixtures;
mod plan;
mod schedule;
