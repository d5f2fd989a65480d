//! The DaemonSet's ControllerRevisions: one per distinct pod template, so that `kubectl rollout
//! history` can list them and `kubectl rollout undo` can send one back.
//!
//! Upstream: `pkg/controller/daemon/update.go` (`constructHistory`, `cleanupHistory`,
//! `dedupCurHistories`, `Match`, `getPatch`, `snapshot`, `maxRevision`). The generic pieces are
//! [`crate::history`] (`next_revision`, `sort_controller_revisions`, `controller_revision_name`);
//! what is DaemonSet-specific is here: the data is a strategic merge patch replacing
//! `spec.template`, the name and the `controller-revision-hash` label use the pod-template hash of
//! the Deployment controller ([`compute_hash`], FNV-1a with the collision count), and the
//! revision carries the DaemonSet's annotations (so `kubernetes.io/change-cause` shows in
//! `rollout history`).
//!
//! ```text
//! controlled revisions ──match data against get_patch(ds)──▶ current (0, 1 or more) + old
//!   none current  → create revision max(old)+1 named <ds>-<hash>; a namesake with other data
//!                   → status.collisionCount++ and retry
//!   several       → keep the highest, relabel pods to its hash, delete the others
//!   one, behind   → raise its revision to max(old)+1 (a rollback)
//! cleanup         → delete old revisions beyond revisionHistoryLimit, lowest first, except those
//!                   a pod's hash label still names
//! ```
//!
//! Simplified against upstream: a revision matches when its data is the same JSON value as the
//! patch (upstream compares the bytes; kubectl's own byte comparison in `rollout undo` therefore
//! does not see our revisions as equal to the live template and always sends the patch, which is
//! harmless). Revisions lacking the hash label are relabelled by the sync, as upstream.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::{Value, json};

use super::placement::{DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, hash_label};
use crate::deployment::util::compute_hash;
use crate::history::{controller_revision_name, next_revision, sort_controller_revisions};
use crate::runtime::new_controller_ref;

/// Upstream `getPatch`: `{"spec": {"template": <template with "$patch": "replace">}}`, the
/// strategic merge patch that restores this template.
pub fn get_patch(ds: &DaemonSet) -> Value {
    let template = ds
        .spec
        .as_ref()
        .and_then(|s| serde_json::to_value(&s.template).ok())
        .unwrap_or_else(|| json!({}));
    let mut template = match template {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    template.insert("$patch".to_owned(), json!("replace"));
    json!({"spec": {"template": Value::Object(template)}})
}

/// Upstream `Match`: the revision stores this DaemonSet's current template.
pub fn matches(ds: &DaemonSet, revision: &ControllerRevision) -> bool {
    revision.data.as_ref().is_some_and(|d| d.0 == get_patch(ds))
}

/// The hash of the DaemonSet's current template (upstream `ComputeHash(&ds.Spec.Template,
/// ds.Status.CollisionCount)`).
pub fn template_hash(ds: &DaemonSet) -> String {
    let collision_count = ds.status.as_ref().and_then(|s| s.collision_count);
    let template = ds.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
    compute_hash(&template, collision_count)
}

/// Upstream `snapshot` (the object it creates): revision number `revision` of the current
/// template, named `<ds>-<hash>`, labelled with the template's labels plus
/// `controller-revision-hash`, annotated as the DaemonSet, controlled by it.
pub fn snapshot(ds: &DaemonSet, revision: i64) -> ControllerRevision {
    let hash = template_hash(ds);
    let mut labels = ds
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY.to_owned(), hash.clone());
    let name = ds.metadata.name.as_deref().unwrap_or("");
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(controller_revision_name(name, &hash)),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: ds.metadata.annotations.clone(),
            owner_references: Some(vec![new_controller_ref(&ds.metadata, "apps/v1", "DaemonSet")]),
            ..ObjectMeta::default()
        },
        data: Some(RawExtension(get_patch(ds))),
        revision,
    }
}

/// The revisions split by [`matches`] (upstream `constructHistory`'s loop).
#[derive(Clone, Debug, Default)]
pub struct Histories<'a> {
    /// Revisions storing the current template.
    pub current: Vec<&'a ControllerRevision>,
    /// The others.
    pub old: Vec<&'a ControllerRevision>,
}

/// Splits the controlled revisions into current and old.
pub fn split_histories<'a>(ds: &DaemonSet, histories: &[&'a ControllerRevision]) -> Histories<'a> {
    let (current, old) = histories.iter().copied().partition(|h| matches(ds, h));
    Histories { current, old }
}

/// Upstream `maxRevision(old) + 1`: the number the current revision must have.
pub fn current_revision_number(old: &[&ControllerRevision]) -> i64 {
    next_revision(old)
}

/// Upstream `dedupCurHistories`' choice: the current revision with the highest number (the last
/// such in the given order on ties).
pub fn keep_current<'a>(current: &[&'a ControllerRevision]) -> Option<&'a ControllerRevision> {
    let mut keep: Option<&'a ControllerRevision> = None;
    let mut max = 0;
    for h in current.iter().copied() {
        if h.revision >= max {
            keep = Some(h);
            max = h.revision;
        }
    }
    keep
}

/// Upstream `cleanupHistory`: the old revisions to delete so that at most `limit` remain, lowest
/// revision first, never one whose hash a pod still carries (`live_hashes`).
pub fn cleanup_history<'a>(
    old: &[&'a ControllerRevision],
    limit: i32,
    live_hashes: &BTreeSet<&str>,
) -> Vec<&'a ControllerRevision> {
    let limit = usize::try_from(limit).unwrap_or(0);
    let mut to_kill = old.len().saturating_sub(limit);
    if to_kill == 0 {
        return Vec::new();
    }
    let mut sorted = old.to_vec();
    sort_controller_revisions(&mut sorted);
    let mut out = Vec::new();
    for h in sorted {
        if to_kill == 0 {
            break;
        }
        if live_hashes.contains(hash_label(&h.metadata)) {
            continue;
        }
        out.push(h);
        to_kill -= 1;
    }
    out
}
