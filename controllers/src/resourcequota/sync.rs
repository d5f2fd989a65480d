//! One ResourceQuota sync: count what the quota limits, write the status
//! when it changed.
//!
//! Upstream: `syncResourceQuotaFromKey` and `syncResourceQuota` of
//! `pkg/controller/resourcequota/resource_quota_controller.go`.
//!
//! ```text
//! sync_resource_quota(key)
//!   quota not in cache → Done
//!   objects            = for each resource its hard limits count: pods from the
//!                        pod cache, anything else listed through the API
//!   status             = plan_status(quota, objects); written only when it changed
//!   → RequeueAfter(RESYNC_PERIOD)
//! ```
//!
//! Simplified: objects other than pods are listed through the API on each
//! sync (upstream reads them from informers it starts per resource); a
//! conflicting status write is retried by the queue's backoff.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, ResourceQuota};

use super::plan::{self, Objects, Resource};
use crate::runtime::client::{Client, ListParams, ResourceRef, Typed, from_value, to_value};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{Action, ReconcileError, split_key};

/// How often every quota is recounted (upstream `--resource-quota-sync-period`, 5m).
pub const RESYNC_PERIOD: Duration = Duration::from_secs(300);

/// What one sync reads and writes.
pub struct ResourceQuotaSync {
    client: Arc<dyn Client>,
    quotas_api: Typed<ResourceQuota>,
    quotas: Store<ResourceQuota>,
    pods: Store<Pod>,
    /// The listable resources, for `count/<plural>.<group>`.
    resources: Vec<ResourceRef>,
}

impl ResourceQuotaSync {
    /// A syncer reading the quota and pod caches and writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        quotas: Store<ResourceQuota>,
        pods: Store<Pod>,
        resources: Vec<ResourceRef>,
    ) -> Self {
        ResourceQuotaSync {
            quotas_api: Typed::new(client.clone()),
            client,
            quotas,
            pods,
            resources,
        }
    }

    /// Upstream `syncResourceQuota`: brings the status of the quota named by
    /// `key` (`namespace/name`) up to date.
    pub async fn sync_resource_quota(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(quota) = self.quotas.get(ns, name) else {
            return Ok(Action::Done);
        };
        let ns = ns.unwrap_or("");
        let quota_json = to_value(quota.as_ref())?;
        let hard = apiserver::admission::quota_evaluator::resource_list(quota_json.pointer("/spec/hard"));
        let mut objects = Objects::new();
        for resource in plan::resources_needed(&hard) {
            if let Some(items) = self.objects_of(ns, &resource).await? {
                objects.insert(resource, items);
            }
        }
        if let Some(status) = plan::plan_status(&quota_json, &objects) {
            let mut updated = quota_json;
            updated["status"] = status;
            let updated: ResourceQuota = from_value(updated)?;
            self.quotas_api.update_status(&updated).await?;
        }
        Ok(Action::RequeueAfter(RESYNC_PERIOD))
    }

    /// The objects of `resource` in `ns`, as JSON; `None` for a resource this
    /// server does not serve (its count stays as it is).
    async fn objects_of(
        &self,
        ns: &str,
        (group, plural): &Resource,
    ) -> Result<Option<Vec<serde_json::Value>>, ReconcileError> {
        if (group.as_str(), plural.as_str()) == ("", "pods") {
            let pods = self.pods.by_index(NAMESPACE_INDEX, ns);
            let pods: Result<Vec<_>, _> = pods.iter().map(|p| to_value(p.as_ref())).collect();
            return Ok(Some(pods?));
        }
        let Some(r) = self
            .resources
            .iter()
            .find(|r| &r.group == group && &r.plural == plural && r.namespaced)
        else {
            return Ok(None);
        };
        let (items, _) = self.client.list(r, Some(ns), &ListParams::default()).await?;
        Ok(Some(items))
    }
}
