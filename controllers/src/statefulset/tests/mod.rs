//! The StatefulSet controller's tests: table tests of the pure files ([`utils`], [`plan`],
//! [`revisions`], the upstream cases of `controllers/testdata/statefulset.json`), built with the
//! builders in [`fixtures`]; [`controller`] runs the controller against a real API.

mod controller;
pub(crate) mod fixtures;
mod plan;
mod revisions;
mod utils;
