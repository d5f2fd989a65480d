//! The NodeLifecycle controller's tests: [`health`] and [`taints`] are table tests of the pure
//! core; [`controller`] runs the controller against a real API on paused time.

mod controller;
mod health;
mod taints;
