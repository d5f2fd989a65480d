//! Version conversion: one stored object, served in several versions.
//!
//! Upstream keeps one *storage version* per resource and converts through
//! the internal type (`staging/src/k8s.io/apimachinery/pkg/runtime/scheme.go`,
//! `Convert`): a request body is decoded in the version of its URL and
//! converted to the storage version before it is written; whatever is read
//! (get, list, watch events, write responses) is converted to the version of
//! the request. Here objects are JSON, and [`convert`] goes straight from
//! one version to the other.
//!
//! [`convert`] dispatches on the resource: kinds with a conversion of their
//! own (autoscaling HorizontalPodAutoscaler v1 ⇄ v2, in [`autoscaling`]) get
//! it; every other kind — and later the custom resources whose definition
//! says `conversion: None` — only has its `apiVersion` rewritten.
//!
//! Which version is stored is the registry row's
//! [`storage_version`](crate::registry::ResourceInfo::storage_version); the
//! [`Api`](crate::api::Api) calls this module on its way in and out.

pub mod autoscaling;

use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceInfo;

/// Converts `obj` (any served version of the resource `info` describes) to
/// `to_version` of the same group. An object already in `to_version` is
/// returned unchanged.
pub fn convert(info: &ResourceInfo, mut obj: Value, to_version: &str) -> ApiResult<Value> {
    let to = api_version(&info.group, to_version);
    let from = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if from == to {
        return Ok(obj);
    }
    let from_version = from.rsplit('/').next().unwrap_or("").to_string();
    match (info.group.as_str(), info.kind.as_str()) {
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaling::convert(obj, &from_version, to_version)
            .map_err(|e| {
                ApiError::bad_request(format!(
                    "converting HorizontalPodAutoscaler from {from} to {to}: {e}"
                ))
            }),
        _ => {
            obj["apiVersion"] = Value::String(to);
            Ok(obj)
        }
    }
}

/// `group/version`, or `version` for the core group.
fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(group: &str, version: &str, kind: &str) -> ResourceInfo {
        let mut info = crate::registry::builtin().into_iter().next().unwrap();
        (info.group, info.version, info.kind) = (group.into(), version.into(), kind.into());
        info
    }

    #[test]
    fn kinds_without_a_conversion_only_change_api_version() {
        let info = row("example.com", "v1", "Widget");
        let obj = json!({"apiVersion": "example.com/v1beta1", "kind": "Widget", "spec": {"a": 1}});
        let out = convert(&info, obj, "v1").unwrap();
        assert_eq!(
            out,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"a": 1}})
        );
    }

    #[test]
    fn an_object_in_the_wanted_version_is_untouched() {
        let info = row("autoscaling", "v2", "HorizontalPodAutoscaler");
        let obj = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": {}});
        assert_eq!(convert(&info, obj.clone(), "v2").unwrap(), obj);
    }
}
