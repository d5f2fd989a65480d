//! The Endpoints controller: keeps, for every Service with a selector, an
//! Endpoints object of the same name listing the addresses of the pods the
//! selector picks, ready ones under `addresses`, the others under
//! `notReadyAddresses`, on the ports the Service's `targetPort`s name.
//!
//! Upstream: `pkg/controller/endpoint/endpoints_controller.go`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | Service, Pod and Endpoints informers → service keys → queue; `impl Reconciler`; `run` | `NewEndpointController`, `onServiceUpdate`, `addPod`/`updatePod`/`deletePod`, `onEndpointsDelete`, `Run` |
//! | [`sync`] | one sync: read the caches → [`plan`] → create, update or delete | `syncService` |
//! | [`plan`] | pure: the subsets of a Service and what to write | `syncService`'s loop, `addEndpointSubset`, the equality check |
//! | [`pods`] | pure: which pods count, their address, the port a `targetPort` names | `staging/src/k8s.io/endpointslice/util/controller_utils.go` (`ShouldPodBeInEndpoints`, `ShouldSetHostname`, `GetPodServiceMemberships`), `pkg/api/v1/pod/util.go` (`FindPort`), `podToEndpointAddressForService` |
//! | [`repack`] | pure: one subset per set of addresses sharing ports | `pkg/api/v1/endpoints/util.go` (`RepackSubsets`, `SortSubsets`) |
//! | `tests/` | `plan.rs`, `repack.rs` table tests; `controller.rs` against a real API | `endpoints_controller_test.go`, `util_test.go` |
//!
//! Services without a selector (the `default/kubernetes` Service, or one a
//! user fills by hand) and `ExternalName` Services are left alone; the
//! Endpoints of a deleted Service are deleted. [`pods`] is shared with the
//! EndpointSlice controller ([`crate::endpointslice`]).
//!
//! Where to start reading: [`sync::EndpointsSync::sync_service`], then
//! [`plan::desired_subsets`].

pub mod controller;
pub mod plan;
pub mod pods;
pub mod repack;
pub mod sync;

#[cfg(test)]
pub(crate) mod tests;
