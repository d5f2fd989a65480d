//! Namespace finalization: a namespace marked Terminating is emptied, then
//! removed.
//!
//! Upstream this is the namespace controller
//! (`pkg/controller/namespace/deletion/namespaced_resources_deleter.go`), a
//! separate process that watches namespaces and removes the `kubernetes`
//! finalizer once every object in the namespace is gone. Here a small task
//! per namespace deletion does the same through the [`Api`], so that
//! `kubectl delete namespace` works without a controller manager.
//!
//! What happens to an owner's dependents is not the API server's business:
//! it only sets `deletionTimestamp` and the `orphan` / `foregroundDeletion`
//! finalizers (see [`super::delete`]); the garbage collector in
//! `controllers/src/garbagecollector` does the rest.
//!
//! Simplified: no `kubernetes` finalizer in `spec.finalizers`; the task
//! deletes every object in the namespace with Background propagation, polls
//! every simulated 200 ms until none is left (giving up after ten simulated
//! minutes), then removes the namespace.

use std::time::Duration;

use serde_json::Value;

use super::{Api, DeleteOptions, ListOptions, Propagation, obj};
use crate::error::{ApiResult, Reason};
use crate::registry::ResourceInfo;

/// How long the task waits for the namespace to empty (simulated).
const GIVE_UP_AFTER: Duration = Duration::from_secs(600);
/// Poll interval while objects remain (simulated).
const POLL: Duration = Duration::from_millis(200);
/// Who the journal says emptied and removed a namespace.
const ACTOR: &str = "namespace-controller";

impl Api {
    /// After a namespace was marked Terminating: empty and remove it.
    pub(super) fn start_namespace_finalizer(&self, namespace: &Value) {
        let (api, namespace) = (self.clone(), namespace.clone());
        tokio::spawn(async move {
            if let Err(e) = api.finalize_namespace(&namespace).await {
                tracing::warn!(error = %e, "namespace finalizer failed");
            }
        });
    }

    async fn finalize_namespace(&self, namespace: &Value) -> ApiResult<()> {
        let ns = obj::name(namespace).to_string();
        let mut waited = Duration::ZERO;
        while self.delete_namespace_content(&ns).await? > 0 && waited < GIVE_UP_AFTER {
            self.clock().sleep(POLL).await;
            waited += POLL;
        }
        let info = self.resource("", "v1", "namespaces")?;
        let key = info.key(None, &ns);
        match self.inner.store.delete(&key, None).await {
            Ok((_, deleted_at)) => {
                let journal = super::journal::JournalWrite {
                    info: &info,
                    verb: "delete",
                    sub: None,
                    actor: ACTOR,
                    object: namespace,
                    resource_version: deleted_at,
                    change: super::journal::Change::Removed,
                };
                self.journal_write(&journal);
                Ok(())
            }
            Err(store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(super::store_error(&info, &ns, e)),
        }
    }

    /// Deletes every object of the namespace not already being deleted;
    /// returns how many objects were there.
    async fn delete_namespace_content(&self, ns: &str) -> ApiResult<usize> {
        let mut remaining = 0;
        for info in self.registry().all().into_iter().filter(|i| i.namespaced) {
            for object in self.list(&info, Some(ns), &ListOptions::default())?.items {
                remaining += 1;
                if object.pointer("/metadata/deletionTimestamp").is_none() {
                    self.delete_quietly(&info, ns, obj::name(&object)).await?;
                }
            }
        }
        Ok(remaining)
    }

    /// Deletes one object in the background, ignoring that it may already be gone.
    async fn delete_quietly(&self, info: &ResourceInfo, ns: &str, name: &str) -> ApiResult<()> {
        let opts = DeleteOptions {
            propagation: Some(Propagation::Background),
            actor: Some(ACTOR.to_string()),
            ..Default::default()
        };
        match self.delete(info, Some(ns), name, &opts).await {
            Ok(_) => Ok(()),
            Err(e) if e.reason == Reason::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
}
