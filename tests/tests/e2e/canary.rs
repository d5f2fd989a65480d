//! Canary rollouts end to end: the real `kubectl` against an in-process
//! miniplane on accelerated time ([`SCALE`]), with everything running for
//! real — Deployment controller, scheduler, kubelet, the simulated gateway,
//! the traffic simulation writing request metrics, PromQL analysis, and the
//! Canary controller. Nothing mocked. The manifests are examples/canary/.
//!
//! Covered (issue 13's acceptance list):
//! * a good canary: the HTTPRoute's canary weight steps 0 → 10 → 20 → 30
//!   (maxWeight), then promotion; the primary runs the new image; the
//!   target is scaled to 0; Succeeded; `kubectl get canaries` columns;
//! * 20% errors: rollback after exactly `threshold` failed checks, the
//!   primary's template unchanged, Failed, an event naming
//!   request-success-rate and the measured value;
//! * a p99 latency regression rolls back (request-duration);
//! * a relative check (canary − primary) rolls back a version an absolute
//!   check alone would pass;
//! * a failing pre-rollout hook Job keeps the weight at 0 and rolls back;
//!   a confirm-promotion gate holds WaitingPromotion until
//!   `kubectl annotate canary podinfo rollouts.miniplane.dev/promote=true`;
//! * blue/green: no traffic to the new version during the iterations, then
//!   100% at once.
//!
//! The canary-strategy scenarios share one cluster, one revision after
//! another; the hooks share another. Every wait is bounded (the harness's
//! PATIENCE, 60 s real).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use apiserver::api::{ListOptions, WatchEvent, WatchOptions};
use e2e::{Cluster, Config};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 40.0;

const PODINFO: &str = include_str!("../../../examples/canary/podinfo.yaml");
const CANARY: &str = include_str!("../../../examples/canary/canary.yaml");
const BLUE_GREEN: &str = include_str!("../../../examples/canary/blue-green.yaml");
const HOOKS: &str = include_str!("../../../examples/canary/hooks.yaml");

/// A fresh miniplane with 3 nodes on accelerated time.
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

/// Applies podinfo.yaml and `canary_yaml`, and waits until the Canary is Initialized.
async fn start(canary_yaml: &str) -> Cluster {
    let c = cluster().await;
    let f = c.file("podinfo.yaml", PODINFO);
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
    let f = c.file("canary.yaml", canary_yaml);
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
    wait_phase(&c, "Initialized").await;
    c
}

/// Waits until the Canary's phase is `phase`; returns the Canary.
async fn wait_phase(c: &Cluster, phase: &str) -> Value {
    c.eventually_json(&["get", "canary", "podinfo"], &format!("phase {phase}"), |v| {
        v["status"]["phase"] == phase
    })
    .await
}

/// The revision the Canary analyses (`status.lastAppliedSpec`).
async fn revision(c: &Cluster) -> Value {
    c.json(&["get", "canary", "podinfo"]).await["status"]["lastAppliedSpec"].clone()
}

/// Waits until a revision other than `before` has reached `phase`; returns the Canary.
async fn wait_new(c: &Cluster, before: &Value, phase: &str) -> Value {
    c.eventually_json(
        &["get", "canary", "podinfo"],
        &format!("a new revision {phase}"),
        |v| v["status"]["phase"] == phase && v["status"]["lastAppliedSpec"] != *before,
    )
    .await
}

