//! The client: how a controller reads and writes objects.
//!
//! Upstream: client-go's `dynamic` client (`dynamic/simple.go`) plus the
//! error predicates of `apimachinery/pkg/api/errors/errors.go`. Objects
//! travel as `serde_json::Value`s, like client-go's `unstructured`; [`Typed`]
//! converts them to and from the k8s-openapi structs.
//!
//! There are two implementations of the one [`Client`] trait:
//!
//! - [`InProcessClient`] calls [`apiserver::Api`] directly. A write goes
//!   through exactly the same decoding, defaulting, validation and
//!   resourceVersion checks as a write from kubectl, without HTTP and without
//!   a JSON round trip.
//! - [`super::http_client::HttpClient`] speaks the Kubernetes REST API over
//!   plain HTTP, so a component can run against a remote server.
//!
//! Simplified: no protobuf, no paging of lists (`limit`/`continue`), no
//! client-side rate limiting (client-go's QPS/burst).

use std::marker::PhantomData;
use std::sync::Arc;

use futures::stream::BoxStream;
use serde_json::Value;

use apiserver::api::{
    DeleteOptions, ListOptions, PatchType as ApiPatchType, Propagation, WatchEvent as ApiWatchEvent,
    WatchOptions, WriteOptions,
};
use apiserver::registry::{ResourceInfo, Subresource};
use apiserver::{Api, ApiError};

/// A boxed future, so that [`Client`] can be used as `Arc<dyn Client>`.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// Which resource a request is about (client-go's `schema.GroupVersionResource`
/// plus the kind and scope, which a RESTMapper would supply).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceRef {
    /// API group, `""` for core.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Plural resource name, e.g. `replicasets`.
    pub plural: String,
    /// Kind, e.g. `ReplicaSet`.
    pub kind: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
}

impl ResourceRef {
    /// The resource of a k8s-openapi type, e.g. `ResourceRef::of::<Pod>()`.
    pub fn of<K: k8s_openapi::Resource>() -> Self {
        // `Resource::Scope` is a marker type with no methods and no `'static`
        // bound, so its name is the one way to read it in generic code.
        let scope = std::any::type_name::<K::Scope>();
        ResourceRef {
            group: K::GROUP.to_string(),
            version: K::VERSION.to_string(),
            plural: K::URL_PATH_SEGMENT.to_string(),
            kind: K::KIND.to_string(),
            namespaced: scope.ends_with("NamespaceResourceScope"),
        }
    }

    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A failed request, as the `metav1.Status` the server answered with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ClientError {
    /// HTTP status code (404, 409, 410, ...); 0 when the server was not reached.
    pub code: u16,
    /// The Status `reason` (`NotFound`, `Conflict`, `AlreadyExists`, `Expired`, ...).
    pub reason: String,
    /// The Status `message`.
    pub message: String,
}

/// Result alias for client calls.
pub type ClientResult<T> = Result<T, ClientError>;

impl ClientError {
    /// An error with the given code, reason and message.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        ClientError {
            code,
            reason: reason.to_string(),
            message: message.into(),
        }
    }

    /// The server could not be reached or answered something unreadable.
    pub fn transport(message: impl Into<String>) -> Self {
        Self::new(0, "ServiceUnavailable", message)
    }

    /// A response or object that does not decode.
    pub fn decode(e: impl std::fmt::Display) -> Self {
        Self::new(500, "InternalError", format!("decoding: {e}"))
    }

    /// The error of a `metav1.Status` body.
    pub fn from_status(status: &Value, http_code: u16) -> Self {
        let code = status
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(http_code);
        let reason = status.get("reason").and_then(Value::as_str).unwrap_or("Unknown");
        let message = status.get("message").and_then(Value::as_str).unwrap_or("");
        Self::new(code, reason, message)
    }

    /// 404 NotFound (`errors.IsNotFound`).
    pub fn is_not_found(&self) -> bool {
        self.reason == "NotFound"
    }

    /// 409 Conflict: a stale resourceVersion or another precondition (`errors.IsConflict`).
    pub fn is_conflict(&self) -> bool {
        self.reason == "Conflict"
    }

    /// 409 AlreadyExists (`errors.IsAlreadyExists`).
    pub fn is_already_exists(&self) -> bool {
        self.reason == "AlreadyExists"
    }

    /// 410: the resourceVersion is older than the watch window
    /// (`errors.IsResourceExpired` / `IsGone`); the informer relists.
    pub fn is_expired(&self) -> bool {
        self.reason == "Expired" || self.reason == "Gone" || self.code == 410
    }
}

