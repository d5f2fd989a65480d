//! The time machine (`/debug/time`, what `miniplane time` calls), end to end:
//! the real `kubectl` against an in-process miniplane (3 simulated nodes,
//! controllers, scheduler, kubelet; nothing mocked).
//!
//! Covered:
//! * stepping is repeatable: two clusters with the same seed and manifests,
//!   paused, in the middle of a rollout, one moved by one `step 10s`, the
//!   other by ten `step 1s`, reach the same StatefulSet counts and the same
//!   pods (image, phase, readiness, deletion);
//! * the journal is reproducible: two clusters with the same seed, paused,
//!   the same StatefulSet and the same steps record the same writes and plan
//!   decisions at the same offsets;
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

/// A StatefulSet `db` of 8 running `image` (OrderedReady: one pod at a time).
fn db(image: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 8
  selector:
    matchLabels: {{app: db}}
  template:
    metadata:
      labels: {{app: db}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: {image}
"#
    )
}

/// What the rollout looks like, without uids or times: the StatefulSet's
/// status counts, and per pod its image, phase, readiness and whether it
/// is being deleted.
async fn rollout_state(c: &Cluster) -> (String, BTreeMap<String, String>) {
    let sts = c.json(&["get", "statefulset", "db"]).await;
    let s = &sts["status"];
    let n = |v: &Value| v.as_i64().unwrap_or(0);
    let counts = format!(
        "replicas {} ready {} current {} updated {}",
        n(&s["replicas"]),
        n(&s["readyReplicas"]),
        n(&s["currentReplicas"]),
        n(&s["updatedReplicas"])
    );
    let pods = c.json(&["get", "pods", "-l", "app=db"]).await;
    let mut each = BTreeMap::new();
    for p in pods["items"].as_array().into_iter().flatten() {
        let name = p["metadata"]["name"].as_str().unwrap_or("?");
        let image = p["spec"]["containers"][0]["image"].as_str().unwrap_or("?");
        let phase = p["status"]["phase"].as_str().unwrap_or("?");
        let ready = condition(p, "Ready");
        let deleting = p["metadata"]["deletionTimestamp"].is_string();
        each.insert(
            name.to_string(),
            format!("{image} {phase} ready={ready} deleting={deleting}"),
        );
    }
    (counts, each)
}

/// Starts a cluster, pauses it, rolls `db` out at nginx:1.25 by stepping,
/// then sets nginx:1.26: the start of a rollout, on a paused clock.
async fn paused_mid_rollout() -> Cluster {
    let c = cluster().await;
    nodes_ready(&c).await;
    let paused = time_ok(&c, "pause").await;
    align_to_a_whole_second(&c, &paused).await;
    let f = c.file("db.yaml", &db("nginx:1.25"));
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
    time_ok(&c, "step?duration=1m").await;
    let (counts, _) = rollout_state(&c).await;
    assert_eq!(
        counts, "replicas 8 ready 8 current 8 updated 8",
        "rolled out after a simulated minute"
    );
    c.ok(&["set", "image", "statefulset/db", "app=nginx:1.26"]).await;
    c
}

/// Steps a paused clock to the next whole second. Object timestamps are
/// whole seconds, and the kubelet times a pod from its (truncated)
/// `startTime`: two clusters paused at different fractions of a second
/// would run their pods' timelines at different offsets.
async fn align_to_a_whole_second(c: &Cluster, paused: &Value) {
    let now = paused["now"].as_str().expect("now");
    let nanos = match now.split_once('.') {
        Some((_, frac)) => {
            let digits = frac.trim_end_matches('Z');
            format!("{digits:0<9}")
                .parse::<u64>()
                .expect("fraction of a second")
        }
        None => 0,
    };
    if nanos > 0 {
        let aligned = time_ok(c, &format!("step?duration={}ns", 1_000_000_000 - nanos)).await;
        let now = aligned["now"].as_str().expect("now");
        assert!(!now.contains('.'), "aligned to a whole second: {now}");
    }
}

