//! Table tests of [`node_should_run_daemon_pod`] and the pod-shaping helpers (upstream
//! `TestNodeShouldRunDaemonPod`, `TestReplaceDaemonSetPodNodeNameNodeAffinity`,
//! `TestGetTargetNodeName`, `TestAddOrUpdateDaemonPodTolerations`).

use super::fixtures::{DsBuilder, NodeBuilder, ds, node, pod};
use crate::daemon::placement::*;

fn run(d: DsBuilder, n: NodeBuilder) -> (bool, bool) {
    let s = node_should_run_daemon_pod(&n.build(), &d.build());
    (s.should_run, s.should_continue_running)
}

#[test]
fn should_run_table() {
    let cases: Vec<(&str, DsBuilder, NodeBuilder, (bool, bool))> = vec![
        ("plain node", ds("a"), node("n1"), (true, true)),
        (
            "nodeSelector matches",
            ds("a").node_selector("disk", "ssd"),
            node("n1").label("disk", "ssd"),
            (true, true),
        ),
        (
            "nodeSelector differs",
            ds("a").node_selector("disk", "ssd"),
            node("n1").label("disk", "hdd"),
            (false, false),
        ),
        (
            "nodeSelector label missing",
            ds("a").node_selector("disk", "ssd"),
            node("n1"),
            (false, false),
        ),
        (
            "template nodeName other node",
            ds("a").node_name("n2"),
            node("n1"),
            (false, false),
        ),
        (
            "template nodeName this node",
            ds("a").node_name("n1"),
            node("n1"),
            (true, true),
        ),
        (
            "required affinity In",
            ds("a").required(&[("zone", "In", &["a", "b"])]),
            node("n1").label("zone", "b"),
            (true, true),
        ),
        (
            "required affinity NotIn",
            ds("a").required(&[("zone", "NotIn", &["b"])]),
            node("n1").label("zone", "b"),
            (false, false),
        ),
        (
            "terms are ORed",
            ds("a")
                .required(&[("zone", "In", &["x"])])
                .required(&[("gpu", "Exists", &[])]),
            node("n1").label("gpu", "1"),
            (true, true),
        ),
        (
            "Gt",
            ds("a").required(&[("cores", "Gt", &["4"])]),
            node("n1").label("cores", "8"),
            (true, true),
        ),
        (
            "invalid term matches nothing",
            ds("a").required(&[("zone", "In", &[])]),
            node("n1").label("zone", "a"),
            (false, false),
        ),
        (
            "NoSchedule taint, not tolerated: stay, no new",
            ds("a"),
            node("n1").taint("dedicated", "infra", "NoSchedule"),
            (false, true),
        ),
        (
            "NoExecute taint, not tolerated: go",
            ds("a"),
            node("n1").taint("dedicated", "infra", "NoExecute"),
            (false, false),
        ),
        (
            "PreferNoSchedule ignored",
            ds("a"),
            node("n1").taint("dedicated", "infra", "PreferNoSchedule"),
            (true, true),
        ),
        (
            "tolerated by key Exists",
            ds("a").toleration("dedicated", "Exists", "", "NoSchedule"),
            node("n1").taint("dedicated", "infra", "NoSchedule"),
            (true, true),
        ),
        (
            "tolerated by Equal value",
            ds("a").toleration("dedicated", "Equal", "infra", ""),
            node("n1").taint("dedicated", "infra", "NoExecute"),
            (true, true),
        ),
        (
            "Equal with other value",
            ds("a").toleration("dedicated", "Equal", "gpu", ""),
            node("n1").taint("dedicated", "infra", "NoSchedule"),
            (false, true),
        ),
        (
            "tolerate everything",
            ds("a").toleration("", "Exists", "", ""),
            node("n1").taint("x", "y", "NoExecute"),
            (true, true),
        ),
        (
            "default: unschedulable tolerated",
            ds("a"),
            node("n1").taint(TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule"),
            (true, true),
        ),
        (
            "default: disk-pressure tolerated",
            ds("a"),
            node("n1").taint(TAINT_NODE_DISK_PRESSURE, "", "NoSchedule"),
            (true, true),
        ),
        (
            "default: memory-pressure tolerated",
            ds("a"),
            node("n1").taint(TAINT_NODE_MEMORY_PRESSURE, "", "NoSchedule"),
            (true, true),
        ),
        (
            "default: pid-pressure tolerated",
            ds("a"),
            node("n1").taint(TAINT_NODE_PID_PRESSURE, "", "NoSchedule"),
            (true, true),
        ),
        (
            "default: not-ready NoExecute tolerated",
            ds("a"),
            node("n1").taint(TAINT_NODE_NOT_READY, "", "NoExecute"),
            (true, true),
        ),
        (
            "default: unreachable NoExecute tolerated",
            ds("a"),
            node("n1").taint(TAINT_NODE_UNREACHABLE, "", "NoExecute"),
            (true, true),
        ),
        (
            "not-ready NoSchedule is not a default",
            ds("a"),
            node("n1").taint(TAINT_NODE_NOT_READY, "", "NoSchedule"),
            (false, true),
        ),
        (
            "network-unavailable: only hostNetwork",
            ds("a"),
            node("n1").taint(TAINT_NODE_NETWORK_UNAVAILABLE, "", "NoSchedule"),
            (false, true),
        ),
        (
            "network-unavailable with hostNetwork",
            ds("a").host_network(),
            node("n1").taint(TAINT_NODE_NETWORK_UNAVAILABLE, "", "NoSchedule"),
            (true, true),
        ),
        (
            "selector mismatch wins over taints",
            ds("a").node_selector("k", "v"),
            node("n1").taint("x", "", "NoSchedule"),
            (false, false),
        ),
    ];
    for (name, d, n, want) in cases {
        assert_eq!(run(d, n), want, "{name}");
    }
}

#[test]
fn default_tolerations_are_added_once_and_kept() {
    let mut spec = ds("a")
        .toleration(TAINT_NODE_NOT_READY, "Exists", "", "NoExecute")
        .build()
        .spec
        .unwrap()
        .template
        .spec
        .unwrap();
    add_or_update_daemon_pod_tolerations(&mut spec);
    add_or_update_daemon_pod_tolerations(&mut spec);
    let tolerations = spec.tolerations.unwrap();
    assert_eq!(tolerations.len(), 6, "{tolerations:?}");
    let keys: Vec<_> = tolerations.iter().map(|t| t.key.clone().unwrap()).collect();
    assert_eq!(
        keys,
        [
            TAINT_NODE_NOT_READY,
            TAINT_NODE_UNREACHABLE,
            TAINT_NODE_DISK_PRESSURE,
            TAINT_NODE_MEMORY_PRESSURE,
            TAINT_NODE_PID_PRESSURE,
            TAINT_NODE_UNSCHEDULABLE
        ]
    );
    assert!(tolerations.iter().all(|t| t.toleration_seconds.is_none()));
}

#[test]
fn created_template_carries_hash_generation_and_tolerations() {
    let d = ds("a").host_network().build();
    let template = create_pod_template(&d.spec.unwrap().template, Some(3), "h1");
    let labels = template.metadata.unwrap().labels.unwrap();
    assert_eq!(
        labels
            .get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY)
            .map(String::as_str),
        Some("h1")
    );
    assert_eq!(
        labels.get(DAEMON_SET_TEMPLATE_GENERATION_KEY).map(String::as_str),
        Some("3")
    );
    assert_eq!(labels.get("app").map(String::as_str), Some("a"));
    assert_eq!(template.spec.unwrap().tolerations.unwrap().len(), 7);
}

