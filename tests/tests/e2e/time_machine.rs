//! The time machine (`/debug/time`, what `miniplane time` calls), end to end:
//! the real `kubectl` against an in-process miniplane (3 simulated nodes,
//! controllers, scheduler, kubelet; nothing mocked).
//!
//! Covered:
//! * stepping is repeatable: two clusters with the same seed and manifests,
//!   paused, in the middle of a rollout, one moved by one `step 10s`, the
//!   other by ten `step 1s`, reach the same ReplicaSets (replicas, ready,
//!   available per template) and the same pods (phase, readiness per image);
//! * `break-on deployment/web` holds the deployment controller's sync while
//!   the user changes the image: no ReplicaSet for the new template, the sync
//!   listed as held; release, and the rollout goes on;
//! * a paused clock stamps every object with the same creationTimestamp; a
//!   step moves it by exactly the step; resume lets it run again.
//!
//! While a cluster is paused, its own clock cannot time the test's waits:
//! they are measured on a clock of their own ([`real`]).

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::{Cluster, Config, PATIENCE};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// A miniplane with 3 nodes on real time (scale 1) and seed 7.
async fn cluster() -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::system(),
        seed: 7,
        sim: Some(SimConfig {
            nodes: 3,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    })
    .await
}

/// Waits `d` of real time, whatever the clusters' clocks do.
async fn real(d: Duration) {
    Clock::system().sleep(d).await;
}

/// A call of the time machine: `POST /debug/time/<path>` (or `GET` of the
/// state for `""`); the status code and the answer.
async fn time(c: &Cluster, path: &str) -> (u16, Value) {
    let (method, path) = match path {
        "" => ("GET", "/debug/time".to_string()),
        p => ("POST", format!("/debug/time/{p}")),
    };
    let r = e2e::http(c.server(), method, &path, &[], b"").await;
    (r.status, r.json())
}

/// A call that must succeed; the state it answers.
async fn time_ok(c: &Cluster, path: &str) -> Value {
    let (code, body) = time(c, path).await;
    assert_eq!(code, 200, "/debug/time/{path}: {body}");
    body
}

/// A Deployment `web` of `replicas` running `image` (maxSurge 1, maxUnavailable 0).
fn web(replicas: u32, image: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {image}
"#
    )
}

