//! Recording Events: what `kubectl describe` and `kubectl get events` show.
//!
//! Upstream: client-go `tools/record/event.go` (the recorder and broadcaster)
//! and `events_cache.go` (the correlator). A component records "this
//! happened to that object"; the recorder writes a core/v1 Event, and when
//! the same thing happens again (same object, type, reason, message and
//! source) it bumps `count` and `lastTimestamp` on the existing Event
//! instead of creating another — the aggregation behind "x5 over 2m".
//!
//! As upstream, the correlator remembers the last 4,096 Events it wrote (an
//! LRU), and a repeat whose Event has meanwhile expired (the API server's
//! Event TTL) creates it again with the running count.
//!
//! Simplified: no spam filter, no "similar events" combining, and a write
//! that fails is logged and dropped, as upstream's sink does after its retries.
//! Recording never blocks or fails the caller: each write runs on a task.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use lru::LruCache;
use serde_json::{Value, json};
use store::Clock;

use super::client::{Client, PatchType, ResourceRef};

/// Events the correlator remembers (upstream `maxLruCacheEntries`).
const MAX_LRU_CACHE_ENTRIES: usize = 4096;

/// `Normal` or `Warning`, the Event's `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Something expected happened.
    Normal,
    /// Something may need attention.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// The object an Event is about (`involvedObject`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// e.g. `apps/v1`.
    pub api_version: String,
    /// e.g. `Deployment`.
    pub kind: String,
    /// Namespace; `None` (or empty) for a cluster-scoped object, whose
    /// Events go to `default`.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// uid.
    pub uid: String,
    /// Part of the object, e.g. `spec.containers{nginx}`.
    pub field_path: Option<String>,
}

impl ObjectRef {
    /// The reference to a typed object.
    pub fn of<K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>>(obj: &K) -> Self {
        let meta = obj.metadata();
        ObjectRef {
            api_version: K::API_VERSION.to_string(),
            kind: K::KIND.to_string(),
            namespace: meta.namespace.clone(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
            field_path: None,
        }
    }

    /// The same reference, pointing at a part of the object.
    pub fn with_field_path(mut self, path: impl Into<String>) -> Self {
        self.field_path = Some(path.into());
        self
    }
}

/// What makes two Events "the same" for aggregation.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Fingerprint {
    object: ObjectRef,
    type_: EventType,
    reason: String,
    message: String,
}

/// An Event already written: its name and how often it happened.
#[derive(Clone)]
struct Seen {
    namespace: String,
    name: String,
    count: i64,
}

/// Records Events for one component. Cheap to clone.
#[derive(Clone)]
pub struct Recorder {
    client: Arc<dyn Client>,
    clock: Clock,
    /// `source.component`, e.g. `deployment-controller`, `kubelet`.
    component: String,
    /// `source.host`, for the kubelet.
    host: Option<String>,
    /// The latest Events written, by fingerprint. Held only to read or
    /// update one entry, never across an await.
    seen: Arc<Mutex<LruCache<Fingerprint, Seen>>>,
}

impl Recorder {
    /// A recorder writing through `client`.
    pub fn new(client: Arc<dyn Client>, clock: Clock, component: &str, host: Option<&str>) -> Self {
        Recorder {
            client,
            clock,
            component: component.to_string(),
            host: host.map(str::to_string),
            // Unbounded, trimmed by hand in `bump`: a bounded LruCache allocates
            // its whole capacity up front, and every simulated node has a recorder.
            seen: Arc::new(Mutex::new(LruCache::unbounded())),
        }
    }

    /// Records that `reason` happened to `object`. Returns at once; the
    /// write happens on a task.
    pub fn record(&self, object: &ObjectRef, type_: EventType, reason: &str, message: &str) {
        let fingerprint = Fingerprint {
            object: object.clone(),
            type_,
            reason: reason.into(),
            message: message.into(),
        };
        let now = rfc3339(&self.clock);
        let (seen, first) = self.bump(&fingerprint);
        let recorder = self.clone();
        // The Event's write is journaled as caused by the sync recording it.
        let cause = store::journal::current_cause().unwrap_or(0);
        tokio::spawn(store::journal::caused_by(cause, async move {
            let result = match first {
                true => recorder.write_new(&fingerprint, &seen, &now).await,
                false => recorder.write_again(&fingerprint, &seen, &now).await,
            };
            if let Err(e) = result {
                tracing::warn!(reason = %fingerprint.reason, error = %e, "could not record event");
            }
        }));
    }

