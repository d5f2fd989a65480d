//! An [`Api`] in one line, for tests and embedders: a temporary store
//! (deleted when the last handle to it is dropped), the default namespaces
//! created.
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

use serde_json::{Value, json};
use store::{Clock, Durability, Store};

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

    /// The API over a fresh temporary store, without any namespace yet
    /// (for tests of what happens before [`Api::bootstrap`]; no `.await`).
    ///
    /// # Panics
    /// If the temporary store cannot be opened.
    pub fn open(self) -> Api {
        let defaults = store::Config::default();
        let store = Store::open(store::Config {
            path: None,
            durability: self.durability,
            history_max_events: self.history.unwrap_or(defaults.history_max_events),
            clock: self.clock.clone(),
            ..defaults
        })
        .expect("a temporary store opens");
        Api::with_seed(store, Registry::new(), self.clock, self.seed)
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
