//! Writes: create (POST), update (PUT) and patch (PATCH), for a resource or
//! its `status` / `scale` subresource.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/{create,update,patch}.go`
//! and `pkg/registry/generic/registry/store.go` (`Create`, `Update`,
//! `GuaranteedUpdate`). A patch is read–modify–write: read the live object,
//! apply the patch, write it back with the read revision as precondition,
//! and on a conflict nobody asked for, try again.

use serde_json::{Value, json};

use super::journal::{Change, JournalWrite};
use super::{Api, convert, decode_record, encode_for_store, obj, store_error};
use crate::admission;
use crate::error::{ApiError, ApiResult, Reason};
use crate::kinds;
use crate::managed;
use crate::patch::meta::Schema;
use crate::registry::{ResourceInfo, Subresource};
use crate::typed::{self, Origin};

/// Names tried for one create with generateName (upstream
/// `maxNameGenerationCreateAttempts`).
const MAX_NAME_GENERATION_ATTEMPTS: u32 = 8;

/// How unknown fields in a request body are treated (`?fieldValidation=`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Reject with 400 BadRequest `strict decoding error: unknown field "x"`.
    Strict,
    /// Accept, drop them, and answer with a `Warning` header per field.
    #[default]
    Warn,
    /// Drop them silently.
    Ignore,
}

impl FieldValidation {
    /// Parses the query parameter (case-sensitive, as upstream).
    pub fn parse(s: &str) -> ApiResult<Self> {
        match s {
            "Strict" => Ok(Self::Strict),
            "Warn" | "" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn, or Strict, got {other:?}"
            ))),
        }
    }
}

/// Options common to every write.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// `?dryRun=All`: run every step but the store write.
    pub dry_run: bool,
    /// `?fieldManager=`, or derived from the User-Agent; required for apply.
    pub field_manager: Option<String>,
    /// `?fieldValidation=`.
    pub field_validation: FieldValidation,
    /// `?force=true` (apply only).
    pub force: bool,
}

impl WriteOptions {
    fn manager(&self) -> &str {
        self.field_manager.as_deref().unwrap_or("unknown")
    }
}

/// The four patch media types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902)
    Json,
    /// `application/merge-patch+json` (RFC 7386)
    Merge,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply)
    Apply,
}

impl PatchType {
    /// From a Content-Type (parameters ignored), or 415.
    pub fn from_content_type(ct: &str) -> ApiResult<Self> {
        let base = ct.split(';').next().unwrap_or("").trim();
        match base {
            "application/json-patch+json" => Ok(Self::Json),
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(Self::Apply),
            other => Err(ApiError::new(
                Reason::UnsupportedMediaType,
                format!(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {other:?})"
                ),
            )),
        }
    }
}

/// The result of a write.
#[derive(Clone, Debug)]
pub struct Written {
    /// The object as stored (or as it would be, under dry run).
    pub object: Value,
    /// Texts for `Warning: 299 - "..."` headers.
    pub warnings: Vec<String>,
    /// Whether the write created the object (201 rather than 200).
    pub created: bool,
}

impl Api {
    /// Creates an object (POST).
    pub async fn create(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        body: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let (view, stored) = (info, self.storage_of(info));
        let info = stored.as_deref().unwrap_or(view);
        self.check_not_terminating(view)?;
        let (mut new, warnings) = self.admit_body(view, namespace, None, body, opts, Origin::Body)?;
        admit_create(self, info, namespace, "", &new)?;
        admission::mutate(self, admission::Operation::Create, info, &mut new)?;
        let generated = self.prepare_new_object(info, &mut new)?;
        kinds::prepare_for_create(info, &mut new);
        self.validate(info, &new, None)?;
        admit_validating(self, info, namespace, &new, opts).await?;
        managed::track_update(info, None, &mut new, opts.manager(), None, &self.now_rfc3339());
        // A generated name that is taken is generated again (upstream
        // `RetryGenerateName`, on by default since 1.31), a few times.
        let mut attempts = 1;
        loop {
            let result = self
                .store_create(info, namespace, new.clone(), opts, warnings.clone(), "create")
                .await;
            match (result, &generated) {
                (Err(e), Some(prefix))
                    if e.reason == Reason::AlreadyExists && attempts < MAX_NAME_GENERATION_ATTEMPTS =>
                {
                    attempts += 1;
                    let name = self.inner.ids.generate_name(prefix);
                    obj::meta_mut(&mut new).insert("name".into(), Value::String(name));
                }
                (result, _) => return result.and_then(|w| convert::written_view(view, w)),
            }
        }
    }

