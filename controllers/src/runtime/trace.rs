//! The teaching trace: what a controller does, one line per step.
//!
//! With `miniplane up --trace controllers` (the tracing filter
//! `miniplane::trace=info`), every controller logs, under the target
//! [`TARGET`]:
//!
//! ```text
//! informer ReplicaSet ADDED default/web-7d4b9 #41
//! [replicaset] enqueue default/web-7d4b9 #42 ← #41
//! [replicaset] sync default/web-7d4b9 start #43 ← #42
//! [replicaset]   create pods default/web-7d4b9-x2k1p: ok
//! [replicaset]   update replicasets/status default/web-7d4b9: ok
//! [replicaset] sync default/web-7d4b9 end after 3ms: Done
//! ```
//!
//! The informer, the [`super::WorkQueue`] (when made with
//! [`super::WorkQueue::named`]) and [`super::run_workers`] log their steps;
//! the writes come from a [`TracingClient`] wrapped around the controller's
//! client. `#id ← #cause` are the steps' entries in the causal journal
//! ([`store::journal`], `/debug/journal`), when it records: the journal is
//! the whole story (the writes' causes and what they changed), the trace
//! its readable tail. There is no upstream counterpart: client-go logs at
//! `-v=4` are close, but scattered.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use store::journal::EntryId;

use super::client::{BoxFuture, Client, ClientResult, ResourceRef, json_name};
use super::meta::object_key;
use super::wrap::{Call, Verb, WrapClient, Written};

/// The `tracing` target of every trace line.
pub const TARGET: &str = "miniplane::trace";

/// Whether trace lines are being recorded (checked before formatting them).
pub fn enabled() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// A key as the trace prints it: `default/web`, not `"default/web"`.
pub fn show<K: Debug + ?Sized>(key: &K) -> String {
    let s = format!("{key:?}");
    match s.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) => inner.to_string(),
        None => s,
    }
}

/// ` #id ← #cause`, ` #id`, or nothing when the journal is off.
pub fn ids(id: EntryId, cause: Option<EntryId>) -> String {
    match (id, cause) {
        (0, _) => String::new(),
        (id, Some(cause)) => format!(" #{id} ← #{cause}"),
        (id, None) => format!(" #{id}"),
    }
}

/// An informer delivered a change (`ADDED`, `MODIFIED`, `DELETED`, `RESYNC`),
/// recorded as journal entry `event`.
pub fn informer_event(kind: &str, what: &str, key: &str, event: EntryId) {
    if enabled() {
        let ids = ids(event, None);
        tracing::info!(target: TARGET, "informer {kind} {what} {key}{ids}");
    }
}

/// An informer relisted (at start, or after a 410 Expired).
pub fn informer_listed(kind: &str, count: usize, resource_version: &str) {
    if enabled() {
        tracing::info!(target: TARGET, "informer {kind} listed {count} at rv {resource_version}");
    }
}

/// A key went into a controller's queue (journal entry `id`, caused by `cause`).
pub fn enqueued<K: Debug + ?Sized>(controller: &str, key: &K, id: EntryId, cause: Option<EntryId>) {
    if enabled() {
        let ids = ids(id, cause);
        tracing::info!(target: TARGET, "[{controller}] enqueue {}{ids}", show(key));
    }
}

/// A worker took a key (journal entry `id`, caused by `cause`).
pub fn sync_start<K: Debug + ?Sized>(controller: &str, key: &K, id: EntryId, cause: Option<EntryId>) {
    if enabled() {
        let ids = ids(id, cause);
        tracing::info!(target: TARGET, "[{controller}] sync {} start{ids}", show(key));
    }
}

/// A sync ended; `outcome` is `Done`, `RequeueAfter(..)` or the error.
pub fn sync_end<K: Debug + ?Sized>(controller: &str, key: &K, took: Duration, outcome: &str) {
    if enabled() {
        tracing::info!(target: TARGET, "[{controller}] sync {} end after {took:?}: {outcome}", show(key));
    }
}

/// A write the sync made.
fn write<T>(controller: &str, verb: &str, what: &str, key: &str, result: &ClientResult<T>) {
    if !enabled() {
        return;
    }
    match result {
        Ok(_) => tracing::info!(target: TARGET, "[{controller}]   {verb} {what} {key}: ok"),
        Err(e) => tracing::info!(
            target: TARGET,
            "[{controller}]   {verb} {what} {key}: {} ({})",
            e.reason,
            e.message
        ),
    }
}

/// `pods`, or `replicasets/status` for a subresource.
fn resource_path(r: &ResourceRef, subresource: Option<&str>) -> String {
    match subresource {
        Some(sub) => format!("{}/{sub}", r.plural),
        None => r.plural.clone(),
    }
}

