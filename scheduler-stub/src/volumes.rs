//! The VolumeBinding plugin's PreFilter, in miniature: may a pod that uses
//! PersistentVolumeClaims be placed at all, and which of its claims wait
//! for it (WaitForFirstConsumer) and must learn the chosen node.
//!
//! Upstream: `pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`
//! (`PreFilter`, the statuses `persistentvolumeclaim "x" not found` and
//! `pod has unbound immediate PersistentVolumeClaims`) and
//! `binder.go` (`GetPodVolumeClaims`, `AssumePodVolumes`: the
//! `volume.kubernetes.io/selected-node` annotation).
//!
//! ```text
//! claim missing            → rejected: persistentvolumeclaim "x" not found
//! claim being deleted      → rejected: persistentvolumeclaim "x" is being deleted
//! claim bound              → fine
//! claim unbound, class WaitForFirstConsumer → fine; annotate it at bind time
//! claim unbound otherwise  → rejected: pod has unbound immediate PersistentVolumeClaims
//! ```
//!
//! Simplified: the per-node Filter (a bound volume's node affinity, a
//! pre-existing volume that fits on the node, storage capacity) is not
//! modelled; the pod is bound right after the claims are annotated rather
//! than after the volumes are bound (PreBind); generic ephemeral volumes
//! are ignored.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;

/// The annotation the scheduler sets on a WaitForFirstConsumer claim.
pub const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// Upstream's status for an unbound claim of an Immediate class.
pub const UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";

/// The outcome of the PreFilter.
#[derive(Clone, Debug, PartialEq)]
pub enum VolumeCheck {
    /// The pod may be placed; these claims (names) wait for it and get the
    /// node in their selected-node annotation.
    Fits {
        /// Unbound WaitForFirstConsumer claims without a selected node yet.
        to_annotate: Vec<String>,
    },
    /// The pod cannot be placed anywhere: upstream's status message.
    Rejected(String),
}

/// The names of the claims the pod's volumes use.
pub fn claim_names(pod: &Pod) -> Vec<String> {
    let volumes = pod.spec.as_ref().and_then(|s| s.volumes.as_ref());
    volumes
        .into_iter()
        .flatten()
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.clone())
        .collect()
}

/// Upstream `PreFilter`: `claim(name)` and `class(name)` look the claim (in
/// the pod's namespace) and the class up.
pub fn check_claims<C, S>(pod: &Pod, claim: C, class: S) -> VolumeCheck
where
    C: Fn(&str) -> Option<PersistentVolumeClaim>,
    S: Fn(&str) -> Option<StorageClass>,
{
    let mut to_annotate = Vec::new();
    let mut unbound_immediate = false;
    for name in claim_names(pod) {
        let Some(c) = claim(&name) else {
            return VolumeCheck::Rejected(format!("persistentvolumeclaim \"{name}\" not found"));
        };
        if c.metadata.deletion_timestamp.is_some() {
            return VolumeCheck::Rejected(format!("persistentvolumeclaim \"{name}\" is being deleted"));
        }
        let spec = c.spec.as_ref();
        if spec
            .and_then(|s| s.volume_name.as_deref())
            .is_some_and(|v| !v.is_empty())
        {
            continue;
        }
        let class_name = spec
            .and_then(|s| s.storage_class_name.clone())
            .unwrap_or_default();
        let delayed = !class_name.is_empty()
            && class(&class_name)
                .is_some_and(|sc| sc.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer"));
        if !delayed {
            unbound_immediate = true;
            continue;
        }
        let selected = c
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(ANN_SELECTED_NODE));
        if !selected {
            to_annotate.push(name);
        }
    }
    if unbound_immediate {
        return VolumeCheck::Rejected(UNBOUND_IMMEDIATE.to_string());
    }
    VolumeCheck::Fits { to_annotate }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(claims: &[&str]) -> Pod {
        let volumes: Vec<_> = claims
            .iter()
            .map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}}))
            .collect();
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [], "volumes": volumes}}))
        .unwrap()
    }

    fn claim(name: &str, class: &str, volume: &str, selected: bool) -> PersistentVolumeClaim {
        let ann = if selected {
            json!({ANN_SELECTED_NODE: "n1"})
        } else {
            json!({})
        };
        serde_json::from_value(json!({"metadata": {"name": name, "annotations": ann},
            "spec": {"storageClassName": class, "volumeName": volume}}))
        .unwrap()
    }

    fn class(name: &str) -> Option<StorageClass> {
        let mode = if name == "wffc" {
            "WaitForFirstConsumer"
        } else {
            "Immediate"
        };
        Some(
            serde_json::from_value(
                json!({"metadata": {"name": name}, "provisioner": "p", "volumeBindingMode": mode}),
            )
            .unwrap(),
        )
    }

    fn lookup(claims: Vec<PersistentVolumeClaim>) -> impl Fn(&str) -> Option<PersistentVolumeClaim> {
        move |n| {
            claims
                .iter()
                .find(|c| c.metadata.name.as_deref() == Some(n))
                .cloned()
        }
    }

    #[test]
    fn missing_and_unbound_immediate_claims_reject() {
        assert_eq!(
            check_claims(&pod(&["data"]), lookup(vec![]), class),
            VolumeCheck::Rejected("persistentvolumeclaim \"data\" not found".into())
        );
        let c = lookup(vec![claim("data", "fast", "", false)]);
        assert_eq!(
            check_claims(&pod(&["data"]), c, class),
            VolumeCheck::Rejected(UNBOUND_IMMEDIATE.into())
        );
    }

    #[test]
    fn bound_and_waiting_claims_fit() {
        let c = lookup(vec![
            claim("bound", "fast", "pv-1", false),
            claim("waits", "wffc", "", false),
            claim("chosen", "wffc", "", true),
        ]);
        assert_eq!(
            check_claims(&pod(&["bound", "waits", "chosen"]), c, class),
            VolumeCheck::Fits {
                to_annotate: vec!["waits".into()]
            }
        );
        assert_eq!(
            check_claims(&pod(&[]), lookup(vec![]), class),
            VolumeCheck::Fits { to_annotate: vec![] }
        );
    }
}
