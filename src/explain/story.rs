//! From journal entries to the story of one object: which steps made it what it is, grouped by
//! the sync that took them. Pure: entries in, [`Story`] out.
//!
//! ```text
//! seeds    writes to the object (not its status, unless asked) and decisions about it made
//!          by a sync that wrote something (a sync that changed nothing explains nothing)
//! chain    each seed's `cause`, and its cause, ... back to a root (the first entry with no
//!          cause, or whose cause fell off the ring)
//! groups   one per sync on a chain: the sync's decisions (all of them: the why) and its writes
//!          on a chain (the what); one per root (a user's request, a timer); newest first
//! ```
//!
//! Events and enqueues are the plumbing between a write and the sync it woke: they are not shown
//! as steps, but a sync's header says what woke it (`after replicaset default/web-6d4f
//! MODIFIED`). Only `cause` is followed, not `also` (the other enqueues a sync answered at once),
//! so every step has one chain back.

use std::collections::{BTreeSet, HashMap};

use store::journal::{Entry, EntryId, ObjectRef, Step};

use super::target::{Target, resource_of};

/// The explanation of one object, newest group first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Story {
    /// Newest first.
    pub groups: Vec<Group>,
}

/// One step of the story: a sync with what it decided and wrote, or a root (a request).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// When (the entry's simulated time, RFC 3339).
    pub time: String,
    /// The first line: who did what (`replicaset: synced replicaset default/web-6d4f ...`).
    pub header: String,
    /// The decisions and writes under it, oldest first.
    pub lines: Vec<String>,
}

/// Builds the story of `target` from `entries` (oldest first, as the journal returns them).
/// `status_writes`: writes to the object's status count as seeds too (a kubelet's reports).
pub fn build(entries: &[Entry], target: &Target, status_writes: bool) -> Story {
    let by_id: HashMap<EntryId, &Entry> = entries.iter().map(|e| (e.id, e)).collect();
    let mut caused: HashMap<EntryId, Vec<&Entry>> = HashMap::new();
    for e in entries {
        if let Some(c) = e.cause {
            caused.entry(c).or_default().push(e);
        }
    }
    let wrote = |sync: Option<EntryId>| {
        let children = sync.and_then(|s| caused.get(&s));
        children.is_some_and(|c| c.iter().any(|e| e.step == Step::Write))
    };
    let seeds = entries
        .iter()
        .filter(|e| is_seed(e, target, status_writes))
        .filter(|e| e.step != Step::Decision || status_writes || wrote(e.cause));
    let mut chain: BTreeSet<EntryId> = BTreeSet::new();
    for seed in seeds {
        walk_back(seed, &by_id, &mut chain);
    }
    let mut keys: HashMap<EntryId, (EntryId, usize)> = HashMap::new();
    let mut ordered: Vec<&Entry> = chain.iter().filter_map(|id| by_id.get(id).copied()).collect();
    ordered.sort_by_key(|e| std::cmp::Reverse(causal_key(e, &by_id, &mut keys)));
    let groups = ordered
        .into_iter()
        .filter_map(|e| group_of(e, &by_id, &caused, &chain))
        .collect();
    Story { groups }
}

/// Where `e` goes in the story: after everything on its chain, even when a write's entry was
/// recorded after the event it caused (the API records a write once it is committed, and a
/// watcher may have seen it first). The largest id on the chain, then the depth.
fn causal_key(
    e: &Entry,
    by_id: &HashMap<EntryId, &Entry>,
    keys: &mut HashMap<EntryId, (EntryId, usize)>,
) -> (EntryId, usize) {
    if let Some(k) = keys.get(&e.id) {
        return *k;
    }
    // Iterative: chains can be long.
    let mut path = vec![e];
    while let Some(c) = path
        .last()
        .and_then(|l| l.cause)
        .and_then(|c| by_id.get(&c).copied())
    {
        if keys.contains_key(&c.id) || path.iter().any(|p| p.id == c.id) {
            break;
        }
        path.push(c);
    }
    let mut below = path
        .last()
        .and_then(|l| l.cause)
        .and_then(|c| keys.get(&c).copied());
    for step in path.iter().rev() {
        let key = match below {
            Some((id, depth)) => (id.max(step.id), depth + 1),
            None => (step.id, 0),
        };
        keys.insert(step.id, key);
        below = Some(key);
    }
    keys[&e.id]
}

