//! Server-side apply and `metadata.managedFields` tracking on JSON values.
//!
//! Upstream: apimachinery `pkg/util/managedfields/internal/` (`fieldmanager.go`,
//! `structuredmerge.go`, `stripmeta.go`, `managedfieldsupdater.go`,
//! `buildmanagerinfo.go`, `capmanagers.go`, `skipnonapplied.go`,
//! `lastappliedmanager.go`, `lastappliedupdater.go`, `versioncheck.go`,
//! `conflict.go`) wrapped around structured-merge-diff `merge/update.go`
//! (`Updater.Apply`, `Updater.Update`, `prune`) and its `typed`/`fieldpath`
//! packages. The wrappers are reproduced as plain functions in the same order.
//!
//! Simplified:
//! * one API version per kind: no conversion between versions; entries of
//!   other versions are compared as if they were this version;
//! * no schema reconciliation of stored sets, no union handling;
//! * the "empty object" of a kind comes from a small table ([`kinds`]);
//! * reset fields come from a table of built-in strategies, keyed by the
//!   resolved `kinds::Kind` and the registry's status subresource flag;
//! * defaulting of the merged object is left to the caller;
//! * `track_update` never fails: like upstream's `UpdateNoErrors` it drops
//!   managedFields when the object cannot be walked.
//!
//! Submodules: [`fieldpath`] (paths, sets, FieldsV1), [`typed`] (schema-aware
//! walks), [`managers`] (entries), [`kinds`] (per-kind tables).

pub mod fieldpath;
pub mod kinds;
pub mod managers;
pub mod typed;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use super::meta::Schema;
use crate::kinds::{Kind, kind_of};
use crate::registry::{ResourceInfo, Subresource};
use fieldpath::{FieldSet, Path, PathElement, path_string};
use managers::{Entry, Managers, Operation, identifier};
use typed::Ty;

/// Annotation written by client-side `kubectl apply`.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Upstream's total annotation size limit (256 KiB).
const ANNOTATIONS_SIZE_LIMIT: usize = 256 * 1024;

/// Manager recorded for fields that existed before the first apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Parameters of one apply request.
#[derive(Clone, Copy, Debug)]
pub struct ApplyOptions<'a> {
    /// `?fieldManager=` (required for apply; the caller validates it).
    pub manager: &'a str,
    /// `?force=true`.
    pub force: bool,
    /// The endpoint's resource (its `apiVersion`, kind and subresources).
    pub resource: &'a ResourceInfo,
    /// `Some("status")` etc. for a subresource endpoint.
    pub subresource: Option<&'a str>,
    /// Now, RFC 3339, from the injected clock.
    pub time: &'a str,
}

/// Why an apply was refused.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// 409 Conflict; render with [`conflict_message`] and [`Conflict::message`].
    #[error("{}", conflict_message(.0))]
    Conflicts(Vec<Conflict>),
    /// 400 BadRequest (wrong apiVersion/kind, managedFields in the body).
    #[error("{0}")]
    BadRequest(String),
    /// The body or live object does not fit the schema (duplicate or missing
    /// list keys, undecodable managedFields). Upstream answers 500.
    #[error("{0}")]
    Invalid(String),
}

/// One conflicting field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// Its apiVersion when it is an Update manager (printed as `using ...`).
    pub api_version: Option<String>,
    /// Its subresource, if any.
    pub subresource: Option<String>,
    /// The path, e.g. `.spec.replicas`.
    pub field: String,
}

impl Conflict {
    /// The cause message: `conflict with "kube-controller-manager" using apps/v1`.
    pub fn message(&self) -> String {
        format!("conflict with {}", self.print_manager())
    }

    fn print_manager(&self) -> String {
        let mut out = json!(self.manager).to_string();
        if let Some(sub) = &self.subresource {
            out = format!("{out} with subresource {}", json!(sub));
        }
        if let Some(v) = &self.api_version {
            out = format!("{out} using {v}");
        }
        out
    }

