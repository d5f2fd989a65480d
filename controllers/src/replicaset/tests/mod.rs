//! The ReplicaSet controller's tests: [`plan`] and [`status`] are table tests of the pure core,
//! built with the chained builders in [`fixtures`] (shared with the `controller_utils` and
//! `controller_ref_manager` tests); [`controller`] runs the controller against a real API.

mod controller;
pub(crate) mod fixtures;
mod plan;
mod status;
