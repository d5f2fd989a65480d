//! The registry rows of a CustomResourceDefinition: one per served
//! version, with the accepted names, the scope, the version's subresources
//! and its compiled schema.
//!
//! Upstream: `apiextensions-apiserver/pkg/apiserver/customresource_handler.go`
//! (`getOrCreateServingInfoFor`: one storage and one set of strategies per
//! served version, names from `status.acceptedNames`) and
//! `customresource_discovery_controller.go`.

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion;
use serde_json::Value;

use super::CustomVersion;
use super::schema::Structural;
use crate::jsonpath::at;
use crate::kinds::apiextensions::{condition_true, storage_version};
use crate::registry::{ResourceInfo, Subresource};

/// The rows a CRD serves: none until it is Established, then one per
/// served version.
pub fn rows(crd: &Value) -> Vec<ResourceInfo> {
    if !condition_true(crd, "Established") {
        return Vec::new();
    }
    let Some(storage) = storage_version(crd) else {
        return Vec::new();
    };
    let versions = at(crd, &["spec", "versions"]).and_then(Value::as_array);
    versions
        .into_iter()
        .flatten()
        .filter(|v| v.get("served").and_then(Value::as_bool) == Some(true))
        .filter_map(|v| row(crd, v, &storage))
        .collect()
}

fn text(v: &Value, path: &[&str]) -> String {
    at(v, path).and_then(Value::as_str).unwrap_or("").to_string()
}

fn texts(v: &Value, path: &[&str]) -> Vec<String> {
    at(v, path)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// One served version's row; `None` when the version does not decode
/// (validation keeps such versions out of the store).
fn row(crd: &Value, version: &Value, storage: &str) -> Option<ResourceInfo> {
    let typed: CustomResourceDefinitionVersion = serde_json::from_value(version.clone()).ok()?;
    let structural = at(version, &["schema", "openAPIV3Schema"])
        .and_then(|raw| Structural::compile(raw, "openAPIV3Schema").ok())
        .map(Arc::new);
    let mut subresources = Vec::new();
    if let Some(s) = &typed.subresources {
        if s.status.is_some() {
            subresources.push(Subresource::Status);
        }
        if s.scale.is_some() {
            subresources.push(Subresource::Scale);
        }
    }
    let accepted = |f: &str| text(crd, &["status", "acceptedNames", f]);
    let plural = accepted("plural");
    Some(ResourceInfo {
        group: text(crd, &["spec", "group"]),
        version: typed.name.clone(),
        kind: accepted("kind"),
        singular: accepted("singular"),
        namespaced: text(crd, &["spec", "scope"]) == "Namespaced",
        short_names: texts(crd, &["status", "acceptedNames", "shortNames"]),
        categories: texts(crd, &["status", "acceptedNames", "categories"]),
        subresources,
        has_generation: true,
        storage_name: plural.clone(),
        plural,
        create_only: false,
        storage_version: storage.to_string(),
        custom: Some(Arc::new(CustomVersion {
            crd: text(crd, &["metadata", "name"]),
            version: typed,
            structural,
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(established: bool) -> Value {
        let status = if established { "True" } else { "False" };
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [
                        {"name": "v1", "served": true, "storage": true,
                         "schema": {"openAPIV3Schema": {"type": "object"}},
                         "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                                  "statusReplicasPath": ".status.replicas"}}},
                        {"name": "v1beta1", "served": true, "storage": false,
                         "schema": {"openAPIV3Schema": {"type": "object"}}},
                        {"name": "v1alpha1", "served": false, "storage": false,
                         "schema": {"openAPIV3Schema": {"type": "object"}}}]},
            "status": {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                         "listKind": "WidgetList", "shortNames": ["wd"], "categories": ["all"]},
                       "conditions": [{"type": "Established", "status": status}]},
        })
    }

    #[test]
    fn one_row_per_served_version_once_established() {
        assert!(rows(&crd(false)).is_empty());
        let rows = rows(&crd(true));
        let versions: Vec<&str> = rows.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(versions, ["v1", "v1beta1"]);
        let v1 = &rows[0];
        assert_eq!((v1.plural.as_str(), v1.kind.as_str()), ("widgets", "Widget"));
        assert!(v1.namespaced && v1.has_generation);
        assert_eq!(v1.subresources, [Subresource::Status, Subresource::Scale]);
        assert_eq!(v1.short_names, ["wd"]);
        assert_eq!(rows[1].storage_version, "v1");
        assert!(rows[1].subresources.is_empty());
        assert_eq!(v1.custom.as_ref().unwrap().crd, "widgets.example.com");
        assert!(v1.custom.as_ref().unwrap().structural.is_some());
    }
}
