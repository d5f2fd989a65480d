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

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// An entry's id: 1, 2, 3, ... in the order entries were recorded.
pub type EntryId = u64;

/// How many entries a journal keeps by default (`--journal-size`).
pub const DEFAULT_CAPACITY: usize = 20_000;

/// Causes of one sync kept at most (the first one, the rest in `also`); a
/// key added more often before a worker takes it is counted, not listed.
pub const MAX_CAUSES: usize = 16;

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
    /// A controller's sync of one key: verb `start` (caused by the enqueues
    /// it answers), then verb `end` (caused by the start; the outcome).
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
    /// The verb, for writes (`create`, `update`, `patch`, `delete`), events
    /// (`ADDED`, `MODIFIED`, `DELETED`, `RESYNC`) and syncs (`start`, `end`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub verb: String,
    /// What the step is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjectRef>,
    /// The subresource a write went to (`status`, `scale`, `binding`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
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
///
/// An `Event` record with a `resource_version` and no `cause` gets the
/// write that produced that resourceVersion as its cause (and, with no
/// message, that write's message), whichever of the two is recorded first;
/// `RESYNC` events are not resolved (a timer made them, not a write).
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// The entry that caused this one ([`current_cause`], mostly).
    pub cause: Option<EntryId>,
    /// Further causes (a sync's other enqueues).
    pub also: Vec<EntryId>,
    /// The step; `None` records a `Decision`.
    pub step: Option<Step>,
    /// Who.
    pub actor: String,
    /// The verb (see [`Entry::verb`]).
    pub verb: String,
    /// What the step is about.
    pub object: Option<ObjectRef>,
    /// A write's subresource.
    pub subresource: String,
    /// The resourceVersion a write produced or an event carried.
    pub resource_version: String,
    /// The upstream function a decision mirrors.
    pub function: String,
    /// The sentence.
    pub message: String,
}

/// Which entries [`Journal::page`] returns: those with an id above
/// `after`, about one object (every field given must match), at most `limit`.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// Entries with a greater id.
    pub after: EntryId,
    /// At most this many (0: no limit).
    pub limit: usize,
    /// `object.kind` (exact).
    pub kind: Option<String>,
    /// `object.namespace` (exact; `""` for cluster-scoped objects).
    pub namespace: Option<String>,
    /// `object.name` (exact).
    pub name: Option<String>,
    /// Stop before an event still waiting for its write (a follower gives
    /// the writer a moment to record it: see [`Page::held`]).
    pub hold_unresolved: bool,
}

impl Query {
    fn matches(&self, entry: &Entry) -> bool {
        let any = self.kind.is_some() || self.namespace.is_some() || self.name.is_some();
        if !any {
            return true;
        }
        let Some(o) = &entry.object else {
            return false;
        };
        self.kind.as_ref().is_none_or(|k| *k == o.kind)
            && self.namespace.as_ref().is_none_or(|n| *n == o.namespace)
            && self.name.as_ref().is_none_or(|n| *n == o.name)
    }
}

/// One page of entries.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// The matching entries, oldest first.
    pub entries: Vec<Entry>,
    /// The `after` of the next page: the last id looked at.
    pub next: EntryId,
    /// Whether the page stopped before an event waiting for its write
    /// ([`Query::hold_unresolved`]).
    pub held: bool,
}

/// A cheap-to-clone handle on one cluster's journal.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    /// 0: recording is off (`--journal-size 0`).
    capacity: usize,
    /// The entries and the indexes that resolve causes. A std mutex: each
    /// holder does a few map and deque operations, never awaits.
    ring: Mutex<Ring>,
    /// Wakes the followers ([`Journal::recorded_after`]) after a record;
    /// notified only while `followers` is above 0, so that recording with
    /// nobody following costs no wakeup.
    recorded: tokio::sync::Notify,
    /// How many tasks wait in [`Journal::recorded_after`].
    followers: AtomicUsize,
}

