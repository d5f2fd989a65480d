//! One sync of a claim or a volume: read the caches, plan, write.
//!
//! Upstream: `pkg/controller/volume/persistentvolume/pv_controller.go`
//! (`syncClaim`, `syncVolume`, and the write helpers `updateVolumePhase`,
//! `updateClaimStatus`, `deleteVolumeOperation`) and
//! `pv_controller_base.go` (`syncClaim` / `syncVolume` entry points).
//!
//! ```text
//! sync(Claim(key))  → claim gone: Done; else plan_claim(claim, its class, volumes, now)
//! sync(Volume(key)) → volume gone: Done; else plan_volume(volume, its claim, now)
//! apply(plan): create volume → volume (spec, then status) → claim (spec, then status)
//!              → delete volume → events; RequeueAfter when the plan waits
//! ```
//!
//! Simplified: writes are updates of the whole object from the cache (a
//! conflict fails the sync, which is retried with backoff) rather than
//! upstream's retrying helpers; there is no in-memory "assumed" cache of
//! the controller's own writes.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use store::Clock;

use super::plan::{self, On, Plan};
use crate::runtime::client::{Client, ClientError, Typed};
use crate::runtime::events::{ObjectRef, Recorder};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, clock_now, split_key};

/// What the queue holds: upstream's two queues, as one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A claim, `namespace/name`.
    Claim(String),
    /// A volume, by name.
    Volume(String),
}

/// The caches one sync reads and the API it writes.
pub struct VolumeSync {
    claims_api: Typed<PersistentVolumeClaim>,
    volumes_api: Typed<PersistentVolume>,
    claims: Store<PersistentVolumeClaim>,
    volumes: Store<PersistentVolume>,
    classes: Store<StorageClass>,
    /// Events on claims and volumes.
    recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    clock: Clock,
}

impl VolumeSync {
    /// A syncer over the three caches, writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        claims: Store<PersistentVolumeClaim>,
        volumes: Store<PersistentVolume>,
        classes: Store<StorageClass>,
    ) -> Self {
        VolumeSync {
            claims_api: Typed::new(client.clone()),
            volumes_api: Typed::new(client),
            claims,
            volumes,
            classes,
            recorder,
            clock,
        }
    }

    /// Syncs the claim or volume named by `key`.
    pub async fn sync(&self, key: &Key) -> Result<Action, ReconcileError> {
        let now = clock_now(&self.clock)?;
        let volumes = self.volumes.list();
        let (plan, claim, volume) = match key {
            Key::Claim(key) => {
                let (ns, name) = split_key(key)?;
                let Some(claim) = self.claims.get(ns, name) else {
                    return Ok(Action::Done);
                };
                let class = self.classes.get(None, &plan::claim_class(&claim));
                let refs: Vec<&PersistentVolume> = volumes.iter().map(Arc::as_ref).collect();
                let plan = plan::plan_claim(&claim, class.as_deref(), &refs, now);
                let involved = plan.volume.clone();
                (plan, Some(claim), involved.map(Arc::new))
            }
            Key::Volume(name) => {
                let Some(volume) = self.volumes.get(None, name) else {
                    return Ok(Action::Done);
                };
                let claim_ref = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
                let claim = claim_ref.and_then(|r| {
                    self.claims
                        .get(r.namespace.as_deref(), r.name.as_deref().unwrap_or(""))
                });
                (
                    plan::plan_volume(&volume, claim.as_deref(), now),
                    claim,
                    Some(volume),
                )
            }
        };
        self.apply(plan, claim.as_deref(), volume.as_deref()).await
    }

    /// Writes what the plan says, in order, stopping at the first failure.
    async fn apply(
        &self,
        plan: Plan,
        claim: Option<&PersistentVolumeClaim>,
        volume: Option<&PersistentVolume>,
    ) -> Result<Action, ReconcileError> {
        if let Some(new) = &plan.create_volume {
            match self.volumes_api.create(None, new).await {
                Ok(_) => {}
                // Provisioned by an earlier sync whose claim write failed.
                Err(e) if e.is_already_exists() => {}
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(desired) = plan.volume {
            let cached = self
                .volumes
                .get(None, desired.metadata.name.as_deref().unwrap_or(""));
            write_both(&self.volumes_api, cached.as_deref(), desired, |v| &mut v.status).await?;
        }
        if let Some(desired) = plan.claim {
            let cached = self.claims.get(
                desired.metadata.namespace.as_deref(),
                desired.metadata.name.as_deref().unwrap_or(""),
            );
            write_both(&self.claims_api, cached.as_deref(), desired, |c| &mut c.status).await?;
        }
        if let Some(name) = &plan.delete_volume {
            match self.volumes_api.delete(None, name).await {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        for e in &plan.events {
            let target = match e.on {
                On::Claim => claim.map(ObjectRef::of),
                On::Volume => volume.map(ObjectRef::of),
            };
            if let Some(target) = target {
                self.recorder.record(&target, e.type_, e.reason, &e.message);
            }
        }
        Ok(match plan.requeue {
            Some(after) => Action::RequeueAfter(after),
            None => Action::Done,
        })
    }
}

/// Writes `desired` over `cached`: metadata and spec with an update when
/// they differ, then the status with an update of `/status` when it
/// differs from what the first write returned.
async fn write_both<K, S>(
    api: &Typed<K>,
    cached: Option<&K>,
    mut desired: K,
    status: impl Fn(&mut K) -> &mut Option<S>,
) -> Result<(), ClientError>
where
    K: k8s_openapi::Resource
        + serde::de::DeserializeOwned
        + serde::Serialize
        + Clone
        + PartialEq
        + Send
        + Sync
        + 'static,
    S: Clone + PartialEq,
{
    let Some(cached) = cached else {
        return Ok(());
    };
    let wanted_status = status(&mut desired).clone();
    let mut current = cached.clone();
    let cached_status = status(&mut current).clone();
    *status(&mut current) = wanted_status.clone();
    if current != desired {
        current = api.update(&desired).await?;
    } else {
        *status(&mut current) = cached_status;
    }
    if *status(&mut current) != wanted_status {
        *status(&mut current) = wanted_status;
        api.update_status(&current).await?;
    }
    Ok(())
}
