//! The causal journal, end to end: the real `kubectl` rolls a Deployment
//! out on an in-process miniplane (3 simulated nodes, every controller, the
//! scheduler and the kubelet, on accelerated time), and `/debug/journal`
//! must explain the rollout: every pod the `kubectl set image` made, and
//! every pod it removed, leads back through the journal's links (write ←
//! sync ← enqueue ← event ← write ...) to that one user request.
//!
//! Covered:
//! * the user's `set image` is a write by `kubectl-set` with no cause;
//! * each new pod's create and each old pod's delete reach it through the
//!   links (`cause`, and a sync's `also`);
//! * following `cause` alone from each of them never meets a missing entry,
//!   and ends at a write nobody caused (a user's or a heartbeat's);
//! * the endpoint's object filter, and a 400 for a bad parameter.

use std::collections::{BTreeMap, VecDeque};

use e2e::{Cluster, Config, http};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 20.0;

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 2
      containers: [{name: c, image: "nginx:1.25"}]
"#;

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

/// The ids an entry names as its causes: `cause`, then `also`.
fn links(e: &Value) -> Vec<u64> {
    let also = e["also"].as_array().cloned().unwrap_or_default();
    e["cause"]
        .as_u64()
        .into_iter()
        .chain(also.iter().filter_map(Value::as_u64))
        .collect()
}

/// The chain of entries from `from` back to `to` through the links, if any
/// (breadth first, so the shortest).
fn path(entries: &BTreeMap<u64, Value>, from: u64, to: u64) -> Option<Vec<u64>> {
    let mut came_from: BTreeMap<u64, u64> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(id) = queue.pop_front() {
        if id == to {
            let mut chain = vec![to];
            while let Some(next) = came_from.get(chain.last().unwrap()) {
                chain.push(*next);
            }
            chain.reverse();
            return Some(chain);
        }
        for cause in links(&entries[&id]) {
            if entries.contains_key(&cause) && !came_from.contains_key(&cause) && cause != from {
                came_from.insert(cause, id);
                queue.push_back(cause);
            }
        }
    }
    None
}

/// `#id step actor verb kind/ns/name: message`, for failure messages.
fn show(entries: &BTreeMap<u64, Value>, ids: &[u64]) -> String {
    ids.iter()
        .map(|id| {
            let e = &entries[id];
            format!(
                "#{id} ← {:?} {} {} {} {}/{}: {}",
                e["cause"].as_u64(),
                e["step"],
                e["actor"],
                e["verb"],
                e["object"]["kind"],
                e["object"]["name"],
                e["message"]
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// Follows `cause` alone from `id`: every cause must be in the journal,
/// and the first entry without one must be a write (a request nobody in
/// the cluster caused). (A cause may have the greater id: an informer can
/// see a write before the writer has recorded it.)
fn assert_first_causes_end_at_a_write(entries: &BTreeMap<u64, Value>, id: u64) {
    let mut chain = vec![id];
    let mut at = &entries[&id];
    while let Some(cause) = at["cause"].as_u64() {
        assert!(
            entries.contains_key(&cause),
            "#{} names a cause #{cause} the journal does not have:\n  {}",
            chain.last().unwrap(),
            show(entries, &chain)
        );
        chain.push(cause);
        at = &entries[&cause];
    }
    assert_eq!(
        at["step"],
        "write",
        "the chain ends at a write:\n  {}",
        show(entries, &chain)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_leads_back_to_the_users_set_image() {
    let c = cluster().await;
    let applied = c.run_with_yaml(&["apply"], DEPLOYMENT).await;
    assert!(applied.success, "{}", applied.stderr);
    c.ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    c.ok(&["set", "image", "deployment/web", "c=nginx:1.26"]).await;
    c.ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    // The old pods' final deletes (after their grace period) are part of the story.
    c.eventually_json(&["get", "pods", "-l", "app=web"], "only the 3 new pods", |list| {
        let pods = list["items"].as_array().cloned().unwrap_or_default();
        pods.len() == 3
            && pods
                .iter()
                .all(|p| p["spec"]["containers"][0]["image"] == "nginx:1.26")
    })
    .await;

    let entries = c.journal().await;
    let is = |e: &Value, step: &str, verb: &str, kind: &str| {
        e["step"] == step && e["verb"] == verb && e["object"]["kind"] == kind
    };
    let set_image: Vec<u64> = entries
        .values()
        .filter(|e| is(e, "write", "patch", "Deployment") && e["actor"] == "kubectl-set")
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert_eq!(set_image.len(), 1, "one set image write");
    let root = set_image[0];
    assert!(
        entries[&root].get("cause").is_none(),
        "a user's request has no cause"
    );
    assert!(
        entries[&root]["message"]
            .as_str()
            .unwrap()
            .contains("spec.template.spec.containers[0].image nginx:1.25→nginx:1.26"),
        "{}",
        entries[&root]["message"]
    );

    let after_root = |step: &str, verb: &str| -> Vec<u64> {
        entries
            .range(root + 1..)
            .filter(|(_, e)| is(e, step, verb, "Pod") && e.get("subresource").is_none())
            .map(|(id, _)| *id)
            .collect()
    };
    let creates = after_root("write", "create");
    let deletes = after_root("write", "delete");
    assert!(creates.len() >= 3, "the new pods' creates: {creates:?}");
    assert!(deletes.len() >= 3, "the old pods' deletes: {deletes:?}");
    for id in creates.iter().chain(&deletes) {
        let chain = path(&entries, *id, root);
        assert!(
            chain.is_some(),
            "#{id} does not lead back to the set image #{root}; its causes:\n  {}",
            show(&entries, &first_causes(&entries, *id))
        );
        let chain = chain.unwrap();
        let steps: Vec<&str> = chain.iter().filter_map(|i| entries[i]["step"].as_str()).collect();
        for step in ["sync", "enqueue", "event"] {
            assert!(
                steps.contains(&step),
                "a {step} on the way:\n  {}",
                show(&entries, &chain)
            );
        }
        assert_first_causes_end_at_a_write(&entries, *id);
    }

    // The endpoint's filter, and a bad parameter.
    let resp = http(
        c.server(),
        "GET",
        "/debug/journal?kind=Deployment&name=web",
        &[],
        b"",
    )
    .await;
    assert_eq!(resp.status, 200);
    let filtered = resp.json();
    let list = filtered["entries"].as_array().unwrap();
    assert!(!list.is_empty());
    assert!(
        list.iter()
            .all(|e| e["object"]["kind"] == "Deployment" && e["object"]["name"] == "web")
    );
    let bad = http(c.server(), "GET", "/debug/journal?limit=-1", &[], b"").await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["reason"], "BadRequest");
}

/// The chain following `cause` alone, for failure messages.
fn first_causes(entries: &BTreeMap<u64, Value>, id: u64) -> Vec<u64> {
    let mut chain = vec![id];
    while let Some(cause) = entries
        .get(chain.last().unwrap())
        .and_then(|e| e["cause"].as_u64())
    {
        if !entries.contains_key(&cause) {
            break;
        }
        chain.push(cause);
    }
    chain
}
