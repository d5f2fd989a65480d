//! Which of this controller's slice writes its cache has not shown yet.
//!
//! Upstream: `staging/src/k8s.io/endpointslice/endpointslice_tracker.go`
//! (`EndpointSliceTracker`: `Update`, `ExpectDeletion`, `StaleSlices`,
//! `DeleteService`).
//!
//! Why: slices are created with generateName, so a sync that runs before
//! the informer shows the slice the last sync created would not find it and
//! create a second one. The sync therefore records every slice it writes
//! (with the resourceVersion the API answered) or deletes, and a later sync
//! of the same Service waits (a retry with backoff) until the cache has
//! caught up with all of them.
//!
//! Simplified: upstream tracks slice generations; here the resourceVersion,
//! which in miniplane is the store's revision and so grows with every write.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use k8s_openapi::api::discovery::v1::EndpointSlice;

/// What the sync expects the cache to show for one slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expected {
    /// The slice at this resourceVersion or later.
    AtLeast(u64),
    /// No slice of this name.
    Deleted,
}

/// Per Service key, per slice name, what the cache must show before the
/// Service syncs again. Shared by the workers; the lock is never held
/// across an await.
#[derive(Debug, Default)]
pub struct SliceTracker {
    expected: Mutex<HashMap<String, BTreeMap<String, Expected>>>,
}

fn revision(slice: &EndpointSlice) -> u64 {
    let rv = slice.metadata.resource_version.as_deref().unwrap_or("0");
    rv.parse().unwrap_or(0)
}

impl SliceTracker {
    /// A tracker expecting nothing.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, BTreeMap<String, Expected>>) -> T) -> T {
        // A worker that panicked while holding the lock left whole entries:
        // the map is still consistent, so a poisoned lock is taken over.
        let mut guard = self.expected.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    /// Upstream `Update`: the API answered a create or update of a slice of
    /// `service` with `written`.
    pub fn written(&self, service: &str, written: &EndpointSlice) {
        let name = written.metadata.name.clone().unwrap_or_default();
        let rv = revision(written);
        self.with(|m| {
            m.entry(service.to_string())
                .or_default()
                .insert(name, Expected::AtLeast(rv))
        });
    }

    /// Upstream `ExpectDeletion`: a slice of `service` named `name` was deleted.
    pub fn deleted(&self, service: &str, name: &str) {
        self.with(|m| {
            let slices = m.entry(service.to_string()).or_default();
            slices.insert(name.to_string(), Expected::Deleted)
        });
    }

    /// Upstream `StaleSlices`: whether `cached` (the Service's slices in the
    /// cache) lacks a write this controller made. Expectations the cache
    /// meets are dropped.
    pub fn stale(&self, service: &str, cached: &[&EndpointSlice]) -> bool {
        self.with(|m| {
            let Some(slices) = m.get_mut(service) else {
                return false;
            };
            slices.retain(|name, expected| {
                let seen = cached
                    .iter()
                    .find(|s| s.metadata.name.as_deref() == Some(name.as_str()));
                match (expected, seen) {
                    (Expected::AtLeast(rv), Some(s)) => revision(s) < *rv,
                    (Expected::AtLeast(_), None) => true,
                    (Expected::Deleted, seen) => seen.is_some(),
                }
            });
            let stale = !slices.is_empty();
            if !stale {
                m.remove(service);
            }
            stale
        })
    }

    /// Upstream `HandleDeletion`: the informer saw slice `name` of `service`
    /// deleted (by anyone); nothing is expected of it any more.
    pub fn handle_deletion(&self, service: &str, name: &str) {
        self.with(|m| {
            if let Some(slices) = m.get_mut(service) {
                slices.remove(name);
            }
        });
    }

    /// Upstream `DeleteService`: the Service is gone; forget its slices.
    pub fn forget(&self, service: &str) {
        self.with(|m| m.remove(service));
    }
}
