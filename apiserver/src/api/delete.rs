//! Deletes: graceful deletion, finalizers, preconditions and the
//! propagation policy.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`
//! (`Delete`, `updateForGracefulDeletionAndFinalizers`) and
//! `staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go`
//! (`BeforeDelete`). An object is removed from the store only when its
//! grace period is zero and no finalizer remains; otherwise the delete is an
//! update that sets `deletionTimestamp`.
//!
//! The propagation policy only decides which finalizer the owner gets
//! (`orphan` for Orphan, `foregroundDeletion` for Foreground, none for
//! Background): what happens to the dependents is the garbage collector's
//! work (`controllers/src/garbagecollector`), as upstream. An API server
//! running without the controllers cascades nothing. Namespaces are emptied
//! by [`super::namespace_finalizer`].

use serde_json::{Value, json};

use super::journal::{Change, JournalWrite};
use super::{Api, decode_record, obj, store_error};
use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceInfo;

/// What happens to an owner's dependents (`propagationPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Leave them, removing the ownerReference (finalizer `orphan`).
    Orphan,
    /// Delete the owner now, its dependents afterwards.
    Background,
    /// Delete the dependents first (finalizer `foregroundDeletion`).
    Foreground,
}

impl Propagation {
    /// Parses `Orphan` / `Background` / `Foreground`.
    pub fn parse(s: &str) -> ApiResult<Self> {
        match s {
            "Orphan" => Ok(Self::Orphan),
            "Background" => Ok(Self::Background),
            "Foreground" => Ok(Self::Foreground),
            other => Err(ApiError::invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                &[crate::error::FieldError::not_supported(
                    "propagationPolicy",
                    json!(other),
                    &["Foreground", "Background", "Orphan"],
                )],
            )),
        }
    }
}