/// Whether `e` is about `target` and starts a chain.
fn is_seed(e: &Entry, target: &Target, status_writes: bool) -> bool {
    let about = e
        .object
        .as_ref()
        .is_some_and(|o| o.kind == target.kind && o.name == target.name && o.namespace == target.namespace);
    match e.step {
        Step::Decision => about,
        Step::Write => about && (status_writes || e.subresource != "status"),
        _ => false,
    }
}

/// Adds `from` and its causes to `chain`, stopping at an entry already there.
fn walk_back(from: &Entry, by_id: &HashMap<EntryId, &Entry>, chain: &mut BTreeSet<EntryId>) {
    let mut at = Some(from);
    while let Some(e) = at {
        if !chain.insert(e.id) {
            return;
        }
        at = e.cause.and_then(|c| by_id.get(&c).copied());
    }
}

/// The group an entry on a chain opens, if any: syncs and roots do; the rest is shown inside a
/// sync's group or as the plumbing in its header.
fn group_of(
    e: &Entry,
    by_id: &HashMap<EntryId, &Entry>,
    caused: &HashMap<EntryId, Vec<&Entry>>,
    chain: &BTreeSet<EntryId>,
) -> Option<Group> {
    let cause = e.cause.and_then(|c| by_id.get(&c).copied());
    let header = match e.step {
        Step::Sync if e.verb == "end" => return None,
        Step::Sync => sync_header(e, cause, by_id),
        Step::Write if cause.is_none() => request_line(e),
        Step::Write | Step::Decision if cause.is_some_and(|c| c.step == Step::Sync) => return None,
        Step::Write => format!("{}: {}", e.actor, write_line(e)),
        Step::Decision => format!("{}: {}", e.actor, decision_line(e)),
        Step::Enqueue if cause.is_none() => enqueue_root(e),
        Step::Event if cause.is_none() => format!(
            "{} informer: {} {} (no write behind it: a resync)",
            e.actor,
            e.verb,
            object_words(e.object.as_ref())
        ),
        _ => return None,
    };
    let lines = match e.step {
        Step::Sync => sync_lines(e, caused, chain),
        _ => Vec::new(),
    };
    Some(Group {
        time: e.time.clone(),
        header,
        lines,
    })
}

/// `deployment: synced deployment default/web, after deployment default/web MODIFIED`.
fn sync_header(sync: &Entry, enqueue: Option<&Entry>, by_id: &HashMap<EntryId, &Entry>) -> String {
    let what = format!("{}: synced {}", sync.actor, object_words(sync.object.as_ref()));
    let Some(enqueue) = enqueue else {
        return what;
    };
    let event = enqueue.cause.and_then(|c| by_id.get(&c).copied());
    match event {
        Some(ev) if ev.step == Step::Event => {
            format!("{what}, after {} {}", object_words(ev.object.as_ref()), ev.verb)
        }
        Some(other) if other.step == Step::Sync => format!("{what}, {}", requeue_words(enqueue)),
        Some(other) => format!("{what}, after {}", step_words(other)),
        None if enqueue.step == Step::Enqueue => format!("{what}, {}", requeue_words(enqueue)),
        None => what,
    }
}

/// A sync's decisions (all) and its writes on a chain, oldest first.
fn sync_lines(
    sync: &Entry,
    caused: &HashMap<EntryId, Vec<&Entry>>,
    chain: &BTreeSet<EntryId>,
) -> Vec<String> {
    let children = caused.get(&sync.id).map(Vec::as_slice).unwrap_or_default();
    children
        .iter()
        .filter_map(|c| match c.step {
            Step::Decision => Some(decision_line(c)),
            Step::Write if chain.contains(&c.id) => Some(write_line(c)),
            _ => None,
        })
        .collect()
}

/// `you (kubectl-set) updated deployment default/web: spec.template... nginx:1.25→nginx:1.26`.
fn request_line(e: &Entry) -> String {
    format!("you ({}) {}", e.actor, write_line(e))
}

