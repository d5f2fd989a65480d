//! The pure core of a quota sync: which resources a quota's hard limits
//! name, and the status it should have given the objects of its namespace.
//!
//! Upstream: `syncResourceQuota` of
//! `pkg/controller/resourcequota/resource_quota_controller.go` and
//! `CalculateUsage` of `staging/src/k8s.io/apiserver/pkg/quota/v1/resources.go`.
//!
//! ```text
//! hard  = spec.hard
//! used  = for every resource the hard limits name: the sum over the objects
//!         the quota's scopes select (0 when none), only the hard names kept
//! write = status.hard != hard, or status.used != used, or either missing
//! ```

use std::collections::{BTreeMap, BTreeSet};

use apiserver::admission::quota_evaluator::{
    ResourceList, add, mask, matches_scopes, matching_resources, resource_list, to_json, usage,
};
use apiserver::quantity::Quantity;
use serde_json::{Value, json};

/// A resource by `(group, plural)`, e.g. `("apps", "deployments")`.
pub type Resource = (String, String);

/// The objects of the quota's namespace, by resource.
pub type Objects = BTreeMap<Resource, Vec<Value>>;

/// The resources whose objects the hard limits `hard` count: `pods` for
/// pod compute, `services` for `services.*`, `count/<plural>.<group>`'s
/// resource, and the legacy count names.
pub fn resources_needed(hard: &ResourceList) -> BTreeSet<Resource> {
    let core = |p: &str| (String::new(), p.to_string());
    let mut out = BTreeSet::new();
    for name in hard.keys() {
        let resource = match name.as_str() {
            "cpu" | "memory" | "ephemeral-storage" => core("pods"),
            n if n.starts_with("requests.") || n.starts_with("limits.") => match n {
                "requests.storage" => core("persistentvolumeclaims"),
                _ => core("pods"),
            },
            n if n.starts_with("services.") => core("services"),
            n => match n.strip_prefix("count/") {
                Some(rest) => match rest.split_once('.') {
                    Some((plural, group)) => (group.to_string(), plural.to_string()),
                    None => core(rest),
                },
                None => core(n),
            },
        };
        out.insert(resource);
    }
    out
}

/// The usage of the objects of `quota`'s namespace: for every resource the
/// hard limits count, zero plus the usage of each object the quota's scopes
/// select, keeping only the hard names.
pub fn calculate_usage(quota: &Value, hard: &ResourceList, objects: &Objects) -> ResourceList {
    let mut used = ResourceList::new();
    for ((group, plural), items) in objects {
        for name in matching_resources(group, plural, hard) {
            used.entry(name).or_insert(Quantity::ZERO);
        }
        for obj in items {
            if matches_scopes(quota, group, plural, obj) {
                used = add(&used, &usage(group, plural, obj));
            }
        }
    }
    mask(&used, hard.keys())
}

/// Upstream `syncResourceQuota`: the new status (`{hard, used}`), or `None`
/// when the stored one is already right.
pub fn plan_status(quota: &Value, objects: &Objects) -> Option<Value> {
    let hard = resource_list(quota.pointer("/spec/hard"));
    let mut used = resource_list(quota.pointer("/status/used"));
    used.extend(calculate_usage(quota, &hard, objects));
    let used = mask(&used, hard.keys());
    let status = json!({"hard": to_json(&hard), "used": to_json(&used)});
    let current_hard = quota.pointer("/status/hard");
    let current_used = quota.pointer("/status/used");
    let dirty = current_hard.is_none()
        || current_used.is_none()
        || !same(&resource_list(current_hard), &hard)
        || !same(&resource_list(current_used), &used);
    dirty.then_some(status)
}

/// `quota.Equals`: the same names with the same values (formats aside).
fn same(a: &ResourceList, b: &ResourceList) -> bool {
    a.len() == b.len() && a.iter().all(|(k, q)| b.get(k).is_some_and(|o| o.cmp(q).is_eq()))
}
