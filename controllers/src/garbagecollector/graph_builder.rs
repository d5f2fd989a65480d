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
//! - A monitor runs its own list + watch, which carry whole objects (the
//!   client has no metadata-only watch); it keeps only their metadata.
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
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use store::Clock;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::graph::{Enqueue, Graph, Identity, Observed, Uid};
use crate::runtime::WorkQueue;
use crate::runtime::client::{
    Client, ClientError, ListParams, ResourceRef, WatchEvent, resource_version_of, uid_of,
};

/// The attemptToDelete queue's name, in the trace.
pub const ATTEMPT_TO_DELETE: &str = "garbagecollector-delete";
/// The attemptToOrphan queue's name, in the trace.
pub const ATTEMPT_TO_ORPHAN: &str = "garbagecollector-orphan";

/// First wait before retrying a failed list or watch (client-go: 800 ms).
const RETRY_BASE: Duration = Duration::from_millis(800);
/// Longest wait between retries (client-go: 30 s).
const RETRY_MAX: Duration = Duration::from_secs(30);

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
}

impl GraphBuilder {
    /// An empty graph and two queues on `clock`.
    pub fn new(clock: &Clock) -> Self {
        GraphBuilder {
            graph: Mutex::new(Graph::new()),
            attempt_to_delete: WorkQueue::named(clock.clone(), ATTEMPT_TO_DELETE),
            attempt_to_orphan: WorkQueue::named(clock.clone(), ATTEMPT_TO_ORPHAN),
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
        self.enqueue(enqueue);
    }

    /// An object was deleted (or, after a relist, found gone).
    pub fn observe_deleted(&self, uid: &str) {
        let enqueue = self.graph().remove(uid);
        self.enqueue(enqueue);
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

/// Why a watch ended.
enum WatchEnd {
    /// The server closed it, or it failed: watch again from the last resourceVersion.
    Rewatch,
    /// 410 Expired: list again.
    Relist,
    /// Shutting down.
    Shutdown,
}

/// The list-and-watch loop of one resource (upstream `monitor`, a
/// reflector whose handlers turn every object into a graph change).
pub struct Monitor {
    client: Arc<dyn Client>,
    resource: ResourceRef,
    clock: Clock,
    builder: Arc<GraphBuilder>,
    /// Set once the first list is in the graph; the garbage collector waits for every monitor's.
    synced: watch::Sender<bool>,
    /// The resourceVersion to resume a watch from.
    last_rv: String,
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
        let monitor = Monitor {
            client,
            resource,
            clock,
            builder,
            synced,
            last_rv: String::new(),
        };
        (monitor, synced_rx)
    }

    /// Lists and watches until `shutdown`, relisting after 410 Expired and
    /// retrying failures with a growing pause.
    pub async fn run(mut self, shutdown: CancellationToken) {
        let mut failures = 0u32;
        loop {
            if failures > 0 && !self.wait(retry_delay(failures), &shutdown).await {
                return;
            }
            if let Err(e) = self.list().await {
                failures += 1;
                tracing::warn!(kind = %self.resource.kind, "garbage collector: list failed: {e}");
                continue;
            }
            failures = 0;
            match self.watch_until_expired(&shutdown).await {
                WatchEnd::Shutdown => return,
                // Relist after 410, with a growing pause if it keeps happening.
                WatchEnd::Relist | WatchEnd::Rewatch => failures += 1,
            }
        }
    }

    /// Waits `d` on the clock; false when shut down meanwhile.
    async fn wait(&self, d: Duration, shutdown: &CancellationToken) -> bool {
        tokio::select! {
            _ = shutdown.cancelled() => false,
            _ = self.clock.sleep(d) => true,
        }
    }

    /// Lists, puts every object in the graph, and removes the ones of this
    /// kind that are gone.
    async fn list(&mut self) -> Result<(), ClientError> {
        let (items, rv) = self
            .client
            .list(&self.resource, None, &ListParams::default())
            .await?;
        let mut listed = std::collections::HashSet::with_capacity(items.len());
        for item in &items {
            listed.insert(uid_of(item));
            self.builder.observe(&self.resource, item);
        }
        let known = self
            .builder
            .graph()
            .observed_uids(&self.resource.api_version(), &self.resource.kind);
        for uid in known.iter().filter(|u| !listed.contains(&***u)) {
            self.builder.observe_deleted(uid);
        }
        self.last_rv = rv;
        self.synced.send_replace(true);
        Ok(())
    }

    /// Watches, rewatching from the last resourceVersion when a watch ends,
    /// until 410 Expired or shutdown.
    async fn watch_until_expired(&mut self, shutdown: &CancellationToken) -> WatchEnd {
        let mut failures = 0u32;
        loop {
            let watch = self
                .client
                .watch(&self.resource, None, &ListParams::default(), &self.last_rv);
            let stream = match watch.await {
                Ok(s) => s,
                Err(e) if e.is_expired() => return WatchEnd::Relist,
                Err(e) => {
                    failures += 1;
                    tracing::warn!(kind = %self.resource.kind, "garbage collector: watch failed: {e}");
                    if !self.wait(retry_delay(failures), shutdown).await {
                        return WatchEnd::Shutdown;
                    }
                    continue;
                }
            };
            failures = 0;
            match self.follow(stream, shutdown).await {
                WatchEnd::Rewatch => continue,
                other => return other,
            }
        }
    }

    /// Applies the events of one watch.
    async fn follow(
        &mut self,
        mut stream: BoxStream<'static, WatchEvent>,
        shutdown: &CancellationToken,
    ) -> WatchEnd {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return WatchEnd::Shutdown,
                event = stream.next() => match event {
                    None => return WatchEnd::Rewatch,
                    Some(event) => {
                        if let Some(end) = self.apply(event) {
                            return end;
                        }
                    }
                },
            }
        }
    }

    /// One watch event; `Some` when it ends the watch.
    fn apply(&mut self, event: WatchEvent) -> Option<WatchEnd> {
        match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                self.builder.observe(&self.resource, &o);
                self.last_rv = resource_version_of(&o).to_string();
            }
            WatchEvent::Deleted(o) => {
                self.builder.observe_deleted(uid_of(&o));
                self.last_rv = resource_version_of(&o).to_string();
            }
            WatchEvent::Bookmark(rv) => self.last_rv = rv,
            WatchEvent::Error(e) if e.is_expired() => return Some(WatchEnd::Relist),
            WatchEvent::Error(e) => {
                tracing::warn!(kind = %self.resource.kind, "garbage collector: watch error: {e}");
                return Some(WatchEnd::Rewatch);
            }
        }
        None
    }
}

/// 800 ms doubling per failure, at most 30 s (as the informer's reflector).
fn retry_delay(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1)).min(64);
    RETRY_BASE.saturating_mul(factor).min(RETRY_MAX)
}
