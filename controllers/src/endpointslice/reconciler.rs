//! Desired groups × existing slices → the slices to create, update and
//! delete: pure.
//!
//! Upstream: `staging/src/k8s.io/endpointslice/reconciler.go`
//! (`reconcile`, `reconcileByAddressType`, `reconcileByPortMapping`, the
//! placeholder slice of `finalize`'s caller).
//!
//! ```text
//! existing slices by (address type, ports), each list in name order
//! for each desired group: its endpoints cut into chunks of 100
//!   chunk i → existing slice i of the group: update when endpoints or labels differ
//!           → no such slice: create one
//!   existing slices of the group beyond its chunks → delete
//! existing slices of no desired group → delete
//! nothing left and nothing created → one empty placeholder slice (kept if it is already there)
//! ```
//!
//! Simplified: see the packing note in the module doc of
//! [`crate::endpointslice`]. The trigger-time annotation is set on every
//! slice written (upstream sets it from its per-sync trigger tracker).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointSlice};

use super::plan::{
    Group, MAX_ENDPOINTS_PER_SLICE, PortsKey, new_slice, placeholder_address_type, ports_key, slice_labels,
};
use crate::endpoint::plan::LAST_CHANGE_TRIGGER_TIME;

/// What one sync writes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SliceChanges {
    /// New slices (named by generateName).
    pub create: Vec<EndpointSlice>,
    /// Existing slices, changed (with their resourceVersion).
    pub update: Vec<EndpointSlice>,
    /// Existing slices to delete.
    pub delete: Vec<EndpointSlice>,
}

impl SliceChanges {
    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        self.create.is_empty() && self.update.is_empty() && self.delete.is_empty()
    }
}

/// The (address type, ports) key of an existing slice.
fn slice_key(slice: &EndpointSlice) -> (String, PortsKey) {
    let ports = slice.ports.as_deref().unwrap_or_default();
    (slice.address_type.clone(), ports_key(ports))
}

/// Sets the trigger-time annotation of a slice about to be written.
fn stamp(slice: &mut EndpointSlice, trigger: Option<Timestamp>) {
    let annotations = slice.metadata.annotations.get_or_insert_with(BTreeMap::new);
    match trigger {
        Some(t) => annotations.insert(LAST_CHANGE_TRIGGER_TIME.to_string(), t.to_string()),
        None => annotations.remove(LAST_CHANGE_TRIGGER_TIME),
    };
    if annotations.is_empty() {
        slice.metadata.annotations = None;
    }
}

/// Upstream `reconcile`: what to write so that `existing` (the slices this
/// controller manages for `service`) hold the `desired` groups.
pub fn reconcile(
    service: &Service,
    desired: &[Group],
    existing: &[&EndpointSlice],
    trigger: Option<Timestamp>,
) -> SliceChanges {
    let mut by_key: BTreeMap<(String, PortsKey), Vec<&EndpointSlice>> = BTreeMap::new();
    for slice in existing {
        by_key.entry(slice_key(slice)).or_default().push(slice);
    }
    for slices in by_key.values_mut() {
        slices.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    }
    let labels = slice_labels(service);
    let mut changes = SliceChanges::default();
    for group in desired {
        let key = (group.address_type.clone(), ports_key(&group.ports));
        let mut slices = by_key.remove(&key).unwrap_or_default().into_iter();
        for chunk in group.endpoints.chunks(MAX_ENDPOINTS_PER_SLICE) {
            match slices.next() {
                Some(live) => {
                    if let Some(updated) = updated_slice(live, chunk, &labels, trigger) {
                        changes.update.push(updated);
                    }
                }
                None => {
                    let mut slice = new_slice(service, &group.address_type, &group.ports, chunk.to_vec());
                    stamp(&mut slice, trigger);
                    changes.create.push(slice);
                }
            }
        }
        changes.delete.extend(slices.cloned());
    }
    changes.delete.extend(by_key.into_values().flatten().cloned());
    keep_a_placeholder(service, existing.len(), &mut changes);
    changes
}

/// `live` with `endpoints` and the labels, or `None` when it has them already.
fn updated_slice(
    live: &EndpointSlice,
    endpoints: &[Endpoint],
    labels: &BTreeMap<String, String>,
    trigger: Option<Timestamp>,
) -> Option<EndpointSlice> {
    let same_labels = live.metadata.labels.as_ref() == Some(labels);
    if live.endpoints == endpoints && same_labels {
        return None;
    }
    let mut updated = live.clone();
    updated.endpoints = endpoints.to_vec();
    updated.metadata.labels = Some(labels.clone());
    stamp(&mut updated, trigger);
    Some(updated)
}

/// Upstream's placeholder: a Service whose slices would all go, with none
/// created, keeps one empty slice. An empty slice about to be deleted that
/// is just that placeholder stays instead.
fn keep_a_placeholder(service: &Service, existing: usize, changes: &mut SliceChanges) {
    if existing != changes.delete.len() || !changes.create.is_empty() {
        return;
    }
    let placeholder = new_slice(service, placeholder_address_type(service), &[], Vec::new());
    let is_placeholder = |s: &EndpointSlice| {
        s.endpoints.is_empty()
            && s.ports.as_deref().unwrap_or_default().is_empty()
            && s.address_type == placeholder.address_type
            && s.metadata.labels == placeholder.metadata.labels
    };
    if changes.delete.len() == 1 && is_placeholder(&changes.delete[0]) {
        changes.delete.clear();
    } else {
        changes.create.push(placeholder);
    }
}
