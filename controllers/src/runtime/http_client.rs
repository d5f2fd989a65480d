//! The [`Client`] trait over plain HTTP: the Kubernetes REST API with JSON
//! bodies, so a component can run against a remote API server.
//!
//! Upstream: client-go `rest/request.go` (`Do`, `Watch`) and
//! `rest/watch/decoder.go`. Paths are built as upstream does
//! (`/api/v1/namespaces/{ns}/pods/{name}/status`,
//! `/apis/apps/v1/replicasets`); a failed request's `metav1.Status` becomes
//! a [`ClientError`]; a watch is the chunked response body, read as a
//! sequence of `{"type": ..., "object": ...}` JSON documents.
//!
//! Simplified: plain HTTP only (no TLS, no authentication, no kubeconfig),
//! one TCP connection per request (no pooling, no HTTP/2), JSON only (no
//! protobuf), no client-side rate limiting or retries.

use bytes::Bytes;
use futures::stream::BoxStream;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

use super::client::{
    BoxFuture, Client, ClientError, ClientResult, DeleteParams, ListParams, PatchType, ResourceRef,
    WatchEvent, json_name,
};

/// A [`Client`] for an API server at a plain-HTTP address.
#[derive(Clone, Debug)]
pub struct HttpClient {
    /// `host:port`, from the base URL.
    authority: String,
    /// A path prefix from the base URL ("" usually).
    prefix: String,
    /// `?fieldManager=` of every write.
    field_manager: String,
}

impl HttpClient {
    /// A client for `base_url` (e.g. `http://127.0.0.1:8080`), writing as
    /// `field_manager`.
    pub fn new(base_url: &str, field_manager: &str) -> Self {
        let rest = base_url.strip_prefix("http://").unwrap_or(base_url);
        let (authority, prefix) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        HttpClient {
            authority: authority.to_string(),
            prefix: prefix.to_string(),
            field_manager: field_manager.to_string(),
        }
    }

    /// `/api/v1[/namespaces/{ns}]/{plural}[/{name}[/{sub}]]`.
    fn path(&self, r: &ResourceRef, ns: Option<&str>, name: Option<&str>, sub: Option<&str>) -> String {
        let mut path = self.prefix.clone();
        if r.group.is_empty() {
            path.push_str(&format!("/api/{}", r.version));
        } else {
            path.push_str(&format!("/apis/{}/{}", r.group, r.version));
        }
        if let (true, Some(ns)) = (r.namespaced, ns) {
            path.push_str(&format!("/namespaces/{}", encode(ns)));
        }
        path.push('/');
        path.push_str(&r.plural);
        if let Some(name) = name {
            path.push('/');
            path.push_str(&encode(name));
        }
        if let Some(sub) = sub {
            path.push('/');
            path.push_str(sub);
        }
        path
    }

    /// The path of a write, with its `?fieldManager=...`.
    fn write_url(&self, r: &ResourceRef, ns: Option<&str>, name: Option<&str>, sub: Option<&str>) -> String {
        let path = self.path(r, ns, name, sub);
        format!("{path}?fieldManager={}", encode(&self.field_manager))
    }

    /// A request with a JSON `body` of `content_type`, answered with one JSON document.
    fn send_json(
        &self,
        method: Method,
        url: String,
        content_type: &'static str,
        body: Value,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        Box::pin(async move {
            let bytes = json_body(&body)?;
            self.call(method, &url, Some((content_type, bytes))).await
        })
    }

    /// Sends one request on a new connection; returns the response head and body.
    async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        body: Option<(&str, Vec<u8>)>,
    ) -> ClientResult<Response<Incoming>> {
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| ClientError::transport(format!("connecting to {}: {e}", self.authority)))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| ClientError::transport(format!("HTTP handshake: {e}")))?;
        // The connection task drives the socket; it ends when the response
        // body is read to its end or dropped (the sender is dropped below).
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("HTTP connection ended: {e}");
            }
        });
        let mut request = Request::builder()
            .method(method)
            .uri(path_and_query)
            .header("host", &self.authority)
            .header("accept", "application/json")
            .header("user-agent", "miniplane-controllers");
        let bytes = match body {
            Some((content_type, bytes)) => {
                request = request.header("content-type", content_type);
                Bytes::from(bytes)
            }
            None => Bytes::new(),
        };
        let request = request
            .body(Full::new(bytes))
            .map_err(|e| ClientError::transport(format!("building the request: {e}")))?;
        sender
            .send_request(request)
            .await
            .map_err(|e| ClientError::transport(format!("sending the request: {e}")))
    }

    /// A request whose answer is one JSON document; a 4xx/5xx becomes its Status.
    async fn call(
        &self,
        method: Method,
        path_and_query: &str,
        body: Option<(&str, Vec<u8>)>,
    ) -> ClientResult<Value> {
        let response = self.send(method, path_and_query, body).await?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| ClientError::transport(format!("reading the response: {e}")))?
            .to_bytes();
        let value: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(ClientError::decode)?
        };
        if status.is_client_error() || status.is_server_error() {
            return Err(error_of(status, &value));
        }
        Ok(value)
    }
}