    fn manager_id(&self) -> String {
        match &self.api_version {
            Some(v) => identifier(&self.manager, Operation::Update, v, self.subresource.as_deref()),
            None => identifier(&self.manager, Operation::Apply, "", self.subresource.as_deref()),
        }
    }
}

/// The Status message of a conflict error, exactly as upstream words it.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            c.print_manager(),
            c.field
        );
    }
    let mut ids: Vec<(String, &Conflict)> = conflicts.iter().map(|c| (c.manager_id(), c)).collect();
    ids.sort_by(|a, b| a.0.cmp(&b.0));
    ids.dedup_by(|a, b| a.0 == b.0);
    let mut lines = Vec::new();
    for (id, first) in ids {
        lines.push(format!("conflicts with {}:", first.print_manager()));
        for c in conflicts.iter().filter(|c| c.manager_id() == id) {
            lines.push(format!("- {}", c.field));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Conflicts with their paths, before they are rendered.
type RawConflicts = Vec<(Conflict, Path)>;

/// Failure inside the apply core.
enum CoreError {
    Conflicts(RawConflicts),
    Invalid(String),
}

impl From<CoreError> for ApplyError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::Conflicts(c) => ApplyError::Conflicts(c.into_iter().map(|(c, _)| c).collect()),
            CoreError::Invalid(msg) => ApplyError::Invalid(msg),
        }
    }
}

/// Everything that is fixed for one request.
struct Ctx<'a> {
    ty: Ty,
    reset_paths: Vec<Vec<&'static str>>,
    reset: FieldSet,
    empty: Value,
    api_version: String,
    kind: &'a str,
    subresource: Option<&'a str>,
    time: &'a str,
}

impl<'a> Ctx<'a> {
    fn new(
        schema: Option<&Schema>,
        resource: &'a ResourceInfo,
        subresource: Option<&'a str>,
        time: &'a str,
    ) -> Ctx<'a> {
        let kind: Kind = kind_of(resource);
        let reset_paths = kinds::reset_paths(kind, resource.has(Subresource::Status), subresource);
        Ctx {
            ty: Ty(schema.cloned()),
            reset: kinds::reset_set(&reset_paths),
            reset_paths,
            empty: kinds::empty_object(kind),
            api_version: resource.api_version(),
            kind: &resource.kind,
            subresource,
            time,
        }
    }
}

/// Applies `config` (the request body) to `live` (`None`: create-on-apply)
/// and returns the new object including `metadata.managedFields`.
///
/// The result is the merged object before defaulting and validation; reset
/// fields (e.g. `status` on the main resource) keep their live value.
pub fn apply(
    schema: Option<&Schema>,
    live: Option<&Value>,
    config: &Value,
    opts: &ApplyOptions,
) -> Result<Value, ApplyError> {
    let ctx = Ctx::new(schema, opts.resource, opts.subresource, opts.time);
    check_config(config, &ctx)?;
    let mut live_obj = live.cloned().unwrap_or_else(|| ctx.empty.clone());
    let mut managed = managers::decode(&live_obj)
        .map_err(|e| ApplyError::Invalid(format!("failed to decode managed fields: {e}")))?;
    remove_managed_fields(&mut live_obj);
    if managed.is_empty() {
        update_core(&ctx, &ctx.empty, &live_obj, &mut managed, BEFORE_FIRST_APPLY)
            .map_err(|e| ApplyError::Invalid(format!("failed to create manager for existing fields: {e}")))?;
    }
    let (mut obj, managed) = match apply_core(&ctx, &live_obj, config, managed.clone(), opts, opts.force) {
        Err(CoreError::Conflicts(conflicts)) if opts.manager == "kubectl" => {
            forgive(&ctx, &live_obj, config, managed, opts, conflicts)?
        }
        other => other?,
    };
    if opts.manager == "kubectl" && has_last_applied(&obj) {
        set_last_applied(&mut obj, config);
    }
    typed::strip_nulls(&mut obj);
    managers::store(&mut obj, &managed);
    Ok(obj)
}