/// Polls `check` over `kubectl get <args> -o json` for up to [`PATIENCE`]
/// of real time (not the cluster's clock, which may be paused).
async fn until(c: &Cluster, args: &[&str], what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let polled = tokio::time::timeout(PATIENCE, async {
        loop {
            let v = c.json(args).await;
            if check(&v) {
                return v;
            }
            real(Duration::from_millis(100)).await;
        }
    });
    polled
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// Every node Ready.
async fn nodes_ready(c: &Cluster) {
    until(c, &["get", "nodes"], "3 Ready nodes", |v| {
        let items = v["items"].as_array().cloned().unwrap_or_default();
        items.len() == 3 && items.iter().all(|n| condition(n, "Ready"))
    })
    .await;
}

fn condition(obj: &Value, kind: &str) -> bool {
    obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// What the rollout looks like, without names or uids: per ReplicaSet (by
/// its image) `replicas/status.replicas/ready/available`, and per pod image
/// how many pods are in each phase and readiness.
async fn rollout_state(c: &Cluster) -> (BTreeMap<String, String>, BTreeMap<String, usize>) {
    let rs = c.json(&["get", "rs", "-l", "app=web"]).await;
    let mut sets = BTreeMap::new();
    for r in rs["items"].as_array().into_iter().flatten() {
        let image = r["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap_or("?");
        let s = &r["status"];
        let n = |v: &Value| v.as_i64().unwrap_or(0);
        let row = format!(
            "spec {} status {} ready {} available {}",
            n(&r["spec"]["replicas"]),
            n(&s["replicas"]),
            n(&s["readyReplicas"]),
            n(&s["availableReplicas"])
        );
        sets.insert(image.to_string(), row);
    }
    let pods = c.json(&["get", "pods", "-l", "app=web"]).await;
    let mut phases = BTreeMap::new();
    for p in pods["items"].as_array().into_iter().flatten() {
        let image = p["spec"]["containers"][0]["image"].as_str().unwrap_or("?");
        let phase = p["status"]["phase"].as_str().unwrap_or("?");
        let ready = condition(p, "Ready");
        let deleting = p["metadata"]["deletionTimestamp"].is_string();
        let key = format!("{image} {phase} ready={ready} deleting={deleting}");
        *phases.entry(key).or_insert(0) += 1;
    }
    (sets, phases)
}

/// Starts a cluster, pauses it, rolls `web` out at nginx:1.25 by stepping,
/// then sets nginx:1.26: the start of a rollout, on a paused clock.
async fn paused_mid_rollout() -> Cluster {
    let c = cluster().await;
    nodes_ready(&c).await;
    assert_eq!(time_ok(&c, "pause").await["paused"], true);
    let f = c.file("web.yaml", &web(4, "nginx:1.25"));
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
    time_ok(&c, "step?duration=30s").await;
    let (sets, _) = rollout_state(&c).await;
    assert_eq!(
        sets.get("nginx:1.25").map(String::as_str),
        Some("spec 4 status 4 ready 4 available 4"),
        "rolled out after 30 simulated seconds: {sets:?}"
    );
    c.ok(&["set", "image", "deployment/web", "app=nginx:1.26"]).await;
    c
}

#[tokio::test]
async fn ten_steps_of_one_second_reach_the_state_one_step_of_ten_does() {
    let one = paused_mid_rollout().await;
    let ten = paused_mid_rollout().await;
    let before = rollout_state(&one).await;
    time_ok(&one, "step?duration=10s").await;
    for _ in 0..10 {
        time_ok(&ten, "step?duration=1s").await;
    }
    let (after_one, after_ten) = (rollout_state(&one).await, rollout_state(&ten).await);
    assert_eq!(after_one, after_ten, "one step of 10 s and ten of 1 s");
    assert_ne!(after_one, before, "the rollout moved in those 10 s");
    assert!(
        after_one.0.contains_key("nginx:1.26"),
        "a ReplicaSet for the new template: {after_one:?}"
    );
    let (a, b) = (time_ok(&one, "").await, time_ok(&ten, "").await);
    assert_eq!(
        (a["paused"].clone(), b["paused"].clone()),
        (Value::Bool(true), Value::Bool(true))
    );
}

#[tokio::test]
async fn a_breakpoint_holds_the_deployment_sync_until_released() {
    let c = cluster().await;
    let f = c.file("web.yaml", &web(2, "nginx:1.25"));
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
    c.ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    let set = time_ok(&c, "break-on?kind=deployment&namespace=default&name=web").await;
    assert_eq!(set["breakpoints"], serde_json::json!(["Deployment/default/web"]));

    c.ok(&["set", "image", "deployment/web", "app=nginx:1.26"]).await;
    let held = tokio::time::timeout(PATIENCE, async {
        loop {
            let s = time_ok(&c, "").await;
            if s["held"] == serde_json::json!(["deployment default/web"]) {
                return s;
            }
            real(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the deployment's sync is held");
    assert_eq!(held["breakpoints"], serde_json::json!(["Deployment/default/web"]));
    real(Duration::from_secs(2)).await;
    let rs = c.json(&["get", "rs", "-l", "app=web"]).await;
    assert_eq!(
        rs["items"].as_array().map(Vec::len),
        Some(1),
        "no ReplicaSet for the new template while the sync is held: {rs}"
    );

    let released = time_ok(&c, "release?kind=Deployment&namespace=default&name=web").await;
    assert_eq!(released["breakpoints"], serde_json::json!([]));
    c.ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    let rs = c.json(&["get", "rs", "-l", "app=web"]).await;
    let images: Vec<&str> = rs["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["spec"]["replicas"] == 2)
        .filter_map(|r| r["spec"]["template"]["spec"]["containers"][0]["image"].as_str())
        .collect();
    assert_eq!(images, vec!["nginx:1.26"], "the rollout went on: {rs}");
    assert_eq!(time_ok(&c, "").await["held"], serde_json::json!([]));
    let (code, s) = time(&c, "release?kind=Deployment&namespace=default&name=web").await;
    assert_eq!(code, 404, "a breakpoint is one-shot: {s}");
}

/// `metadata.creationTimestamp` of ConfigMap `name`, in seconds since 1970.
async fn created(c: &Cluster, name: &str) -> i64 {
    let cm = c.json(&["get", "configmap", name]).await;
    cm["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(unix_seconds)
        .unwrap_or_else(|| panic!("creationTimestamp of {name}: {cm}"))
}

/// `2026-12-02T15:04:05Z` in seconds since 1970 (the days-from-civil
/// algorithm; enough for the whole-second timestamps of object metadata).
fn unix_seconds(t: &str) -> Option<i64> {
    let n = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

#[tokio::test]
async fn a_paused_clock_stamps_every_object_alike_and_resume_lets_it_run() {
    let c = cluster().await;
    let paused = time_ok(&c, "pause").await;
    assert_eq!(paused["paused"], true);
    c.ok(&["create", "configmap", "a"]).await;
    real(Duration::from_millis(1500)).await;
    c.ok(&["create", "configmap", "b"]).await;
    let a = created(&c, "a").await;
    assert_eq!(
        created(&c, "b").await,
        a,
        "1.5 s of real time is no simulated time"
    );
    let age = c.ok(&["get", "configmap", "a", "--no-headers"]).await;
    real(Duration::from_millis(1500)).await;
    assert_eq!(
        c.ok(&["get", "configmap", "a", "--no-headers"]).await,
        age,
        "AGE stands still"
    );
    assert_eq!(time_ok(&c, "").await["now"], paused["now"]);

    let stepped = time_ok(&c, "step?duration=1m").await;
    assert_eq!(stepped["paused"], true);
    c.ok(&["create", "configmap", "c"]).await;
    let c_at = created(&c, "c").await;
    let moved = c_at - a;
    assert!(
        (60..=61).contains(&moved),
        "a step of 1m moves time by 60 s (timestamps are whole seconds): {moved}"
    );

    let resumed = time_ok(&c, "resume").await;
    assert_eq!(resumed["paused"], false);
    real(Duration::from_millis(2500)).await;
    c.ok(&["create", "configmap", "d"]).await;
    let ran = created(&c, "d").await - c_at;
    assert!(ran >= 2, "time runs again after resume: {ran} s");
}

#[test]
fn timestamps_read_as_seconds_since_1970() {
    assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
    assert_eq!(unix_seconds("2026-12-02T15:04:05Z"), Some(1_796_223_845));
}

#[tokio::test]
async fn bad_requests_say_what_to_do() {
    let c = cluster().await;
    let (code, s) = time(&c, "step?duration=10s").await;
    assert_eq!(code, 409, "{s}");
    assert!(
        s["message"].as_str().unwrap_or("").contains("pause it first"),
        "{s}"
    );
    let (code, s) = time(&c, "step?duration=ten").await;
    assert_eq!((code, s["reason"].as_str()), (400, Some("BadRequest")), "{s}");
    let (code, s) = time(&c, "scale?factor=-1").await;
    assert_eq!(code, 400, "{s}");
    let scaled = time_ok(&c, "scale?factor=2").await;
    assert_eq!(scaled["scale"], 2.0);
}
