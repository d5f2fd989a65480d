//! The owner graph: uid → node (who the object is, its owners, its
//! dependents), and what each observed change means for the two queues.
//!
//! Upstream: `graph.go` (`node`, `blockingDependents`) and the pure half of
//! `graph_builder.go` (`processGraphChanges`, `addDependentToOwners`,
//! `removeNode`, `referencesDiffs`, `addUnblockedOwnersToDeleteQueue`,
//! `processTransitions`). No IO and no locks: the caller (the graph
//! builder) holds the graph behind one mutex and adds the uids each change
//! returns to the work queues.
//!
//! A node keeps metadata only — never the object. apiVersions, kinds and
//! namespaces (few distinct values) are interned, so ten thousand pods share
//! one `"v1"`, one `"Pod"` and one `"default"`.
//!
//! Simplified: a virtual node takes its coordinates from the first dependent
//! that names it; upstream's bookkeeping of dependents that disagree on an
//! owner's coordinates (`partitionDependents`, `getAlternateOwnerIdentity`)
//! and its `absentOwnerCache` are left out — every dependent checks its own
//! ownerReferences with a live GET anyway.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

/// An object's uid: the graph's key.
pub type Uid = Arc<str>;

/// The finalizer that makes the garbage collector orphan the dependents.
pub const FINALIZER_ORPHAN: &str = "orphan";
/// The finalizer that makes it delete the dependents first.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// Who an object is (upstream `objectReference`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// e.g. `apps/v1`.
    pub api_version: Arc<str>,
    /// e.g. `ReplicaSet`.
    pub kind: Arc<str>,
    /// `""` for a cluster-scoped object.
    pub namespace: Arc<str>,
    /// `metadata.name`.
    pub name: Arc<str>,
    /// `metadata.uid`.
    pub uid: Uid,
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.namespace {
            "" => write!(f, "{} {} ({})", self.kind, self.name, self.uid),
            ns => write!(f, "{} {ns}/{} ({})", self.kind, self.name, self.uid),
        }
    }
}

/// One entry of `metadata.ownerReferences`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRef {
    /// The owner's apiVersion.
    pub api_version: Arc<str>,
    /// The owner's kind.
    pub kind: Arc<str>,
    /// The owner's name (in the dependent's namespace, for a namespaced owner).
    pub name: Arc<str>,
    /// The owner's uid.
    pub uid: Uid,
    /// `controller: true`.
    pub controller: bool,
    /// `blockOwnerDeletion: true`: a foreground deletion of the owner waits for this dependent.
    pub block_owner_deletion: bool,
}

/// What the graph learns from one observed object: its metadata, nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// Who it is.
    pub identity: Identity,
    /// Its ownerReferences.
    pub owners: Vec<OwnerRef>,
    /// `metadata.deletionTimestamp` is set.
    pub being_deleted: bool,
    /// The `orphan` finalizer is present.
    pub orphan_finalizer: bool,
    /// The `foregroundDeletion` finalizer is present.
    pub delete_dependents_finalizer: bool,
}

impl Observed {
    /// The metadata of `obj`, an object of `api_version`/`kind`; `None`
    /// without a uid.
    pub fn from_object(api_version: &str, kind: &str, obj: &Value) -> Option<Observed> {
        let meta = obj.get("metadata")?;
        let text = |field: &str| meta.get(field).and_then(Value::as_str).unwrap_or("");
        let uid = text("uid");
        if uid.is_empty() {
            return None;
        }
        let finalizers = meta.get("finalizers").and_then(Value::as_array);
        let has = |f: &str| finalizers.is_some_and(|list| list.iter().any(|v| v.as_str() == Some(f)));
        Some(Observed {
            identity: Identity {
                api_version: api_version.into(),
                kind: kind.into(),
                namespace: text("namespace").into(),
                name: text("name").into(),
                uid: uid.into(),
            },
            owners: owner_refs(obj),
            being_deleted: meta.get("deletionTimestamp").is_some_and(|t| !t.is_null()),
            orphan_finalizer: has(FINALIZER_ORPHAN),
            delete_dependents_finalizer: has(FINALIZER_DELETE_DEPENDENTS),
        })
    }
}