/// Records an Update (POST, PUT, non-apply PATCH) by `manager` in
/// `new.metadata.managedFields`: the fields it changed become its own and
/// are taken from every other manager (B6). `old` is `None` on create.
///
/// `new` must be the final object (after defaulting and the strategy). A
/// client-supplied `managedFields` in `new` replaces the stored entries
/// unless it is empty or undecodable (`[]` or `[{}]` resets tracking); on a
/// subresource it is ignored.
pub fn track_update(
    schema: Option<&Schema>,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    resource: &ResourceInfo,
    subresource: Option<&str>,
    time: &str,
) {
    let ctx = Ctx::new(schema, resource, subresource, time);
    let mut managed = live_or_new_managers(old, new, subresource.is_some());
    remove_managed_fields(new);
    let mut old_obj = old.cloned().unwrap_or_else(|| ctx.empty.clone());
    remove_managed_fields(&mut old_obj);
    if managed.is_empty() && old.is_some() {
        return;
    }
    if update_core(&ctx, &old_obj, new, &mut managed, manager).is_ok() {
        managers::store(new, &managed);
    }
}

fn check_config(config: &Value, ctx: &Ctx) -> Result<(), ApplyError> {
    let text = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if !config.is_object() || api_version != ctx.api_version || kind != ctx.kind {
        return Err(ApplyError::BadRequest(format!(
            "invalid object type: {}",
            gvk_string(api_version, kind)
        )));
    }
    if config
        .pointer("/metadata/managedFields")
        .is_some_and(|v| !v.is_null())
    {
        return Err(ApplyError::BadRequest(
            "metadata.managedFields must be nil".into(),
        ));
    }
    Ok(())
}

/// Go's `GroupVersionKind.String()`: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`.
fn gvk_string(api_version: &str, kind: &str) -> String {
    match api_version.rsplit_once('/') {
        Some(_) => format!("{api_version}, Kind={kind}"),
        None => format!("/{api_version}, Kind={kind}"),
    }
}

fn remove_managed_fields(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
}

/// upstream `decodeLiveOrNew`: the request's entries win unless ignored,
/// empty or undecodable; `[]` and `[{}]` reset tracking.
fn live_or_new_managers(old: Option<&Value>, new: &Value, ignore_request: bool) -> Managers {
    let from_live = || old.and_then(|o| managers::decode(o).ok()).unwrap_or_default();
    if ignore_request {
        return from_live();
    }
    match new.pointer("/metadata/managedFields") {
        Some(Value::Array(items)) if items.is_empty() => return Managers::new(),
        Some(Value::Array(items)) if items.len() == 1 && items[0] == json!({}) => {
            return Managers::new();
        }
        _ => {}
    }
    match managers::decode(new) {
        Ok(m) if !m.is_empty() => m,
        _ => from_live(),
    }
}

/// Paths never tracked (upstream `stripmeta.go`).
fn strip_set() -> FieldSet {
    let mut set = FieldSet::new();
    for top in ["apiVersion", "kind", "metadata"] {
        set.insert(&[PathElement::Field(top.into())]);
    }
    let meta = [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ];
    for field in meta {
        set.insert(&[
            PathElement::Field("metadata".into()),
            PathElement::Field(field.into()),
        ]);
    }
    set
}

/// The Update pipeline for one manager: compare, take changed fields from
/// everyone, record them for `manager` with a new time, cap the entries.
fn update_core(
    ctx: &Ctx,
    old: &Value,
    new: &Value,
    managed: &mut Managers,
    manager: &str,
) -> Result<(), String> {
    let cmp = take_changes(ctx, old, new, managed, None, true).map_err(|e| match e {
        CoreError::Invalid(msg) => msg,
        CoreError::Conflicts(_) => "unexpected conflicts".into(),
    })?;
    let current = cmp.modified.union(&cmp.added).difference(&strip_set());
    if !current.is_empty() {
        let id = identifier(manager, Operation::Update, &ctx.api_version, ctx.subresource);
        let previous = managed.remove(&id).map(|e| e.set).unwrap_or_default();
        managed.insert(
            id,
            Entry {
                manager: manager.to_string(),
                operation: Operation::Update,
                api_version: ctx.api_version.to_string(),
                subresource: ctx.subresource.map(str::to_string),
                time: Some(ctx.time.to_string()),
                set: current.union(&previous),
            },
        );
    }
    managers::cap_updates(managed);
    Ok(())
}

