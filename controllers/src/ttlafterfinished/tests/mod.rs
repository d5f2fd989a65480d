//! The TTL-after-finished controller's tests: [`plan`] tables of the pure expiry, [`controller`]
//! against a real API on paused time.

mod controller;
mod plan;
