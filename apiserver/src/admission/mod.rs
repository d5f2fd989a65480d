//! Admission: the checks a write passes after it was decoded and before it
//! is stored, one module per upstream admission plugin.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/admission` (`Attributes`,
//! `Interface`) and the plugins of `plugin/pkg/admission/` and
//! `staging/src/k8s.io/apiserver/pkg/admission/plugin/`. Upstream runs a
//! chain of mutating plugins, then a chain of validating ones; the write path
//! ([`crate::api`]) calls, in that order, [`admit`] (NamespaceLifecycle, on
//! every create and delete), [`mutate`] (the mutating chain, on the decoded
//! body) and, after the object's own validation, [`validate`] (the
//! validating chain, ResourceQuota last).
//!
//! | plugin | module | upstream |
//! | --- | --- | --- |
//! | NamespaceLifecycle | [`namespace_lifecycle`] | `apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go` |
//! | DefaultStorageClass | [`default_storage_class`] | `plugin/pkg/admission/storage/storageclass/setdefault/admission.go` |
//! | Priority | [`priority`] | `plugin/pkg/admission/priority/admission.go` |
//! | LimitRanger | [`limit_ranger`] | `plugin/pkg/admission/limitranger/admission.go` |
//! | ResourceQuota (validating, last) | [`resource_quota`], usage in [`quota_evaluator`] | `apiserver/pkg/admission/plugin/resourcequota/controller.go` |
//!
//! Simplified: no plugin configuration, no webhooks; a plugin reads the
//! store through [`Api`] directly instead of an informer's lister.

pub mod default_storage_class;
pub mod limit_ranger;
pub mod namespace_lifecycle;
pub mod priority;
pub mod quota_evaluator;
pub mod resource_quota;

use serde_json::Value;

use crate::Api;
use crate::error::ApiResult;
use crate::registry::ResourceInfo;

/// What a request does (upstream `admission.Operation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// POST, or a server-side apply that creates.
    Create,
    /// PUT or PATCH of an existing object.
    Update,
    /// DELETE.
    Delete,
}

/// The request as the plugins see it (upstream `admission.Attributes`).
#[derive(Clone, Copy, Debug)]
pub struct Attributes<'a> {
    /// What the request does.
    pub operation: Operation,
    /// The resource it is about.
    pub info: &'a ResourceInfo,
    /// The namespace of the URL (`None` for cluster-scoped resources).
    pub namespace: Option<&'a str>,
    /// The name in the URL; empty on a create, where the object names itself.
    pub name: &'a str,
    /// The object being written (create, update); `None` for a delete.
    pub object: Option<&'a Value>,
}

impl Attributes<'_> {
    /// The name an admission error names (upstream `extractResourceName`):
    /// the URL's, else the object's `name`, else its `generateName`, else
    /// `Unknown`.
    pub fn resource_name(&self) -> &str {
        if !self.name.is_empty() {
            return self.name;
        }
        let meta = |field: &str| {
            self.object
                .and_then(|o| o.pointer(&format!("/metadata/{field}")))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        meta("name").or_else(|| meta("generateName")).unwrap_or("Unknown")
    }
}

/// Runs every admission plugin on a request, in upstream's order; the first
/// refusal is the answer.
pub fn admit(api: &Api, a: &Attributes<'_>) -> ApiResult<()> {
    namespace_lifecycle::admit(api, a)
}

/// The mutating plugins, in upstream's order (LimitRanger, Priority,
/// DefaultStorageClass): each may change `object` or refuse it. Called on
/// the decoded body of a create (and of an update, which only Priority
/// reads), before the strategy and validation.
pub fn mutate(api: &Api, operation: Operation, info: &ResourceInfo, object: &mut Value) -> ApiResult<()> {
    limit_ranger::admit(api, operation, info, object)?;
    priority::admit(api, operation, info, object)?;
    default_storage_class::admit(api, operation, info, object)
}

/// The validating plugins that run after the object passed its own
/// validation, just before it is stored (upstream's validating chain, whose
/// last plugin is ResourceQuota): a create is charged to the namespace's
/// quotas here, or refused. Async: charging writes the quotas' status.
pub async fn validate(api: &Api, a: &Attributes<'_>, dry_run: bool) -> ApiResult<()> {
    match (a.operation, a.object) {
        (Operation::Create, Some(object)) => resource_quota::admit(api, a.info, object, dry_run).await,
        _ => Ok(()),
    }
}
