//! The shared informer: one list + watch per kind, an indexed cache every
//! controller reads, and a stream of changes every controller hears.
//!
//! Upstream: client-go `shared_informer.go` (one informer, many handlers,
//! resync) and `thread_safe_store.go` (the cache and its indexes); the
//! list-and-watch loop (`reflector.go`) is [`super::reflector`], which
//! feeds the cache through [`Sink`].
//!
//! Expected flow ([`Informer::run`]):
//!
//! ```text
//! list ──▶ replace the cache (Added / Updated / Deleted to subscribers) ──▶ synced
//!   ▲                                                                        │
//!   │ 410 Expired (with backoff)                                             ▼
//!   └──────────────────────────── watch from the last resourceVersion ◀── stream ends: watch again
//!                                   │ each event: update cache, then tell every subscriber
//!                                   │ every `resync`: Updated { old == new } for each cached object
//! ```
//!
//! Guarantees:
//!
//! - The cache is updated *before* subscribers hear of a change, so a
//!   controller woken by a change finds it in the cache.
//! - Every subscriber gets every change, in order (one unbounded channel each).
//! - A watch that ends resumes from the last resourceVersion seen; one that
//!   is too old (410) relists, and the relist's differences reach the
//!   subscribers as ordinary changes (objects deleted meanwhile as `Deleted`).
//!
//! Simplified: no DeltaFIFO (the reflector writes the cache and notifies
//! directly), no tombstones (a `Deleted` always carries the last known
//! object), no paged lists, no watch-list streaming; subscribers must
//! subscribe before [`Informer::run`] or get the cache as `Added` events
//! when they join.

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use k8s_openapi::Metadata;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;
use store::Clock;
use store::journal::{EntryId, ObjectRef as JournalRef, Record, Step};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::client::{Client, ListParams, ResourceRef};
use super::meta::{controller_uid, key_of, object_key};
use super::reflector::{Reflector, Sink};
use super::trace;

/// The built-in index of objects by namespace.
pub const NAMESPACE_INDEX: &str = "namespace";
/// The built-in index of objects by the uid of their controller ownerReference.
pub const OWNER_INDEX: &str = "owner";
/// The built-in index of pods by `spec.nodeName`.
pub const NODE_INDEX: &str = "node";

/// What an informer can cache: a k8s-openapi object with standard metadata.
pub trait Object:
    k8s_openapi::Resource
    + Metadata<Ty = ObjectMeta>
    + serde::de::DeserializeOwned
    + Clone
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> Object for K where
    K: k8s_openapi::Resource
        + Metadata<Ty = ObjectMeta>
        + serde::de::DeserializeOwned
        + Clone
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// One change, as a subscriber hears it. Objects are shared and immutable:
/// clone before modifying.
#[derive(Debug)]
pub enum Change<K> {
    /// A new object (also: every cached object, for a late subscriber).
    Added(Arc<K>),
    /// A changed object. `old` and `new` are the same object on a resync.
    Updated {
        /// The state before.
        old: Arc<K>,
        /// The state now (also in the cache).
        new: Arc<K>,
    },
    /// A deleted object, in its last known state.
    Deleted(Arc<K>),
}

impl<K> Change<K> {
    /// The object: the new state, or the last one of a deleted object.
    pub fn object(&self) -> &Arc<K> {
        match self {
            Change::Added(o) | Change::Updated { new: o, .. } | Change::Deleted(o) => o,
        }
    }
}

impl<K> Clone for Change<K> {
    fn clone(&self) -> Self {
        match self {
            Change::Added(o) => Change::Added(o.clone()),
            Change::Updated { old, new } => Change::Updated {
                old: old.clone(),
                new: new.clone(),
            },
            Change::Deleted(o) => Change::Deleted(o.clone()),
        }
    }
}

/// A change with the journal entry of its delivery ([`store::journal`]
/// `Event`; 0 when the journal is off): what [`Informer::subscribe_caused`]
/// hands out, so that a handler can run with the delivery as its cause
/// ([`store::journal::caused_by_sync`]) and the keys it enqueues say why.
#[derive(Debug)]
pub struct Delivered<K> {
    /// The change.
    pub change: Change<K>,
    /// The `Event` entry recorded for it.
    pub event: EntryId,
}