impl From<ApiError> for ClientError {
    fn from(e: ApiError) -> Self {
        ClientError::new(e.reason.code(), e.reason.as_str(), e.message)
    }
}

/// `labelSelector` and `fieldSelector` of a list or watch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListParams {
    /// e.g. `app=web,tier!=cache`.
    pub label_selector: Option<String>,
    /// e.g. `spec.nodeName=node-1`.
    pub field_selector: Option<String>,
}

/// One event of a watch (client-go's `watch.Event`).
#[derive(Clone, Debug)]
pub enum WatchEvent {
    /// An object appeared (or started matching the selectors).
    Added(Value),
    /// An object changed.
    Modified(Value),
    /// An object was deleted (or stopped matching); its last state.
    Deleted(Value),
    /// No change up to this resourceVersion.
    Bookmark(String),
    /// The watch failed (e.g. 410 Expired); it ends after this event.
    Error(ClientError),
}

/// The patch media types a controller uses. Server-side apply is left out:
/// the built-in controllers of upstream do not use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
}

impl PatchType {
    /// The Content-Type of the request.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
        }
    }
}

/// Everything a controller asks of the API server. Object-safe, so that
/// components hold an `Arc<dyn Client>` and tests or the trace can wrap one.
///
/// `ns` is the namespace of a namespaced resource; `None` lists or watches
/// all namespaces, and is ignored for cluster-scoped resources.
pub trait Client: Send + Sync + 'static {
    /// GET one object.
    fn get(&self, r: &ResourceRef, ns: Option<&str>, name: &str) -> BoxFuture<'_, ClientResult<Value>>;

    /// LIST: the matching objects and the resourceVersion the list is consistent at.
    fn list(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
    ) -> BoxFuture<'_, ClientResult<(Vec<Value>, String)>>;

    /// WATCH every change after `resource_version` (`""` or `"0"`: the current
    /// state first, as ADDED events). The stream ends when the server ends the
    /// watch; dropping it ends the watch.
    fn watch(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
        resource_version: &str,
    ) -> BoxFuture<'_, ClientResult<BoxStream<'static, WatchEvent>>>;

    /// CREATE (POST).
    fn create(&self, r: &ResourceRef, ns: Option<&str>, obj: Value) -> BoxFuture<'_, ClientResult<Value>>;

    /// UPDATE (PUT) of the object named in `obj.metadata.name`, or of its
    /// `status` with `subresource = Some("status")`. A `metadata.resourceVersion`
    /// in `obj` is a precondition (409 Conflict when stale).
    fn update(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        obj: Value,
        subresource: Option<&str>,
    ) -> BoxFuture<'_, ClientResult<Value>>;

    /// PATCH.
    fn patch(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        t: PatchType,
        patch: Value,
        subresource: Option<&str>,
    ) -> BoxFuture<'_, ClientResult<Value>>;

    /// GET a subresource of one object, e.g. a Deployment's `scale` (an
    /// `autoscaling/v1` Scale: `spec.replicas`, `status.replicas`,
    /// `status.selector`). Clients without subresource reads answer 405.
    fn get_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let _ = (r, ns);
        let message = format!("GET {name}/{subresource} is not supported by this client");
        Box::pin(async move { Err(ClientError::new(405, "MethodNotAllowed", message)) })
    }

    /// POST to a subresource of one object, e.g. a pod's `binding`
    /// (`POST pods/NAME/binding`, upstream `pods.Bind`). Clients without
    /// subresource creates answer 405 MethodNotAllowed.
    fn create_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
        obj: Value,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let _ = (r, ns, obj);
        let message = format!("POST {name}/{subresource} is not supported by this client");
        Box::pin(async move { Err(ClientError::new(405, "MethodNotAllowed", message)) })
    }

    /// DELETE with [`DeleteParams`] (grace period, propagation policy, uid precondition).
    fn delete(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        params: &DeleteParams,
    ) -> BoxFuture<'_, ClientResult<()>>;
}

