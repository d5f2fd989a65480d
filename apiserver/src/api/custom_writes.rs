//! What the write path does differently for a custom resource (a registry
//! row with [`ResourceInfo::custom`]).
//!
//! Upstream: `apiextensions-apiserver/pkg/apiserver/customresource_handler.go`
//! (the unstructured codec prunes and defaults; strategic merge patch is not
//! offered; a deprecated version adds a warning; creates stop while the CRD
//! terminates) and `pkg/registry/customresource/etcd.go` (the scale
//! subresource read from and written to the declared JSON paths).
//!
//! Simplified: scale paths are dotted field paths (`.spec.replicas`), the
//! only form upstream's validation lets through in practice; no array
//! indexes.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceSubresourceScale;
use serde_json::{Map, Value};

use super::Api;
use crate::crd::CustomVersion;
use crate::error::{ApiError, ApiResult, Reason};
use crate::registry::ResourceInfo;

/// Prunes the fields the schema does not know; returns their paths for the
/// `fieldValidation` check (`spec.foo`). A version without a schema keeps
/// everything.
pub(crate) fn prune(custom: &CustomVersion, body: &mut Value) -> Vec<String> {
    match &custom.structural {
        Some(schema) => schema.prune(body),
        None => Vec::new(),
    }
}

/// The warning a deprecated version's requests carry: its own
/// `deprecationWarning`, or upstream's `<group>/<version> <Kind> is
/// deprecated; use <group>/<newest served version not deprecated> <Kind>`
/// (`getDeprecationWarning` of `customresource_handler.go`).
pub fn deprecation_warning(registry: &crate::Registry, info: &ResourceInfo) -> Option<String> {
    let version = &info.custom.as_ref()?.version;
    if version.deprecated != Some(true) {
        return None;
    }
    if let Some(text) = &version.deprecation_warning {
        return Some(text.clone());
    }
    let (group, kind) = (&info.group, &info.kind);
    let mut text = format!("{group}/{} {kind} is deprecated", info.version);
    // Discovery order puts a group's newest version first (kube-aware).
    let newest = registry.group_versions().into_iter().find_map(|(g, v)| {
        let row = registry.get(&g, &v, &info.plural).filter(|_| g == *group)?;
        let deprecated = row.custom.as_ref()?.version.deprecated == Some(true);
        (!deprecated).then_some(v)
    });
    if let Some(v) = newest {
        text.push_str(&format!("; use {group}/{v} {kind}"));
    }
    Some(text)
}

/// 415 for a strategic merge patch: custom resources have no patch strategy
/// (upstream answers the same, without strategic merge in the list).
pub(crate) fn strategic_merge_unsupported() -> ApiError {
    ApiError::new(
        Reason::UnsupportedMediaType,
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )
}

/// The field names of a JSON path like `.spec.replicas`.
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('.').filter(|s| !s.is_empty())
}

fn read_path<'a>(o: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path).try_fold(o, |cur, key| cur.get(key))
}

/// Sets the value at a JSON path, making the objects on the way.
pub(crate) fn set_path(o: &mut Value, path: &str, value: Value) {
    let keys: Vec<&str> = segments(path).collect();
    let Some((last, walk)) = keys.split_last() else {
        return;
    };
    let mut cur = o;
    for key in walk {
        if !cur.get(*key).is_some_and(Value::is_object) {
            cur[*key] = Value::Object(Map::new());
        }
        cur = &mut cur[*key];
    }
    if cur.is_object() {
        cur[*last] = value;
    }
}

/// `(spec replicas, status replicas, selector)` of a custom resource's
/// Scale: missing values are 0 and `""`, as upstream's `scaleFromCustomResource`.
pub(crate) fn scale_fields(scale: &CustomResourceSubresourceScale, o: &Value) -> (i64, i64, String) {
    let int = |p: &str| read_path(o, p).and_then(Value::as_i64).unwrap_or(0);
    let selector = scale
        .label_selector_path
        .as_deref()
        .and_then(|p| read_path(o, p))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    (
        int(&scale.spec_replicas_path),
        int(&scale.status_replicas_path),
        selector,
    )
}

impl Api {
    /// 405 for a create while the resource's CRD is being deleted (upstream
    /// `crdHandler.serveResource`).
    pub(crate) fn check_not_terminating(&self, info: &ResourceInfo) -> ApiResult<()> {
        let Some(custom) = &info.custom else {
            return Ok(());
        };
        // A poisoned lock still holds a whole set (it is only ever replaced).
        let terminating = self
            .inner
            .terminating_crds
            .read()
            .unwrap_or_else(|p| p.into_inner());
        match terminating.contains(&custom.crd) {
            true => Err(ApiError::new(
                Reason::MethodNotAllowed,
                "create not allowed while custom resource definition is terminating",
            )),
            false => Ok(()),
        }
    }

    /// Records which CRDs are being deleted (the CRD controller's passes).
    pub(crate) fn set_terminating_crds(&self, names: std::collections::BTreeSet<String>) {
        *self
            .inner
            .terminating_crds
            .write()
            .unwrap_or_else(|p| p.into_inner()) = names;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scale_paths_are_read_and_written() {
        let scale = CustomResourceSubresourceScale {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".status.selector".into()),
        };
        let mut o = json!({"spec": {"replicas": 3}, "status": {"selector": "app=web"}});
        assert_eq!(scale_fields(&scale, &o), (3, 0, "app=web".to_string()));
        set_path(&mut o, ".spec.size.wanted", json!(5));
        assert_eq!(o["spec"]["size"]["wanted"], 5);
    }
}