/// A [`Client`] that traces every write (create, update, patch, delete) it
/// passes on under a controller's name. Reads are passed on silently.
pub struct TracingClient {
    inner: Arc<dyn Client>,
    controller: String,
}

impl TracingClient {
    /// Wraps `inner`; writes are traced as `[controller]`.
    pub fn new(inner: Arc<dyn Client>, controller: &str) -> Self {
        TracingClient {
            inner,
            controller: controller.to_string(),
        }
    }

    /// `inner` wrapped when the trace is on, `inner` itself otherwise.
    pub fn wrap(inner: Arc<dyn Client>, controller: &str) -> Arc<dyn Client> {
        if enabled() {
            Arc::new(TracingClient::new(inner, controller))
        } else {
            inner
        }
    }
}

impl WrapClient for TracingClient {
    fn inner(&self) -> &dyn Client {
        &*self.inner
    }

    /// Logs the write's answer, e.g. `[replicaset]   create pods default/web-x2k1p: ok`.
    fn around_write<'a, T: Written + 'a>(
        &'a self,
        call: &Call<'_>,
        next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
    ) -> BoxFuture<'a, ClientResult<T>> {
        let verb = call.verb.as_str();
        let what = resource_path(call.resource, call.subresource);
        let ns = call.ns.map(str::to_string);
        let requested = call.name.to_string();
        // The server picks the name of a generateName create.
        let named_by_server = call.verb == Verb::Create && call.subresource.is_none();
        let future = next();
        Box::pin(async move {
            let result = future.await;
            let name = match result.as_ref().map(Written::object) {
                Ok(Some(o)) if named_by_server => json_name(o),
                _ => &requested,
            };
            write(
                &self.controller,
                verb,
                &what,
                &object_key(ns.as_deref(), name),
                &result,
            );
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::client::{InProcessClient, Typed};
    use crate::runtime::controller::{Action, ReconcileError, Reconciler, process_next_work_item};
    use crate::runtime::workqueue::WorkQueue;
    use apiserver::testkit::TestApi;
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::Mutex;
    use store::Clock;

    /// Collects formatted log output.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Creates one config map through the client it was given.
    struct CreatesOne(Typed<ConfigMap>);

    impl Reconciler for CreatesOne {
        type Key = String;
        fn name(&self) -> &str {
            "demo"
        }
        fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
            let cm: ConfigMap = serde_json::from_value(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": key, "namespace": "default"},
            }))
            .unwrap();
            Box::pin(async move {
                self.0.create(Some("default"), &cm).await?;
                Ok(Action::Done)
            })
        }
    }

    #[tokio::test]
    async fn the_trace_shows_enqueue_sync_writes_and_outcome() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("miniplane::trace=info")
            .with_writer(move || writer.clone())
            .without_time()
            .with_target(false)
            .with_level(false)
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        assert!(enabled());

        let clock = Clock::system();
        let api = TestApi::builder().clock(clock.clone()).build().await;
        let client = TracingClient::wrap(Arc::new(InProcessClient::new(api, "demo")), "demo");
        let reconciler = CreatesOne(Typed::new(client));
        let journal_clock = clock.clone();
        let queue = WorkQueue::named(clock, "demo");
        queue.add("cm-1".to_string());
        let key = queue.get().await.unwrap();
        process_next_work_item(&queue, &reconciler, &key).await;
        process_next_work_item(&queue, &reconciler, &key).await; // AlreadyExists: retried
        queue.done(&key);

        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let enqueue: u64 = lines[0]
            .strip_prefix("[demo] enqueue cm-1 #")
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("{}", lines[0]));
        let sync = enqueue + 1;
        assert_eq!(lines[1], format!("[demo] sync cm-1 start #{sync} ← #{enqueue}"));
        // The create is journaled as caused by the sync.
        let journal = journal_clock.journal();
        let write = journal.get(sync + 1).expect("the create's entry");
        assert_eq!(
            (write.step, write.cause),
            (store::journal::Step::Write, Some(sync))
        );
        assert_eq!(write.actor, "demo");
        assert_eq!(lines[2], "[demo]   create configmaps default/cm-1: ok");
        assert!(lines[3].starts_with("[demo] sync cm-1 end after ") && lines[3].ends_with(": Done"));
        assert!(lines[5].starts_with("[demo]   create configmaps default/cm-1: AlreadyExists"));
        assert!(lines[6].contains("error, retry 1"), "{text}");
    }

    #[test]
    fn keys_print_without_quotes() {
        assert_eq!(show("default/web"), "default/web");
        assert_eq!(show(&String::from("a")), "a");
        assert_eq!(show(&("ns", 3)), "(\"ns\", 3)");
    }
}
