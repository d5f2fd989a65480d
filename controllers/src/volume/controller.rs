//! The persistent-volume controller's wiring: informer events → keys → workers.
//!
//! Upstream: `pkg/controller/volume/persistentvolume/pv_controller_base.go`
//! (`NewController`, `addVolume`/`updateVolume`/`deleteVolume`,
//! `addClaim`/`updateClaim`/`deleteClaim`, `Run`).
//!
//! ```text
//! claim informer  ── add/update ──▶ Claim(key)
//!                 ── delete ──────▶ Volume(its volumeName)   (the volume is released)
//! volume informer ── add/update ──▶ Volume(name), Claim(its claimRef)
//! class informer  ── (read only: the sync looks the claim's class up)
//! ```
//!
//! Simplified: no periodic resync of every object (a claim that waits asks
//! to be looked at again itself), no separate claim and volume queues.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sync::{Key, VolumeSync};
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, TracingClient,
    WorkQueue, key_of, object_key,
};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "persistentvolume-binder";

/// The persistent-volume controller: build it before the informers run,
/// then [`PersistentVolumeController::run`] it.
pub struct PersistentVolumeController {
    sync: Arc<VolumeSync>,
    feeds: Feeds<Key>,
}

impl PersistentVolumeController {
    /// Wires the controller to the claim, volume and class informers.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        claims: &Informer<PersistentVolumeClaim>,
        volumes: &Informer<PersistentVolume>,
        classes: &Informer<StorageClass>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = VolumeSync::new(
            client,
            clock.clone(),
            recorder,
            claims.store(),
            volumes.store(),
            classes.store(),
        );
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(claims, on_claim);
        feeds.watch_keys(volumes, on_volume);
        feeds.watch_keys(classes, |_| Vec::new());
        PersistentVolumeController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown` (after the three caches have synced).
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for VolumeSync {
    type Key = Key;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &Key) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync(&key).await })
    }
}

/// Upstream `addClaim` / `updateClaim` / `deleteClaim`.
pub fn on_claim(change: &Change<PersistentVolumeClaim>) -> Vec<Key> {
    match change {
        Change::Added(c) => vec![Key::Claim(key_of(&c.metadata))],
        Change::Updated { new, .. } => vec![Key::Claim(key_of(&new.metadata))],
        Change::Deleted(c) => c
            .spec
            .as_ref()
            .and_then(|s| s.volume_name.clone())
            .filter(|v| !v.is_empty())
            .map(Key::Volume)
            .into_iter()
            .collect(),
    }
}

/// Upstream `addVolume` / `updateVolume`: the volume, and the claim it
/// points at (which may now bind).
pub fn on_volume(change: &Change<PersistentVolume>) -> Vec<Key> {
    let volume = match change {
        Change::Added(v) | Change::Updated { new: v, .. } => v,
        Change::Deleted(_) => return Vec::new(),
    };
    let mut keys = vec![Key::Volume(key_of(&volume.metadata))];
    if let Some(r) = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) {
        keys.push(Key::Claim(object_key(
            r.namespace.as_deref(),
            r.name.as_deref().unwrap_or(""),
        )));
    }
    keys
}
