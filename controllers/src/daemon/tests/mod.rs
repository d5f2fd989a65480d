//! The DaemonSet controller's tests: table tests of the pure files (placement, manage, rolling
//! update, status, history, backoff), built with [`fixtures`]; [`controller`] runs the controller
//! against a real API on paused time.

mod controller;
pub(crate) mod fixtures;
mod handlers;
mod history;
mod placement;
mod plan;
mod status;
mod update;
