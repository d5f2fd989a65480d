//! The garbage collector's decisions, as pure functions.
//!
//! Upstream: `garbagecollector.go` — the `switch` at the end of
//! `attemptToDeleteItem` (after `classifyReferences`),
//! `processDeletingDependentsItem` — and the patch bodies of `patch.go`
//! (`deleteOwnerRefJSONMergePatch`, `unblockOwnerReferencesJSONMergePatch`)
//! and `operations.go` (`removeFinalizer`). The controller gathers the
//! facts (the graph, live GETs of the owners) and carries the decision out.
//!
//! Every patch is a JSON merge patch that carries the `resourceVersion` it
//! was computed from, so that it fails with 409 Conflict instead of
//! overwriting a change made meanwhile; the caller reads again and retries.

use serde_json::{Value, json};

use super::graph::{BlockingDependent, Uid};

/// What a live lookup of one owner found (upstream `isDangling` and
/// `classifyReferences`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerState {
    /// No object of that name, or one with another uid.
    Dangling,
    /// The owner exists, is being deleted, and has the `foregroundDeletion`
    /// finalizer: it waits for its dependents to go.
    WaitingForDependentsDeletion,
    /// The owner exists and is not waiting for its dependents.
    Solid,
}

/// `propagationPolicy` of a delete (upstream `metav1.DeletionPropagation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeletionPropagation {
    /// Keep the dependents, without the reference to the deleted owner.
    Orphan,
    /// Delete the object now, its dependents afterwards.
    Background,
    /// Delete the dependents first; the object waits with `foregroundDeletion`.
    Foreground,
}

impl DeletionPropagation {
    /// The value on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            DeletionPropagation::Orphan => "Orphan",
            DeletionPropagation::Background => "Background",
            DeletionPropagation::Foreground => "Foreground",
        }
    }
}

/// The item's own facts that the decision needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// Some object names the item as an owner.
    pub has_dependents: bool,
    /// One of those dependents is itself deleting dependents.
    pub a_dependent_deletes_dependents: bool,
    /// The item carries the `orphan` finalizer.
    pub orphan_finalizer: bool,
    /// The item carries the `foregroundDeletion` finalizer.
    pub delete_dependents_finalizer: bool,
}

/// What to do with an item, given its owners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// No ownerReference, or a solid owner and no reference to drop.
    Keep,
    /// At least one solid owner: the item stays, without its references to
    /// these dangling or waiting owners (a waiting owner would otherwise
    /// wait for it forever).
    RemoveOwnerRefs(Vec<Uid>),
    /// No solid owner, an owner waits for its dependents, and the item has
    /// dependents itself: delete it in the foreground, so that the owner
    /// waits for the whole subtree. `unblock_first`: a dependent of the item
    /// is deleting dependents too; to break a possible cycle, the item's own
    /// references stop blocking their owners first.
    DeleteForeground {
        /// Patch `blockOwnerDeletion: false` into the item's ownerReferences before deleting.
        unblock_first: bool,
    },
    /// No solid owner: delete the item with the policy its own finalizers
    /// already ask for (`orphan` → Orphan, `foregroundDeletion` →
    /// Foreground, else Background).
    Delete(DeletionPropagation),
}

/// Upstream `attemptToDeleteItem`, from the classification of the item's
/// ownerReferences on: `owners` holds each reference's owner uid and state.
pub fn attempt_to_delete_item(item: &Item, owners: &[(Uid, OwnerState)]) -> Decision {
    if owners.is_empty() {
        return Decision::Keep;
    }
    let state_is = |wanted: OwnerState| owners.iter().any(|(_, s)| *s == wanted);
    if state_is(OwnerState::Solid) {
        let drop: Vec<Uid> = owners
            .iter()
            .filter(|(_, s)| *s != OwnerState::Solid)
            .map(|(uid, _)| uid.clone())
            .collect();
        return if drop.is_empty() {
            Decision::Keep
        } else {
            Decision::RemoveOwnerRefs(drop)
        };
    }
    if state_is(OwnerState::WaitingForDependentsDeletion) && item.has_dependents {
        return Decision::DeleteForeground {
            unblock_first: item.a_dependent_deletes_dependents,
        };
    }
    let policy = if item.orphan_finalizer {
        DeletionPropagation::Orphan
    } else if item.delete_dependents_finalizer {
        DeletionPropagation::Foreground
    } else {
        DeletionPropagation::Background
    };
    Decision::Delete(policy)
}

/// What an owner that is deleting its dependents does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeletingDependents {
    /// No dependent blocks it any more: remove `foregroundDeletion`, and the
    /// API server removes the owner.
    RemoveFinalizer,
    /// Dependents still block it: (re)queue these for deletion, and wait
    /// until their removal or unblocking queues the owner again.
    AttemptToDelete(Vec<Uid>),
}