/// The ownerReferences of an object (entries without a uid are skipped).
pub fn owner_refs(obj: &Value) -> Vec<OwnerRef> {
    let Some(refs) = obj.pointer("/metadata/ownerReferences").and_then(Value::as_array) else {
        return Vec::new();
    };
    let text =
        |r: &Value, field: &str| -> Arc<str> { r.get(field).and_then(Value::as_str).unwrap_or("").into() };
    let flag = |r: &Value, field: &str| r.get(field).and_then(Value::as_bool).unwrap_or(false);
    refs.iter()
        .filter(|r| {
            r.get("uid")
                .and_then(Value::as_str)
                .is_some_and(|u| !u.is_empty())
        })
        .map(|r| OwnerRef {
            api_version: text(r, "apiVersion"),
            kind: text(r, "kind"),
            name: text(r, "name"),
            uid: text(r, "uid"),
            controller: flag(r, "controller"),
            block_owner_deletion: flag(r, "blockOwnerDeletion"),
        })
        .collect()
}

/// One object in the graph (upstream `node`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Who it is.
    pub identity: Identity,
    /// Its ownerReferences, as last observed.
    pub owners: Vec<OwnerRef>,
    /// The uids of the objects that name this one in their ownerReferences.
    pub dependents: BTreeSet<Uid>,
    /// `deletionTimestamp` is set: a one-way trip, never unset.
    pub being_deleted: bool,
    /// Being deleted with the `foregroundDeletion` finalizer: waits for its
    /// blocking dependents. Never unset either.
    pub deleting_dependents: bool,
    /// The `orphan` finalizer is present.
    pub orphan_finalizer: bool,
    /// Seen by a watch. `false`: a *virtual* node, made up because a
    /// dependent names it; the garbage collector checks that it exists.
    pub observed: bool,
}

/// The uids a change asks the workers to look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Enqueue {
    /// For the attemptToDelete queue, in order.
    pub attempt_to_delete: Vec<Uid>,
    /// For the attemptToOrphan queue, in order.
    pub attempt_to_orphan: Vec<Uid>,
}

/// What a worker needs to know of one node, copied out of the graph so that
/// no lock is held while it talks to the API server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemView {
    /// Who it is.
    pub identity: Identity,
    /// See [`Node::being_deleted`].
    pub being_deleted: bool,
    /// See [`Node::deleting_dependents`].
    pub deleting_dependents: bool,
    /// Whether any object names it as an owner.
    pub has_dependents: bool,
    /// Whether one of its dependents is itself deleting dependents (the
    /// cycle guard of `attemptToDeleteItem`).
    pub a_dependent_deletes_dependents: bool,
}

/// A dependent whose ownerReference to its owner has `blockOwnerDeletion: true`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockingDependent {
    /// The dependent's uid.
    pub uid: Uid,
    /// Whether it is itself waiting for its own dependents.
    pub deleting_dependents: bool,
}

/// The owner graph (upstream `uidToNode` plus the graph builder's logic).
#[derive(Debug, Default)]
pub struct Graph {
    nodes: HashMap<Uid, Node>,
    /// apiVersions, kinds and namespaces: shared by every node that names them.
    interned: HashSet<Arc<str>>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many nodes (observed and virtual) there are.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// One node.
    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// What a worker needs of one node.
    pub fn item(&self, uid: &str) -> Option<ItemView> {
        let node = self.nodes.get(uid)?;
        let a_dependent_deletes_dependents = node
            .dependents
            .iter()
            .any(|d| self.nodes.get(d).is_some_and(|d| d.deleting_dependents));
        Some(ItemView {
            identity: node.identity.clone(),
            being_deleted: node.being_deleted,
            deleting_dependents: node.deleting_dependents,
            has_dependents: !node.dependents.is_empty(),
            a_dependent_deletes_dependents,
        })
    }

