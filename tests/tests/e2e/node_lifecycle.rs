//! Node failure end to end: the real `kubectl` against an in-process miniplane whose one clock runs
//! [`SCALE`] times faster than real time (3 simulated nodes, every controller, the scheduler and
//! the kubelet; nothing mocked). The manifest is `examples/workloads/node-failure.yaml`.
//!
//! One node's kubelet is stopped with `kubectl annotate node NODE sim.miniplane.dev/heartbeat=stopped`:
//! * after the node lifecycle controller's grace period `kubectl get nodes` shows it `NotReady`, its
//!   conditions `Unknown` ("Kubelet stopped posting node status."), and it is tainted
//!   `node.kubernetes.io/unreachable` (`NoSchedule` and `NoExecute`);
//! * its pods are marked not Ready, then evicted by the taint-eviction controller when their default
//!   300 s toleration runs out (measured on the simulated clock, from the taint's `timeAdded` to the
//!   pods' `DisruptionTarget` condition), with `TaintManagerEviction` events;
//! * the Deployment's ReplicaSet replaces its pods on the other nodes; the StatefulSet's pod stays
//!   Terminating, the same pod (uid), and is not created a second time while the kubelet is away;
//! * `kubectl annotate node NODE sim.miniplane.dev/heartbeat-` brings the kubelet back: the node is
//!   Ready and untainted, the Terminating pods are removed, and the StatefulSet creates its pod again.
//!
//! A Node a user creates with the annotation `sim.miniplane.dev/node: simulated` is adopted by the
//! simulated kubelet: Ready, heartbeating past the grace period (so never tainted), running the
//! pods bound to it.
//!
//! At [`SCALE`] 40 the grace period is 320 simulated seconds (never less than 8 real seconds: the
//! simulated kubelet heartbeats at most once per real second), so the whole story takes about 20 s.

use std::time::{Duration, SystemTime};

use e2e::{Cluster, Config};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 40.0;
const EXAMPLE: &str = include_str!("../../../examples/workloads/node-failure.yaml");
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// Default tolerationSeconds of the not-ready / unreachable tolerations.
const TOLERATION: SignedDuration = SignedDuration::from_secs(300);

async fn cluster() -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        sim: Some(SimConfig {
            nodes: 3,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    })
    .await
}

fn now(c: &Cluster) -> Timestamp {
    let now: SystemTime = c.server().api().clock().now();
    Timestamp::try_from(now).expect("a representable time")
}

fn items(list: &Value) -> &[Value] {
    list["items"].as_array().map_or(&[], Vec::as_slice)
}

fn name(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

fn uid(o: &Value) -> &str {
    o["metadata"]["uid"].as_str().unwrap_or_default()
}

fn condition<'a>(o: &'a Value, type_: &str) -> Option<&'a Value> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

fn is_true(o: &Value, type_: &str) -> bool {
    condition(o, type_).is_some_and(|c| c["status"] == "True")
}

fn terminating(pod: &Value) -> bool {
    !pod["metadata"]["deletionTimestamp"].is_null()
}

fn app(pod: &Value) -> &str {
    pod["metadata"]["labels"]["app"].as_str().unwrap_or_default()
}

fn node_of(pod: &Value) -> &str {
    pod["spec"]["nodeName"].as_str().unwrap_or_default()
}

fn time(v: &Value) -> Timestamp {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a timestamp: {v}"))
}

