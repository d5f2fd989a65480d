//! How the store lies on disk, and how it is read back after a restart.
//!
//! Everything lives in sled's default tree, in three key spaces:
//!
//! | sled key | sled value |
//! | --- | --- |
//! | `o/` + object key | `mod_revision` u64 BE, `create_revision` u64 BE, value bytes |
//! | `h/` + revision u64 BE | one history event (below) |
//! | `m/revision` | u64 BE: the last assigned revision |
//! | `m/oldest` | u64 BE: history up to and including it has been trimmed |
//! | `m/format` | u64 BE: this layout's version, [`FORMAT`] |
//!
//! A history event is `kind` u8 (0 added, 1 modified, 2 deleted),
//! `time_ms` u64 BE (simulated ms since the Unix epoch), `key_len` u32 BE,
//! key, `value_len` u32 BE, value, then for `Modified` only `prev_len`
//! u32 BE and the previous value. A `Deleted` event stores the last state
//! once: it is both its value and its previous value.
//!
//! Why one tree: sled applies a [`sled::Batch`] atomically per tree, also
//! across a crash. Each write is one batch holding the object change, its
//! history entry, the new `m/revision` and any history it trims, so after
//! `kill -9` the disk holds every write up to some revision and nothing
//! after it. Big-endian revisions make sled's key order revision order.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::history::Entry;
use crate::{Error, Event, EventKind, Record, Result, Revision};

/// The layout version written to `m/format`.
pub(crate) const FORMAT: u64 = 1;

const OBJECT: &[u8] = b"o/";
const HISTORY: &[u8] = b"h/";
pub(crate) const META_REVISION: &[u8] = b"m/revision";
pub(crate) const META_OLDEST: &[u8] = b"m/oldest";
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

pub(crate) fn decode_event_header(bytes: &[u8]) -> Result<EventHeader<'_>> {
    let mut r = Reader {
        bytes,
        what: "history event",
    };
    let kind = match r.u8()? {
        0 => EventKind::Added,
        1 => EventKind::Modified,
        2 => EventKind::Deleted,
        _ => return Err(corrupt("history event kind")),
    };
    let time_ms = r.u64()?;
    let key = r.str()?;
    Ok(EventHeader {
        time_ms,
        key,
        kind,
        rest: r,
    })
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
    pub oldest: Revision,
    pub history: VecDeque<Entry>,
}

/// Reads the whole store back: objects into memory, the history as an
/// index of (revision, time), and the counters.
///
/// The revision is the largest of `m/revision`, the last history entry and
/// every object's `mod_revision`, so that even a damaged counter can never
/// make a revision be handed out twice. If the history is not one contiguous
/// run ending at that revision (which the batch layout should rule out), the
/// part before the last gap is treated as trimmed rather than replayed with
/// a hole.
pub(crate) fn recover(db: &sled::Db) -> Result<Recovered> {
    match db.get(META_FORMAT)? {
        None => {
            db.insert(META_FORMAT, &encode_u64(FORMAT))?;
        }
        Some(v) if decode_u64(&v, "m/format")? == FORMAT => {}
        Some(_) => return Err(corrupt("m/format: unknown layout version")),
    }
    let mut revision = match db.get(META_REVISION)? {
        Some(v) => decode_u64(&v, "m/revision")?,
        None => 0,
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

    let mut history = VecDeque::new();
    for item in db.scan_prefix(HISTORY) {
        let (k, v) = item?;
        let rev = decode_revision_key(&k)?;
        let header = decode_event_header(&v)?;
        if rev <= oldest {
            continue; // trimmed in memory before a crash hid the removal
        }
        let expected = history.back().map_or(oldest + 1, |e: &Entry| e.revision + 1);
        if rev != expected {
            tracing::warn!(
                rev,
                expected,
                "gap in watch history; treating the part before it as compacted"
            );
            history.clear();
            oldest = rev - 1;
        }
        history.push_back(Entry {
            revision: rev,
            time_ms: header.time_ms,
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
        oldest = revision;
    }
    Ok(Recovered {
        objects,
        revision,
        oldest,
        history,
    })
}
