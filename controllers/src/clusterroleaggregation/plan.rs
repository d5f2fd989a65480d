//! The aggregated rules of one ClusterRole: pure.
//!
//! Upstream: `syncClusterRole` of `clusterroleaggregation_controller.go`.
//! For each selector in order, the matching ClusterRoles sorted by name
//! (the role itself skipped) contribute each rule not already collected;
//! the result replaces `rules` when it differs (nil and empty lists count
//! as equal, as `equality.Semantic.DeepEqual`).

use std::sync::Arc;

use apiserver::labels::Selector;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};

/// What a sync does.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// Not aggregating, or its rules are already the union.
    Nothing,
    /// Set `rules` to these.
    SetRules(Vec<PolicyRule>),
    /// A selector does not parse: the role cannot be aggregated.
    BadSelector(String),
}

/// The plan for `role` given every ClusterRole in the cache.
pub fn aggregate_rules(role: &ClusterRole, all: &[Arc<ClusterRole>]) -> Plan {
    let Some(rule) = &role.aggregation_rule else {
        return Plan::Nothing;
    };
    let name = role.metadata.name.as_deref().unwrap_or_default();
    let mut sorted: Vec<&Arc<ClusterRole>> = all.iter().collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut rules: Vec<PolicyRule> = Vec::new();
    for selector in rule.cluster_role_selectors.iter().flatten() {
        let selector = match Selector::from_typed(Some(selector)) {
            Ok(s) => s,
            Err(e) => return Plan::BadSelector(e),
        };
        let matching = sorted.iter().filter(|r| {
            r.metadata.name.as_deref() != Some(name) && selector.matches(&r.metadata.labels.as_ref())
        });
        for r in matching {
            for candidate in r.rules.iter().flatten() {
                if !rules.iter().any(|have| same_rule(have, candidate)) {
                    rules.push(candidate.clone());
                }
            }
        }
    }
    let current = role.rules.as_deref().unwrap_or_default();
    let unchanged = rules.len() == current.len() && rules.iter().zip(current).all(|(a, b)| same_rule(a, b));
    if unchanged {
        Plan::Nothing
    } else {
        Plan::SetRules(rules)
    }
}

/// Semantic equality of two rules: an absent list is an empty one.
pub fn same_rule(a: &PolicyRule, b: &PolicyRule) -> bool {
    fn list(v: &Option<Vec<String>>) -> &[String] {
        v.as_deref().unwrap_or_default()
    }
    a.verbs == b.verbs
        && list(&a.api_groups) == list(&b.api_groups)
        && list(&a.resources) == list(&b.resources)
        && list(&a.resource_names) == list(&b.resource_names)
        && list(&a.non_resource_urls) == list(&b.non_resource_urls)
}
