//! The aggregation controller's tests: [`plan`] table tests of the pure
//! union; [`controller`] runs the controller against a real API.

mod controller;
mod plan;
