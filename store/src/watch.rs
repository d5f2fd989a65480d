//! A watcher: replay from the on-disk history, then follow live events.
//!
//! A watch keeps one number, `pos`: every event with revision `<= pos` has
//! been delivered (or skipped for not matching the prefix). Revisions have
//! no holes — every write takes the next one — so the next event it needs is
//! always exactly `pos + 1`, wherever it comes from. (The one kind of hole,
//! revisions a crash lost, is bridged in the history by a marker that a
//! watch reads like an event without delivering it; see `history::read`.)
//!
//! - **history** (sled, `h/<revision>`), while `pos < head`, where `head`
//!   is a revision known to be committed (and so on disk);
//! - **live** events from a broadcast channel that every write sends to
//!   inside its critical section, in revision order.
//!
//! `Watch::start` subscribes to the live channel and reads the current
//! revision under the same lock, so the channel carries exactly the events
//! after that revision and history covers the ones up to it: nothing can
//! fall between the two. A live event `<= pos` was already read from
//! history and is skipped; a live event `> pos + 1` means the watcher missed
//! some (the channel holds only `LIVE_EVENT_BUFFER` (in `engine.rs`)
//! events for slow watchers), and it fills the gap from history. If history
//! it still needs was trimmed meanwhile, the watch ends with
//! [`Error::Expired`] and the caller relists, as with a 410 upstream.
//!
//! An event is handed out only once its write is durable (in Flush mode,
//! once the group commit covering it is done), as etcd only sends watch
//! events for committed writes.
//!
//! Upstream analogue: the apiserver's `cacheWatcher` over its watch cache,
//! falling back to etcd; here the fallback is our own persisted history.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::broadcast::{self, error::RecvError};

use crate::engine::Engine;
use crate::history;
use crate::{Error, Event, Result, Revision};

/// Events read from history per step, so one step stays short.
const HISTORY_STEP: usize = 512;

/// A stream of the events under one key prefix; see [`Store::watch`](crate::Store::watch).
pub struct Watch {
    /// For reading history; keeps the database open while the watch lives.
    engine: Arc<Engine>,
    prefix: String,
    /// Every event with revision `<= pos` has been handled.
    pos: Revision,
    /// Every revision `<= head` is committed: read it from history.
    head: Revision,
    /// Live events; the sender sits in the engine's state (see `engine::State`).
    /// It is dropped on close, which this receiver sees as `Closed`.
    live: broadcast::Receiver<Event>,
    /// Matching events read from history, not yet returned.
    ready: VecDeque<Event>,
    /// An error to return once `ready` is drained; the watch then ends.
    failed: Option<Error>,
    /// The store closed: deliver up to `head`, then end.
    closing: bool,
    done: bool,
}

impl Watch {
    pub(crate) fn start(engine: Arc<Engine>, prefix: &str, after: Revision) -> Result<Watch> {
        engine.compact()?; // expire history by age before judging `after`
        let (live, head) = engine.subscribe(after)?;
        Ok(Watch {
            engine,
            prefix: prefix.to_string(),
            pos: after,
            head,
            live,
            ready: VecDeque::new(),
            failed: None,
            closing: false,
            done: false,
        })
    }

    /// The next matching event, in revision order.
    ///
    /// `None` once the store is closed (after the events committed before the
    /// close). `Some(Err(Expired))` if this watcher fell so far behind that
    /// history it needed was trimmed; every later call returns `None`.
    /// Cancel-safe: dropping the future loses no event (use it in `select!`).
    pub async fn next(&mut self) -> Option<Result<Event>> {
        loop {
            if let Some(revision) = self.ready.front().map(|e| e.revision) {
                // Deliver only durable writes: a watcher must never see a
                // revision that a crash could undo and then reuse. (In Flush
                // mode this waits for the group commit covering it; the event
                // stays queued if this future is dropped meanwhile.)
                if let Err(error) = self.engine.durable(revision).await {
                    self.done = true;
                    return Some(Err(error));
                }
                return self.ready.pop_front().map(Ok);
            }
            if let Some(error) = self.failed.take() {
                self.done = true;
                return Some(Err(error));
            }
            if self.done {
                return None;
            }
            if self.pos < self.head {
                self.read_history();
                // Many non-matching events can be scanned in a row: let
                // other tasks run between steps.
                tokio::task::consume_budget().await;
                continue;
            }
            if self.closing {
                self.done = true;
                return None;
            }
            match self.live.recv().await {
                Ok(event) if event.revision <= self.pos => {} // seen in history
                Ok(event) if event.revision == self.pos + 1 => {
                    self.pos = event.revision;
                    if event.key.starts_with(&self.prefix) {
                        self.ready.push_back(event);
                    }
                }
                // A gap before this event: fill it, this event included,
                // from history.
                Ok(event) => self.head = event.revision,
                Err(RecvError::Lagged(_)) => self.head = self.head.max(self.engine.revision()),
                Err(RecvError::Closed) => {
                    self.closing = true;
                    self.head = self.head.max(self.engine.revision());
                }
            }
        }
    }

    /// One step of replay: events `pos + 1 ..= head`, at most [`HISTORY_STEP`].
    fn read_history(&mut self) {
        let engine = &self.engine;
        let ready = &mut self.ready;
        match history::read(
            &engine.db,
            &self.prefix,
            self.pos + 1,
            self.head,
            HISTORY_STEP,
            || engine.oldest_watchable(),
            |event| ready.push_back(event),
        ) {
            Ok(last) => self.pos = last,
            Err(error) => {
                self.failed = Some(error);
                self.head = self.pos; // stop reading; `next` reports the error
            }
        }
    }
}