    /// The identities of `uid`'s dependents.
    pub fn dependents(&self, uid: &str) -> Vec<Identity> {
        let Some(node) = self.nodes.get(uid) else {
            return Vec::new();
        };
        node.dependents
            .iter()
            .filter_map(|d| self.nodes.get(d))
            .map(|d| d.identity.clone())
            .collect()
    }

    /// Upstream `blockingDependents`: the dependents whose ownerReference to
    /// `uid` has `blockOwnerDeletion: true`.
    pub fn blocking_dependents(&self, uid: &str) -> Vec<BlockingDependent> {
        let Some(node) = self.nodes.get(uid) else {
            return Vec::new();
        };
        node.dependents
            .iter()
            .filter_map(|d| self.nodes.get(d))
            .filter(|d| d.owners.iter().any(|o| &*o.uid == uid && o.block_owner_deletion))
            .map(|d| BlockingDependent {
                uid: d.identity.uid.clone(),
                deleting_dependents: d.deleting_dependents,
            })
            .collect()
    }

    /// The uids of the observed nodes of one kind (to find, after a relist,
    /// the objects that disappeared meanwhile).
    pub fn observed_uids(&self, api_version: &str, kind: &str) -> Vec<Uid> {
        self.nodes
            .values()
            .filter(|n| n.observed && &*n.identity.api_version == api_version && &*n.identity.kind == kind)
            .map(|n| n.identity.uid.clone())
            .collect()
    }

    /// An object was added or updated (upstream `processGraphChanges`, add
    /// and update events).
    pub fn upsert(&mut self, observed: Observed) -> Enqueue {
        let mut observed = self.intern(observed);
        let mut out = Enqueue::default();
        let uid = observed.identity.uid.clone();
        let Some(existing) = self.nodes.get(&uid) else {
            self.insert_node(&observed, &mut out);
            self.process_transitions(None, &observed, &mut out);
            return out;
        };
        let before = Transitions::of(existing);
        if !existing.observed {
            self.observe_virtual(&observed.identity, &mut out);
        }
        self.update_owners(&uid, std::mem::take(&mut observed.owners), &mut out);
        if let Some(node) = self.nodes.get_mut(&uid) {
            node.being_deleted |= observed.being_deleted;
            node.orphan_finalizer = observed.orphan_finalizer;
        }
        self.process_transitions(Some(before), &observed, &mut out);
        out
    }

    /// An object was deleted, as a watch saw it (upstream
    /// `processGraphChanges`, delete event).
    pub fn remove(&mut self, uid: &str) -> Enqueue {
        let mut out = Enqueue::default();
        let Some(node) = self.nodes.remove(uid) else {
            return out;
        };
        self.remove_dependent_from_owners(uid, &node.owners);
        out.attempt_to_delete.extend(node.dependents.iter().cloned());
        for owner in &node.owners {
            if self.nodes.get(&owner.uid).is_some_and(|o| o.deleting_dependents) {
                // The owner may have been waiting for this one.
                out.attempt_to_delete.push(owner.uid.clone());
            }
        }
        out
    }

    /// The garbage collector found `identity` absent with a live GET
    /// (upstream's *virtual delete event*). A node observed under other
    /// coordinates is a different object and stays.
    pub fn remove_verified_absent(&mut self, identity: &Identity) -> Enqueue {
        match self.nodes.get(&identity.uid) {
            Some(node) if node.observed && node.identity != *identity => Enqueue::default(),
            Some(_) => self.remove(&identity.uid),
            None => Enqueue::default(),
        }
    }

