//! The owner graph: what each observed change does to the nodes and which
//! uids it queues.

use std::sync::Arc;

use serde_json::json;

use crate::garbagecollector::graph::{BlockingDependent, Enqueue, Graph, Identity, Observed, OwnerRef, Uid};

fn id(kind: &str, name: &str, uid: &str) -> Identity {
    let api_version = if kind == "Pod" || kind == "ConfigMap" {
        "v1"
    } else {
        "apps/v1"
    };
    Identity {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: "default".into(),
        name: name.into(),
        uid: uid.into(),
    }
}

/// An observed object, built with chained methods.
fn obj(kind: &str, name: &str, uid: &str) -> Observed {
    Observed {
        identity: id(kind, name, uid),
        owners: Vec::new(),
        being_deleted: false,
        orphan_finalizer: false,
        delete_dependents_finalizer: false,
    }
}

impl Observed {
    /// Owned by `owner`, with `blockOwnerDeletion: block`.
    fn owned_by(mut self, owner: &Observed, block: bool) -> Self {
        let o = &owner.identity;
        self.owners.push(OwnerRef {
            api_version: o.api_version.clone(),
            kind: o.kind.clone(),
            name: o.name.clone(),
            uid: o.uid.clone(),
            controller: true,
            block_owner_deletion: block,
        });
        self
    }

    fn deleted_foreground(mut self) -> Self {
        self.being_deleted = true;
        self.delete_dependents_finalizer = true;
        self
    }

    fn deleted_orphan(mut self) -> Self {
        self.being_deleted = true;
        self.orphan_finalizer = true;
        self
    }
}

fn uids(list: &[&str]) -> Vec<Uid> {
    list.iter().map(|u| Uid::from(*u)).collect()
}

fn deletes(list: &[&str]) -> Enqueue {
    Enqueue {
        attempt_to_delete: uids(list),
        attempt_to_orphan: Vec::new(),
    }
}

#[test]
fn changes_queue_what_upstream_process_graph_changes_queues() {
    let rs = obj("ReplicaSet", "web", "rs");
    let pod = obj("Pod", "web-1", "p1").owned_by(&rs, true);
    // Each case: the changes before (queues ignored), then one change and what it must queue.
    let cases: Vec<(&str, Vec<Observed>, Observed, Enqueue)> = vec![
        (
            "an owner with no dependents queues nothing",
            vec![],
            rs.clone(),
            deletes(&[]),
        ),
        (
            "a dependent of an unseen owner queues the virtual owner",
            vec![],
            pod.clone(),
            deletes(&["rs"]),
        ),
        (
            "a dependent of a seen owner queues nothing",
            vec![rs.clone()],
            pod.clone(),
            deletes(&[]),
        ),
        (
            "the virtual owner seen as named queues nothing",
            vec![pod.clone()],
            rs.clone(),
            deletes(&[]),
        ),
        (
            "the virtual owner seen under another name queues its dependents",
            vec![pod.clone()],
            obj("ReplicaSet", "other", "rs"),
            deletes(&["p1"]),
        ),
        (
            "naming a seen owner by another name queues the dependent",
            vec![rs.clone()],
            obj("Pod", "web-2", "p2").owned_by(&obj("ReplicaSet", "wrong", "rs"), true),
            deletes(&["p2"]),
        ),
        (
            "an owner starting foreground deletion queues its dependents, then itself",
            vec![rs.clone(), pod.clone()],
            rs.clone().deleted_foreground(),
            deletes(&["p1", "rs"]),
        ),
        (
            "an owner seen again while deleting dependents queues nothing",
            vec![rs.clone().deleted_foreground(), pod.clone()],
            rs.clone().deleted_foreground(),
            deletes(&[]),
        ),
        (
            "an owner first seen while deleting dependents queues itself",
            vec![],
            rs.clone().deleted_foreground(),
            deletes(&["rs"]),
        ),
        (
            "an owner starting orphan deletion goes to attemptToOrphan once",
            vec![rs.clone(), pod.clone()],
            rs.clone().deleted_orphan(),
            Enqueue {
                attempt_to_delete: Vec::new(),
                attempt_to_orphan: uids(&["rs"]),
            },
        ),
        (
            "an owner seen again while orphaning queues nothing",
            vec![rs.clone().deleted_orphan(), pod.clone()],
            rs.clone().deleted_orphan(),
            deletes(&[]),
        ),
        (
            "dropping a blocking reference queues the owner",
            vec![rs.clone(), pod.clone()],
            obj("Pod", "web-1", "p1"),
            deletes(&["rs"]),
        ),
        (
            "unblocking a reference queues the owner",
            vec![rs.clone(), pod.clone()],
            obj("Pod", "web-1", "p1").owned_by(&rs, false),
            deletes(&["rs"]),
        ),
        (
            "dropping a non-blocking reference queues nothing",
            vec![rs.clone(), obj("Pod", "web-1", "p1").owned_by(&rs, false)],
            obj("Pod", "web-1", "p1"),
            deletes(&[]),
        ),
    ];
    for (name, before, change, want) in cases {
        let mut graph = Graph::new();
        for o in before {
            graph.upsert(o);
        }
        assert_eq!(graph.upsert(change), want, "{name}");
    }
}

