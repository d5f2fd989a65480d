//! Table tests of `aggregate_rules` (upstream
//! `clusterroleaggregation_controller_test.go`, `TestSyncClusterRole`).

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use serde_json::json;

use crate::clusterroleaggregation::plan::{Plan, aggregate_rules};

fn role(name: &str, labels: serde_json::Value, rules: &[&str]) -> Arc<ClusterRole> {
    let rules: Vec<_> = rules
        .iter()
        .map(|r| json!({"verbs": ["get"], "apiGroups": [""], "resources": [r]}))
        .collect();
    Arc::new(
        serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "rules": rules}))
            .unwrap(),
    )
}

fn aggregating(name: &str, selectors: serde_json::Value, rules: &[&str]) -> ClusterRole {
    let mut r = (*role(name, json!({}), rules)).clone();
    r.aggregation_rule = Some(serde_json::from_value(json!({"clusterRoleSelectors": selectors})).unwrap());
    r
}

fn resources(plan: &Plan) -> Vec<String> {
    match plan {
        Plan::SetRules(rules) => rules
            .iter()
            .map(|r: &PolicyRule| r.resources.clone().unwrap_or_default().join(","))
            .collect(),
        other => panic!("expected SetRules, got {other:?}"),
    }
}

#[test]
fn the_union_of_matching_roles_in_name_order_without_duplicates() {
    let all = vec![
        role("b", json!({"agg": "yes"}), &["pods", "secrets"]),
        role("a", json!({"agg": "yes"}), &["pods", "configmaps"]),
        role("c", json!({"other": "x"}), &["nodes"]),
        role("d", json!({"other": "x", "agg": "no"}), &["services"]),
    ];
    let target = aggregating(
        "target",
        json!([{"matchLabels": {"agg": "yes"}}, {"matchLabels": {"other": "x"}}]),
        &[],
    );
    assert_eq!(
        resources(&aggregate_rules(&target, &all)),
        ["pods", "configmaps", "secrets", "nodes", "services"]
    );
}

#[test]
fn nothing_to_do_when_already_aggregated_or_not_aggregating() {
    let all = vec![role("a", json!({"agg": "yes"}), &["pods"])];
    let done = aggregating("t", json!([{"matchLabels": {"agg": "yes"}}]), &["pods"]);
    assert_eq!(aggregate_rules(&done, &all), Plan::Nothing);
    let plain = (*role("t", json!({}), &["x"])).clone();
    assert_eq!(aggregate_rules(&plain, &all), Plan::Nothing);
    // An aggregating role that matches itself does not aggregate its own rules.
    let own = aggregating("t", json!([{"matchLabels": {}}]), &["stale"]);
    let mut all_with_self = all.clone();
    all_with_self.push(Arc::new(own.clone()));
    assert_eq!(resources(&aggregate_rules(&own, &all_with_self)), ["pods"]);
}

#[test]
fn matching_nothing_empties_the_rules() {
    let target = aggregating("t", json!([{"matchLabels": {"agg": "yes"}}]), &["old"]);
    assert_eq!(aggregate_rules(&target, &[]), Plan::SetRules(Vec::new()));
    let empty = aggregating("t", json!([{"matchLabels": {"agg": "yes"}}]), &[]);
    assert_eq!(
        aggregate_rules(&empty, &[]),
        Plan::Nothing,
        "nil and empty rules are equal"
    );
}
