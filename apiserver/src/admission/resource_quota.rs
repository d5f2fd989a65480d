//! ResourceQuota admission: a create that would take a namespace over one
//! of its quotas is refused (403), and an admitted one is charged to the
//! quotas' `status.used` before it is stored, so two quick creates cannot
//! both take the last unit.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`
//! (`checkRequest`, `hasUsageStats`, `prettyPrint`) and `admission.go`.
//!
//! ```text
//! create → list the namespace's quotas → for each quota whose scopes select
//!   the object and whose status.hard names a resource it uses:
//!     the pod's containers state every quota'd cpu/memory   (else "failed quota: q: must specify ...")
//!     status.used is known for those resources              (else "status unknown for quota: q, ...")
//!     used + requested <= hard                              (else "exceeded quota: q, requested: ..., used: ..., limited: ...")
//!   → write each quota's status.used += requested, with its resourceVersion as
//!     precondition; on a conflict, read the quotas again and check again
//! ```
//!
//! Simplified: creates only (an update that grows usage, such as a PVC
//! resize, is not charged); quotas are read from the store, not a cache;
//! no `limitedResources` configuration. If the create fails after the
//! charge, the ResourceQuota controller's next sync gives it back.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::quota_evaluator::{
    ResourceList, add, exceeded, mask, matches_scopes, matching_resources, pod_constraints, pretty,
    resource_list, to_json, usage,
};
use crate::Api;
use crate::api::{ListOptions, WriteOptions, Written};
use crate::error::{ApiError, ApiResult, Reason};
use crate::registry::{ResourceInfo, Subresource};

/// How many times the quotas are read again after a conflicting charge.
const MAX_ATTEMPTS: usize = 8;

/// The new `status.used` of one quota.
#[derive(Clone, Debug, PartialEq)]
pub struct Charge {
    /// The quota's name.
    pub quota: String,
    /// The quota as read, with the new usage in `status.used`.
    pub updated: Value,
}

/// Checks and charges the creation of `obj` against the quotas of its
/// namespace; `dry_run` checks only.
pub async fn admit(api: &Api, info: &ResourceInfo, obj: &Value, dry_run: bool) -> ApiResult<()> {
    if !info.namespaced {
        return Ok(());
    }
    let namespace = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let rq_info = api.resource("", "v1", "resourcequotas")?;
    let mut charged: BTreeSet<String> = BTreeSet::new();
    for _ in 0..MAX_ATTEMPTS {
        let quotas = api
            .list(&rq_info, Some(namespace), &ListOptions::default())?
            .items;
        let quotas: Vec<Value> = quotas
            .into_iter()
            .filter(|q| !charged.contains(q.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")))
            .collect();
        let charges = check_request(&info.group, &info.plural, obj, &quotas)
            .map_err(|why| ApiError::forbidden(&info.group, &info.plural, name, &why))?;
        if dry_run || charges.is_empty() {
            return Ok(());
        }
        match charge_all(api, &rq_info, namespace, charges, &mut charged).await {
            Ok(()) => return Ok(()),
            Err(e) if e.reason == Reason::Conflict => continue,
            Err(e) => return Err(e),
        }
    }
    Err(ApiError::new(
        Reason::Conflict,
        format!(
            "{}: unable to update the quotas of namespace {namespace}, try again",
            info.plural
        ),
    ))
}

/// Writes each charge in turn; the quotas charged are added to `charged`.
async fn charge_all(
    api: &Api,
    rq_info: &ResourceInfo,
    namespace: &str,
    charges: Vec<Charge>,
    charged: &mut BTreeSet<String>,
) -> ApiResult<()> {
    for c in charges {
        write_status(api, rq_info, namespace, &c).await?;
        charged.insert(c.quota);
    }
    Ok(())
}

/// One status write (boxed: the write path that called this plugin is the
/// one it calls).
fn write_status<'a>(
    api: &'a Api,
    rq_info: &'a ResourceInfo,
    namespace: &'a str,
    c: &'a Charge,
) -> Pin<Box<dyn Future<Output = ApiResult<Written>> + Send + 'a>> {
    Box::pin(async move {
        let opts = WriteOptions {
            field_manager: Some("kube-apiserver".into()),
            ..WriteOptions::default()
        };
        api.update(
            rq_info,
            Some(namespace),
            &c.quota,
            c.updated.clone(),
            Some(Subresource::Status),
            &opts,
        )
        .await
    })
}

