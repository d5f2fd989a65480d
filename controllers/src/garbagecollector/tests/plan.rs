//! The decisions of `attemptToDeleteItem` and `processDeletingDependentsItem`,
//! and the patch bodies.

use serde_json::json;

use crate::garbagecollector::graph::{BlockingDependent, Uid};
use crate::garbagecollector::plan::{
    Decision, DeletingDependents, DeletionPropagation, Item, OwnerState, attempt_to_delete_item,
    process_deleting_dependents_item, remove_finalizer_patch, remove_owner_refs_patch,
    unblock_owner_refs_patch,
};

use DeletionPropagation::{Background, Foreground, Orphan};
use OwnerState::{Dangling, Solid, WaitingForDependentsDeletion as Waiting};

/// Each ownerReference's owner uid and what a lookup found.
type Owners = Vec<(Uid, OwnerState)>;

fn owners(states: &[(&str, OwnerState)]) -> Owners {
    states.iter().map(|(u, s)| (Uid::from(*u), *s)).collect()
}

fn uids(list: &[&str]) -> Vec<Uid> {
    list.iter().map(|u| Uid::from(*u)).collect()
}

#[test]
fn attempt_to_delete_item_decides_as_upstream() {
    let plain = Item::default();
    let with_dependents = Item {
        has_dependents: true,
        ..Item::default()
    };
    let in_a_cycle = Item {
        has_dependents: true,
        a_dependent_deletes_dependents: true,
        ..Item::default()
    };
    let orphaning = Item {
        orphan_finalizer: true,
        ..Item::default()
    };
    let foreground = Item {
        delete_dependents_finalizer: true,
        ..Item::default()
    };
    let cases: Vec<(&str, Item, Owners, Decision)> = vec![
        ("no owner", plain, owners(&[]), Decision::Keep),
        ("one solid owner", plain, owners(&[("a", Solid)]), Decision::Keep),
        (
            "a solid owner keeps it; the dangling reference goes",
            plain,
            owners(&[("a", Solid), ("b", Dangling)]),
            Decision::RemoveOwnerRefs(uids(&["b"])),
        ),
        (
            "a solid owner keeps it; the waiting owner must not wait for it",
            with_dependents,
            owners(&[("w", Waiting), ("a", Solid), ("b", Dangling)]),
            Decision::RemoveOwnerRefs(uids(&["w", "b"])),
        ),
        (
            "all owners dangling: deleted in the background",
            plain,
            owners(&[("a", Dangling), ("b", Dangling)]),
            Decision::Delete(Background),
        ),
        (
            "an owner waits and the item has no dependents: plain delete",
            plain,
            owners(&[("w", Waiting)]),
            Decision::Delete(Background),
        ),
        (
            "an owner waits and the item has dependents: foreground",
            with_dependents,
            owners(&[("w", Waiting), ("b", Dangling)]),
            Decision::DeleteForeground { unblock_first: false },
        ),
        (
            "a dependent deletes dependents too: unblock first (cycle guard)",
            in_a_cycle,
            owners(&[("w", Waiting)]),
            Decision::DeleteForeground { unblock_first: true },
        ),
        (
            "its own orphan finalizer is honoured",
            orphaning,
            owners(&[("a", Dangling)]),
            Decision::Delete(Orphan),
        ),
        (
            "its own foregroundDeletion finalizer is honoured",
            foreground,
            owners(&[("a", Dangling)]),
            Decision::Delete(Foreground),
        ),
    ];
    for (name, item, owners, want) in cases {
        assert_eq!(attempt_to_delete_item(&item, &owners), want, "{name}");
    }
}

#[test]
fn a_foreground_owner_waits_only_for_blocking_dependents() {
    let blocking = |uid: &str, deleting_dependents| BlockingDependent {
        uid: uid.into(),
        deleting_dependents,
    };
    let cases = [
        (
            "none left: finalizer goes",
            vec![],
            DeletingDependents::RemoveFinalizer,
        ),
        (
            "left: they are queued",
            vec![blocking("a", false), blocking("b", false)],
            DeletingDependents::AttemptToDelete(uids(&["a", "b"])),
        ),
        (
            "one deleting its own dependents is on its way already",
            vec![blocking("a", true), blocking("b", false)],
            DeletingDependents::AttemptToDelete(uids(&["b"])),
        ),
    ];
    for (name, blocking, want) in cases {
        assert_eq!(process_deleting_dependents_item(&blocking), want, "{name}");
    }
}

#[test]
fn patches_change_one_field_and_carry_the_resource_version() {
    let a = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "ua", "blockOwnerDeletion": true});
    let b = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "ub"});
    let obj = json!({"metadata": {
        "resourceVersion": "42", "finalizers": ["orphan", "example.com/x"], "ownerReferences": [a, b],
    }});
    assert_eq!(
        remove_owner_refs_patch(&obj, &uids(&["ua"])),
        Some(json!({"metadata": {"ownerReferences": [b], "resourceVersion": "42"}}))
    );
    assert_eq!(
        remove_owner_refs_patch(&obj, &uids(&["ua", "ub"])),
        Some(json!({"metadata": {"ownerReferences": null, "resourceVersion": "42"}})),
        "the last reference removes the field"
    );
    assert_eq!(remove_owner_refs_patch(&obj, &uids(&["other"])), None);

    let mut unblocked = a.clone();
    unblocked["blockOwnerDeletion"] = json!(false);
    assert_eq!(
        unblock_owner_refs_patch(&obj),
        Some(json!({"metadata": {"ownerReferences": [unblocked, b], "resourceVersion": "42"}}))
    );
    let nothing_blocks = json!({"metadata": {"ownerReferences": [b]}});
    assert_eq!(unblock_owner_refs_patch(&nothing_blocks), None);

    assert_eq!(
        remove_finalizer_patch(&obj, "orphan"),
        Some(json!({"metadata": {"finalizers": ["example.com/x"], "resourceVersion": "42"}}))
    );
    assert_eq!(remove_finalizer_patch(&obj, "foregroundDeletion"), None);
    let only = json!({"metadata": {"resourceVersion": "7", "finalizers": ["orphan"]}});
    assert_eq!(
        remove_finalizer_patch(&only, "orphan"),
        Some(json!({"metadata": {"finalizers": null, "resourceVersion": "7"}}))
    );
}