/// Upstream `processDeletingDependentsItem`. A blocking dependent that is
/// itself deleting dependents is already on its way and is not queued.
pub fn process_deleting_dependents_item(blocking: &[BlockingDependent]) -> DeletingDependents {
    if blocking.is_empty() {
        return DeletingDependents::RemoveFinalizer;
    }
    let queue = blocking
        .iter()
        .filter(|d| !d.deleting_dependents)
        .map(|d| d.uid.clone())
        .collect();
    DeletingDependents::AttemptToDelete(queue)
}

/// The patch that removes the ownerReferences to `owners` from `obj`, or
/// `None` when it has none of them (upstream `deleteOwnerRefJSONMergePatch`).
pub fn remove_owner_refs_patch(obj: &Value, owners: &[Uid]) -> Option<Value> {
    let refs = owner_ref_values(obj);
    let kept: Vec<&Value> = refs
        .iter()
        .filter(|r| {
            !owners
                .iter()
                .any(|o| r.get("uid").and_then(Value::as_str) == Some(&**o))
        })
        .collect();
    (kept.len() != refs.len()).then(|| metadata_patch(obj, "ownerReferences", json!(kept)))
}

/// The patch that sets `blockOwnerDeletion: false` on every blocking
/// ownerReference of `obj`, or `None` when none blocks (upstream
/// `unblockOwnerReferencesJSONMergePatch`).
pub fn unblock_owner_refs_patch(obj: &Value) -> Option<Value> {
    let blocks = |r: &Value| r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true);
    let mut refs = owner_ref_values(obj);
    if !refs.iter().any(blocks) {
        return None;
    }
    for r in refs.iter_mut().filter(|r| blocks(r)) {
        r["blockOwnerDeletion"] = json!(false);
    }
    Some(metadata_patch(obj, "ownerReferences", json!(refs)))
}

/// The patch that removes `finalizer` from `obj`, or `None` when it is not
/// there (upstream `removeFinalizer`).
pub fn remove_finalizer_patch(obj: &Value, finalizer: &str) -> Option<Value> {
    let finalizers: Vec<&str> = obj
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let kept: Vec<&str> = finalizers.iter().copied().filter(|f| *f != finalizer).collect();
    (kept.len() != finalizers.len()).then(|| metadata_patch(obj, "finalizers", json!(kept)))
}

fn owner_ref_values(obj: &Value) -> Vec<Value> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// `{"metadata": {field: list, "resourceVersion": ...}}`; an empty list
/// becomes `null`, which removes the field.
fn metadata_patch(obj: &Value, field: &str, list: Value) -> Value {
    let list = match list.as_array() {
        Some(items) if items.is_empty() => Value::Null,
        _ => list,
    };
    let rv = obj
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null);
    json!({"metadata": {field: list, "resourceVersion": rv}})
}

/// The sentence the causal journal records for `decision` about `item` (`kind name`), given its
/// owners as `(kind name, state)`; `None` for [`Decision::Keep`], which changes nothing.
pub fn decision_sentence(item: &str, owners: &[(String, OwnerState)], decision: &Decision) -> Option<String> {
    let states: Vec<String> = owners
        .iter()
        .map(|(owner, state)| format!("{owner}: {}", state_words(*state)))
        .collect();
    let states = states.join(", ");
    Some(match decision {
        Decision::Keep => return None,
        Decision::RemoveOwnerRefs(_) => {
            format!(
                "{item} still has a solid owner ({states}): removing its references to the others, it stays"
            )
        }
        Decision::DeleteForeground { .. } => format!(
            "{item} has no solid owner ({states}) and has dependents itself: deleting it in the foreground, so that its owner waits for them too"
        ),
        Decision::Delete(policy) => format!(
            "{item} has no solid owner left ({states}): deleting it with propagationPolicy {}",
            policy.as_str()
        ),
    })
}

fn state_words(state: OwnerState) -> &'static str {
    match state {
        OwnerState::Dangling => "gone",
        OwnerState::WaitingForDependentsDeletion => "waiting for its dependents (foregroundDeletion)",
        OwnerState::Solid => "solid",
    }
}

/// The sentence for an owner deleting its dependents: `blocking` names the dependents that
/// still block it (`kind name`), empty when none is left.
pub fn deleting_dependents_sentence(owner: &str, blocking: &[String]) -> String {
    match blocking.len() {
        0 => format!(
            "no dependent blocks {owner} any more: removing the foregroundDeletion finalizer, and the API server removes it"
        ),
        _ => format!(
            "{owner} has dependents {} blocking deletion (blockOwnerDeletion): queueing them for deletion and waiting",
            blocking.join(", ")
        ),
    }
}