/// The `metav1.DeleteOptions` fields that components send.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteParams {
    /// `gracePeriodSeconds`: 0 removes a pod at once; `None` uses the object's own.
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`: `Background`, `Foreground` or `Orphan`.
    pub propagation_policy: Option<String>,
    /// `preconditions.uid`: 409 Conflict when `name` is now another object of
    /// that name (the garbage collector never deletes a namesake).
    pub uid: Option<String>,
}

impl DeleteParams {
    /// A delete with `gracePeriodSeconds` only.
    pub fn grace(seconds: i64) -> Self {
        DeleteParams {
            grace_period_seconds: Some(seconds),
            ..Default::default()
        }
    }

    /// A delete with `propagationPolicy` only.
    pub fn propagation(policy: &str) -> Self {
        DeleteParams {
            propagation_policy: Some(policy.to_string()),
            ..Default::default()
        }
    }

    /// The `DeleteOptions` body of an HTTP DELETE.
    pub fn to_body(&self) -> Value {
        let mut options = serde_json::json!({"kind": "DeleteOptions", "apiVersion": "v1"});
        if let Some(g) = self.grace_period_seconds {
            options["gracePeriodSeconds"] = g.into();
        }
        if let Some(p) = &self.propagation_policy {
            options["propagationPolicy"] = p.as_str().into();
        }
        if let Some(uid) = &self.uid {
            options["preconditions"] = serde_json::json!({"uid": uid});
        }
        options
    }
}

/// `metadata.name` of an object, or "".
pub fn json_name(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.namespace` of an object.
pub fn json_namespace(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/namespace").and_then(Value::as_str)
}

/// `metadata.uid` of an object, or "".
pub fn json_uid(obj: &Value) -> &str {
    obj.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("")
}

/// `metadata.resourceVersion` of an object, or "".
pub fn json_resource_version(obj: &Value) -> &str {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
}

// ---------------------------------------------------------------------------
// In-process
// ---------------------------------------------------------------------------

/// A [`Client`] that calls [`apiserver::Api`] in the same process.
#[derive(Clone)]
pub struct InProcessClient {
    /// The API (a cheap-clone handle over the store and registry).
    api: Api,
    /// `fieldManager` of every write, e.g. `deployment-controller`.
    field_manager: String,
}

impl InProcessClient {
    /// A client writing as `field_manager`.
    pub fn new(api: Api, field_manager: &str) -> Self {
        InProcessClient {
            api,
            field_manager: field_manager.to_string(),
        }
    }

    fn info(&self, r: &ResourceRef) -> ClientResult<Arc<ResourceInfo>> {
        Ok(self.api.resource(&r.group, &r.version, &r.plural)?)
    }

    fn write_options(&self) -> WriteOptions {
        WriteOptions {
            field_manager: Some(self.field_manager.clone()),
            ..Default::default()
        }
    }
}

/// The namespace to pass to the API: none for cluster-scoped resources.
fn scoped<'a>(r: &ResourceRef, ns: Option<&'a str>) -> Option<&'a str> {
    if r.namespaced { ns } else { None }
}

/// `"status"` → `Subresource::Status`, and so on.
fn parse_subresource(sub: Option<&str>) -> ClientResult<Option<Subresource>> {
    match sub {
        None => Ok(None),
        Some("status") => Ok(Some(Subresource::Status)),
        Some("scale") => Ok(Some(Subresource::Scale)),
        Some("approval") => Ok(Some(Subresource::Approval)),
        Some(other) => Err(ClientError::new(
            404,
            "NotFound",
            format!("subresource {other:?} is not supported by this client"),
        )),
    }
}

