//! The watch window: which past events are still kept, and reading them.
//!
//! The events themselves live on disk (`h/<revision>`, see
//! [`layout`](crate::layout)); memory holds only an index of
//! (revision, time) pairs, 16 bytes per event, so a window of 100,000 events
//! of a few KB each costs ~2 MB of RAM instead of hundreds.
//!
//! The window is trimmed from the front only, by two rules: keep at most
//! `max_events`, and drop events older than `max_age`. `oldest` is the
//! revision of the last event dropped: every event after it is still kept,
//! so a watch may start after any revision `>= oldest`. This is etcd's
//! compaction, and [`Error::Expired`](crate::Error::Expired) is its
//! "required revision has been compacted" (HTTP 410 Gone upstream).

use std::collections::VecDeque;
use std::time::Duration;

use crate::layout;
use crate::{Error, Event, Result, Revision};

/// One kept event, as the index sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub revision: Revision,
    /// Simulated ms since the Unix epoch when the event was written.
    pub time_ms: u64,
}

pub(crate) struct History {
    entries: VecDeque<Entry>,
    oldest: Revision,
    max_events: usize,
    max_age_ms: u64,
}

impl History {
    pub fn new(entries: VecDeque<Entry>, oldest: Revision, max_events: usize, max_age: Duration) -> Self {
        History {
            entries,
            oldest,
            // Keeping zero events would make every write expire every watch.
            max_events: max_events.max(1),
            max_age_ms: u64::try_from(max_age.as_millis()).unwrap_or(u64::MAX),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn oldest(&self) -> Revision {
        self.oldest
    }

    /// How many events to drop from the front so the window fits, given
    /// that `incoming` more (brand new) events are about to be appended.
    /// Does not change anything: the caller first makes the drop durable.
    pub fn excess(&self, now_ms: u64, incoming: usize) -> usize {
        let total = self.entries.len() + incoming;
        self.entries
            .iter()
            .enumerate()
            .take_while(|(i, e)| {
                total - i > self.max_events || now_ms.saturating_sub(e.time_ms) > self.max_age_ms
            })
            .count()
    }

    /// The revisions of the first `n` events (those `excess` said to drop).
    pub fn front(&self, n: usize) -> impl Iterator<Item = Revision> + '_ {
        self.entries.iter().take(n).map(|e| e.revision)
    }

    /// Forgets the first `n` events; `oldest` moves to the last one dropped.
    pub fn drop_front(&mut self, n: usize) {
        if let Some(last) = self.entries.drain(..n).next_back() {
            self.oldest = last.revision;
        }
    }

    pub fn push(&mut self, entry: Entry) {
        self.entries.push_back(entry);
    }
}

/// Reads events `from..=to` from disk, calling `keep` with each event whose
/// key starts with `prefix`, and stopping after `max_scan` events.
/// Returns the last revision scanned.
///
/// The history must hold every one of those revisions: a missing one means
/// it was trimmed (trimming only ever removes the oldest events), and the
/// read fails [`Error::Expired`] for `from - 1`.
pub(crate) fn read(
    db: &sled::Db,
    prefix: &str,
    from: Revision,
    to: Revision,
    max_scan: usize,
    oldest: impl Fn() -> Revision,
    mut keep: impl FnMut(Event),
) -> Result<Revision> {
    let expired = || Error::Expired {
        requested: from - 1,
        oldest: oldest(),
    };
    let mut expected = from;
    let range = layout::history_key(from)..=layout::history_key(to);
    for item in db.range(range).take(max_scan) {
        let (k, v) = item?;
        if layout::decode_revision_key(&k)? != expected {
            return Err(expired());
        }
        let header = layout::decode_event_header(&v)?;
        if header.key.starts_with(prefix) {
            keep(header.into_event(expected)?);
        }
        expected += 1;
    }
    if expected == from {
        return Err(expired()); // not even the first one is left
    }
    Ok(expected - 1)
}
