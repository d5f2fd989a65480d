//! Every accepted write, into the causal journal ([`store::journal`]).
//!
//! The API's writes funnel through a few store calls (`store_create`,
//! `store_update`, and the delete's `remove` / `mark_deleting`); each calls
//! [`Api::journal_write`] after the store has committed, with the
//! resourceVersion the write produced. The entry's cause is the sync the
//! calling task runs for ([`store::journal::current_cause`]: the
//! in-process client calls the API in the controller's own task), and none
//! for a request that came over HTTP (a user's own request).
//!
//! The message says what changed, cheaply: the first few leaf paths where
//! the old and new objects differ, `spec.replicas 3→5`, without the
//! server-owned noise (`metadata.resourceVersion`, `managedFields`,
//! `generation`). It is built only when the journal records.
//!
//! There is no upstream counterpart; the audit log (`audit.k8s.io`) is the
//! nearest, and it records requests, not what they changed or why.

use serde_json::Value;
use store::journal::{ObjectRef, Record, Step};

use super::{Api, obj};
use crate::registry::{ResourceInfo, Subresource};

/// Changed leaf paths named in a message; more are counted.
const MAX_PATHS: usize = 4;
/// Longest value shown in a message, in characters.
const MAX_VALUE: usize = 48;

/// What a write did, for its journal entry.
pub(super) struct JournalWrite<'a> {
    /// The resource written.
    pub info: &'a ResourceInfo,
    /// `create`, `update`, `patch` or `delete`.
    pub verb: &'static str,
    /// The subresource, if any.
    pub sub: Option<Subresource>,
    /// The field manager (or the client's name).
    pub actor: &'a str,
    /// The object as stored (or its last state, for a removal).
    pub object: &'a Value,
    /// The resourceVersion the write produced.
    pub resource_version: u64,
    /// What happened to it.
    pub change: Change<'a>,
}

/// What happened to the object.
pub(super) enum Change<'a> {
    /// It was created.
    Created,
    /// It changed from this state.
    Updated(&'a Value),
    /// It was marked for deletion (a grace period or finalizers to wait for).
    MarkedDeleting,
    /// It was removed from the store.
    Removed,
}

impl Api {
    /// Records one committed write (nothing when the journal is off).
    pub(super) fn journal_write(&self, w: &JournalWrite<'_>) {
        let journal = self.inner.clock.journal();
        if !journal.enabled() {
            return;
        }
        let message = match w.change {
            Change::Created => "created".to_string(),
            Change::Updated(old) => summarize(old, w.object),
            Change::MarkedDeleting => marked_deleting(w.object),
            Change::Removed => "deleted".to_string(),
        };
        let record = Record {
            cause: store::journal::current_cause(),
            step: Some(Step::Write),
            actor: w.actor.to_string(),
            verb: w.verb.to_string(),
            object: Some(ObjectRef::new(
                &w.info.kind,
                obj::meta_str(w.object, "namespace").unwrap_or(""),
                obj::name(w.object),
            )),
            subresource: w.sub.map(|s| s.as_str().to_string()).unwrap_or_default(),
            resource_version: w.resource_version.to_string(),
            message,
            ..Record::default()
        };
        journal.record(self.inner.clock.now(), record);
    }
}

/// `marked for deletion (grace 30s, finalizers foregroundDeletion)`.
fn marked_deleting(new: &Value) -> String {
    let grace = new
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let finalizers = obj::finalizers(new);
    if finalizers.is_empty() {
        format!("marked for deletion (grace {grace}s)")
    } else {
        format!(
            "marked for deletion (grace {grace}s, finalizers {})",
            finalizers.join(", ")
        )
    }
}

/// The first few changed leaf paths of `old` → `new`:
/// `spec.template.spec.containers[0].image nginx:1.25→nginx:1.26`.
pub fn summarize(old: &Value, new: &Value) -> String {
    let mut diff = Diff::default();
    diff.walk(&mut String::new(), Some(old), Some(new));
    match (diff.shown.is_empty(), diff.more) {
        (true, _) => "no change".to_string(),
        (false, 0) => diff.shown.join(", "),
        (false, more) => format!("{} (+{more} more)", diff.shown.join(", ")),
    }
}

/// The changed paths found so far.
#[derive(Default)]
struct Diff {
    shown: Vec<String>,
    /// Changed paths beyond [`MAX_PATHS`].
    more: usize,
}

impl Diff {
    /// Compares two values at `path` (a missing one is `None`).
    fn walk(&mut self, path: &mut String, old: Option<&Value>, new: Option<&Value>) {
        match (old, new) {
            (Some(Value::Object(a)), Some(Value::Object(b))) => {
                for (key, av) in a {
                    if skipped(path, key) {
                        continue;
                    }
                    self.child(path, key, Some(av), b.get(key));
                }
                for (key, bv) in b {
                    if !a.contains_key(key) && !skipped(path, key) {
                        self.child(path, key, None, Some(bv));
                    }
                }
            }
            (Some(Value::Array(a)), Some(Value::Array(b))) => {
                for i in 0..a.len().max(b.len()) {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    self.walk(path, a.get(i), b.get(i));
                    path.truncate(len);
                }
            }
            (a, b) if a == b => {}
            (a, b) => self.changed(path, a, b),
        }
    }

    fn child(&mut self, path: &mut String, key: &str, old: Option<&Value>, new: Option<&Value>) {
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        self.walk(path, old, new);
        path.truncate(len);
    }

    fn changed(&mut self, path: &str, old: Option<&Value>, new: Option<&Value>) {
        if self.shown.len() < MAX_PATHS {
            self.shown.push(format!("{path} {}→{}", show(old), show(new)));
        } else {
            self.more += 1;
        }
    }
}

/// The server-owned fields a change summary leaves out.
fn skipped(path: &str, key: &str) -> bool {
    path == "metadata" && matches!(key, "resourceVersion" | "managedFields" | "generation")
}

/// A value as a message shows it: strings bare, objects and lists abridged.
fn show(v: Option<&Value>) -> String {
    let text = match v {
        None => return "∅".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(m)) if m.is_empty() => "{}".to_string(),
        Some(Value::Object(_)) => "{…}".to_string(),
        Some(Value::Array(a)) => format!("[{} items]", a.len()),
        Some(other) => other.to_string(),
    };
    if text.chars().count() > MAX_VALUE {
        let cut: String = text.chars().take(MAX_VALUE - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_summary_names_the_changed_leaves() {
        let old = json!({"metadata": {"resourceVersion": "3", "generation": 1},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}});
        let new = json!({"metadata": {"resourceVersion": "4", "generation": 2},
            "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}}});
        assert_eq!(
            summarize(&old, &new),
            "spec.replicas 3→5, spec.template.spec.containers[0].image nginx:1.25→nginx:1.26"
        );
    }

    #[test]
    fn added_and_removed_fields_and_long_lists() {
        let old = json!({"status": {"a": 1, "b": [1, 2]}});
        let new = json!({"status": {"b": [1, 2, 3], "c": {"x": 1}}});
        assert_eq!(
            summarize(&old, &new),
            "status.a 1→∅, status.b[2] ∅→3, status.c ∅→{…}"
        );
        let many_old = json!({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1});
        let many_new = json!({"a": 2, "b": 2, "c": 2, "d": 2, "e": 2, "f": 2});
        assert!(summarize(&many_old, &many_new).ends_with("(+2 more)"));
        assert_eq!(summarize(&old, &old), "no change");
    }
}
