//! Pruning: removing the fields a structural schema does not specify
//! (upstream `apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go`).
//!
//! A field survives when its object's schema lists it in `properties`, when
//! the object has `additionalProperties`, or under
//! `x-kubernetes-preserve-unknown-fields: true` (where its known properties
//! are still pruned by their own schemas, as upstream's `skipPrune`). The
//! root keeps `apiVersion`, `kind` and `metadata` whatever its schema says;
//! an `x-kubernetes-embedded-resource` keeps its `apiVersion` and `kind`,
//! and its `metadata` is cut to ObjectMeta's fields (upstream does that in
//! `objectmeta.Coerce`). The root's own `metadata` is left to the write path.
//!
//! The removed fields are returned as miniplane's unknown-field warnings
//! name them ([`crate::schema::unknown_fields`]): `spec.foo`,
//! `spec.items[0].bar`.

use serde_json::{Map, Value};

use super::node::{Additional, Node};
use super::path::{Path, Seg};

/// The fields of `metav1.ObjectMeta`.
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Prunes the whole object `x` (the resource root) against `root`, then
/// drops the nulls the schema neither allows nor defaults.
pub fn prune_root(root: &Node, x: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    prune(Some(root), x, &mut Path::default(), true, &mut out);
    drop_nulls(root, x);
    out
}

/// Removes null fields whose schema is not `nullable` and has no `default`
/// (upstream `defaulting/prunenulls.go`, `PruneNonNullableNullsWithoutDefaults`,
/// which the decoder runs after pruning). Not reported: upstream does not
/// warn of them.
fn drop_nulls(node: &Node, x: &mut Value) {
    match x {
        Value::Object(obj) => {
            let droppable = |n: &Node, v: &Value| v.is_null() && n.default.is_none() && !n.nullable;
            obj.retain(|k, v| {
                match node
                    .properties
                    .get(k)
                    .map(|p| &**p)
                    .or(node.additional_schema().map(|a| &**a))
                {
                    Some(n) => !droppable(n, v),
                    None => true,
                }
            });
            for (k, v) in obj.iter_mut() {
                if let Some(n) = node.properties.get(k).or(node.additional_schema()) {
                    drop_nulls(n, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &node.items {
                items.iter_mut().for_each(|item| drop_nulls(item_schema, item));
            }
        }
        _ => {}
    }
}

/// Prunes a value that is not a resource root (a `default`).
pub fn prune_value(node: &Node, x: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    prune(Some(node), x, &mut Path::default(), false, &mut out);
    out
}

fn prune(node: Option<&Node>, x: &mut Value, path: &mut Path, is_root: bool, out: &mut Vec<String>) {
    if let Some(n) = node
        && n.preserve_unknown
    {
        return skip_prune(n, x, path, is_root, out);
    }
    match x {
        Value::Object(obj) => {
            let Some(n) = node else {
                record_all(obj, path, out);
                obj.clear();
                return;
            };
            prune_object(n, obj, path, is_root, out);
        }
        Value::Array(items) => {
            let item_schema = node.and_then(|n| n.items.as_deref());
            for (i, item) in items.iter_mut().enumerate() {
                path.with(Seg::Index(i), |p| prune(item_schema, item, p, false, out));
            }
        }
        _ => {}
    }
}

fn record_all(obj: &Map<String, Value>, path: &mut Path, out: &mut Vec<String>) {
    for k in obj.keys() {
        path.with(Seg::Field(k.clone()), |p| out.push(p.warning()));
    }
}

/// Whether `key` of an object is kept outside of its schema: the root's and
/// an embedded resource's type and object metadata.
/// (Upstream prunes the root as an embedded resource; the schema of these
/// fields, if any, is not consulted.)
fn kept_meta(n: &Node, key: &str, v: &Value, is_root: bool) -> bool {
    match key {
        "apiVersion" | "kind" => is_root || (n.embedded && v.is_string()),
        "metadata" => is_root || (n.embedded && v.is_object()),
        _ => false,
    }
}

fn prune_object(
    n: &Node,
    obj: &mut Map<String, Value>,
    path: &mut Path,
    is_root: bool,
    out: &mut Vec<String>,
) {
    let mut removed = Vec::new();
    for (k, v) in obj.iter_mut() {
        if kept_meta(n, k, v, is_root) {
            if k == "metadata" && n.embedded && !is_root {
                path.with(Seg::Field(k.clone()), |p| coerce_meta(v, p, out));
            }
            continue;
        }
        if let Some(prop) = n.properties.get(k) {
            path.with(Seg::Field(k.clone()), |p| prune(Some(prop), v, p, false, out));
        } else if let Some(additional) = &n.additional {
            if let Additional::Schema(values) = additional {
                path.with(Seg::Key(k.clone()), |p| prune(Some(values), v, p, false, out));
            }
        } else {
            path.with(Seg::Field(k.clone()), |p| out.push(p.warning()));
            removed.push(k.clone());
        }
    }
    for k in removed {
        obj.remove(&k);
    }
}

/// An embedded resource's metadata, cut to ObjectMeta's fields.
fn coerce_meta(v: &mut Value, path: &mut Path, out: &mut Vec<String>) {
    let Value::Object(meta) = v else { return };
    let unknown: Vec<String> = meta
        .keys()
        .filter(|k| !OBJECT_META.contains(&k.as_str()))
        .cloned()
        .collect();
    for k in unknown {
        path.with(Seg::Field(k.clone()), |p| out.push(p.warning()));
        meta.remove(&k);
    }
}

/// Under `x-kubernetes-preserve-unknown-fields`: unknown fields stay, the
/// specified ones are pruned by their schemas.
fn skip_prune(n: &Node, x: &mut Value, path: &mut Path, is_root: bool, out: &mut Vec<String>) {
    match x {
        Value::Object(obj) => {
            for (k, v) in obj.iter_mut() {
                if is_root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if n.embedded && k == "metadata" && v.is_object() {
                    path.with(Seg::Field(k.clone()), |p| coerce_meta(v, p, out));
                } else if let Some(prop) = n.properties.get(k) {
                    path.with(Seg::Field(k.clone()), |p| prune(Some(prop), v, p, false, out));
                } else if let Some(values) = n.additional_schema() {
                    path.with(Seg::Key(k.clone()), |p| prune(Some(values), v, p, false, out));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &n.items {
                for (i, item) in items.iter_mut().enumerate() {
                    path.with(Seg::Index(i), |p| prune(Some(item_schema), item, p, false, out));
                }
            }
        }
        _ => {}
    }
}
