//! The plan decisions of the StatefulSet and Job controllers in the causal journal, end to end:
//! the real `kubectl` applies an OrderedReady StatefulSet of 3 and a Job (completions 3,
//! parallelism 2) to an in-process miniplane (3 simulated nodes, every controller, the scheduler
//! and the kubelet, on accelerated time), and `/debug/journal` filtered to each object must hold
//! the decisions their syncs made, as sentences naming the upstream function, each caused by the
//! sync that made it.
//!
//! Covered:
//! * StatefulSet: one `processReplica` create per ordinal, in order, with the ordinal and the
//!   policy; an OrderedReady `updateStatefulSet` wait for a pod to be Running and Ready;
//! * Job: the first `manageJob` create with the `wantActive` arithmetic, creations adding up to
//!   `completions`, and the `syncJob` conclusion `CompletionsReached`;
//! * every decision has a cause, and that cause is a sync of the same controller.

use std::collections::BTreeMap;

use e2e::{Cluster, Config, http};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 20.0;

const STATEFULSET: &str = r#"apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: tcp, port: 5432}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 3
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      terminationGracePeriodSeconds: 2
      containers: [{name: c, image: "postgres:16"}]
"#;

const JOB: &str = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: batch
spec:
  completions: 3
  parallelism: 2
  template:
    metadata:
      annotations:
        sim.miniplane.dev/run-seconds: "2"
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: main, image: "busybox:1.36"}]
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

/// The journal entries of one object, through the endpoint's filter.
async fn entries_of(c: &Cluster, kind: &str, name: &str) -> Vec<Value> {
    let path = format!("/debug/journal?kind={kind}&namespace=default&name={name}&limit=5000");
    let resp = http(c.server(), "GET", &path, &[], b"").await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    resp.json()["entries"].as_array().expect("entries").clone()
}

/// The decision entries among `entries`.
fn decisions(entries: &[Value]) -> Vec<Value> {
    entries
        .iter()
        .filter(|e| e["step"] == "decision")
        .cloned()
        .collect()
}

/// `function: message` of each decision, for failure messages.
fn show(decisions: &[Value]) -> String {
    decisions
        .iter()
        .map(|d| {
            format!(
                "{}: {}",
                d["function"].as_str().unwrap_or(""),
                d["message"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

fn messages<'a>(decisions: &'a [Value], function: &str) -> Vec<&'a str> {
    decisions
        .iter()
        .filter(|d| d["function"] == function)
        .filter_map(|d| d["message"].as_str())
        .collect()
}

/// Each decision has a cause, and the cause is a sync by `actor`.
fn assert_caused_by_syncs(all: &BTreeMap<u64, Value>, decisions: &[Value], actor: &str) {
    for d in decisions {
        assert_eq!(d["actor"], actor, "{d}");
        let cause = d["cause"]
            .as_u64()
            .unwrap_or_else(|| panic!("a decision without a cause: {d}"));
        let sync = all
            .get(&cause)
            .unwrap_or_else(|| panic!("cause #{cause} missing: {d}"));
        assert_eq!(sync["step"], "sync", "the cause of {d} is {sync}");
        assert_eq!(sync["actor"], actor, "the cause of {d} is {sync}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statefulset_and_job_syncs_record_their_decisions() {
    let c = cluster().await;
    let applied = c.run_with_yaml(&["apply"], STATEFULSET).await;
    assert!(applied.success, "{}", applied.stderr);
    let applied = c.run_with_yaml(&["apply"], JOB).await;
    assert!(applied.success, "{}", applied.stderr);
    c.ok(&["rollout", "status", "statefulset/db", "--timeout=60s"])
        .await;
    c.ok(&["wait", "--for=condition=complete", "job/batch", "--timeout=60s"])
        .await;

    let all = c.journal().await;

    let set = decisions(&entries_of(&c, "StatefulSet", "db").await);
    let creates = messages(&set, "processReplica");
    let revision = creates
        .first()
        .and_then(|m| m.split("at revision ").nth(1))
        .and_then(|m| m.split(' ').next())
        .unwrap_or_else(|| panic!("no create decision:\n  {}", show(&set)));
    let expected: Vec<String> = (0..3)
        .map(|o| format!("creating db-{o} at revision {revision} (ordinal {o} of replicas 3, OrderedReady)"))
        .collect();
    assert_eq!(creates, expected, "decisions:\n  {}", show(&set));
    let waits = messages(&set, "updateStatefulSet");
    assert!(
        waits.iter().any(|m| m.starts_with("waiting for db-")
            && m.ends_with("to be Running and Ready before creating db-1 (OrderedReady)")),
        "an OrderedReady wait before db-1; decisions:\n  {}",
        show(&set)
    );
    assert_caused_by_syncs(&all, &set, "statefulset");

    let job = decisions(&entries_of(&c, "Job", "batch").await);
    let manage = messages(&job, "manageJob");
    assert_eq!(
        manage.first().copied(),
        Some(
            "active 0, succeeded 0, completions 3, parallelism 2: creating 2 \
             (wantActive = min(parallelism 2, completions 3 − succeeded 0) = 2, diff = 2 − active 0 = +2)"
        ),
        "decisions:\n  {}",
        show(&job)
    );
    let created: usize = manage
        .iter()
        .filter_map(|m| m.split(": creating ").nth(1))
        .filter_map(|m| m.split(' ').next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(
        created,
        3,
        "the creations add up to completions:\n  {}",
        show(&job)
    );
    assert_eq!(
        messages(&job, "syncJob"),
        ["succeeded 3 ≥ completions 3 and no pod is active: job complete (CompletionsReached)"],
        "decisions:\n  {}",
        show(&job)
    );
    assert_caused_by_syncs(&all, &job, "job");
}
