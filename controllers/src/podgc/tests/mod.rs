//! The pod GC's tests: [`plan`] and [`quarantine`] are table tests of the pure core (upstream
//! `gc_controller_test.go`'s cases among them), with the pod builders of the ReplicaSet tests
//! and the node builders in [`fixtures`]; [`controller`] runs the controller against a real API
//! on paused time.

mod controller;
mod fixtures;
mod plan;
mod quarantine;