/// A DeleteOptions body plus query parameters.
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds`.
    pub grace_period: Option<i64>,
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
    /// `propagationPolicy` (or the deprecated `orphanDependents`).
    pub propagation: Option<Propagation>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Who asks: the client's name (the in-process client's field manager,
    /// the User-Agent's program over HTTP), for the journal only; upstream's
    /// DeleteOptions has no such field.
    pub actor: Option<String>,
}

impl DeleteOptions {
    /// Reads a DeleteOptions JSON body (kind/apiVersion optional).
    pub fn from_json(v: &Value) -> ApiResult<Self> {
        let mut o = DeleteOptions {
            grace_period: v.get("gracePeriodSeconds").and_then(Value::as_i64),
            uid: v
                .pointer("/preconditions/uid")
                .and_then(Value::as_str)
                .map(str::to_string),
            resource_version: v
                .pointer("/preconditions/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string),
            propagation: None,
            actor: None,
            dry_run: v
                .get("dryRun")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty()),
        };
        if let Some(p) = v.get("propagationPolicy").and_then(Value::as_str) {
            o.propagation = Some(Propagation::parse(p)?);
        } else if let Some(orphan) = v.get("orphanDependents").and_then(Value::as_bool) {
            o.propagation = Some(if orphan {
                Propagation::Orphan
            } else {
                Propagation::Background
            });
        }
        Ok(o)
    }
}

/// The result of a delete.
#[derive(Clone, Debug)]
pub enum DeleteOutcome {
    /// Removed from the store; the last state.
    Deleted(Value),
    /// Still there, with `deletionTimestamp` set (grace period or finalizers).
    Pending(Value),
}

impl Api {
    /// Deletes one object.
    pub async fn delete(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        let key = self.key(info, namespace, name)?;
        crate::admission::admit(
            self,
            &crate::admission::Attributes {
                operation: crate::admission::Operation::Delete,
                info,
                namespace,
                name,
                object: None,
            },
        )?;
        loop {
            let record = self
                .inner
                .store
                .get(&key)
                .map_err(|e| store_error(info, name, e))?
                .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
            let live = decode_record(&record)?;
            check_preconditions(info, name, &live, opts)?;
            let outcome = match self.plan_delete(info, &live, opts) {
                Plan::Remove => {
                    self.remove(info, &key, name, live, record.mod_revision, opts)
                        .await
                }
                Plan::Update(new) => {
                    self.mark_deleting(info, &key, name, new, record.mod_revision, opts)
                        .await
                }
                Plan::Nothing => Ok(DeleteOutcome::Pending(live)),
            };
            match outcome {
                Err(e) if e.reason == crate::error::Reason::Conflict => continue,
                other => return other.and_then(|o| o.viewed_as(info)),
            }
        }
    }

    /// Decides between removing the object and marking it as deleting.
    fn plan_delete(&self, info: &ResourceInfo, live: &Value, opts: &DeleteOptions) -> Plan {
        let mut new = live.clone();
        let already = live.pointer("/metadata/deletionTimestamp").is_some();
        if is_namespace(info) {
            return namespace_plan(new, already, self.now_rfc3339());
        }
        let grace = grace_period(info, live, opts);
        let mut finalizers = obj::finalizers(live);
        if !already {
            match opts.propagation {
                Some(Propagation::Orphan) => add_finalizer(&mut finalizers, "orphan"),
                Some(Propagation::Foreground) => add_finalizer(&mut finalizers, "foregroundDeletion"),
                _ => {}
            }
            if info.group == "apiextensions.k8s.io" && info.kind == "CustomResourceDefinition" {
                let now = self.now_rfc3339();
                crate::kinds::apiextensions::mark_terminating(&mut new, &mut finalizers, &now);
            }
        }
        if grace == 0 && finalizers.is_empty() {
            return Plan::Remove;
        }
        if already && !shortens(live, grace) {
            return Plan::Nothing;
        }
        let now = self.inner.clock.now();
        // The period is kept as asked; the deletion time saturates far in
        // the future rather than overflow (i64::MAX seconds is beyond any
        // date RFC 3339 can write).
        let in_range = (grace.max(0) as u64).min(MAX_DELETION_DELAY_SECS);
        let at = now + std::time::Duration::from_secs(in_range);
        let meta = obj::meta_mut(&mut new);
        meta.insert("deletionTimestamp".into(), json!(super::format_time(at)));
        meta.insert("deletionGracePeriodSeconds".into(), json!(grace));
        if !finalizers.is_empty() {
            meta.insert("finalizers".into(), json!(finalizers));
        }
        if let Some(g) = meta.get("generation").and_then(Value::as_i64)
            && !already
        {
            meta.insert("generation".into(), json!(g + 1));
        }
        Plan::Update(new)
    }

    async fn remove(
        &self,
        info: &ResourceInfo,
        key: &str,
        name: &str,
        live: Value,
        rev: u64,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        if opts.dry_run {
            return Ok(DeleteOutcome::Deleted(live));
        }
        let (_, deleted_at) = self
            .inner
            .store
            .delete(key, Some(rev))
            .await
            .map_err(|e| store_error(info, name, e))?;
        let mut last = live;
        super::set_resource_version(&mut last, deleted_at);
        self.journal_delete(info, opts, &last, deleted_at, Change::Removed);
        Ok(DeleteOutcome::Deleted(last))
    }

    async fn mark_deleting(
        &self,
        info: &ResourceInfo,
        key: &str,
        name: &str,
        mut new: Value,
        rev: u64,
        opts: &DeleteOptions,
    ) -> ApiResult<DeleteOutcome> {
        if opts.dry_run {
            return Ok(DeleteOutcome::Pending(new));
        }
        let rv = self.store_put(info, key, name, &new, rev).await?;
        super::set_resource_version(&mut new, rv);
        self.journal_delete(info, opts, &new, rv, Change::MarkedDeleting);
        if is_namespace(info) {
            self.start_namespace_finalizer(&new);
        }
        Ok(DeleteOutcome::Pending(new))
    }

    /// Deletes every object of a collection that matches the selectors. As
    /// upstream, one refused deletion does not stop the others; the first
    /// error is the answer.
    pub async fn delete_collection(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        list: &super::ListOptions,
        opts: &DeleteOptions,
    ) -> ApiResult<Vec<Value>> {
        let items = self.list(info, namespace, list)?.items;
        let mut deleted = Vec::new();
        let mut first_error = None;
        for item in items {
            let ns = obj::meta_str(&item, "namespace").map(str::to_string);
            match self.delete(info, ns.as_deref(), obj::name(&item), opts).await {
                Ok(DeleteOutcome::Deleted(o) | DeleteOutcome::Pending(o)) => deleted.push(o),
                Err(e) if e.reason == crate::error::Reason::NotFound => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(deleted),
        }
    }
}

impl Api {
    /// Records a delete in the journal ([`super::journal`]).
    fn journal_delete(
        &self,
        info: &ResourceInfo,
        opts: &DeleteOptions,
        object: &Value,
        resource_version: u64,
        change: Change<'_>,
    ) {
        self.journal_write(&JournalWrite {
            info,
            verb: "delete",
            sub: None,
            actor: opts.actor.as_deref().unwrap_or("unknown"),
            object,
            resource_version,
            change,
        });
    }
}

enum Plan {
    /// Delete from the store now.
    Remove,
    /// Write this object (deletionTimestamp, finalizers) instead.
    Update(Value),
    /// Already deleting, and this request changes nothing.
    Nothing,
}

/// The furthest a deletionTimestamp is set in the future: about 1,000 years.
const MAX_DELETION_DELAY_SECS: u64 = 1000 * 365 * 24 * 3600;

fn is_namespace(info: &ResourceInfo) -> bool {
    info.kind == "Namespace" && info.group.is_empty()
}

/// A namespace is first marked Terminating; the namespace finalizer in
/// [`super::namespace_finalizer`] then empties and removes it.
fn namespace_plan(mut ns: Value, already: bool, now: String) -> Plan {
    if already {
        return Plan::Nothing;
    }
    let meta = obj::meta_mut(&mut ns);
    meta.insert("deletionTimestamp".into(), json!(now));
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
    ns["status"] = json!({"phase": "Terminating"});
    Plan::Update(ns)
}

/// The grace period of this delete, as upstream's pod strategy decides it.
/// Kinds without graceful deletion always use 0.
fn grace_period(info: &ResourceInfo, live: &Value, opts: &DeleteOptions) -> i64 {
    let is_pod = info.kind == "Pod" && info.group.is_empty();
    if !is_pod {
        return 0;
    }
    let unscheduled = live
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty();
    let phase = live
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    if unscheduled || phase == "Succeeded" || phase == "Failed" {
        return 0;
    }
    let period = opts.grace_period.unwrap_or_else(|| {
        live.pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(30)
    });
    if period < 0 { 1 } else { period }
}

/// A second delete may only bring the deletion time forward.
fn shortens(live: &Value, grace: i64) -> bool {
    let current = live
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    matches!(current, Some(c) if grace < c)
}

fn add_finalizer(list: &mut Vec<String>, f: &str) {
    if !list.iter().any(|x| x == f) {
        list.push(f.to_string());
    }
}

fn check_preconditions(info: &ResourceInfo, name: &str, live: &Value, opts: &DeleteOptions) -> ApiResult<()> {
    if let Some(uid) = &opts.uid {
        let actual = obj::meta_str(live, "uid").unwrap_or("");
        if uid != actual {
            return Err(ApiError::conflict(
                &info.group,
                &info.plural,
                name,
                &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"),
            ));
        }
    }
    if let Some(rv) = &opts.resource_version {
        let actual = obj::meta_str(live, "resourceVersion").unwrap_or("");
        if rv != actual {
            return Err(ApiError::conflict(
                &info.group,
                &info.plural,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                ),
            ));
        }
    }
    Ok(())
}