/// A merge patch of the target's pod template annotations (a new revision).
async fn new_version(c: &Cluster, annotations: &str) {
    let patch = format!(r#"{{"spec":{{"template":{{"metadata":{{"annotations":{{{annotations}}}}}}}}}}}"#);
    c.ok(&["patch", "deployment", "podinfo", "--type", "merge", "-p", &patch])
        .await;
}

/// The messages of the Canary's events, oldest first.
async fn events(c: &Cluster) -> Vec<String> {
    let list = c
        .json(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.kind=Canary,involvedObject.name=podinfo",
        ])
        .await;
    let mut items: Vec<Value> = list["items"].as_array().cloned().unwrap_or_default();
    items.sort_by_key(|e| {
        let first = e["firstTimestamp"].as_str().unwrap_or("").to_string();
        let rv: u64 = e["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        (first, rv)
    });
    items
        .iter()
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect()
}

/// The `(primary, canary)` weights of the route's default rule after every
/// change of the HTTPRoute (a watch of the API, in the background); stop it
/// with [`RouteWatch::stop`].
struct RouteWatch {
    seen: Arc<Mutex<Vec<(i64, i64)>>>,
    task: tokio::task::JoinHandle<()>,
}

/// The default rule's (primary, canary) weights of a route object.
fn weights_of(route: &Value) -> Option<(i64, i64)> {
    let refs = route["spec"]["rules"].as_array()?.last()?["backendRefs"].as_array()?;
    let weight = |suffix: &str| {
        refs.iter()
            .find(|r| r["name"].as_str().is_some_and(|n| n.ends_with(suffix)))
            .and_then(|r| r["weight"].as_i64())
    };
    Some((weight("-primary")?, weight("-canary")?))
}

impl RouteWatch {
    /// Starts watching, once the route exists.
    async fn start(c: &Cluster) -> RouteWatch {
        c.eventually_json(&["get", "httproute", "podinfo"], "the route", |_| true)
            .await;
        let api = c.server().api().clone();
        let info = api
            .resource("gateway.networking.k8s.io", "v1", "httproutes")
            .expect("HTTPRoutes are served");
        let listed = api
            .list(&info, Some("default"), &ListOptions::default())
            .expect("list");
        let seen = Arc::new(Mutex::new(
            listed.items.iter().filter_map(weights_of).collect::<Vec<_>>(),
        ));
        let opts = WatchOptions {
            resource_version: Some(listed.resource_version),
            ..Default::default()
        };
        let mut rx = api.watch(&info, Some("default"), &opts).expect("watch");
        let out = seen.clone();
        let task = tokio::spawn(async move {
            while let Some(WatchEvent::Added(o) | WatchEvent::Modified(o)) = rx.recv().await {
                if o["metadata"]["name"] != "podinfo" {
                    continue;
                }
                if let Some(w) = weights_of(&o) {
                    let mut seen = out.lock().expect("not poisoned");
                    if seen.last() != Some(&w) {
                        seen.push(w);
                    }
                }
            }
        });
        RouteWatch { seen, task }
    }

    /// The canary weights seen, consecutive repeats merged; stops the watch.
    fn stop(self) -> Vec<i64> {
        self.task.abort();
        let seen = self.seen.lock().expect("not poisoned");
        let mut out: Vec<i64> = Vec::new();
        for (_, c) in seen.iter() {
            if out.last() != Some(c) {
                out.push(*c);
            }
        }
        out
    }
}

/// A container image of a Deployment.
async fn image(c: &Cluster, deployment: &str) -> String {
    let d = c.json(&["get", "deployment", deployment]).await;
    d["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

async fn replicas(c: &Cluster, deployment: &str) -> i64 {
    let d = c.json(&["get", "deployment", deployment]).await;
    d["spec"]["replicas"].as_i64().unwrap_or(-1)
}

/// The messages of the causal journal's `function` decisions about Canary podinfo.
async fn decisions(c: &Cluster, function: &str) -> Vec<String> {
    c.journal()
        .await
        .values()
        .filter(|e| {
            e["step"] == "decision"
                && e["actor"] == "canary-controller"
                && e["function"] == function
                && e["object"]["kind"] == "Canary"
                && e["object"]["name"] == "podinfo"
        })
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect()
}

// ---------------------------------------------------------------------------
// Scenarios, run one after another on one cluster (a cluster's start is
// most of a test's real time).

/// A good version: the weights step to maxWeight, then promotion.
async fn good_canary_is_promoted(c: &Cluster) {
    // First sight: the primary serves, the target is scaled to 0.
    assert_eq!(replicas(c, "podinfo").await, 0);
    assert_eq!(replicas(c, "podinfo-primary").await, 2);
    let table = c.ok(&["get", "canaries"]).await;
    let header: Vec<&str> = table.lines().next().unwrap_or("").split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "STATUS", "WEIGHT", "FAILEDCHECKS", "AGE"],
        "{table}"
    );
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|l| e2e::matches_words(l, "podinfo Initialized 0 0")),
        "{table}"
    );
    let wide = c.ok(&["get", "canaries", "-o", "wide"]).await;
    assert!(
        wide.contains("INTERVAL") && wide.contains("MAXWEIGHT") && wide.contains("15s"),
        "{wide}"
    );

    let before = revision(c).await;
    let watch = RouteWatch::start(c).await;
    c.ok(&[
        "set",
        "image",
        "deployment/podinfo",
        "podinfo=ghcr.io/stefanprodan/podinfo:6.1.0",
    ])
    .await;
    let done = wait_new(c, &before, "Succeeded").await;
    let weights = watch.stop();
    assert_eq!(
        weights,
        [0, 10, 20, 30, 0],
        "the route's canary weight, change by change"
    );
    assert_eq!(done["status"]["failedChecks"], 0);
    assert_eq!(
        done["status"]["lastPromotedSpec"],
        done["status"]["lastAppliedSpec"]
    );
    assert_eq!(
        image(c, "podinfo-primary").await,
        "ghcr.io/stefanprodan/podinfo:6.1.0"
    );
    assert_eq!(replicas(c, "podinfo").await, 0);
    let ev = events(c).await;
    for want in [
        "New revision detected! Scaling up podinfo.default",
        "Starting canary analysis for podinfo.default",
        "Advance podinfo.default canary weight 10",
        "Advance podinfo.default canary weight 30",
        "Copying podinfo.default template spec to podinfo-primary.default",
        "Routing all traffic to primary",
        "Promotion completed! Scaling down podinfo.default",
    ] {
        assert!(ev.iter().any(|e| e == want), "no event {want:?} in {ev:#?}");
    }
    let advances = decisions(c, "advanceCanary").await;
    assert!(
        advances
            .iter()
            .any(|m| m.ends_with(": weight 10 → 20 (stepWeight 10, maxWeight 30)")),
        "{advances:#?}"
    );
    let promotions = decisions(c, "promote").await;
    assert!(
        promotions
            .iter()
            .any(|m| m == "weight 30 = maxWeight 30: copying the template to podinfo-primary"),
        "{promotions:#?}"
    );
    let described = c.ok(&["describe", "canary", "podinfo"]).await;
    assert!(
        described.contains("Succeeded") && described.contains("Advance podinfo.default canary weight 20"),
        "{described}"
    );
}

