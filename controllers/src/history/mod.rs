//! ControllerRevision history shared by the StatefulSet and DaemonSet controllers: the pure
//! helpers that build, name, hash, compare and order the revisions a controller keeps of its
//! pod template.
//!
//! Upstream: `pkg/controller/history/controller_history.go` (`ControllerRevisionName`,
//! `NewControllerRevision`, `HashControllerRevision`, `EqualRevision`, `FindEqualRevisions`,
//! `SortControllerRevisions`, the `byRevision` order, `ListControllerRevisions`' owner filter) and
//! `nextRevision` of `stateful_set_utils.go` / `daemon/update.go`.
//!
//! ```text
//! parent spec ──(controller-specific patch: only the template)──▶ data
//! data ‖ decimal(collisionCount) ──FNV-1 32──▶ u32 ──decimal, SafeEncode──▶ hash
//! name = <parent name, at most 223 bytes>-<hash>; label controller.kubernetes.io/hash=<hash>
//! ```
//!
//! No IO here: the syncs create, update (bump `revision` on a rollback) and delete revisions
//! through their clients, and retry a name collision by calling
//! [`controller_revision_name_for`] again with the incremented collision count (upstream
//! `CreateControllerRevision`'s loop).
//!
//! The hash is over the serialized `data` bytes. `serde_json` writes object members sorted by
//! key (no `preserve_order` in this workspace), as Go's `json.Marshal` of a map does, so the same
//! data always hashes the same, whether built here or read back from the API.
//!
//! Simplified against upstream: [`equal_revision`] compares the hash labels as strings (upstream
//! parses them as decimal integers, which fails for SafeEncoded hashes, so in practice it compares
//! the data only; the outcome is the same because equal data yields equal hashes for equal
//! collision counts, and the data comparison decides in every case).

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;

use crate::deployment::util::safe_encode_string;
use crate::runtime::{get_controller_of, name_of, new_controller_ref};

#[cfg(test)]
mod tests;

/// The label holding the hash of a revision's data (upstream `ControllerRevisionHashLabel`).
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// The longest parent-name prefix of a revision name: 223 bytes plus `-` and a hash of at most
/// ten characters stays within the 253 bytes of an object name.
pub const MAX_PREFIX_LEN: usize = 223;

/// Upstream `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to [`MAX_PREFIX_LEN`]
/// bytes (at a character boundary, which for valid object names is any byte).
pub fn controller_revision_name(prefix: &str, hash: &str) -> String {
    let mut end = prefix.len().min(MAX_PREFIX_LEN);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", &prefix[..end])
}

/// FNV-1 (not FNV-1a: multiply, then xor), 32-bit, as Go's `hash/fnv.New32`.
pub fn fnv1_32(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0x811c_9dc5u32, |h, b| h.wrapping_mul(0x0100_0193) ^ u32::from(*b))
}

/// The bytes a revision's data hashes as: its JSON serialization (members sorted by key), or
/// nothing when it has no data.
pub fn data_bytes(data: Option<&RawExtension>) -> Vec<u8> {
    data.and_then(|d| serde_json::to_vec(&d.0).ok())
        .unwrap_or_default()
}

/// Upstream `HashControllerRevision`: FNV-1 32 over the data bytes followed, when `probe` is
/// given, by the decimal text of the collision count; the sum printed in decimal and passed
/// through SafeEncode (`0→4 1→5 … 9→f`), so the hash is lowercase and DNS-safe.
pub fn hash_controller_revision(data: Option<&RawExtension>, probe: Option<i32>) -> String {
    let mut bytes = data_bytes(data);
    if let Some(count) = probe {
        bytes.extend_from_slice(count.to_string().as_bytes());
    }
    safe_encode_string(&fnv1_32(&bytes).to_string())
}

/// The name a revision of `parent_name` gets for `collision_count`: the loop step of upstream
/// `CreateControllerRevision` (on AlreadyExists with different data, the caller increments the
/// count and asks again).
pub fn controller_revision_name_for(
    parent_name: &str,
    revision: &ControllerRevision,
    collision_count: Option<i32>,
) -> String {
    controller_revision_name(
        parent_name,
        &hash_controller_revision(revision.data.as_ref(), collision_count),
    )
}

