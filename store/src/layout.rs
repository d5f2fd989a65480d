//! How the store lies on disk, and how it is read back after a restart.
//!
//! Everything lives in sled's default tree, in three key spaces:
//!
//! | sled key | sled value |
//! | --- | --- |
//! | `o/` + object key | `mod_revision` u64 BE, `create_revision` u64 BE, value bytes |
//! | `h/` + revision u64 BE | one history event, or a lost-range marker (below) |
//! | `m/revision` | u64 BE: the last assigned revision |
//! | `m/reserved` | u64 BE: no revision above it has been handed out (see below) |
//! | `m/oldest` | u64 BE: history up to and including it has been trimmed |
//! | `m/format` | u64 BE: this layout's version, [`FORMAT`] |
//!
//! A history event is `kind` u8 (0 added, 1 modified, 2 deleted),
//! `time_ms` u64 BE (simulated ms since the Unix epoch), `key_len` u32 BE,
//! key, `value_len` u32 BE, value, then for `Modified` only `prev_len`
//! u32 BE and the previous value. A `Deleted` event stores the last state
//! once: it is both its value and its previous value.
//!
//! A lost-range marker is `kind` 3, `time_ms` u64 BE, `after` u64 BE. At
//! revision `at` it says: revisions `after + 1 .. at` were possibly handed
//! out before a crash and lost in it. They are not in the history, and no
//! watch may resume from one of them; a watch from `after` or before moves
//! from `after` straight to `at`, which carries no event.
//!
//! # Revisions are reserved before they are handed out
//!
//! A write is visible (to `get`, `list` and, in Buffered mode, watchers)
//! as soon as it is applied, before sled has flushed it, so a crash can
//! lose revisions that someone already saw. Recovery alone would then hand
//! them out again for different writes. So `m/reserved` is flushed to a
//! bound above the current revision before any revision up to that bound
//! is handed out (in blocks of `Config::reserve_block`, see `engine.rs`).
//! On open, a recovered revision below `m/reserved` means a crash may have
//! lost revisions up to `m/reserved`: the engine writes a lost-range marker
//! at `m/reserved + 1` and carries on from there. A clean close sets
//! `m/reserved` back to the last revision, so a restart after a close
//! continues without a gap.
//!
//! Why one tree: sled applies a [`sled::Batch`] atomically per tree, also
//! across a crash. Each write is one batch holding the object change, its
//! history entry, the new `m/revision` and any history it trims, so after
//! `kill -9` the disk holds every write up to some revision and nothing
//! after it. Big-endian revisions make sled's key order revision order.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::history::{Entry, Lost};
use crate::{Error, Event, EventKind, Record, Result, Revision};

/// The layout version written to `m/format`. Version 1 had no
/// `m/reserved` and no lost-range markers; it is upgraded on open.
pub(crate) const FORMAT: u64 = 2;

const OBJECT: &[u8] = b"o/";
const HISTORY: &[u8] = b"h/";
pub(crate) const META_REVISION: &[u8] = b"m/revision";
pub(crate) const META_OLDEST: &[u8] = b"m/oldest";
pub(crate) const META_RESERVED: &[u8] = b"m/reserved";
const META_FORMAT: &[u8] = b"m/format";

pub(crate) fn object_key(key: &str) -> Vec<u8> {
    [OBJECT, key.as_bytes()].concat()
}

pub(crate) fn history_key(revision: Revision) -> Vec<u8> {
    [HISTORY, &revision.to_be_bytes()[..]].concat()
}

pub(crate) fn encode_u64(n: u64) -> [u8; 8] {
    n.to_be_bytes()
}

pub(crate) fn encode_record(record: &Record) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + record.value.len());
    out.extend_from_slice(&record.mod_revision.to_be_bytes());
    out.extend_from_slice(&record.create_revision.to_be_bytes());
    out.extend_from_slice(&record.value);
    out
}

pub(crate) fn encode_event(event: &Event, time_ms: u64) -> Vec<u8> {
    let prev = match event.kind {
        EventKind::Modified => event.prev_value.as_deref(),
        EventKind::Added | EventKind::Deleted => None,
    };
    let mut out =
        Vec::with_capacity(21 + event.key.len() + event.value.len() + prev.map_or(0, |p| 4 + p.len()));
    out.push(match event.kind {
        EventKind::Added => 0,
        EventKind::Modified => 1,
        EventKind::Deleted => 2,
    });
    out.extend_from_slice(&time_ms.to_be_bytes());
    put_bytes(&mut out, event.key.as_bytes());
    put_bytes(&mut out, &event.value);
    if let Some(prev) = prev {
        put_bytes(&mut out, prev);
    }
    out
}