/// A resourceVersion string as the API's revision (`""` and `"0"`: none).
fn parse_rv(rv: &str) -> ClientResult<Option<u64>> {
    if rv.is_empty() {
        return Ok(None);
    }
    match rv.parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(n) => Ok(Some(n)),
        Err(_) => Err(ClientError::new(
            400,
            "BadRequest",
            format!("invalid resource version {rv:?}"),
        )),
    }
}

fn convert_event(e: ApiWatchEvent) -> WatchEvent {
    match e {
        ApiWatchEvent::Added(o) => WatchEvent::Added(o),
        ApiWatchEvent::Modified(o) => WatchEvent::Modified(o),
        ApiWatchEvent::Deleted(o) => WatchEvent::Deleted(o),
        ApiWatchEvent::Bookmark(rv) => WatchEvent::Bookmark(rv.to_string()),
        ApiWatchEvent::Error(e) => WatchEvent::Error(e.into()),
    }
}

impl Client for InProcessClient {
    fn get(&self, r: &ResourceRef, ns: Option<&str>, name: &str) -> BoxFuture<'_, ClientResult<Value>> {
        let result = self
            .info(r)
            .and_then(|info| Ok(self.api.get(&info, scoped(r, ns), name)?));
        Box::pin(async move { result })
    }

    fn get_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let result = parse_subresource(Some(subresource)).and_then(|sub| {
            let info = self.info(r)?;
            let ns = scoped(r, ns);
            match sub {
                Some(Subresource::Scale) => Ok(self.api.get_scale(&info, ns, name)?),
                Some(Subresource::Status) => Ok(self.api.get(&info, ns, name)?),
                _ => Err(ClientError::new(
                    405,
                    "MethodNotAllowed",
                    format!("GET {name}/{subresource} is not supported by this client"),
                )),
            }
        });
        Box::pin(async move { result })
    }

    fn list(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
    ) -> BoxFuture<'_, ClientResult<(Vec<Value>, String)>> {
        let opts = ListOptions {
            label_selector: p.label_selector.clone(),
            field_selector: p.field_selector.clone(),
            ..Default::default()
        };
        let result = self.info(r).and_then(|info| {
            let list = self.api.list(&info, scoped(r, ns), &opts)?;
            Ok((list.items, list.resource_version.to_string()))
        });
        Box::pin(async move { result })
    }

    fn watch(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
        resource_version: &str,
    ) -> BoxFuture<'_, ClientResult<BoxStream<'static, WatchEvent>>> {
        let result = self.info(r).and_then(|info| {
            let opts = WatchOptions {
                resource_version: parse_rv(resource_version)?,
                label_selector: p.label_selector.clone(),
                field_selector: p.field_selector.clone(),
                allow_bookmarks: true,
                timeout: None,
            };
            // The API's watch task holds the sender; it ends when this
            // receiver (inside the stream) is dropped.
            let rx = self.api.watch(&info, scoped(r, ns), &opts)?;
            let stream = futures::stream::unfold(rx, |mut rx| async move {
                let event = rx.recv().await?;
                Some((convert_event(event), rx))
            });
            let boxed: BoxStream<'static, WatchEvent> = Box::pin(stream);
            Ok(boxed)
        });
        Box::pin(async move { result })
    }

    fn create(&self, r: &ResourceRef, ns: Option<&str>, obj: Value) -> BoxFuture<'_, ClientResult<Value>> {
        let r = r.clone();
        let ns = ns.map(str::to_string);
        Box::pin(async move {
            let info = self.info(&r)?;
            let opts = self.write_options();
            let written = self
                .api
                .create(&info, scoped(&r, ns.as_deref()), obj, &opts)
                .await?;
            Ok(written.object)
        })
    }

    fn update(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        obj: Value,
        subresource: Option<&str>,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let r = r.clone();
        let ns = ns.map(str::to_string);
        let sub = parse_subresource(subresource);
        Box::pin(async move {
            let info = self.info(&r)?;
            let name = json_name(&obj).to_string();
            let opts = self.write_options();
            let ns = scoped(&r, ns.as_deref());
            let written = self.api.update(&info, ns, &name, obj, sub?, &opts).await?;
            Ok(written.object)
        })
    }

    fn patch(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        t: PatchType,
        patch: Value,
        subresource: Option<&str>,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let r = r.clone();
        let ns = ns.map(str::to_string);
        let name = name.to_string();
        let sub = parse_subresource(subresource);
        let t = match t {
            PatchType::Json => ApiPatchType::Json,
            PatchType::Merge => ApiPatchType::Merge,
            PatchType::Strategic => ApiPatchType::Strategic,
        };
        Box::pin(async move {
            let info = self.info(&r)?;
            let opts = self.write_options();
            let ns = scoped(&r, ns.as_deref());
            let written = self.api.patch(&info, ns, &name, t, &patch, sub?, &opts).await?;
            Ok(written.object)
        })
    }

    fn create_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
        obj: Value,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let is_binding = r.group.is_empty() && r.plural == "pods" && subresource == "binding";
        let ns = ns.unwrap_or("default").to_string();
        let name = name.to_string();
        let subresource = subresource.to_string();
        Box::pin(async move {
            if !is_binding {
                return Err(ClientError::new(
                    405,
                    "MethodNotAllowed",
                    format!("POST {subresource} is not supported by this client"),
                ));
            }
            self.api.bind(&ns, &name, &obj, &self.write_options()).await?;
            Ok(serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}))
        })
    }

    fn delete(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        params: &DeleteParams,
    ) -> BoxFuture<'_, ClientResult<()>> {
        let (r, ns, name) = (r.clone(), ns.map(str::to_string), name.to_string());
        let propagation = params
            .propagation_policy
            .as_deref()
            .map(Propagation::parse)
            .transpose();
        let (grace_period, uid) = (params.grace_period_seconds, params.uid.clone());
        Box::pin(async move {
            let info = self.info(&r)?;
            let opts = DeleteOptions {
                grace_period,
                propagation: propagation?,
                uid,
                ..Default::default()
            };
            self.api
                .delete(&info, scoped(&r, ns.as_deref()), &name, &opts)
                .await?;
            Ok(())
        })
    }
}

