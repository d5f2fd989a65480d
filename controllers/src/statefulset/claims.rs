//! `persistentVolumeClaimRetentionPolicy`, done purely with owner references on the claims: the
//! garbage collector deletes a claim once every owner is gone, so a claim owned by the set goes
//! with the set (`whenDeleted: Delete`) and one owned by its pod goes with a scaled-down pod
//! (`whenScaled: Delete`).
//!
//! Upstream: `stateful_set_utils.go` (`getPersistentVolumeClaimRetentionPolicy`,
//! `claimOwnerMatchesSetAndPod`, `updateClaimOwnerRefForSetAndPod`, `hasOwnerRef`, `setOwnerRef`,
//! `removeOwnerRef`).
//!
//! | whenDeleted / whenScaled | pod in range | pod condemned (scaled down) |
//! | --- | --- | --- |
//! | Retain / Retain | no set ref, no pod ref | no set ref, no pod ref |
//! | Delete / Retain | set ref | set ref |
//! | Retain / Delete | nothing | pod ref |
//! | Delete / Delete | set ref | pod ref |
//!
//! Simplified against upstream: the references are plain (non-controller) owner references, and
//! the "stale claim" wait of `PodClaimIsStale` (a claim still owned by an earlier pod of the same
//! name) is not done.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::utils::{DELETE, KIND, RETAIN, pod_in_ordinal_range};
use crate::runtime::name_of;

/// The policy as `(whenDeleted, whenScaled)`, each `Retain` (the default) or `Delete`.
pub fn retention_policy(set: &StatefulSet) -> (&str, &str) {
    let policy = set
        .spec
        .as_ref()
        .and_then(|s| s.persistent_volume_claim_retention_policy.as_ref());
    let get = |v: Option<&String>| match v.map(String::as_str) {
        Some(DELETE) => DELETE,
        _ => RETAIN,
    };
    (
        get(policy.and_then(|p| p.when_deleted.as_ref())),
        get(policy.and_then(|p| p.when_scaled.as_ref())),
    )
}

fn has_owner_ref(claim: &PersistentVolumeClaim, owner_uid: &str) -> bool {
    claim
        .metadata
        .owner_references
        .as_ref()
        .is_some_and(|refs| refs.iter().any(|r| r.uid == owner_uid))
}

/// Which owners the claim of `pod` should have under the policy: `(set ref, pod ref)`.
pub fn wanted_owners(set: &StatefulSet, pod: &Pod) -> (bool, bool) {
    let scaled_down = !pod_in_ordinal_range(pod, set);
    match retention_policy(set) {
        (DELETE, DELETE) => (!scaled_down, scaled_down),
        (DELETE, _) => (true, false),
        (_, DELETE) => (false, scaled_down),
        _ => (false, false),
    }
}

/// Upstream `claimOwnerMatchesSetAndPod`.
pub fn claim_owner_matches_set_and_pod(claim: &PersistentVolumeClaim, set: &StatefulSet, pod: &Pod) -> bool {
    let (want_set, want_pod) = wanted_owners(set, pod);
    let set_uid = set.metadata.uid.as_deref().unwrap_or("");
    let pod_uid = pod.metadata.uid.as_deref().unwrap_or("");
    has_owner_ref(claim, set_uid) == want_set && has_owner_ref(claim, pod_uid) == want_pod
}

fn owner_ref(meta: &ObjectMeta, api_version: &str, kind: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: name_of(meta).to_owned(),
        uid: meta.uid.clone().unwrap_or_default(),
        ..OwnerReference::default()
    }
}

/// Upstream `updateClaimOwnerRefForSetAndPod`: the claim's owner references with the set and pod
/// references set or removed as the policy wants (other owners kept).
pub fn claim_owner_refs_for_set_and_pod(
    claim: &PersistentVolumeClaim,
    set: &StatefulSet,
    pod: &Pod,
) -> Vec<OwnerReference> {
    let (want_set, want_pod) = wanted_owners(set, pod);
    let set_uid = set.metadata.uid.as_deref().unwrap_or("");
    let pod_uid = pod.metadata.uid.as_deref().unwrap_or("");
    let mut refs: Vec<OwnerReference> = claim
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.uid != set_uid && r.uid != pod_uid)
        .collect();
    if want_set {
        refs.push(owner_ref(&set.metadata, super::utils::API_VERSION, KIND));
    }
    if want_pod {
        refs.push(owner_ref(&pod.metadata, "v1", "Pod"));
    }
    refs
}
