//! The CustomResourceDefinition lifecycle, run inside the API server:
//! names, conditions, registry rows and the cleanup of a deleted CRD.
//!
//! Upstream runs these as controllers of `apiextensions-apiserver`:
//! `pkg/controller/status/naming_controller.go` (acceptedNames,
//! NamesAccepted), `pkg/controller/establish/establishing_controller.go`
//! (Established), `pkg/apiserver/customresource_discovery_controller.go`
//! and `customresource_handler.go` (serving a version once established),
//! `pkg/controller/finalizer/crd_finalizer.go` (deleting every custom
//! resource of a deleted CRD, then removing its finalizer).
//!
//! ```text
//! watch CRDs ─► one pass over every CRD (oldest first):
//!   naming:     acceptedNames + NamesAccepted (+ Established) → /status when changed
//!   deleting:   Terminating InstanceDeletionInProgress → delete every instance
//!               → none left? Terminating False InstanceDeletionCompleted, finalizer removed
//!   rows:       registry rows = rows of every established CRD (insert, replace, remove)
//! ```
//!
//! A pass is level-based and idempotent: a write it makes comes back as a
//! watch event and leads to a pass that changes nothing. While a deleted
//! CRD waits for instances that have finalizers of their own, passes also
//! run every [`POLL`] of simulated time.
//!
//! Simplified: one task does the work of upstream's four controllers; a
//! CRD is Established in the same pass that accepts its names (upstream
//! goes through `Installing` for a moment); instances are deleted one by
//! one with Background propagation (upstream: a DeleteCollection per
//! namespace), and the deletion waits without a time limit (upstream
//! gives up a pass after a minute and retries).

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Api, DeleteOptions, ListOptions, Propagation, WatchEvent, WatchOptions, WriteOptions, obj};
use crate::crd::{names, rows};
use crate::error::{ApiResult, Reason};
use crate::kinds::apiextensions::{CLEANUP_FINALIZER, condition, condition_true, set_condition};
use crate::registry::{ResourceInfo, Subresource};

/// The rows of each CRD by name, with the resourceVersion they were built from.
pub(super) type RowCache = std::collections::BTreeMap<String, (String, Vec<ResourceInfo>)>;

/// How often a pass runs while a deleted CRD waits for its instances (simulated).
const POLL: Duration = Duration::from_millis(200);
/// The field manager of the controller's writes (upstream's loopback client).
const FIELD_MANAGER: &str = "kube-apiserver";

impl Api {
    /// The CustomResourceDefinition resource.
    fn crd_resource(&self) -> ApiResult<std::sync::Arc<ResourceInfo>> {
        self.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    }

    /// Every CRD, oldest first (the first to claim a name keeps it).
    fn all_crds(&self) -> ApiResult<Vec<Value>> {
        let mut crds = self
            .list(&*self.crd_resource()?, None, &ListOptions::default())?
            .items;
        crds.sort_by(|a, b| {
            let key = |o: &Value| {
                (
                    obj::meta_str(o, "creationTimestamp").map(str::to_string),
                    obj::name(o).to_string(),
                )
            };
            key(a).cmp(&key(b))
        });
        Ok(crds)
    }

    /// Serves the established CRDs of the store: what start-up does before
    /// the API is served, so that a restarted server serves them at once.
    pub fn restore_custom_resources(&self) -> ApiResult<()> {
        let crds = self.all_crds()?;
        self.sync_rows(&crds);
        Ok(())
    }

    /// Keeps every CRD's names, conditions, registry rows and deletion in
    /// step with the stored CRDs, until `shutdown`.
    pub async fn keep_custom_resources(self, shutdown: CancellationToken) {
        loop {
            let from = self.store().revision();
            let opts = WatchOptions {
                resource_version: Some(from),
                ..Default::default()
            };
            let events = self
                .crd_resource()
                .and_then(|info| self.watch(&info, None, &opts));
            let Ok(mut events) = events else {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = self.clock().sleep(POLL) => continue,
                }
            };
            loop {
                let pending = self.sync_custom_resources().await.unwrap_or_else(|e| {
                    tracing::warn!("custom resource definitions: {e}");
                    true
                });
                let poll = async {
                    match pending {
                        true => self.clock().sleep(POLL).await,
                        false => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    () = poll => {}
                    event = events.recv() => match event {
                        None | Some(WatchEvent::Error(_)) => break,
                        Some(_) => while events.try_recv().is_ok() {},
                    },
                }
            }
        }
    }

