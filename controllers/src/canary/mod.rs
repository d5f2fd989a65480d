//! The Canary controller (rollouts.miniplane.dev): progressive delivery of a
//! Deployment (to be written).

pub mod controller;
pub mod objects;
pub mod types;
