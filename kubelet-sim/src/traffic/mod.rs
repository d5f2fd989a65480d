//! Simulated traffic (to be written): requests routed by HTTPRoutes to
//! Services' ready endpoints, answered by each pod according to its
//! `sim.miniplane.dev/` behaviour annotations, counted into the metrics store.

pub mod run;
