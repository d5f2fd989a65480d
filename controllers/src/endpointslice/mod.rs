//! The EndpointSlice controller: keeps, for every Service with a selector,
//! `discovery.k8s.io/v1` EndpointSlices (`<service>-<random>`) listing the
//! pods its selector picks, with their readiness as conditions.
//!
//! Upstream: `pkg/controller/endpointslice/endpointslice_controller.go` and
//! the reconciler it drives, `staging/src/k8s.io/endpointslice/`
//! (`reconciler.go`, `utils.go`, `endpointslice_tracker.go`).
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | Service, Pod and EndpointSlice informers → service keys → queue; `impl Reconciler`; `run` | `NewController`, `onServiceUpdate`, `addPod`/`updatePod`/`deletePod`, `onEndpointSlice*`, `Run` |
//! | [`sync`] | one sync: read the caches → [`plan`] → [`reconciler`] → create, update, delete | `syncService`, `reconciler.finalize` |
//! | [`plan`] | pure: a pod as an endpoint, the Service's desired slices grouped by address type and ports | `utils.go` (`podToEndpoint`, `getEndpointPorts`, `newEndpointSlice`, `setEndpointSliceLabels`), `reconciler.reconcile` (its first half) |
//! | [`reconciler`] | pure: desired groups × existing slices → slices to create, update, delete | `reconciler.reconcileByAddressType`, `reconcileByPortMapping`, the placeholder slice |
//! | [`tracker`] | which slice writes the cache has not shown yet (no second create from a stale cache) | `endpointslice_tracker.go` (`StaleSlices`) |
//! | `tests/` | `plan.rs`, `reconciler.rs` table tests; `controller.rs` against a real API | `reconciler_test.go`, `endpointslice_controller_test.go` |
//!
//! Each endpoint has `conditions` `ready` (serving and not terminating, or
//! any pod with `publishNotReadyAddresses`), `serving` (the pod is Ready)
//! and `terminating` (being deleted; such pods stay listed while they have
//! an IP), `nodeName`, `targetRef`, and the hostname a pod asked for in the
//! Service's subdomain. Ports are by name from the Service's ports, numbers
//! from each pod's `targetPort`, so pods that resolve a named port
//! differently land in different slices. A Service without endpoints keeps
//! one empty placeholder slice, as upstream.
//!
//! Simplified against upstream:
//! * No topology: no `zone` (no node informer), no hints, no
//!   `trafficDistribution`.
//! * Packing: the endpoints of one (address type, ports) group are ordered
//!   by pod and cut into slices of at most 100 (`--max-endpoints-per-slice`'s
//!   default), filling the group's existing slices in name order and creating
//!   or deleting slices for the rest. Upstream keeps unchanged endpoints in
//!   their slice and places changed ones to minimise writes; here a change
//!   early in the order may rewrite later slices of a group above 100.
//! * Slices of a deleted Service go with it through their owner reference
//!   (the garbage collector), as upstream.
//! * No mirroring of user-made Endpoints into slices (upstream's separate
//!   EndpointSliceMirroring controller).
//!
//! Where to start reading: [`sync::EndpointSliceSync::sync_service`].

pub mod controller;
pub mod plan;
pub mod reconciler;
pub mod sync;
pub mod tracker;

#[cfg(test)]
mod tests;
