//! Object identity helpers every controller shares: the cache key of an
//! object, its name, its controller reference, and the clock reading a sync
//! starts from.
//!
//! Upstream: client-go `tools/cache/store.go` (`MetaNamespaceKeyFunc`,
//! `SplitMetaNamespaceKey`) and apimachinery
//! `pkg/apis/meta/v1/controller_ref.go` (`GetControllerOf`,
//! `IsControlledBy`, `NewControllerRef`).
//!
//! Simplified: keys are plain `String`s (no `ObjectName` type); a missing
//! name reads as `""` instead of being an error; `NewControllerRef` takes the
//! owner's apiVersion and kind as strings instead of a `GroupVersionKind`.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use store::Clock;

use super::controller::ReconcileError;

/// `ns/name`, or `name` for a cluster-scoped object (no or empty namespace).
pub fn object_key(ns: Option<&str>, name: &str) -> String {
    match ns {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_string(),
    }
}

/// The cache and work-queue key of an object (client-go `MetaNamespaceKeyFunc`).
pub fn key_of(meta: &ObjectMeta) -> String {
    object_key(meta.namespace.as_deref(), name_of(meta))
}

/// Upstream `SplitMetaNamespaceKey`: `ns/name` → (`Some(ns)`, `name`), `name` →
/// (`None`, `name`); a key with more than one `/` is refused.
pub fn split_key(key: &str) -> Result<(Option<&str>, &str), ReconcileError> {
    match key.split_once('/') {
        None => Ok((None, key)),
        Some((_, name)) if name.contains('/') => Err(ReconcileError::terminal(format!(
            "unexpected key format: {key:?}"
        ))),
        Some((ns, name)) => Ok((Some(ns), name)),
    }
}

/// `metadata.name`, or `""`.
pub fn name_of(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

/// Upstream `metav1.GetControllerOf`: the ownerReference with `controller: true`, if any.
pub fn get_controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    let refs = meta.owner_references.as_ref()?;
    refs.iter().find(|r| r.controller == Some(true))
}

/// The uid of the object's controller, if it has one.
pub fn controller_uid(meta: &ObjectMeta) -> Option<&str> {
    get_controller_of(meta).map(|r| r.uid.as_str())
}

/// Upstream `metav1.IsControlledBy`: the object's controller reference points at `owner_uid`.
pub fn is_controlled_by(meta: &ObjectMeta, owner_uid: &str) -> bool {
    controller_uid(meta) == Some(owner_uid)
}

/// Upstream `metav1.NewControllerRef`: a reference with `controller` and `blockOwnerDeletion` set.
pub fn new_controller_ref(owner: &ObjectMeta, api_version: &str, kind: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: name_of(owner).to_owned(),
        uid: owner.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The clock's time as the timestamp a sync plans with, read once per sync. A time
/// `jiff` cannot represent is a retryable error (the clock may be fixed meanwhile),
/// never a silent fallback.
pub fn clock_now(clock: &Clock) -> Result<Timestamp, ReconcileError> {
    Timestamp::try_from(clock.now()).map_err(|e| ReconcileError::retryable(format!("clock: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_back_into_namespace_and_name() {
        assert_eq!(object_key(Some("default"), "web"), "default/web");
        assert_eq!(object_key(None, "node-1"), "node-1");
        assert_eq!(object_key(Some(""), "node-1"), "node-1");
        assert_eq!(split_key("default/web").unwrap(), (Some("default"), "web"));
        assert_eq!(split_key("node-1").unwrap(), (None, "node-1"));
        assert!(split_key("a/b/c").unwrap_err().is_terminal());
    }

    #[test]
    fn controller_of_ignores_non_controller_refs() {
        let plain = OwnerReference {
            uid: "u1".into(),
            ..Default::default()
        };
        let controller = OwnerReference {
            uid: "u2".into(),
            controller: Some(true),
            ..Default::default()
        };
        let mut meta = ObjectMeta {
            owner_references: Some(vec![plain]),
            ..Default::default()
        };
        assert_eq!(controller_uid(&meta), None);
        meta.owner_references.as_mut().unwrap().push(controller);
        assert_eq!(controller_uid(&meta), Some("u2"));
        assert!(is_controlled_by(&meta, "u2"));
        assert!(!is_controlled_by(&meta, "u1"));
    }
}
