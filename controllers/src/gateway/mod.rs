//! Gateway API: the objects' types, and miniplane's simulated gateway, an
//! implementation of the API that keeps true: its GatewayClass `miniplane`
//! exists (created at start when absent) and is Accepted; every Gateway of
//! a class it implements is Accepted and Programmed with an address and a
//! status per listener; every HTTPRoute attached to such a Gateway has a
//! `status.parents` entry saying whether the Gateway accepts it and whether
//! its backends resolve (Accepted, ResolvedRefs).
//!
//! Upstream: the Gateway API (sigs.k8s.io/gateway-api, v1.3.0 standard
//! channel) is the specification: its types' documented conditions and
//! reasons, as its conformance suite checks them. The API itself is served
//! from CRDs (crds/ at the repository root), installed at start.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`types`] | the API objects as Rust types (shared with the canary controller and the traffic simulation) | `apis/v1/*_types.go` |
//! | [`controller`] | informers (classes, Gateways, HTTPRoutes, Services) → handlers (change → keys) → queue; `impl Reconciler`; `run` | an implementation's controller wiring |
//! | [`sync`] | one sync of a class, Gateway or route: read the caches → [`status`] → merge-patch `/status` when changed; the GatewayClass at start | — |
//! | [`status`] | pure: the class, Gateway and route-parent statuses, addresses, backend resolution | `gatewayclass_types.go`, `gateway_types.go`, `httproute_types.go`, `shared_types.go` |
//! | [`listeners`] | pure: listener validity, supported kinds, route attachment, hostname intersection | `gateway_types.go` (`Listener`, `AllowedRoutes`), `shared_types.go` (`ParentReference`) |
//! | [`conditions`] | pure: condition types, reasons, `lastTransitionTime` kept while the status holds | `shared_types.go`, apimachinery `meta.SetStatusCondition` |
//! | `tests/` | `status.rs` table tests, `controller.rs` against a real API with the CRDs (paused time), `fixtures.rs` | — |
//!
//! Only [`controller`] and [`sync`] perform IO. Where to start reading:
//! [`sync::GatewaySync::sync`], then [`status::gateway_status`] and
//! [`status::route_parents`].

pub mod conditions;
pub mod controller;
pub mod listeners;
pub mod status;
pub mod sync;
pub mod types;

#[cfg(test)]
mod tests;

/// The simulated gateway's `controllerName` (GatewayClass `spec.controllerName`,
/// route `status.parents[].controllerName`).
pub const CONTROLLER_NAME: &str = "sim.miniplane.dev/gateway-controller";

/// The GatewayClass created at start when absent.
pub const CLASS_NAME: &str = "miniplane";

/// Its `spec.description`.
pub const CLASS_DESCRIPTION: &str = "miniplane's simulated gateway";

/// The Gateway API release whose CRDs miniplane installs.
pub const GATEWAY_API_VERSION: &str = "v1.3.0";
