//! What an object costs against a ResourceQuota: the usage evaluators that
//! quota admission and the ResourceQuota controller share. Pure functions of
//! objects.
//!
//! Upstream: `pkg/quota/v1/evaluator/core/pods.go` (`PodUsageFunc`,
//! `podComputeUsageHelper`, `podMatchesScopeFunc`, `Constraints`),
//! `services.go`, `persistent_volume_claims.go`,
//! `staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go` (the
//! object count evaluator: `count/<resource>.<group>`) and
//! `staging/src/k8s.io/apiserver/pkg/quota/v1/resources.go` (`Add`, `Mask`,
//! `LessThanOrEqual`).
//!
//! Simplified: pod usage sums the containers (init containers and pod
//! overhead are not taken as upstream's `PodRequests` does); the
//! `CrossNamespacePodAffinity` scope never matches; PVC usage has no
//! per-StorageClass resources.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::kinds::pod::qos_class;
use crate::quantity::Quantity;

/// A `v1.ResourceList`: resource name → quantity, sorted by name.
pub type ResourceList = BTreeMap<String, Quantity>;

/// The compute resources a pod's containers must all state once a quota
/// limits them (`validationSet`).
const VALIDATION_SET: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// The core resources whose count also has a legacy name (`pods`,
/// `services`, ...) beside `count/<resource>`.
const LEGACY_COUNTED: [&str; 7] = [
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
];

/// Reads a `ResourceList` from JSON (unparsable entries are skipped:
/// validation rejected them on write).
pub fn resource_list(v: Option<&Value>) -> ResourceList {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.clone(), Quantity::from_json(q)?)))
        .collect()
}

/// A `ResourceList` as JSON, in canonical quantity strings.
pub fn to_json(list: &ResourceList) -> Value {
    Value::Object(list.iter().map(|(k, q)| (k.clone(), q.to_json())).collect())
}

/// `quota.Add`: every key of both, summed.
pub fn add(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut out = a.clone();
    for (k, q) in b {
        let sum = out.get(k).map_or(*q, |cur| *cur + *q);
        out.insert(k.clone(), sum);
    }
    out
}

/// `quota.Mask`: only the keys in `names`.
pub fn mask<'a>(list: &ResourceList, names: impl IntoIterator<Item = &'a String>) -> ResourceList {
    names
        .into_iter()
        .filter_map(|n| list.get(n).map(|q| (n.clone(), *q)))
        .collect()
}

/// `quota.LessThanOrEqual`: the names of `a` that exceed `b` (empty: allowed).
pub fn exceeded(a: &ResourceList, b: &ResourceList) -> Vec<String> {
    a.iter()
        .filter(|(k, q)| b.get(*k).is_some_and(|limit| *q > limit))
        .map(|(k, _)| k.clone())
        .collect()
}

/// `prettyPrint`: `k=v,k=v` sorted by name.
pub fn pretty(list: &ResourceList) -> String {
    list.iter()
        .map(|(k, q)| format!("{k}={q}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The name a quota counts objects of this resource by:
/// `count/<resource>` for the core group, else `count/<resource>.<group>`.
pub fn count_name(group: &str, plural: &str) -> String {
    if group.is_empty() {
        format!("count/{plural}")
    } else {
        format!("count/{plural}.{group}")
    }
}

/// What creating `obj` (of `group`/`plural`) uses: its count, and for pods,
/// services and claims their compute, port and storage usage.
pub fn usage(group: &str, plural: &str, obj: &Value) -> ResourceList {
    let mut out = ResourceList::new();
    let one = Quantity::from_int(1);
    out.insert(count_name(group, plural), one);
    if group.is_empty() && LEGACY_COUNTED.contains(&plural) {
        out.insert(plural.to_string(), one);
    }
    match (group, plural) {
        ("", "pods") if is_terminal(obj) => return ResourceList::new(),
        ("", "pods") => out.extend(pod_compute_usage(obj)),
        ("", "services") => out.extend(service_usage(obj)),
        ("", "persistentvolumeclaims") => {
            if let Some(q) = obj
                .pointer("/spec/resources/requests/storage")
                .and_then(Quantity::from_json)
            {
                out.insert("requests.storage".into(), q);
            }
        }
        _ => {}
    }
    out
}

/// Whether a pod has finished (Succeeded or Failed): it no longer uses quota.
pub fn is_terminal(pod: &Value) -> bool {
    matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    )
}

/// The summed requests and limits of a pod's containers.
fn pod_requests_limits(pod: &Value) -> (ResourceList, ResourceList) {
    let mut requests = ResourceList::new();
    let mut limits = ResourceList::new();
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
    for c in containers.into_iter().flatten() {
        requests = add(&requests, &resource_list(c.pointer("/resources/requests")));
        limits = add(&limits, &resource_list(c.pointer("/resources/limits")));
    }
    (requests, limits)
}

/// `podComputeUsageHelper` without the counts: `cpu` / `requests.cpu` from
/// requests, `limits.cpu` from limits, and the same for memory and
/// ephemeral storage.
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut out = ResourceList::new();
    for r in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(q) = requests.get(r) {
            out.insert(r.to_string(), *q);
            out.insert(format!("requests.{r}"), *q);
        }
        if let Some(q) = limits.get(r) {
            out.insert(format!("limits.{r}"), *q);
        }
    }
    out
}

