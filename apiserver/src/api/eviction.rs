//! `POST pods/NAME/eviction`: a pod deletion that honours the
//! PodDisruptionBudgets covering the pod.
//!
//! Upstream: `pkg/registry/core/pod/storage/eviction.go` (`EvictionREST.Create`,
//! `checkAndDecrement`, `getPodDisruptionBudgets`, `canIgnorePDB`) and
//! `component-helpers/apps/poddisruptionbudget` (`UpdateDisruptionAllowedCondition`).
//!
//! ```text
//! evict(pod)
//!   pod terminal, Pending or already deleting → delete it (no budget applies)
//!   budgets matching the pod: none → delete; two or more → 500 (upstream's answer)
//!   pod not ready and (AlwaysAllow, or the budget is met) → delete, if the pod is unchanged
//!   otherwise the budget must allow a disruption: decrement disruptionsAllowed,
//!     note the pod in disruptedPods (the disruption controller's hint), then delete
//!   no disruption allowed → 429 "Cannot evict pod as it would violate the pod's disruption budget."
//! ```
//!
//! The decisions are pure functions ([`can_ignore_pdb`], [`matching_budgets`],
//! [`check_and_decrement`]); [`Api::evict`] reads and writes around them.
//!
//! Simplified: a 429 carries `retryAfterSeconds` in its body but no
//! `Retry-After` header; the conflict retries have no back-off delay between
//! them (they are in-process and immediate); policy/v1beta1 Evictions are not
//! accepted.

use serde_json::{Value, json};

use super::{Api, DeleteOptions, ListOptions, WriteOptions, obj};
use crate::error::{ApiError, ApiResult, Reason};
use crate::jsonpath::str_at;
use crate::labels::Selector;
use crate::registry::Subresource;

/// Most entries `status.disruptedPods` may hold before evictions are
/// refused (upstream `MaxDisruptedPodSize`).
pub const MAX_DISRUPTED_POD_SIZE: usize = 2000;
/// Conflict retries of one eviction (upstream `EvictionsRetry.Steps`).
const RETRIES: usize = 20;
/// The message of every 429 an eviction answers.
pub const VIOLATES_BUDGET: &str = "Cannot evict pod as it would violate the pod's disruption budget.";
/// The `reason` of the cause attached to that 429 (upstream `DisruptionBudgetCause`).
const DISRUPTION_BUDGET_CAUSE: &str = "DisruptionBudget";

/// Whether a pod may be deleted without asking its budgets: it is done
/// (Succeeded, Failed), not started (Pending) or already being deleted.
pub fn can_ignore_pdb(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed" | "Pending") || is_deleting(pod)
}

/// Whether the delete must carry the pod's resourceVersion, so that it
/// fails if the pod changed (became ready) since it was read.
fn should_enforce_resource_version(pod: &Value) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && !is_deleting(pod)
}

fn phase(pod: &Value) -> &str {
    str_at(pod, &["status", "phase"])
}

fn is_deleting(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// Upstream `IsPodReady`: the Ready condition is True.
pub fn is_pod_ready(pod: &Value) -> bool {
    super::super::kinds::items(pod.get("status").unwrap_or(&Value::Null), "conditions")
        .any(|c| str_at(c, &["type"]) == "Ready" && str_at(c, &["status"]) == "True")
}

/// The budgets of the pod's namespace whose selector matches it. A budget
/// with no selector, an empty one or an invalid one matches nothing.
pub fn matching_budgets<'a>(budgets: &'a [Value], pod: &Value) -> Vec<&'a Value> {
    let labels = pod.pointer("/metadata/labels").cloned().unwrap_or(json!({}));
    budgets
        .iter()
        .filter(|pdb| {
            let Some(sel) = pdb.pointer("/spec/selector").filter(|s| s.is_object()) else {
                return false;
            };
            Selector::from_json(sel).is_ok_and(|s| !s.is_empty() && s.matches(&labels))
        })
        .collect()
}

/// Whether an unready pod may go without spending a disruption: under
/// `AlwaysAllow`, or when the budget is met without it (upstream's default,
/// `IfHealthyBudget`).
fn unready_pod_may_go(pdb: &Value) -> bool {
    if str_at(pdb, &["spec", "unhealthyPodEvictionPolicy"]) == "AlwaysAllow" {
        return true;
    }
    let current = status_int(pdb, "currentHealthy");
    let desired = status_int(pdb, "desiredHealthy");
    current >= desired && desired > 0
}

