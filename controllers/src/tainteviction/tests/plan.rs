//! Table tests of [`crate::tainteviction::plan`]: toleration matching, the minimum toleration
//! time (upstream `TestGetMinTolerationTime`), and the decision with its time.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Taint, Toleration};
use serde_json::json;

use crate::tainteviction::plan::{
    Decision, Scheduled, matching_tolerations, min_toleration_time, process_pod_on_node, tolerates,
};

fn now() -> Timestamp {
    "2025-05-01T10:00:00Z".parse().unwrap()
}

fn taint(key: &str, value: Option<&str>) -> Taint {
    Taint {
        key: key.into(),
        value: value.map(str::to_owned),
        effect: "NoExecute".into(),
        time_added: None,
    }
}

fn toleration(v: serde_json::Value) -> Toleration {
    serde_json::from_value(v).unwrap()
}

/// The tolerations the API server adds to every pod (DefaultTolerationSeconds).
fn default_tolerations() -> Vec<Toleration> {
    ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
        .iter()
        .map(|k| {
            toleration(
                json!({"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}),
            )
        })
        .collect()
}

#[test]
fn tolerations_match_taints_as_upstreams_tolerates_taint() {
    let t = taint("k", Some("v"));
    let cases = [
        (
            json!({"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"}),
            true,
        ),
        (json!({"key": "k", "value": "v"}), true),
        (json!({"key": "k", "value": "other"}), false),
        (json!({"key": "k", "operator": "Exists"}), true),
        (json!({"operator": "Exists"}), true),
        (
            json!({"key": "k", "operator": "Exists", "effect": "NoSchedule"}),
            false,
        ),
        (json!({"key": "other", "operator": "Exists"}), false),
        (json!({"key": "k", "operator": "Lt", "value": "v"}), false),
    ];
    for (tol, want) in cases {
        assert_eq!(tolerates(&toleration(tol.clone()), &t), want, "{tol}");
    }
}

#[test]
fn every_taint_needs_a_toleration() {
    let tolerations = default_tolerations();
    let taints = [taint("node.kubernetes.io/unreachable", None)];
    let used = matching_tolerations(&taints, &tolerations).expect("tolerated");
    assert_eq!(used.len(), 1);
    assert_eq!(used[0].key.as_deref(), Some("node.kubernetes.io/unreachable"));
    let more = [
        taint("node.kubernetes.io/unreachable", None),
        taint("example.com/x", None),
    ];
    assert_eq!(matching_tolerations(&more, &tolerations), None);
}

#[test]
fn the_smallest_toleration_seconds_wins() {
    let secs = |s: Option<i64>| toleration(json!({"operator": "Exists", "tolerationSeconds": s}));
    let cases: [(Vec<Toleration>, Option<u64>); 6] = [
        (vec![], Some(0)),
        (vec![secs(None)], None),
        (vec![secs(Some(10)), secs(Some(20))], Some(10)),
        (vec![secs(None), secs(Some(5))], Some(5)),
        (vec![secs(Some(-1)), secs(Some(5))], Some(0)),
        (vec![secs(Some(0))], Some(0)),
    ];
    for (tolerations, want) in cases {
        let used: Vec<&Toleration> = tolerations.iter().collect();
        assert_eq!(
            min_toleration_time(&used),
            want.map(Duration::from_secs),
            "{tolerations:?}"
        );
    }
}

/// (name, the node's NoExecute taints, the pod's tolerations, what was scheduled, the decision).
type Case<'a> = (&'a str, &'a [Taint], Vec<Toleration>, Option<Scheduled>, Decision);

#[test]
fn the_decision_follows_the_taints_the_tolerations_and_what_was_scheduled() {
    let unreachable = vec![taint("node.kubernetes.io/unreachable", None)];
    let custom = vec![taint("example.com/evict", None)];
    let forever = vec![toleration(json!({"operator": "Exists"}))];
    let in_300 = now() + SignedDuration::from_secs(300);
    let earlier = now() - SignedDuration::from_secs(100);
    let pending = Scheduled::Pending {
        created_at: earlier,
        fire_at: earlier + SignedDuration::from_secs(300),
    };
    let cases: Vec<Case> = vec![
        (
            "no taint",
            &[],
            default_tolerations(),
            Some(pending),
            Decision::Cancel,
        ),
        (
            "untolerated",
            &custom,
            default_tolerations(),
            None,
            Decision::EvictNow,
        ),
        (
            "untolerated, already evicted",
            &custom,
            vec![],
            Some(Scheduled::Fired),
            Decision::Keep,
        ),
        (
            "tolerated forever",
            &unreachable,
            forever.clone(),
            Some(pending),
            Decision::Cancel,
        ),
        (
            "default 300 s",
            &unreachable,
            default_tolerations(),
            None,
            Decision::EvictAt {
                created_at: now(),
                fire_at: in_300,
            },
        ),
        (
            "the countdown is not restarted",
            &unreachable,
            default_tolerations(),
            Some(pending),
            Decision::EvictAt {
                created_at: earlier,
                fire_at: earlier + SignedDuration::from_secs(300),
            },
        ),
        (
            "already evicted",
            &unreachable,
            default_tolerations(),
            Some(Scheduled::Fired),
            Decision::Keep,
        ),
    ];
    for (name, taints, tolerations, scheduled, want) in cases {
        assert_eq!(
            process_pod_on_node(taints, &tolerations, scheduled, now()),
            want,
            "{name}"
        );
    }
}
