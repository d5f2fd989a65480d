//! From informer changes to work-queue keys, and a controller's `run`: the part every controller
//! would otherwise write again.
//!
//! Upstream: client-go `tools/cache/shared_informer.go` (`AddEventHandler` with
//! `ResourceEventHandlerFuncs`, `WaitForNamedCacheSync`) and the `Run` of
//! `pkg/controller/replicaset/replica_set.go` and `pkg/controller/deployment/deployment_controller.go`
//! (wait for the caches, start the workers, stop on shutdown).
//!
//! ```text
//! Feeds::new(queue)
//!   .watch(&informer_a, |change, queue| ...)        handler with side effects (expectations, add_after)
//!   .watch_keys(&informer_b, |change| vec![key])    handler that only maps a change to keys
//! feeds.run(reconciler, workers, shutdown):
//!   spawn one task per informer: change → handler → queue, until shutdown
//!   wait until every watched cache has synced  (shutdown first: shut the queue down, run no worker)
//!   run_workers until shutdown; then join the handler tasks
//! ```
//!
//! Each handler runs with the change's journal entry as the current cause
//! ([`store::journal::caused_by_sync`]), so the keys it adds are journaled
//! as caused by that informer event.
//!
//! Simplified against upstream: a handler is one function of the [`Change`] (not three callbacks),
//! it runs on its own task reading the informer's change channel, and there is no
//! `ResourceEventHandlerRegistration` to remove a handler again.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::client::BoxFuture;
use super::controller::{Reconciler, run_workers};
use super::informer::{Change, Delivered, Informer, Object};
use super::workqueue::WorkQueue;
use store::journal::caused_by_sync;

/// A handler task, started by [`Feeds::run`] with the shutdown token.
type Task = Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, ()> + Send>;

/// The informers a controller listens to, with their handlers, feeding one queue.
pub struct Feeds<Q> {
    queue: WorkQueue<Q>,
    tasks: Vec<Task>,
    synced: Vec<BoxFuture<'static, ()>>,
}

impl<Q: Clone + Eq + std::hash::Hash + std::fmt::Debug + Send + Sync + 'static> Feeds<Q> {
    /// No informers yet; every handler will add to `queue`.
    pub fn new(queue: WorkQueue<Q>) -> Self {
        Feeds {
            queue,
            tasks: Vec::new(),
            synced: Vec::new(),
        }
    }

    /// The queue the handlers feed.
    pub fn queue(&self) -> &WorkQueue<Q> {
        &self.queue
    }

    /// Subscribes `handler` to `informer`'s changes (call before the informer runs). The handler
    /// adds to the queue itself: for handlers that also keep state (expectations) or delay a key.
    pub fn watch<K: Object>(
        &mut self,
        informer: &Informer<K>,
        handler: impl Fn(&Change<K>, &WorkQueue<Q>) + Send + Sync + 'static,
    ) -> &mut Self {
        let changes = informer.subscribe_caused();
        let queue = self.queue.clone();
        self.tasks.push(Box::new(move |shutdown| {
            Box::pin(feed(changes, queue, handler, shutdown))
        }));
        let store = informer.store();
        self.synced
            .push(Box::pin(async move { store.wait_synced().await }));
        self
    }

    /// Like [`Feeds::watch`], for a handler that only maps a change to the keys to sync now.
    pub fn watch_keys<K: Object>(
        &mut self,
        informer: &Informer<K>,
        to_keys: impl Fn(&Change<K>) -> Vec<Q> + Send + Sync + 'static,
    ) -> &mut Self {
        self.watch(informer, move |change, queue| {
            for key in to_keys(change) {
                queue.add(key);
            }
        })
    }

    /// Runs the handlers at once and, once every watched cache has synced, `workers` workers
    /// until `shutdown`; returns after the workers and the handler tasks have stopped.
    pub async fn run<R: Reconciler<Key = Q>>(
        self,
        reconciler: Arc<R>,
        workers: usize,
        shutdown: CancellationToken,
    ) {
        let name = reconciler.name().to_string();
        let tasks: Vec<_> = self
            .tasks
            .into_iter()
            .map(|task| tokio::spawn(task(shutdown.clone())))
            .collect();
        let synced = futures::future::join_all(self.synced);
        tokio::select! {
            () = shutdown.cancelled() => self.queue.shut_down(),
            _ = synced => run_workers(self.queue, reconciler, workers, shutdown).await,
        }
        for task in tasks {
            if let Err(e) = task.await {
                tracing::error!(controller = name, "event handler task failed: {e}");
            }
        }
    }
}

/// Hands every change of one informer to `handler`, with the change's journal entry as the
/// current cause, until `shutdown` or the informer is gone.
pub async fn feed<K, Q>(
    mut changes: UnboundedReceiver<Delivered<K>>,
    queue: WorkQueue<Q>,
    handler: impl Fn(&Change<K>, &WorkQueue<Q>),
    shutdown: CancellationToken,
) {
    loop {
        let change = tokio::select! {
            () = shutdown.cancelled() => return,
            change = changes.recv() => change,
        };
        let Some(Delivered { change, event }) = change else {
            return;
        };
        caused_by_sync(event, || handler(&change, &queue));
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use store::Clock;
    use tokio::sync::mpsc::unbounded_channel;

    use super::*;
    use crate::runtime::meta::key_of;

    fn config_map(name: &str) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("default".into()),
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    fn queue() -> WorkQueue<String> {
        WorkQueue::new(Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0))
    }

    /// The handler the tests feed: the key of the object, and nothing for a deletion.
    fn added_or_updated(change: &Change<ConfigMap>, queue: &WorkQueue<String>) {
        match change {
            Change::Added(o) | Change::Updated { new: o, .. } => queue.add(key_of(&o.metadata)),
            Change::Deleted(_) => {}
        }
    }

    #[tokio::test]
    async fn every_change_goes_through_the_handler_until_the_informer_is_gone() {
        let (tx, rx) = unbounded_channel();
        let queue = queue();
        let send = |change| tx.send(Delivered { change, event: 0 }).unwrap();
        send(Change::Added(config_map("a")));
        send(Change::Deleted(config_map("b")));
        let (old, new) = (config_map("c"), config_map("c"));
        send(Change::Updated { old, new });
        drop(tx);
        feed(rx, queue.clone(), added_or_updated, CancellationToken::new()).await;
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await.as_deref(), Some("default/a"));
        assert_eq!(queue.get().await.as_deref(), Some("default/c"));
    }

    #[tokio::test]
    async fn shutdown_ends_the_feed() {
        let (_tx, rx) = unbounded_channel::<Delivered<ConfigMap>>();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(feed(rx, queue(), added_or_updated, shutdown.clone()));
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the feed stops")
            .expect("no panic");
    }
}
