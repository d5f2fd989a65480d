//! The Canary controller's tests: [`plan`] and [`checks`] are table tests of
//! the pure core; [`controller`] runs the controller against a real API on
//! paused time with metrics written by hand into a real [`sim_metrics::Tsdb`].

mod checks;
mod controller;
mod decisions;
mod plan;
