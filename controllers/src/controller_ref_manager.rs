//! Claiming: which objects of its namespace a controller owns, adopting matching orphans and
//! releasing owned objects that stopped matching.
//!
//! Upstream: `pkg/controller/controller_ref_manager.go` (`BaseControllerRefManager.ClaimObject`,
//! `ClaimPods`, `ClaimReplicaSets`, `AdoptPod`/`ReleasePod`, `RecheckDeletionTimestamp`,
//! `ownerRefControllerPatch`, `GenerateDeleteOwnerRefStrategicMergeBytes`), and the controllers'
//! shared `resolveControllerRef` (`replica_set.go`, `deployment_controller.go`).
//!
//! ```text
//! for each candidate (the owner's namespace, from the cache):
//!   claim_decision(owner, candidate, selector matches?)
//!     Keep    → owned
//!     Adopt   → (first time: recheck the owner with a live GET) → PATCH our controllerRef in → owned
//!     Release → PATCH our controllerRef out
//!     Ignore  → someone else's, or not a candidate
//! ```
//!
//! One manager serves every owner/child pair (ReplicaSet → Pod, Deployment → ReplicaSet, ...):
//! the decision is pure and generic over the child's metadata, the IO is generic over the kinds.
//!
//! A lesson switches the ControllerRef check off (`miniplane up --disable controller-ref-claim`,
//! [`ClaimMode::BySelector`]): the owner then takes every matching candidate, whoever controls it
//! (adopting means replacing the other controller's reference with ours), and releases nothing.
//! That is ownership by label alone, as before Kubernetes 1.6 brought ControllerRef: two
//! ReplicaSets whose selectors overlap take each other's pods, and each creates or deletes pods
//! to bring the count it sees to its own `spec.replicas`, forever.
//!
//! Simplified against upstream: claiming stops at the first failed adoption or release and fails
//! the sync, where upstream tries every object and returns the aggregate error; the caller converts
//! the selector (and decides what an empty one means); no `ClaimControllerRevisions`.

use std::sync::Arc;

use apiserver::labels::Selector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::runtime::informer::{Object, Store};
use crate::runtime::{
    ClientError, PatchType, ReconcileError, Typed, get_controller_of, key_of, name_of, new_controller_ref,
};

/// What the owner does with one candidate during a claim (upstream `ClaimObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimDecision {
    /// Already controlled by the owner and still matching: it belongs to the owner.
    Keep,
    /// An orphan that matches: patch in the owner's controller reference, then it belongs to the owner.
    Adopt,
    /// Controlled by the owner but no longer matching: patch the reference away; it is not the owner's.
    Release,
    /// Controlled by someone else, or not a candidate for adoption or release: leave it alone.
    Ignore,
}

/// How an owner decides what is its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClaimMode {
    /// Upstream: the controller reference decides; only orphans are adopted ([`claim_decision`]).
    #[default]
    ControllerRef,
    /// `--disable controller-ref-claim` (a lesson): the selector alone decides
    /// ([`claim_decision_by_selector`]).
    BySelector,
}

impl ClaimMode {
    /// [`ClaimMode::BySelector`] when the lesson switched the check off.
    pub fn of(disable_controller_ref_claim: bool) -> Self {
        match disable_controller_ref_claim {
            true => ClaimMode::BySelector,
            false => ClaimMode::ControllerRef,
        }
    }

    /// The decision for one candidate in this mode.
    pub fn decide(self, owner: &ObjectMeta, child: &ObjectMeta, matches: bool) -> ClaimDecision {
        match self {
            ClaimMode::ControllerRef => claim_decision(owner, child, matches),
            ClaimMode::BySelector => claim_decision_by_selector(owner, child, matches),
        }
    }
}

/// The decision without the ControllerRef check ([`ClaimMode::BySelector`]): a matching candidate
/// in the owner's namespace is the owner's, kept if it already controls it and adopted (taken from
/// its controller, if any) otherwise; nothing is released. Deleting owners and candidates are left
/// alone, as upstream.
pub fn claim_decision_by_selector(owner: &ObjectMeta, child: &ObjectMeta, matches: bool) -> ClaimDecision {
    let owner_uid = owner.uid.as_deref().unwrap_or("");
    let deleting = owner.deletion_timestamp.is_some() || child.deletion_timestamp.is_some();
    if !matches || deleting || !same_namespace(owner, child) {
        return ClaimDecision::Ignore;
    }
    match get_controller_of(child) {
        Some(r) if r.uid == owner_uid => ClaimDecision::Keep,
        _ => ClaimDecision::Adopt,
    }
}