fn pod_compute_usage(pod: &Value) -> ResourceList {
    let (requests, limits) = pod_requests_limits(pod);
    compute_usage(&requests, &limits)
}

/// `services.loadbalancers` and `services.nodeports` of a Service.
fn service_usage(svc: &Value) -> ResourceList {
    let mut out = ResourceList::new();
    let kind = svc
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    let ports = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let ports = i64::try_from(ports).unwrap_or(i64::MAX);
    let (lb, node_ports) = match kind {
        "LoadBalancer" => (1, ports),
        "NodePort" => (0, ports),
        _ => (0, 0),
    };
    out.insert("services.loadbalancers".into(), Quantity::from_int(lb));
    out.insert("services.nodeports".into(), Quantity::from_int(node_ports));
    out
}

/// The hard resources of a quota this kind of object is charged against
/// (`MatchingResources`).
pub fn matching_resources(group: &str, plural: &str, hard: &ResourceList) -> Vec<String> {
    let count = count_name(group, plural);
    hard.keys()
        .filter(|name| {
            **name == count
                || (group.is_empty() && *name == plural && LEGACY_COUNTED.contains(&plural))
                || match (group, plural) {
                    ("", "pods") => {
                        VALIDATION_SET.contains(&name.as_str()) || name.ends_with("ephemeral-storage")
                    }
                    ("", "services") => name.starts_with("services."),
                    ("", "persistentvolumeclaims") => *name == "requests.storage",
                    _ => false,
                }
        })
        .cloned()
        .collect()
}