    /// Counts one more occurrence: the Event's entry, and whether it is the first.
    fn bump(&self, fingerprint: &Fingerprint) -> (Seen, bool) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = seen.get_mut(fingerprint) {
            entry.count += 1;
            return (entry.clone(), false);
        }
        // Upstream: `namespace = metav1.NamespaceDefault` for an object
        // without one; the API server accepts such an Event only there.
        let namespace = fingerprint
            .object
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".into());
        let entry = Seen {
            namespace,
            name: event_name(&fingerprint.object.name, &self.clock),
            count: 1,
        };
        seen.put(fingerprint.clone(), entry.clone());
        if seen.len() > MAX_LRU_CACHE_ENTRIES {
            seen.pop_lru();
        }
        (entry, true)
    }

    async fn write_new(&self, f: &Fingerprint, seen: &Seen, now: &str) -> Result<(), super::ClientError> {
        let o = &f.object;
        let mut involved = json!({
            "apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
        });
        if let Some(ns) = o.namespace.as_deref().filter(|ns| !ns.is_empty()) {
            involved["namespace"] = json!(ns);
        }
        if let Some(path) = &o.field_path {
            involved["fieldPath"] = json!(path);
        }
        let mut source = json!({"component": self.component});
        if let Some(host) = &self.host {
            source["host"] = json!(host);
        }
        let event = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": seen.name, "namespace": seen.namespace},
            "involvedObject": involved,
            "type": f.type_.as_str(), "reason": f.reason, "message": f.message,
            "source": source, "count": seen.count,
            "firstTimestamp": now, "lastTimestamp": now,
            "reportingComponent": self.component,
            "reportingInstance": self.host.clone().unwrap_or_default(),
        });
        let r = ResourceRef::of::<k8s_openapi::api::core::v1::Event>();
        self.client
            .create(&r, Some(&seen.namespace), event)
            .await
            .map(|_| ())
    }

    /// A repeat: bump the existing Event. When it is missing — expired, or
    /// its first create still on the way — create it; a create that loses
    /// to that first one falls back to the bump.
    async fn write_again(&self, f: &Fingerprint, seen: &Seen, now: &str) -> Result<(), super::ClientError> {
        match self.write_repeat(seen, now).await {
            Err(e) if e.is_not_found() => {}
            done => return done,
        }
        match self.write_new(f, seen, now).await {
            Err(e) if e.is_already_exists() => self.write_repeat(seen, now).await,
            created => created,
        }
    }

    async fn write_repeat(&self, seen: &Seen, now: &str) -> Result<(), super::ClientError> {
        let r = ResourceRef::of::<k8s_openapi::api::core::v1::Event>();
        let patch: Value = json!({"count": seen.count, "lastTimestamp": now});
        self.client
            .patch(
                &r,
                Some(&seen.namespace),
                &seen.name,
                PatchType::Merge,
                patch,
                None,
            )
            .await
            .map(|_| ())
    }
}

/// `<object>.<hex of the nanoseconds now>`, as upstream names Events. A
/// process-wide sequence is added so that two Events recorded at the same
/// (simulated, possibly paused) instant still get different names.
fn event_name(object: &str, clock: &Clock) -> String {
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let nanos = clock
        .now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let unique = nanos.wrapping_add(u128::from(SEQUENCE.fetch_add(1, Ordering::Relaxed)));
    format!("{object}.{unique:x}")
}

