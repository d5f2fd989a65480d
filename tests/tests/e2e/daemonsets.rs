//! DaemonSets, end to end: the real `kubectl` against an in-process miniplane whose clock runs
//! [`SCALE`] times faster than real time (3 simulated nodes, controllers, scheduler and kubelet;
//! nothing mocked). The manifests are the examples in `examples/workloads/daemonset-*.yaml`.
//!
//! Covered:
//! * one pod on each of the 3 nodes, pinned by `matchFields metadata.name`, labelled with its
//!   revision's `controller-revision-hash`; `kubectl rollout status daemonset` succeeds;
//! * a surge update (`maxSurge: 1, maxUnavailable: 0`): a pod watch in the test checks after every
//!   event that every node has an available (Ready, not terminating) pod; `rollout status` prints
//!   upstream's messages; `rollout history` lists both revisions; `rollout undo` (kubectl sends the
//!   revision's data as a strategic merge patch with `$patch: replace`) goes back and renumbers the
//!   old revision; the SuccessfulCreate / SuccessfulDelete events;
//! * placement: a nodeSelector picks the labelled nodes; relabelling a node out removes its pod;
//!   a node added with `kubectl create -f` gets a pod; a node tainted with something the DaemonSet
//!   does not tolerate gets none until a toleration is added; deleting that node removes the pod
//!   that was waiting for it.
//!
//! Every wait is bounded: kubectl with `--timeout=`, polls with [`tokio::time::timeout`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use apiserver::Api;
use apiserver::api::{ListOptions, WatchEvent, WatchOptions};
use e2e::{Cluster, Config};
use miniplane::cluster::{ControllerSelection, SimConfig};
use serde_json::Value;
use store::Clock;
use tokio::sync::oneshot;

/// Simulated seconds per real second.
const SCALE: f64 = 20.0;
/// Real-time bound of every poll in this file.
const WAIT: Duration = Duration::from_secs(20);
/// `--timeout` of every `kubectl rollout status` (real time).
const ROLLOUT_TIMEOUT: &str = "--timeout=30s";
const HASH: &str = "controller-revision-hash";

const SURGE_EXAMPLE: &str = include_str!("../../../examples/workloads/daemonset-surge-update.yaml");
const SELECTOR_EXAMPLE: &str = include_str!("../../../examples/workloads/daemonset-node-selector.yaml");

async fn cluster(controllers: ControllerSelection) -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        sim: Some(SimConfig {
            nodes: 3,
            controllers,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    })
    .await
}

fn workers() -> Vec<String> {
    miniplane::cluster::node_names(3)
}

fn pods_of(api: &Api, app: &str) -> Vec<Value> {
    let info = api.resource("", "v1", "pods").expect("pods are served");
    let opts = ListOptions {
        label_selector: Some(format!("app={app}")),
        ..Default::default()
    };
    api.list(&info, Some("default"), &opts).expect("list").items
}

fn terminating(p: &Value) -> bool {
    !p["metadata"]["deletionTimestamp"].is_null()
}

