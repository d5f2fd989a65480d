//! The controllers of a budget's pods and their scale, read from the informer caches.
//!
//! Upstream: `pkg/controller/disruption/disruption.go` (`finders`, `getPodReplicationController`,
//! `getPodDeployment`, `getPodReplicaSet`, `getPodStatefulSet`, `verifyGroupKind`,
//! `getExpectedScale`).
//!
//! Simplified: upstream's last finder asks the `scale` subresource of any other kind (a custom
//! resource with a scale); here a pod owned by anything but a ReplicationController, ReplicaSet,
//! Deployment or StatefulSet has "no controller".

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::plan::ExpectedScale;
use crate::runtime::{Store, get_controller_of};

/// The caches of every kind whose pods a budget may count.
pub struct Controllers {
    pub(super) replication_controllers: Store<ReplicationController>,
    pub(super) replicasets: Store<ReplicaSet>,
    pub(super) deployments: Store<Deployment>,
    pub(super) statefulsets: Store<StatefulSet>,
}

/// A controller's uid and `spec.replicas` (upstream `controllerAndScale`).
type Scale = (String, i32);

impl Controllers {
    /// Upstream `getExpectedScale`: Σ `spec.replicas` of the distinct controllers of `pods`,
    /// with the pods no controller owns; an error names a pod whose controller is unknown.
    pub fn expected_scale(&self, pods: &[Arc<Pod>]) -> Result<ExpectedScale, String> {
        let mut scales: BTreeMap<String, i32> = BTreeMap::new();
        let mut unmanaged = Vec::new();
        for pod in pods {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let Some(owner) = get_controller_of(&pod.metadata) else {
                unmanaged.push(name);
                continue;
            };
            if scales.contains_key(&owner.uid) {
                continue;
            }
            let ns = pod.metadata.namespace.as_deref();
            let Some((uid, scale)) = self.find(owner, ns) else {
                return Err(format!("found no controllers for pod \"{name}\""));
            };
            scales.insert(uid, scale);
        }
        Ok(ExpectedScale {
            count: scales.values().sum(),
            unmanaged,
        })
    }

    /// The finders, in upstream's order.
    fn find(&self, owner: &OwnerReference, ns: Option<&str>) -> Option<Scale> {
        self.replication_controller(owner, ns)
            .or_else(|| self.deployment(owner, ns))
            .or_else(|| self.replicaset(owner, ns))
            .or_else(|| self.statefulset(owner, ns))
    }

    fn replication_controller(&self, owner: &OwnerReference, ns: Option<&str>) -> Option<Scale> {
        verify_group_kind(owner, "ReplicationController", &[""]).then_some(())?;
        let rc = self.replication_controllers.get(ns, &owner.name)?;
        let replicas = rc.spec.as_ref().and_then(|s| s.replicas);
        same_uid(rc.metadata.uid.as_deref(), owner, replicas)
    }

    /// A ReplicaSet that no Deployment controls.
    fn replicaset(&self, owner: &OwnerReference, ns: Option<&str>) -> Option<Scale> {
        let rs = self.owning_replicaset(owner, ns)?;
        if get_controller_of(&rs.metadata).is_some_and(|r| r.kind == "Deployment") {
            return None;
        }
        same_uid(
            rs.metadata.uid.as_deref(),
            owner,
            rs.spec.as_ref().and_then(|s| s.replicas),
        )
    }

    /// The Deployment of the pod's ReplicaSet.
    fn deployment(&self, owner: &OwnerReference, ns: Option<&str>) -> Option<Scale> {
        let rs = self.owning_replicaset(owner, ns)?;
        let rs_owner = get_controller_of(&rs.metadata)?;
        verify_group_kind(rs_owner, "Deployment", &["apps", "extensions"]).then_some(())?;
        let d = self
            .deployments
            .get(rs.metadata.namespace.as_deref(), &rs_owner.name)?;
        same_uid(
            d.metadata.uid.as_deref(),
            rs_owner,
            d.spec.as_ref().and_then(|s| s.replicas),
        )
    }

    fn statefulset(&self, owner: &OwnerReference, ns: Option<&str>) -> Option<Scale> {
        verify_group_kind(owner, "StatefulSet", &["apps"]).then_some(())?;
        let ss = self.statefulsets.get(ns, &owner.name)?;
        same_uid(
            ss.metadata.uid.as_deref(),
            owner,
            ss.spec.as_ref().and_then(|s| s.replicas),
        )
    }

    /// The ReplicaSet `owner` names, if it is that very object.
    fn owning_replicaset(&self, owner: &OwnerReference, ns: Option<&str>) -> Option<Arc<ReplicaSet>> {
        verify_group_kind(owner, "ReplicaSet", &["apps", "extensions"]).then_some(())?;
        let rs = self.replicasets.get(ns, &owner.name)?;
        (rs.metadata.uid.as_deref() == Some(owner.uid.as_str())).then_some(rs)
    }
}

/// The scale of a found controller whose uid is the one the reference names
/// (`spec.replicas`, 1 when unset as the API server defaults it).
fn same_uid(uid: Option<&str>, owner: &OwnerReference, replicas: Option<i32>) -> Option<Scale> {
    (uid == Some(owner.uid.as_str())).then(|| (owner.uid.clone(), replicas.unwrap_or(1)))
}

/// Upstream `verifyGroupKind`: the reference is of `kind`, in one of `groups`.
pub fn verify_group_kind(owner: &OwnerReference, kind: &str, groups: &[&str]) -> bool {
    let group = match owner.api_version.split_once('/') {
        Some((group, _)) => group,
        None => "",
    };
    owner.kind == kind && groups.contains(&group)
}
