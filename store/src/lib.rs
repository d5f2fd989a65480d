//! A versioned object store on sled — the etcd of miniplane.
//!
//! The store knows nothing about Kubernetes: it maps string keys
//! (`/registry/deployments/default/web`) to opaque byte values, and gives
//! every write the next number of one global, strictly increasing
//! [`Revision`]. The API server turns that number into
//! `metadata.resourceVersion` when it reads an object back, exactly as the
//! upstream apiserver does with etcd's `mod_revision`.
//!
//! What it offers:
//! - [`Store::create`] (fails [`Error::AlreadyExists`]), [`Store::get`],
//!   [`Store::list`] (a consistent snapshot of a key prefix and the revision
//!   it is consistent at), [`Store::update`] and [`Store::delete`] with an
//!   optional revision precondition (fails [`Error::Conflict`]). Each is atomic.
//! - [`Store::watch`]: every change after a revision, in revision order,
//!   exactly once; DELETED events carry the last state. History is kept for a
//!   bounded window ([`Config::history_max_events`], [`Config::history_max_age`])
//!   and persisted, so a watch can resume across a restart; a revision older
//!   than the window, or one a crash lost, fails [`Error::Expired`].
//! - Durability: in [`Durability::Flush`] mode a write returns only after it
//!   is flushed to disk. Concurrent writers share flushes (group commit). In
//!   [`Durability::Buffered`] mode (`--no-fsync`) it returns at once, and a
//!   crash may lose the last half second of writes (see "Caveats").
//!
//! Start reading at [`Store::open`].
//!
//! # Layout
//!
//! - `src/lib.rs` (this file): the public API and its contract.
//! - `src/engine.rs`: the write path — one critical section per
//!   write that checks the precondition, assigns the revision, applies one
//!   atomic sled batch and publishes the event — and the in-memory index.
//! - `src/layout.rs`: how objects, history and counters are laid
//!   out in sled, and how they are recovered after a restart or a crash.
//! - `src/history.rs`: the bounded watch window (count and age).
//! - `src/flusher.rs`: group commit for [`Durability::Flush`].
//! - `src/watch.rs` ([`Watch`]): a watcher's loop — replay from disk, then follow live events.
//!
//! # Guarantees
//!
//! - Revisions are strictly increasing, one per successful write, and never
//!   reused, in either durability mode, also across restarts and crashes —
//!   including revisions of writes that a crash lost after someone saw them.
//!   Revisions are reserved on disk in blocks before they are handed out
//!   ([`Config::reserve_block`]); after a crash the store continues above the
//!   reserved bound, so the revision jumps (by at most 1.5 blocks). After a
//!   [`Store::close`] (or dropping the store) it continues without a jump.
//! - A write is all-or-nothing on disk: the object, its history entry and the
//!   revision counter are one sled batch. A crash loses whole writes, and
//!   only the latest ones: what survives is every write up to some revision.
//! - Reads see only whole writes: `get` and `list` read the in-memory index
//!   under the same lock that writers hold while they publish a write.
//! - A watch delivers every matching event after its start revision exactly
//!   once, in revision order, or ends with [`Error::Expired`].
//! - A watch from a revision that a crash may have lost — one after the last
//!   write recovered, below the revision the store continues from — fails
//!   [`Error::Expired`], also after later restarts: its client may have seen
//!   writes that no longer exist, and must relist (the API server answers
//!   410 Gone). A watch from the last recovered revision or before it (in
//!   the window) resumes as after a clean restart, passing the lost range.
//!
//! # Caveats
//!
//! - [`Durability::Buffered`] (`--no-fsync`) acknowledges a write before it
//!   is on disk. sled writes its log out as buffers fill and flushes it every
//!   500 ms (its default `flush_every_ms`, which `engine.rs` keeps), so a
//!   crash of the process (`kill -9`, OOM kill) may lose the writes
//!   acknowledged in the last flush interval: about the last 500 ms, more
//!   if a flush is slow. Never half a write, never a write without the ones
//!   before it, and never a revision: lost revisions are not handed out
//!   again, and watches that resume from them get [`Error::Expired`] and
//!   relist. `get`, `list` and (in Buffered mode) watches see a write before
//!   it is flushed, so this matters in Flush mode too: a crash there loses
//!   no acknowledged write, but can lose one that a reader saw before its
//!   writer was answered.
//! - sled's `flush` is `sync_file_range` on Linux, not a full `fsync`
//!   (sled #1452): "durable" means "survives the process dying", not
//!   necessarily "survives the machine losing power".
//! - In [`Durability::Flush`] mode a writer waits for a real OS thread (the
//!   flusher). Under paused tokio time the runtime may auto-advance time while
//!   it waits, so paused-time tests should use [`Durability::Buffered`].