fn ready(p: &Value) -> bool {
    p["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn name(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

/// The node a daemon pod runs on or is pinned to (`GetTargetNodeName`).
fn target(p: &Value) -> String {
    if let Some(n) = p["spec"]["nodeName"].as_str() {
        return n.to_string();
    }
    let terms = &p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    terms[0]["matchFields"][0]["values"][0]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The live (not terminating) pods of `app` by target node.
fn live_by_node(api: &Api, app: &str) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for p in pods_of(api, app).into_iter().filter(|p| !terminating(p)) {
        out.entry(target(&p)).or_default().push(p);
    }
    out
}

/// Polls `probe` every simulated half second until it yields a value.
async fn eventually<T>(c: &Cluster, what: &str, mut probe: impl FnMut(&Api) -> Option<T>) -> T {
    let api = c.server().api();
    let found = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(v) = probe(api) {
                return v;
            }
            api.clock().sleep(Duration::from_millis(500)).await;
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("timed out after {WAIT:?} (real) waiting for {what}"))
}

async fn apply(c: &Cluster, yaml: &str) -> String {
    let r = c.run_with_yaml(&["apply"], yaml).await;
    assert!(r.success, "apply failed: {}", r.stderr);
    r.stdout
}

async fn rollout_status(c: &Cluster, ds: &str) -> String {
    let out = c
        .ok(&["rollout", "status", &format!("daemonset/{ds}"), ROLLOUT_TIMEOUT])
        .await;
    assert!(
        out.contains(&format!("daemon set \"{ds}\" successfully rolled out")),
        "{out}"
    );
    out
}

/// Waits until `app` has exactly one live, Ready pod on each of `nodes`, all with the same hash;
/// returns that hash.
async fn settled(c: &Cluster, app: &str, nodes: &[String]) -> String {
    eventually(
        c,
        &format!("one ready pod of {app} on each of {nodes:?}"),
        |api| {
            let by_node = live_by_node(api, app);
            let keys: Vec<&String> = by_node.keys().collect();
            let want: Vec<&String> = nodes.iter().collect();
            let one_each = keys == want && by_node.values().all(|ps| ps.len() == 1 && ready(&ps[0]));
            let hashes: BTreeSet<&str> = by_node
                .values()
                .flatten()
                .map(|p| p["metadata"]["labels"][HASH].as_str().unwrap_or(""))
                .collect();
            (one_each && hashes.len() == 1).then(|| hashes.into_iter().next().unwrap_or("").to_string())
        },
    )
    .await
}

/// Watches the pods of `app`; after every event checks that each of `nodes` has a Ready pod that
/// is not terminating, and that no node has more than two live pods. Returns the violations and
/// the number of events once `stop` fires.
fn watch_availability(
    api: &Api,
    app: &str,
    nodes: Vec<String>,
) -> (oneshot::Sender<()>, tokio::task::JoinHandle<(usize, Vec<String>)>) {
    let info = api.resource("", "v1", "pods").expect("pods are served");
    let selector = format!("app={app}");
    let initial = api
        .list(
            &info,
            Some("default"),
            &ListOptions {
                label_selector: Some(selector.clone()),
                ..Default::default()
            },
        )
        .expect("list");
    let opts = WatchOptions {
        resource_version: Some(initial.resource_version),
        label_selector: Some(selector),
        ..Default::default()
    };
    let mut rx = api.watch(&info, Some("default"), &opts).expect("watch");
    let mut pods: BTreeMap<String, Value> = initial.items.into_iter().map(|p| (name(&p), p)).collect();
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let mut events = 0;
        let mut violations = Vec::new();
        loop {
            let ev = tokio::select! {
                _ = &mut stopped => break,
                ev = rx.recv() => ev,
            };
            match ev {
                Some(WatchEvent::Added(p) | WatchEvent::Modified(p)) => {
                    pods.insert(name(&p), p);
                }
                Some(WatchEvent::Deleted(p)) => {
                    pods.remove(&name(&p));
                }
                Some(WatchEvent::Bookmark(_)) => continue,
                other => {
                    violations.push(format!("watch ended: {other:?}"));
                    break;
                }
            }
            events += 1;
            for node in &nodes {
                let live: Vec<&Value> = pods
                    .values()
                    .filter(|p| !terminating(p) && p["spec"]["nodeName"] == node.as_str())
                    .collect();
                if !live.iter().any(|p| ready(p)) && violations.len() < 10 {
                    let states: Vec<String> = pods
                        .values()
                        .map(|p| {
                            format!(
                                "{}@{}[ready={} term={}]",
                                name(p),
                                target(p),
                                ready(p),
                                terminating(p)
                            )
                        })
                        .collect();
                    violations.push(format!("{node} has no available pod: {states:?}"));
                }
                if live.len() > 2 && violations.len() < 10 {
                    violations.push(format!("{node} has {} live pods", live.len()));
                }
            }
        }
        (events, violations)
    });
    (stop, task)
}