/// An entry as kept: its simulated time unformatted (formatted on read).
struct Kept {
    at: SystemTime,
    /// The resourceVersion as a number (0: none), for the indexes.
    rv: u64,
    /// An event still waiting for the write that produced `rv`.
    waiting: bool,
    entry: Entry,
}

struct Ring {
    next_id: EntryId,
    entries: VecDeque<Kept>,
    /// resourceVersion → the write entry that produced it (writes in the ring only).
    writes: HashMap<u64, EntryId>,
    /// resourceVersion → the event entries recorded before their write
    /// (events in the ring only).
    waiting: HashMap<u64, Vec<EntryId>>,
}

impl Ring {
    /// The kept entry `id`, if still in the ring (ids are consecutive).
    fn get_mut(&mut self, id: EntryId) -> Option<&mut Kept> {
        let first = self.entries.front()?.entry.id;
        let index = usize::try_from(id.checked_sub(first)?).ok()?;
        self.entries.get_mut(index)
    }

    fn get(&self, id: EntryId) -> Option<&Kept> {
        let first = self.entries.front()?.entry.id;
        let index = usize::try_from(id.checked_sub(first)?).ok()?;
        self.entries.get(index)
    }

    /// Drops the oldest entry and its index rows.
    fn pop_oldest(&mut self) {
        let Some(old) = self.entries.pop_front() else {
            return;
        };
        match old.entry.step {
            Step::Write if self.writes.get(&old.rv) == Some(&old.entry.id) => {
                self.writes.remove(&old.rv);
            }
            Step::Event if old.waiting => {
                if let Some(ids) = self.waiting.get_mut(&old.rv) {
                    ids.retain(|id| *id != old.entry.id);
                    if ids.is_empty() {
                        self.waiting.remove(&old.rv);
                    }
                }
            }
            _ => {}
        }
    }

    /// A write was recorded: it is its resourceVersion's cause, and the
    /// cause of the events that arrived before it.
    fn index_write(&mut self, rv: u64, id: EntryId, message: &str) {
        self.writes.insert(rv, id);
        for event in self.waiting.remove(&rv).unwrap_or_default() {
            if let Some(kept) = self.get_mut(event) {
                resolve(kept, id, message);
            }
        }
    }

    /// An event was recorded: its cause is the write of its resourceVersion,
    /// now or when that write is recorded.
    fn index_event(&mut self, kept: &mut Kept) {
        match self.writes.get(&kept.rv).copied() {
            Some(write) => {
                let message = self.get(write).map(|w| w.entry.message.clone());
                resolve(kept, write, message.as_deref().unwrap_or(""));
            }
            None => {
                kept.waiting = true;
                self.waiting.entry(kept.rv).or_default().push(kept.entry.id);
            }
        }
    }
}