    /// Shares the strings of `observed` that many nodes repeat: interned
    /// apiVersions, kinds and namespaces, and an owner's uid and name from
    /// the owner's node.
    fn intern(&mut self, mut observed: Observed) -> Observed {
        let id = &mut observed.identity;
        id.api_version = self.interned(&id.api_version);
        id.kind = self.interned(&id.kind);
        id.namespace = self.interned(&id.namespace);
        for owner in &mut observed.owners {
            owner.api_version = self.interned(&owner.api_version);
            owner.kind = self.interned(&owner.kind);
            if let Some((uid, node)) = self.nodes.get_key_value(&owner.uid) {
                // A pod's reference shares its ReplicaSet's uid and name.
                owner.uid = uid.clone();
                if node.identity.name == owner.name {
                    owner.name = node.identity.name.clone();
                }
            }
        }
        observed
    }

    fn interned(&mut self, s: &Arc<str>) -> Arc<str> {
        match self.interned.get(s) {
            Some(shared) => shared.clone(),
            None => {
                self.interned.insert(s.clone());
                s.clone()
            }
        }
    }

    /// Upstream `insertNode`.
    fn insert_node(&mut self, observed: &Observed, out: &mut Enqueue) {
        let node = Node {
            identity: observed.identity.clone(),
            owners: observed.owners.clone(),
            dependents: BTreeSet::new(),
            being_deleted: observed.being_deleted,
            deleting_dependents: observed.being_deleted && observed.delete_dependents_finalizer,
            orphan_finalizer: observed.orphan_finalizer,
            observed: true,
        };
        self.nodes.insert(observed.identity.uid.clone(), node);
        self.add_dependent_to_owners(&observed.identity, &observed.owners, out);
    }

    /// A virtual node is seen for real: it takes the observed coordinates,
    /// and dependents that named it otherwise are checked again.
    fn observe_virtual(&mut self, identity: &Identity, out: &mut Enqueue) {
        let Some(node) = self.nodes.get_mut(&identity.uid) else {
            return;
        };
        node.observed = true;
        if node.identity != *identity {
            node.identity = identity.clone();
            out.attempt_to_delete.extend(node.dependents.iter().cloned());
        }
    }

    /// Upstream `addDependentToOwners`: makes virtual nodes for owners not in
    /// the graph (queued, to be verified) and queues the dependent when an
    /// owner it names does not match what was observed.
    fn add_dependent_to_owners(&mut self, dependent: &Identity, owners: &[OwnerRef], out: &mut Enqueue) {
        let mut potentially_invalid = false;
        for owner in owners {
            match self.nodes.get_mut(&owner.uid) {
                Some(node) => {
                    node.dependents.insert(dependent.uid.clone());
                    potentially_invalid |= !matches_coordinates(&node.identity, owner, dependent);
                }
                None => {
                    let node = virtual_node(owner, dependent);
                    self.nodes.insert(owner.uid.clone(), node);
                    out.attempt_to_delete.push(owner.uid.clone());
                }
            }
        }
        if potentially_invalid {
            out.attempt_to_delete.push(dependent.uid.clone());
        }
    }

    /// Upstream `removeDependentFromOwners`.
    fn remove_dependent_from_owners(&mut self, dependent: &str, owners: &[OwnerRef]) {
        for owner in owners {
            if let Some(node) = self.nodes.get_mut(&owner.uid) {
                node.dependents.remove(dependent);
            }
        }
    }

    /// The ownerReferences of `uid` changed (or not): update both ends of
    /// every edge, and queue owners a removed or unblocked reference held
    /// back (upstream `referencesDiffs`, `addUnblockedOwnersToDeleteQueue`).
    fn update_owners(&mut self, uid: &Uid, new: Vec<OwnerRef>, out: &mut Enqueue) {
        let Some(node) = self.nodes.get_mut(uid) else {
            return;
        };
        if node.owners == new {
            return;
        }
        let old = std::mem::replace(&mut node.owners, new.clone());
        let identity = node.identity.clone();
        let diff = references_diffs(&old, &new);
        for unblocked in diff.unblocked() {
            if self.nodes.contains_key(&unblocked) {
                out.attempt_to_delete.push(unblocked);
            }
        }
        self.add_dependent_to_owners(&identity, &diff.added, out);
        self.remove_dependent_from_owners(uid, &diff.removed);
    }