mod engine;
mod flusher;
mod history;
mod layout;
pub mod watch;

pub mod clock;
pub mod journal;
pub mod time;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use clock::Clock;
pub use journal::Journal;
pub use watch::Watch;

use engine::{Engine, Op};

/// The store's global logical clock: one number per write, never reused.
pub type Revision = u64;

/// How to open a [`Store`].
#[derive(Clone, Debug)]
pub struct Config {
    /// Directory of the sled database; `None` opens a temporary database
    /// that is deleted when the store is dropped (for tests).
    pub path: Option<PathBuf>,
    /// When a write is acknowledged.
    pub durability: Durability,
    /// Keep at most this many events of watch history (at least 1 is kept).
    pub history_max_events: usize,
    /// Drop history events older than this (simulated time, read from
    /// `clock`). Trimming by age happens on writes and on [`Store::watch`].
    pub history_max_age: Duration,
    /// The clock that timestamps history events.
    pub clock: Clock,
    /// Revisions reserved on disk at a time (at least 2), so that none is
    /// ever handed out twice (see "Guarantees"). A reservation is flushed
    /// once per block, in the background; after a crash the revision jumps
    /// by up to 1.5 blocks. Tests make it small to cross blocks often.
    pub reserve_block: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            path: None,
            durability: Durability::Flush,
            history_max_events: 100_000,
            history_max_age: Duration::from_secs(10 * 60),
            clock: Clock::system(),
            reserve_block: 10_000,
        }
    }
}

/// When a write is acknowledged to its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Only after the write is flushed to disk. Concurrent writers share
    /// flushes (group commit), so throughput grows with concurrency.
    Flush,
    /// As soon as the write is applied; sled flushes in the background
    /// (every 500 ms), so a crash may lose the last moments of writes —
    /// but never half a write, never a write that a later one depends on,
    /// and never a revision: watchers that saw a lost write and resume from
    /// its revision get [`Error::Expired`]. See "Caveats" above.
    Buffered,
}

/// One stored object.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub key: String,
    pub value: Arc<[u8]>,
    /// The revision of the write that produced this value.
    pub mod_revision: Revision,
    /// The revision of the create that started this object's life.
    pub create_revision: Revision,
}

/// What a write did to a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Added,
    Modified,
    Deleted,
}

/// One change, as a watcher sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    pub key: String,
    /// The new state; for `Deleted` the last state before the delete.
    pub value: Arc<[u8]>,
    /// The previous state, for `Modified` and `Deleted`.
    pub prev_value: Option<Arc<[u8]>>,
    /// The revision of the write.
    pub revision: Revision,
}

/// One page of a [`Store::list`].
#[derive(Clone, Debug, PartialEq)]
pub struct ListResult {
    pub records: Vec<Record>,
    /// The list is a snapshot of the store at this revision.
    pub revision: Revision,
    /// How many matching keys come after the returned page.
    pub remaining: usize,
}

/// Counters for tests, metrics and logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// The last assigned revision.
    pub revision: Revision,
    /// Watches may start after any revision `>=` this (except those a
    /// crash lost, see [`Store::watch`]).
    pub oldest_watchable: Revision,
    /// Disk flushes done by the group-commit flusher since open (in
    /// Buffered mode only the rare ones that reserve revisions).
    pub flushes: u64,
    /// Events in the watch history (in memory as an index, on disk in full).
    pub history_len: usize,
    /// Objects currently stored.
    pub object_count: usize,
    /// Watches currently following live events.
    pub watchers: usize,
}

