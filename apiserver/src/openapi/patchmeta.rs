//! Patch metadata in the OpenAPI definitions.
//!
//! Upstream's `openapi-gen` copies the Go struct tags `patchStrategy` and
//! `patchMergeKey` into `x-kubernetes-patch-strategy` /
//! `x-kubernetes-patch-merge-key`, and the `+listType`/`+listMapKey`/
//! `+mapType` markers into `x-kubernetes-list-type` /
//! `x-kubernetes-list-map-keys` / `x-kubernetes-map-type`, on the property
//! that holds the field. kubectl's client-side apply trusts these (and only
//! these) when the PATCH operation advertises strategic merge patch.
//!
//! Here the same facts come from [`crate::patch::meta`], the module the
//! server's own patch code uses, so the document and the server can never
//! disagree. The walk starts at a kind's root and follows each property
//! into the definition it references; a definition is annotated once.

use super::kinds::ref_target;
use crate::patch::meta::{ListType, PatchStrategy, Schema as Meta};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Whether the patch module knows the merge behaviour of this kind. Only
/// then may the PATCH operation advertise strategic merge patch.
pub(crate) fn knows_kind(group: &str, kind: &str) -> bool {
    Meta::for_kind(group, kind).is_some()
}

/// What the walk needs from a node of the patch-metadata graph; implemented
/// by [`crate::patch::meta::Schema`] (and by a fake in the tests).
pub(crate) trait MetaNode: Clone + Sized {
    fn field(&self, name: &str) -> Option<Self>;
    fn items(&self) -> Option<Self>;
    fn patch_strategy(&self) -> PatchStrategy;
    fn list_type(&self) -> ListType;
    fn map_atomic(&self) -> bool;
}

impl MetaNode for Meta {
    fn field(&self, name: &str) -> Option<Self> {
        Meta::field(self, name)
    }
    fn items(&self) -> Option<Self> {
        Meta::items(self)
    }
    fn patch_strategy(&self) -> PatchStrategy {
        Meta::patch_strategy(self)
    }
    fn list_type(&self) -> ListType {
        Meta::list_type(self)
    }
    fn map_atomic(&self) -> bool {
        Meta::map_atomic(self)
    }
}

/// Annotates the definitions reachable from the kind `group`/`kind`, whose
/// root definition is `root`. Returns the number of properties annotated.
pub(crate) fn annotate_kind(
    defs: &mut Map<String, Value>,
    root: &str,
    group: &str,
    kind: &str,
    seen: &mut HashSet<String>,
) -> usize {
    match Meta::for_kind(group, kind) {
        Some(node) => annotate_definition(defs, root, &node, seen),
        None => 0,
    }
}

fn annotate_definition<N: MetaNode>(
    defs: &mut Map<String, Value>,
    name: &str,
    node: &N,
    seen: &mut HashSet<String>,
) -> usize {
    if !seen.insert(name.to_string()) {
        return 0;
    }
    let Some(Value::Object(properties)) = defs.get_mut(name).and_then(|d| d.get_mut("properties")) else {
        return 0;
    };
    let mut count = 0;
    let mut next: Vec<(String, N)> = Vec::new();
    for (field, prop) in properties.iter_mut() {
        let Some(child) = node.field(field) else {
            continue;
        };
        if annotate_property(prop, &child) {
            count += 1;
        }
        next.extend(referenced(prop, &child));
    }
    for (target, child) in next {
        count += annotate_definition(defs, &target, &child, seen);
    }
    count
}

/// The definition a property leads to, with the matching meta node: the
/// property's own type, or its list element / map value type.
fn referenced<N: MetaNode>(prop: &Value, child: &N) -> Vec<(String, N)> {
    if let Some(target) = ref_target(prop) {
        return vec![(target.to_string(), child.clone())];
    }
    let inner = prop.get("items").or_else(|| prop.get("additionalProperties"));
    match (inner.and_then(ref_target), child.items()) {
        (Some(target), Some(item)) => vec![(target.to_string(), item)],
        _ => Vec::new(),
    }
}

/// Writes the extensions of one property. Returns whether any was written.
fn annotate_property<N: MetaNode>(prop: &mut Value, node: &N) -> bool {
    let Some(obj) = prop.as_object_mut() else {
        return false;
    };
    let before = obj.len();
    let (strategy, key) = strategy_strings(node.patch_strategy());
    if let Some(strategy) = strategy {
        obj.insert("x-kubernetes-patch-strategy".into(), strategy.into());
    }
    if let Some(key) = key {
        obj.insert("x-kubernetes-patch-merge-key".into(), key.into());
    }
    if obj.get("type").and_then(Value::as_str) == Some("array") {
        insert_list_type(obj, node.list_type());
    }
    if node.map_atomic() {
        obj.insert("x-kubernetes-map-type".into(), "atomic".into());
    }
    obj.len() > before
}

