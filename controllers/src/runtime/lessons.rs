//! Lessons that break the machinery on purpose: switches that turn one
//! mechanism off, so that a learner sees what goes wrong without it and
//! so why it exists (`miniplane up --disable expectations --informer-lag
//! 10s`; the lessons themselves are in `docs/lessons/`).
//!
//! | switch | where it acts | what goes wrong |
//! | --- | --- | --- |
//! | `--disable expectations` | [`super::expectations`]: `satisfied` is always true | a ReplicaSet acts on a cache that has not yet seen its own creations and creates pods again: more pods than `spec.replicas` exist at once, and the extras are deleted later |
//! | `--disable pod-deletion-ranking` | `replicaset/plan.rs` ([`crate::replicaset::plan::DeletionOrder`]) | a scale-down deletes the oldest pods first instead of upstream's ranking: ready, long-running pods go while pending or unready ones stay |
//! | `--disable controller-ref-claim` | [`crate::controller_ref_manager`] ([`crate::controller_ref_manager::ClaimMode`]) | a controller takes every pod its selector matches, whoever controls it (ownership by label, as before Kubernetes 1.6's ControllerRef); two ReplicaSets with overlapping selectors steal each other's pods, and create and delete pods again and again |
//! | `--informer-lag DURATION` | [`LaggedWatches`], around every informer's client | nothing by itself: every cache is DURATION behind the API server, which is what expectations are for |
//!
//! No switch is process-wide: a [`Lessons`] value travels with the
//! cluster's configuration (`SimConfig.lessons`) to the components that
//! read it, so clusters with different lessons can share a process (tests
//! do).
//!
//! The lag is a [`Client`] wrapper rather than a change to the informer:
//! the informer's reflector lists and watches through the client it is
//! given, and [`LaggedWatches`] hands it watch streams whose events each
//! arrive `lag` of simulated time after the server sent them, in order.
//! Lists are not delayed (a relist is as fresh as upstream's), nor are
//! reads and writes: only what the caches hear lags behind.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use store::Clock;
use tokio::sync::mpsc;

use super::client::{
    BoxFuture, Client, ClientResult, DeleteParams, ListParams, PatchType, ResourceRef, WatchEvent,
};

/// Which mechanisms are switched off, and how late informers deliver.
/// The default switches nothing off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lessons {
    /// `--disable expectations`: the ReplicaSet controller's expectations
    /// always report satisfied, so every sync acts on whatever its cache
    /// shows, even right after creating pods the cache has not seen yet.
    pub disable_expectations: bool,
    /// `--disable pod-deletion-ranking`: scale-down deletes the oldest pods
    /// first instead of upstream's ranking (unscheduled, pending, not ready,
    /// restarting, young pods first).
    pub disable_pod_deletion_ranking: bool,
    /// `--disable controller-ref-claim`: the ReplicaSet controller adopts
    /// every matching pod, whoever controls it, and releases none (no
    /// ControllerRef check: the selector alone says what is whose).
    pub disable_controller_ref_claim: bool,
    /// `--informer-lag`: every informer receives each watch event this much
    /// later (simulated time), in order.
    pub informer_lag: Option<Duration>,
}

impl Lessons {
    /// Whether any switch is on (for a start-up warning).
    pub fn any(&self) -> bool {
        *self != Lessons::default()
    }

    /// The switches that are on, as `miniplane up` spells them
    /// (`--disable expectations, --informer-lag 2s`).
    pub fn describe(&self) -> String {
        let mut on = Vec::new();
        for (off, name) in [
            (self.disable_expectations, "expectations"),
            (self.disable_pod_deletion_ranking, "pod-deletion-ranking"),
            (self.disable_controller_ref_claim, "controller-ref-claim"),
        ] {
            if off {
                on.push(format!("--disable {name}"));
            }
        }
        if let Some(lag) = self.informer_lag {
            on.push(format!("--informer-lag {lag:?}"));
        }
        on.join(", ")
    }
}

/// `client` with its watch streams delayed by `lag` (simulated time), or
/// `client` itself when there is no lag.
pub fn lag_watches(client: Arc<dyn Client>, clock: &Clock, lag: Option<Duration>) -> Arc<dyn Client> {
    match lag {
        Some(lag) if !lag.is_zero() => Arc::new(LaggedWatches {
            inner: client,
            clock: clock.clone(),
            lag,
        }),
        _ => client,
    }
}

/// A client whose watch events each arrive `lag` after the server sent
/// them (`--informer-lag`). Every other call passes straight through.
///
/// Guarantees: events keep their order, and each is delivered no earlier
/// than `lag` after it arrived from the server (later only if the reader
/// is slow). A task per watch reads the server's stream as fast as it
/// comes and stamps each event with its arrival time; the stream handed to
/// the reflector waits, event by event, until that time plus `lag`. The
/// task ends when the server's stream ends (the delayed stream then ends
/// after its last event) or when the reflector drops its stream.
pub struct LaggedWatches {
    inner: Arc<dyn Client>,
    clock: Clock,
    lag: Duration,
}

