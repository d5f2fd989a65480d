//! Tests of the simulated gateway.
