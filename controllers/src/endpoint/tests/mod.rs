//! The Endpoints controller's tests: [`plan`] and [`repack`] are table
//! tests of the pure core (the controller runs against a real API beside the
//! EndpointSlice controller, in `endpointslice/tests/controller.rs`).

pub(crate) mod fixtures;
mod plan;
mod repack;