/// The kind byte of a lost-range marker in the history.
const LOST_KIND: u8 = 3;

/// A lost-range marker: revisions `after + 1 ..` the marker's own were lost.
pub(crate) fn encode_lost(after: Revision, time_ms: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(17);
    out.push(LOST_KIND);
    out.extend_from_slice(&time_ms.to_be_bytes());
    out.extend_from_slice(&after.to_be_bytes());
    out
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // Keys and values come from the API server, far below 4 GiB each.
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

/// A cursor over bytes that turns any short read into [`Error::Corrupt`].
struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(corrupt(self.what));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64> {
        let mut buf = [0; 8];
        buf.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(buf))
    }

    fn bytes(&mut self) -> Result<&'a [u8]> {
        let mut buf = [0; 4];
        buf.copy_from_slice(self.take(4)?);
        self.take(u32::from_be_bytes(buf) as usize)
    }

    fn str(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| corrupt(self.what))
    }
}

fn corrupt(what: &str) -> Error {
    Error::Corrupt {
        what: what.to_string(),
    }
}

pub(crate) fn decode_u64(bytes: &[u8], what: &'static str) -> Result<u64> {
    Reader { bytes, what }.u64()
}

pub(crate) fn decode_revision_key(key: &[u8]) -> Result<Revision> {
    let bytes = key.strip_prefix(HISTORY).ok_or_else(|| corrupt("history key"))?;
    decode_u64(bytes, "history key")
}

fn decode_record(key: &[u8], bytes: &[u8]) -> Result<Record> {
    let key = key.strip_prefix(OBJECT).ok_or_else(|| corrupt("object key"))?;
    let key = std::str::from_utf8(key).map_err(|_| corrupt("object key"))?;
    let mut r = Reader {
        bytes,
        what: "object record",
    };
    Ok(Record {
        key: key.to_string(),
        mod_revision: r.u64()?,
        create_revision: r.u64()?,
        value: Arc::from(r.bytes),
    })
}

/// The part of a history event a watcher needs to decide whether it wants
/// it, decoded without copying the values.
pub(crate) struct EventHeader<'a> {
    pub time_ms: u64,
    pub key: &'a str,
    kind: EventKind,
    rest: Reader<'a>,
}

/// One entry of the on-disk history.
pub(crate) enum HistoryItem<'a> {
    Event(EventHeader<'a>),
    /// A lost-range marker: the revisions after `after` and before this
    /// one's were lost in a crash (see the module doc).
    Lost {
        time_ms: u64,
        after: Revision,
    },
}

impl HistoryItem<'_> {
    pub(crate) fn time_ms(&self) -> u64 {
        match self {
            HistoryItem::Event(header) => header.time_ms,
            HistoryItem::Lost { time_ms, .. } => *time_ms,
        }
    }

    /// The revision this item follows in the history: the one before it
    /// for an event, the last one before the lost range for a marker.
    pub(crate) fn follows(&self, revision: Revision) -> Revision {
        match self {
            HistoryItem::Event(_) => revision - 1,
            HistoryItem::Lost { after, .. } => *after,
        }
    }
}

pub(crate) fn decode_history(bytes: &[u8]) -> Result<HistoryItem<'_>> {
    let mut r = Reader {
        bytes,
        what: "history event",
    };
    let kind = match r.u8()? {
        0 => EventKind::Added,
        1 => EventKind::Modified,
        2 => EventKind::Deleted,
        LOST_KIND => {
            let time_ms = r.u64()?;
            let after = r.u64()?;
            return Ok(HistoryItem::Lost { time_ms, after });
        }
        _ => return Err(corrupt("history event kind")),
    };
    let time_ms = r.u64()?;
    let key = r.str()?;
    Ok(HistoryItem::Event(EventHeader {
        time_ms,
        key,
        kind,
        rest: r,
    }))
}

