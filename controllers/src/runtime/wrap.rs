//! Wrapping a [`Client`] in another: one forwarding implementation for every
//! wrapper, so that each wrapper writes only what it adds.
//!
//! A wrapper (the trace, the fault layer, a test client that refuses some
//! creates or counts reads) holds an inner client and passes every call on
//! to it, doing something before or after a few of them. Writing that as
//! `impl Client` means eight forwarding methods, the same in every wrapper
//! but for one or two. Instead a wrapper implements [`WrapClient`]: it names
//! its inner client and overrides one or both hooks, [`WrapClient::around_read`]
//! and [`WrapClient::around_write`]; the blanket `impl<W: WrapClient> Client
//! for W` below does the forwarding, once.
//!
//! This is client-go's `rest.Config.WrapTransport` (a function from one
//! `http.RoundTripper` to another, used for debugging and metrics) one level
//! higher, at the verbs rather than the HTTP requests; or tower's middleware
//! (a `Layer` wraps a `Service` in another `Service`), with the client as
//! the service. A hook sees the call described as a
//! [`Call`] and gets the inner call as `next`, a closure it may run once or
//! not at all; it returns the future the caller awaits:
//!
//! ```text
//! caller ── create ──▶ blanket impl ── Call + next ──▶ around_write ── next() ──▶ inner.create
//!                                                       (trace: log the answer;
//!                                                        fault: fail, delay or pass)
//! ```
//!
//! `next` must be run before the hook returns, if at all (it borrows the
//! call's arguments), so the inner client is called in the order the caller
//! made the calls, as it would be without the wrapper.
//!
//! A wrapper that needs more than a hook (one that changes a watch's
//! stream, say) implements [`Client`] itself instead; a type cannot do both.

use futures::stream::BoxStream;
use serde_json::Value;

use super::client::{
    BoxFuture, Client, ClientResult, DeleteParams, ListParams, PatchType, ResourceRef, WatchEvent, json_name,
};

/// The verb of a [`Call`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// GET one object.
    Get,
    /// LIST.
    List,
    /// WATCH.
    Watch,
    /// CREATE, or a subresource create (a pod's binding) when
    /// [`Call::subresource`] is set.
    Create,
    /// UPDATE (PUT), of the object or of a subresource.
    Update,
    /// PATCH, of the object or of a subresource.
    Patch,
    /// DELETE.
    Delete,
}

impl Verb {
    /// `get`, `list`, `watch`, `create`, `update`, `patch` or `delete`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }
}

/// One call as a hook sees it: what is asked of which object. The bodies
/// (the object, the patch, the delete options) are not shown.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// What the call does.
    pub verb: Verb,
    /// The resource.
    pub resource: &'a ResourceRef,
    /// The namespace the caller passed.
    pub ns: Option<&'a str>,
    /// The object's name: the name asked for (`metadata.name` of the body for
    /// create and update, `""` for a generateName create); `""` for list and watch.
    pub name: &'a str,
    /// `status`, `scale`, `binding`, ... for a subresource update, patch or create.
    pub subresource: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// A call of `verb` on `resource`.
    pub fn new(
        verb: Verb,
        resource: &'a ResourceRef,
        ns: Option<&'a str>,
        name: &'a str,
        subresource: Option<&'a str>,
    ) -> Self {
        Call {
            verb,
            resource,
            ns,
            name,
            subresource,
        }
    }
}

/// What a write answers: the written object, or nothing (delete).
pub trait Written: Send {
    /// The object the server answered with, if any.
    fn object(&self) -> Option<&Value>;
}

impl Written for Value {
    fn object(&self) -> Option<&Value> {
        Some(self)
    }
}

impl Written for () {
    fn object(&self) -> Option<&Value> {
        None
    }
}

/// A client that passes every call on to [`WrapClient::inner`], through two
/// hooks that do nothing unless overridden. Every `W: WrapClient` is a
/// [`Client`]; see the module docs.
pub trait WrapClient: Send + Sync + 'static {
    /// The client every call goes on to.
    fn inner(&self) -> &dyn Client;

    /// Around every read (get, list, watch): runs `next`, the inner call.
    fn around_read<'a, T: Send + 'a>(
        &'a self,
        call: &Call<'_>,
        next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
    ) -> BoxFuture<'a, ClientResult<T>> {
        let _ = call;
        next()
    }

    /// Around every write (create, update, patch, delete, subresource
    /// create): runs `next`, the inner call.
    fn around_write<'a, T: Written + 'a>(
        &'a self,
        call: &Call<'_>,
        next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
    ) -> BoxFuture<'a, ClientResult<T>> {
        let _ = call;
        next()
    }
}