/// Whether a quota's scopes and scope selector select `obj`
/// (`podMatchesScopeFunc`; other kinds match only an unscoped quota).
pub fn matches_scopes(quota: &Value, group: &str, plural: &str, obj: &Value) -> bool {
    let mut requirements: Vec<(String, String, Vec<String>)> = quota
        .pointer("/spec/scopes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|s| (s.to_string(), "Exists".to_string(), Vec::new()))
        .collect();
    let exprs = quota
        .pointer("/spec/scopeSelector/matchExpressions")
        .and_then(Value::as_array);
    for e in exprs.into_iter().flatten() {
        let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let values = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        requirements.push((field("scopeName"), field("operator"), values));
    }
    if requirements.is_empty() {
        return true;
    }
    if (group, plural) != ("", "pods") {
        return false;
    }
    requirements
        .iter()
        .all(|(scope, op, values)| pod_matches_scope(obj, scope, op, values))
}

fn pod_matches_scope(pod: &Value, scope: &str, op: &str, values: &[String]) -> bool {
    let spec = pod.get("spec").cloned().unwrap_or_default();
    let terminating = spec
        .get("activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0);
    let best_effort = qos_class(&spec) == "BestEffort";
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        "PriorityClass" => {
            let class = spec
                .get("priorityClassName")
                .and_then(Value::as_str)
                .unwrap_or("");
            match op {
                "In" => values.iter().any(|v| v == class),
                "NotIn" => !values.iter().any(|v| v == class),
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                _ => false,
            }
        }
        _ => false,
    }
}

/// `podEvaluator.Constraints`: once a quota limits cpu or memory, every
/// container must state it. The message lists, per missing resource, the
/// containers that lack it: `must specify limits.cpu for: a,b; ...`.
pub fn pod_constraints(required: &[String], pod: &Value) -> Result<(), String> {
    let required: Vec<&String> = required
        .iter()
        .filter(|r| VALIDATION_SET.contains(&r.as_str()))
        .collect();
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for list in ["containers", "initContainers"] {
        let containers = pod.pointer(&format!("/spec/{list}")).and_then(Value::as_array);
        for c in containers.into_iter().flatten() {
            let usage = compute_usage(
                &resource_list(c.pointer("/resources/requests")),
                &resource_list(c.pointer("/resources/limits")),
            );
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            for r in &required {
                if !usage.contains_key(r.as_str()) {
                    missing.entry(r.as_str()).or_default().push(name.to_string());
                }
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .into_iter()
        .map(|(r, mut names)| {
            names.sort();
            names.dedup();
            format!("{r} for: {}", names.join(","))
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(requests: Value, limits: Value) -> Value {
        json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": requests, "limits": limits}},
            {"name": "b", "resources": {"requests": {"cpu": "100m"}}},
        ]}})
    }

    #[test]
    fn a_pod_uses_its_count_and_summed_compute() {
        let p = pod(
            json!({"cpu": "250m", "memory": "64Mi"}),
            json!({"memory": "128Mi"}),
        );
        let u = usage("", "pods", &p);
        assert_eq!(
            pretty(&u),
            "count/pods=1,cpu=350m,limits.memory=128Mi,memory=64Mi,pods=1,requests.cpu=350m,requests.memory=64Mi"
        );
        let mut done = p.clone();
        done["status"] = json!({"phase": "Succeeded"});
        assert!(usage("", "pods", &done).is_empty());
    }

    #[test]
    fn other_kinds_count_by_group_and_legacy_name() {
        assert_eq!(
            pretty(&usage("apps", "deployments", &json!({}))),
            "count/deployments.apps=1"
        );
        assert_eq!(
            pretty(&usage("", "configmaps", &json!({}))),
            "configmaps=1,count/configmaps=1"
        );
        let lb = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 443}]}});
        assert_eq!(
            pretty(&usage("", "services", &lb)),
            "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"
        );
    }

    #[test]
    fn exceeding_names_only_what_is_over_the_limit() {
        let hard = resource_list(Some(&json!({"pods": "2", "requests.cpu": "1"})));
        let used = resource_list(Some(&json!({"pods": "3", "requests.cpu": "500m"})));
        assert_eq!(exceeded(&used, &hard), ["pods"]);
        assert_eq!(matching_resources("", "pods", &hard), ["pods", "requests.cpu"]);
        assert!(matching_resources("", "secrets", &hard).is_empty());
    }

    #[test]
    fn containers_without_a_quota_d_resource_are_named() {
        let p = pod(json!({"cpu": "1"}), json!({}));
        let required = vec![
            "limits.cpu".to_string(),
            "requests.cpu".to_string(),
            "pods".to_string(),
        ];
        assert_eq!(
            pod_constraints(&required, &p),
            Err("must specify limits.cpu for: a,b".into())
        );
        assert_eq!(pod_constraints(&["requests.cpu".to_string()], &p), Ok(()));
    }

    #[test]
    fn scopes_select_pods_by_qos_and_deadline() {
        let best_effort = json!({"spec": {"containers": [{"name": "a"}]}});
        let scoped = json!({"spec": {"scopes": ["BestEffort"]}});
        assert!(matches_scopes(&scoped, "", "pods", &best_effort));
        let p = pod(json!({"cpu": "1"}), json!({}));
        assert!(!matches_scopes(&scoped, "", "pods", &p));
        assert!(!matches_scopes(&scoped, "", "secrets", &json!({})));
        assert!(matches_scopes(&json!({"spec": {}}), "", "secrets", &json!({})));
    }
}
