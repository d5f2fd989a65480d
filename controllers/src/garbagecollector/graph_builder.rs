//! The graph builder: one monitor (list + watch) per deletable resource,
//! feeding the owner graph, and the graph's changes feeding the two queues.
//!
//! Upstream: `graph_builder.go` (`GraphBuilder`, `monitor`, `syncMonitors`,
//! `startMonitors`, `IsSynced`, `enqueueVirtualDeleteEvent`), whose monitors
//! are shared metadata-only informers.
//!
//! ```text
//! monitor per resource ── list / watch ──▶ Observed (metadata only) ──▶ Graph::upsert / remove
//!                                                                          │ Enqueue
//!                                              attemptToDelete ◀───────────┤
//!                                              attemptToOrphan ◀───────────┘
//! ```
//!
//! Simplified against upstream:
//!
//! - A monitor runs its own list + watch (the runtime's
//!   [`Reflector`], as the informers
//!   do), which carry whole objects (the client has no metadata-only
//!   watch); it keeps only their metadata.
//! - A monitor keeps no cache of objects: the graph is its only state. After
//!   a relist, the observed nodes of its kind missing from the list are
//!   removed as deletions.
//! - The graph sits behind one mutex instead of being owned by a single
//!   `processGraphChanges` goroutine; a monitor applies each change under
//!   the lock and queues what it returns. A worker that finds an object
//!   absent applies the *virtual delete event* the same way, directly.
//! - The resources are fixed at start (upstream re-reads discovery every
//!   30 s to follow new CRDs).

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use store::Clock;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::graph::{Enqueue, Graph, Identity, Observed, Uid};
use crate::runtime::WorkQueue;
use crate::runtime::client::{Client, ListParams, ResourceRef, json_uid};
use crate::runtime::reflector::{Reflector, Sink};

/// The attemptToDelete queue's name, in the trace.
pub const ATTEMPT_TO_DELETE: &str = "garbagecollector-delete";
/// The attemptToOrphan queue's name, in the trace.
pub const ATTEMPT_TO_ORPHAN: &str = "garbagecollector-orphan";

/// The owner graph and the two queues its changes feed. Shared (in an
/// `Arc`) by the monitors, which write the graph, and the workers, which
/// read it.
pub struct GraphBuilder {
    /// A std mutex: each holder does a few map operations and never awaits.
    graph: Mutex<Graph>,
    /// Items that may have to be deleted, or whose dependents it waits for.
    pub attempt_to_delete: WorkQueue<Uid>,
    /// Owners being deleted with the `orphan` finalizer.
    pub attempt_to_orphan: WorkQueue<Uid>,
    /// Where a change that queues work is journaled, as the cause of what it queues.
    clock: Clock,
}

impl GraphBuilder {
    /// An empty graph and two queues on `clock`.
    pub fn new(clock: &Clock) -> Self {
        GraphBuilder {
            graph: Mutex::new(Graph::new()),
            attempt_to_delete: WorkQueue::named(clock.clone(), ATTEMPT_TO_DELETE),
            attempt_to_orphan: WorkQueue::named(clock.clone(), ATTEMPT_TO_ORPHAN),
            clock: clock.clone(),
        }
    }

    /// The graph, locked. Do not hold the guard across an `.await`.
    pub fn graph(&self) -> MutexGuard<'_, Graph> {
        // Every change leaves the graph consistent, so a poisoned lock is usable.
        self.graph.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An object of `resource` was added or changed.
    pub fn observe(&self, resource: &ResourceRef, obj: &Value) {
        let Some(observed) = Observed::from_object(&resource.api_version(), &resource.kind, obj) else {
            return;
        };
        let enqueue = self.graph().upsert(observed);
        self.enqueue_caused(enqueue, "MODIFIED", &resource.kind, obj);
    }

    /// An object was deleted (or, after a relist, found gone).
    pub fn observe_deleted(&self, uid: &str) {
        let enqueue = self.graph().remove(uid);
        self.enqueue(enqueue);
    }

    /// A watched deletion of `obj`: as [`Self::observe_deleted`], journaled as its cause.
    fn observe_deleted_object(&self, resource: &ResourceRef, obj: &Value) {
        let enqueue = self.graph().remove(json_uid(obj));
        self.enqueue_caused(enqueue, "DELETED", &resource.kind, obj);
    }

