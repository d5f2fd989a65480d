//! The TaintEviction controller's tests: [`plan`] is a table test of the pure core;
//! [`controller`] runs the controller against a real API on paused time.

mod controller;
mod plan;