fn images(api: &Api, app: &str) -> BTreeSet<String> {
    pods_of(api, app)
        .iter()
        .filter(|p| !terminating(p))
        .map(|p| {
            p["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// The REVISION column of `kubectl rollout history daemonset/<ds>`.
async fn history_revisions(c: &Cluster, ds: &str) -> Vec<u64> {
    let out = c.ok(&["rollout", "history", &format!("daemonset/{ds}")]).await;
    out.lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn surge_update_keeps_every_node_available_and_rolls_back() {
    let mut c = cluster(ControllerSelection::all()).await;
    let out = apply(&c, SURGE_EXAMPLE).await;
    assert!(out.contains("daemonset.apps/node-agent created"), "{out}");
    rollout_status(&c, "node-agent").await;
    let first = settled(&c, "node-agent", &workers()).await;

    // Every pod is pinned to its node and carries the revision's hash.
    let api = c.server().api();
    for p in pods_of(api, "node-agent") {
        let field = &p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchFields"][0];
        assert_eq!(field["key"], "metadata.name", "{p}");
        assert_eq!(field["values"][0], p["spec"]["nodeName"], "{p}");
        let tolerations = p["spec"]["tolerations"].to_string();
        assert!(
            tolerations.contains("node.kubernetes.io/unreachable"),
            "{tolerations}"
        );
    }
    let ds = c.json(&["get", "daemonset", "node-agent"]).await;
    let status = &ds["status"];
    assert_eq!(
        (
            &status["desiredNumberScheduled"],
            &status["currentNumberScheduled"],
            &status["numberReady"],
            &status["updatedNumberScheduled"],
            &status["numberAvailable"],
            &status["numberMisscheduled"],
        ),
        (&3.into(), &3.into(), &3.into(), &3.into(), &3.into(), &0.into()),
        "{status}"
    );
    assert_eq!(status["observedGeneration"], ds["metadata"]["generation"]);

    // The surge update, watched.
    let (stop, watcher) = watch_availability(api, "node-agent", workers());
    c.ok(&["set", "image", "daemonset/node-agent", "agent=busybox:1.37"])
        .await;
    let out = rollout_status(&c, "node-agent").await;
    let waiting: Vec<&str> = out.lines().filter(|l| l.starts_with("Waiting for")).collect();
    assert!(!waiting.is_empty(), "rollout status printed no progress: {out}");
    for line in &waiting {
        let known = line == &"Waiting for daemon set spec update to be observed..."
            || (line.starts_with("Waiting for daemon set \"node-agent\" rollout to finish: ")
                && (line.ends_with(" out of 3 new pods have been updated...")
                    || line.ends_with(" of 3 updated pods are available...")));
        assert!(known, "unexpected rollout status line {line:?} in {out}");
    }
    let second = settled(&c, "node-agent", &workers()).await;
    let _ = stop.send(());
    let (events, violations) = watcher.await.expect("watcher");
    assert!(violations.is_empty(), "{violations:#?}");
    assert!(events >= 9, "the watch saw the update ({events} events)");
    assert_ne!(first, second);
    assert_eq!(
        images(api, "node-agent"),
        BTreeSet::from(["busybox:1.37".to_string()])
    );

    // History and undo.
    assert_eq!(history_revisions(&c, "node-agent").await, [1, 2]);
    let revs = c
        .ok(&["get", "controllerrevisions", "-l", "app=node-agent", "-o", "name"])
        .await;
    assert_eq!(revs.lines().count(), 2, "{revs}");
    let detail = c
        .ok(&["rollout", "history", "daemonset/node-agent", "--revision=2"])
        .await;
    assert!(
        detail.contains("busybox:1.37") && detail.contains("app=node-agent"),
        "{detail}"
    );
    let out = c.ok(&["rollout", "undo", "daemonset/node-agent"]).await;
    assert!(out.contains("daemonset.apps/node-agent rolled back"), "{out}");
    rollout_status(&c, "node-agent").await;
    let third = settled(&c, "node-agent", &workers()).await;
    assert_eq!(third, first, "the undo reuses the first revision");
    assert_eq!(
        images(api, "node-agent"),
        BTreeSet::from(["busybox:1.36".to_string()])
    );
    assert_eq!(
        history_revisions(&c, "node-agent").await,
        [2, 3],
        "revision 1 became 3"
    );

    let events = c
        .ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=node-agent",
        ])
        .await;
    assert!(
        events.contains("SuccessfulCreate") && events.contains("Created pod: node-agent-"),
        "{events}"
    );
    assert!(
        events.contains("SuccessfulDelete") && events.contains("Deleted pod: node-agent-"),
        "{events}"
    );
    c.stop().await;
}

const EDGE_NODE: &str = r#"apiVersion: v1
kind: Node
metadata:
  name: NAME
  labels:
    miniplane.dev/log-collector: "true"
spec:
  taints:
  - key: KEY
    value: VALUE
    effect: NoSchedule
"#;

fn edge_node(name: &str, key: &str, value: &str) -> String {
    EDGE_NODE
        .replace("NAME", name)
        .replace("KEY", key)
        .replace("VALUE", value)
}

fn live_nodes(api: &Api, app: &str) -> Vec<String> {
    live_by_node(api, app).into_keys().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_follows_labels_taints_and_new_nodes() {
    // The nodes this test adds have no kubelet; the node lifecycle controller would (rightly)
    // taint them unreachable after its startup grace period. That is its business, not this
    // test's, so it does not run here.
    let controllers = ControllerSelection::parse("*,-node-lifecycle-controller,-taint-eviction-controller")
        .expect("known controllers");
    let mut c = cluster(controllers).await;
    let [w1, w2, w3] = <[String; 3]>::try_from(workers()).expect("three workers");
    for w in [&w1, &w2] {
        c.ok(&["label", "node", w, "miniplane.dev/log-collector=true"])
            .await;
    }
    apply(&c, SELECTOR_EXAMPLE).await;
    rollout_status(&c, "log-collector").await;
    settled(&c, "log-collector", &[w1.clone(), w2.clone()]).await;
    let api = c.server().api();
    assert!(!live_nodes(api, "log-collector").contains(&w3));
    let table = c.ok(&["get", "daemonset", "log-collector"]).await;
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        row[..7],
        [
            "log-collector",
            "2",
            "2",
            "2",
            "2",
            "2",
            "miniplane.dev/log-collector=true"
        ],
        "{table}"
    );

    // A NoSchedule taint the DaemonSet tolerates changes nothing.
    c.ok(&["taint", "node", &w1, "dedicated=infra:NoSchedule"]).await;
    // Relabelled out of the nodeSelector: the pod goes.
    c.ok(&["label", "node", &w2, "miniplane.dev/log-collector-"])
        .await;
    eventually(&c, "log-collector only on worker-1", |api| {
        (live_nodes(api, "log-collector") == [w1.clone()]).then_some(())
    })
    .await;
    let ds = c.json(&["get", "daemonset", "log-collector"]).await;
    assert_eq!(ds["status"]["desiredNumberScheduled"], 1, "{}", ds["status"]);

    // A new node with a tolerated taint gets a pod.
    let out = c
        .run_with_yaml(&["create"], &edge_node("edge-1", "dedicated", "infra"))
        .await;
    assert!(out.success, "{}", out.stderr);
    eventually(&c, "a pod pinned to edge-1", |api| {
        live_by_node(api, "log-collector")
            .contains_key("edge-1")
            .then_some(())
    })
    .await;

    // One with a taint it does not tolerate gets none ...
    let out = c
        .run_with_yaml(&["create"], &edge_node("edge-2", "other", "x"))
        .await;
    assert!(out.success, "{}", out.stderr);
    c.eventually_json(&["get", "daemonset", "log-collector"], "desired 2", |ds| {
        ds["status"]["desiredNumberScheduled"] == 2 && ds["status"]["currentNumberScheduled"] == 2
    })
    .await;
    c.sleep_real(Duration::from_millis(500)).await;
    assert!(!live_by_node(api, "log-collector").contains_key("edge-2"));

    // ... until the DaemonSet tolerates it.
    let patch = r#"[{"op": "add", "path": "/spec/template/spec/tolerations/-",
        "value": {"key": "other", "operator": "Exists", "effect": "NoSchedule"}}]"#;
    c.ok(&["patch", "daemonset", "log-collector", "--type=json", "-p", patch])
        .await;
    eventually(&c, "a pod pinned to edge-2", |api| {
        live_by_node(api, "log-collector")
            .contains_key("edge-2")
            .then_some(())
    })
    .await;

    // The edge nodes cannot take pods (no allocatable), so their pods wait unbound; deleting the
    // node deletes the pod that was waiting for it.
    c.ok(&["delete", "node", "edge-2"]).await;
    eventually(&c, "edge-2's pod deleted", |api| {
        (!live_by_node(api, "log-collector").contains_key("edge-2")).then_some(())
    })
    .await;
    c.stop().await;
}
