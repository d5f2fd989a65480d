//! One publisher sync: create or correct `kube-root-ca.crt` in a namespace.
//!
//! Upstream: `syncNamespace` of
//! `pkg/controller/certificates/rootcacertpublisher/publisher.go`.
//!
//! ```text
//! sync_namespace(name)
//!   namespace gone or not Active → Done
//!   plan(cached ConfigMap)       → Nothing | Create | Update
//!   create: NotFound / 403       → Done (the namespace went away or is terminating)
//!   other failure                → Err (retried with backoff)
//! ```
//!
//! Simplified: upstream reads only the ConfigMap lister and lets the API
//! refuse a create in a terminating namespace (skipping the
//! `NamespaceTerminating` cause); here the namespace's phase is read from
//! its cache first, and every 403 of a create is taken as that cause (the
//! client carries no status causes).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};

use super::plan::{Plan, ROOT_CA_CONFIG_MAP, plan};
use crate::runtime::client::{Client, Typed};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError};
use crate::serviceaccount::plan::is_active;

/// What one sync reads and writes.
pub struct RootCaPublisherSync {
    config_maps_api: Typed<ConfigMap>,
    /// The CA certificate, PEM.
    root_ca: String,
    namespaces: Store<Namespace>,
    config_maps: Store<ConfigMap>,
}

impl RootCaPublisherSync {
    /// A syncer publishing `root_ca`, reading the given caches and writing
    /// through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        root_ca: String,
        namespaces: Store<Namespace>,
        config_maps: Store<ConfigMap>,
    ) -> Self {
        RootCaPublisherSync {
            config_maps_api: Typed::new(client),
            root_ca,
            namespaces,
            config_maps,
        }
    }

    /// Upstream `syncNamespace`.
    pub async fn sync_namespace(&self, name: &str) -> Result<Action, ReconcileError> {
        let active = self
            .namespaces
            .get(None, name)
            .is_some_and(|ns| is_active(&ns) && ns.metadata.deletion_timestamp.is_none());
        if !active {
            return Ok(Action::Done);
        }
        let live = self.config_maps.get(Some(name), ROOT_CA_CONFIG_MAP);
        match plan(name, live.as_deref(), &self.root_ca) {
            Plan::Nothing => {}
            Plan::Create(cm) => match self.config_maps_api.create(Some(name), &cm).await {
                Ok(_) => {}
                Err(e) if e.is_already_exists() || e.is_not_found() || e.code == 403 => {}
                Err(e) => return Err(e.into()),
            },
            Plan::Update(cm) => {
                self.config_maps_api.update(&cm).await?;
            }
        }
        Ok(Action::Done)
    }
}
