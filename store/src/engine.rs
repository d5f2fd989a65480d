//! The write path and the in-memory index.
//!
//! Every write goes through [`Engine::commit`], one critical section under
//! the `state` write lock:
//!
//! 1. check the precondition against the current record;
//! 2. take the next revision;
//! 3. apply one sled batch: the object, its history event, the revision
//!    counter and any history that falls out of the window (see
//!    [`layout`](crate::layout) for why one batch);
//! 4. only then change memory: the object index, the history index, the
//!    revision — and send the event to live watchers.
//!
//! If step 3 fails nothing has changed anywhere. Because readers take the
//! same lock (shared), a `get` or `list` sees every write entirely or not
//! at all, and the revision a `list` reports is exactly the state it saw.
//! Waiting for durability ([`Engine::durable`]) happens after the lock is
//! released, so writers never wait for the disk while holding it.
//!
//! Step 4 makes a write visible before it is flushed (to readers in both
//! modes, to watchers in Buffered mode), so step 2 takes only revisions that
//! are durably reserved (`m/reserved`, see [`layout`](crate::layout)): a
//! crash can lose a visible write, but its revision is never handed out
//! again. Reservations come in blocks ([`Config::reserve_block`], 10,000 by
//! default: a jump of at most 1.5 blocks after a crash is nothing for a
//! `u64`, and the reservation is written once per block). Halfway through
//! a block, the next block's bound rides in an ordinary write's batch and
//! the flusher thread is asked to flush it; by the time the current block
//! runs out that flush has long been done, so no write waits for it. Only
//! if it has not (thousands of writes within one flush) does the write that
//! crosses the bound flush under the lock.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, UNIX_EPOCH};

use tokio::sync::broadcast;

use crate::flusher::Flusher;
use crate::history::{Entry, History, Lost};
use crate::layout;
use crate::{
    Clock, Config, Durability, Error, Event, EventKind, ListResult, Record, Result, Revision, Stats,
};

/// How many live events a watcher may fall behind before it has to catch
/// up from the on-disk history (see [`watch`](crate::watch)).
const LIVE_EVENT_BUFFER: usize = 1024;

/// sled's page cache. The in-memory index already holds every current
/// object, so sled's cache only needs to help history reads and writes.
/// sled overshoots this budget by a large factor (measured with 10,000 pods
/// of 4 KiB plus 20,000 history events: 16 MiB → ~100 MiB RSS for the whole
/// store, 32 MiB → ~125 MiB, 64 MiB → ~640 MiB), so keep it small.
const SLED_CACHE_BYTES: u64 = 16 * 1024 * 1024;

/// How long [`open_sled`] waits for a database lock held by sled threads
/// of a store that was just dropped.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// One write, as asked for by the caller.
pub(crate) enum Op {
    Create(Vec<u8>),
    Update(Vec<u8>, Option<Revision>),
    Delete(Option<Revision>),
}

/// Everything that changes on a write.
pub(crate) struct State {
    /// Current objects by key: the read path never touches sled.
    objects: BTreeMap<String, Record>,
    /// The last assigned revision.
    revision: Revision,
    /// `m/reserved` as known flushed: revisions up to it may be handed out.
    /// Equal to `revision` once a close has released the rest.
    reserved: Revision,
    /// The next block's reservation, written but maybe not yet flushed.
    next_block: Option<NextBlock>,
    history: History,
    /// Live events to every watcher; each [`Watch`](crate::Watch) holds a
    /// receiver made under this lock. `None` once the store is closed:
    /// dropping the sender is what tells watchers the store closed.
    events: Option<broadcast::Sender<Event>>,
}

/// A reservation on its way to disk: the batch of write `carrier` set
/// `m/reserved` to `bound`; it holds once `carrier` is flushed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NextBlock {
    carrier: Revision,
    bound: Revision,
}

pub(crate) struct Engine {
    pub(crate) db: sled::Db,
    /// Guards everything that changes on a write. Writers hold it
    /// exclusively for one commit (a sled batch, no await); `get`, `list`,
    /// `watch` and `stats` hold it shared for the time of one copy.
    state: RwLock<State>,
    durability: Durability,
    clock: Clock,
    /// Revisions reserved at a time, [`Config::reserve_block`].
    reserve_block: Revision,
    flusher: Flusher,
}

