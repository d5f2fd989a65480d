//! Tests of the disruption controller: the planner's tables (many of them upstream's
//! `disruption_test.go` cases) and the controller against a real API.

mod controller;
mod plan;