/// The error a failed response stands for.
fn error_of(status: StatusCode, body: &Value) -> ClientError {
    if body.get("kind").and_then(Value::as_str) == Some("Status") {
        return ClientError::from_status(body, status.as_u16());
    }
    let reason = status.canonical_reason().unwrap_or("Unknown").replace(' ', "");
    ClientError::new(status.as_u16(), &reason, format!("the server answered {status}"))
}

/// Percent-encodes a path segment or query value (RFC 3986 unreserved kept).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `labelSelector=...&fieldSelector=...` (possibly empty), each prefixed by `&`.
fn selector_query(p: &ListParams) -> String {
    let mut q = String::new();
    if let Some(l) = &p.label_selector {
        q.push_str(&format!("&labelSelector={}", encode(l)));
    }
    if let Some(f) = &p.field_selector {
        q.push_str(&format!("&fieldSelector={}", encode(f)));
    }
    q
}

fn json_body(v: &Value) -> ClientResult<Vec<u8>> {
    serde_json::to_vec(v).map_err(ClientError::decode)
}

/// A watch event document (`{"type": "ADDED", "object": {...}}`).
fn parse_event(doc: Value) -> WatchEvent {
    let kind = doc.get("type").and_then(Value::as_str).unwrap_or("").to_string();
    let object = doc.get("object").cloned().unwrap_or(Value::Null);
    match kind.as_str() {
        "ADDED" => WatchEvent::Added(object),
        "MODIFIED" => WatchEvent::Modified(object),
        "DELETED" => WatchEvent::Deleted(object),
        "BOOKMARK" => {
            let rv = object
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            WatchEvent::Bookmark(rv.to_string())
        }
        "ERROR" => WatchEvent::Error(ClientError::from_status(&object, 500)),
        other => WatchEvent::Error(ClientError::decode(format!("unknown watch event type {other:?}"))),
    }
}

/// Takes every complete JSON document off the front of `buf`.
fn take_documents(buf: &mut Vec<u8>) -> Result<Vec<Value>, serde_json::Error> {
    let mut docs = Vec::new();
    let mut stream = serde_json::Deserializer::from_slice(buf).into_iter::<Value>();
    loop {
        match stream.next() {
            Some(Ok(doc)) => docs.push(doc),
            Some(Err(e)) if e.is_eof() => break,
            Some(Err(e)) => return Err(e),
            None => break,
        }
    }
    let consumed = stream.byte_offset();
    buf.drain(..consumed);
    Ok(docs)
}

/// Reading state of a watch response body.
struct WatchBody {
    body: Incoming,
    /// Bytes received but not yet a complete document.
    buf: Vec<u8>,
    /// Documents decoded but not yet handed out.
    ready: std::collections::VecDeque<Value>,
    done: bool,
}

/// The next event of a watch body; `None` when the server ends the stream.
async fn next_event(mut w: WatchBody) -> Option<(WatchEvent, WatchBody)> {
    loop {
        if let Some(doc) = w.ready.pop_front() {
            return Some((parse_event(doc), w));
        }
        if w.done {
            return None;
        }
        match w.body.frame().await {
            None => w.done = true,
            Some(Err(e)) => {
                tracing::debug!("watch body ended: {e}");
                w.done = true;
            }
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else { continue };
                w.buf.extend_from_slice(&data);
                match take_documents(&mut w.buf) {
                    Ok(docs) => w.ready.extend(docs),
                    Err(e) => {
                        w.done = true;
                        return Some((WatchEvent::Error(ClientError::decode(e)), w));
                    }
                }
            }
        }
    }
}

