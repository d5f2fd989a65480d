//! The in-process API: every read and write of a Kubernetes object.
//!
//! The HTTP handlers are a thin layer over [`Api`]; the controllers,
//! scheduler and kubelet of later issues call it directly, without HTTP, and
//! go through exactly the same checks. One write, step by step (upstream:
//! `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`):
//!
//! ```text
//! decode → unknown-field check (fieldValidation) → defaulting (kinds::default_object)
//!   → metadata (uid, creationTimestamp, generateName) → strategy (kinds::prepare_for_*)
//!   → validation (kinds::validate_*) → managedFields → store write with a
//!   resourceVersion precondition → the object read back with its new resourceVersion
//! ```
//!
//! Objects are `serde_json::Value`s, like client-go's `unstructured`. The
//! store holds them without `metadata.resourceVersion`; it is set from the
//! store's revision on every read, as upstream does with etcd's `mod_revision`.

mod apiservices;
mod convert;
mod custom_resources;
mod custom_writes;
mod delete;
mod eviction;
mod ids;
pub mod journal;
pub mod kubernetes_service;
mod namespace_finalizer;
mod read;
mod subresource;
mod write;

pub use custom_writes::deprecation_warning;
pub use delete::{DeleteOptions, DeleteOutcome, Propagation};
pub use read::{ListOptions, ObjectList, WatchEvent, WatchOptions, WatchStream};
pub use subresource::{LogOptions, log_text, scale_of, synthetic_log};
pub use write::{FieldValidation, PatchType, WriteOptions, Written};

use std::sync::Arc;

use serde_json::{Value, json};
use store::{Clock, Record, Store};

use crate::error::{ApiError, ApiResult};
use crate::registry::{Registry, ResourceInfo};

/// The API object: validation, defaulting and the store, behind one handle.
/// Cheap to clone.
#[derive(Clone)]
pub struct Api {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    registry: Registry,
    clock: Clock,
    /// Where `pods/log` reads container logs from: upstream the API server
    /// asks the pod's kubelet; here the kubelet registers this once at start.
    logs: std::sync::OnceLock<LogSource>,
    /// Where uids, generated names and cluster IPs come from.
    ids: ids::Ids,
    /// The CustomResourceDefinitions being deleted (their resources take
    /// no new objects); written by the CRD controller's passes
    /// (`custom_resources.rs`), read by creates. Held only to copy or test.
    terminating_crds: std::sync::RwLock<std::collections::BTreeSet<String>>,
    /// The registry rows last built for each CRD, by name, with the
    /// resourceVersion they were built from: a pass compiles the schemas
    /// of changed CRDs only. Only the CRD controller's passes use it.
    crd_rows: std::sync::Mutex<custom_resources::RowCache>,
}

/// A source of container logs: `(pod, container, previous, now)` → lines as
/// (RFC 3339 timestamp, text), oldest first.
pub type LogSource =
    Arc<dyn Fn(&Value, &str, bool, std::time::SystemTime) -> Vec<(String, String)> + Send + Sync>;

impl Api {
    /// An API over `store`, serving the kinds in `registry`, with its random
    /// choices seeded by 0 (tests replay the same uids and names; see
    /// [`Api::with_seed`]).
    pub fn new(store: Store, registry: Registry, clock: Clock) -> Self {
        Api::with_seed(store, registry, clock, 0)
    }

    /// An API whose uids, `generateName` suffixes and cluster IPs are drawn
    /// from one generator seeded by `seed` (and by the store's revision at
    /// start, so that a restart on a kept store does not reuse the uids of
    /// the objects in it): on a fresh store, the same seed and the same
    /// sequence of creates give the same names and uids.
    pub fn with_seed(store: Store, registry: Registry, clock: Clock, seed: u64) -> Self {
        let ids = ids::Ids::new(seed, store.revision());
        Api {
            inner: Arc::new(Inner {
                store,
                registry,
                clock,
                logs: std::sync::OnceLock::new(),
                ids,
                terminating_crds: Default::default(),
                crd_rows: Default::default(),
            }),
        }
    }

    /// The store (for stats and shutdown).
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Registers where container logs come from (the kubelet). Only the
    /// first registration counts.
    pub fn set_log_source(&self, source: LogSource) {
        let _ = self.inner.logs.set(source);
    }

