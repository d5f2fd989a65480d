//! The EndpointSlice controller's tests: [`plan`] and [`reconciler`] are
//! table tests of the pure core; [`controller`] runs the controller against
//! a real API.

mod controller;
mod plan;
mod reconciler;