    /// Replaces an object (PUT), or its status with `sub = Some(Status)`.
    pub async fn update(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        sub: Option<Subresource>,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let (view, stored) = (info, self.storage_of(info));
        let info = stored.as_deref().unwrap_or(view);
        let (body, warnings) = self.admit_body(view, namespace, Some(name), body, opts, Origin::Body)?;
        let precondition = obj::meta_str(&body, "resourceVersion")
            .map(parse_rv)
            .transpose()?;
        let key = self.key(info, namespace, name)?;
        // A binding is a create upstream (`POST pods/NAME/binding`).
        let verb = if sub == Some(Subresource::Binding) {
            "create"
        } else {
            "update"
        };
        let op = Op { verb, sub };
        loop {
            let (old, rev) = self.read_for_write(info, &key, name)?;
            if precondition.is_some_and(|p| p != rev) {
                return Err(ApiError::modified(&info.group, &info.plural, name));
            }
            let new = self.updated(info, &old, body.clone(), sub, Some(opts.manager()))?;
            match self
                .store_update(info, &key, name, &old, new, rev, opts, &warnings, op)
                .await
            {
                Err(e) if e.reason == Reason::Conflict && precondition.is_none() => continue,
                other => return other.and_then(|w| convert::written_view(view, w)),
            }
        }
    }

    /// Patches an object (PATCH). For `PatchType::Apply`, creates it when missing.
    #[allow(clippy::too_many_arguments)] // mirrors the HTTP request's parts
    pub async fn patch(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch: &Value,
        sub: Option<Subresource>,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        if patch_type == PatchType::Apply && opts.field_manager.is_none() {
            return Err(ApiError::bad_request(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            ));
        }
        if patch_type == PatchType::Strategic && info.custom.is_some() {
            return Err(super::custom_writes::strategic_merge_unsupported());
        }
        let (view, stored) = (info, self.storage_of(info));
        let info = stored.as_deref().unwrap_or(view);
        let key = self.key(info, namespace, name)?;
        loop {
            let (old, rev) = match self.read_for_write(info, &key, name) {
                Err(e) if e.reason == Reason::NotFound && patch_type == PatchType::Apply && sub.is_none() => {
                    self.check_not_terminating(view)?;
                    let written = self.apply_create(view, info, namespace, name, patch, opts).await;
                    return written.and_then(|w| convert::written_view(view, w));
                }
                other => other?,
            };
            let old_view = convert::viewed(view, &old)?;
            let patched = self.patched(view, &old_view, patch_type, patch, sub, opts)?;
            let (patched, warnings) =
                self.admit_body(view, namespace, Some(name), patched, opts, Origin::Patch)?;
            if let Some(rv) = obj::meta_str(&patched, "resourceVersion")
                && parse_rv(rv)? != rev
            {
                return Err(ApiError::modified(&info.group, &info.plural, name));
            }
            // Server-side apply has recorded its Apply entry already;
            // recording the same write once more as an Update would hand
            // the applied fields to an Update entry of the same manager.
            let track = (patch_type != PatchType::Apply).then(|| opts.manager());
            let new = self.updated(info, &old, patched, sub, track)?;
            let op = Op { verb: "patch", sub };
            match self
                .store_update(info, &key, name, &old, new, rev, opts, &warnings, op)
                .await
            {
                Err(e) if e.reason == Reason::Conflict => continue,
                other => return other.and_then(|w| convert::written_view(view, w)),
            }
        }
    }

    /// Server-side apply of an object that does not exist yet.
    async fn apply_create(
        &self,
        view: &ResourceInfo,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        config: &Value,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let applied = managed::apply(
            view,
            None,
            config,
            None,
            opts.manager(),
            opts.force,
            &self.now_rfc3339(),
        )?;
        let (mut new, warnings) =
            self.admit_body(view, namespace, Some(name), applied, opts, Origin::Patch)?;
        admit_create(self, info, namespace, name, &new)?;
        admission::mutate(self, admission::Operation::Create, info, &mut new)?;
        self.prepare_new_object(info, &mut new)?;
        kinds::prepare_for_create(info, &mut new);
        self.validate(info, &new, None)?;
        admit_validating(self, info, namespace, &new, opts).await?;
        self.store_create(info, namespace, new, opts, warnings, "patch")
            .await
    }