fn status_int(pdb: &Value, field: &str) -> i64 {
    pdb.pointer(&format!("/status/{field}"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The 429 of an eviction, with one cause.
fn too_many_requests(cause: String, retry_after: u32) -> ApiError {
    let mut details = json!({"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]});
    if retry_after > 0 {
        details["retryAfterSeconds"] = json!(retry_after);
    }
    ApiError {
        reason: Reason::TooManyRequests,
        message: VIOLATES_BUDGET.to_string(),
        details: Some(details),
    }
}

/// Upstream `createTooManyRequestsError`: the budget has not caught up with
/// its spec, or the pod changed under an unready-pod eviction.
fn still_processing(pdb_name: &str) -> ApiError {
    too_many_requests(
        format!("The disruption budget {pdb_name} is still being processed by the server."),
        10,
    )
}

/// Upstream `checkAndDecrement`: the budget as it must be written for this
/// eviction (one disruption fewer, the pod noted at `now` unless `dry_run`),
/// or why the eviction is refused.
pub fn check_and_decrement(pdb: &Value, pod_name: &str, now: &str, dry_run: bool) -> ApiResult<Value> {
    let name = obj::name(pdb);
    let observed = status_int(pdb, "observedGeneration");
    let generation = pdb
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if observed < generation {
        return Err(still_processing(name));
    }
    let allowed = status_int(pdb, "disruptionsAllowed");
    if allowed < 0 {
        return Err(ApiError::forbidden(
            "policy",
            "poddisruptionbudget",
            name,
            "pdb disruptions allowed is negative",
        ));
    }
    let disrupted = pdb.pointer("/status/disruptedPods").and_then(Value::as_object);
    if disrupted.map_or(0, |m| m.len()) > MAX_DISRUPTED_POD_SIZE {
        return Err(ApiError::forbidden(
            "policy",
            "poddisruptionbudget",
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let (desired, current) = (
            status_int(pdb, "desiredHealthy"),
            status_int(pdb, "currentHealthy"),
        );
        return Err(too_many_requests(
            format!("The disruption budget {name} needs {desired} healthy pods and has {current} currently"),
            0,
        ));
    }
    let mut next = pdb.clone();
    let status = &mut next["status"];
    status["disruptionsAllowed"] = json!(allowed - 1);
    if allowed - 1 == 0 {
        set_insufficient_pods(status, now);
    }
    if !dry_run {
        if !status.get("disruptedPods").is_some_and(Value::is_object) {
            status["disruptedPods"] = json!({});
        }
        status["disruptedPods"][pod_name] = json!(now);
    }
    Ok(next)
}

/// `UpdateDisruptionAllowedCondition` when no disruption is left: the
/// DisruptionAllowed condition False with reason InsufficientPods (its
/// transition time moves only when its status changes).
fn set_insufficient_pods(status: &mut Value, now: &str) {
    let observed = status.get("observedGeneration").cloned().unwrap_or(json!(0));
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    let existing = conditions
        .iter_mut()
        .find(|c| str_at(c, &["type"]) == "DisruptionAllowed");
    match existing {
        Some(c) => {
            if str_at(c, &["status"]) != "False" {
                c["lastTransitionTime"] = json!(now);
            }
            c["status"] = json!("False");
            c["reason"] = json!("InsufficientPods");
            c["message"] = json!("");
            c["observedGeneration"] = observed;
        }
        None => conditions.push(json!({
            "type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
            "message": "", "observedGeneration": observed, "lastTransitionTime": now,
        })),
    }
}

/// The `Success` Status an eviction answers with (201, as upstream's create
/// handler fills in the code).
fn success() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

/// Upstream's answer to a pod covered by more than one budget: a Status
/// with code 500 returned as the result, not as an error (so it has no reason).
fn more_than_one_budget() -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        "code": 500,
    })
}

impl Api {
    /// `POST pods/NAME/eviction` with a policy/v1 Eviction: deletes the pod
    /// if its budget allows. Returns the Status to answer with; its `code`
    /// is the HTTP status (201, or upstream's 500 for a pod with several
    /// budgets). `dry_run` is the request's `dryRun=All`.
    pub async fn evict(
        &self,
        namespace: &str,
        name: &str,
        eviction: &Value,
        dry_run: bool,
    ) -> ApiResult<Value> {
        if obj::name(eviction) != name {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            ));
        }
        let mut options = match eviction.get("deleteOptions").filter(|o| o.is_object()) {
            Some(o) => DeleteOptions::from_json(o)?,
            None => DeleteOptions::default(),
        };
        options.dry_run |= dry_run;
        let pods = self.resource("", "v1", "pods")?;
        let Some(pod) = self
            .delete_if_no_budget_applies(namespace, name, &options)
            .await?
        else {
            return Ok(success());
        };
        let budgets = self.resource("policy", "v1", "poddisruptionbudgets")?;
        let all = self
            .list(&budgets, Some(namespace), &ListOptions::default())?
            .items;
        let matching = matching_budgets(&all, &pod);
        let mut delete = options.clone();
        // Set when an unready pod goes without spending a disruption: the
        // budget it was judged by, whose judgement a changed pod voids.
        let mut judged_by = None;
        match matching.as_slice() {
            [] => {}
            [pdb] => {
                if !is_pod_ready(&pod) && unready_pod_may_go(pdb) {
                    judged_by = Some(obj::name(pdb).to_string());
                    // Only if the pod has not become ready since it was read.
                    delete.resource_version = obj::meta_str(&pod, "resourceVersion").map(str::to_string);
                } else {
                    self.spend_disruption(namespace, (*pdb).clone(), name, options.dry_run)
                        .await?;
                }
            }
            _ => return Ok(more_than_one_budget()),
        }
        match self.delete(&pods, Some(namespace), name, &delete).await {
            Ok(_) => Ok(success()),
            Err(e) if e.reason == Reason::Conflict && options.resource_version.is_none() => match judged_by {
                Some(pdb) => Err(still_processing(&pdb)),
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// The first part of upstream's `Create`: a pod no budget protects is
    /// deleted at once (`None`); any other pod is returned for the budget
    /// checks. Conflicts are retried unless the caller gave a resourceVersion.
    async fn delete_if_no_budget_applies(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> ApiResult<Option<Value>> {
        let pods = self.resource("", "v1", "pods")?;
        let mut attempt = 0;
        loop {
            let pod = self.get(&pods, Some(namespace), name)?;
            if !can_ignore_pdb(&pod) {
                return Ok(Some(pod));
            }
            let mut delete = options.clone();
            if should_enforce_resource_version(&pod) && options.resource_version.is_none() {
                delete.resource_version = obj::meta_str(&pod, "resourceVersion").map(str::to_string);
            }
            match self.delete(&pods, Some(namespace), name, &delete).await {
                Ok(_) => return Ok(None),
                Err(e)
                    if e.reason == Reason::Conflict
                        && options.resource_version.is_none()
                        && attempt < RETRIES =>
                {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Decrements the budget through its status, re-reading it after a
    /// conflict (upstream `RetryOnConflict` around `checkAndDecrement`).
    async fn spend_disruption(
        &self,
        namespace: &str,
        mut pdb: Value,
        pod: &str,
        dry_run: bool,
    ) -> ApiResult<()> {
        let budgets = self.resource("policy", "v1", "poddisruptionbudgets")?;
        let name = obj::name(&pdb).to_string();
        let opts = WriteOptions {
            dry_run,
            ..WriteOptions::default()
        };
        for _ in 0..RETRIES {
            let next = check_and_decrement(&pdb, pod, &self.now_rfc3339(), dry_run)?;
            match self
                .update(
                    &budgets,
                    Some(namespace),
                    &name,
                    next,
                    Some(Subresource::Status),
                    &opts,
                )
                .await
            {
                Ok(_) => return Ok(()),
                Err(e) if e.reason == Reason::Conflict => {
                    pdb = self.get(&budgets, Some(namespace), &name)?;
                }
                Err(e) => return Err(e),
            }
        }
        Err(ApiError::new(
            Reason::ServiceUnavailable,
            format!("couldn't update PodDisruptionBudget \"{name}\" due to conflicts"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(phase: &str, ready: bool) -> Value {
        json!({"metadata": {"name": "web-1", "labels": {"app": "web"}},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}})
    }

    fn pdb(allowed: i64, current: i64, desired: i64) -> Value {
        json!({"metadata": {"name": "web", "generation": 1},
            "spec": {"minAvailable": desired, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
                "currentHealthy": current, "desiredHealthy": desired, "expectedPods": current}})
    }

    #[test]
    fn pods_no_budget_protects() {
        assert!(can_ignore_pdb(&pod("Pending", false)));
        assert!(can_ignore_pdb(&pod("Succeeded", false)));
        assert!(!can_ignore_pdb(&pod("Running", true)));
        let mut deleting = pod("Running", true);
        deleting["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
        assert!(can_ignore_pdb(&deleting));
        assert!(!should_enforce_resource_version(&deleting));
        assert!(should_enforce_resource_version(&pod("Pending", false)));
    }

    #[test]
    fn budgets_match_by_selector_and_empty_ones_match_nothing() {
        let mut empty = pdb(1, 1, 1);
        empty["spec"]["selector"] = json!({});
        let mut none = pdb(1, 1, 1);
        none["spec"].as_object_mut().unwrap().remove("selector");
        let mut other = pdb(1, 1, 1);
        other["spec"]["selector"] = json!({"matchLabels": {"app": "db"}});
        let budgets = [pdb(1, 1, 1), empty, none, other];
        assert_eq!(matching_budgets(&budgets, &pod("Running", true)).len(), 1);
    }

    #[test]
    fn a_budget_without_disruptions_left_refuses_with_upstreams_cause() {
        let err = check_and_decrement(&pdb(0, 2, 2), "web-1", "t", false).unwrap_err();
        assert_eq!(err.reason, Reason::TooManyRequests);
        assert_eq!(err.message, VIOLATES_BUDGET);
        assert_eq!(
            err.details.unwrap(),
            json!({"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]})
        );
    }

    #[test]
    fn a_budget_behind_its_generation_is_still_being_processed() {
        let mut stale = pdb(1, 3, 2);
        stale["metadata"]["generation"] = json!(2);
        let err = check_and_decrement(&stale, "web-1", "t", false).unwrap_err();
        assert_eq!(err.details.unwrap()["retryAfterSeconds"], json!(10));
        let mut negative = pdb(-1, 3, 2);
        negative["status"]["disruptionsAllowed"] = json!(-1);
        let err = check_and_decrement(&negative, "web-1", "t", false).unwrap_err();
        assert_eq!(
            err.message,
            "poddisruptionbudget.policy \"web\" is forbidden: pdb disruptions allowed is negative"
        );
    }

    #[test]
    fn spending_the_last_disruption_notes_the_pod_and_flips_the_condition() {
        let next = check_and_decrement(&pdb(1, 3, 2), "web-1", "2025-01-01T00:00:00Z", false).unwrap();
        assert_eq!(next["status"]["disruptionsAllowed"], json!(0));
        assert_eq!(
            next["status"]["disruptedPods"],
            json!({"web-1": "2025-01-01T00:00:00Z"})
        );
        let c = &next["status"]["conditions"][0];
        assert_eq!(
            (c["status"].clone(), c["reason"].clone()),
            (json!("False"), json!("InsufficientPods"))
        );
        let dry = check_and_decrement(&pdb(2, 4, 2), "web-1", "t", true).unwrap();
        assert_eq!(dry["status"]["disruptionsAllowed"], json!(1));
        assert!(dry["status"].get("disruptedPods").is_none());
        assert!(dry["status"].get("conditions").is_none());
    }

    #[test]
    fn kubectl_drains_protobuf_eviction_decodes_to_the_json_eviction() {
        use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
        use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
        use prost::Message;
        let eviction = k8s_pb::api::policy::v1::Eviction {
            metadata: Some(meta::ObjectMeta {
                name: Some("web-1".into()),
                namespace: Some("default".into()),
                ..Default::default()
            }),
            delete_options: Some(meta::DeleteOptions {
                grace_period_seconds: Some(5),
                ..Default::default()
            }),
        };
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("policy/v1".into()),
                kind: Some("Eviction".into()),
            }),
            raw: Some(eviction.encode_to_vec()),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut body = b"k8s\0".to_vec();
        body.extend(unknown.encode_to_vec());
        let json = crate::protobuf::decode(&body).unwrap();
        assert_eq!(json["kind"], "Eviction");
        assert_eq!(json["metadata"]["name"], "web-1");
        assert_eq!(json["deleteOptions"]["gracePeriodSeconds"], 5);
        let options = DeleteOptions::from_json(&json["deleteOptions"]).unwrap();
        assert_eq!(options.grace_period, Some(5));
    }

    #[test]
    fn an_unready_pod_goes_when_the_budget_is_met_or_always_allowed() {
        assert!(unready_pod_may_go(&pdb(0, 2, 2)));
        assert!(!unready_pod_may_go(&pdb(0, 1, 2)));
        let mut always = pdb(0, 0, 2);
        always["spec"]["unhealthyPodEvictionPolicy"] = json!("AlwaysAllow");
        assert!(unready_pod_may_go(&always));
    }
}
