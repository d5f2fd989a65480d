//! The pod garbage collector, end to end: the real `kubectl` against an in-process miniplane
//! whose one clock runs [`SCALE`] times faster than real time (3 simulated nodes, controllers,
//! scheduler and kubelet; nothing mocked).
//!
//! Covered:
//! * `kubectl delete node` of a node with running pods → after the 40 s quarantine the pod GC
//!   marks them Failed with `DisruptionTarget` / `DeletionByPodGC` and deletes them, and their
//!   ReplicaSet replaces them on the other nodes (the example
//!   `examples/workloads/replicaset-node-deleted.yaml`);
//! * non-graceful node shutdown: a stopped kubelet (`sim.miniplane.dev/heartbeat: stopped`), the
//!   node NotReady, `kubectl taint ... node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`
//!   → the taint eviction controller deletes the pods, they stay Terminating, and the pod GC
//!   force-deletes them (marked Failed first).
//!
//! Both fail with `--controllers=*,-podgc` (checked by hand): nothing else removes these pods.
//!
//! * the terminated-pod threshold (`SimConfig::terminated_pod_gc_threshold`, the flag
//!   `--terminated-pod-gc-threshold`): of five finished pods only the two newest stay.

use std::collections::{BTreeMap, BTreeSet};
use std::time::SystemTime;

use apiserver::api::{ListOptions, WatchEvent, WatchOptions, WatchStream};
use e2e::{Cluster, Config, PATIENCE};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 40.0;
const EXAMPLE: &str = include_str!("../../../examples/workloads/replicaset-node-deleted.yaml");
const VICTIM_NODE: &str = "miniplane-worker-3";

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

fn name(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

fn node_of(o: &Value) -> &str {
    o["spec"]["nodeName"].as_str().unwrap_or_default()
}

fn items(v: &Value) -> Vec<Value> {
    v["items"].as_array().cloned().unwrap_or_default()
}

/// The server's clock now, as seconds since the epoch.
fn now_secs(c: &Cluster) -> f64 {
    let now = c.server().api().clock().now();
    now.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64()
}

/// An RFC 3339 timestamp as seconds since the epoch.
fn secs_of(ts: &str) -> f64 {
    let t: k8s_openapi::jiff::Timestamp = ts.parse().unwrap_or_else(|e| panic!("{ts:?}: {e}"));
    t.as_millisecond() as f64 / 1000.0
}

/// Applies the example and waits until its 6 pods run; returns the names of those on `node`
/// (at least one: the scheduler spreads them over every node).
async fn six_pods_running(c: &Cluster, node: &str) -> BTreeSet<String> {
    let applied = c.run_with_yaml(&["apply"], EXAMPLE).await;
    assert!(applied.success, "{}", applied.stderr);
    let running = c
        .eventually_json(&["get", "pods", "-l", "app=survivor"], "6 running pods", |v| {
            let pods = items(v);
            pods.len() == 6 && pods.iter().all(|p| p["status"]["phase"] == "Running")
        })
        .await;
    let on_node: BTreeSet<String> = items(&running)
        .iter()
        .filter(|p| node_of(p) == node)
        .map(name)
        .collect();
    assert!(
        !on_node.is_empty(),
        "the scheduler spreads the pods over every node"
    );
    on_node
}

/// A watch of the pods of `default` from now on, through the server.
fn watch_pods(c: &Cluster) -> WatchStream {
    let api = c.server().api().clone();
    let pods = api.resource("", "v1", "pods").expect("pods are served");
    let listed = api
        .list(&pods, Some("default"), &ListOptions::default())
        .expect("list");
    let opts = WatchOptions {
        resource_version: Some(listed.resource_version),
        ..Default::default()
    };
    api.watch(&pods, Some("default"), &opts).expect("watch")
}

/// Reads `events` until every pod of `victims` was deleted; the last state of each.
async fn deleted(events: &mut WatchStream, victims: &BTreeSet<String>) -> BTreeMap<String, Value> {
    let mut last_state = BTreeMap::new();
    let collected = tokio::time::timeout(PATIENCE, async {
        while last_state.len() < victims.len() {
            match events.recv().await {
                Some(WatchEvent::Deleted(o)) if victims.contains(&name(&o)) => {
                    last_state.insert(name(&o), o);
                }
                Some(_) => {}
                None => panic!("the watch ended"),
            }
        }
    })
    .await;
    assert!(
        collected.is_ok(),
        "victims deleted: {:?} of {victims:?}",
        last_state.keys()
    );
    last_state
}

/// The pod's condition of `type_`.
fn condition<'a>(pod: &'a Value, type_: &str) -> Option<&'a Value> {
    let conditions = pod["status"]["conditions"].as_array()?;
    conditions.iter().find(|c| c["type"] == type_)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_of_a_deleted_node_are_collected_after_the_quarantine_and_replaced_elsewhere() {
    let mut c = cluster().await;
    let victims = six_pods_running(&c, VICTIM_NODE).await;
    let mut events = watch_pods(&c);

    let deleted_at = now_secs(&c);
    c.ok(&["delete", "node", VICTIM_NODE]).await;
    let last_state = deleted(&mut events, &victims).await;

    for (pod, o) in &last_state {
        assert_eq!(
            o["status"]["phase"], "Failed",
            "{pod} was marked Failed first: {o:#}"
        );
        let conditions = o["status"]["conditions"].as_array().cloned().unwrap_or_default();
        let target = conditions
            .iter()
            .find(|c| c["type"] == "DisruptionTarget")
            .unwrap_or_else(|| panic!("{pod} has a DisruptionTarget condition: {o:#}"));
        assert_eq!(target["status"], "True");
        assert_eq!(target["reason"], "DeletionByPodGC");
        assert_eq!(target["message"], "PodGC: node no longer exists");
        // Marked by the pass after the quarantine: 40 s of simulated time after the node went
        // (the timestamp is rounded down to the second), at most a period of 20 s later.
        let after = secs_of(target["lastTransitionTime"].as_str().unwrap()) - deleted_at;
        assert!(
            after >= 39.0,
            "{pod} collected {after:.1} s after the node was deleted: quarantined"
        );
        assert!(
            after <= 90.0,
            "{pod} collected {after:.1} s after the node was deleted"
        );
    }

    let replaced = c
        .eventually_json(
            &["get", "pods", "-l", "app=survivor"],
            "6 pods on the other nodes",
            |v| {
                let pods = items(v);
                pods.len() == 6
                    && pods.iter().all(|p| {
                        p["status"]["phase"] == "Running"
                            && node_of(p) != VICTIM_NODE
                            && !victims.contains(&name(p))
                    })
            },
        )
        .await;
    let on: BTreeSet<String> = items(&replaced).iter().map(|p| node_of(p).to_string()).collect();
    assert_eq!(
        on,
        BTreeSet::from(["miniplane-worker-1".to_string(), "miniplane-worker-2".to_string()])
    );
    let left = c.ok(&["get", "nodes", "-o", "name"]).await;
    assert!(!left.contains(VICTIM_NODE), "{left}");
    c.stop().await;
}