// ---------------------------------------------------------------------------
// Typed
// ---------------------------------------------------------------------------

/// Typed calls over any [`Client`], for one k8s-openapi type (client-go's
/// typed clientset, e.g. `AppsV1().ReplicaSets(ns)`).
pub struct Typed<K> {
    client: Arc<dyn Client>,
    resource: ResourceRef,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Typed<K> {
    fn clone(&self) -> Self {
        Typed {
            client: self.client.clone(),
            resource: self.resource.clone(),
            _kind: PhantomData,
        }
    }
}

/// Serializes a typed object to JSON.
pub fn to_value<K: serde::Serialize>(obj: &K) -> ClientResult<Value> {
    serde_json::to_value(obj).map_err(ClientError::decode)
}

/// Deserializes JSON to a typed object.
pub fn from_value<K: serde::de::DeserializeOwned>(v: Value) -> ClientResult<K> {
    serde_json::from_value(v).map_err(ClientError::decode)
}

impl<K> Typed<K>
where
    K: k8s_openapi::Resource + serde::de::DeserializeOwned + serde::Serialize + Clone + Send + Sync + 'static,
{
    /// Typed calls for `K` over `client`.
    pub fn new(client: Arc<dyn Client>) -> Self {
        Typed {
            client,
            resource: ResourceRef::of::<K>(),
            _kind: PhantomData,
        }
    }

    /// The resource `K` is.
    pub fn resource(&self) -> &ResourceRef {
        &self.resource
    }

    /// The untyped client underneath.
    pub fn client(&self) -> &Arc<dyn Client> {
        &self.client
    }

    /// GET.
    pub async fn get(&self, ns: Option<&str>, name: &str) -> ClientResult<K> {
        from_value(self.client.get(&self.resource, ns, name).await?)
    }

    /// LIST.
    pub async fn list(&self, ns: Option<&str>, p: &ListParams) -> ClientResult<Vec<K>> {
        let (items, _rv) = self.client.list(&self.resource, ns, p).await?;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            out.push(from_value(item)?);
        }
        Ok(out)
    }

