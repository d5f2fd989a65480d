//! One Endpoints sync: the thin IO shell around [`super::plan`].
//!
//! Upstream: `syncService` of `pkg/controller/endpoint/endpoints_controller.go`.
//!
//! ```text
//! sync_service(key)
//!   Service gone                      → delete its Endpoints (NotFound is fine), Done
//!   no selector, or ExternalName      → Done (someone else fills its Endpoints)
//!   pods = the namespace's pods the selector picks (cache)
//!   plan_endpoints(service, pods, cached Endpoints) → Nothing | Create | Update
//!   create refused with 403           → Done (the namespace is terminating)
//!   create AlreadyExists, update 409  → Err: retried after the cache caught up
//! ```

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};

use super::plan::{EndpointsPlan, plan_endpoints};
use super::pods::{has_managed_endpoints, service_selects};
use crate::runtime::client::{Client, DeleteParams, Typed};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{Action, ReconcileError, split_key};

/// What one sync reads and writes.
pub struct EndpointsSync {
    endpoints_api: Typed<Endpoints>,
    services: Store<Service>,
    pods: Store<Pod>,
    endpoints: Store<Endpoints>,
}

impl EndpointsSync {
    /// A syncer reading the given caches and writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        services: Store<Service>,
        pods: Store<Pod>,
        endpoints: Store<Endpoints>,
    ) -> Self {
        EndpointsSync {
            endpoints_api: Typed::new(client),
            services,
            pods,
            endpoints,
        }
    }

    /// Upstream `syncService`: brings the Endpoints of the Service named by
    /// `key` (`namespace/name`) in line with its pods.
    pub async fn sync_service(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(service) = self.services.get(ns, name) else {
            let deleted = self
                .endpoints_api
                .client()
                .delete(self.endpoints_api.resource(), ns, name, &DeleteParams::default())
                .await;
            return match deleted {
                Err(e) if !e.is_not_found() => Err(e.into()),
                _ => Ok(Action::Done),
            };
        };
        if !has_managed_endpoints(&service) {
            return Ok(Action::Done);
        }
        let candidates = self.pods.by_index(NAMESPACE_INDEX, ns.unwrap_or(""));
        let pods: Vec<&Pod> = candidates
            .iter()
            .map(Arc::as_ref)
            .filter(|p| service_selects(&service, p))
            .collect();
        let live = self.endpoints.get(ns, name);
        match plan_endpoints(&service, &pods, live.as_deref()) {
            EndpointsPlan::Nothing => {}
            EndpointsPlan::Create(endpoints) => match self.endpoints_api.create(ns, &endpoints).await {
                Err(e) if e.code == 403 => {}
                other => {
                    other?;
                }
            },
            EndpointsPlan::Update(endpoints) => {
                self.endpoints_api.update(&endpoints).await?;
            }
        }
        Ok(Action::Done)
    }
}
