//! Tests of the node-update filter of the event handlers (upstream `TestNodeInSameCondition`,
//! `shouldIgnoreNodeUpdate`).

use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeStatus};

use super::fixtures::node;
use crate::daemon::controller::{node_in_same_condition, should_ignore_node_update};

fn cond(type_: &str, status: &str, heartbeat: i64) -> NodeCondition {
    NodeCondition {
        type_: type_.into(),
        status: status.into(),
        last_heartbeat_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            super::fixtures::t(heartbeat),
        )),
        ..NodeCondition::default()
    }
}

fn with(conditions: Vec<NodeCondition>) -> Node {
    let mut n = node("n1").label("a", "b").build();
    n.status = Some(NodeStatus {
        conditions: Some(conditions),
        ..NodeStatus::default()
    });
    n
}

#[test]
fn same_condition_compares_the_true_types() {
    assert!(node_in_same_condition(&[], &[]));
    assert!(node_in_same_condition(
        &[cond("Ready", "True", 0), cond("DiskPressure", "False", 0)],
        &[cond("Ready", "True", 5)]
    ));
    assert!(!node_in_same_condition(
        &[cond("Ready", "True", 0)],
        &[cond("Ready", "False", 0)]
    ));
    assert!(!node_in_same_condition(&[], &[cond("MemoryPressure", "True", 0)]));
}

#[test]
fn heartbeats_are_ignored_label_and_taint_changes_are_not() {
    let old = with(vec![cond("Ready", "True", 0)]);
    let mut beat = with(vec![cond("Ready", "True", 10)]);
    beat.metadata.resource_version = Some("7".into());
    assert!(should_ignore_node_update(&old, &beat));
    let mut relabelled = beat.clone();
    relabelled
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("a".into(), "c".into());
    assert!(!should_ignore_node_update(&old, &relabelled));
    let not_ready = with(vec![cond("Ready", "False", 10)]);
    assert!(!should_ignore_node_update(&old, &not_ready));
    let mut tainted = old.clone();
    tainted.spec = node("n1").taint("k", "", "NoSchedule").build().spec;
    assert!(!should_ignore_node_update(&old, &tainted));
}
