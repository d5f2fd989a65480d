//! Tests of the simulated gateway: the pure status functions (table tests)
//! and the controller against a real API server with the Gateway API CRDs.

mod controller;
mod fixtures;
mod status;