/// Upstream's non-graceful node shutdown: a node whose kubelet is gone for good is tainted
/// `node.kubernetes.io/out-of-service` by its administrator; the taint eviction controller
/// deletes its pods, which stay Terminating (no kubelet finishes them), and the pod GC's
/// `gcTerminating` marks them Failed and force-deletes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminating_pods_of_an_out_of_service_node_are_force_deleted() {
    let node = "miniplane-worker-2";
    let mut c = cluster().await;
    let victims = six_pods_running(&c, node).await;
    // The simulated kubelet of the node stops (what `miniplane node stop` does).
    c.ok(&["annotate", "node", node, "sim.miniplane.dev/heartbeat=stopped"])
        .await;
    c.eventually_json(&["get", "node", node], "the node NotReady", |n| {
        condition(n, "Ready").is_some_and(|r| r["status"] == "Unknown")
    })
    .await;
    let mut events = watch_pods(&c);
    c.ok(&[
        "taint",
        "node",
        node,
        "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute",
    ])
    .await;
    let last_state = deleted(&mut events, &victims).await;
    for (pod, o) in &last_state {
        // Failed: written by the pod GC before its delete (nothing else runs this pod).
        assert_eq!(o["status"]["phase"], "Failed", "{pod}: {o:#}");
        assert!(
            o["metadata"]["deletionTimestamp"].is_string(),
            "{pod} was Terminating first"
        );
    }
    c.eventually_json(&["get", "pods", "-l", "app=survivor"], "6 pods elsewhere", |v| {
        let pods = items(v);
        pods.len() == 6
            && pods
                .iter()
                .all(|p| p["status"]["phase"] == "Running" && node_of(p) != node)
    })
    .await;
    c.stop().await;
}

/// Five pods that exit at once, created one after another (so their creation times differ).
fn finished_pod(i: usize) -> String {
    format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: done-{i}
  labels: {{app: done}}
  annotations: {{sim.miniplane.dev/run-seconds: "1"}}
spec:
  restartPolicy: Never
  containers: [{{name: c, image: busybox:1.36}}]
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_pods_beyond_the_threshold_go_oldest_first() {
    let c = Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        sim: Some(SimConfig {
            nodes: 3,
            terminated_pod_gc_threshold: 2,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    })
    .await;
    for i in 0..5 {
        let created = c.run_with_yaml(&["create"], &finished_pod(i)).await;
        assert!(created.success, "{}", created.stderr);
        // One simulated second apart: the creation timestamps order them.
        c.server()
            .api()
            .clock()
            .sleep(std::time::Duration::from_secs(1))
            .await;
    }
    let left = c
        .eventually_json(
            &["get", "pods", "-l", "app=done"],
            "two finished pods left",
            |v| {
                let pods = items(v);
                pods.len() == 2 && pods.iter().all(|p| p["status"]["phase"] == "Succeeded")
            },
        )
        .await;
    let names: BTreeSet<String> = items(&left).iter().map(name).collect();
    assert_eq!(
        names,
        BTreeSet::from(["done-3".to_string(), "done-4".to_string()])
    );
}