/// Upstream `checkRequest` for a create: the new usage of every quota the
/// object is charged to, or why it is refused. Pure.
pub fn check_request(
    group: &str,
    plural: &str,
    obj: &Value,
    quotas: &[Value],
) -> Result<Vec<Charge>, String> {
    let mut interesting = Vec::new();
    for quota in quotas {
        let quota_name = quota
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let hard = resource_list(quota.pointer("/status/hard"));
        let restricted = matching_resources(group, plural, &hard);
        if restricted.is_empty() || !matches_scopes(quota, group, plural, obj) {
            continue;
        }
        if (group, plural) == ("", "pods") {
            pod_constraints(&restricted, obj).map_err(|e| format!("failed quota: {quota_name}: {e}"))?;
        }
        let used = resource_list(quota.pointer("/status/used"));
        let unknown: Vec<&String> = restricted.iter().filter(|r| !used.contains_key(*r)).collect();
        if !unknown.is_empty() {
            let names: Vec<&str> = restricted.iter().map(String::as_str).collect();
            return Err(format!(
                "status unknown for quota: {quota_name}, resources: {}",
                names.join(",")
            ));
        }
        interesting.push((quota, quota_name, hard, used));
    }
    let delta: ResourceList = usage(group, plural, obj)
        .into_iter()
        .filter(|(_, q)| q.milli_value() != 0)
        .collect();
    if let Some(negative) = delta.iter().find(|(_, q)| q.is_negative()) {
        return Err(format!("quota usage is negative for resource(s): {}", negative.0));
    }
    let mut charges = Vec::new();
    for (quota, quota_name, hard, used) in interesting {
        let requested = mask(&delta, hard.keys());
        if requested.is_empty() {
            continue;
        }
        let new_used = add(&used, &requested);
        let over = exceeded(&mask(&new_used, requested.keys()), &hard);
        if !over.is_empty() {
            return Err(format!(
                "exceeded quota: {quota_name}, requested: {}, used: {}, limited: {}",
                pretty(&mask(&requested, &over)),
                pretty(&mask(&used, &over)),
                pretty(&mask(&hard, &over)),
            ));
        }
        let mut updated = quota.clone();
        updated["status"]["used"] = to_json(&new_used);
        charges.push(Charge {
            quota: quota_name.to_string(),
            updated,
        });
    }
    Ok(charges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn quota(name: &str, hard: Value, used: Value) -> Value {
        json!({"metadata": {"name": name, "resourceVersion": "7"}, "spec": {"hard": hard},
            "status": {"hard": hard, "used": used}})
    }

    fn pod(cpu: Option<&str>) -> Value {
        let resources = match cpu {
            Some(c) => json!({"requests": {"cpu": c}, "limits": {"cpu": c}}),
            None => json!({}),
        };
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app", "resources": resources}]}})
    }

    #[test]
    fn the_third_pod_exceeds_a_quota_of_two() {
        let q = quota("q", json!({"pods": "2"}), json!({"pods": "2"}));
        assert_eq!(
            check_request("", "pods", &pod(None), &[q]),
            Err("exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2".into())
        );
    }

    #[test]
    fn an_admitted_pod_is_charged_to_every_matching_quota() {
        let q = quota(
            "q",
            json!({"pods": "2", "requests.cpu": "1"}),
            json!({"pods": "1", "requests.cpu": "250m"}),
        );
        let secrets = quota("s", json!({"secrets": "1"}), json!({"secrets": "0"}));
        let charges = check_request("", "pods", &pod(Some("500m")), &[q, secrets]).unwrap();
        assert_eq!(charges.len(), 1);
        assert_eq!(charges[0].quota, "q");
        assert_eq!(
            charges[0].updated["status"]["used"],
            json!({"pods": "2", "requests.cpu": "750m"})
        );
        assert_eq!(charges[0].updated["metadata"]["resourceVersion"], json!("7"));
    }

    #[test]
    fn quota_d_compute_must_be_stated_and_status_known() {
        let q = quota("q", json!({"limits.cpu": "2"}), json!({"limits.cpu": "0"}));
        assert_eq!(
            check_request("", "pods", &pod(None), &[q]),
            Err("failed quota: q: must specify limits.cpu for: app".into())
        );
        let fresh = json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1"}}, "status": {"hard": {"pods": "1"}}});
        assert_eq!(
            check_request("", "pods", &pod(None), &[fresh]),
            Err("status unknown for quota: q, resources: pods".into())
        );
    }

    #[test]
    fn other_kinds_are_counted_by_their_count_name() {
        let q = quota(
            "objects",
            json!({"count/deployments.apps": "1"}),
            json!({"count/deployments.apps": "1"}),
        );
        assert_eq!(
            check_request("apps", "deployments", &json!({}), &[q]),
            Err("exceeded quota: objects, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1".into())
        );
    }
}