/// What can go wrong. The first five are expected outcomes a caller acts on;
/// `Storage` and `Corrupt` are failures of the disk or of the store itself.
#[derive(thiserror::Error, Debug)]
pub enum Error {
    #[error("{key} already exists")]
    AlreadyExists { key: String },
    #[error("{key} not found")]
    NotFound { key: String },
    #[error("{key} has revision {actual}, not the expected {expected}")]
    Conflict {
        key: String,
        expected: Revision,
        actual: Revision,
    },
    /// The history no longer holds what a watch from `requested` needs:
    /// it was trimmed (`oldest` is then the oldest watchable revision), or a
    /// crash lost it (`oldest` is then the revision the store continued
    /// from after the crash, which a watch may start from). Relist.
    #[error("revision {requested} is compacted; the oldest watchable revision is {oldest}")]
    Expired { requested: Revision, oldest: Revision },
    #[error("the store is closed")]
    Closed,
    #[error("storage error: {0}")]
    Storage(#[source] sled::Error),
    /// Bytes on disk that this version of the store cannot decode.
    #[error("corrupt store data: {what}")]
    Corrupt { what: String },
}

impl From<sled::Error> for Error {
    fn from(e: sled::Error) -> Self {
        Error::Storage(e)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A cheap-to-clone handle on one open store.
///
/// All clones share one engine (`src/engine.rs`); the database closes when the last clone
/// (and the last [`Watch`]) is dropped, or explicitly with [`Store::close`].
#[derive(Clone)]
pub struct Store {
    engine: Arc<Engine>,
}

impl Store {
    /// Opens (or creates) the store at `config.path`, recovering objects,
    /// the revision counter and the watch history — also after `kill -9`,
    /// after which the revision continues above every one that may have
    /// been handed out before the crash (see "Guarantees").
    pub fn open(config: Config) -> Result<Store> {
        Ok(Store {
            engine: Engine::open(config)?,
        })
    }

    /// The last assigned revision (0 on a fresh store).
    pub fn revision(&self) -> Revision {
        self.engine.revision()
    }

    /// Watches may start after any revision `>=` this one (except those a
    /// crash lost, see [`Store::watch`]).
    pub fn oldest_watchable(&self) -> Revision {
        self.engine.oldest_watchable()
    }

    /// Creates `key`; fails [`Error::AlreadyExists`] if it exists.
    pub async fn create(&self, key: &str, value: Vec<u8>) -> Result<Record> {
        let (record, revision) = self.engine.commit(key, Op::Create(value))?;
        self.engine.durable(revision).await?;
        Ok(record)
    }

    /// The current record of `key`, if any.
    pub fn get(&self, key: &str) -> Result<Option<Record>> {
        Ok(self.engine.get(key))
    }

    /// Records whose key starts with `prefix` and is greater than
    /// `start_after`, in byte order, at most `limit` of them (`Some(0)`
    /// returns an empty page with `remaining` set), all from one snapshot.
    pub fn list(&self, prefix: &str, start_after: Option<&str>, limit: Option<usize>) -> Result<ListResult> {
        Ok(self.engine.list(prefix, start_after, limit))
    }

    /// Replaces the value of `key`. Fails [`Error::NotFound`], or
    /// [`Error::Conflict`] if `expected` is not its current `mod_revision`.
    pub async fn update(&self, key: &str, value: Vec<u8>, expected: Option<Revision>) -> Result<Record> {
        let (record, revision) = self.engine.commit(key, Op::Update(value, expected))?;
        self.engine.durable(revision).await?;
        Ok(record)
    }

    /// Deletes `key`, returning its last record and the revision of the
    /// delete. Fails like [`Store::update`].
    pub async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<(Record, Revision)> {
        let (record, revision) = self.engine.commit(key, Op::Delete(expected))?;
        self.engine.durable(revision).await?;
        Ok((record, revision))
    }

    /// Every event with revision `> after` whose key starts with `prefix`.
    ///
    /// Fails [`Error::Expired`] if `after < oldest_watchable()`, or if
    /// `after` is a revision a crash may have lost (see "Guarantees").
    /// `after` above the current revision is accepted: the watch is quiet
    /// until the store gets past `after`, then delivers the events after it
    /// (etcd does the same; the upstream apiserver instead answers "Too large
    /// resource version" after a short wait). No revision a client saw
    /// before a crash is ever above the revision the store continues from,
    /// so that case only comes from a client making a revision up.
    pub fn watch(&self, prefix: &str, after: Revision) -> Result<Watch> {
        Watch::start(self.engine.clone(), prefix, after)
    }

    /// Drops history older than `history_max_age` now (writes and watches
    /// also do this; call it periodically to expire history on an idle store).
    pub fn compact(&self) -> Result<()> {
        self.engine.compact()
    }

    /// Counters: revision, flushes, history length, object count, watchers.
    pub fn stats(&self) -> Stats {
        self.engine.stats()
    }

    /// Bytes the database occupies on disk (sled's own accounting).
    pub fn size_on_disk(&self) -> Result<u64> {
        Ok(self.engine.db.size_on_disk()?)
    }

    /// Flushes everything; later writes fail [`Error::Closed`] and open
    /// watches end after delivering the events committed before the close.
    pub async fn close(&self) -> Result<()> {
        self.engine.close().await
    }
}