impl Engine {
    pub fn open(config: Config) -> Result<Arc<Engine>> {
        let sled_config = match &config.path {
            Some(path) => sled::Config::new().path(path),
            None => sled::Config::new().temporary(true),
        };
        let db = open_sled(&sled_config.cache_capacity(SLED_CACHE_BYTES))?;
        let recovered = layout::recover(&db)?;
        let mut history = History::new(
            recovered.history,
            recovered.oldest,
            recovered.lost,
            config.history_max_events,
            config.history_max_age,
        );
        let reserve_block = config.reserve_block.max(2);
        let revision = start_after_recovery(
            &db,
            recovered.revision,
            recovered.reserved,
            reserve_block,
            &mut history,
            now_ms(&config.clock),
        )?;
        let flusher = Flusher::start(db.clone(), revision)?;
        let (events, _) = broadcast::channel(LIVE_EVENT_BUFFER);
        let state = State {
            objects: recovered.objects,
            revision,
            reserved: revision + reserve_block,
            next_block: None,
            history,
            events: Some(events),
        };
        Ok(Arc::new(Engine {
            db,
            state: RwLock::new(state),
            durability: config.durability,
            clock: config.clock,
            reserve_block,
            flusher,
        }))
    }

    // The state lock is never held across anything that can panic halfway
    // through a change (memory is changed only after the one fallible step,
    // the sled batch), so a poisoned lock still guards consistent data.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn revision(&self) -> Revision {
        self.read().revision
    }

    pub fn oldest_watchable(&self) -> Revision {
        self.read().history.oldest()
    }

    pub fn get(&self, key: &str) -> Option<Record> {
        self.read().objects.get(key).cloned()
    }

    pub fn list(&self, prefix: &str, start_after: Option<&str>, limit: Option<usize>) -> ListResult {
        let state = self.read();
        let start = match start_after {
            Some(after) if after >= prefix => Bound::Excluded(after),
            _ => Bound::Included(prefix),
        };
        let mut matching = state
            .objects
            .range::<str, _>((start, Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, record)| record);
        let records: Vec<Record> = matching
            .by_ref()
            .take(limit.unwrap_or(usize::MAX))
            .cloned()
            .collect();
        ListResult {
            records,
            revision: state.revision,
            remaining: matching.count(),
        }
    }

    pub fn stats(&self) -> Stats {
        let state = self.read();
        Stats {
            revision: state.revision,
            oldest_watchable: state.history.oldest(),
            flushes: self.flusher.flushes(),
            history_len: state.history.len(),
            object_count: state.objects.len(),
            watchers: state.events.as_ref().map_or(0, |tx| tx.receiver_count()),
        }
    }

    fn now_ms(&self) -> u64 {
        now_ms(&self.clock)
    }

    /// The critical section of one write (see the module doc). Returns the
    /// record (for a delete: the last one) and the revision of the write.
    pub fn commit(&self, key: &str, op: Op) -> Result<(Record, Revision)> {
        let mut state = self.write();
        // Read under the lock, so history times follow revision order.
        let now_ms = self.now_ms();
        if state.events.is_none() {
            return Err(Error::Closed);
        }
        let revision = state.revision + 1;
        let current = state.objects.get(key);
        let (event, record) = plan(key, current, op, revision)?;
        self.reserve(&mut state, revision)?;

        let mut batch = sled::Batch::default();
        match event.kind {
            EventKind::Deleted => batch.remove(layout::object_key(key)),
            EventKind::Added | EventKind::Modified => {
                batch.insert(layout::object_key(key), layout::encode_record(&record))
            }
        }
        batch.insert(
            layout::history_key(revision),
            layout::encode_event(&event, now_ms),
        );
        batch.insert(layout::META_REVISION, &layout::encode_u64(revision));
        let trim = state.history.excess(now_ms, 1);
        add_trim(&mut batch, &state.history, trim);
        let next_block = (state.next_block.is_none() && revision + self.reserve_block / 2 > state.reserved)
            .then(|| NextBlock {
                carrier: revision,
                bound: state.reserved + self.reserve_block,
            });
        if let Some(next) = next_block {
            batch.insert(layout::META_RESERVED, &layout::encode_u64(next.bound));
        }
        self.db.apply_batch(batch)?;

        // Applied on disk: now make it visible, all under the same lock.
        if let Some(next) = next_block {
            state.next_block = Some(next);
            self.flusher.request(revision); // in the background, also in Buffered mode
        }
        state.history.drop_front(trim);
        state.history.push(Entry {
            revision,
            time_ms: now_ms,
        });
        state.revision = revision;
        match event.kind {
            EventKind::Deleted => state.objects.remove(key),
            EventKind::Added | EventKind::Modified => state.objects.insert(key.to_string(), record.clone()),
        };
        if let Some(events) = &state.events {
            let _ = events.send(event); // Err only means: no watcher right now
        }
        Ok((record, revision))
    }

    /// Makes sure `revision` is durably reserved before it is handed out:
    /// takes over the next block if its flush is done, or flushes now (rare:
    /// see the module doc).
    fn reserve(&self, state: &mut State, revision: Revision) -> Result<()> {
        if revision <= state.reserved {
            return Ok(());
        }
        match state.next_block.take() {
            Some(next) if revision <= next.bound => {
                if !self.flusher.is_flushed(next.carrier) {
                    tracing::debug!(revision, "waiting for the reservation flush");
                    self.db.flush()?;
                }
                state.reserved = next.bound;
            }
            _ => {
                let bound = revision - 1 + self.reserve_block;
                self.db
                    .insert(layout::META_RESERVED, &layout::encode_u64(bound))?;
                self.db.flush()?;
                state.reserved = bound;
            }
        }
        Ok(())
    }

    /// Drops history that has grown older than the window allows.
    pub fn compact(&self) -> Result<()> {
        let mut state = self.write();
        let now_ms = self.now_ms();
        let trim = state.history.excess(now_ms, 0);
        if trim == 0 || state.events.is_none() {
            // Nothing to drop, or closed: the disk is no longer written.
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        add_trim(&mut batch, &state.history, trim);
        self.db.apply_batch(batch)?;
        state.history.drop_front(trim);
        Ok(())
    }

    /// Waits until the write of `revision` is durable per the configured mode.
    pub async fn durable(&self, revision: Revision) -> Result<()> {
        match self.durability {
            Durability::Flush => self.flusher.flushed(revision).await,
            Durability::Buffered => Ok(()),
        }
    }

    /// Subscribes to live events for a watch from `after`, and returns the
    /// receiver and the current revision. Done under the read lock, so the
    /// receiver gets exactly the events after that revision (writers send
    /// while holding the write lock). Fails `Closed`, or `Expired` if
    /// `after` is trimmed or inside a lost range.
    pub fn subscribe(&self, after: Revision) -> Result<(broadcast::Receiver<Event>, Revision)> {
        let state = self.read();
        let rx = state.events.as_ref().ok_or(Error::Closed)?.subscribe();
        let oldest = state.history.oldest();
        if after < oldest {
            return Err(Error::Expired {
                requested: after,
                oldest,
            });
        }
        if let Some(at) = state.history.lost(after) {
            return Err(Error::Expired {
                requested: after,
                oldest: at,
            });
        }
        Ok((rx, state.revision))
    }

    pub async fn close(&self) -> Result<()> {
        let (last, released) = {
            let mut state = self.write();
            state.events = None; // later writes fail Closed; watchers drain and end
            (state.revision, release(&self.db, &mut state))
        };
        let result = match released {
            // One flush after the release covers it and every write before it.
            Ok(true) => self.flusher.sync().await,
            // Closed before, or the release failed: flush the writes still.
            Ok(false) | Err(_) => self.flusher.flushed(last).await,
        };
        self.flusher.stop();
        released.and(result)
    }
}

