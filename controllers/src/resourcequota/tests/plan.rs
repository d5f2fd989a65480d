//! Table tests of [`crate::resourcequota::plan`].

use apiserver::admission::quota_evaluator::resource_list;
use serde_json::{Value, json};

use crate::resourcequota::plan::{Objects, plan_status, resources_needed};

fn quota(hard: Value, status: Value) -> Value {
    json!({"metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": hard}, "status": status})
}

fn pod(name: &str, cpu: &str, phase: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]},
        "status": {"phase": phase}})
}

fn objects(entries: &[(&str, &str, Vec<Value>)]) -> Objects {
    entries
        .iter()
        .map(|(g, p, items)| ((g.to_string(), p.to_string()), items.clone()))
        .collect()
}

#[test]
fn hard_names_map_to_the_resources_they_count() {
    let hard = resource_list(Some(&json!({
        "pods": "1", "requests.cpu": "1", "limits.memory": "1Gi", "services.nodeports": "2",
        "count/deployments.apps": "3", "count/configmaps": "4", "secrets": "5", "requests.storage": "1Gi",
    })));
    let needed: Vec<(String, String)> = resources_needed(&hard).into_iter().collect();
    let want = [
        ("", "configmaps"),
        ("", "persistentvolumeclaims"),
        ("", "pods"),
        ("", "secrets"),
        ("", "services"),
        ("apps", "deployments"),
    ];
    assert_eq!(needed, want.map(|(g, p)| (g.to_string(), p.to_string())).to_vec());
}

#[test]
fn a_new_quota_gets_hard_and_zero_usage() {
    let q = quota(json!({"pods": "2", "requests.cpu": "1"}), json!({}));
    let status = plan_status(&q, &objects(&[("", "pods", vec![])])).expect("a first status");
    assert_eq!(
        status,
        json!({"hard": {"pods": "2", "requests.cpu": "1"}, "used": {"pods": "0", "requests.cpu": "0"}})
    );
}

#[test]
fn usage_sums_running_pods_and_skips_finished_ones() {
    let q = quota(
        json!({"pods": "5", "requests.cpu": "2", "count/pods": "5"}),
        json!({}),
    );
    let pods = vec![
        pod("a", "250m", "Running"),
        pod("b", "500m", "Pending"),
        pod("c", "1", "Succeeded"),
    ];
    let status = plan_status(&q, &objects(&[("", "pods", pods)])).unwrap();
    assert_eq!(
        status["used"],
        json!({"count/pods": "2", "pods": "2", "requests.cpu": "750m"})
    );
}

#[test]
fn an_up_to_date_status_is_not_written_again() {
    let status = json!({"hard": {"pods": "2"}, "used": {"pods": "1"}});
    let q = quota(json!({"pods": "2"}), status);
    assert_eq!(
        plan_status(&q, &objects(&[("", "pods", vec![pod("a", "1", "Running")])])),
        None
    );
    // A changed spec.hard is written, and the usage of a dropped name goes.
    let q = quota(
        json!({"pods": "3"}),
        json!({"hard": {"pods": "2", "secrets": "1"}, "used": {"pods": "1", "secrets": "0"}}),
    );
    let status = plan_status(&q, &objects(&[("", "pods", vec![pod("a", "1", "Running")])])).unwrap();
    assert_eq!(status, json!({"hard": {"pods": "3"}, "used": {"pods": "1"}}));
}

#[test]
fn scoped_quotas_count_only_the_pods_they_select() {
    let mut q = quota(json!({"pods": "5"}), json!({}));
    q["spec"]["scopes"] = json!(["BestEffort"]);
    let best_effort = json!({"metadata": {"name": "be"}, "spec": {"containers": [{"name": "c"}]}});
    let status = plan_status(
        &q,
        &objects(&[("", "pods", vec![best_effort, pod("a", "1", "Running")])]),
    )
    .unwrap();
    assert_eq!(status["used"], json!({"pods": "1"}));
}
