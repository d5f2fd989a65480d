//! The causal journal: what every component did, and why.
//!
//! Every step of the machinery is one [`Entry`] with an id and the id of
//! the entry that caused it, so a chain can be followed from a user's
//! `kubectl set image` to the last pod the kubelet started:
//!
//! ```text
//! write    kubectl-set  update deployments default/web            (no cause: a user's request)
//! event    Deployment   MODIFIED default/web  spec.template ...   cause: the write, by resourceVersion
//! enqueue  deployment   default/web                               cause: the event
//! sync     deployment   default/web                               cause: the enqueue(s)
//! decision deployment   reconcileNewReplicaSet: ...               cause: the sync
//! write    deployment   create replicasets default/web-6d4f       cause: the sync
//! ```
//!
//! The journal is a bounded ring in memory (the oldest entries fall off),
//! reached from the one [`crate::Clock`] every component already holds. It
//! is read over the API (`/debug/journal`), by `miniplane explain`, and
//! written as the `--trace controllers` lines.
//!
//! There is no upstream counterpart; the nearest are client-go's `-v=4`
//! logs and the apiserver's audit log, neither of which links causes.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// An entry's id: 1, 2, 3, ... in the order entries were recorded.
pub type EntryId = u64;

/// How many entries a journal keeps by default (`--journal-size`).
pub const DEFAULT_CAPACITY: usize = 20_000;

/// What kind of step an entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Step {
    /// A write the API server accepted (create, update, patch, delete); with
    /// no cause, a client's own request (kubectl, a client library).
    Write,
    /// An informer delivered a watch event (ADDED, MODIFIED, DELETED, RESYNC).
    Event,
    /// A key went into a controller's work queue.
    Enqueue,
    /// A controller's sync of one key started.
    Sync,
    /// A decision a sync's plan made, with its numbers and the upstream
    /// function it mirrors.
    Decision,
    /// A sync held at a breakpoint (`miniplane time break-on`).
    Break,
    /// The time machine: pause, resume, scale, step.
    Time,
}

/// The object an entry is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// `Deployment`, `Pod`, ...
    pub kind: String,
    /// Empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

impl ObjectRef {
    /// `kind` `namespace/name` (an empty namespace for cluster-scoped objects).
    pub fn new(kind: &str, namespace: &str, name: &str) -> Self {
        ObjectRef {
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
}

/// One recorded step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// This entry's id.
    pub id: EntryId,
    /// Simulated time, RFC 3339 with microseconds.
    pub time: String,
    /// The entry that caused this one; `None` for a client's own request
    /// (or a cause that fell off the ring, or a timer: see `message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<EntryId>,
    /// Further causes: the other enqueues a sync took at once (the queue
    /// deduplicates keys, so one sync can answer several events).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<EntryId>,
    /// What kind of step.
    pub step: Step,
    /// Who: a controller's name, an informer's kind, a field manager.
    pub actor: String,
    /// The verb, for writes (`create`, `update`, `patch`, `delete`) and
    /// events (`ADDED`, `MODIFIED`, `DELETED`, `RESYNC`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub verb: String,
    /// What the step is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjectRef>,
    /// The resourceVersion a write produced or an event carried.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// The upstream function a decision mirrors (`reconcileOldReplicaSets`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub function: String,
    /// The sentence: what changed, the numbers, the outcome.
    pub message: String,
}

/// What a component hands to [`Journal::record`]; the journal adds the id
/// and the time.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub cause: Option<EntryId>,
    pub also: Vec<EntryId>,
    pub step: Option<Step>,
    pub actor: String,
    pub verb: String,
    pub object: Option<ObjectRef>,
    pub resource_version: String,
    pub function: String,
    pub message: String,
}

/// A cheap-to-clone handle on one cluster's journal.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    /// 0: recording is off (`--journal-size 0`).
    capacity: usize,
    ring: Mutex<Ring>,
}

struct Ring {
    next_id: EntryId,
    entries: VecDeque<Entry>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("capacity", &self.inner.capacity)
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// A journal keeping the last `capacity` entries; 0 records nothing.
    pub fn new(capacity: usize) -> Self {
        Journal {
            inner: Arc::new(Inner {
                capacity,
                ring: Mutex::new(Ring {
                    next_id: 1,
                    entries: VecDeque::new(),
                }),
            }),
        }
    }

    /// Whether entries are recorded (check before building a message).
    pub fn enabled(&self) -> bool {
        self.inner.capacity > 0
    }

    /// Records one step at simulated time `at`; returns its id (0 when off).
    pub fn record(&self, at: SystemTime, record: Record) -> EntryId {
        if !self.enabled() {
            return 0;
        }
        let mut ring = self.inner.ring.lock().unwrap_or_else(|p| p.into_inner());
        let id = ring.next_id;
        ring.next_id += 1;
        let entry = Entry {
            id,
            time: rfc3339_micros(at),
            cause: record.cause,
            also: record.also,
            step: record.step.unwrap_or(Step::Decision),
            actor: record.actor,
            verb: record.verb,
            object: record.object,
            resource_version: record.resource_version,
            function: record.function,
            message: record.message,
        };
        if ring.entries.len() == self.inner.capacity {
            ring.entries.pop_front();
        }
        ring.entries.push_back(entry);
        id
    }

    /// The entries with an id greater than `after`, oldest first.
    pub fn since(&self, after: EntryId) -> Vec<Entry> {
        let ring = self.inner.ring.lock().unwrap_or_else(|p| p.into_inner());
        ring.entries.iter().filter(|e| e.id > after).cloned().collect()
    }

    /// The id the next entry will get.
    pub fn next_id(&self) -> EntryId {
        self.inner.ring.lock().unwrap_or_else(|p| p.into_inner()).next_id
    }
}

tokio::task_local! {
    /// The entry the running task acts for: a sync while it reconciles, an
    /// event while a handler maps it to keys.
    static CAUSE: EntryId;
}

/// The entry the current task acts for, if any.
pub fn current_cause() -> Option<EntryId> {
    CAUSE.try_with(|c| *c).ok().filter(|c| *c != 0)
}

/// Runs `f` with `cause` as the current cause.
pub async fn caused_by<F: std::future::Future>(cause: EntryId, f: F) -> F::Output {
    CAUSE.scope(cause, f).await
}

/// Runs the closure `f` with `cause` as the current cause.
pub fn caused_by_sync<R>(cause: EntryId, f: impl FnOnce() -> R) -> R {
    CAUSE.sync_scope(cause, f)
}

/// `2026-12-02T15:04:05.123456Z`.
fn rfc3339_micros(at: SystemTime) -> String {
    match jiff::Timestamp::try_from(at) {
        Ok(t) => format!("{t:.6}"),
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_ring_keeps_the_newest_entries() {
        let j = Journal::new(2);
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(86_400 * 365);
        for i in 0..3 {
            j.record(
                at,
                Record {
                    message: format!("m{i}"),
                    ..Record::default()
                },
            );
        }
        let all = j.since(0);
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(all[0].time, "1971-01-01T00:00:00.000000Z");
    }

    #[test]
    fn an_empty_journal_records_nothing() {
        let j = Journal::new(0);
        assert_eq!(j.record(SystemTime::UNIX_EPOCH, Record::default()), 0);
        assert!(j.since(0).is_empty());
    }
}