/// smd `Updater.update`: compares old and new (minus reset fields); every
/// manager except `skip` conflicts on the fields it owns that changed, and
/// loses removed fields. Without `force` conflicts abort.
fn take_changes(
    ctx: &Ctx,
    old: &Value,
    new: &Value,
    managed: &mut Managers,
    skip: Option<&str>,
    force: bool,
) -> Result<typed::Comparison, CoreError> {
    let mut cmp = typed::compare(&ctx.ty, old, new).map_err(CoreError::Invalid)?;
    cmp.exclude(&ctx.reset);
    let changed = cmp.modified.union(&cmp.added);
    let mut conflicts: Vec<(String, FieldSet)> = Vec::new();
    for (id, entry) in managed.iter() {
        if Some(id.as_str()) == skip {
            continue;
        }
        let hit = entry.set.intersection(&changed);
        if !hit.is_empty() {
            conflicts.push((id.clone(), hit));
        }
    }
    if !force && !conflicts.is_empty() {
        return Err(CoreError::Conflicts(render_conflicts(managed, &conflicts)));
    }
    for (id, entry) in managed.iter_mut() {
        if Some(id.as_str()) == skip {
            continue;
        }
        if let Some((_, hit)) = conflicts.iter().find(|(c, _)| c == id) {
            entry.set = entry.set.difference(hit);
        }
        entry.set = entry.set.difference(&cmp.removed);
    }
    managed.retain(|_, e| !e.set.is_empty());
    Ok(cmp)
}

fn render_conflicts(managed: &Managers, conflicts: &[(String, FieldSet)]) -> RawConflicts {
    let mut out = Vec::new();
    for (id, set) in conflicts {
        let entry = &managed[id];
        for path in set.paths() {
            let conflict = Conflict {
                manager: entry.manager.clone(),
                api_version: (entry.operation == Operation::Update).then(|| entry.api_version.clone()),
                subresource: entry.subresource.clone(),
                field: path_string(&path),
            };
            out.push((conflict, path));
        }
    }
    out
}

/// The Apply pipeline for one manager (smd `Updater.Apply` plus the strip,
/// time and cap wrappers). Returns the new object and entries.
fn apply_core(
    ctx: &Ctx,
    live: &Value,
    config: &Value,
    mut managed: Managers,
    opts: &ApplyOptions,
    force: bool,
) -> Result<(Value, Managers), CoreError> {
    let invalid = |e: String| {
        let text = |p: &str| config.pointer(p).and_then(Value::as_str).unwrap_or("");
        let (ns, name) = (text("/metadata/namespace"), text("/metadata/name"));
        CoreError::Invalid(format!(
            "failed to create typed patch object ({ns}/{name}; {}): {e}",
            gvk_string(&ctx.api_version, ctx.kind)
        ))
    };
    let config_set = typed::to_field_set(&ctx.ty, config, false).map_err(invalid)?;
    let merged = typed::merge(&ctx.ty, Some(live), Some(config))
        .map_err(|e| CoreError::Invalid(format!("failed to merge config: {e}")))?
        .unwrap_or_else(|| json!({}));
    let id = identifier(opts.manager, Operation::Apply, "", opts.subresource);
    let previous = managed.remove(&id);
    let last = previous.as_ref().map(|e| e.set.clone()).unwrap_or_default();
    managed.insert(
        id.clone(),
        Entry {
            manager: opts.manager.to_string(),
            operation: Operation::Apply,
            api_version: ctx.api_version.clone(),
            subresource: opts.subresource.map(str::to_string),
            time: previous.and_then(|e| e.time),
            set: config_set.recursive_difference(&ctx.reset),
        },
    );
    let mut new_obj = prune(&ctx.ty, merged, &managed, &last).map_err(CoreError::Invalid)?;
    kinds::restore_reset(&mut new_obj, live, &ctx.reset_paths);
    take_changes(ctx, live, &new_obj, &mut managed, Some(&id), force)?;
    if let Some(entry) = managed.get_mut(&id) {
        entry.set = entry.set.difference(&strip_set());
    }
    managed.retain(|_, e| !e.set.is_empty());
    let changed = new_obj != *live;
    if changed && let Some(entry) = managed.get_mut(&id) {
        entry.time = Some(ctx.time.to_string());
    }
    managers::cap_updates(&mut managed);
    Ok((if changed { new_obj } else { live.clone() }, managed))
}

