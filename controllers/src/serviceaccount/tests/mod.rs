//! The ServiceAccounts controller's tests: [`plan`] is a table test of the
//! pure core; [`controller`] runs the controller against a real API.

mod controller;
mod plan;