impl LaggedWatches {
    /// `events`, each delivered `lag` after it arrived.
    fn delay(&self, mut events: BoxStream<'static, WatchEvent>) -> BoxStream<'static, WatchEvent> {
        // Unbounded: the reader is the informer, which never stops reading
        // for long; the task holds the sender and ends with either side.
        let (tx, rx) = mpsc::unbounded_channel::<(SystemTime, WatchEvent)>();
        let clock = self.clock.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tx.closed() => return,
                    event = events.next() => match event {
                        Some(event) => {
                            if tx.send((clock.now(), event)).is_err() {
                                return;
                            }
                        }
                        None => return,
                    },
                }
            }
        });
        let (clock, lag) = (self.clock.clone(), self.lag);
        futures::stream::unfold(rx, move |mut rx| {
            let clock = clock.clone();
            async move {
                let (arrived, event) = rx.recv().await?;
                if let Ok(left) = (arrived + lag).duration_since(clock.now()) {
                    clock.sleep(left).await;
                }
                Some((event, rx))
            }
        })
        .boxed()
    }
}

impl Client for LaggedWatches {
    fn get(&self, r: &ResourceRef, ns: Option<&str>, name: &str) -> BoxFuture<'_, ClientResult<Value>> {
        self.inner.get(r, ns, name)
    }

    fn list(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
    ) -> BoxFuture<'_, ClientResult<(Vec<Value>, String)>> {
        self.inner.list(r, ns, p)
    }

    fn watch(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        p: &ListParams,
        resource_version: &str,
    ) -> BoxFuture<'_, ClientResult<BoxStream<'static, WatchEvent>>> {
        let watch = self.inner.watch(r, ns, p, resource_version);
        Box::pin(async move { Ok(self.delay(watch.await?)) })
    }

    fn create(&self, r: &ResourceRef, ns: Option<&str>, obj: Value) -> BoxFuture<'_, ClientResult<Value>> {
        self.inner.create(r, ns, obj)
    }

    fn update(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        obj: Value,
        subresource: Option<&str>,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        self.inner.update(r, ns, obj, subresource)
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
        self.inner.patch(r, ns, name, t, patch, subresource)
    }

    fn get_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        self.inner.get_subresource(r, ns, name, subresource)
    }

    fn create_subresource(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        subresource: &str,
        obj: Value,
    ) -> BoxFuture<'_, ClientResult<Value>> {
        self.inner.create_subresource(r, ns, name, subresource, obj)
    }

    fn delete(
        &self,
        r: &ResourceRef,
        ns: Option<&str>,
        name: &str,
        params: &DeleteParams,
    ) -> BoxFuture<'_, ClientResult<()>> {
        self.inner.delete(r, ns, name, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::client::InProcessClient;
    use crate::runtime::{Informer, Typed};
    use apiserver::testkit::TestApi;
    use k8s_openapi::api::core::v1::ConfigMap;
    use tokio_util::sync::CancellationToken;

    fn config_map(name: &str) -> ConfigMap {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
        }))
        .unwrap()
    }

    #[test]
    fn the_default_switches_nothing_off() {
        assert!(!Lessons::default().any());
        let lessons = Lessons {
            disable_expectations: true,
            informer_lag: Some(Duration::from_secs(2)),
            ..Default::default()
        };
        assert!(lessons.any());
        assert_eq!(lessons.describe(), "--disable expectations, --informer-lag 2s");
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_lag_the_client_is_not_wrapped() {
        let clock = Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0);
        let api = TestApi::builder().clock(clock.clone()).build().await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        let same = lag_watches(client.clone(), &clock, None);
        assert!(Arc::ptr_eq(&client, &same));
    }

    /// An informer on a lagging client sees a write only after the lag, and
    /// sees the writes in the order they were made.
    #[tokio::test(start_paused = true)]
    async fn an_informer_on_a_lagging_client_sees_writes_late_and_in_order() {
        let clock = Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0);
        let api = TestApi::builder().clock(clock.clone()).build().await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        let lagged = lag_watches(client.clone(), &clock, Some(Duration::from_secs(2)));
        let informer = Informer::<ConfigMap>::new(lagged, clock.clone(), None);
        let (store, mut changes) = (informer.store(), informer.subscribe());
        let shutdown = CancellationToken::new();
        let task = informer.run(shutdown.clone());
        store.wait_synced().await;

        let maps = Typed::<ConfigMap>::new(client);
        let written = clock.now();
        maps.create(Some("default"), &config_map("a")).await.unwrap();
        clock.sleep(Duration::from_millis(500)).await;
        maps.create(Some("default"), &config_map("b")).await.unwrap();
        clock.sleep(Duration::from_millis(1400)).await;
        assert!(store.get(Some("default"), "a").is_none(), "seen before the lag");

        let mut seen = Vec::new();
        while seen.len() < 2 {
            if let Some(crate::runtime::Change::Added(cm)) = changes.recv().await {
                let at = clock.now().duration_since(written).unwrap();
                seen.push((cm.metadata.name.clone().unwrap(), at));
            }
        }
        assert_eq!(seen[0].0, "a");
        assert_eq!(seen[1].0, "b");
        assert!(seen[0].1 >= Duration::from_secs(2), "{seen:?}");
        assert!(seen[1].1 >= Duration::from_millis(2500), "{seen:?}");
        shutdown.cancel();
        task.await.unwrap();
    }
}