/// A queue's own enqueue with no cause: a requeue after a delay, a retry, a resync.
fn enqueue_root(e: &Entry) -> String {
    format!(
        "{} queue: {} {}",
        e.actor,
        object_words(e.object.as_ref()),
        requeue_words(e)
    )
}

fn requeue_words(enqueue: &Entry) -> String {
    match enqueue.message.as_str() {
        "" => "requeued (a delay, a retry or a resync)".to_string(),
        m => format!("requeued: {m}"),
    }
}

/// `updated replicaset default/web-6d4f: spec.replicas 0→1`; `created pod default/web-x`.
pub fn write_line(e: &Entry) -> String {
    let verb = past(&e.verb);
    let mut what = object_words(e.object.as_ref());
    if !e.subresource.is_empty() {
        what = format!("{what} ({})", e.subresource);
    }
    match e.message.as_str() {
        "" => format!("{verb} {what}"),
        m if m == verb => format!("{verb} {what}"),
        m => format!("{verb} {what}: {m}"),
    }
}

/// `reconcileNewReplicaSet: newReplicasCount = ...`.
fn decision_line(e: &Entry) -> String {
    match e.function.as_str() {
        "" => e.message.clone(),
        f => format!("{f}: {}", e.message),
    }
}

fn step_words(e: &Entry) -> String {
    match e.step {
        Step::Write => write_line(e),
        _ => format!("{} {}", e.actor, object_words(e.object.as_ref())),
    }
}

/// `replicaset default/web-6d4f`.
pub fn object_words(o: Option<&ObjectRef>) -> String {
    match o {
        None => "something".to_string(),
        Some(o) if o.kind.is_empty() => o.name.clone(),
        Some(o) if o.namespace.is_empty() => format!("{} {}", resource_of(&o.kind), o.name),
        Some(o) => format!("{} {}/{}", resource_of(&o.kind), o.namespace, o.name),
    }
}

