//! DefaultStorageClass: a claim created without a class gets the default
//! StorageClass.
//!
//! Upstream: `plugin/pkg/admission/storage/storageclass/setdefault/admission.go`
//! (`claimDefaulterPlugin.Admit`) and `pkg/volume/util/storageclass.go`
//! (`GetDefaultClass`: of the classes marked default, the newest wins; on a
//! tie, the name sorting first).
//!
//! ```text
//! not a PVC create           → unchanged
//! class set (field or beta annotation, even "") → unchanged
//! no default class           → unchanged (the PV controller may set it later)
//! else                       → spec.storageClassName = the default class
//! ```
//!
//! Simplified: the classes are read from the store, not an informer.

use serde_json::{Value, json};

use super::Operation;
use crate::Api;
use crate::api::ListOptions;
use crate::error::ApiResult;
use crate::jsonpath::{at, str_at};
use crate::kinds::storage::{BETA_STORAGE_CLASS, is_default_class};
use crate::registry::ResourceInfo;

/// Upstream `claimDefaulterPlugin.Admit`, on a claim about to be created.
pub fn admit(api: &Api, operation: Operation, info: &ResourceInfo, claim: &mut Value) -> ApiResult<()> {
    if operation != Operation::Create || !info.group.is_empty() || info.kind != "PersistentVolumeClaim" {
        return Ok(());
    }
    if has_class(claim) {
        return Ok(());
    }
    let classes = api.resource("storage.k8s.io", "v1", "storageclasses")?;
    let list = api.list(&classes, None, &ListOptions::default())?;
    if let Some(name) = default_class(&list.items)
        && let Some(spec) = claim.get_mut("spec").and_then(Value::as_object_mut)
    {
        spec.insert("storageClassName".into(), json!(name));
    }
    Ok(())
}

/// Upstream `PersistentVolumeClaimHasClass`: the field is set (to anything,
/// `""` included) or the beta annotation is present.
fn has_class(claim: &Value) -> bool {
    at(claim, &["spec", "storageClassName"]).is_some_and(|v| !v.is_null())
        || at(claim, &["metadata", "annotations", BETA_STORAGE_CLASS]).is_some()
}

/// Upstream `GetDefaultClass`: the newest default class, ties broken by name.
pub fn default_class(classes: &[Value]) -> Option<&str> {
    classes
        .iter()
        .filter(|c| is_default_class(c))
        .max_by(|a, b| {
            let created = |c: &Value| str_at(c, &["metadata", "creationTimestamp"]).to_string();
            let name = |c: &Value| str_at(c, &["metadata", "name"]).to_string();
            created(a).cmp(&created(b)).then_with(|| name(b).cmp(&name(a)))
        })
        .map(|c| str_at(c, &["metadata", "name"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, created: &str, default: bool) -> Value {
        let ann = if default {
            json!({"storageclass.kubernetes.io/is-default-class": "true"})
        } else {
            json!({})
        };
        json!({"metadata": {"name": name, "creationTimestamp": created, "annotations": ann}})
    }

    #[test]
    fn newest_default_wins_ties_by_name() {
        let classes = [
            class("old", "2025-01-01T00:00:00Z", true),
            class("b-new", "2025-02-01T00:00:00Z", true),
            class("a-new", "2025-02-01T00:00:00Z", true),
            class("newest-but-not-default", "2025-03-01T00:00:00Z", false),
        ];
        assert_eq!(default_class(&classes), Some("a-new"));
        assert_eq!(default_class(&classes[3..]), None);
    }

    #[test]
    fn an_empty_class_is_a_class() {
        assert!(has_class(&json!({"spec": {"storageClassName": ""}})));
        assert!(!has_class(&json!({"spec": {}})));
        assert!(has_class(
            &json!({"metadata": {"annotations": {BETA_STORAGE_CLASS: "x"}}, "spec": {}})
        ));
    }
}
