//! Deletion propagation: what happens to an owner's dependents and to a
//! namespace's content.
//!
//! Upstream this is the garbage collector
//! (`pkg/controller/garbagecollector`) and the namespace controller
//! (`pkg/controller/namespace/deletion`), both separate processes that watch
//! everything. Here a small task per deletion does the same work through the
//! [`Api`], so that `kubectl delete --cascade=orphan|foreground|background`
//! and namespace deletion behave as on a real cluster:
//!
//! - **Background** (default): the owner is removed at once; then every
//!   dependent whose only owner it was is deleted, and dependents with other
//!   owners lose the dangling ownerReference.
//! - **Foreground**: the owner keeps the `foregroundDeletion` finalizer while
//!   its dependents are deleted (foreground too); then the finalizer goes and
//!   the owner with it.
//! - **Orphan**: the `orphan` finalizer stays while the ownerReferences to the
//!   owner are removed from its dependents; then the owner goes.
//! - **Namespace**: marked Terminating, its content is deleted, then the
//!   namespace is removed.
//!
//! Simplified: dependents are found by listing every namespaced kind in the
//! owner's namespace (no owner index), and a finalizer task that finds
//! blocking dependents still there polls every simulated 200 ms.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Api, DeleteOptions, DeleteOutcome, ListOptions, Propagation, obj};
use crate::error::{ApiResult, Reason};
use crate::registry::ResourceInfo;

/// How long a finalizer task waits for dependents before giving up (simulated).
const GIVE_UP_AFTER: Duration = Duration::from_secs(600);
/// Poll interval while waiting for dependents (simulated).
const POLL: Duration = Duration::from_millis(200);

/// A dependent: its resource and its current state.
struct Dependent {
    info: std::sync::Arc<ResourceInfo>,
    object: Value,
}

impl Api {
    /// After an object left the store: collect its dependents (background).
    pub(super) fn after_removal(&self, info: &ResourceInfo, last: &Value, propagation: Option<Propagation>) {
        if propagation == Some(Propagation::Orphan) {
            return;
        }
        let api = self.clone();
        let owner = last.clone();
        let namespaced = info.namespaced;
        tokio::spawn(async move {
            if let Err(e) = api.collect_dependents(&owner, namespaced).await {
                tracing::warn!(error = %e, "deleting dependents failed");
            }
        });
    }

    /// After an object was marked as deleting: run its finalizers.
    pub(super) fn after_marking(&self, info: &ResourceInfo, marked: &Value) {
        let finalizers = obj::finalizers(marked);
        let is_namespace = info.kind == "Namespace" && info.group.is_empty();
        let task = if is_namespace {
            Some("namespace")
        } else if finalizers.iter().any(|f| f == "orphan") {
            Some("orphan")
        } else if finalizers.iter().any(|f| f == "foregroundDeletion") {
            Some("foregroundDeletion")
        } else {
            None
        };
        let Some(task) = task else { return };
        let (api, owner, info) = (self.clone(), marked.clone(), info.clone());
        tokio::spawn(async move {
            let result = match task {
                "namespace" => api.finalize_namespace(&owner).await,
                "orphan" => api.orphan_dependents(&info, &owner).await,
                _ => api.foreground_delete(&info, &owner).await,
            };
            if let Err(e) = result {
                tracing::warn!(error = %e, finalizer = task, "finalizer failed");
            }
        });
    }

    /// Every object whose ownerReferences name `owner`'s uid.
    fn dependents_of(&self, owner: &Value, namespaced: bool) -> ApiResult<Vec<Dependent>> {
        let uid = obj::meta_str(owner, "uid").unwrap_or_default();
        let ns = obj::meta_str(owner, "namespace");
        let mut out = Vec::new();
        for info in self.registry().all() {
            if namespaced && !info.namespaced {
                continue;
            }
            let scope = if namespaced { ns } else { None };
            let records = self
                .inner
                .store
                .list(&info.prefix(scope), None, None)
                .map_err(|e| super::store_error(&info, "", e))?;
            // Only objects whose bytes mention the uid can name it as an
            // owner: decode just those (a rollout deletes many pods, and
            // decoding the whole namespace for each would be quadratic).
            let finder = memchr::memmem::Finder::new(uid.as_bytes());
            let mentions = |r: &&store::Record| !uid.is_empty() && finder.find(&r.value).is_some();
            for record in records.records.iter().filter(mentions) {
                let object = super::decode_record(record)?;
                if owner_uids(&object).contains(&uid) {
                    out.push(Dependent {
                        info: info.clone(),
                        object,
                    });
                }
            }
        }
        Ok(out)
    }

    async fn collect_dependents(&self, owner: &Value, namespaced: bool) -> ApiResult<()> {
        let uid = obj::meta_str(owner, "uid").unwrap_or_default().to_string();
        for dep in self.dependents_of(owner, namespaced)? {
            let others = owner_uids(&dep.object).into_iter().filter(|u| *u != uid).count();
            if others > 0 {
                self.drop_owner_ref(&dep, &uid).await?;
            } else {
                self.delete_quietly(&dep, Some(Propagation::Background)).await?;
            }
        }
        Ok(())
    }