    /// The live object and its revision, for a read–modify–write.
    fn read_for_write(&self, info: &ResourceInfo, key: &str, name: &str) -> ApiResult<(Value, u64)> {
        let record = self
            .inner
            .store
            .get(key)
            .map_err(|e| store_error(info, name, e))?
            .ok_or_else(|| ApiError::not_found(&info.group, &info.plural, name))?;
        Ok((decode_record(&record)?, record.mod_revision))
    }

    /// Applies a patch of any type to the live object (or its scale view).
    fn patched(
        &self,
        info: &ResourceInfo,
        old: &Value,
        patch_type: PatchType,
        patch: &Value,
        sub: Option<Subresource>,
        opts: &WriteOptions,
    ) -> ApiResult<Value> {
        let base = match sub {
            Some(Subresource::Scale) => super::subresource::scale_of(info, old)?,
            _ => old.clone(),
        };
        let mut doc = base.clone();
        match patch_type {
            PatchType::Json => crate::patch::json::apply(&mut doc, patch)?,
            PatchType::Merge => json_patch::merge(&mut doc, patch),
            PatchType::Strategic => doc = strategic(info, &base, patch)?,
            PatchType::Apply => {
                doc = managed::apply(
                    info,
                    Some(&base),
                    patch,
                    sub.map(Subresource::as_str),
                    opts.manager(),
                    opts.force,
                    &self.now_rfc3339(),
                )?
            }
        }
        match sub {
            Some(Subresource::Scale) => super::subresource::with_scale(info, old, &doc),
            _ => Ok(doc),
        }
    }

    /// Builds the object to store from the live one and the requested one.
    /// `track` names the manager whose write is recorded as an Update in
    /// managedFields (`None`: already recorded, by server-side apply).
    fn updated(
        &self,
        info: &ResourceInfo,
        old: &Value,
        mut new: Value,
        sub: Option<Subresource>,
        track: Option<&str>,
    ) -> ApiResult<Value> {
        match sub {
            // `with_scale` and `bind` built the whole object from the live one.
            Some(Subresource::Scale | Subresource::Binding) => {}
            _ => keep_server_metadata(old, &mut new),
        }
        if sub == Some(Subresource::Binding) {
            return Ok(new);
        }
        match sub {
            Some(Subresource::Status) => kinds::prepare_for_status_update(info, &mut new, old),
            Some(Subresource::Approval) => kinds::certificates::prepare_csr_approval_update(&mut new, old),
            Some(Subresource::EphemeralContainers) => kinds::ephemeral::prepare_update(&mut new, old),
            _ => kinds::prepare_for_update(info, &mut new, old),
        }
        if sub.is_none() {
            admission::mutate(self, admission::Operation::Update, info, &mut new)?;
        }
        match sub {
            Some(Subresource::EphemeralContainers) => validate_ephemeral(info, &new, old)?,
            _ => self.validate(info, &new, Some(old))?,
        }
        if let Some(manager) = track {
            let subresource = sub.map(Subresource::as_str);
            managed::track_update(
                info,
                Some(old),
                &mut new,
                manager,
                subresource,
                &self.now_rfc3339(),
            );
        }
        Ok(new)
    }