    /// The registered log source, if a kubelet registered one.
    pub fn log_source(&self) -> Option<&LogSource> {
        self.inner.logs.get()
    }

    /// The served kinds.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The one clock.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// Creates the namespaces a fresh cluster has (`default`, `kube-system`,
    /// `kube-public`, `kube-node-lease`) when they are missing, after
    /// serving the established CRDs of the store.
    pub async fn bootstrap(&self) -> ApiResult<()> {
        // The custom resources of the CRDs already stored are served from the start.
        self.restore_custom_resources()?;
        let info = self.resource("", "v1", "namespaces")?;
        let namespaces = ["default", "kube-system", "kube-public", "kube-node-lease"].map(|name| {
            let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            (&info, ns)
        });
        self.create_all_missing(namespaces).await?;
        self.bootstrap_classes().await
    }

    /// Creates the classes a fresh cluster has when they are missing: the
    /// system PriorityClasses and the default StorageClass `standard`.
    async fn bootstrap_classes(&self) -> ApiResult<()> {
        use crate::kinds::{scheduling, storage};
        let priority = self.resource("scheduling.k8s.io", "v1", "priorityclasses")?;
        let storage_classes = self.resource("storage.k8s.io", "v1", "storageclasses")?;
        let classes = scheduling::system_priority_classes()
            .into_iter()
            .map(|class| (&priority, class))
            .chain([(&storage_classes, storage::standard_storage_class())]);
        self.create_all_missing(classes).await
    }

    /// [`Api::create_if_missing`] for each object, all at once: start-up's
    /// writes then share their flushes instead of waiting for one each.
    pub async fn create_all_missing<'a>(
        &self,
        objects: impl IntoIterator<Item = (&'a Arc<ResourceInfo>, Value)>,
    ) -> ApiResult<()> {
        let creates = objects
            .into_iter()
            .map(|(info, object)| self.create_if_missing(info, object));
        futures::future::try_join_all(creates).await?;
        Ok(())
    }

    /// Creates a cluster-scoped object that start-up makes unless it is
    /// already there (kept as the user left it, as upstream's bootstrap does).
    pub async fn create_if_missing(&self, info: &ResourceInfo, object: Value) -> ApiResult<()> {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if self.get(info, None, name).is_ok() {
            return Ok(());
        }
        match self.create(info, None, object, &WriteOptions::default()).await {
            Err(e) if e.reason != crate::error::Reason::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// Looks a resource up, or 404 with upstream's text.
    pub fn resource(&self, group: &str, version: &str, plural: &str) -> ApiResult<Arc<ResourceInfo>> {
        self.inner.registry.get(group, version, plural).ok_or_else(|| {
            ApiError::new(
                crate::error::Reason::NotFound,
                "the server could not find the requested resource",
            )
        })
    }

    /// Now, as an RFC 3339 timestamp with second precision (`metav1.Time`).
    pub fn now_rfc3339(&self) -> String {
        format_time(self.inner.clock.now())
    }

    /// The store key of `name`, checking that a namespace is given exactly
    /// when the resource is namespaced.
    fn key(&self, info: &ResourceInfo, namespace: Option<&str>, name: &str) -> ApiResult<String> {
        match (info.namespaced, namespace) {
            (true, None) => Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            (true, Some(ns)) => Ok(info.key(Some(ns), name)),
            (false, _) => Ok(info.key(None, name)),
        }
    }
}

/// Formats a time as `metav1.Time` does: RFC 3339, UTC, whole seconds.
pub fn format_time(t: std::time::SystemTime) -> String {
    match jiff::Timestamp::try_from(t) {
        Ok(ts) => ts
            .round(jiff::Unit::Second)
            .unwrap_or(ts)
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        Err(_) => "1970-01-01T00:00:00Z".to_string(),
    }
}

/// Parses a stored record back into an object with its resourceVersion.
fn decode_record(record: &Record) -> ApiResult<Value> {
    decode_bytes(&record.value, record.mod_revision)
}

/// Parses stored bytes and sets `metadata.resourceVersion` to `revision`.
fn decode_bytes(bytes: &[u8], revision: u64) -> ApiResult<Value> {
    let mut obj: Value = serde_json::from_slice(bytes).map_err(ApiError::internal)?;
    set_resource_version(&mut obj, revision);
    Ok(obj)
}

/// Sets `metadata.resourceVersion`.
pub(crate) fn set_resource_version(obj: &mut Value, revision: u64) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), Value::String(revision.to_string()));
    }
}

