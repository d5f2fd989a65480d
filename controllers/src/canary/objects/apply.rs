//! The writes: [`apply`] creates an object or brings the fields we own back
//! to what we built, and writes nothing when they already are; [`scale`]
//! sets a Deployment's replicas.
//!
//! Flagger's reconcilers each `Get`, `Create` when not found, and otherwise
//! compare the fields they own and `Update` when these differ; [`apply`] is
//! that, once, for every kind.
//!
//! Which fields are ours: `spec`'s top-level fields that we set (others,
//! such as a Service's `clusterIP`, stay as the server filled them), the
//! labels and annotations we set (others are kept), and the owner
//! references. "Unchanged" means every field we set has that value on the
//! server (server defaults inside them are not a change). When anything of
//! ours differs, every spec field we set is written whole (the server
//! defaults it again): a pod template that only lost a field still reaches
//! the primary, whose template-hash annotation changed with it.
//! Simplified: a spec field we stop setting (e.g. an HTTPRoute's
//! `hostnames` emptied) is left as it was, and so is a removal inside a
//! field when nothing else of ours changed.

use k8s_openapi::Resource;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::runtime::client::{json_name, json_namespace, to_value};
use crate::runtime::{Client, ClientError, PatchType, ResourceRef};

/// Creates `obj`; if it exists, updates the fields we own when they differ
/// (keeping the resourceVersion as precondition, retried once on a
/// conflict), and writes nothing when they do not.
pub async fn apply<K>(client: &dyn Client, obj: &K) -> Result<(), ClientError>
where
    K: Resource + Serialize,
{
    let r = ResourceRef::of::<K>();
    let mut desired = to_value(obj)?;
    if let Some(m) = desired.as_object_mut() {
        m.insert("apiVersion".into(), K::API_VERSION.into());
        m.insert("kind".into(), K::KIND.into());
        m.remove("status");
    }
    let name = json_name(&desired).to_string();
    let ns = json_namespace(&desired).map(str::to_string);
    match client.create(&r, ns.as_deref(), desired.clone()).await {
        Ok(_) => return Ok(()),
        Err(e) if e.is_already_exists() => {}
        Err(e) => return Err(e),
    }
    let mut attempts = 0;
    loop {
        attempts += 1;
        let existing = client.get(&r, ns.as_deref(), &name).await?;
        let Some(merged) = merge_owned(&existing, &desired) else {
            return Ok(());
        };
        match client.update(&r, ns.as_deref(), merged, None).await {
            Ok(_) => return Ok(()),
            Err(e) if e.is_conflict() && attempts < 2 => {}
            Err(e) => return Err(e),
        }
    }
}

/// `existing` with our fields of `desired` written over it; `None` when
/// nothing would change.
pub fn merge_owned(existing: &Value, desired: &Value) -> Option<Value> {
    let mut merged = existing.clone();
    let mut changed = false;
    for map in ["labels", "annotations"] {
        let Some(want) = desired
            .pointer(&format!("/metadata/{map}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let have = merged
            .pointer_mut("/metadata")
            .and_then(Value::as_object_mut)
            .map(|m| m.entry(map).or_insert_with(|| json!({})));
        let Some(have) = have else { continue };
        if !have.is_object() {
            *have = json!({});
        }
        if let Some(have) = have.as_object_mut() {
            for (k, v) in want {
                if have.get(k) != Some(v) {
                    have.insert(k.clone(), v.clone());
                    changed = true;
                }
            }
        }
    }
    if let Some(refs) = desired.pointer("/metadata/ownerReferences")
        && existing.pointer("/metadata/ownerReferences") != Some(refs)
        && let Some(meta) = merged.pointer_mut("/metadata").and_then(Value::as_object_mut)
    {
        meta.insert("ownerReferences".into(), refs.clone());
        changed = true;
    }
    let want_spec = desired.get("spec").and_then(Value::as_object);
    if let Some(want) = want_spec {
        let have = existing.get("spec");
        changed |= want
            .iter()
            .any(|(k, v)| !have.and_then(|h| h.get(k)).is_some_and(|h| contains(h, v)));
    }
    if !changed {
        return None;
    }
    // Something of ours differs (perhaps only the template-hash annotation,
    // when a template lost a field): every spec field we set is written
    // whole, and the server defaults it again.
    if let Some(want) = want_spec
        && let Some(m) = merged.as_object_mut()
    {
        let spec = m.entry("spec").or_insert_with(|| json!({}));
        if !spec.is_object() {
            *spec = Value::Object(Map::new());
        }
        if let Some(have) = spec.as_object_mut() {
            for (k, v) in want {
                have.insert(k.clone(), v.clone());
            }
        }
    }
    Some(merged)
}

/// Whether `have` holds everything `want` sets: equal scalars, every key of
/// an object (recursively), arrays of the same length element by element.
/// Fields the server added (defaults) do not count.
pub fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| h.get(k).is_some_and(|hv| contains(hv, wv)) || is_empty(wv) && h.get(k).is_none()),
        (Value::Array(h), Value::Array(w)) => {
            h.len() == w.len() && h.iter().zip(w).all(|(a, b)| contains(a, b))
        }
        (h, w) => h == w,
    }
}

/// `null`, `{}` or `[]`: what a server may drop.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Sets the replicas of Deployment `namespace/deployment` (a merge patch of
/// `spec.replicas`); nothing is written when they already are `replicas`.
pub async fn scale(
    client: &dyn Client,
    namespace: &str,
    deployment: &str,
    replicas: i32,
) -> Result<(), ClientError> {
    let r = ResourceRef::of::<k8s_openapi::api::apps::v1::Deployment>();
    let current = client.get(&r, Some(namespace), deployment).await?;
    if current.pointer("/spec/replicas").and_then(Value::as_i64) == Some(i64::from(replicas)) {
        return Ok(());
    }
    let patch = json!({"spec": {"replicas": replicas}});
    client
        .patch(&r, Some(namespace), deployment, PatchType::Merge, patch, None)
        .await
        .map(|_| ())
}