    /// Checks and normalises a request body: kind/apiVersion, name and
    /// namespace against the URL, field types ([`typed`]: 400 for a body,
    /// 422 for a patch result), unknown fields, then defaulting. Returns
    /// the body and a warning per dropped unknown field.
    fn admit_body(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        url_name: Option<&str>,
        mut body: Value,
        opts: &WriteOptions,
        origin: Origin,
    ) -> ApiResult<(Value, Vec<String>)> {
        let mut warnings = Vec::new();
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be a JSON object",
            ));
        }
        check_type_meta(info, &mut body)?;
        check_url_name(url_name, &body)?;
        check_namespace(info, namespace, &mut body)?;
        let unknown = match &info.custom {
            // A custom resource has no type to decode into: its schema prunes it.
            Some(custom) => super::custom_writes::prune(custom, &mut body),
            None => {
                typed::check(info, &body, origin)?;
                crate::schema::unknown_fields(&info.group, &info.version, &info.kind, &body)
            }
        };
        if !unknown.is_empty() {
            match opts.field_validation {
                FieldValidation::Strict => {
                    let list: Vec<String> =
                        unknown.iter().map(|f| format!("unknown field \"{f}\"")).collect();
                    return Err(ApiError::bad_request(format!(
                        "strict decoding error: {}",
                        list.join(", ")
                    )));
                }
                FieldValidation::Warn => {
                    warnings.extend(unknown.iter().map(|f| format!("unknown field \"{f}\"")));
                }
                FieldValidation::Ignore => {}
            }
            for path in &unknown {
                remove_path(&mut body, path);
            }
        }
        kinds::default_object(info, &mut body);
        warnings.extend(super::custom_writes::deprecation_warning(self.registry(), info));
        let mut body = convert::to_storage(info, body)?;
        drop_empty_metadata(&mut body);
        Ok((body, warnings))
    }

    /// Fills what the server owns on a new object: name from generateName,
    /// uid, creationTimestamp; clears what a client may not set. Returns the
    /// generateName prefix when the name was generated.
    fn prepare_new_object(&self, info: &ResourceInfo, new: &mut Value) -> ApiResult<Option<String>> {
        let now = self.now_rfc3339();
        let meta = obj::meta_mut(new);
        let mut generated = None;
        if meta.get("name").and_then(Value::as_str).unwrap_or("").is_empty()
            && let Some(prefix) = meta.get("generateName").and_then(Value::as_str)
            && !prefix.is_empty()
        {
            let name = self.inner.ids.generate_name(prefix);
            generated = Some(prefix.to_string());
            meta.insert("name".into(), Value::String(name));
        }
        for field in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            meta.remove(field);
        }
        meta.insert("uid".into(), Value::String(self.inner.ids.uid()));
        meta.insert("creationTimestamp".into(), Value::String(now));
        if info.kind == "Service" {
            super::subresource::allocate_cluster_ip(new, &self.inner.ids);
        }
        Ok(generated)
    }

    /// Runs the kind's validation; 422 with every field error.
    fn validate(&self, info: &ResourceInfo, new: &Value, old: Option<&Value>) -> ApiResult<()> {
        let errors = match old {
            None => kinds::validate_create(info, new),
            Some(old) => kinds::validate_update(info, new, old),
        };
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(
                &info.group,
                &info.kind,
                obj::name(new),
                &errors,
            ))
        }
    }

    /// Stores a new object; `verb` names the request in the journal.
    async fn store_create(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        new: Value,
        opts: &WriteOptions,
        warnings: Vec<String>,
        verb: &'static str,
    ) -> ApiResult<Written> {
        let name = obj::name(&new).to_string();
        let key = self.key(info, namespace, &name)?;
        if opts.dry_run {
            if self
                .inner
                .store
                .get(&key)
                .map_err(|e| store_error(info, &name, e))?
                .is_some()
            {
                return Err(ApiError::already_exists(&info.group, &info.plural, &name));
            }
            return Ok(Written {
                object: new,
                warnings,
                created: true,
            });
        }
        let bytes = encode_for_store(&new)?;
        let record = self
            .inner
            .store
            .create(&key, bytes)
            .await
            .map_err(|e| store_error(info, &name, e))?;
        let mut object = new;
        super::set_resource_version(&mut object, record.mod_revision);
        self.journal_write(&JournalWrite {
            info,
            verb,
            sub: None,
            actor: opts.manager(),
            object: &object,
            resource_version: record.mod_revision,
            change: Change::Created,
        });
        Ok(Written {
            object,
            warnings,
            created: true,
        })
    }

    #[allow(clippy::too_many_arguments)] // the parts of one compare-and-swap
    async fn store_update(
        &self,
        info: &ResourceInfo,
        key: &str,
        name: &str,
        old: &Value,
        mut new: Value,
        rev: u64,
        opts: &WriteOptions,
        warnings: &[String],
        op: Op,
    ) -> ApiResult<Written> {
        let warnings = warnings.to_vec();
        super::set_resource_version(&mut new, rev);
        if &new == old || opts.dry_run {
            // Nothing changed: upstream skips the write and returns the live object.
            return Ok(Written {
                object: new,
                warnings,
                created: false,
            });
        }
        if deletion_complete(&new) {
            // The last finalizer is gone from an object being deleted: the
            // update becomes its deletion (upstream's `ShouldDeleteDuringUpdate`
            // and `deleteWithoutFinalizers`). Watchers see DELETED only, never
            // a state without the finalizers they wait on.
            //
            // Regression: this used to store the update, then delete; a
            // watcher of a foreground deletion saw a MODIFIED event with
            // deletionTimestamp and no `foregroundDeletion` finalizer.
            let (_, deleted_at) = self
                .inner
                .store
                .delete(key, Some(rev))
                .await
                .map_err(|e| store_error(info, name, e))?;
            super::set_resource_version(&mut new, deleted_at);
            self.journal_op(info, op, opts, &new, deleted_at, Change::Removed);
        } else {
            let written_at = self.store_put(info, key, name, &new, rev).await?;
            super::set_resource_version(&mut new, written_at);
            self.journal_op(info, op, opts, &new, written_at, Change::Updated(old));
        }
        Ok(Written {
            object: new,
            warnings,
            created: false,
        })
    }
}