/// Sets an event's cause to `write` (and its message, when it has none).
fn resolve(kept: &mut Kept, write: EntryId, message: &str) {
    kept.waiting = false;
    kept.entry.cause = Some(write);
    if kept.entry.message.is_empty() {
        kept.entry.message = message.to_string();
    }
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
                    writes: HashMap::new(),
                    waiting: HashMap::new(),
                }),
                recorded: tokio::sync::Notify::new(),
                followers: AtomicUsize::new(0),
            }),
        }
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        // Each holder leaves the ring consistent, so a poisoned lock is usable.
        self.inner.ring.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether entries are recorded (check before building a message).
    pub fn enabled(&self) -> bool {
        self.inner.capacity > 0
    }

    /// How many entries are kept at most.
    pub fn capacity(&self) -> usize {
        self.inner.capacity
    }

    /// Records one step at simulated time `at`; returns its id (0 when off).
    pub fn record(&self, at: SystemTime, record: Record) -> EntryId {
        if !self.enabled() {
            return 0;
        }
        let step = record.step.unwrap_or(Step::Decision);
        let rv = record.resource_version.parse::<u64>().unwrap_or(0);
        let mut kept = Kept {
            at,
            rv,
            waiting: false,
            entry: Entry {
                id: 0,
                time: String::new(),
                cause: record.cause,
                also: record.also,
                step,
                actor: record.actor,
                verb: record.verb,
                object: record.object,
                subresource: record.subresource,
                resource_version: record.resource_version,
                function: record.function,
                message: record.message,
            },
        };
        let mut ring = self.ring();
        let id = ring.next_id;
        ring.next_id += 1;
        kept.entry.id = id;
        if ring.entries.len() >= self.inner.capacity {
            ring.pop_oldest();
        }
        match step {
            Step::Write if rv != 0 => {
                let message = kept.entry.message.clone();
                ring.entries.push_back(kept);
                ring.index_write(rv, id, &message);
            }
            Step::Event if rv != 0 && kept.entry.cause.is_none() && kept.entry.verb != "RESYNC" => {
                ring.index_event(&mut kept);
                ring.entries.push_back(kept);
            }
            _ => ring.entries.push_back(kept),
        }
        drop(ring);
        if self.inner.followers.load(Ordering::SeqCst) > 0 {
            self.inner.recorded.notify_waiters();
        }
        id
    }

    /// The entries with an id greater than `after`, oldest first.
    pub fn since(&self, after: EntryId) -> Vec<Entry> {
        self.page(&Query {
            after,
            ..Query::default()
        })
        .entries
    }

    /// One entry, while it is in the ring.
    pub fn get(&self, id: EntryId) -> Option<Entry> {
        self.ring().get(id).map(materialize)
    }

    /// The entries `query` selects, oldest first, and where the next page starts.
    pub fn page(&self, query: &Query) -> Page {
        let ring = self.ring();
        let mut page = Page {
            entries: Vec::new(),
            next: query.after,
            held: false,
        };
        let Some(first) = ring.entries.front().map(|k| k.entry.id) else {
            return page;
        };
        let skip = usize::try_from(query.after.saturating_add(1).saturating_sub(first)).unwrap_or(usize::MAX);
        for kept in ring.entries.iter().skip(skip) {
            if kept.waiting && query.hold_unresolved {
                page.held = true;
                break;
            }
            page.next = kept.entry.id;
            if query.matches(&kept.entry) {
                page.entries.push(materialize(kept));
                if query.limit > 0 && page.entries.len() >= query.limit {
                    break;
                }
            }
        }
        page
    }

    /// The id of the newest entry (0: none yet).
    pub fn last_id(&self) -> EntryId {
        self.ring().next_id - 1
    }

    /// The id the next entry will get.
    pub fn next_id(&self) -> EntryId {
        self.ring().next_id
    }

    /// Waits until an entry newer than `after` is recorded; for the
    /// followers of the journal (`/debug/journal?watch=true`), which select
    /// it against their own timers and shutdown.
    pub async fn recorded_after(&self, after: EntryId) {
        struct Following<'a>(&'a AtomicUsize);
        impl Drop for Following<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.inner.followers.fetch_add(1, Ordering::SeqCst);
        let _following = Following(&self.inner.followers);
        let notified = self.inner.recorded.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.last_id() > after {
            return;
        }
        notified.await;
    }
}