#[test]
fn a_node_keeps_both_ends_of_each_edge() {
    let mut graph = Graph::new();
    let (rs, other) = (obj("ReplicaSet", "web", "rs"), obj("ReplicaSet", "b", "rs2"));
    graph.upsert(obj("Pod", "web-1", "p1").owned_by(&rs, true));
    let virtual_owner = graph.node("rs").unwrap();
    assert!(!virtual_owner.observed);
    assert_eq!(
        virtual_owner.identity, rs.identity,
        "coordinates from the reference"
    );
    graph.upsert(rs.clone());
    assert!(graph.node("rs").unwrap().observed);
    // The pod moves to another owner.
    graph.upsert(obj("Pod", "web-1", "p1").owned_by(&other, true));
    assert!(graph.node("rs").unwrap().dependents.is_empty());
    assert_eq!(graph.dependents("rs2"), vec![id("Pod", "web-1", "p1")]);
    assert_eq!(graph.len(), 3);
}

#[test]
fn removals_queue_dependents_and_owners_waiting_for_them() {
    let rs = obj("ReplicaSet", "web", "rs");
    let deployment = obj("Deployment", "web", "d");
    let mut graph = Graph::new();
    graph.upsert(deployment.clone().deleted_foreground());
    graph.upsert(rs.clone().owned_by(&deployment, true));
    graph.upsert(obj("Pod", "web-1", "p1").owned_by(&rs, true));
    assert_eq!(
        graph.remove("rs"),
        deletes(&["p1", "d"]),
        "its dependent, and the waiting owner"
    );
    assert!(graph.node("rs").is_none());
    assert!(graph.node("d").unwrap().dependents.is_empty());
    assert_eq!(graph.remove("rs"), deletes(&[]), "a second removal is a no-op");
}

#[test]
fn a_verified_absence_removes_virtual_nodes_but_not_a_namesake_seen_for_real() {
    let rs = obj("ReplicaSet", "web", "rs");
    let mut graph = Graph::new();
    graph.upsert(obj("Pod", "web-1", "p1").owned_by(&rs, true));
    assert_eq!(graph.remove_verified_absent(&rs.identity), deletes(&["p1"]));
    assert!(graph.node("rs").is_none());

    graph.upsert(obj("ReplicaSet", "renamed", "rs"));
    assert_eq!(graph.remove_verified_absent(&rs.identity), deletes(&[]));
    assert!(
        graph.node("rs").is_some(),
        "observed under other coordinates: another object"
    );
}

#[test]
fn blocking_dependents_are_those_blocking_this_owner() {
    let (rs, other) = (obj("ReplicaSet", "web", "rs"), obj("ReplicaSet", "b", "rs2"));
    let mut graph = Graph::new();
    graph.upsert(rs.clone());
    graph.upsert(obj("Pod", "a", "pa").owned_by(&rs, true));
    graph.upsert(obj("Pod", "b", "pb").owned_by(&rs, false));
    graph.upsert(obj("Pod", "c", "pc").owned_by(&rs, false).owned_by(&other, true));
    graph.upsert(
        obj("ConfigMap", "d", "cd")
            .owned_by(&rs, true)
            .deleted_foreground(),
    );
    let blocking = graph.blocking_dependents("rs");
    let want = vec![
        BlockingDependent {
            uid: "cd".into(),
            deleting_dependents: true,
        },
        BlockingDependent {
            uid: "pa".into(),
            deleting_dependents: false,
        },
    ];
    assert_eq!(blocking, want);
    let item = graph.item("rs").unwrap();
    assert!(item.has_dependents && item.a_dependent_deletes_dependents);
    assert!(!graph.item("pa").unwrap().has_dependents);
}

#[test]
fn observed_uids_lists_one_kind_without_virtual_nodes() {
    let rs = obj("ReplicaSet", "web", "rs");
    let mut graph = Graph::new();
    graph.upsert(obj("Pod", "a", "pa").owned_by(&rs, true));
    graph.upsert(obj("Pod", "b", "pb"));
    let mut pods = graph.observed_uids("v1", "Pod");
    pods.sort();
    assert_eq!(pods, uids(&["pa", "pb"]));
    assert!(graph.observed_uids("apps/v1", "ReplicaSet").is_empty());
}

#[test]
fn nodes_share_repeated_strings() {
    let rs = obj("ReplicaSet", "web", "rs");
    let mut graph = Graph::new();
    graph.upsert(rs.clone());
    graph.upsert(obj("Pod", "a", "pa").owned_by(&rs, true));
    graph.upsert(obj("Pod", "b", "pb").owned_by(&rs, true));
    let (a, b) = (graph.node("pa").unwrap(), graph.node("pb").unwrap());
    assert!(Arc::ptr_eq(&a.identity.kind, &b.identity.kind));
    assert!(Arc::ptr_eq(&a.identity.namespace, &b.identity.namespace));
    assert!(Arc::ptr_eq(&a.owners[0].kind, &b.owners[0].kind));
    let owner = &graph.node("rs").unwrap().identity;
    assert!(
        Arc::ptr_eq(&a.owners[0].uid, &owner.uid),
        "the owner's uid is the graph's key"
    );
    assert!(Arc::ptr_eq(&a.owners[0].name, &owner.name));
}

#[test]
fn observed_reads_the_metadata_the_graph_needs() {
    let pod = json!({"metadata": {
        "name": "web-1", "namespace": "shop", "uid": "p1",
        "deletionTimestamp": "2024-01-01T00:00:00Z",
        "finalizers": ["example.com/x", "foregroundDeletion"],
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs",
             "controller": true, "blockOwnerDeletion": true},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "no-uid"},
        ],
    }});
    let o = Observed::from_object("v1", "Pod", &pod).unwrap();
    assert_eq!(&*o.identity.namespace, "shop");
    assert!(o.being_deleted && o.delete_dependents_finalizer && !o.orphan_finalizer);
    assert_eq!(o.owners.len(), 1, "a reference without uid is skipped");
    assert!(o.owners[0].controller && o.owners[0].block_owner_deletion);
    assert!(Observed::from_object("v1", "Pod", &json!({"metadata": {"name": "x"}})).is_none());
}