impl Drop for Engine {
    /// Dropped without [`Engine::close`]: release the reservation all the
    /// same. The flusher, dropped next, runs the requested flush before its
    /// thread exits.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        state.events = None;
        match release(&self.db, state) {
            Ok(true) => self.flusher.sync_later(),
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "store: releasing reserved revisions failed"),
        }
    }
}

/// Gives back the reserved revisions nobody was handed: sets `m/reserved`
/// to the last revision, so that the next open continues without a gap.
/// Only once no write can follow (closed or dropped); the caller then has
/// it flushed, and until then the old, higher bound holds on disk, which is
/// just as safe. Returns whether there was anything to give back.
fn release(db: &sled::Db, state: &mut State) -> Result<bool> {
    if state.reserved == state.revision {
        return Ok(false);
    }
    db.insert(layout::META_RESERVED, &layout::encode_u64(state.revision))?;
    state.reserved = state.revision;
    state.next_block = None;
    Ok(true)
}

/// Sets the revision to continue from after recovery, making that durable.
///
/// If revisions up to `reserved` may have been handed out but only
/// `recovered` came back (the process died without a close), writes a
/// lost-range marker at `reserved + 1` (see [`layout`](crate::layout)) and
/// continues from there. Either way reserves the first block after it and
/// flushes, so that the reservation holds before any write. Returns the
/// revision to continue from.
fn start_after_recovery(
    db: &sled::Db,
    recovered: Revision,
    reserved: Option<Revision>,
    reserve_block: Revision,
    history: &mut History,
    now_ms: u64,
) -> Result<Revision> {
    let mut batch = sled::Batch::default();
    let mut revision = recovered;
    let lost = reserved
        .filter(|&reserved| reserved > recovered)
        .map(|reserved| Lost {
            after: recovered,
            at: reserved + 1,
        });
    let mut trim = 0;
    if let Some(lost) = lost {
        tracing::warn!(
            recovered,
            reserved = lost.at - 1,
            "the store was not closed: revisions after {recovered} may have been seen and lost; \
             watches from them get Expired, and revisions continue at {}",
            lost.at
        );
        batch.insert(
            layout::history_key(lost.at),
            layout::encode_lost(lost.after, now_ms),
        );
        batch.insert(layout::META_REVISION, &layout::encode_u64(lost.at));
        trim = history.excess(now_ms, 1);
        add_trim(&mut batch, history, trim);
        revision = lost.at;
    }
    batch.insert(
        layout::META_RESERVED,
        &layout::encode_u64(revision + reserve_block),
    );
    db.apply_batch(batch)?;
    db.flush()?;
    if let Some(lost) = lost {
        history.drop_front(trim);
        history.push_lost(lost, now_ms);
    }
    Ok(revision)
}

