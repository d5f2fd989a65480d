//! An [`Api`] in one line, for tests and embedders: a temporary store
//! (deleted when the last handle to it is dropped), the default namespaces
//! created; and [`Tasks`], the components a test starts on it, stopped
//! together.
//!
//! ```no_run
//! # async fn demo() {
//! use apiserver::testkit::TestApi;
//! let clock = store::Clock::system();
//! let api = TestApi::builder().clock(clock.clone()).history(10_000).build().await;
//! # }
//! ```
//!
//! Everything not set is [`store::Config`]'s default, but for durability:
//! [`Durability::Buffered`], since a flush on sled's thread would let paused
//! tokio time run ahead of a test that waits on it.

use std::future::Future;
use std::time::Duration;

use serde_json::{Value, json};
use store::{Clock, Durability, Store};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api::{Api, WriteOptions};
use crate::registry::Registry;

/// Where test APIs come from: see [`TestApi::builder`].
pub struct TestApi;

impl TestApi {
    /// A builder for an API over a temporary store: system clock, seed 0,
    /// buffered writes, the store's default watch history.
    pub fn builder() -> TestApiBuilder {
        TestApiBuilder::default()
    }
}

/// What the test API is made of; [`TestApiBuilder::build`] makes it.
#[derive(Clone, Debug)]
pub struct TestApiBuilder {
    clock: Clock,
    seed: u64,
    history: Option<usize>,
    durability: Durability,
}

impl Default for TestApiBuilder {
    fn default() -> Self {
        TestApiBuilder {
            clock: Clock::system(),
            seed: 0,
            history: None,
            durability: Durability::Buffered,
        }
    }
}

impl TestApiBuilder {
    /// The one clock of the store and the API (default: [`Clock::system`]).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The seed of uids, generated names and cluster IPs (default 0; see
    /// [`Api::with_seed`]).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Keep at most `events` events of watch history
    /// ([`store::Config::history_max_events`]).
    pub fn history(mut self, events: usize) -> Self {
        self.history = Some(events);
        self
    }

    /// When a write is acknowledged (default: [`Durability::Buffered`]).
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// The temporary store alone, for tests below the API (the Event TTL
    /// loop reads and writes the store directly).
    ///
    /// # Panics
    /// If the temporary store cannot be opened.
    pub fn store(&self) -> Store {
        let defaults = store::Config::default();
        Store::open(store::Config {
            path: None,
            durability: self.durability,
            history_max_events: self.history.unwrap_or(defaults.history_max_events),
            clock: self.clock.clone(),
            ..defaults
        })
        .expect("a temporary store opens")
    }

    /// The API over a fresh temporary store, without any namespace yet
    /// (for tests of what happens before [`Api::bootstrap`]; no `.await`).
    ///
    /// # Panics
    /// If the temporary store cannot be opened.
    pub fn open(self) -> Api {
        Api::with_seed(self.store(), Registry::new(), self.clock, self.seed)
    }

    /// The API over a fresh temporary store, with the namespaces a fresh
    /// cluster has (`default`, `kube-system`, `kube-public`, `kube-node-lease`).
    ///
    /// # Panics
    /// If the temporary store cannot be opened or the namespaces created.
    pub async fn build(self) -> Api {
        let api = self.open();
        api.bootstrap().await.expect("the default namespaces are created");
        api
    }
}

/// Background tasks that watch one shutdown token: the informers and
/// components a test starts. Dropping it cancels the token without waiting.
#[derive(Default)]
pub struct Tasks {
    shutdown: CancellationToken,
    handles: Vec<JoinHandle<()>>,
}

impl Tasks {
    /// No tasks yet, a fresh token.
    pub fn new() -> Self {
        Tasks::default()
    }

    /// The token the tasks watch (a clone).
    pub fn shutdown(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Adds a task already running (an informer's `run` returns one).
    pub fn push(&mut self, task: JoinHandle<()>) {
        self.handles.push(task);
    }

    /// Spawns `run(token)`.
    pub fn spawn<F, Fut>(&mut self, run: F)
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.handles.push(tokio::spawn(run(self.shutdown())));
    }

    /// Cancels the token and waits for every task, at most `within` each
    /// (on tokio's clock); `Err` names each task (by its place) that
    /// panicked or was still running.
    pub async fn stop(mut self, within: Duration) -> Result<(), String> {
        self.shutdown.cancel();
        let mut failures = Vec::new();
        for (i, task) in std::mem::take(&mut self.handles).into_iter().enumerate() {
            match tokio::time::timeout(within, task).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(format!("task {i}: {e}")),
                Err(_) => failures.push(format!("task {i}: still running after {within:?}")),
            }
        }
        match failures.is_empty() {
            true => Ok(()),
            false => Err(failures.join("; ")),
        }
    }
}

impl Extend<JoinHandle<()>> for Tasks {
    fn extend<I: IntoIterator<Item = JoinHandle<()>>>(&mut self, tasks: I) {
        self.handles.extend(tasks);
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Write options naming `manager` as the field manager.
pub fn by(manager: &str) -> WriteOptions {
    WriteOptions {
        field_manager: Some(manager.into()),
        ..Default::default()
    }
}

/// A Deployment `name` of one `busybox` replica, selecting `app: <name>`.
pub fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
        },
    })
}