    /// One pass over every CRD; `true` when work remains (a conflict, or a
    /// deleted CRD still waiting for its instances).
    pub async fn sync_custom_resources(&self) -> ApiResult<bool> {
        let mut crds = self.all_crds()?;
        let mut pending = false;
        // Every CRD's names and conditions are decided first and its rows
        // served, and only then is its status written: a client that sees
        // Established can use the resource at once (upstream's establishing
        // controller waits for the handler to serve it, too).
        let decided: Vec<Value> = (0..crds.len()).map(|i| self.decide_names(&crds, i)).collect();
        self.sync_rows(&decided);
        for (i, new) in decided.into_iter().enumerate() {
            match self.write_status(&crds[i], new).await {
                Ok(Some(updated)) => crds[i] = updated,
                Ok(None) => {}
                Err(e) if e.reason == Reason::Conflict || e.reason == Reason::NotFound => pending = true,
                Err(e) => return Err(e),
            }
        }
        for crd in &crds {
            if crd.pointer("/metadata/deletionTimestamp").is_some()
                && obj::finalizers(crd).iter().any(|f| f == CLEANUP_FINALIZER)
            {
                match self.finalize_crd(crd).await {
                    Ok(done) => pending |= !done,
                    Err(e) if e.reason == Reason::Conflict || e.reason == Reason::NotFound => pending = true,
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(pending)
    }

    /// The naming and establishing decisions for `crds[i]`: the CRD with
    /// the status they give it.
    fn decide_names(&self, crds: &[Value], i: usize) -> Value {
        let crd = &crds[i];
        let group = crd.pointer("/spec/group").and_then(Value::as_str).unwrap_or("");
        let mut taken = names::Taken::in_group(crds, group, obj::name(crd));
        for row in self
            .registry()
            .all()
            .iter()
            .filter(|r| r.custom.is_none() && r.group == group)
        {
            taken.add_builtin(&row.plural, &row.singular, &row.short_names, &row.kind);
        }
        let naming = names::calculate(crd, &taken);
        let now = self.now_rfc3339();
        let mut new = crd.clone();
        new["status"]["acceptedNames"] = naming.accepted;
        let (accepted, established) = match &naming.conflict {
            None => (
                condition("NamesAccepted", true, "NoConflicts", "no conflicts found", &now),
                condition(
                    "Established",
                    true,
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                    &now,
                ),
            ),
            Some((reason, message)) => (
                condition("NamesAccepted", false, reason, message, &now),
                condition(
                    "Established",
                    false,
                    "NotAccepted",
                    "not all names are accepted",
                    &now,
                ),
            ),
        };
        set_condition(&mut new, accepted);
        // Once established, a CRD stays established (upstream keeps the old condition).
        if !condition_true(crd, "Established") {
            set_condition(&mut new, established);
        }
        new
    }

    /// Writes `new` through `/status` when it differs from `old`.
    async fn write_status(&self, old: &Value, new: Value) -> ApiResult<Option<Value>> {
        if &new == old {
            return Ok(None);
        }
        let info = self.crd_resource()?;
        let opts = WriteOptions {
            field_manager: Some(FIELD_MANAGER.into()),
            ..Default::default()
        };
        let written = self
            .update(&info, None, obj::name(old), new, Some(Subresource::Status), &opts)
            .await?;
        Ok(Some(written.object))
    }

    /// Makes the registry's custom rows those of `crds`: new and changed
    /// rows inserted, rows of deleted CRDs and unserved versions removed.
    /// A built-in row is never replaced.
    fn sync_rows(&self, crds: &[Value]) {
        let terminating = crds
            .iter()
            .filter(|c| c.pointer("/metadata/deletionTimestamp").is_some())
            .map(|c| obj::name(c).to_string())
            .collect();
        self.set_terminating_crds(terminating);
        let registry = self.registry();
        let wanted = self.rows_of(crds);
        let key = |r: &ResourceInfo| (r.group.clone(), r.version.clone(), r.plural.clone());
        for row in &wanted {
            match registry.get(&row.group, &row.version, &row.plural) {
                Some(have) if have.custom.is_none() || *have == *row => {}
                _ => registry.insert(row.clone()),
            }
        }
        let keep: Vec<_> = wanted.iter().map(key).collect();
        for row in registry.all().iter().filter(|r| r.custom.is_some()) {
            if !keep.contains(&key(row)) {
                registry.remove(&row.group, &row.version, &row.plural);
            }
        }
    }

    /// The rows of `crds`, built again only for the CRDs that changed
    /// since the last pass.
    fn rows_of(&self, crds: &[Value]) -> Vec<ResourceInfo> {
        // A poisoned cache is still a valid cache (entries are replaced whole).
        let mut cache = self.inner.crd_rows.lock().unwrap_or_else(|p| p.into_inner());
        let mut fresh = RowCache::new();
        for crd in crds {
            // The rows follow the spec (the resourceVersion) and whether the
            // CRD is established, which a pass decides before writing it.
            let rv = obj::meta_str(crd, "resourceVersion").unwrap_or("");
            let (name, seen_as) = (
                obj::name(crd).to_string(),
                format!("{rv}/{}", condition_true(crd, "Established")),
            );
            let built = match cache.remove(&name) {
                Some((seen, rows)) if seen == seen_as && !rv.is_empty() => rows,
                _ => rows::rows(crd),
            };
            fresh.insert(name, (seen_as, built));
        }
        *cache = fresh;
        cache
            .values()
            .flat_map(|(_, rows)| rows.iter().cloned())
            .collect()
    }

    /// Upstream `crd_finalizer.go`: deletes the instances of a deleted CRD;
    /// once none is left, records it and removes the finalizer (which
    /// deletes the CRD). `true` when done.
    async fn finalize_crd(&self, crd: &Value) -> ApiResult<bool> {
        let now = self.now_rfc3339();
        let mut new = crd.clone();
        let row = rows::rows(crd).into_iter().next();
        let terminating = match &row {
            None => condition(
                "Terminating",
                false,
                "NeverEstablished",
                "resource was never established",
                &now,
            ),
            Some(row) => {
                let progress = condition(
                    "Terminating",
                    true,
                    "InstanceDeletionInProgress",
                    "CustomResource deletion is in progress",
                    &now,
                );
                set_condition(&mut new, progress);
                if let Some(written) = self.write_status(crd, new.clone()).await? {
                    new = written;
                }
                if self.delete_instances(row).await? > 0 {
                    return Ok(false);
                }
                condition(
                    "Terminating",
                    false,
                    "InstanceDeletionCompleted",
                    "removed all instances",
                    &now,
                )
            }
        };
        let old = new.clone();
        set_condition(&mut new, terminating);
        let finalizers: Vec<String> = obj::finalizers(&new)
            .into_iter()
            .filter(|f| f != CLEANUP_FINALIZER)
            .collect();
        obj::meta_mut(&mut new).insert("finalizers".into(), serde_json::json!(finalizers));
        self.write_status(&old, new).await?;
        Ok(true)
    }

    /// Deletes every instance of the resource not already being deleted;
    /// returns how many there were.
    async fn delete_instances(&self, info: &ResourceInfo) -> ApiResult<usize> {
        let items = self.list(info, None, &ListOptions::default())?.items;
        let opts = DeleteOptions {
            propagation: Some(Propagation::Background),
            ..Default::default()
        };
        for item in items
            .iter()
            .filter(|o| o.pointer("/metadata/deletionTimestamp").is_none())
        {
            let namespace = obj::meta_str(item, "namespace").filter(|_| info.namespaced);
            match self.delete(info, namespace, obj::name(item), &opts).await {
                Err(e) if e.reason != Reason::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(items.len())
    }
}