/// Upstream `NewControllerRevision`: a revision of `parent` (a controller reference with
/// `controller` and `blockOwnerDeletion`, the parent's namespace) carrying `data` as revision
/// number `revision`, labelled with `template_labels` plus [`CONTROLLER_REVISION_HASH_LABEL`],
/// and named [`controller_revision_name`]`(parent name, hash)`.
///
/// `api_version`/`kind` are the parent's (`apps/v1`, `StatefulSet` or `DaemonSet`).
pub fn new_controller_revision(
    parent: &ObjectMeta,
    api_version: &str,
    kind: &str,
    template_labels: Option<&BTreeMap<String, String>>,
    data: serde_json::Value,
    revision: i64,
    collision_count: Option<i32>,
) -> ControllerRevision {
    let data = Some(RawExtension(data));
    let hash = hash_controller_revision(data.as_ref(), collision_count);
    let mut labels = template_labels.cloned().unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH_LABEL.to_owned(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(controller_revision_name(name_of(parent), &hash)),
            namespace: parent.namespace.clone(),
            labels: Some(labels),
            owner_references: Some(vec![new_controller_ref(parent, api_version, kind)]),
            ..ObjectMeta::default()
        },
        data,
        revision,
    }
}

/// The hash label of a revision, if any.
fn hash_label(revision: &ControllerRevision) -> Option<&str> {
    revision
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CONTROLLER_REVISION_HASH_LABEL))
        .map(String::as_str)
}

/// Upstream `EqualRevision`: two revisions are equal when their hash labels (where both have
/// one) agree and their data is the same JSON value.
pub fn equal_revision(lhs: &ControllerRevision, rhs: &ControllerRevision) -> bool {
    if let (Some(l), Some(r)) = (hash_label(lhs), hash_label(rhs))
        && l != r
    {
        return false;
    }
    lhs.data.as_ref().map(|d| &d.0) == rhs.data.as_ref().map(|d| &d.0)
}

/// Upstream `FindEqualRevisions`: the revisions equal to `needle`, in their given order.
pub fn find_equal_revisions<'a, R: Borrow<ControllerRevision>>(
    revisions: &'a [R],
    needle: &ControllerRevision,
) -> Vec<&'a R> {
    revisions
        .iter()
        .filter(|r| equal_revision((*r).borrow(), needle))
        .collect()
}

/// Upstream `byRevision.Less`: by `revision`, then older creation time first (a missing time
/// first), then by name.
pub fn cmp_revisions(a: &ControllerRevision, b: &ControllerRevision) -> Ordering {
    a.revision
        .cmp(&b.revision)
        .then_with(|| {
            let at = a.metadata.creation_timestamp.as_ref().map(|t| t.0);
            let bt = b.metadata.creation_timestamp.as_ref().map(|t| t.0);
            at.cmp(&bt)
        })
        .then_with(|| name_of(&a.metadata).cmp(name_of(&b.metadata)))
}

/// Upstream `SortControllerRevisions`: a stable sort by [`cmp_revisions`].
pub fn sort_controller_revisions<R: Borrow<ControllerRevision>>(revisions: &mut [R]) {
    revisions.sort_by(|a, b| cmp_revisions(a.borrow(), b.borrow()));
}

/// Upstream `nextRevision`: one more than the highest revision number, 1 for no history.
pub fn next_revision<R: Borrow<ControllerRevision>>(revisions: &[R]) -> i64 {
    revisions
        .iter()
        .map(|r| r.borrow().revision)
        .max()
        .map_or(1, |m| m.saturating_add(1))
}

/// The owner filter of upstream `ListControllerRevisions`: a revision (already matched by the
/// parent's selector) belongs to the parent's history when the parent controls it or nobody
/// does (an orphan the caller may adopt).
pub fn is_owned_or_orphan(revision: &ControllerRevision, parent_uid: &str) -> bool {
    get_controller_of(&revision.metadata).is_none_or(|r| r.uid == parent_uid)
}
