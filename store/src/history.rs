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
//!
//! The one exception: revisions a crash lost (see
//! [`layout`](crate::layout), "Revisions are reserved"): a lost-range
//! marker stands in the window as one entry, and a watch may not start
//! inside its range, which it also answers with `Expired`.

use std::collections::VecDeque;
use std::time::Duration;

use crate::layout::{self, HistoryItem};
use crate::{Error, Event, Result, Revision};

/// One kept event, as the index sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub revision: Revision,
    /// Simulated ms since the Unix epoch when the event was written.
    pub time_ms: u64,
}

/// Revisions `after + 1 .. at` that a crash may have handed out and lost.
/// `at` is the revision of the lost-range marker that records them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lost {
    pub after: Revision,
    pub at: Revision,
}

pub(crate) struct History {
    entries: VecDeque<Entry>,
    oldest: Revision,
    /// The lost ranges whose markers are still in `entries`, oldest first
    /// (one per crash; a marker leaves with its entry).
    lost: VecDeque<Lost>,
    max_events: usize,
    max_age_ms: u64,
}

impl History {
    pub fn new(
        entries: VecDeque<Entry>,
        oldest: Revision,
        lost: VecDeque<Lost>,
        max_events: usize,
        max_age: Duration,
    ) -> Self {
        History {
            entries,
            oldest,
            lost,
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

    /// If `after` lies inside a lost range, the revision of its marker: a
    /// watch from `after` is expired, one from the marker's may resume.
    pub fn lost(&self, after: Revision) -> Option<Revision> {
        self.lost
            .iter()
            .find(|l| l.after < after && after < l.at)
            .map(|l| l.at)
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
        // A range below `oldest` is expired by `oldest` alone.
        while self.lost.front().is_some_and(|l| l.at <= self.oldest) {
            self.lost.pop_front();
        }
    }

    pub fn push(&mut self, entry: Entry) {
        self.entries.push_back(entry);
    }

    /// Appends the marker of a lost range (at revision `lost.at`).
    pub fn push_lost(&mut self, lost: Lost, time_ms: u64) {
        self.push(Entry {
            revision: lost.at,
            time_ms,
        });
        self.lost.push_back(lost);
    }
}

/// Reads events `from..=to` from disk, calling `keep` with each event whose
/// key starts with `prefix`, and stopping after `max_scan` entries.
/// Returns the last revision scanned.
///
/// The history must hold every one of those revisions, except those of a
/// lost range that begins before `from` (the watch passes its marker without
/// an event). A missing one means it was trimmed (trimming only ever removes
/// the oldest events), and the read fails [`Error::Expired`] for `from - 1`;
/// so does a lost range that begins at or after `from`, whose revisions the
/// watcher may have seen before the crash.
pub(crate) fn read(
    db: &sled::Db,
    prefix: &str,
    from: Revision,
    to: Revision,
    max_scan: usize,
    oldest: impl Fn() -> Revision,
    mut keep: impl FnMut(Event),
) -> Result<Revision> {
    let expired = |oldest: Revision| Error::Expired {
        requested: from - 1,
        oldest,
    };
    let mut expected = from;
    let range = layout::history_key(from)..=layout::history_key(to);
    for item in db.range(range).take(max_scan) {
        let (k, v) = item?;
        let revision = layout::decode_revision_key(&k)?;
        let item = layout::decode_history(&v)?;
        if item.follows(revision) != expected - 1 {
            return Err(match item {
                HistoryItem::Lost { .. } => expired(revision),
                HistoryItem::Event(_) => expired(oldest()),
            });
        }
        if let HistoryItem::Event(header) = item
            && header.key.starts_with(prefix)
        {
            keep(header.into_event(revision)?);
        }
        expected = revision + 1;
    }
    if expected == from {
        return Err(expired(oldest())); // not even the first one is left
    }
    Ok(expected - 1)
}