    /// Upstream `processTransitions`: an owner starts orphaning, or starts
    /// deleting its dependents.
    fn process_transitions(&mut self, before: Option<Transitions>, observed: &Observed, out: &mut Enqueue) {
        let before = before.unwrap_or_default();
        let uid = &observed.identity.uid;
        if observed.being_deleted && observed.orphan_finalizer && !before.orphaning {
            out.attempt_to_orphan.push(uid.clone());
            return;
        }
        if observed.being_deleted && observed.delete_dependents_finalizer && !before.deleting_dependents {
            let Some(node) = self.nodes.get_mut(uid) else {
                return;
            };
            node.deleting_dependents = true;
            out.attempt_to_delete.extend(node.dependents.iter().cloned());
            out.attempt_to_delete.push(uid.clone());
        }
    }
}

/// The deletion state of a node before a change, to see what starts now.
#[derive(Clone, Copy, Debug, Default)]
struct Transitions {
    orphaning: bool,
    deleting_dependents: bool,
}

impl Transitions {
    fn of(node: &Node) -> Self {
        Transitions {
            orphaning: node.being_deleted && node.orphan_finalizer,
            deleting_dependents: node.deleting_dependents,
        }
    }
}

/// A node for an owner that a dependent names but no watch has shown yet.
fn virtual_node(owner: &OwnerRef, dependent: &Identity) -> Node {
    Node {
        identity: Identity {
            api_version: owner.api_version.clone(),
            kind: owner.kind.clone(),
            namespace: dependent.namespace.clone(),
            name: owner.name.clone(),
            uid: owner.uid.clone(),
        },
        owners: Vec::new(),
        dependents: BTreeSet::from([dependent.uid.clone()]),
        being_deleted: false,
        deleting_dependents: false,
        orphan_finalizer: false,
        observed: false,
    }
}

/// Whether `owner` (a reference held by `dependent`) names the node
/// `identity` the way it was observed: same apiVersion, kind and name, and
/// for a namespaced owner the dependent's namespace.
fn matches_coordinates(identity: &Identity, owner: &OwnerRef, dependent: &Identity) -> bool {
    let namespace_ok = identity.namespace.is_empty() || identity.namespace == dependent.namespace;
    namespace_ok
        && identity.api_version == owner.api_version
        && identity.kind == owner.kind
        && identity.name == owner.name
}

/// How two ownerReference lists differ, by uid (upstream `referencesDiffs`).
#[derive(Debug, Default)]
struct ReferencesDiff {
    added: Vec<OwnerRef>,
    removed: Vec<OwnerRef>,
    /// (old, new) for a uid in both lists whose reference changed.
    changed: Vec<(OwnerRef, OwnerRef)>,
}

impl ReferencesDiff {
    /// The owners no longer blocked by this dependent: a blocking reference
    /// removed, or changed to non-blocking.
    fn unblocked(&self) -> Vec<Uid> {
        let removed = self.removed.iter().filter(|r| r.block_owner_deletion);
        let changed = self
            .changed
            .iter()
            .filter(|(old, new)| old.block_owner_deletion && !new.block_owner_deletion)
            .map(|(_, new)| new);
        removed.chain(changed).map(|r| r.uid.clone()).collect()
    }
}

fn references_diffs(old: &[OwnerRef], new: &[OwnerRef]) -> ReferencesDiff {
    let mut diff = ReferencesDiff::default();
    for n in new {
        match old.iter().find(|o| o.uid == n.uid) {
            None => diff.added.push(n.clone()),
            Some(o) if o != n => diff.changed.push((o.clone(), n.clone())),
            Some(_) => {}
        }
    }
    for o in old {
        if !new.iter().any(|n| n.uid == o.uid) {
            diff.removed.push(o.clone());
        }
    }
    diff
}
