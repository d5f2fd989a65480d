//! Group commit: many writers, one flush.
//!
//! A flush costs about as much for one write as for a hundred (raw sled:
//! ~9k flushed writes/s one at a time, ~100k keys/s when batched). So in
//! [`Durability::Flush`](crate::Durability::Flush) mode a writer applies
//! its write, asks for "a flush covering revision r" and waits; one thread
//! loops:
//!
//! ```text
//! wait until some revision > flushed is requested
//! target = highest requested revision       // every write <= target is applied
//! db.flush()                                // covers all of them at once
//! flushed = target; wake every waiter with revision <= target
//! ```
//!
//! Writes that arrive while a flush runs pile up and share the next one.
//! It is an OS thread, not a tokio task, because `flush` blocks on disk I/O.
//!
//! Why `target` covers every write up to it: writers apply their batch
//! inside the engine's critical section in revision order, and ask for a
//! flush only afterwards, so when revision r is requested every revision
//! below it is already in sled.
//!
//! The engine also uses the thread in both modes for flushes nobody waits
//! for at once ([`Flusher::request`]: a reservation of revisions, see
//! `engine.rs`), and for a flush of whatever sled holds at a moment, not
//! tied to a revision ([`Flusher::sync`]: the release of the reservation on
//! close). Syncs are numbered; the thread notes the number asked for before
//! it flushes, so a sync is answered only by a flush that began after it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use tokio::sync::watch;

use crate::{Error, Result, Revision};

/// What the flusher has done so far; waiters read it through a
/// `tokio::sync::watch` channel.
#[derive(Clone, Debug, Default)]
struct Progress {
    /// Every write up to this revision is on disk.
    flushed: Revision,
    /// Every sync up to this number is done.
    synced: u64,
    /// The last failed flush: it was meant to cover up to this revision
    /// and this sync.
    failed: Option<(Revision, u64, sled::Error)>,
    /// The thread has exited: nothing more will be flushed.
    stopped: bool,
}

/// Requests from writers to the flusher thread.
#[derive(Default)]
struct Requests {
    /// The highest revision some writer is waiting to see flushed.
    wanted: Revision,
    /// The number of the last sync asked for.
    syncs: u64,
    /// Set by `stop`: flush what is wanted, then exit.
    stop: bool,
}

/// What a waiter waits for.
#[derive(Clone, Copy)]
enum Ticket {
    /// Every write up to this revision flushed.
    Revision(Revision),
    /// A flush that began after this sync was asked for.
    Sync(u64),
}

impl Ticket {
    fn done(self, p: &Progress) -> bool {
        match self {
            Ticket::Revision(r) => p.flushed >= r,
            Ticket::Sync(n) => p.synced >= n,
        }
    }

    fn failed(self, p: &Progress) -> Option<&sled::Error> {
        let (revision, sync, error) = p.failed.as_ref()?;
        let covered = match self {
            Ticket::Revision(r) => *revision >= r,
            Ticket::Sync(n) => *sync >= n,
        };
        covered.then_some(error)
    }
}

/// State shared by the [`Flusher`] handle (held by the engine) and the
/// flusher thread.
struct Shared {
    /// Guards the requests. Writers, the engine and `stop` lock it briefly
    /// to raise `wanted` or `syncs` or set `stop`; the thread holds it only
    /// to read them.
    requests: Mutex<Requests>,
    /// Wakes the thread when `requests` changes; the thread is the only waiter.
    wake: Condvar,
    /// The thread sends progress; every waiting writer holds a receiver
    /// (made with `subscribe`), so senders never wait on receivers.
    progress: watch::Sender<Progress>,
    /// Flushes done, for `Stats::flushes`.
    flushes: AtomicU64,
}