#[test]
fn node_affinity_is_replaced_by_the_target_node() {
    let d = ds("a").required(&[("zone", "In", &["a"])]).build();
    let affinity = d.spec.unwrap().template.spec.unwrap().affinity;
    let replaced = replace_daemon_set_pod_node_name_node_affinity(affinity, "n7");
    let terms = replaced
        .node_affinity
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .unwrap()
        .node_selector_terms;
    assert_eq!(terms.len(), 1);
    assert!(terms[0].match_expressions.is_none());
    let fields = terms[0].match_fields.clone().unwrap();
    assert_eq!(
        (fields[0].key.as_str(), fields[0].operator.as_str()),
        ("metadata.name", "In")
    );
    assert_eq!(fields[0].values, Some(vec!["n7".to_string()]));
}

#[test]
fn target_node_name_from_node_name_or_affinity() {
    assert_eq!(get_target_node_name(&pod("p").on("n1").build()), Some("n1"));
    assert_eq!(get_target_node_name(&pod("p").pinned("n2").build()), Some("n2"));
    assert_eq!(get_target_node_name(&pod("p").build()), None);
    // Bound wins over the affinity.
    assert_eq!(
        get_target_node_name(&pod("p").pinned("n2").on("n3").build()),
        Some("n3")
    );
}

#[test]
fn pod_updated_by_hash_or_generation() {
    let p = pod("p").hash("h1").build();
    assert!(is_pod_updated(&p, "h1", None));
    assert!(!is_pod_updated(&p, "h2", None));
    assert!(!is_pod_updated(&p, "", None));
    let mut g = pod("p").build();
    g.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(DAEMON_SET_TEMPLATE_GENERATION_KEY.into(), "4".into());
    assert!(is_pod_updated(&g, "h9", Some(4)));
    assert!(!is_pod_updated(&g, "h9", Some(5)));
}