    async fn orphan_dependents(&self, info: &ResourceInfo, owner: &Value) -> ApiResult<()> {
        let uid = obj::meta_str(owner, "uid").unwrap_or_default().to_string();
        for dep in self.dependents_of(owner, info.namespaced)? {
            self.drop_owner_ref(&dep, &uid).await?;
        }
        self.remove_finalizer(info, owner, "orphan").await
    }

    async fn foreground_delete(&self, info: &ResourceInfo, owner: &Value) -> ApiResult<()> {
        let mut waited = Duration::ZERO;
        loop {
            let deps = self.dependents_of(owner, info.namespaced)?;
            if deps.is_empty() || waited >= GIVE_UP_AFTER {
                break;
            }
            for dep in &deps {
                if dep.object.pointer("/metadata/deletionTimestamp").is_none() {
                    self.delete_quietly(dep, Some(Propagation::Foreground)).await?;
                }
            }
            self.clock().sleep(POLL).await;
            waited += POLL;
        }
        self.remove_finalizer(info, owner, "foregroundDeletion").await
    }

    async fn finalize_namespace(&self, namespace: &Value) -> ApiResult<()> {
        let ns = obj::name(namespace).to_string();
        let mut waited = Duration::ZERO;
        loop {
            let mut remaining = 0;
            for info in self.registry().all().into_iter().filter(|i| i.namespaced) {
                for object in self.list(&info, Some(&ns), &ListOptions::default())?.items {
                    remaining += 1;
                    if object.pointer("/metadata/deletionTimestamp").is_none() {
                        let dep = Dependent {
                            info: info.clone(),
                            object,
                        };
                        self.delete_quietly(&dep, Some(Propagation::Background)).await?;
                    }
                }
            }
            if remaining == 0 || waited >= GIVE_UP_AFTER {
                break;
            }
            self.clock().sleep(POLL).await;
            waited += POLL;
        }
        let info = self.resource("", "v1", "namespaces")?;
        let key = info.key(None, &ns);
        match self.inner.store.delete(&key, None).await {
            Ok((record, rev)) => {
                let mut last = super::decode_record(&record)?;
                super::set_resource_version(&mut last, rev);
                Ok(())
            }
            Err(store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(super::store_error(&info, &ns, e)),
        }
    }

    /// Deletes a dependent, ignoring that it may already be gone.
    async fn delete_quietly(&self, dep: &Dependent, propagation: Option<Propagation>) -> ApiResult<()> {
        let ns = obj::meta_str(&dep.object, "namespace").map(str::to_string);
        let opts = DeleteOptions {
            propagation,
            ..Default::default()
        };
        match self
            .delete(&dep.info, ns.as_deref(), obj::name(&dep.object), &opts)
            .await
        {
            Ok(DeleteOutcome::Deleted(_) | DeleteOutcome::Pending(_)) => Ok(()),
            Err(e) if e.reason == Reason::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes the ownerReference to `uid` from a dependent.
    async fn drop_owner_ref(&self, dep: &Dependent, uid: &str) -> ApiResult<()> {
        let ns = obj::meta_str(&dep.object, "namespace").map(str::to_string);
        self.modify(&dep.info, ns.as_deref(), obj::name(&dep.object), |o| {
            let refs = o
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let kept: Vec<Value> = refs
                .into_iter()
                .filter(|r| r.get("uid").and_then(Value::as_str) != Some(uid))
                .collect();
            let meta = obj::meta_mut(o);
            if kept.is_empty() {
                meta.remove("ownerReferences");
            } else {
                meta.insert("ownerReferences".into(), json!(kept));
            }
        })
        .await
    }

    /// Removes one finalizer from an object (which may then disappear).
    async fn remove_finalizer(&self, info: &ResourceInfo, o: &Value, finalizer: &str) -> ApiResult<()> {
        let ns = obj::meta_str(o, "namespace").map(str::to_string);
        self.modify(info, ns.as_deref(), obj::name(o), |o| {
            let kept: Vec<String> = obj::finalizers(o)
                .into_iter()
                .filter(|f| f != finalizer)
                .collect();
            let meta = obj::meta_mut(o);
            if kept.is_empty() {
                meta.remove("finalizers");
            } else {
                meta.insert("finalizers".into(), json!(kept));
            }
        })
        .await
    }

    /// Read–modify–write of one object through the normal update path,
    /// retrying on conflicts; a missing object is not an error.
    pub(crate) async fn modify(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        f: impl Fn(&mut Value),
    ) -> ApiResult<()> {
        loop {
            let mut o = match self.get(info, namespace, name) {
                Ok(o) => o,
                Err(e) if e.reason == Reason::NotFound => return Ok(()),
                Err(e) => return Err(e),
            };
            f(&mut o);
            let opts = super::WriteOptions {
                field_manager: Some("miniplane-controller-manager".into()),
                ..Default::default()
            };
            match self.update(info, namespace, name, o, None, &opts).await {
                Ok(_) => return Ok(()),
                Err(e) if e.reason == Reason::Conflict => continue,
                Err(e) if e.reason == Reason::NotFound => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }
}

/// The uids in an object's ownerReferences.
fn owner_uids(o: &Value) -> Vec<&str> {
    o.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}