impl Api {
    /// Records an update or patch in the journal ([`super::journal`]).
    fn journal_op(
        &self,
        info: &ResourceInfo,
        op: Op,
        opts: &WriteOptions,
        object: &Value,
        resource_version: u64,
        change: Change<'_>,
    ) {
        self.journal_write(&JournalWrite {
            info,
            verb: op.verb,
            sub: op.sub,
            actor: opts.manager(),
            object,
            resource_version,
            change,
        });
    }

    /// Writes `new` over revision `rev` of `key`; returns the new revision.
    pub(super) async fn store_put(
        &self,
        info: &ResourceInfo,
        key: &str,
        name: &str,
        new: &Value,
        rev: u64,
    ) -> ApiResult<u64> {
        let bytes = encode_for_store(new)?;
        let record = self
            .inner
            .store
            .update(key, bytes, Some(rev))
            .await
            .map_err(|e| store_error(info, name, e))?;
        Ok(record.mod_revision)
    }
}

/// The request a read–modify–write serves, for its journal entry.
#[derive(Clone, Copy)]
struct Op {
    /// `update`, `patch`, or `create` (a binding).
    verb: &'static str,
    sub: Option<Subresource>,
}

/// Whether an object marked for deletion has nothing left to wait for.
fn deletion_complete(o: &Value) -> bool {
    o.pointer("/metadata/deletionTimestamp").is_some()
        && obj::finalizers(o).is_empty()
        && o.pointer("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == 0
}

/// Strategic merge patch, with the merge keys of the kind.
fn strategic(info: &ResourceInfo, original: &Value, patch: &Value) -> ApiResult<Value> {
    use crate::patch::strategic::PatchError;
    let schema = Schema::for_resource(info);
    crate::patch::strategic::strategic_merge_patch(schema.as_ref(), original, patch).map_err(|e| match e {
        PatchError::BadRequest(m) => ApiError::bad_request(m),
        PatchError::Unprocessable(m) => ApiError::new(Reason::Invalid, m),
        // Upstream answers these malformed patches with a 500; they are the
        // client's mistake, so they get a 400 here.
        PatchError::Internal(m) => ApiError::bad_request(m),
    })
}

/// Removes empty lists and maps from `metadata`: every ObjectMeta field is
/// `omitempty` upstream, so a patch that empties `ownerReferences` or
/// `finalizers` leaves no field behind.
fn drop_empty_metadata(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.retain(|_, v| match v {
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => true,
        });
    }
}

/// Parses a resourceVersion string.
pub(crate) fn parse_rv(s: &str) -> ApiResult<u64> {
    s.parse::<u64>().map_err(|_| {
        ApiError::bad_request(format!(
            "invalid resourceVersion {s:?}: must be an unsigned integer"
        ))
    })
}

