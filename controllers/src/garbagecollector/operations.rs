//! The garbage collector's API calls: find the resource of a kind, read,
//! delete and patch one object.
//!
//! Upstream: `operations.go` (`apiResource`, `getObject`, `deleteObject`,
//! `patchObject`, `removeFinalizer`) and `patch.go` (`patch`). Deletes carry
//! a uid precondition; patches are JSON merge patches guarded by the
//! resourceVersion they were computed from (see [`super::plan`]), read
//! again and retried on a conflict.
//!
//! Simplified: no strategic merge patch first (upstream tries it and falls
//! back to the JSON merge patch for custom resources); the retries of a
//! conflicting patch follow at once, without client-go's backoff.

use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::graph::Identity;
use super::plan::DeletionPropagation;
use crate::runtime::client::{
    Client, ClientError, ClientResult, DeleteParams, PatchType, ResourceRef, json_uid,
};

/// Attempts of a read–patch before a conflict is handed back to the queue
/// (client-go `retry.DefaultBackoff`: 4 steps).
const CONFLICT_ATTEMPTS: usize = 4;

/// The client and the resources it can map kinds to (upstream's RESTMapper).
pub struct Operations {
    client: Arc<dyn Client>,
    /// Replaced whole when the served resources change
    /// ([`super::monitors::Monitors::follow`] holds the other handle);
    /// read for each lookup, never held across an `.await`.
    resources: Arc<RwLock<Vec<ResourceRef>>>,
}

impl Operations {
    /// Calls through `client`, mapping kinds with `resources`.
    pub fn new(client: Arc<dyn Client>, resources: Vec<ResourceRef>) -> Self {
        Operations {
            client,
            resources: Arc::new(RwLock::new(resources)),
        }
    }

    /// The kind mapping, shared, for whoever keeps it up to date.
    pub fn mapping(&self) -> Arc<RwLock<Vec<ResourceRef>>> {
        self.resources.clone()
    }

    /// The resource serving `kind` in `api_version` (upstream `apiResource`).
    /// An unknown kind is an error that the worker retries, as upstream
    /// retries its `restMappingError` (a CRD may appear later); it is not
    /// NotFound, which would say the object does not exist.
    pub fn resource_for(&self, api_version: &str, kind: &str) -> ClientResult<ResourceRef> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        // A poisoned lock still holds a whole list (it is only ever replaced).
        let resources = self.resources.read().unwrap_or_else(|p| p.into_inner());
        resources
            .iter()
            .find(|r| r.kind == kind && r.group == group && r.version == version)
            .cloned()
            .ok_or_else(|| {
                ClientError::new(
                    404,
                    "RESTMappingError",
                    format!("unable to get REST mapping for {kind}.{api_version}"),
                )
            })
    }

    /// GET `name` of `api_version`/`kind` in `namespace` (ignored for a
    /// cluster-scoped kind).
    pub async fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> ClientResult<Value> {
        let resource = self.resource_for(api_version, kind)?;
        self.client.get(&resource, non_empty(namespace), name).await
    }

    /// GET the object `identity` names (upstream `getObject`); its uid may differ.
    pub async fn get_object(&self, identity: &Identity) -> ClientResult<Value> {
        self.get(
            &identity.api_version,
            &identity.kind,
            &identity.namespace,
            &identity.name,
        )
        .await
    }

    /// DELETE with a uid precondition (upstream `deleteObject`).
    pub async fn delete_object(&self, identity: &Identity, policy: DeletionPropagation) -> ClientResult<()> {
        let resource = self.resource_for(&identity.api_version, &identity.kind)?;
        let ns = non_empty(&identity.namespace);
        let params = DeleteParams {
            uid: Some(identity.uid.to_string()),
            ..DeleteParams::propagation(policy.as_str())
        };
        self.client.delete(&resource, ns, &identity.name, &params).await
    }

    /// Reads the object, asks `make_patch` for a patch, and sends it; again
    /// on a conflict. Done, without writing, when the object is gone (or
    /// is another object now) or `make_patch` finds nothing to change.
    pub async fn patch_object(
        &self,
        identity: &Identity,
        make_patch: impl Fn(&Value) -> Option<Value>,
    ) -> ClientResult<()> {
        let resource = self.resource_for(&identity.api_version, &identity.kind)?;
        let ns = non_empty(&identity.namespace);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let live = match self.client.get(&resource, ns, &identity.name).await {
                Err(e) if e.is_not_found() => return Ok(()),
                other => other?,
            };
            if json_uid(&live) != &*identity.uid {
                return Ok(());
            }
            let Some(patch) = make_patch(&live) else {
                return Ok(());
            };
            let sent = self
                .client
                .patch(&resource, ns, &identity.name, PatchType::Merge, patch, None);
            match sent.await {
                Ok(_) => return Ok(()),
                Err(e) if e.is_not_found() => return Ok(()),
                Err(e) if e.is_conflict() && attempt < CONFLICT_ATTEMPTS => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// `Some(ns)`, or `None` for `""`.
fn non_empty(namespace: &str) -> Option<&str> {
    (!namespace.is_empty()).then_some(namespace)
}
