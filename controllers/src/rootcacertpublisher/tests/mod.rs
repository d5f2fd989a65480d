//! The root CA publisher's tests: [`plan`] is a table test of the pure
//! core; [`controller`] runs the publisher against a real API.

mod controller;
mod plan;