/// The engine's handle on the flusher thread. Dropping it stops the thread
/// after a last flush and waits for it, so the database is closed when the
/// engine is gone.
pub(crate) struct Flusher {
    shared: Arc<Shared>,
    /// Joined on drop. `None` once joined.
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Flusher {
    /// Starts the thread; `flushed` is the revision already on disk.
    pub fn start(db: sled::Db, flushed: Revision) -> Result<Flusher> {
        let shared = Arc::new(Shared {
            requests: Mutex::new(Requests {
                wanted: flushed,
                ..Requests::default()
            }),
            wake: Condvar::new(),
            progress: watch::Sender::new(Progress {
                flushed,
                ..Progress::default()
            }),
            flushes: AtomicU64::new(0),
        });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("store-flusher".into())
            .spawn(move || run(&thread_shared, &db, flushed))
            .map_err(|e| Error::Storage(sled::Error::Io(e)))?;
        Ok(Flusher {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Waits until every write up to `revision` is on disk.
    pub async fn flushed(&self, revision: Revision) -> Result<()> {
        self.wait(|requests| {
            requests.wanted = requests.wanted.max(revision);
            Ticket::Revision(revision)
        })
        .await
    }

    /// Asks for every write up to `revision` to be flushed, without waiting;
    /// [`Flusher::is_flushed`] tells when it is.
    pub fn request(&self, revision: Revision) {
        self.ask(|requests| requests.wanted = requests.wanted.max(revision));
    }

    /// Whether every write up to `revision` is known to be on disk.
    pub fn is_flushed(&self, revision: Revision) -> bool {
        self.shared.progress.borrow().flushed >= revision
    }

    /// Waits for a flush that begins after this call, so it covers
    /// everything in sled now, whatever revision it belongs to.
    pub async fn sync(&self) -> Result<()> {
        self.wait(|requests| {
            requests.syncs += 1;
            Ticket::Sync(requests.syncs)
        })
        .await
    }

    /// Asks for such a flush without waiting: it is done before the thread
    /// exits (so before dropping the flusher returns).
    pub fn sync_later(&self) {
        self.ask(|requests| requests.syncs += 1);
    }

    /// Changes the requests and, if that asks for more, wakes the thread.
    fn ask<T>(&self, change: impl FnOnce(&mut Requests) -> T) -> T {
        let mut requests = lock(&self.shared.requests);
        let before = (requests.wanted, requests.syncs);
        let answer = change(&mut requests);
        if (requests.wanted, requests.syncs) != before {
            self.shared.wake.notify_one();
        }
        answer
    }

    /// Asks, then waits until the thread has done what the ticket says.
    async fn wait(&self, ask: impl FnOnce(&mut Requests) -> Ticket) -> Result<()> {
        // Subscribe before asking, so the answer cannot be missed (a watch
        // receiver also sees the value current at subscribe time).
        let mut rx = self.shared.progress.subscribe();
        let ticket = self.ask(ask);
        let progress = rx
            .wait_for(|p| ticket.done(p) || p.stopped || ticket.failed(p).is_some())
            .await
            // The sender lives in `shared`, which we hold: it cannot be dropped.
            .map_err(|_| Error::Closed)?;
        if ticket.done(&progress) {
            Ok(())
        } else if let Some(e) = ticket.failed(&progress) {
            Err(Error::Storage(e.clone()))
        } else {
            Err(Error::Closed)
        }
    }

    pub fn flushes(&self) -> u64 {
        self.shared.flushes.load(Ordering::Relaxed)
    }

    /// Asks the thread to exit after flushing what was asked for.
    pub fn stop(&self) {
        lock(&self.shared.requests).stop = true;
        self.shared.wake.notify_one();
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.stop();
        let thread = self
            .thread
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread
            && thread.join().is_err()
        {
            tracing::error!("store flusher thread panicked");
        }
    }
}

/// The flusher thread's loop (see the module doc).
fn run(shared: &Shared, db: &sled::Db, mut flushed: Revision) {
    let mut synced = 0;
    loop {
        let (target, sync) = {
            let mut requests = lock(&shared.requests);
            let pending = |r: &Requests| r.wanted > flushed || r.syncs > synced;
            while !pending(&requests) && !requests.stop {
                requests = shared.wake.wait(requests).unwrap_or_else(PoisonError::into_inner);
            }
            if !pending(&requests) {
                break; // stopping, and nothing left to flush
            }
            (requests.wanted.max(flushed), requests.syncs)
        };
        let result = db.flush();
        shared.flushes.fetch_add(1, Ordering::Relaxed);
        // Either way `target` and `sync` are settled: their waiters get an answer.
        flushed = target;
        synced = sync;
        match result {
            Ok(_) => shared.progress.send_modify(|p| {
                p.flushed = target;
                p.synced = sync;
            }),
            Err(e) => {
                tracing::error!(error = %e, target, "store flush failed");
                shared
                    .progress
                    .send_modify(|p| p.failed = Some((target, sync, e)));
            }
        }
    }
    shared.progress.send_modify(|p| p.stopped = true);
}

/// Locks a mutex whose data is two plain fields that every holder leaves
/// valid at all times, so a panic elsewhere cannot have broken them.
fn lock(m: &Mutex<Requests>) -> std::sync::MutexGuard<'_, Requests> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