/// Upstream `ClaimObject`'s decision for one candidate, given whether it matches the owner's selector.
///
/// * Owned by another controller → [`ClaimDecision::Ignore`].
/// * Owned by us: matching → `Keep`; not matching → `Release`, unless the owner is being deleted.
/// * Orphan: adopted only if it matches, neither the owner nor the candidate is being deleted, and it
///   lives in the owner's namespace.
pub fn claim_decision(owner: &ObjectMeta, child: &ObjectMeta, matches: bool) -> ClaimDecision {
    let owner_uid = owner.uid.as_deref().unwrap_or("");
    let owner_deleting = owner.deletion_timestamp.is_some();
    match get_controller_of(child) {
        Some(r) if r.uid != owner_uid => ClaimDecision::Ignore,
        Some(_) if matches => ClaimDecision::Keep,
        Some(_) if owner_deleting => ClaimDecision::Ignore,
        Some(_) => ClaimDecision::Release,
        None if owner_deleting || !matches || child.deletion_timestamp.is_some() => ClaimDecision::Ignore,
        None if !same_namespace(owner, child) => ClaimDecision::Ignore,
        None => ClaimDecision::Adopt,
    }
}

fn same_namespace(owner: &ObjectMeta, obj: &ObjectMeta) -> bool {
    let owner_ns = owner.namespace.as_deref().unwrap_or("");
    owner_ns.is_empty() || owner_ns == obj.namespace.as_deref().unwrap_or("")
}

/// The decision for each candidate, matching its labels against `selector`.
pub fn claim_decisions<C: Object>(
    owner: &ObjectMeta,
    selector: &Selector,
    candidates: &[Arc<C>],
) -> Vec<ClaimDecision> {
    claim_decisions_in(ClaimMode::ControllerRef, owner, selector, candidates)
}

/// [`claim_decisions`] in `mode`.
pub fn claim_decisions_in<C: Object>(
    mode: ClaimMode,
    owner: &ObjectMeta,
    selector: &Selector,
    candidates: &[Arc<C>],
) -> Vec<ClaimDecision> {
    candidates
        .iter()
        .map(|c| {
            let meta = c.metadata();
            mode.decide(owner, meta, selector.matches(&meta.labels.as_ref()))
        })
        .collect()
}

/// Upstream `resolveControllerRef`: the cached owner a controller reference names, if it is a `K`
/// and still the same object (same uid; a namesake created since is not the owner).
pub fn resolve_controller_ref<K: Object>(
    owners: &Store<K>,
    ns: Option<&str>,
    owner: &OwnerReference,
) -> Option<Arc<K>> {
    if owner.kind != K::KIND {
        return None;
    }
    let found = owners.get(ns, &owner.name)?;
    (found.metadata().uid.as_deref() == Some(owner.uid.as_str())).then_some(found)
}

/// Strategic-merge patch that adopts an object (upstream `ownerRefControllerPatch`).
///
/// The `uid` doubles as a precondition: the patch fails if the object was replaced by a namesake.
pub fn adopt_patch(controller_ref: &OwnerReference, child_uid: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": { "ownerReferences": [controller_ref], "uid": child_uid }
    })
}

/// Strategic-merge patch that takes an object from its controller `previous_uid` (the
/// [`ClaimMode::BySelector`] lesson): the other reference out, ours in, in one write, since an
/// object may have only one controller.
pub fn take_over_patch(
    controller_ref: &OwnerReference,
    previous_uid: &str,
    child_uid: &str,
) -> serde_json::Value {
    serde_json::json!({
        "metadata": {
            "ownerReferences": [{ "$patch": "delete", "uid": previous_uid }, controller_ref],
            "uid": child_uid
        }
    })
}

/// Strategic-merge patch that releases an object (upstream `GenerateDeleteOwnerRefStrategicMergeBytes`).
pub fn release_patch(owner_uid: &str, child_uid: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": { "ownerReferences": [{ "$patch": "delete", "uid": owner_uid }], "uid": child_uid }
    })
}

/// One claim of owner `O` over children `C` (upstream `PodControllerRefManager`,
/// `ReplicaSetControllerRefManager`): the owner as cached, its selector, and the two APIs.
pub struct ControllerRefManager<'a, O, C> {
    owner: &'a O,
    selector: &'a Selector,
    owners: &'a Typed<O>,
    children: &'a Typed<C>,
    mode: ClaimMode,
    /// Where adoptions and releases are recorded as decisions (see [`Self::journal`]).
    clock: Option<&'a store::Clock>,
}

