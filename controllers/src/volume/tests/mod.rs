//! The persistent-volume controller's tests: [`plan`] table tests of the
//! pure core; [`controller`] runs the controller against a real API.

mod controller;
mod plan;