/// The node's taints as `key:effect`.
fn taints(node: &Value) -> Vec<String> {
    node["spec"]["taints"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    format!(
                        "{}:{}",
                        t["key"].as_str().unwrap_or(""),
                        t["effect"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Polls `kubectl get nodes` (the table) until the node's row shows `status`.
async fn wait_for_status_column(c: &Cluster, node: &str, status: &str) -> String {
    let polled = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let table = c.ok(&["get", "nodes"]).await;
            let row = table.lines().find(|l| l.split_whitespace().next() == Some(node));
            if let Some(row) = row
                && row.split_whitespace().nth(1) == Some(status)
            {
                return table;
            }
            c.sleep_real(Duration::from_millis(100)).await;
        }
    });
    polled
        .await
        .unwrap_or_else(|_| panic!("kubectl get nodes never showed {node} {status}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_kubelet_stops_is_tainted_and_emptied_and_recovers_when_it_starts_again() {
    let mut c = cluster().await;
    c.eventually_json(&["get", "nodes"], "three Ready nodes", |v| {
        items(v).len() == 3 && items(v).iter().all(|n| is_true(n, "Ready"))
    })
    .await;
    c.run_with_yaml(&["apply"], EXAMPLE).await;
    let pods = c
        .eventually_json(&["get", "pods"], "9 pods Running and Ready", |v| {
            items(v).len() == 9 && items(v).iter().all(|p| is_true(p, "Ready"))
        })
        .await;

    // The node to stop: one running a db pod and some web pods (the scheduler spreads them).
    let all = items(&pods);
    let db = all
        .iter()
        .find(|p| app(p) == "db" && all.iter().any(|w| app(w) == "web" && node_of(w) == node_of(p)))
        .expect("a node with db and web pods");
    let node = node_of(db).to_owned();
    let (db_name, db_uid) = (name(db).to_owned(), uid(db).to_owned());
    let victims: Vec<(String, String)> = all
        .iter()
        .filter(|p| node_of(p) == node)
        .map(|p| (name(p).to_owned(), uid(p).to_owned()))
        .collect();

    // Stop its kubelet.
    let stopped_at = now(&c);
    c.ok(&["annotate", "node", &node, "sim.miniplane.dev/heartbeat=stopped"])
        .await;

    // NotReady after the grace period, conditions Unknown.
    wait_for_status_column(&c, &node, "NotReady").await;
    let waited = stopped_at.duration_until(now(&c));
    assert!(
        waited >= SignedDuration::from_secs(50),
        "NotReady after {waited:?}"
    );
    let n = c.json(&["get", "node", &node]).await;
    let ready = condition(&n, "Ready").expect("a Ready condition");
    assert_eq!(ready["status"], "Unknown");
    assert_eq!(ready["reason"], "NodeStatusUnknown");
    assert_eq!(ready["message"], "Kubelet stopped posting node status.");
    let memory = condition(&n, "MemoryPressure").expect("a MemoryPressure condition");
    assert_eq!(memory["status"], "Unknown");

    // Tainted unreachable, NoSchedule and NoExecute.
    let n = c
        .eventually_json(&["get", "node", &node], "the unreachable taints", |n| {
            let t = taints(n);
            t.contains(&format!("{UNREACHABLE}:NoExecute"))
                && t.contains(&format!("{UNREACHABLE}:NoSchedule"))
        })
        .await;
    let tainted_at = n["spec"]["taints"]
        .as_array()
        .and_then(|ts| {
            ts.iter()
                .find(|t| t["key"] == UNREACHABLE && t["effect"] == "NoExecute")
        })
        .map(|t| time(&t["timeAdded"]))
        .expect("the NoExecute taint's timeAdded");
    let described = c.ok(&["describe", "node", &node]).await;
    assert!(described.contains(UNREACHABLE), "{described}");

    // Its pods are marked not Ready at once.
    c.eventually_json(&["get", "pods"], "the node's pods not Ready", |v| {
        items(v)
            .iter()
            .filter(|p| node_of(p) == node)
            .all(|p| condition(p, "Ready").is_some_and(|r| r["status"] == "False"))
    })
    .await;

    // Evicted when their 300 s toleration runs out.
    let pods = c
        .eventually_json(&["get", "pods"], "the node's pods Terminating", |v| {
            victims
                .iter()
                .all(|(n, _)| items(v).iter().any(|p| name(p) == n && terminating(p)))
        })
        .await;
    for (victim, _) in &victims {
        let pod = items(&pods)
            .iter()
            .find(|p| name(p) == victim)
            .expect("the victim");
        let target = condition(pod, "DisruptionTarget").expect("DisruptionTarget");
        assert_eq!(target["reason"], "DeletionByTaintManager");
        let after = tainted_at.duration_until(time(&target["lastTransitionTime"]));
        assert!(
            after >= TOLERATION && after <= TOLERATION + SignedDuration::from_secs(60),
            "{victim} evicted {after:?} after the taint"
        );
    }
    let events = c
        .ok(&["get", "events", "--field-selector", "reason=TaintManagerEviction"])
        .await;
    for (victim, _) in &victims {
        assert!(
            events.contains(&format!("Marking for deletion Pod default/{victim}")),
            "{events}"
        );
    }

    // The Deployment's pods are replaced on the other nodes.
    c.eventually_json(
        &["get", "pods", "-l", "app=web"],
        "6 web pods Ready elsewhere",
        |v| {
            let live: Vec<&Value> = items(v).iter().filter(|p| !terminating(p)).collect();
            live.len() == 6 && live.iter().all(|p| node_of(p) != node && is_true(p, "Ready"))
        },
    )
    .await;

    // The StatefulSet's pod stays Terminating, the same pod, and is not created again meanwhile.
    c.sleep_real(Duration::from_millis(1500)).await;
    let db_pods = c.json(&["get", "pods", "-l", "app=db"]).await;
    let same: Vec<&Value> = items(&db_pods).iter().filter(|p| name(p) == db_name).collect();
    assert_eq!(same.len(), 1);
    assert_eq!(uid(same[0]), db_uid, "{db_name} is still the old pod");
    assert!(terminating(same[0]), "{db_name} is Terminating");
    assert_eq!(items(&db_pods).len(), 3, "no extra db pod");

    // The kubelet is back.
    c.ok(&["annotate", "node", &node, "sim.miniplane.dev/heartbeat-"])
        .await;
    wait_for_status_column(&c, &node, "Ready").await;
    c.eventually_json(&["get", "node", &node], "no unreachable taint", |n| {
        !taints(n).iter().any(|t| t.starts_with(UNREACHABLE))
    })
    .await;
    // Its Terminating pods are removed; the StatefulSet creates its pod again.
    c.eventually_json(&["get", "pods"], "the old pods gone, db recreated", |v| {
        let gone = victims.iter().all(|(_, u)| !items(v).iter().any(|p| uid(p) == u));
        let db_back = items(v)
            .iter()
            .any(|p| name(p) == db_name && uid(p) != db_uid && is_true(p, "Ready"));
        let web = items(v)
            .iter()
            .filter(|p| app(p) == "web" && is_true(p, "Ready"))
            .count();
        gone && db_back && web == 6
    })
    .await;
    c.stop().await;
}

const ADOPTED_NODE: &str = r#"apiVersion: v1
kind: Node
metadata:
  name: edge-1
  labels: {zone: edge}
  annotations:
    sim.miniplane.dev/node: simulated
---
apiVersion: v1
kind: Pod
metadata:
  name: on-edge
spec:
  nodeSelector: {zone: edge}
  containers:
  - name: app
    image: nginx:1.27
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_created_with_the_simulated_annotation_is_run_by_the_simulated_kubelet() {
    let mut c = cluster().await;
    let created = c.run_with_yaml(&["create"], ADOPTED_NODE).await;
    assert!(created.success, "{}", created.stderr);
    wait_for_status_column(&c, "edge-1", "Ready").await;
    c.eventually_json(&["get", "pod", "on-edge"], "on-edge Running on edge-1", |p| {
        node_of(p) == "edge-1" && is_true(p, "Ready")
    })
    .await;
    // Past the node lifecycle controller's grace period (320 s here) it is still Ready and untainted:
    // its kubelet heartbeats.
    let since = now(&c);
    while since.duration_until(now(&c)) < SignedDuration::from_secs(400) {
        c.sleep_real(Duration::from_millis(500)).await;
    }
    let n = c.json(&["get", "node", "edge-1"]).await;
    assert!(is_true(&n, "Ready"), "{}", n["status"]);
    assert!(taints(&n).is_empty(), "{:?}", taints(&n));
    c.stop().await;
}