/// Sets kind/apiVersion when missing; rejects a mismatch.
fn check_type_meta(info: &ResourceInfo, body: &mut Value) -> ApiResult<()> {
    let api_version = info.api_version();
    let (got_av, got_kind) = (
        body.get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        body.get("kind").and_then(Value::as_str).unwrap_or("").to_string(),
    );
    if !got_av.is_empty() && got_av != api_version {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({got_av}) does not match the expected API version ({api_version})"
        )));
    }
    if !got_kind.is_empty() && got_kind != info.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({got_kind}) does not match the expected kind ({})",
            info.kind
        )));
    }
    body["apiVersion"] = json!(api_version);
    body["kind"] = json!(info.kind);
    Ok(())
}

fn check_url_name(url_name: Option<&str>, body: &Value) -> ApiResult<()> {
    let (Some(url), Some(name)) = (url_name, obj::meta_str(body, "name")) else {
        return Ok(());
    };
    if url != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({url})"
        )));
    }
    Ok(())
}

/// Admission of a create ([`crate::admission`]: namespace lifecycle, ...).
fn admit_create(
    api: &Api,
    info: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    object: &Value,
) -> ApiResult<()> {
    let attributes = admission::Attributes {
        operation: admission::Operation::Create,
        info,
        namespace,
        name,
        object: Some(object),
    };
    admission::admit(api, &attributes)
}

/// `pods/ephemeralcontainers` validation ([`kinds::ephemeral`]); 422 with every field error.
fn validate_ephemeral(info: &ResourceInfo, new: &Value, old: &Value) -> ApiResult<()> {
    let errors = kinds::ephemeral::validate_update(new, old);
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &info.group,
        &info.kind,
        obj::name(new),
        &errors,
    ))
}

/// The validating admission of a create ([`admission::validate`]: quota).
async fn admit_validating(
    api: &Api,
    info: &ResourceInfo,
    namespace: Option<&str>,
    object: &Value,
    opts: &WriteOptions,
) -> ApiResult<()> {
    let attributes = admission::Attributes {
        operation: admission::Operation::Create,
        info,
        namespace,
        name: obj::name(object),
        object: Some(object),
    };
    admission::validate(api, &attributes, opts.dry_run).await
}

/// Fills `metadata.namespace` from the URL, or rejects a mismatch.
fn check_namespace(info: &ResourceInfo, namespace: Option<&str>, body: &mut Value) -> ApiResult<()> {
    let meta = obj::meta_mut(body);
    if !info.namespaced {
        meta.remove("namespace");
        return Ok(());
    }
    let url_ns = namespace.unwrap_or("");
    match meta.get("namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() && ns != url_ns => Err(ApiError::bad_request(format!(
            "the namespace of the provided object ({ns}) does not match the namespace sent on the request ({url_ns})"
        ))),
        _ => {
            meta.insert("namespace".into(), Value::String(url_ns.to_string()));
            Ok(())
        }
    }
}

/// Copies what the server owns from the live object into an update, as
/// upstream's `rest.BeforeUpdate` does.
fn keep_server_metadata(old: &Value, new: &mut Value) {
    let Some(old_meta) = old.get("metadata").and_then(Value::as_object) else {
        return;
    };
    let meta = obj::meta_mut(new);
    for field in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(field) {
            Some(v) => meta.insert(field.into(), v.clone()),
            None => meta.remove(field),
        };
    }
    if !meta.contains_key("managedFields")
        && let Some(mf) = old_meta.get("managedFields")
    {
        meta.insert("managedFields".into(), mf.clone());
    }
}

/// Removes the field at a path like `spec.template.spec.containers[0].bogus`.
fn remove_path(obj: &mut Value, path: &str) {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('.') {
        match part.split_once('[') {
            Some((field, rest)) => {
                parts.push(field);
                parts.extend(rest.split('[').map(|i| i.trim_end_matches(']')));
            }
            None => parts.push(part),
        }
    }
    let Some((last, walk)) = parts.split_last() else {
        return;
    };
    let mut cur = obj;
    for p in walk {
        let next = match cur {
            Value::Object(m) => m.get_mut(*p),
            Value::Array(a) => p.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let Value::Object(m) = cur {
        m.remove(*last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_path_reaches_into_lists() {
        let mut v = json!({"spec": {"containers": [{"name": "a", "bogus": 1}], "x": 2}});
        remove_path(&mut v, "spec.containers[0].bogus");
        remove_path(&mut v, "spec.x");
        assert_eq!(v, json!({"spec": {"containers": [{"name": "a"}]}}));
    }
}