/// One subscriber's end of the changes.
enum Subscriber<K> {
    /// [`Informer::subscribe`]: the change only.
    Plain(mpsc::UnboundedSender<Change<K>>),
    /// [`Informer::subscribe_caused`]: the change and its journal entry.
    Caused(mpsc::UnboundedSender<Delivered<K>>),
}

impl<K> Subscriber<K> {
    /// Sends; false when the receiver is gone.
    fn send(&self, change: &Change<K>, event: EntryId) -> bool {
        match self {
            Subscriber::Plain(tx) => tx.send(change.clone()).is_ok(),
            Subscriber::Caused(tx) => tx
                .send(Delivered {
                    change: change.clone(),
                    event,
                })
                .is_ok(),
        }
    }
}

/// An index function: the index values of an object (client-go `IndexFunc`).
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

// ---------------------------------------------------------------------------
// The cache (thread_safe_store.go)
// ---------------------------------------------------------------------------

/// The objects and their indexes (client-go `threadSafeMap`).
struct Cache<K> {
    /// Every object by `namespace/name`. A `BTreeMap`, so `list` is in key order.
    objects: BTreeMap<String, Arc<K>>,
    /// The index functions by index name.
    indexers: BTreeMap<String, IndexFn<K>>,
    /// Per index name, per index value, the objects with that value by key
    /// (holding the `Arc`s here spares `by_index` a lookup per object).
    indices: HashMap<String, HashMap<String, BTreeMap<String, Arc<K>>>>,
}

impl<K> Cache<K> {
    /// Adds or replaces `obj`; returns the previous state.
    fn put(&mut self, key: String, obj: Arc<K>) -> Option<Arc<K>> {
        let old = self.objects.insert(key.clone(), obj.clone());
        if let Some(old) = &old {
            self.unindex(&key, old);
        }
        self.index(&key, &obj);
        old
    }

    /// Removes `key`; returns its last state.
    fn remove(&mut self, key: &str) -> Option<Arc<K>> {
        let old = self.objects.remove(key)?;
        self.unindex(key, &old);
        Some(old)
    }

    fn index(&mut self, key: &str, obj: &Arc<K>) {
        for (name, f) in &self.indexers {
            let values = self.indices.entry(name.clone()).or_default();
            for value in f(obj) {
                values
                    .entry(value)
                    .or_default()
                    .insert(key.to_string(), obj.clone());
            }
        }
    }

    fn unindex(&mut self, key: &str, obj: &K) {
        for (name, f) in &self.indexers {
            let Some(values) = self.indices.get_mut(name) else {
                continue;
            };
            for value in f(obj) {
                if let Some(keys) = values.get_mut(&value) {
                    keys.remove(key);
                    if keys.is_empty() {
                        values.remove(&value);
                    }
                }
            }
        }
    }

    /// Adds an index and fills it from the current objects.
    fn add_indexer(&mut self, name: &str, f: IndexFn<K>) {
        let mut values: HashMap<String, BTreeMap<String, Arc<K>>> = HashMap::new();
        for (key, obj) in &self.objects {
            for value in f(obj) {
                values.entry(value).or_default().insert(key.clone(), obj.clone());
            }
        }
        self.indices.insert(name.to_string(), values);
        self.indexers.insert(name.to_string(), f);
    }
}

/// A read handle on an informer's cache (client-go `Indexer` / lister).
/// Cheap to clone; every controller that watches the kind holds one.
pub struct Store<K> {
    /// The cache. A std `RwLock`: the reflector writes for one change at a
    /// time, readers copy out `Arc`s; never held across an `.await`.
    cache: Arc<RwLock<Cache<K>>>,
    /// Becomes `true` after the first list is in the cache. The informer
    /// holds the sender; when it is dropped before that, `wait_synced` returns.
    synced: watch::Receiver<bool>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store {
            cache: self.cache.clone(),
            synced: self.synced.clone(),
        }
    }
}

impl<K: Object> Store<K> {
    fn read(&self) -> RwLockReadGuard<'_, Cache<K>> {
        // Each write leaves the cache consistent, so a poisoned lock is usable.
        self.cache.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Cache<K>> {
        self.cache.write().unwrap_or_else(|p| p.into_inner())
    }

    /// One object (`ns = None` for a cluster-scoped one).
    pub fn get(&self, ns: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.get_by_key(&object_key(ns, name))
    }