/// Now as `metav1.Time` (RFC 3339, whole seconds, UTC).
fn rfc3339(clock: &Clock) -> String {
    apiserver::api::format_time(clock.now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::client::{InProcessClient, json_name};
    use apiserver::testkit::TestApi;
    use std::time::Duration;

    async fn client(clock: &Clock) -> Arc<dyn Client> {
        let api = TestApi::builder().clock(clock.clone()).build().await;
        Arc::new(InProcessClient::new(api, "test"))
    }

    fn events_ref() -> ResourceRef {
        ResourceRef::of::<k8s_openapi::api::core::v1::Event>()
    }

    /// Waits (bounded) until the namespace holds an Event with `count`.
    async fn wait_for_count(client: &Arc<dyn Client>, clock: &Clock, count: i64) -> Vec<Value> {
        for _ in 0..500 {
            let (items, _) = client
                .list(&events_ref(), Some("default"), &Default::default())
                .await
                .unwrap();
            if items.iter().any(|e| e["count"] == count) {
                return items;
            }
            clock.sleep(Duration::from_millis(5)).await;
        }
        panic!("no event reached count {count}");
    }

    /// The Events in `default` once there are `n` of them (or after 2.5 s).
    async fn wait_for_events(client: &Arc<dyn Client>, clock: &Clock, n: usize) -> Vec<Value> {
        let mut items = Vec::new();
        for _ in 0..500 {
            items = client
                .list(&events_ref(), Some("default"), &Default::default())
                .await
                .unwrap()
                .0;
            if items.len() == n {
                break;
            }
            clock.sleep(Duration::from_millis(5)).await;
        }
        items
    }

    #[tokio::test]
    async fn repeats_are_aggregated_into_one_event_with_a_count() {
        let clock = Clock::system();
        let client = client(&clock).await;
        let recorder = Recorder::new(client.clone(), clock.clone(), "deployment-controller", None);
        let object = ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("default".into()),
            name: "web".into(),
            uid: "u1".into(),
            field_path: None,
        };
        recorder.record(
            &object,
            EventType::Normal,
            "ScalingReplicaSet",
            "Scaled up replica set web-1 from 0 to 3",
        );
        wait_for_count(&client, &clock, 1).await;
        recorder.record(
            &object,
            EventType::Normal,
            "ScalingReplicaSet",
            "Scaled up replica set web-1 from 0 to 3",
        );
        let items = wait_for_count(&client, &clock, 2).await;
        assert_eq!(items.len(), 1, "{items:?}");
        let e = &items[0];
        assert_eq!(e["involvedObject"]["kind"], "Deployment");
        assert_eq!(e["source"]["component"], "deployment-controller");
        assert_eq!(e["type"], "Normal");
        recorder.record(&object, EventType::Warning, "Other", "a different event");
        let items = wait_for_events(&client, &clock, 2).await;
        assert_eq!(items.len(), 2);
    }

    #[tokio::test]
    async fn events_about_cluster_scoped_objects_go_to_default() {
        let clock = Clock::system();
        let client = client(&clock).await;
        let recorder = Recorder::new(client.clone(), clock.clone(), "kubelet", Some("node-1"));
        let node = ObjectRef {
            api_version: "v1".into(),
            kind: "Node".into(),
            namespace: None,
            name: "node-1".into(),
            uid: "node-1".into(),
            field_path: None,
        };
        // An empty namespace is a cluster-scoped object too.
        let namespace = ObjectRef {
            kind: "Namespace".into(),
            namespace: Some(String::new()),
            name: "shop".into(),
            ..node.clone()
        };
        recorder.record(&node, EventType::Normal, "Starting", "Starting kubelet.");
        recorder.record(&namespace, EventType::Normal, "Seen", "namespace shop");
        let items = wait_for_events(&client, &clock, 2).await;
        assert_eq!(items.len(), 2, "{items:?}");
        for e in &items {
            assert_eq!(e["metadata"]["namespace"], "default");
            assert!(e["involvedObject"].get("namespace").is_none(), "{e}");
        }
    }

    #[tokio::test]
    async fn a_repeat_of_an_expired_event_creates_it_again_with_the_count() {
        let clock = Clock::system();
        let client = client(&clock).await;
        let recorder = Recorder::new(client.clone(), clock.clone(), "kubelet", Some("node-1"));
        let object = ObjectRef {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: Some("default".into()),
            name: "web-1".into(),
            uid: "u1".into(),
            field_path: None,
        };
        recorder.record(
            &object,
            EventType::Warning,
            "BackOff",
            "Back-off restarting failed container",
        );
        let items = wait_for_count(&client, &clock, 1).await;
        // The API server's Event TTL removes it.
        let name = json_name(&items[0]).to_string();
        client
            .delete(&events_ref(), Some("default"), &name, &Default::default())
            .await
            .unwrap();
        recorder.record(
            &object,
            EventType::Warning,
            "BackOff",
            "Back-off restarting failed container",
        );
        let items = wait_for_count(&client, &clock, 2).await;
        assert_eq!(items.len(), 1, "{items:?}");
        assert_eq!(json_name(&items[0]), name, "the same Event, created again");
    }
}
