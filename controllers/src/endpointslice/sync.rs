//! One EndpointSlice sync: the thin IO shell around [`super::plan`] and
//! [`super::reconciler`].
//!
//! Upstream: `syncService` of
//! `pkg/controller/endpointslice/endpointslice_controller.go` and
//! `reconciler.finalize` of `staging/src/k8s.io/endpointslice/reconciler.go`.
//!
//! ```text
//! sync_service(key)
//!   Service gone                  → forget its tracked writes, Done (the garbage collector
//!                                   deletes its slices through their owner reference)
//!   no selector, or ExternalName  → Done
//!   slices = the namespace's slices labelled for the Service and managed by this controller
//!   tracker: a write not yet in the cache → Err (retried with backoff)
//!   groups = desired_groups(service, the pods its selector picks)
//!   reconcile(groups, slices) → create (not while the Service is being deleted), update, delete
//! ```
//!
//! A create refused with 403 (the namespace is terminating) ends the sync
//! without error, as upstream.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;

use super::plan::{CONTROLLER_NAME, MANAGED_BY_LABEL, SERVICE_NAME_LABEL, desired_groups};
use super::reconciler::{SliceChanges, reconcile};
use super::tracker::SliceTracker;
use crate::endpoint::plan::last_change_trigger_time;
use crate::endpoint::pods::{has_managed_endpoints, service_selects};
use crate::runtime::client::{Client, ClientError, DeleteParams, Typed};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{Action, ReconcileError, split_key};

/// What one sync reads and writes.
pub struct EndpointSliceSync {
    slices_api: Typed<EndpointSlice>,
    services: Store<Service>,
    pods: Store<Pod>,
    slices: Store<EndpointSlice>,
    /// This controller's writes the slice cache has not shown yet; shared
    /// with the slice event handler.
    tracker: Arc<SliceTracker>,
}

/// Whether this controller manages `slice`, and for which Service (its name).
pub fn managed_service_of(slice: &EndpointSlice) -> Option<&str> {
    let labels = slice.metadata.labels.as_ref()?;
    if labels.get(MANAGED_BY_LABEL).map(String::as_str) != Some(CONTROLLER_NAME) {
        return None;
    }
    labels.get(SERVICE_NAME_LABEL).map(String::as_str)
}

impl EndpointSliceSync {
    /// A syncer reading the given caches and writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        services: Store<Service>,
        pods: Store<Pod>,
        slices: Store<EndpointSlice>,
        tracker: Arc<SliceTracker>,
    ) -> Self {
        EndpointSliceSync {
            slices_api: Typed::new(client),
            services,
            pods,
            slices,
            tracker,
        }
    }

    /// Upstream `syncService`: brings the EndpointSlices of the Service named
    /// by `key` (`namespace/name`) in line with its pods.
    pub async fn sync_service(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(service) = self.services.get(ns, name) else {
            self.tracker.forget(key);
            return Ok(Action::Done);
        };
        if !has_managed_endpoints(&service) {
            return Ok(Action::Done);
        }
        let in_namespace = self.slices.by_index(NAMESPACE_INDEX, ns.unwrap_or(""));
        let slices: Vec<&EndpointSlice> = in_namespace
            .iter()
            .map(Arc::as_ref)
            .filter(|s| managed_service_of(s) == Some(name))
            .collect();
        if self.tracker.stale(key, &slices) {
            return Err(ReconcileError::retryable(format!(
                "EndpointSlice informer cache is out of date for service {key}"
            )));
        }
        let candidates = self.pods.by_index(NAMESPACE_INDEX, ns.unwrap_or(""));
        let pods: Vec<&Pod> = candidates
            .iter()
            .map(Arc::as_ref)
            .filter(|p| service_selects(&service, p))
            .collect();
        let groups = desired_groups(&service, &pods);
        let trigger = last_change_trigger_time(&service, &pods);
        let mut changes = reconcile(&service, &groups, &slices, trigger);
        if service.metadata.deletion_timestamp.is_some() {
            // Creating slices now would race the garbage collector.
            changes.create.clear();
        }
        self.finalize(key, ns, changes).await?;
        Ok(Action::Done)
    }

    /// Upstream `reconciler.finalize`: the writes, creates first, each
    /// recorded in the tracker.
    async fn finalize(&self, key: &str, ns: Option<&str>, changes: SliceChanges) -> Result<(), ClientError> {
        for slice in &changes.create {
            match self.slices_api.create(ns, slice).await {
                Ok(created) => self.tracker.written(key, &created),
                // The namespace is terminating: nothing to publish any more.
                Err(e) if e.code == 403 => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        for slice in &changes.update {
            let updated = self.slices_api.update(slice).await?;
            self.tracker.written(key, &updated);
        }
        for slice in &changes.delete {
            let name = slice.metadata.name.as_deref().unwrap_or("");
            let params = DeleteParams {
                uid: slice.metadata.uid.clone(),
                ..Default::default()
            };
            match self
                .slices_api
                .client()
                .delete(self.slices_api.resource(), ns, name, &params)
                .await
            {
                Ok(()) => self.tracker.deleted(key, name),
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