/// Removes what the applier owned last time and nobody owns now (smd
/// `prune`, `addBackOwnedItems`, `addBackDanglingItems`).
fn prune(ty: &Ty, merged: Value, managed: &Managers, last: &FieldSet) -> Result<Value, String> {
    if last.is_empty() {
        return Ok(merged);
    }
    let named = |s: &FieldSet| typed::ensure_named_fields_are_members(ty, s);
    let set_of = |v: &Value| typed::to_field_set(ty, v, true).map(|s| named(&s));
    let remove = |s: &FieldSet| typed::remove_items(ty, &merged, s).unwrap_or_else(|| json!({}));
    let last = named(last);
    let pruned = remove(&last);
    let owned = managed.values().fold(FieldSet::new(), |acc, e| acc.union(&e.set));
    let merged_set = set_of(&merged)?;
    let keep = set_of(&pruned)?.union(&named(&owned));
    let pruned = remove(&merged_set.difference(&keep));
    let pruned_set = set_of(&pruned)?;
    Ok(remove(&merged_set.difference(&pruned_set).intersection(&last)))
}

/// For manager `kubectl`: conflicts on fields whose live value still equals
/// the last-applied annotation are forgiven (forced); others are reported.
fn forgive(
    ctx: &Ctx,
    live: &Value,
    config: &Value,
    managed: Managers,
    opts: &ApplyOptions,
    conflicts: RawConflicts,
) -> Result<(Value, Managers), ApplyError> {
    let Some(allowed) = allowed_from_last_applied(ctx, live) else {
        return Err(CoreError::Conflicts(conflicts).into());
    };
    if conflicts.iter().all(|(_, p)| allowed.has(p)) {
        return Ok(apply_core(ctx, live, config, managed, opts, true)?);
    }
    let rest = conflicts.into_iter().filter(|(_, p)| !allowed.has(p)).collect();
    Err(CoreError::Conflicts(rest).into())
}

/// Fields of the last-applied annotation whose value live still has.
fn allowed_from_last_applied(ctx: &Ctx, live: &Value) -> Option<FieldSet> {
    let text = live
        .pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()?;
    let last: Value = serde_json::from_str(text).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(ctx.api_version.as_str()) {
        return None;
    }
    let set = typed::to_field_set(&ctx.ty, &last, false).ok()?;
    let cmp = typed::compare(&ctx.ty, &last, live).ok()?;
    Some(
        set.difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

fn has_last_applied(obj: &Value) -> bool {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// Rewrites the annotation to the applied configuration (without the
/// annotation itself); drops it if the annotations grow past the limit.
fn set_last_applied(obj: &mut Value, config: &Value) {
    let mut applied = config.clone();
    if let Some(ann) = applied
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        ann.remove(LAST_APPLIED);
    }
    let text = managers::go_json(&applied);
    let Some(ann) = obj
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    ann.insert(LAST_APPLIED.into(), Value::String(text));
    if annotations_size(ann) > ANNOTATIONS_SIZE_LIMIT {
        ann.remove(LAST_APPLIED);
    }
}

fn annotations_size(ann: &Map<String, Value>) -> usize {
    ann.iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum()
}