/// 20% errors: rolled back after exactly `threshold` (2) failed checks.
async fn errors_roll_back_at_the_threshold(c: &Cluster) {
    let primary_before = c.json(&["get", "deployment", "podinfo-primary"]).await;
    let before = revision(c).await;
    new_version(c, r#""sim.miniplane.dev/error-rate":"0.2""#).await;
    let failed = wait_new(c, &before, "Failed").await;
    assert_eq!(failed["status"]["failedChecks"], 2, "threshold 2");
    assert_eq!(failed["status"]["canaryWeight"], 0);
    let primary_after = c.json(&["get", "deployment", "podinfo-primary"]).await;
    assert_eq!(
        primary_after["spec"]["template"], primary_before["spec"]["template"],
        "the primary's template never changed"
    );
    assert_eq!(replicas(c, "podinfo").await, 0);
    let route = c.json(&["get", "httproute", "podinfo"]).await;
    assert_eq!(weights_of(&route), Some((100, 0)));
    let ev = events(c).await;
    let halts: Vec<&String> = ev
        .iter()
        .filter(|e| e.starts_with("Halt podinfo.default advancement request-success-rate "))
        .collect();
    assert!(!halts.is_empty(), "{ev:#?}");
    for h in &halts {
        // "… request-success-rate 80.31 < 99": the measured value, near 80%.
        let value: f64 = h
            .split_whitespace()
            .nth(4)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no value in {h:?}"));
        assert!((60.0..95.0).contains(&value), "{h}");
    }
    assert!(
        ev.iter()
            .any(|e| e == "Rolling back podinfo.default failed checks threshold reached 2"),
        "{ev:#?}"
    );
    assert!(
        ev.iter()
            .any(|e| e == "Canary failed! Scaling down podinfo.default"),
        "{ev:#?}"
    );
    let analyses = decisions(c, "runAnalysis").await;
    assert!(
        analyses.iter().any(|m| m.starts_with("request-success-rate ")
            && m.ends_with(" < min 99: failed check 2 of threshold 2")),
        "{analyses:#?}"
    );
    let rollbacks = decisions(c, "rollback").await;
    assert!(
        rollbacks
            .iter()
            .any(|m| m == "failedChecks 2 ≥ threshold 2: routing 100% to primary, scaling podinfo to 0"),
        "{rollbacks:#?}"
    );
}

/// A p99 of 900 ms against a 500 ms maximum: rolled back.
async fn latency_rolls_back(c: &Cluster) {
    let primary_before = image(c, "podinfo-primary").await;
    let before = revision(c).await;
    new_version(
        c,
        r#""sim.miniplane.dev/error-rate":"0","sim.miniplane.dev/latency-ms":"700","sim.miniplane.dev/latency-p99-ms":"900""#,
    )
    .await;
    let failed = wait_new(c, &before, "Failed").await;
    assert_eq!(failed["status"]["failedChecks"], 2);
    let ev = events(c).await;
    assert!(
        ev.iter().any(
            |e| e.starts_with("Halt podinfo.default advancement request-duration ") && e.ends_with("> 500")
        ),
        "{ev:#?}"
    );
    assert_eq!(image(c, "podinfo-primary").await, primary_before);
}

/// 5% errors: 95% passes an absolute minimum of 90, but is more than one
/// point below the primary's 100%: the relative check rolls it back.
async fn a_relative_check_rolls_back(c: &Cluster) {
    let relative = CANARY.replace(
        "      thresholdRange: {min: 99}\n",
        "      thresholdRange: {min: 90}\n      relativeThresholdRange: {min: -1}\n",
    );
    assert_ne!(relative, CANARY);
    let f = c.file("relative.yaml", &relative);
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
    let before = revision(c).await;
    new_version(
        c,
        r#""sim.miniplane.dev/error-rate":"0.05","sim.miniplane.dev/latency-ms":"20","sim.miniplane.dev/latency-p99-ms":"60""#,
    )
    .await;
    let failed = wait_new(c, &before, "Failed").await;
    assert_eq!(failed["status"]["failedChecks"], 2);
    let ev = events(c).await;
    assert!(
        ev.iter()
            .any(|e| e.starts_with("Halt podinfo.default advancement request-success-rate canary − primary ")),
        "{ev:#?}"
    );
    assert!(
        !ev.iter()
            .any(|e| e.contains("request-success-rate") && e.ends_with("< 90")),
        "the absolute check passed: {ev:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canaries_promote_a_good_version_and_roll_back_bad_ones() {
    let mut c = start(CANARY).await;
    good_canary_is_promoted(&c).await;
    errors_roll_back_at_the_threshold(&c).await;
    latency_rolls_back(&c).await;
    a_relative_check_rolls_back(&c).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_gate_the_rollout() {
    // A failing pre-rollout hook Job: no traffic moves, two failed checks, Failed.
    let failing = HOOKS.replace(
        r#"sim.miniplane.dev/exit-code: "0""#,
        r#"sim.miniplane.dev/exit-code: "1""#,
    );
    assert_ne!(failing, HOOKS);
    let mut c = start(&failing).await;
    let watch = RouteWatch::start(&c).await;
    let before = revision(&c).await;
    new_version(&c, r#""version":"2""#).await;
    let failed = wait_new(&c, &before, "Failed").await;
    let weights = watch.stop();
    assert!(
        weights.iter().all(|w| *w == 0),
        "no traffic ever moved: {weights:?}"
    );
    assert_eq!(failed["status"]["failedChecks"], 2);
    let ev = events(&c).await;
    assert!(
        ev.iter()
            .any(|e| e == "Halt podinfo.default advancement pre-rollout check smoke failed"),
        "{ev:#?}"
    );
    let jobs = c.ok(&["get", "jobs"]).await;
    assert!(jobs.contains("podinfo-smoke-"), "{jobs}");

    // The hook fixed: the next revision runs to its last step, then waits
    // for the promote annotation.
    let f = c.file("hooks.yaml", HOOKS);
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
    let before = revision(&c).await;
    new_version(&c, r#""version":"3""#).await;
    let waiting = wait_new(&c, &before, "WaitingPromotion").await;
    assert_eq!(waiting["status"]["canaryWeight"], 20);
    // Two more intervals (30 s simulated, under 1 s real): still waiting.
    c.sleep_real(Duration::from_secs(1)).await;
    let still = c.json(&["get", "canary", "podinfo"]).await;
    assert_eq!(still["status"]["phase"], "WaitingPromotion");
    let primary = c.json(&["get", "deployment", "podinfo-primary"]).await;
    assert!(
        primary["spec"]["template"]["metadata"]["annotations"]
            .get("version")
            .is_none(),
        "not promoted yet"
    );
    c.ok(&[
        "annotate",
        "canary",
        "podinfo",
        "rollouts.miniplane.dev/promote=true",
    ])
    .await;
    let done = wait_new(&c, &before, "Succeeded").await;
    assert!(
        done["metadata"]["annotations"]
            .get("rollouts.miniplane.dev/promote")
            .is_none(),
        "the annotation is removed once acted on"
    );
    let primary = c.json(&["get", "deployment", "podinfo-primary"]).await;
    assert_eq!(
        primary["spec"]["template"]["metadata"]["annotations"]["version"],
        "3"
    );
    let ev = events(&c).await;
    assert!(
        ev.iter().any(|e| e == "Pre-rollout check smoke passed"),
        "{ev:#?}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blue_green_sends_no_traffic_during_its_iterations_then_all_at_once() {
    let mut c = start(BLUE_GREEN).await;
    let watch = RouteWatch::start(&c).await;
    let before = revision(&c).await;
    new_version(&c, r#""version":"2""#).await;
    let done = wait_new(&c, &before, "Succeeded").await;
    let weights = watch.stop();
    assert_eq!(
        weights,
        [0, 100, 0],
        "0% during the iterations, 100% at once, then the primary again"
    );
    assert_eq!(done["status"]["iterations"], 4);
    let ev = events(&c).await;
    let pos = |m: &str| ev.iter().position(|e| e == m);
    let third = pos("Advance podinfo.default canary iteration 3/3").expect("three iterations");
    let switch = pos("Routing all traffic to canary").expect("the switch");
    assert!(third < switch, "{ev:#?}");
    c.stop().await;
}