/// The entry as readers see it: the time formatted.
fn materialize(kept: &Kept) -> Entry {
    let mut entry = kept.entry.clone();
    entry.time = rfc3339_micros(kept.at);
    entry
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

    fn at() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(86_400 * 365)
    }

    fn write(j: &Journal, rv: &str, message: &str) -> EntryId {
        j.record(
            at(),
            Record {
                step: Some(Step::Write),
                actor: "kubectl-set".into(),
                verb: "patch".into(),
                object: Some(ObjectRef::new("Deployment", "default", "web")),
                resource_version: rv.into(),
                message: message.into(),
                ..Record::default()
            },
        )
    }

    fn event(j: &Journal, verb: &str, rv: &str) -> EntryId {
        j.record(
            at(),
            Record {
                step: Some(Step::Event),
                actor: "Deployment".into(),
                verb: verb.into(),
                object: Some(ObjectRef::new("Deployment", "default", "web")),
                resource_version: rv.into(),
                ..Record::default()
            },
        )
    }

    #[test]
    fn an_event_after_its_write_is_caused_by_it() {
        let j = Journal::new(10);
        let w = write(&j, "7", "spec.replicas 3→5");
        let e = event(&j, "MODIFIED", "7");
        let got = j.get(e).unwrap();
        assert_eq!(got.cause, Some(w));
        assert_eq!(got.message, "spec.replicas 3→5");
    }

    #[test]
    fn an_event_before_its_write_is_resolved_when_the_write_comes() {
        let j = Journal::new(10);
        let e = event(&j, "MODIFIED", "9");
        assert_eq!(j.get(e).unwrap().cause, None);
        let w = write(&j, "9", "created");
        let got = j.get(e).unwrap();
        assert_eq!(got.cause, Some(w));
        assert_eq!(got.message, "created");
    }

    #[test]
    fn resyncs_and_unknown_versions_stay_without_cause() {
        let j = Journal::new(10);
        write(&j, "4", "created");
        let resync = event(&j, "RESYNC", "4");
        let unknown = event(&j, "ADDED", "5");
        assert_eq!(j.get(resync).unwrap().cause, None);
        assert_eq!(j.get(unknown).unwrap().cause, None);
    }

    #[test]
    fn the_indexes_forget_what_fell_off_the_ring() {
        let j = Journal::new(2);
        write(&j, "1", "a");
        event(&j, "ADDED", "2"); // waits for write 2
        event(&j, "ADDED", "3");
        event(&j, "ADDED", "4"); // the write of rv 1 and the event of rv 2 are gone
        let ring = j.ring();
        assert!(ring.writes.is_empty());
        assert_eq!(ring.waiting.keys().copied().collect::<Vec<_>>().len(), 2);
        assert!(!ring.waiting.contains_key(&2));
    }

    #[test]
    fn pages_filter_by_object_and_tell_where_to_go_on() {
        let j = Journal::new(100);
        write(&j, "1", "a");
        j.record(
            at(),
            Record {
                step: Some(Step::Write),
                object: Some(ObjectRef::new("Pod", "default", "web-1")),
                ..Record::default()
            },
        );
        write(&j, "3", "b");
        let page = j.page(&Query {
            kind: Some("Pod".into()),
            ..Query::default()
        });
        assert_eq!(page.entries.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2]);
        assert_eq!(page.next, 3);
        let page = j.page(&Query {
            after: 1,
            limit: 1,
            ..Query::default()
        });
        assert_eq!(page.entries.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2]);
        assert_eq!(page.next, 2);
        let empty = j.page(&Query {
            after: 3,
            ..Query::default()
        });
        assert!(empty.entries.is_empty());
        assert_eq!(empty.next, 3);
    }

    #[test]
    fn a_follower_stops_before_an_unsettled_event() {
        let j = Journal::new(10);
        write(&j, "1", "a");
        event(&j, "ADDED", "2");
        write(&j, "3", "b");
        let page = j.page(&Query {
            hold_unresolved: true,
            ..Query::default()
        });
        assert_eq!(page.entries.len(), 1);
        assert_eq!((page.next, page.held), (1, true));
        let page = j.page(&Query::default());
        assert_eq!(page.entries.len(), 3, "not held: given as it is");
        assert!(!page.held);
    }

    #[test]
    fn entries_serialize_in_camel_case() {
        let j = Journal::new(10);
        write(&j, "12", "created");
        let v = serde_json::to_value(j.get(1).unwrap()).unwrap();
        assert_eq!(v["resourceVersion"], "12");
        assert_eq!(v["step"], "write");
        assert_eq!(v["object"]["kind"], "Deployment");
        assert!(v.get("cause").is_none());
    }

    #[tokio::test]
    async fn followers_wake_on_a_record() {
        let j = Journal::new(10);
        let follower = tokio::spawn({
            let j = j.clone();
            async move { j.recorded_after(0).await }
        });
        tokio::task::yield_now().await;
        write(&j, "1", "a");
        tokio::time::timeout(Duration::from_secs(5), follower)
            .await
            .expect("woken")
            .unwrap();
        assert_eq!(j.inner.followers.load(Ordering::SeqCst), 0);
    }
}