impl EventHeader<'_> {
    /// Decodes the values too, making the full event of `revision`.
    pub(crate) fn into_event(mut self, revision: Revision) -> Result<Event> {
        let value: Arc<[u8]> = Arc::from(self.rest.bytes()?);
        let prev_value = match self.kind {
            EventKind::Added => None,
            EventKind::Modified => Some(Arc::from(self.rest.bytes()?)),
            EventKind::Deleted => Some(value.clone()),
        };
        Ok(Event {
            kind: self.kind,
            key: self.key.to_string(),
            value,
            prev_value,
            revision,
        })
    }
}

/// Everything [`recover`] reads back from disk.
pub(crate) struct Recovered {
    pub objects: BTreeMap<String, Record>,
    pub revision: Revision,
    /// `m/reserved`: no revision above it was handed out. `None` in a store
    /// of layout version 1, which did not reserve.
    pub reserved: Option<Revision>,
    pub oldest: Revision,
    pub history: VecDeque<Entry>,
    /// The lost ranges whose markers are in `history`, oldest first.
    pub lost: VecDeque<Lost>,
}

/// Reads the whole store back: objects into memory, the history as an
/// index of (revision, time), and the counters.
///
/// The revision is the largest of `m/revision`, the last history entry and
/// every object's `mod_revision`, so that even a damaged counter can never
/// make a revision be handed out twice. If the history is not one contiguous
/// run ending at that revision (which the batch layout should rule out), the
/// part before the last gap is treated as trimmed rather than replayed with
/// a hole. A lost-range marker is not a hole: it continues the run from its
/// `after`.
pub(crate) fn recover(db: &sled::Db) -> Result<Recovered> {
    match db.get(META_FORMAT)? {
        Some(v) if decode_u64(&v, "m/format")? == FORMAT => {}
        // A new store, or version 1: version 2 only adds to it.
        None => {
            db.insert(META_FORMAT, &encode_u64(FORMAT))?;
        }
        Some(v) if decode_u64(&v, "m/format")? == 1 => {
            db.insert(META_FORMAT, &encode_u64(FORMAT))?;
        }
        Some(_) => return Err(corrupt("m/format: unknown layout version")),
    }
    let mut revision = match db.get(META_REVISION)? {
        Some(v) => decode_u64(&v, "m/revision")?,
        None => 0,
    };
    let reserved = match db.get(META_RESERVED)? {
        Some(v) => Some(decode_u64(&v, "m/reserved")?),
        None => None,
    };
    let mut oldest = match db.get(META_OLDEST)? {
        Some(v) => decode_u64(&v, "m/oldest")?,
        None => 0,
    };

    let mut objects = BTreeMap::new();
    for item in db.scan_prefix(OBJECT) {
        let (k, v) = item?;
        let record = decode_record(&k, &v)?;
        revision = revision.max(record.mod_revision);
        objects.insert(record.key.clone(), record);
    }

    let mut history: VecDeque<Entry> = VecDeque::new();
    let mut lost = VecDeque::new();
    for item in db.scan_prefix(HISTORY) {
        let (k, v) = item?;
        let rev = decode_revision_key(&k)?;
        let item = decode_history(&v)?;
        if rev <= oldest {
            continue; // trimmed in memory before a crash hid the removal
        }
        let linked = match history.back() {
            Some(last) => item.follows(rev) == last.revision,
            // The first kept item follows the trimmed part; a marker's lost
            // range may begin inside it.
            None => match item {
                HistoryItem::Event(_) => rev == oldest + 1,
                HistoryItem::Lost { after, .. } => after <= oldest,
            },
        };
        if !linked {
            tracing::warn!(
                rev,
                "gap in watch history; treating the part before it as compacted"
            );
            history.clear();
            lost.clear();
            oldest = rev - 1;
        }
        if let HistoryItem::Lost { after, .. } = item {
            lost.push_back(Lost { after, at: rev });
        }
        history.push_back(Entry {
            revision: rev,
            time_ms: item.time_ms(),
        });
    }
    if let Some(last) = history.back() {
        revision = revision.max(last.revision);
    }
    if history.back().map_or(oldest, |e| e.revision) != revision {
        tracing::warn!(
            revision,
            "watch history does not reach the last revision; compacting it all"
        );
        history.clear();
        lost.clear();
        oldest = revision;
    }
    Ok(Recovered {
        objects,
        revision,
        reserved,
        oldest,
        history,
        lost,
    })
}
