//! Which ControllerRevisions a sync uses, creates, renumbers or deletes: the pure decisions of
//! `getStatefulSetRevisions` and `truncateHistory` (upstream `stateful_set_control.go`). The sync
//! does the writes.
//!
//! ```text
//! candidate = new_revision(set, next_revision(history), collisionCount)
//! equal revisions found?  the newest of them is the newest revision → reuse it (nothing changed)
//!                         otherwise → renumber it to next_revision  (a rollback: `rollout undo`)
//! none                    → create the candidate (AlreadyExists with other data → collisionCount+1)
//! current = the revision named by status.currentRevision, else the update revision
//! ```
//!
//! Worked example: revisions web-a (1) and web-b (2); `kubectl rollout undo` puts web-a's template
//! back; the candidate equals web-a, which is not the newest, so web-a becomes revision 3 and the
//! update revision; web-b stays in the history as revision 2.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;

use super::utils::{get_pod_revision, new_revision};
use crate::history::{equal_revision, find_equal_revisions, next_revision};
use crate::runtime::name_of;

/// What to do for the update revision.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateRevision {
    /// The newest revision already holds the set's template: use it.
    Latest(Arc<ControllerRevision>),
    /// An older revision holds it: renumber it to `revision` and use it.
    Rollback {
        /// The revision to renumber.
        existing: Arc<ControllerRevision>,
        /// Its new number.
        revision: i64,
    },
    /// No revision holds it: create this one.
    Create(Box<ControllerRevision>),
}

/// Upstream `getStatefulSetRevisions`' decision; `revisions` sorted by
/// [`crate::history::sort_controller_revisions`].
pub fn choose_update_revision(
    set: &StatefulSet,
    revisions: &[Arc<ControllerRevision>],
    collision_count: i32,
) -> UpdateRevision {
    let candidate = new_revision(set, next_revision(revisions), collision_count);
    let equal = find_equal_revisions(revisions, &candidate);
    match (equal.last(), revisions.last()) {
        (Some(found), Some(latest)) if equal_revision(latest, found) => {
            UpdateRevision::Latest(latest.clone())
        }
        (Some(found), _) => UpdateRevision::Rollback {
            existing: (*found).clone(),
            revision: candidate.revision,
        },
        (None, _) => UpdateRevision::Create(Box::new(candidate)),
    }
}

/// The current revision: the one `status.currentRevision` names, else `update`.
pub fn current_revision(
    set: &StatefulSet,
    revisions: &[Arc<ControllerRevision>],
    update: &Arc<ControllerRevision>,
) -> Arc<ControllerRevision> {
    let named = set.status.as_ref().and_then(|s| s.current_revision.as_deref());
    revisions
        .iter()
        .find(|r| named.is_some_and(|n| n == name_of(&r.metadata)))
        .cloned()
        .unwrap_or_else(|| update.clone())
}

/// Upstream `truncateHistory`: the names of the revisions to delete so that at most
/// `revisionHistoryLimit` (default 10) non-live revisions remain, lowest revision first. Live are
/// the current and update revisions and every revision a pod is labelled with. `revisions` sorted.
pub fn truncate_history<'a>(
    set: &StatefulSet,
    pods: impl IntoIterator<Item = &'a Pod>,
    revisions: &[Arc<ControllerRevision>],
    current: &str,
    update: &str,
) -> Vec<String> {
    let mut live: BTreeSet<String> = [current.to_owned(), update.to_owned()].into_iter().collect();
    live.extend(pods.into_iter().map(|p| get_pod_revision(p).to_owned()));
    let history: Vec<&Arc<ControllerRevision>> = revisions
        .iter()
        .filter(|r| !live.contains(name_of(&r.metadata)))
        .collect();
    let limit = set
        .spec
        .as_ref()
        .and_then(|s| s.revision_history_limit)
        .unwrap_or(10);
    let Ok(limit) = usize::try_from(limit) else {
        return Vec::new(); // a negative limit keeps everything, as upstream
    };
    if history.len() <= limit {
        return Vec::new();
    }
    history[..history.len() - limit]
        .iter()
        .map(|r| name_of(&r.metadata).to_owned())
        .collect()
}
