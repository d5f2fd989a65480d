//! Gateway API: the objects' types, and the simulated gateway implementation
//! that accepts Gateways of the `miniplane` GatewayClass and their HTTPRoutes
//! and reports their status conditions (Accepted, Programmed, ResolvedRefs).

pub mod controller;
pub mod types;