/// Simulated ms since the Unix epoch on `clock` (0 for a clock set before it).
fn now_ms(clock: &Clock) -> u64 {
    let since_epoch = clock.now().duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)
}

/// Opens sled, waiting up to [`LOCK_WAIT`] for the database file lock.
///
/// sled's background I/O threads can hold the file (and its lock) for a
/// moment after the last `Db` handle is dropped, so reopening a store right
/// after closing it in the same process can find the lock still taken.
/// sled's own test suite blocks on the lock for the same reason.
fn open_sled(config: &sled::Config) -> Result<sled::Db> {
    let mut waited = Duration::ZERO;
    loop {
        match config.open() {
            Err(sled::Error::Io(e))
                if e.to_string().contains("could not acquire lock") && waited < LOCK_WAIT =>
            {
                let step = Duration::from_millis(10);
                // Real time on purpose: this waits for another thread to
                // release an OS file lock, not for simulated time to pass.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(step);
                waited += step;
            }
            other => return Ok(other?),
        }
    }
}

/// Removes the first `n` history events from disk and records the new
/// oldest watchable revision, in the caller's batch.
fn add_trim(batch: &mut sled::Batch, history: &History, n: usize) {
    let mut last = None;
    for revision in history.front(n) {
        batch.remove(layout::history_key(revision));
        last = Some(revision);
    }
    if let Some(oldest) = last {
        batch.insert(layout::META_OLDEST, &layout::encode_u64(oldest));
    }
}

/// Checks `op`'s precondition against the `current` record and works out
/// the event and the resulting record, without changing anything.
fn plan(key: &str, current: Option<&Record>, op: Op, revision: Revision) -> Result<(Event, Record)> {
    let check = |current: Option<&Record>, expected: Option<Revision>| match current {
        None => Err(Error::NotFound { key: key.to_string() }),
        Some(record) => match expected {
            Some(expected) if expected != record.mod_revision => Err(Error::Conflict {
                key: key.to_string(),
                expected,
                actual: record.mod_revision,
            }),
            _ => Ok(record.clone()),
        },
    };
    let event = |kind, value: &Arc<[u8]>, prev_value: Option<&Arc<[u8]>>| Event {
        kind,
        key: key.to_string(),
        value: value.clone(),
        prev_value: prev_value.cloned(),
        revision,
    };
    match op {
        Op::Create(value) => {
            if current.is_some() {
                return Err(Error::AlreadyExists { key: key.to_string() });
            }
            let record = Record {
                key: key.to_string(),
                value: Arc::from(value),
                mod_revision: revision,
                create_revision: revision,
            };
            Ok((event(EventKind::Added, &record.value, None), record))
        }
        Op::Update(value, expected) => {
            let old = check(current, expected)?;
            let record = Record {
                value: Arc::from(value),
                mod_revision: revision,
                ..old.clone()
            };
            Ok((
                event(EventKind::Modified, &record.value, Some(&old.value)),
                record,
            ))
        }
        Op::Delete(expected) => {
            let old = check(current, expected)?;
            Ok((event(EventKind::Deleted, &old.value, Some(&old.value)), old))
        }
    }
}