impl Client for HttpClient {
    fn get(&self, r: &ResourceRef, ns: Option<&str>, name: &str) -> BoxFuture<'_, ClientResult<Value>> {
        let path = self.path(r, ns, Some(name), None);
        Box::pin(async move { self.call(Method::GET, &path, None).await })
    }

    fn get_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let path = self.path(r, ns, Some(name), Some(subresource));
        Box::pin(async move { self.call(Method::GET, &path, None).await })
    }

    fn list(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
    ) -> BoxFuture<'_, ClientResult<(Vec<Value>, String)>> {
        let url = format!(
            "{}?{}",
            self.path(r, ns, None, None),
            selector_query(p).trim_start_matches('&')
        );
        let (kind, api_version) = (r.kind.clone(), r.api_version());
        Box::pin(async move {
            let list = self.call(Method::GET, &url, None).await?;
            let rv = list
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let mut items = Vec::new();
            if let Some(Value::Array(found)) = list.get("items") {
                for mut item in found.iter().cloned() {
                    // Items of a list carry no kind/apiVersion on the wire.
                    item["kind"] = json!(kind);
                    item["apiVersion"] = json!(api_version);
                    items.push(item);
                }
            }
            Ok((items, rv))
        })
    }

    fn watch(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
        resource_version: &str,
    ) -> BoxFuture<'_, ClientResult<BoxStream<'static, WatchEvent>>> {
        let url = format!(
            "{}?watch=true&allowWatchBookmarks=true&resourceVersion={}{}",
            self.path(r, ns, None, None),
            encode(resource_version),
            selector_query(p)
        );
        Box::pin(async move {
            let response = self.send(Method::GET, &url, None).await?;
            let status = response.status();
            if !status.is_success() {
                let bytes = response.into_body().collect().await.map(|b| b.to_bytes());
                let body = bytes.ok().and_then(|b| serde_json::from_slice(&b).ok());
                return Err(error_of(status, &body.unwrap_or(Value::Null)));
            }
            let state = WatchBody {
                body: response.into_body(),
                buf: Vec::new(),
                ready: Default::default(),
                done: false,
            };
            let stream: BoxStream<'static, WatchEvent> = Box::pin(futures::stream::unfold(state, next_event));
            Ok(stream)
        })
    }

    fn create(&self, r: &ResourceRef, ns: Option<&str>, obj: Value) -> BoxFuture<'_, ClientResult<Value>> {
        let url = self.write_url(r, ns, None, None);
        self.send_json(Method::POST, url, "application/json", obj)
    }

    fn update(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        obj: Value,
        subresource: Option<&str>,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let url = self.write_url(r, ns, Some(json_name(&obj)), subresource);
        self.send_json(Method::PUT, url, "application/json", obj)
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
        let url = self.write_url(r, ns, Some(name), subresource);
        self.send_json(Method::PATCH, url, t.content_type(), patch)
    }

    fn create_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
        obj: Value,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let url = self.write_url(r, ns, Some(name), Some(subresource));
        self.send_json(Method::POST, url, "application/json", obj)
    }

    /// DELETE with a `DeleteOptions` body (and no `fieldManager`).
    fn delete(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        params: &DeleteParams,
    ) -> BoxFuture<'_, ClientResult<()>> {
        let url = self.path(r, ns, Some(name), None);
        let call = self.send_json(Method::DELETE, url, "application/json", params.to_body());
        Box::pin(async move {
            call.await?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::client::Typed;
    use crate::runtime::informer::{Change, Informer};
    use apiserver::testkit::TestApi;
    use k8s_openapi::api::core::v1::{ConfigMap, Pod};
    use std::sync::Arc;
    use std::time::Duration;
    use store::Clock;
    use tokio::time::timeout;
    use tokio_util::sync::CancellationToken;

    #[test]
    fn paths_follow_the_rest_layout() {
        let c = HttpClient::new("http://127.0.0.1:8080/", "m");
        let pods = ResourceRef::of::<Pod>();
        assert_eq!(
            c.path(&pods, Some("default"), Some("p"), Some("status")),
            "/api/v1/namespaces/default/pods/p/status"
        );
        assert_eq!(c.path(&pods, None, None, None), "/api/v1/pods");
        let rs = ResourceRef::of::<k8s_openapi::api::apps::v1::ReplicaSet>();
        assert_eq!(
            c.path(&rs, Some("x"), None, None),
            "/apis/apps/v1/namespaces/x/replicasets"
        );
        let ns = ResourceRef::of::<k8s_openapi::api::core::v1::Namespace>();
        assert_eq!(
            c.path(&ns, Some("ignored"), Some("default"), None),
            "/api/v1/namespaces/default"
        );
        assert_eq!(encode("app in (a,b)"), "app%20in%20%28a%2Cb%29");
    }

    #[test]
    fn watch_documents_split_across_chunks_are_reassembled() {
        let mut buf = br#"{"type":"ADDED","object":{"a":1}}
{"type":"DEL"#
            .to_vec();
        let docs = take_documents(&mut buf).unwrap();
        assert_eq!(docs.len(), 1);
        buf.extend_from_slice(b"ETED\",\"object\":{}}\n");
        let docs = take_documents(&mut buf).unwrap();
        assert!(matches!(parse_event(docs[0].clone()), WatchEvent::Deleted(_)));
        assert!(buf.iter().all(u8::is_ascii_whitespace));
    }

    /// An API server on a free local port, as `miniplane up` serves it.
    async fn serve(shutdown: &CancellationToken) -> String {
        let api = TestApi::builder().build().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = apiserver::http::AppState::new(api, addr.to_string(), shutdown.clone());
        tokio::spawn(apiserver::http::serve(listener, state));
        format!("http://{addr}")
    }

    fn config_map(name: &str) -> ConfigMap {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
            "data": {"k": "v"},
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_binding_over_http_assigns_the_pod_once() {
        let shutdown = CancellationToken::new();
        let client: Arc<dyn Client> = Arc::new(HttpClient::new(&serve(&shutdown).await, "http-test"));
        let pods = Typed::<Pod>::new(client.clone());
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }))
        .unwrap();
        pods.create(Some("default"), &pod).await.unwrap();
        let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                             "target": {"kind": "Node", "name": "node-1"}});
        let r = ResourceRef::of::<Pod>();
        client
            .create_subresource(&r, Some("default"), "p", "binding", binding.clone())
            .await
            .unwrap();
        let bound = pods.get(Some("default"), "p").await.unwrap();
        assert_eq!(bound.spec.unwrap().node_name.as_deref(), Some("node-1"));
        let again = client
            .create_subresource(&r, Some("default"), "p", "binding", binding)
            .await
            .unwrap_err();
        assert!(again.is_conflict(), "{again:?}");
        shutdown.cancel();
    }

    #[tokio::test]
    async fn crud_and_errors_over_http() {
        let shutdown = CancellationToken::new();
        let client: Arc<dyn Client> = Arc::new(HttpClient::new(&serve(&shutdown).await, "http-test"));
        let cms = Typed::<ConfigMap>::new(client.clone());
        let created = cms.create(Some("default"), &config_map("one")).await.unwrap();
        assert!(created.metadata.uid.is_some());
        let err = cms.create(Some("default"), &config_map("one")).await.unwrap_err();
        assert!(err.is_already_exists(), "{err:?}");

        let mut stale = created.clone();
        let patch = json!({"data": {"k": "v2"}});
        let patched = cms
            .patch(Some("default"), "one", PatchType::Merge, patch)
            .await
            .unwrap();
        assert_eq!(patched.data.unwrap()["k"], "v2");
        stale.data = Some([("k".to_string(), "v3".to_string())].into());
        assert!(cms.update(&stale).await.unwrap_err().is_conflict());

        let listed = cms.list(Some("default"), &ListParams::default()).await.unwrap();
        assert_eq!(listed.len(), 1);
        cms.delete(Some("default"), "one").await.unwrap();
        let err = cms.get(Some("default"), "one").await.unwrap_err();
        assert!(err.is_not_found() && err.code == 404, "{err:?}");
        shutdown.cancel();
    }

    #[tokio::test]
    async fn a_delete_with_a_stale_uid_is_refused_over_http() {
        let shutdown = CancellationToken::new();
        let client: Arc<dyn Client> = Arc::new(HttpClient::new(&serve(&shutdown).await, "http-test"));
        let cms = Typed::<ConfigMap>::new(client.clone());
        let created = cms.create(Some("default"), &config_map("one")).await.unwrap();
        let r = ResourceRef::of::<ConfigMap>();
        let with_uid = |uid: &str| DeleteParams {
            uid: Some(uid.to_string()),
            ..DeleteParams::propagation("Background")
        };
        let stale = client
            .delete(&r, Some("default"), "one", &with_uid("not-its-uid"))
            .await
            .unwrap_err();
        assert!(stale.is_conflict(), "{stale:?}");
        let uid = created.metadata.uid.unwrap();
        client
            .delete(&r, Some("default"), "one", &with_uid(&uid))
            .await
            .unwrap();
        assert!(cms.get(Some("default"), "one").await.unwrap_err().is_not_found());
        shutdown.cancel();
    }

    #[tokio::test]
    async fn an_informer_over_http_sees_changes() {
        let shutdown = CancellationToken::new();
        let client: Arc<dyn Client> = Arc::new(HttpClient::new(&serve(&shutdown).await, "http-test"));
        let cms = Typed::<ConfigMap>::new(client.clone());
        cms.create(Some("default"), &config_map("before")).await.unwrap();
        let informer = Informer::<ConfigMap>::new(client, Clock::system(), None);
        let store = informer.store();
        let mut rx = informer.subscribe();
        let stop = CancellationToken::new();
        let task = informer.run(stop.clone());
        timeout(Duration::from_secs(5), store.wait_synced())
            .await
            .unwrap();
        assert!(store.get(Some("default"), "before").is_some());
        cms.create(Some("default"), &config_map("after")).await.unwrap();
        loop {
            let change = timeout(Duration::from_secs(5), rx.recv()).await.unwrap().unwrap();
            if let Change::Added(cm) = change
                && cm.metadata.name.as_deref() == Some("after")
            {
                break;
            }
        }
        stop.cancel();
        task.await.unwrap();
        shutdown.cancel();
    }
}
