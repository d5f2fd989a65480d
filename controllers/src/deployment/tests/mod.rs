//! The Deployment controller's tests: [`plan`] drives the pure core with upstream's table cases,
//! [`controller`] runs the controller against a real API.

mod controller;
mod plan;