/// `update` → `updated`.
fn past(verb: &str) -> String {
    match verb {
        "create" => "created".into(),
        "update" => "updated".into(),
        "patch" => "patched".into(),
        "delete" => "deleted".into(),
        "" => "wrote".into(),
        v => v.to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::explain::parse_target;

    /// An entry with the fields a story reads.
    pub(crate) fn entry(id: EntryId, cause: Option<EntryId>, step: Step, actor: &str) -> Entry {
        Entry {
            id,
            time: format!("2026-12-02T15:00:{:02}.000000Z", id),
            cause,
            also: Vec::new(),
            step,
            actor: actor.into(),
            verb: String::new(),
            object: None,
            subresource: String::new(),
            resource_version: String::new(),
            function: String::new(),
            message: String::new(),
        }
    }

    pub(crate) fn about(mut e: Entry, kind: &str, name: &str) -> Entry {
        e.object = Some(ObjectRef::new(kind, "default", name));
        e
    }

    pub(crate) fn with(mut e: Entry, verb: &str, function: &str, message: &str) -> Entry {
        e.verb = verb.into();
        e.function = function.into();
        e.message = message.into();
        e
    }

    /// The chain of `kubectl set image`: write → event → enqueue → sync → decision + write
    /// (a ReplicaSet) → event → enqueue → sync → decision + write (a pod), plus noise.
    pub(crate) fn rollout() -> Vec<Entry> {
        vec![
            with(
                about(entry(1, None, Step::Write, "kubectl-set"), "Deployment", "web"),
                "update",
                "",
                "image nginx:1.25→nginx:1.26",
            ),
            with(
                about(entry(2, Some(1), Step::Event, "Deployment"), "Deployment", "web"),
                "MODIFIED",
                "",
                "",
            ),
            about(
                entry(3, Some(2), Step::Enqueue, "deployment"),
                "Deployment",
                "web",
            ),
            with(
                about(entry(4, Some(3), Step::Sync, "deployment"), "Deployment", "web"),
                "start",
                "",
                "",
            ),
            with(
                about(
                    entry(5, Some(4), Step::Decision, "deployment"),
                    "Deployment",
                    "web",
                ),
                "",
                "getNewReplicaSet",
                "creating web-2 with replicas 1",
            ),
            with(
                about(
                    entry(6, Some(4), Step::Write, "deployment"),
                    "ReplicaSet",
                    "web-2",
                ),
                "create",
                "",
                "created",
            ),
            with(
                about(entry(7, Some(4), Step::Write, "deployment"), "Deployment", "web"),
                "update",
                "",
                "status.replicas 3→4",
            ),
            with(
                about(
                    entry(8, Some(6), Step::Event, "ReplicaSet"),
                    "ReplicaSet",
                    "web-2",
                ),
                "ADDED",
                "",
                "",
            ),
            about(
                entry(9, Some(8), Step::Enqueue, "replicaset"),
                "ReplicaSet",
                "web-2",
            ),
            with(
                about(
                    entry(10, Some(9), Step::Sync, "replicaset"),
                    "ReplicaSet",
                    "web-2",
                ),
                "start",
                "",
                "",
            ),
            with(
                about(
                    entry(11, Some(10), Step::Decision, "replicaset"),
                    "ReplicaSet",
                    "web-2",
                ),
                "",
                "manageReplicas",
                "diff +1, creating 1",
            ),
            with(
                about(entry(12, Some(10), Step::Write, "replicaset"), "Pod", "web-2-a"),
                "create",
                "",
                "created",
            ),
            with(
                about(
                    entry(13, Some(10), Step::Sync, "replicaset"),
                    "ReplicaSet",
                    "web-2",
                ),
                "end",
                "",
                "done",
            ),
            with(
                about(entry(14, None, Step::Write, "kubectl-create"), "Pod", "other"),
                "create",
                "",
                "created",
            ),
        ]
    }

    #[test]
    fn a_pod_is_explained_back_to_the_users_request() {
        let target = parse_target(&["po/web-2-a".to_string()], "default").unwrap();
        let story = build(&rollout(), &target, false);
        let headers: Vec<&str> = story.groups.iter().map(|g| g.header.as_str()).collect();
        assert_eq!(
            headers,
            [
                "replicaset: synced replicaset default/web-2, after replicaset default/web-2 ADDED",
                "deployment: synced deployment default/web, after deployment default/web MODIFIED",
                "you (kubectl-set) updated deployment default/web: image nginx:1.25→nginx:1.26",
            ]
        );
        assert_eq!(
            story.groups[0].lines,
            [
                "manageReplicas: diff +1, creating 1",
                "created pod default/web-2-a"
            ]
        );
        // The sync's decisions are all shown; of its writes, only those on the chain.
        assert_eq!(
            story.groups[1].lines,
            [
                "getNewReplicaSet: creating web-2 with replicas 1",
                "created replicaset default/web-2"
            ]
        );
    }

    #[test]
    fn an_object_with_no_entries_has_an_empty_story() {
        let target = parse_target(&["po/nothing".to_string()], "default").unwrap();
        assert!(build(&rollout(), &target, false).groups.is_empty());
    }

    #[test]
    fn status_writes_are_seeds_only_when_asked() {
        let target = parse_target(&["deploy/web".to_string()], "default").unwrap();
        let mut entries = rollout();
        entries[6].subresource = "status".into();
        let without = build(&entries, &target, false);
        let with_status = build(&entries, &target, true);
        assert!(
            without.groups[0]
                .lines
                .iter()
                .all(|l| !l.contains("status.replicas"))
        );
        assert!(
            with_status.groups[0]
                .lines
                .iter()
                .any(|l| l.contains("status.replicas 3→4"))
        );
    }

    #[test]
    fn a_root_whose_cause_fell_off_the_ring_still_shows() {
        let target = parse_target(&["po/web-2-a".to_string()], "default").unwrap();
        let entries: Vec<Entry> = rollout().into_iter().filter(|e| e.id >= 9).collect();
        let story = build(&entries, &target, false);
        assert_eq!(story.groups.len(), 2, "{story:#?}");
        assert_eq!(
            story.groups[1].header,
            "replicaset queue: replicaset default/web-2 requeued (a delay, a retry or a resync)"
        );
    }
}