/// The `x-kubernetes-patch-strategy` and `-merge-key` values of a strategy.
fn strategy_strings(strategy: PatchStrategy) -> (Option<&'static str>, Option<&'static str>) {
    match strategy {
        PatchStrategy::Default => (None, None),
        PatchStrategy::Merge { key } => (Some("merge"), key),
        PatchStrategy::Replace => (Some("replace"), None),
        PatchStrategy::RetainKeys => (Some("retainKeys"), None),
        PatchStrategy::MergeRetainKeys { key } => (Some("merge,retainKeys"), Some(key)),
    }
}

fn insert_list_type(obj: &mut Map<String, Value>, list_type: ListType) {
    let name = match list_type {
        ListType::Atomic => "atomic",
        ListType::Set => "set",
        ListType::Map(keys) => {
            let keys: Vec<Value> = keys.iter().map(|k| Value::from(*k)).collect();
            obj.insert("x-kubernetes-list-map-keys".into(), keys.into());
            "map"
        }
    };
    obj.insert("x-kubernetes-list-type".into(), name.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::kinds;

    /// A stand-in for `patch::meta`: Pod → spec → containers (merge on
    /// name, list map) → ports (merge on containerPort).
    #[derive(Clone, Debug)]
    struct Fake(&'static str);

    impl MetaNode for Fake {
        fn field(&self, name: &str) -> Option<Self> {
            let next = match (self.0, name) {
                ("pod", "spec") => "podspec",
                ("podspec", "containers") => "containers",
                ("container", "ports") => "ports",
                ("podspec", "nodeSelector") => "nodeSelector",
                _ => "leaf",
            };
            Some(Fake(next))
        }
        fn items(&self) -> Option<Self> {
            Some(Fake(if self.0 == "containers" {
                "container"
            } else {
                "leaf"
            }))
        }
        fn patch_strategy(&self) -> PatchStrategy {
            match self.0 {
                "containers" => PatchStrategy::Merge { key: Some("name") },
                "ports" => PatchStrategy::Merge {
                    key: Some("containerPort"),
                },
                _ => PatchStrategy::Default,
            }
        }
        fn list_type(&self) -> ListType {
            match self.0 {
                "containers" => ListType::Map(&["name"]),
                _ => ListType::Atomic,
            }
        }
        fn map_atomic(&self) -> bool {
            self.0 == "nodeSelector"
        }
    }

    #[test]
    fn walk_annotates_properties_through_references_and_lists() {
        let mut generator = kinds::generator();
        kinds::find("", "v1", "Pod").expect("pod").add_to(&mut generator);
        let mut defs = kinds::take_definitions(&mut generator);
        let n = annotate_definition(
            &mut defs,
            "io.k8s.api.core.v1.Pod",
            &Fake("pod"),
            &mut HashSet::new(),
        );
        assert!(n > 3);
        let spec = &defs["io.k8s.api.core.v1.PodSpec"]["properties"];
        assert_eq!(spec["containers"]["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(spec["containers"]["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(spec["containers"]["x-kubernetes-list-type"], "map");
        assert_eq!(
            spec["containers"]["x-kubernetes-list-map-keys"],
            serde_json::json!(["name"])
        );
        assert_eq!(spec["nodeSelector"]["x-kubernetes-map-type"], "atomic");
        let ports = &defs["io.k8s.api.core.v1.Container"]["properties"]["ports"];
        assert_eq!(ports["x-kubernetes-patch-merge-key"], "containerPort");
        assert_eq!(ports["x-kubernetes-list-type"], "atomic");
    }

    #[test]
    fn strategies_map_to_upstream_strings() {
        assert_eq!(strategy_strings(PatchStrategy::Default), (None, None));
        assert_eq!(
            strategy_strings(PatchStrategy::Merge { key: Some("name") }),
            (Some("merge"), Some("name"))
        );
        assert_eq!(
            strategy_strings(PatchStrategy::MergeRetainKeys { key: "name" }),
            (Some("merge,retainKeys"), Some("name"))
        );
        assert_eq!(
            strategy_strings(PatchStrategy::RetainKeys),
            (Some("retainKeys"), None)
        );
    }

    #[test]
    fn list_map_keys_are_written() {
        let mut obj = Map::new();
        insert_list_type(&mut obj, ListType::Map(&["containerPort", "protocol"]));
        assert_eq!(obj["x-kubernetes-list-type"], "map");
        assert_eq!(
            obj["x-kubernetes-list-map-keys"],
            serde_json::json!(["containerPort", "protocol"])
        );
    }
}
