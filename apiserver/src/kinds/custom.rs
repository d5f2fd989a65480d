//! The strategy of custom resources: what a registry row with
//! [`ResourceInfo::custom`] gets instead of a built-in kind's strategy.
//!
//! Upstream: `staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/strategy.go`
//! (`PrepareForCreate`, `PrepareForUpdate`, `Validate`, `ValidateUpdate`)
//! and `status_strategy.go`; the schema's work (pruning, defaulting,
//! validation) is [`crate::crd::schema::Structural`]'s.
//!
//! - create: `status` dropped when the status subresource is on;
//!   generation 1;
//! - update: with the status subresource, `status` comes from the stored
//!   object and a change outside `metadata` and `status` bumps the
//!   generation; without it, `status` is an ordinary field and any change
//!   outside `metadata` bumps it;
//! - `/status`: everything but `status` (and managedFields) is the stored
//!   object's;
//! - validation: ObjectMeta (a DNS subdomain name, checked by the caller),
//!   then the schema of the version.

use serde_json::Value;

use super::{remove, sem_eq};
use crate::crd::CustomVersion;
use crate::error::FieldError;
use crate::jsonpath::at;
use crate::registry::{ResourceInfo, Subresource};

/// Fills the schema's defaults into a custom resource.
pub fn default_object(custom: &CustomVersion, obj: &mut Value) {
    if let Some(schema) = &custom.structural {
        schema.apply_defaults(obj);
    }
}

/// Whether an update changes what the generation counts.
pub fn generation_changes(info: &ResourceInfo, new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        remove(&mut v, "metadata");
        if info.has(Subresource::Status) {
            remove(&mut v, "status");
        }
        v
    };
    !sem_eq(Some(&strip(new)), Some(&strip(old)))
}

/// `/status` of a custom resource: the stored object with the new status
/// and the new managedFields.
pub fn prepare_status_update(new: &mut Value, old: &Value) {
    let status = new.get("status").cloned();
    let managed = at(new, &["metadata", "managedFields"]).cloned();
    let resource_version = at(new, &["metadata", "resourceVersion"]).cloned();
    *new = old.clone();
    match status {
        Some(s) => super::set(new, "status", s),
        None => remove(new, "status"),
    }
    let meta = crate::api::obj::meta_mut(new);
    for (key, value) in [("managedFields", managed), ("resourceVersion", resource_version)] {
        match value {
            Some(v) => meta.insert(key.into(), v),
            None => meta.remove(key),
        };
    }
}

/// The schema's errors for a new object or an update.
pub fn validate(custom: &CustomVersion, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    match &custom.structural {
        Some(schema) => schema.validate(new, old),
        None => Vec::new(),
    }
}