impl<'a, O, C> ControllerRefManager<'a, O, C>
where
    O: Object + serde::Serialize,
    C: Object + serde::Serialize,
{
    /// A manager for `owner`, claiming what `selector` matches.
    pub fn new(owner: &'a O, selector: &'a Selector, owners: &'a Typed<O>, children: &'a Typed<C>) -> Self {
        ControllerRefManager {
            owner,
            selector,
            owners,
            children,
            mode: ClaimMode::ControllerRef,
            clock: None,
        }
    }

    /// Records each adoption and release in `clock`'s causal journal, as a decision of the
    /// owner's controller about the child.
    pub fn journal(mut self, clock: &'a store::Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Records why `child` is adopted or released (upstream `ClaimPods`, `ClaimReplicaSets`).
    fn decide(&self, child: &C, decision: ClaimDecision) {
        let Some(clock) = self.clock else { return };
        let meta = child.metadata();
        let (name, owner) = (name_of(meta), key_of(self.owner.metadata()));
        let taken_from = get_controller_of(meta).map(|r| format!("{} {}", r.kind, r.name));
        let message = || match (decision, taken_from) {
            (ClaimDecision::Adopt, None) => format!(
                "adopting orphan {name}: its labels match the selector of {} {owner} and it has no controller",
                O::KIND
            ),
            (ClaimDecision::Adopt, Some(other)) => format!(
                "taking {name} from {other}: its labels match the selector of {} {owner} (the ControllerRef check is off)",
                O::KIND
            ),
            _ => format!(
                "releasing {name}: its labels no longer match the selector of {} {owner}",
                O::KIND
            ),
        };
        let object = store::journal::ObjectRef::new(C::KIND, meta.namespace.as_deref().unwrap_or(""), name);
        let actor = controller_name(O::KIND);
        clock.decide(&actor, &format!("Claim{}s", C::KIND), Some(object), message);
    }

    /// The same manager deciding in `mode` (a lesson may switch the ControllerRef check off).
    pub fn with_mode(mut self, mode: ClaimMode) -> Self {
        self.mode = mode;
        self
    }

    /// Upstream `ClaimObject` over every candidate, in order: the children the owner controls
    /// afterwards (kept ones as given, adopted ones as the patch returned them).
    pub async fn claim(&self, candidates: &[Arc<C>]) -> Result<Vec<Arc<C>>, ReconcileError> {
        let owner = self.owner.metadata();
        let decisions = claim_decisions_in(self.mode, owner, self.selector, candidates);
        let mut rechecked = false;
        let mut owned = Vec::new();
        for (child, decision) in candidates.iter().zip(decisions) {
            match decision {
                ClaimDecision::Keep => owned.push(child.clone()),
                ClaimDecision::Adopt => {
                    self.decide(child, decision);
                    if !rechecked {
                        self.recheck().await?;
                        rechecked = true;
                    }
                    owned.extend(self.adopt(child).await?.map(Arc::new));
                }
                ClaimDecision::Release => {
                    self.decide(child, decision);
                    self.release(child).await?
                }
                ClaimDecision::Ignore => {}
            }
        }
        Ok(owned)
    }

    /// Upstream `RecheckDeletionTimestamp`: before the first adoption, a live GET (not the cache)
    /// makes sure the owner is still the same object and is not being deleted.
    pub async fn recheck(&self) -> Result<(), ReconcileError> {
        let meta = self.owner.metadata();
        let fresh = self.owners.get(meta.namespace.as_deref(), name_of(meta)).await?;
        let what = format!("{} {}", O::KIND, key_of(meta));
        if fresh.metadata().uid != meta.uid {
            return Err(ReconcileError::retryable(format!(
                "original {what} is gone: got uid {:?}, wanted {:?}",
                fresh.metadata().uid,
                meta.uid
            )));
        }
        if fresh.metadata().deletion_timestamp.is_some() {
            return Err(ReconcileError::retryable(format!("{what} has just been deleted")));
        }
        Ok(())
    }

    /// Upstream `AdoptPod` / `AdoptReplicaSet`: patches our controllerRef into an orphan. A child
    /// that is gone is skipped (`None`).
    pub async fn adopt(&self, child: &C) -> Result<Option<C>, ClientError> {
        let controller_ref = new_controller_ref(self.owner.metadata(), O::API_VERSION, O::KIND);
        let child_uid = child.metadata().uid.as_deref().unwrap_or("");
        let patch = match get_controller_of(child.metadata()) {
            // Only without the ControllerRef check is an owned child adopted.
            Some(previous) => take_over_patch(&controller_ref, &previous.uid, child_uid),
            None => adopt_patch(&controller_ref, child_uid),
        };
        match self.patch(child, patch).await {
            Ok(adopted) => Ok(Some(adopted)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Upstream `ReleasePod` / `ReleaseReplicaSet`: patches our controllerRef out of a child that no
    /// longer matches. A child that is gone, or was replaced by a namesake (Invalid), needs no release.
    pub async fn release(&self, child: &C) -> Result<(), ClientError> {
        let owner_uid = self.owner.metadata().uid.as_deref().unwrap_or("");
        let patch = release_patch(owner_uid, child.metadata().uid.as_deref().unwrap_or(""));
        match self.patch(child, patch).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() || e.reason == "Invalid" => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn patch(&self, child: &C, patch: serde_json::Value) -> Result<C, ClientError> {
        let meta = child.metadata();
        self.children
            .patch(
                meta.namespace.as_deref(),
                name_of(meta),
                PatchType::Strategic,
                patch,
            )
            .await
    }
}

/// The controller that claims for an owner of `kind`, as its sync is named in the journal
/// (`ReplicaSet` → `replicaset`).
fn controller_name(kind: &str) -> String {
    kind.to_ascii_lowercase()
}

#[cfg(test)]
mod tests;