    /// One object by `namespace/name`.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.read().objects.get(key).cloned()
    }

    /// Every object, in key order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.read().objects.values().cloned().collect()
    }

    /// Every object key, in order.
    pub fn keys(&self) -> Vec<String> {
        self.read().objects.keys().cloned().collect()
    }

    /// The objects whose `index` function yields `value`, in key order
    /// (client-go `ByIndex`). An unknown index yields nothing.
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        let cache = self.read();
        match cache.indices.get(index).and_then(|v| v.get(value)) {
            Some(objects) => objects.values().cloned().collect(),
            None => Vec::new(),
        }
    }

    /// Adds an index, filled from the objects already cached
    /// (client-go `AddIndexers`).
    pub fn add_index(&self, name: &str, f: impl Fn(&K) -> Vec<String> + Send + Sync + 'static) {
        self.write().add_indexer(name, Arc::new(f));
    }

    /// Whether the first list has reached the cache (client-go `HasSynced`).
    pub fn has_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Waits until [`Store::has_synced`] (client-go `WaitForCacheSync`), or
    /// until the informer is gone.
    pub async fn wait_synced(&self) {
        let mut synced = self.synced.clone();
        // Err: the informer stopped before its first list; nothing to wait for.
        let _ = synced.wait_for(|s| *s).await;
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

// ---------------------------------------------------------------------------
// The informer (shared_informer.go + reflector.go)
// ---------------------------------------------------------------------------

/// One informer for kind `K`: build it, hand out [`Informer::store`] and
/// [`Informer::subscribe`] to the controllers, then [`Informer::run`] it.
pub struct Informer<K> {
    client: Arc<dyn Client>,
    resource: ResourceRef,
    params: ListParams,
    clock: Clock,
    resync: Option<Duration>,
    store: Store<K>,
    /// Sets `store.synced`; dropped when the informer stops.
    synced: watch::Sender<bool>,
    /// One sender per subscriber; the subscriber holds the receiver. A send
    /// to a dropped receiver removes the sender. The lock is held while a
    /// change is applied to the cache *and* sent, so that a late subscriber's
    /// initial `Added` events and the live changes do not interleave.
    subscribers: Arc<Mutex<Vec<Subscriber<K>>>>,
}

impl<K: Object> Informer<K> {
    /// An informer for every object of `K` in every namespace, with the
    /// built-in indexes. `resync`: how often to re-deliver every cached
    /// object as `Updated { old == new }` (`None`: never).
    pub fn new(client: Arc<dyn Client>, clock: Clock, resync: Option<Duration>) -> Self {
        let (synced, synced_rx) = watch::channel(false);
        let cache = Cache {
            objects: BTreeMap::new(),
            indexers: BTreeMap::new(),
            indices: HashMap::new(),
        };
        let store = Store {
            cache: Arc::new(RwLock::new(cache)),
            synced: synced_rx,
        };
        add_builtin_indexes(&store);
        Informer {
            client,
            resource: ResourceRef::of::<K>(),
            params: ListParams::default(),
            clock,
            resync,
            store,
            synced,
            subscribers: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Restricts the informer to objects matching `params` (label and
    /// field selectors).
    pub fn with_params(mut self, params: ListParams) -> Self {
        self.params = params;
        self
    }

    /// The cache.
    pub fn store(&self) -> Store<K> {
        self.store.clone()
    }

    /// A channel of every change from now on. A subscriber that joins after
    /// objects are cached first gets each of them as `Added`.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Change<K>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.join(Subscriber::Plain(tx));
        rx
    }

    /// Like [`Informer::subscribe`], each change with the journal entry of
    /// its delivery (a late subscriber's initial `Added` events have none).
    pub fn subscribe_caused(&self) -> mpsc::UnboundedReceiver<Delivered<K>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.join(Subscriber::Caused(tx));
        rx
    }

    fn join(&self, subscriber: Subscriber<K>) {
        let mut subscribers = lock(&self.subscribers);
        for obj in self.store.list() {
            // Cannot fail: the receiver is alive right here.
            subscriber.send(&Change::Added(obj), 0);
        }
        subscribers.push(subscriber);
    }

    /// Starts the reflector; it runs until `shutdown` is cancelled.
    pub fn run(self, shutdown: CancellationToken) -> tokio::task::JoinHandle<()> {
        let sink = CacheSink {
            kind: self.resource.kind.clone(),
            clock: self.clock.clone(),
            store: self.store,
            synced: self.synced,
            subscribers: self.subscribers,
        };
        let reflector = Reflector::new(
            self.client,
            self.resource,
            self.params,
            self.clock,
            self.resync,
            sink,
        );
        tokio::spawn(reflector.run(shutdown))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each holder leaves the data consistent, so a poisoned lock is usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn add_builtin_indexes<K: Object>(store: &Store<K>) {
    store.add_index(NAMESPACE_INDEX, |o: &K| {
        o.metadata().namespace.iter().cloned().collect()
    });
    store.add_index(OWNER_INDEX, |o: &K| {
        controller_uid(o.metadata())
            .map(str::to_owned)
            .into_iter()
            .collect()
    });
    if K::KIND == "Pod" && K::GROUP.is_empty() {
        store.add_index(NODE_INDEX, |o: &K| {
            let pod = (o as &dyn Any).downcast_ref::<Pod>();
            let node = pod.and_then(|p| p.spec.as_ref()?.node_name.clone());
            node.into_iter().collect()
        });
    }
}

/// What the informer's reflector feeds: the cache, and through it every
/// subscriber (client-go's `DeltaFIFO` + `sharedIndexInformer.HandleDeltas`,
/// folded into one step).
struct CacheSink<K> {
    kind: String,
    /// Where the deliveries are journaled.
    clock: Clock,
    store: Store<K>,
    synced: watch::Sender<bool>,
    subscribers: Arc<Mutex<Vec<Subscriber<K>>>>,
}

impl<K: Object> Sink for CacheSink<K> {
    fn replace(&mut self, items: Vec<Value>) {
        let objects = items.into_iter().filter_map(|item| self.decode(item)).collect();
        self.replace_all(objects);
        self.synced.send_replace(true);
    }

    fn upsert(&mut self, object: Value) {
        if let Some(obj) = self.decode(object) {
            self.put(obj);
        }
    }

    fn delete(&mut self, object: Value) {
        if let Some(obj) = self.decode(object) {
            self.remove(obj);
        }
    }

    fn resync(&mut self) {
        self.resync_all();
    }
}

impl<K: Object> CacheSink<K> {
    /// The cached form of an object: typed, without `metadata.managedFields`
    /// (client-go's `TransformStripManagedFields`; no controller reads them,
    /// and they are the larger part of a pod in memory). Writes that send a
    /// cached object back keep the stored managedFields: an update without
    /// them leaves them as they are.
    fn decode(&self, mut v: Value) -> Option<Arc<K>> {
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        match serde_json::from_value::<K>(v) {
            Ok(obj) => Some(Arc::new(obj)),
            Err(e) => {
                tracing::error!(kind = %self.kind, "cannot decode object: {e}");
                None
            }
        }
    }

    /// An added or modified object.
    fn put(&self, obj: Arc<K>) {
        let key = key_of(obj.metadata());
        let mut subscribers = lock(&self.subscribers);
        let old = self.store.write().put(key.clone(), obj.clone());
        let change = match old {
            Some(old) => Change::Updated { old, new: obj },
            None => Change::Added(obj),
        };
        let verb = verb_of(&change);
        let event = self.journal(verb, &change);
        trace::informer_event(&self.kind, verb, &key, event);
        broadcast(&mut subscribers, change, event);
    }

    /// A deleted object.
    fn remove(&self, obj: Arc<K>) {
        let key = key_of(obj.metadata());
        let mut subscribers = lock(&self.subscribers);
        self.store.write().remove(&key);
        let change = Change::Deleted(obj);
        let event = self.journal("DELETED", &change);
        trace::informer_event(&self.kind, "DELETED", &key, event);
        broadcast(&mut subscribers, change, event);
    }

    /// Replaces the cache with a fresh list (client-go `Replace`): new
    /// objects are `Added`, present ones `Updated`, missing ones `Deleted`.
    fn replace_all(&self, objects: Vec<Arc<K>>) {
        let mut subscribers = lock(&self.subscribers);
        let mut stale: BTreeSet<String> = self.store.keys().into_iter().collect();
        for obj in objects {
            let key = key_of(obj.metadata());
            stale.remove(&key);
            let old = self.store.write().put(key, obj.clone());
            let change = match old {
                Some(old) => Change::Updated { old, new: obj },
                None => Change::Added(obj),
            };
            let event = self.journal(verb_of(&change), &change);
            broadcast(&mut subscribers, change, event);
        }
        for key in stale {
            let removed = self.store.write().remove(&key);
            if let Some(old) = removed {
                let change = Change::Deleted(old);
                let event = self.journal("DELETED", &change);
                trace::informer_event(&self.kind, "DELETED", &key, event);
                broadcast(&mut subscribers, change, event);
            }
        }
    }

    /// Re-delivers every cached object (client-go resync).
    fn resync_all(&self) {
        let mut subscribers = lock(&self.subscribers);
        for obj in self.store.list() {
            let change = Change::Updated {
                old: obj.clone(),
                new: obj,
            };
            let event = self.journal("RESYNC", &change);
            trace::informer_event(&self.kind, "RESYNC", &key_of(change.object().metadata()), event);
            broadcast(&mut subscribers, change, event);
        }
    }

    /// Records the delivery of `change` as an `Event` entry: the object and
    /// the resourceVersion it carries, by which the journal finds the write
    /// that caused it (and takes its message: what changed). Returns its id
    /// (0 when the journal is off).
    fn journal(&self, verb: &str, change: &Change<K>) -> EntryId {
        let journal = self.clock.journal();
        if !journal.enabled() {
            return 0;
        }
        let meta = change.object().metadata();
        let record = Record {
            step: Some(Step::Event),
            actor: self.kind.clone(),
            verb: verb.to_string(),
            object: Some(JournalRef::new(
                &self.kind,
                meta.namespace.as_deref().unwrap_or(""),
                meta.name.as_deref().unwrap_or(""),
            )),
            resource_version: meta.resource_version.clone().unwrap_or_default(),
            message: if verb == "RESYNC" {
                "resync: delivered again, unchanged".to_string()
            } else {
                String::new()
            },
            ..Record::default()
        };
        journal.record(self.clock.now(), record)
    }
}

/// The watch verb of a change: `ADDED`, `MODIFIED` or `DELETED`; an update
/// to the same resourceVersion (a relist of an unchanged object) is a `RESYNC`.
fn verb_of<K: Object>(change: &Change<K>) -> &'static str {
    match change {
        Change::Added(_) => "ADDED",
        Change::Updated { old, new }
            if old.metadata().resource_version == new.metadata().resource_version =>
        {
            "RESYNC"
        }
        Change::Updated { .. } => "MODIFIED",
        Change::Deleted(_) => "DELETED",
    }
}

/// Sends `change` (delivered as journal entry `event`) to every
/// subscriber, dropping those that went away.
fn broadcast<K>(subscribers: &mut Vec<Subscriber<K>>, change: Change<K>, event: EntryId) {
    subscribers.retain(|tx| tx.send(&change, event));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::DeleteParams;
    use crate::runtime::client::{InProcessClient, Typed, WatchEvent};
    use apiserver::testkit::TestApi;
    use futures::StreamExt;
    use futures::stream::BoxStream;
    use k8s_openapi::api::apps::v1::ReplicaSet;
    use serde_json::json;
    use std::sync::atomic::{AtomicBool, Ordering};
    use tokio::time::timeout;

    /// An API over a temporary store keeping `history` watch events.
    async fn api(history: usize, clock: &Clock) -> apiserver::Api {
        TestApi::builder()
            .clock(clock.clone())
            .history(history)
            .build()
            .await
    }

    fn pod(name: &str, node: Option<&str>, owner_uid: Option<&str>) -> Pod {
        let mut v = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        });
        if let Some(node) = node {
            v["spec"]["nodeName"] = json!(node);
        }
        if let Some(uid) = owner_uid {
            v["metadata"]["ownerReferences"] = json!([{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                "uid": uid, "controller": true,
            }]);
        }
        serde_json::from_value(v).unwrap()
    }

    /// The next change, within 5 s.
    async fn next<K>(rx: &mut mpsc::UnboundedReceiver<Change<K>>) -> Change<K> {
        timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("a change within 5 s")
            .expect("the informer is running")
    }

    fn kind_and_key<K: Object>(c: &Change<K>) -> (&'static str, String) {
        match c {
            Change::Added(o) => ("added", key_of(o.metadata())),
            Change::Updated { new, .. } => ("updated", key_of(new.metadata())),
            Change::Deleted(o) => ("deleted", key_of(o.metadata())),
        }
    }

    /// Waits (up to 5 s) until `cond` holds.
    async fn eventually(clock: &Clock, mut cond: impl FnMut() -> bool) {
        timeout(Duration::from_secs(5), async {
            while !cond() {
                clock.sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("condition within 5 s");
    }

    #[tokio::test]
    async fn list_then_watch_sees_creates_updates_and_deletes() {
        let clock = Clock::system();
        let api = api(1000, &clock).await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        let pods = Typed::<Pod>::new(client.clone());
        pods.create(Some("default"), &pod("before", None, None))
            .await
            .unwrap();

        let informer = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let store = informer.store();
        let mut rx = informer.subscribe();
        assert!(!store.has_synced());
        let shutdown = CancellationToken::new();
        let task = informer.run(shutdown.clone());
        timeout(Duration::from_secs(5), store.wait_synced())
            .await
            .unwrap();
        assert_eq!(
            kind_and_key(&next(&mut rx).await),
            ("added", "default/before".into())
        );
        assert!(store.get(Some("default"), "before").is_some());

        pods.create(Some("default"), &pod("p1", None, None))
            .await
            .unwrap();
        assert_eq!(kind_and_key(&next(&mut rx).await), ("added", "default/p1".into()));
        assert!(
            store.get(Some("default"), "p1").is_some(),
            "cached before delivered"
        );

        let patch = json!({"metadata": {"labels": {"app": "db"}}});
        pods.patch(Some("default"), "p1", crate::runtime::PatchType::Merge, patch)
            .await
            .unwrap();
        match next(&mut rx).await {
            Change::Updated { old, new } => {
                assert_eq!(old.metadata.labels.as_ref().unwrap()["app"], "web");
                assert_eq!(new.metadata.labels.as_ref().unwrap()["app"], "db");
            }
            other => panic!("expected an update, got {other:?}"),
        }
        let cached = store.get(Some("default"), "p1").unwrap();
        assert_eq!(cached.metadata.labels.as_ref().unwrap()["app"], "db");

        client
            .delete(
                &ResourceRef::of::<Pod>(),
                Some("default"),
                "p1",
                &DeleteParams::grace(0),
            )
            .await
            .unwrap();
        assert_eq!(
            kind_and_key(&next(&mut rx).await),
            ("deleted", "default/p1".into())
        );
        assert!(store.get(Some("default"), "p1").is_none());
        assert_eq!(store.len(), 1);

        shutdown.cancel();
        timeout(Duration::from_secs(5), task).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn indexes_follow_namespace_owner_node_and_custom_functions() {
        let clock = Clock::system();
        let api = api(1000, &clock).await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        let pods = Typed::<Pod>::new(client.clone());
        pods.create(Some("default"), &pod("a", Some("node-1"), Some("uid-1")))
            .await
            .unwrap();
        pods.create(Some("default"), &pod("b", Some("node-2"), Some("uid-1")))
            .await
            .unwrap();
        let mut c = pod("c", None, None);
        c.metadata.namespace = Some("kube-system".into());
        pods.create(Some("kube-system"), &c).await.unwrap();

        let informer = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let store = informer.store();
        store.add_index("app", |p: &Pod| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            labels.get("app").cloned().into_iter().collect()
        });
        let shutdown = CancellationToken::new();
        let task = informer.run(shutdown.clone());
        timeout(Duration::from_secs(5), store.wait_synced())
            .await
            .unwrap();

        let names = |v: Vec<Arc<Pod>>| -> Vec<String> {
            v.iter().map(|p| p.metadata.name.clone().unwrap()).collect()
        };
        assert_eq!(names(store.by_index(NAMESPACE_INDEX, "default")), ["a", "b"]);
        assert_eq!(names(store.by_index(NAMESPACE_INDEX, "kube-system")), ["c"]);
        assert_eq!(names(store.by_index(OWNER_INDEX, "uid-1")), ["a", "b"]);
        assert_eq!(names(store.by_index(NODE_INDEX, "node-2")), ["b"]);
        assert_eq!(names(store.by_index("app", "web")), ["a", "b", "c"]);
        assert!(store.by_index("no-such-index", "x").is_empty());

        // An update moves the object between index values.
        let patch = json!({"metadata": {"labels": {"app": "db"}}});
        pods.patch(Some("default"), "a", crate::runtime::PatchType::Merge, patch)
            .await
            .unwrap();
        eventually(&clock, || names(store.by_index("app", "db")) == ["a"]).await;
        assert_eq!(names(store.by_index("app", "web")), ["b", "c"]);

        // A delete removes it from every index.
        client
            .delete(
                &ResourceRef::of::<Pod>(),
                Some("default"),
                "b",
                &DeleteParams::grace(0),
            )
            .await
            .unwrap();
        eventually(&clock, || store.by_index(NODE_INDEX, "node-2").is_empty()).await;
        assert_eq!(names(store.by_index(OWNER_INDEX, "uid-1")), ["a"]);

        shutdown.cancel();
        task.await.unwrap();
    }

    /// A client whose watches can be cut, and held back, by the test.
    struct Gated {
        inner: Arc<dyn Client>,
        /// While false, `watch` waits.
        open: Arc<AtomicBool>,
        /// Cancelling it ends every current watch stream.
        cut: Mutex<CancellationToken>,
        clock: Clock,
    }

    impl Client for Gated {
        fn get(
            &self,
            r: &ResourceRef,
            ns: Option<&str>,
            name: &str,
        ) -> super::super::BoxFuture<'_, super::super::ClientResult<Value>> {
            self.inner.get(r, ns, name)
        }
        fn list(
            &self,
            r: &ResourceRef,
            ns: Option<&str>,
            p: &ListParams,
        ) -> super::super::BoxFuture<'_, super::super::ClientResult<(Vec<Value>, String)>> {
            self.inner.list(r, ns, p)
        }
        fn watch(
            &self,
            r: &ResourceRef,
            ns: Option<&str>,
            p: &ListParams,
            rv: &str,
        ) -> super::super::BoxFuture<'_, super::super::ClientResult<BoxStream<'static, WatchEvent>>> {
            let (r, ns, p, rv) = (r.clone(), ns.map(str::to_string), p.clone(), rv.to_string());
            Box::pin(async move {
                while !self.open.load(Ordering::SeqCst) {
                    self.clock.sleep(Duration::from_millis(5)).await;
                }
                let stream = self.inner.watch(&r, ns.as_deref(), &p, &rv).await?;
                let cut = lock(&self.cut).clone();
                let s: BoxStream<'static, WatchEvent> = Box::pin(stream.take_until(cut.cancelled_owned()));
                Ok(s)
            })
        }
        fn create(
            &self,
            r: &ResourceRef,
            ns: Option<&str>,
            obj: Value,
        ) -> super::super::BoxFuture<'_, super::super::ClientResult<Value>> {
            self.inner.create(r, ns, obj)
        }
        fn update(
            &self,
            r: &ResourceRef,
            ns: Option<&str>,
            obj: Value,
            sub: Option<&str>,
        ) -> super::super::BoxFuture<'_, super::super::ClientResult<Value>> {
            self.inner.update(r, ns, obj, sub)
        }
        fn patch(
            &self,
            r: &ResourceRef,
            ns: Option<&str>,
            name: &str,
            t: super::super::PatchType,
            patch: Value,
            sub: Option<&str>,
        ) -> super::super::BoxFuture<'_, super::super::ClientResult<Value>> {
            self.inner.patch(r, ns, name, t, patch, sub)
        }
        fn delete(
            &self,
            r: &ResourceRef,
            ns: Option<&str>,
            name: &str,
            params: &DeleteParams,
        ) -> super::super::BoxFuture<'_, super::super::ClientResult<()>> {
            self.inner.delete(r, ns, name, params)
        }
    }

    #[tokio::test]
    async fn a_relist_after_expired_converges_and_reports_the_differences() {
        // Scaled so that the 800 ms relist backoff is 8 ms of real time.
        let clock = Clock::scaled(100.0);
        let api = api(4, &clock).await;
        let inner: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        let gated = Arc::new(Gated {
            inner: inner.clone(),
            open: Arc::new(AtomicBool::new(true)),
            cut: Mutex::new(CancellationToken::new()),
            clock: clock.clone(),
        });
        let rs = Typed::<ReplicaSet>::new(inner.clone());
        let make = |name: &str, replicas: i32| -> ReplicaSet {
            serde_json::from_value(json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}},
                                      "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            }))
            .unwrap()
        };
        rs.create(Some("default"), &make("stays", 1)).await.unwrap();
        rs.create(Some("default"), &make("goes", 1)).await.unwrap();

        let client: Arc<dyn Client> = gated.clone();
        let informer = Informer::<ReplicaSet>::new(client, clock.clone(), None);
        let store = informer.store();
        let mut rx = informer.subscribe();
        let shutdown = CancellationToken::new();
        let task = informer.run(shutdown.clone());
        timeout(Duration::from_secs(5), store.wait_synced())
            .await
            .unwrap();
        assert_eq!(store.len(), 2);
        next(&mut rx).await;
        next(&mut rx).await;

        // Cut the watch and hold the next one back while the history moves on.
        gated.open.store(false, Ordering::SeqCst);
        lock(&gated.cut).cancel();
        *lock(&gated.cut) = CancellationToken::new();
        client_delete(&inner, "goes").await;
        rs.create(Some("default"), &make("new", 1)).await.unwrap();
        for replicas in 2..8 {
            let patch = json!({"spec": {"replicas": replicas}});
            rs.patch(Some("default"), "stays", crate::runtime::PatchType::Merge, patch)
                .await
                .unwrap();
        }
        gated.open.store(true, Ordering::SeqCst);

        // The rewatch gets 410; the relist brings the cache up to date.
        eventually(&clock, || {
            store.keys() == ["default/new", "default/stays"]
                && store
                    .get(Some("default"), "stays")
                    .and_then(|r| r.spec.as_ref()?.replicas)
                    == Some(7)
        })
        .await;
        let mut seen = Vec::new();
        while let Ok(Some(change)) = timeout(Duration::from_millis(200), rx.recv()).await {
            seen.push(kind_and_key(&change));
        }
        assert!(seen.contains(&("deleted", "default/goes".into())), "{seen:?}");
        assert!(seen.contains(&("added", "default/new".into())), "{seen:?}");
        assert!(seen.contains(&("updated", "default/stays".into())), "{seen:?}");

        // And the informer watches again afterwards.
        rs.create(Some("default"), &make("after", 1)).await.unwrap();
        eventually(&clock, || store.get(Some("default"), "after").is_some()).await;

        shutdown.cancel();
        task.await.unwrap();
    }

    async fn client_delete(client: &Arc<dyn Client>, name: &str) {
        let r = ResourceRef::of::<ReplicaSet>();
        client
            .delete(&r, Some("default"), name, &DeleteParams::grace(0))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn resync_redelivers_every_object_as_an_update() {
        // 60 s resync at 1000× = 60 ms of real time.
        let clock = Clock::scaled(1000.0);
        let api = api(1000, &clock).await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        Typed::<Pod>::new(client.clone())
            .create(Some("default"), &pod("a", None, None))
            .await
            .unwrap();
        let informer = Informer::<Pod>::new(client, clock.clone(), Some(Duration::from_secs(60)));
        let mut rx = informer.subscribe();
        let shutdown = CancellationToken::new();
        let task = informer.run(shutdown.clone());
        assert_eq!(kind_and_key(&next(&mut rx).await), ("added", "default/a".into()));
        match next(&mut rx).await {
            Change::Updated { old, new } => assert!(Arc::ptr_eq(&old, &new)),
            other => panic!("expected a resync update, got {other:?}"),
        }
        shutdown.cancel();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_late_subscriber_gets_the_cache_as_added() {
        let clock = Clock::system();
        let api = api(1000, &clock).await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        Typed::<Pod>::new(client.clone())
            .create(Some("default"), &pod("a", None, None))
            .await
            .unwrap();
        let informer = Informer::<Pod>::new(client, clock.clone(), None);
        let store = informer.store();
        // Fill the cache by hand, as the reflector would, then subscribe.
        store
            .write()
            .put("default/a".into(), Arc::new(pod("a", None, None)));
        let mut rx = informer.subscribe();
        assert_eq!(kind_and_key(&next(&mut rx).await), ("added", "default/a".into()));
    }
}