    /// Queues `enqueue` with the change that led to it journaled as an `Event` (the journal
    /// finds the write behind it by resourceVersion), so that the workers' syncs trace back to
    /// the write, e.g. a user's `kubectl delete --cascade=foreground`. Changes that queue
    /// nothing are not journaled (the monitors see every write of every kind).
    fn enqueue_caused(&self, enqueue: Enqueue, verb: &str, kind: &str, obj: &Value) {
        let journal = self.clock.journal();
        let queues_work = !enqueue.attempt_to_delete.is_empty() || !enqueue.attempt_to_orphan.is_empty();
        if !journal.enabled() || !queues_work {
            return self.enqueue(enqueue);
        }
        let meta = |field: &str| obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str);
        let record = store::journal::Record {
            step: Some(store::journal::Step::Event),
            actor: super::controller::NAME.to_string(),
            verb: verb.to_string(),
            object: Some(store::journal::ObjectRef::new(
                kind,
                meta("namespace").unwrap_or(""),
                meta("name").unwrap_or(""),
            )),
            resource_version: meta("resourceVersion").unwrap_or("").to_string(),
            ..Default::default()
        };
        let event = journal.record(self.clock.now(), record);
        store::journal::caused_by_sync(event, || self.enqueue(enqueue));
    }

    /// Upstream `enqueueVirtualDeleteEvent`: a live GET found no object
    /// `identity`; the graph forgets it and its dependents are checked.
    pub fn enqueue_virtual_delete_event(&self, identity: &Identity) {
        let enqueue = self.graph().remove_verified_absent(identity);
        self.enqueue(enqueue);
    }

    fn enqueue(&self, enqueue: Enqueue) {
        for uid in enqueue.attempt_to_delete {
            self.attempt_to_delete.add(uid);
        }
        for uid in enqueue.attempt_to_orphan {
            self.attempt_to_orphan.add(uid);
        }
    }
}

/// The list-and-watch of one resource (upstream `monitor`: a reflector
/// whose handlers turn every object into a graph change).
pub struct Monitor {
    reflector: Reflector<GraphSink>,
}

impl Monitor {
    /// A monitor of `resource` and the receiver that says when its first list is in.
    pub fn new(
        client: Arc<dyn Client>,
        resource: ResourceRef,
        clock: Clock,
        builder: Arc<GraphBuilder>,
    ) -> (Self, watch::Receiver<bool>) {
        let (synced, synced_rx) = watch::channel(false);
        let sink = GraphSink {
            resource: resource.clone(),
            builder,
            synced,
        };
        let reflector = Reflector::new(client, resource, ListParams::default(), clock, None, sink);
        (Monitor { reflector }, synced_rx)
    }

    /// Lists and watches until `shutdown`, relisting after 410 Expired and
    /// retrying failures with a growing pause.
    pub async fn run(self, shutdown: CancellationToken) {
        self.reflector.run(shutdown).await
    }
}

/// What a monitor's reflector feeds: the graph, one object at a time.
struct GraphSink {
    resource: ResourceRef,
    builder: Arc<GraphBuilder>,
    /// Set once the first list is in the graph; the garbage collector waits for every monitor's.
    synced: watch::Sender<bool>,
}

impl Sink for GraphSink {
    /// Puts every listed object in the graph, and removes the ones of this
    /// kind that are gone.
    fn replace(&mut self, items: Vec<Value>) {
        let mut listed = std::collections::HashSet::with_capacity(items.len());
        for item in &items {
            listed.insert(json_uid(item));
            self.builder.observe(&self.resource, item);
        }
        let known = self
            .builder
            .graph()
            .observed_uids(&self.resource.api_version(), &self.resource.kind);
        for uid in known.iter().filter(|u| !listed.contains(&***u)) {
            self.builder.observe_deleted(uid);
        }
        self.synced.send_replace(true);
    }

    fn upsert(&mut self, object: Value) {
        self.builder.observe(&self.resource, &object);
    }

    fn delete(&mut self, object: Value) {
        self.builder.observe_deleted_object(&self.resource, &object);
    }
}