/// The acceptance test of `step`. A StatefulSet rather than a Deployment:
/// its pods' names are fixed (`db-0` ... `db-7`), and the one random input
/// of the simulation, a pod's image pull time, is drawn from the seed and
/// the pod's name, so the same seed gives the same timeline. (A
/// Deployment's pod names come from the generator that also draws every
/// uid, and several components create objects at one instant in an order
/// nobody fixes: the names, hence the pull times, can differ between runs.)
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
    eprintln!("before: {before:?}\nafter 10 s: {after_one:?}");
    if after_one != after_ten {
        dump_journal(&one, "time-machine-one-step.txt").await;
        dump_journal(&ten, "time-machine-ten-steps.txt").await;
    }
    assert_eq!(after_one, after_ten, "one step of 10 s and ten of 1 s");
    assert_ne!(after_one, before, "the rollout moved in those 10 s");
    let new = |state: &(String, BTreeMap<String, String>)| {
        state.1.values().filter(|v| v.starts_with("nginx:1.26")).count()
    };
    assert!(
        new(&after_one) > new(&before),
        "pods moved to the new image: {after_one:?}"
    );
    let done = "nginx:1.26 Running ready=true deleting=false";
    assert!(
        after_one.1.values().any(|v| v != done),
        "10 s is the middle of the rollout, not its end: {after_one:?}"
    );
    let (a, b) = (time_ok(&one, "").await, time_ok(&ten, "").await);
    assert_eq!(
        (&a["paused"], &b["paused"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
}

/// Writes `c`'s journal to `target/tmp/<file>`, one entry a line (time
/// since the first entry, step, actor, object, message), for comparing two
/// runs that should not differ.
async fn dump_journal(c: &Cluster, file: &str) {
    let lines: Vec<String> = c
        .journal()
        .await
        .values()
        .map(|e| {
            let o = &e["object"];
            format!(
                "{} {} {} {}/{}/{} {}",
                e["time"].as_str().unwrap_or("?"),
                e["step"].as_str().unwrap_or("?"),
                e["actor"].as_str().unwrap_or("?"),
                o["kind"].as_str().unwrap_or(""),
                o["namespace"].as_str().unwrap_or(""),
                o["name"].as_str().unwrap_or(""),
                e["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp");
    std::fs::create_dir_all(&dir).expect("target/tmp");
    std::fs::write(dir.join(file), lines.join("\n")).expect("write the journal");
    eprintln!("journal written to target/tmp/{file}");
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

/// The journal's story of the StatefulSet `db` (the set, its pods, their
/// ControllerRevisions and Events) from `from` on: one line per entry, its
/// offset from `from`, step, actor, verb, object, function and message,
/// with uids and generated name suffixes masked; sorted within each instant
/// (reactions to one instant run concurrently, in no fixed order).
async fn story_of_db(c: &Cluster, from: jiff::Timestamp) -> Vec<String> {
    let masks = [
        (
            regex::Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap(),
            "UID",
        ),
        (regex::Regex::new(r"\.[0-9a-f]{8,}").unwrap(), ".SUFFIX"),
        (
            regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").unwrap(),
            "TIME",
        ),
    ];
    let about_db = |o: &Value| {
        let name = o["name"].as_str().unwrap_or("");
        match o["kind"].as_str().unwrap_or("") {
            "StatefulSet" => name == "db",
            "Pod" | "ControllerRevision" | "Event" => name.starts_with("db-") || name.starts_with("db."),
            _ => false,
        }
    };
    let mut lines: Vec<(i64, String)> = c
        .journal()
        .await
        .values()
        .filter(|e| about_db(&e["object"]) && reproducible(e))
        .filter_map(|e| {
            let at: jiff::Timestamp = e["time"].as_str()?.parse().ok()?;
            let offset = at.duration_since(from).as_micros() as i64;
            (offset >= 0).then_some((offset, e))
        })
        .map(|(offset, e)| {
            let o = &e["object"];
            let mut line = format!(
                "{:>10.6}s {} {} {} {}/{} {} {}",
                offset as f64 / 1e6,
                e["step"].as_str().unwrap_or(""),
                e["actor"].as_str().unwrap_or(""),
                e["verb"].as_str().unwrap_or(""),
                o["kind"].as_str().unwrap_or(""),
                o["name"].as_str().unwrap_or(""),
                e["function"].as_str().unwrap_or(""),
                e["message"].as_str().unwrap_or("")
            );
            for (re, with) in &masks {
                line = re.replace_all(&line, *with).into_owned();
            }
            (offset, line)
        })
        .collect();
    lines.sort();
    // A wait is decided again by every sync that is still blocked, and how
    // many syncs answer one instant's events depends on how they coalesce.
    lines.dedup();
    lines.into_iter().map(|(_, l)| l).collect()
}

/// What `--seed` and the same steps reproduce: the writes and the plan
/// decisions. Not the enqueues and syncs (how many syncs answer one
/// instant's events depends on how fast each reaction runs), nor a wait for
/// expectations (whether a sync runs before its informer saw its own
/// creations depends on the same).
fn reproducible(e: &Value) -> bool {
    match e["step"].as_str() {
        Some("write") => true,
        Some("decision") => !e["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("expectations not satisfied"),
        _ => false,
    }
}

/// `--seed` and the same steps give the same story: two clusters paused at
/// a whole second, the same StatefulSet applied, the same steps.
#[tokio::test]
async fn the_same_manifests_and_steps_give_the_same_journal() {
    let mut stories = Vec::new();
    for _ in 0..2 {
        let c = cluster().await;
        nodes_ready(&c).await;
        let paused = time_ok(&c, "pause").await;
        align_to_a_whole_second(&c, &paused).await;
        let from: jiff::Timestamp = time_ok(&c, "").await["now"]
            .as_str()
            .expect("now")
            .parse()
            .expect("RFC 3339");
        let f = c.file("db.yaml", &db("nginx:1.25"));
        c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
        for _ in 0..3 {
            time_ok(&c, "step?duration=5s").await;
        }
        stories.push(story_of_db(&c, from).await);
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp");
    std::fs::create_dir_all(&dir).expect("target/tmp");
    for (i, s) in stories.iter().enumerate() {
        std::fs::write(dir.join(format!("story-of-db-{i}.txt")), s.join("\n")).expect("write");
    }
    assert!(stories[0].len() > 20, "a story: {:?}", stories[0]);
    let only = |a: &[String], b: &[String]| -> Vec<String> {
        a.iter().filter(|l| !b.contains(l)).cloned().collect()
    };
    assert!(
        stories[0] == stories[1],
        "two runs, two stories (target/tmp/story-of-db-*.txt); only in the first:\n{}\nonly in the second:\n{}",
        only(&stories[0], &stories[1]).join("\n"),
        only(&stories[1], &stories[0]).join("\n")
    );
}