    /// CREATE.
    pub async fn create(&self, ns: Option<&str>, obj: &K) -> ClientResult<K> {
        from_value(self.client.create(&self.resource, ns, to_value(obj)?).await?)
    }

    /// UPDATE, in the object's own namespace.
    pub async fn update(&self, obj: &K) -> ClientResult<K> {
        self.put(obj, None).await
    }

    /// UPDATE of the `status` subresource.
    pub async fn update_status(&self, obj: &K) -> ClientResult<K> {
        self.put(obj, Some("status")).await
    }

    async fn put(&self, obj: &K, subresource: Option<&str>) -> ClientResult<K> {
        let v = to_value(obj)?;
        let ns = json_namespace(&v).map(str::to_string);
        let written = self
            .client
            .update(&self.resource, ns.as_deref(), v, subresource)
            .await?;
        from_value(written)
    }

    /// PATCH.
    pub async fn patch(&self, ns: Option<&str>, name: &str, t: PatchType, patch: Value) -> ClientResult<K> {
        from_value(
            self.client
                .patch(&self.resource, ns, name, t, patch, None)
                .await?,
        )
    }

    /// PATCH of the `status` subresource.
    pub async fn patch_status(
        &self,
        ns: Option<&str>,
        name: &str,
        t: PatchType,
        patch: Value,
    ) -> ClientResult<K> {
        let written = self
            .client
            .patch(&self.resource, ns, name, t, patch, Some("status"))
            .await?;
        from_value(written)
    }

    /// DELETE with the server's defaults (grace period, Background propagation).
    pub async fn delete(&self, ns: Option<&str>, name: &str) -> ClientResult<()> {
        self.client
            .delete(&self.resource, ns, name, &DeleteParams::default())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apiserver::testkit::TestApi;
    use k8s_openapi::api::apps::v1::ReplicaSet;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};

    #[test]
    fn resource_ref_of_reads_group_plural_and_scope() {
        let rs = ResourceRef::of::<ReplicaSet>();
        assert_eq!(
            (rs.group.as_str(), rs.version.as_str(), rs.plural.as_str()),
            ("apps", "v1", "replicasets")
        );
        assert_eq!(rs.kind, "ReplicaSet");
        assert!(rs.namespaced);
        assert_eq!(rs.api_version(), "apps/v1");
        assert!(ResourceRef::of::<Pod>().namespaced);
        assert!(!ResourceRef::of::<Namespace>().namespaced);
        assert_eq!(ResourceRef::of::<Namespace>().api_version(), "v1");
    }

    #[test]
    fn client_error_predicates_follow_the_reason() {
        let e: ClientError = ApiError::not_found("apps", "replicasets", "web").into();
        assert!(e.is_not_found() && !e.is_conflict());
        assert_eq!(e.code, 404);
        assert!(ClientError::from(ApiError::modified("", "pods", "p")).is_conflict());
        assert!(ClientError::from(ApiError::already_exists("", "pods", "p")).is_already_exists());
        assert!(ClientError::from(ApiError::expired(1, 5)).is_expired());
    }

    #[tokio::test]
    async fn delete_with_a_uid_precondition_refuses_a_namesake() {
        let with_uid = |uid: &str| DeleteParams {
            uid: Some(uid.to_string()),
            ..DeleteParams::propagation("Background")
        };
        let api = TestApi::builder().build().await;
        let client = InProcessClient::new(api, "test");
        let r = ResourceRef::of::<ConfigMap>();
        {
            let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
            let created = client.create(&r, Some("default"), cm).await.unwrap();
            let stale = client
                .delete(&r, Some("default"), "c", &with_uid("not-its-uid"))
                .await
                .unwrap_err();
            assert!(stale.is_conflict(), "{stale:?}");
            assert!(client.get(&r, Some("default"), "c").await.is_ok());
            client
                .delete(&r, Some("default"), "c", &with_uid(json_uid(&created)))
                .await
                .unwrap();
            assert!(
                client
                    .get(&r, Some("default"), "c")
                    .await
                    .unwrap_err()
                    .is_not_found()
            );
        }
    }
}
