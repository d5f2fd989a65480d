//! The EndpointSlice controller's wiring: Service, Pod and EndpointSlice
//! changes → service keys → workers.
//!
//! Upstream: `pkg/controller/endpointslice/endpointslice_controller.go`
//! (`NewController`, `onServiceUpdate`, `onServiceDelete`, `addPod`,
//! `updatePod`, `deletePod`, `onEndpointSliceAdd`/`Update`/`Delete`,
//! `queueServiceForEndpointSlice`, `Run`).
//!
//! ```text
//! Service informer       ── add / update / delete ─────────────▶ its key ───────┐
//! Pod informer           ── the Services selecting it (as the Endpoints controller) ┼─▶ WorkQueue ─▶ sync_service
//! EndpointSlice informer ── any change to a slice this controller manages ──▶ its Service ┘
//!                           (a deletion also clears the tracker's expectation for it)
//! ```
//!
//! Simplified against upstream: no tombstones, no node informer (no
//! topology), no batching of pod updates; every change of a managed slice
//! syncs its Service (upstream skips the changes it made itself, by
//! generation; a sync that finds nothing to do writes nothing).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::{EndpointSliceSync, managed_service_of};
use super::tracker::SliceTracker;
use crate::endpoint::controller::{service_changed, services_to_update};
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, TracingClient, WorkQueue,
    object_key,
};

/// The controller's name: the queue's, the trace's and its client's.
pub const NAME: &str = "endpointslice-controller";

/// The EndpointSlice controller: build it with
/// [`EndpointSliceController::new`] before the informers run, then
/// [`EndpointSliceController::run`] it.
pub struct EndpointSliceController {
    sync: Arc<EndpointSliceSync>,
    feeds: Feeds<String>,
}

impl EndpointSliceController {
    /// Wires the controller to the three informers (subscribing to each, so
    /// call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        services: &Informer<Service>,
        pods: &Informer<Pod>,
        slices: &Informer<EndpointSlice>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let tracker = Arc::new(SliceTracker::new());
        let sync = EndpointSliceSync::new(
            client,
            services.store(),
            pods.store(),
            slices.store(),
            tracker.clone(),
        );
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(services, service_changed);
        let selecting = services.store();
        feeds.watch_keys(pods, move |change| services_to_update(&selecting, change));
        feeds.watch_keys(slices, move |change| slice_changed(&tracker, change));
        EndpointSliceController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: `workers` workers once the caches have synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for EndpointSliceSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_service(&key).await })
    }
}

/// Upstream `onEndpointSlice*` → `queueServiceForEndpointSlice`: a change
/// to a managed slice syncs its Service; a deletion is also reported to the
/// tracker (upstream `HandleDeletion`).
fn slice_changed(tracker: &SliceTracker, change: &Change<EndpointSlice>) -> Vec<String> {
    let (slice, deleted) = match change {
        Change::Added(s) | Change::Updated { new: s, .. } => (s, false),
        Change::Deleted(s) => (s, true),
    };
    let Some(service) = managed_service_of(slice) else {
        return Vec::new();
    };
    let key = object_key(slice.metadata.namespace.as_deref(), service);
    if deleted {
        tracker.handle_deletion(&key, slice.metadata.name.as_deref().unwrap_or(""));
    }
    vec![key]
}
