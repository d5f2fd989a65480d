//! Objects and lists as `meta.k8s.io` PartialObjectMetadata: the metadata
//! only, for clients that ask with
//! `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
//! (client-go's metadata client and informers, controller-runtime's
//! metadata-only watches, kube-rs's `get_metadata` and `metadata_watcher`).
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go`
//! (`asPartialObjectMetadata`, `asPartialObjectMetadataList`). As upstream,
//! the single form of a list, or the list form of a single object, is 406.

use serde_json::{Value, json};

use crate::error::{ApiError, Reason};
use crate::registry::ResourceInfo;

/// The PartialObjectMetadata of `obj`: its whole `metadata`, nothing else.
pub fn partial(obj: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// The PartialObjectMetadataList of `items`; `metadata` is the list's own
/// (`resourceVersion`, `continue`, `remainingItemCount`).
pub fn partial_list(items: &[Value], metadata: Value, version: &str) -> Value {
    let items: Vec<Value> = items.iter().map(|o| partial(o, version)).collect();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "items": items,
    })
}

/// 406 for `as=PartialObjectMetadata` on a list.
pub fn list_is_not_an_object(info: &ResourceInfo) -> ApiError {
    ApiError::new(
        Reason::NotAcceptable,
        format!(
            "you requested PartialObjectMetadata, but the requested object is a list (*{}.{})",
            go_package(info),
            info.list_kind()
        ),
    )
}

/// 406 for `as=PartialObjectMetadataList` on a single object.
pub fn object_is_not_a_list(info: &ResourceInfo) -> ApiError {
    ApiError::new(
        Reason::NotAcceptable,
        format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list (*{}.{})",
            go_package(info),
            info.kind
        ),
    )
}

/// The Go package of upstream's internal type, as the messages print it
/// (`core.ConfigMap`, `apps.Deployment`; events.k8s.io Events are core Events).
fn go_package(info: &ResourceInfo) -> &str {
    match info.group.as_str() {
        "" | "events.k8s.io" => "core",
        g => g.split('.').next().unwrap_or(g),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn partial_keeps_the_whole_metadata_and_nothing_else() {
        let cm = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "labels": {"x": "1"}, "managedFields": [{"manager": "m"}]},
            "data": {"k": "v"}});
        let p = partial(&cm, "v1");
        assert_eq!(
            p,
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"name": "a", "labels": {"x": "1"}, "managedFields": [{"manager": "m"}]}})
        );
    }

    #[test]
    fn a_list_keeps_its_resource_version_and_continue_token() {
        let items = [json!({"metadata": {"name": "a"}, "spec": {}})];
        let l = partial_list(
            &items,
            json!({"resourceVersion": "7", "continue": "c"}),
            "v1beta1",
        );
        assert_eq!(l["kind"], "PartialObjectMetadataList");
        assert_eq!(l["apiVersion"], "meta.k8s.io/v1beta1");
        assert_eq!(l["metadata"], json!({"resourceVersion": "7", "continue": "c"}));
        assert_eq!(l["items"][0]["kind"], "PartialObjectMetadata");
        assert!(l["items"][0].get("spec").is_none());
        assert_eq!(partial_list(&[], json!({}), "v1")["items"], json!([]));
    }

    #[test]
    fn the_wrong_form_is_406_naming_upstreams_type() {
        let r = Registry::new();
        let deploy = r.get("apps", "v1", "deployments").unwrap();
        let e = list_is_not_an_object(&deploy);
        assert_eq!(e.reason, Reason::NotAcceptable);
        assert!(e.message.ends_with("(*apps.DeploymentList)"), "{}", e.message);
        let lease = r.get("coordination.k8s.io", "v1", "leases").unwrap();
        assert!(
            object_is_not_a_list(&lease)
                .message
                .ends_with("(*coordination.Lease)")
        );
    }
}