/// Serializes an object for the store, without its resourceVersion (which
/// the store's revision supplies on every read); 413 above [`MAX_OBJECT_BYTES`].
fn encode_for_store(obj: &Value) -> ApiResult<Vec<u8>> {
    /// Borrows the object and writes every field but `metadata.resourceVersion`,
    /// so that no copy of the object is made.
    struct WithoutRv<'a>(&'a Value);
    impl serde::Serialize for WithoutRv<'_> {
        fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let Value::Object(top) = self.0 else {
                return self.0.serialize(ser);
            };
            let mut map = ser.serialize_map(Some(top.len()))?;
            for (k, v) in top {
                match (k.as_str(), v) {
                    ("metadata", Value::Object(meta)) => map.serialize_entry(k, &MetaWithoutRv(meta))?,
                    _ => map.serialize_entry(k, v)?,
                }
            }
            map.end()
        }
    }
    struct MetaWithoutRv<'a>(&'a serde_json::Map<String, Value>);
    impl serde::Serialize for MetaWithoutRv<'_> {
        fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = ser.serialize_map(None)?;
            for (k, v) in self.0.iter().filter(|(k, _)| k.as_str() != "resourceVersion") {
                map.serialize_entry(k, v)?;
            }
            map.end()
        }
    }
    let bytes = serde_json::to_vec(&WithoutRv(obj)).map_err(ApiError::internal)?;
    if bytes.len() > MAX_OBJECT_BYTES {
        return Err(ApiError::new(
            crate::error::Reason::RequestEntityTooLarge,
            "etcdserver: request is too large",
        ));
    }
    Ok(bytes)
}

/// The largest object the store takes: etcd's default `--max-request-bytes`
/// (1.5 MiB), which is what bounds an object in a real cluster. Upstream
/// passes etcd's error through; here it is a 413 with etcd's words.
pub const MAX_OBJECT_BYTES: usize = 1536 * 1024;

/// Maps a store error to the API error upstream returns for it.
fn store_error(info: &ResourceInfo, name: &str, e: store::Error) -> ApiError {
    match e {
        store::Error::AlreadyExists { .. } => ApiError::already_exists(&info.group, &info.plural, name),
        store::Error::NotFound { .. } => ApiError::not_found(&info.group, &info.plural, name),
        store::Error::Conflict { .. } => ApiError::modified(&info.group, &info.plural, name),
        store::Error::Expired { requested, oldest } => ApiError::expired(requested, oldest),
        store::Error::Closed => ApiError::new(
            crate::error::Reason::ServiceUnavailable,
            "the server is shutting down",
        ),
        other => ApiError::internal(other),
    }
}

/// Small accessors on object JSON.
pub(crate) mod obj {
    use serde_json::{Map, Value};

    /// `metadata.<field>` as a string.
    pub fn meta_str<'a>(o: &'a Value, field: &str) -> Option<&'a str> {
        o.get("metadata")?.get(field)?.as_str()
    }

    /// `metadata`, created when missing.
    pub fn meta_mut(o: &mut Value) -> &mut Map<String, Value> {
        if !o.get("metadata").is_some_and(Value::is_object) {
            o["metadata"] = Value::Object(Map::new());
        }
        o["metadata"]
            .as_object_mut()
            .expect("metadata was just made an object")
    }

    /// `metadata.name` or "".
    pub fn name(o: &Value) -> &str {
        meta_str(o, "name").unwrap_or("")
    }

    /// `metadata.labels`.
    pub fn labels(o: &Value) -> Option<&Map<String, Value>> {
        o.get("metadata")?.get("labels")?.as_object()
    }

    /// `metadata.finalizers` as strings.
    pub fn finalizers(o: &Value) -> Vec<String> {
        o.get("metadata")
            .and_then(|m| m.get("finalizers"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    }
}