impl<W: WrapClient> Client for W {
    fn get(&self, r: &ResourceRef, ns: Option<&str>, name: &str) -> BoxFuture<'_, ClientResult<Value>> {
        let call = Call::new(Verb::Get, r, ns, name, None);
        self.around_read(&call, || self.inner().get(r, ns, name))
    }

    fn get_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let call = Call::new(Verb::Get, r, ns, name, Some(subresource));
        self.around_read(&call, || self.inner().get_subresource(r, ns, name, subresource))
    }

    fn list(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
    ) -> BoxFuture<'_, ClientResult<(Vec<Value>, String)>> {
        let call = Call::new(Verb::List, r, ns, "", None);
        self.around_read(&call, || self.inner().list(r, ns, p))
    }

    fn watch(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
        resource_version: &str,
    ) -> BoxFuture<'_, ClientResult<BoxStream<'static, WatchEvent>>> {
        let call = Call::new(Verb::Watch, r, ns, "", None);
        self.around_read(&call, || self.inner().watch(r, ns, p, resource_version))
    }

    fn create(&self, r: &ResourceRef, ns: Option<&str>, obj: Value) -> BoxFuture<'_, ClientResult<Value>> {
        let name = json_name(&obj).to_string();
        let call = Call::new(Verb::Create, r, ns, &name, None);
        self.around_write(&call, || self.inner().create(r, ns, obj))
    }

    fn update(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        obj: Value,
        subresource: Option<&str>,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let name = json_name(&obj).to_string();
        let call = Call::new(Verb::Update, r, ns, &name, subresource);
        self.around_write(&call, || self.inner().update(r, ns, obj, subresource))
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
        let call = Call::new(Verb::Patch, r, ns, name, subresource);
        let next = || self.inner().patch(r, ns, name, t, patch, subresource);
        self.around_write(&call, next)
    }

    fn create_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
        obj: Value,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        let call = Call::new(Verb::Create, r, ns, name, Some(subresource));
        let next = || self.inner().create_subresource(r, ns, name, subresource, obj);
        self.around_write(&call, next)
    }

    fn delete(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        params: &DeleteParams,
    ) -> BoxFuture<'_, ClientResult<()>> {
        let call = Call::new(Verb::Delete, r, ns, name, None);
        self.around_write(&call, || self.inner().delete(r, ns, name, params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::client::InProcessClient;
    use apiserver::testkit::TestApi;
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::{Arc, Mutex};

    /// One call passed on: read or write, verb, name, subresource.
    type Noted = (&'static str, Verb, String, Option<String>);

    /// Writes down every call it passes on.
    struct Recording {
        inner: Arc<dyn Client>,
        calls: Mutex<Vec<Noted>>,
    }

    impl Recording {
        fn note(&self, kind: &'static str, call: &Call<'_>) {
            let sub = call.subresource.map(str::to_string);
            let mut calls = self.calls.lock().unwrap();
            calls.push((kind, call.verb, call.name.to_string(), sub));
        }
    }

    impl WrapClient for Recording {
        fn inner(&self) -> &dyn Client {
            &*self.inner
        }

        fn around_read<'a, T: Send + 'a>(
            &'a self,
            call: &Call<'_>,
            next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
        ) -> BoxFuture<'a, ClientResult<T>> {
            self.note("read", call);
            next()
        }

        fn around_write<'a, T: Written + 'a>(
            &'a self,
            call: &Call<'_>,
            next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
        ) -> BoxFuture<'a, ClientResult<T>> {
            self.note("write", call);
            next()
        }
    }

    #[tokio::test]
    async fn every_call_reaches_the_inner_client_through_its_hook() {
        let api = TestApi::builder().build().await;
        let client = Recording {
            inner: Arc::new(InProcessClient::new(api, "test")),
            calls: Mutex::default(),
        };
        let r = ResourceRef::of::<ConfigMap>();
        let ns = Some("default");
        let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let created = client.create(&r, ns, cm).await.unwrap();
        client.get(&r, ns, "c").await.unwrap();
        let (items, _) = client.list(&r, ns, &ListParams::default()).await.unwrap();
        assert_eq!(items.len(), 1);
        drop(client.watch(&r, ns, &ListParams::default(), "").await.unwrap());
        client.update(&r, ns, created, None).await.unwrap();
        let patch = serde_json::json!({"data": {"k": "v"}});
        client
            .patch(&r, ns, "c", PatchType::Merge, patch, None)
            .await
            .unwrap();
        let refused = client
            .create_subresource(&r, ns, "c", "binding", serde_json::json!({}))
            .await
            .unwrap_err();
        assert_eq!(refused.code, 405, "the inner client's answer: {refused:?}");
        client
            .delete(&r, ns, "c", &DeleteParams::default())
            .await
            .unwrap();
        assert!(client.get(&r, ns, "c").await.unwrap_err().is_not_found());

        let calls = client.calls.lock().unwrap().clone();
        let c = || "c".to_string();
        assert_eq!(
            calls,
            [
                ("write", Verb::Create, c(), None),
                ("read", Verb::Get, c(), None),
                ("read", Verb::List, String::new(), None),
                ("read", Verb::Watch, String::new(), None),
                ("write", Verb::Update, c(), None),
                ("write", Verb::Patch, c(), None),
                ("write", Verb::Create, c(), Some("binding".to_string())),
                ("write", Verb::Delete, c(), None),
                ("read", Verb::Get, c(), None),
            ]
        );
    }
}
