//! NamespaceLifecycle: nothing is created in a namespace that does not exist
//! or is being terminated, and the namespaces a cluster cannot work without
//! are never deleted.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go`
//! (`Lifecycle.Admit`). The decisions, in upstream's order:
//!
//! ```text
//! DELETE of namespace default, kube-system or kube-public → 403 "this namespace may not be deleted"
//! cluster-scoped resource, or a Namespace itself          → allowed
//! DELETE of anything else                                 → allowed
//! localsubjectaccessreviews                               → allowed (no leaking which namespaces exist)
//! namespace missing                                       → 404 namespaces "x" not found
//! CREATE while the namespace's phase is Terminating       → 403 with cause NamespaceTerminating
//! ```
//!
//! Simplified: upstream reads a namespace informer's cache and falls back to
//! a live read (after waiting 50 ms for a namespace just created, and for 30 s
//! after a namespace delete); here the store is read directly, so there is no
//! stale cache to wait for.

use serde_json::{Value, json};

use super::{Attributes, Operation};
use crate::Api;
use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceInfo;

/// The namespaces that may not be deleted (upstream registers the plugin
/// with `default`, `kube-system` and `kube-public`).
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// The status cause type of a create refused in a terminating namespace
/// (upstream `v1.NamespaceTerminatingCause`).
pub const NAMESPACE_TERMINATING_CAUSE: &str = "NamespaceTerminating";

/// Upstream `Lifecycle.Admit`.
pub fn admit(api: &Api, a: &Attributes<'_>) -> ApiResult<()> {
    let is_namespace = is_namespace(a.info);
    if a.operation == Operation::Delete && is_namespace && IMMORTAL_NAMESPACES.contains(&a.name) {
        return Err(ApiError::forbidden(
            "",
            &a.info.plural,
            a.name,
            "this namespace may not be deleted",
        ));
    }
    let Some(ns) = a.namespace.filter(|ns| !ns.is_empty() && a.info.namespaced) else {
        return Ok(());
    };
    if is_namespace || a.operation == Operation::Delete || is_access_review(a.info) {
        return Ok(());
    }
    let namespaces = api.resource("", "v1", "namespaces")?;
    let namespace = api.get(&namespaces, None, ns)?;
    if a.operation == Operation::Create && phase(&namespace) == Some("Terminating") {
        return Err(terminating(a, ns));
    }
    Ok(())
}

/// The 403 of a create in a terminating namespace, with upstream's extra cause.
fn terminating(a: &Attributes<'_>, ns: &str) -> ApiError {
    let why = format!("unable to create new content in namespace {ns} because it is being terminated");
    let mut error = ApiError::forbidden(&a.info.group, &a.info.plural, a.resource_name(), &why);
    if let Some(details) = error.details.as_mut() {
        details["causes"] = json!([{
            "reason": NAMESPACE_TERMINATING_CAUSE,
            "message": format!("namespace {ns} is being terminated"),
            "field": "metadata.namespace",
        }]);
    }
    error
}

/// `status.phase` of a namespace.
fn phase(namespace: &Value) -> Option<&str> {
    namespace.pointer("/status/phase").and_then(Value::as_str)
}

fn is_namespace(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.kind == "Namespace"
}

/// Upstream `isAccessReview`: a review answers about permissions in a
/// namespace, so it must not reveal whether that namespace exists.
fn is_access_review(info: &ResourceInfo) -> bool {
    info.group == "authorization.k8s.io" && info.plural == "localsubjectaccessreviews"
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::api::{DeleteOptions, WriteOptions};
    use crate::error::Reason;
    use crate::testkit::TestApi;

    fn config_map(name: &str, finalizers: &[&str]) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "finalizers": finalizers}})
    }

    #[tokio::test]
    async fn a_create_in_a_missing_namespace_is_not_found() {
        let api = TestApi::builder().build().await;
        let cms = api.resource("", "v1", "configmaps").unwrap();
        let err = api
            .create(
                &cms,
                Some("nowhere"),
                config_map("c", &[]),
                &WriteOptions::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.reason, Reason::NotFound);
        assert_eq!(err.message, "namespaces \"nowhere\" not found");
    }

    #[tokio::test]
    async fn a_create_in_a_terminating_namespace_is_forbidden_with_the_cause() {
        let api = TestApi::builder().build().await;
        let (nss, cms) = (
            api.resource("", "v1", "namespaces").unwrap(),
            api.resource("", "v1", "configmaps").unwrap(),
        );
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "going"}});
        let opts = WriteOptions::default();
        api.create(&nss, None, ns, &opts).await.unwrap();
        // A finalizer keeps the namespace Terminating while the test looks.
        let held = config_map("held", &["example.com/hold"]);
        api.create(&cms, Some("going"), held, &opts).await.unwrap();
        api.delete(&nss, None, "going", &DeleteOptions::default())
            .await
            .unwrap();

        let err = api
            .create(&cms, Some("going"), config_map("late", &[]), &opts)
            .await
            .unwrap_err();
        assert_eq!(err.reason, Reason::Forbidden);
        assert_eq!(
            err.message,
            "configmaps \"late\" is forbidden: unable to create new content in namespace going because it is being terminated"
        );
        let status = err.to_status();
        assert_eq!(
            status["details"]["causes"][0],
            json!({"reason": "NamespaceTerminating", "message": "namespace going is being terminated",
                   "field": "metadata.namespace"})
        );
        // generateName names the error when there is no name yet, as upstream.
        let generated =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}});
        let err = api
            .create(&cms, Some("going"), generated, &opts)
            .await
            .unwrap_err();
        assert!(
            err.message.starts_with("configmaps \"gen-\" is forbidden"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn the_immortal_namespaces_may_not_be_deleted() {
        let api = TestApi::builder().build().await;
        let nss = api.resource("", "v1", "namespaces").unwrap();
        for name in super::IMMORTAL_NAMESPACES {
            let err = api
                .delete(&nss, None, name, &DeleteOptions::default())
                .await
                .unwrap_err();
            assert_eq!(
                (err.reason, err.message),
                (
                    Reason::Forbidden,
                    format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
                )
            );
        }
        // kube-node-lease is not immortal.
        api.delete(&nss, None, "kube-node-lease", &DeleteOptions::default())
            .await
            .unwrap();
    }
}
