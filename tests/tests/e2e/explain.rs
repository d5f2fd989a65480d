//! `miniplane explain` on real stories driven by kubectl, compared with golden files in
//! `tests/testdata/explain/` (`MINIPLANE_BLESS=1` rewrites them): a rolling update, a Recreate
//! rollout, a crash loop, an orphan adopted by a ReplicaSet, a foreground deletion.
//!
//! The story is built from the server's own journal with the library the command uses
//! ([`miniplane::explain`]). Generated names, uids, node names and times are normalised, and
//! each test keeps the steps whose words do not depend on scheduling (which informer event woke a
//! sync first, how many times a kubelet reported progress), so that the files stay the same under
//! load.

use std::time::Duration;

use e2e::{Cluster, Config, PATIENCE};
use miniplane::cluster::SimConfig;
use miniplane::explain::{RenderOptions, explain, parse_target};
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 10.0;

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

/// The explanation of `object` (`kind/name`, namespace default), as the command prints it.
fn explain_now(c: &Cluster, object: &str) -> String {
    let entries = c.server().api().clock().journal().since(0);
    let target = parse_target(&[object.to_string()], "default").expect("a known kind");
    let options = RenderOptions {
        max_steps: 0,
        ..RenderOptions::default()
    };
    explain(&entries, &target, &options)
}

/// One printed group: its header and its lines.
#[derive(Debug)]
struct Group {
    header: String,
    lines: Vec<String>,
}

/// The groups of a printed explanation (the title and blank lines dropped).
fn groups(text: &str) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for line in text.lines().skip(2) {
        if let Some(body) = line.strip_prefix("           ") {
            if let Some(g) = out.last_mut() {
                g.lines.push(body.to_string());
            }
        } else if let Some((_, header)) = line.trim_start().split_once("s  ") {
            out.push(Group {
                header: header.to_string(),
                lines: Vec::new(),
            });
        }
    }
    out
}

/// The groups with a header or line containing one of `keep`, with only their lines that do;
/// `+T` for the times (which the groups no longer carry).
fn kept(text: &str, keep: &[&str]) -> Vec<Group> {
    let has = |s: &str| keep.iter().any(|k| s.contains(k));
    groups(text)
        .into_iter()
        .filter(|g| has(&g.header) || g.lines.iter().any(|l| has(l)))
        .map(|g| Group {
            lines: g.lines.into_iter().filter(|l| has(l)).collect(),
            header: g.header,
        })
        .collect()
}

fn print(groups: &[Group]) -> String {
    let mut out = String::new();
    for g in groups {
        out.push_str(&format!("+T  {}\n", g.header));
        for l in &g.lines {
            out.push_str(&format!("      {l}\n"));
        }
    }
    out
}

/// Generated names, uids, nodes, times and durations replaced by placeholders.
fn normalise(text: &str, names: &[(&str, &str)]) -> String {
    let mut out = text.to_string();
    for (from, to) in names {
        out = out.replace(from, to);
    }
    let rules = [
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "UID",
        ),
        (r"miniplane-worker-\d+", "NODE"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "TIME"),
        (r"after \d+(\.\d+)?(ns|µs|ms|s)\b", "after D"),
        (r"\b(POD|[a-z]+-(OLD|NEW))-[a-z0-9]{5}\b", "$1-POD"),
    ];
    for (pattern, to) in rules {
        out = regex::Regex::new(pattern)
            .expect("a pattern")
            .replace_all(&out, to)
            .into_owned();
    }
    out
}

/// Compares with `tests/testdata/explain/<name>.txt`, or writes it with `MINIPLANE_BLESS=1`.
fn golden(name: &str, got: &str, full: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/explain/{name}.txt"));
    if std::env::var_os("MINIPLANE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("testdata dir");
        std::fs::write(&path, got).expect("write the golden file");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        got, want,
        "{name}: the explanation changed (MINIPLANE_BLESS=1 rewrites it); the whole output:\n{full}"
    );
}

/// The ReplicaSet names of deployment `name`, oldest first.
async fn replica_sets(c: &Cluster, app: &str) -> Vec<String> {
    let out = c
        .ok(&[
            "get",
            "rs",
            "-l",
            &format!("app={app}"),
            "--sort-by=.metadata.annotations.deployment\\.kubernetes\\.io/revision",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .await;
    out.split_whitespace().map(str::to_string).collect()
}

/// The first pod created of ReplicaSet `rs`.
async fn first_pod_of(c: &Cluster, rs: &str) -> String {
    let hash = rs.rsplit('-').next().expect("a hash");
    let out = c
        .ok(&[
            "get",
            "pods",
            "-l",
            &format!("pod-template-hash={hash}"),
            "--sort-by=.metadata.creationTimestamp",
            "-o",
            "jsonpath={.items[0].metadata.name}",
        ])
        .await;
    out.trim().to_string()
}

async fn rollout_done(c: &Cluster, name: &str) {
    c.ok(&["rollout", "status", &format!("deploy/{name}"), "--timeout=60s"])
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_update_explains_a_new_pod_back_to_kubectl_set_image() {
    let c = cluster().await;
    c.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.25",
        "--replicas=3",
    ])
    .await;
    rollout_done(&c, "web").await;
    c.ok(&["set", "image", "deploy/web", "nginx=nginx:1.26"]).await;
    rollout_done(&c, "web").await;
    let rss = replica_sets(&c, "web").await;
    let (old, new) = (&rss[0], &rss[1]);
    let pod = first_pod_of(&c, new).await;
    let text = explain_now(&c, &format!("po/{pod}"));
    let got = print(&kept(&text, &[""]));
    let names = [
        (pod.as_str(), "web-NEW-POD"),
        (new.as_str(), "web-NEW"),
        (old.as_str(), "web-OLD"),
    ];
    golden("rolling_update", &normalise(&got, &names), &text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recreate_rollout_explains_the_old_replica_set_scaled_to_zero() {
    let c = cluster().await;
    let manifest = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: re
spec:
  replicas: 2
  strategy: {type: Recreate}
  selector:
    matchLabels: {app: re}
  template:
    metadata:
      labels: {app: re}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
"#;
    assert!(c.run_with_yaml(&["create"], manifest).await.success);
    rollout_done(&c, "re").await;
    c.ok(&["set", "image", "deploy/re", "nginx=nginx:1.26"]).await;
    rollout_done(&c, "re").await;
    let rss = replica_sets(&c, "re").await;
    let (old, new) = (&rss[0], &rss[1]);
    let text = explain_now(&c, &format!("rs/{old}"));
    let keep = [
        "you (",
        "rolloutRecreate",
        "getNewReplicaSet",
        "manageReplicas",
        "spec.replicas",
        "created replicaset",
    ];
    let got = print(&kept(&text, &keep));
    golden(
        "recreate",
        &normalise(&got, &[(new.as_str(), "re-NEW"), (old.as_str(), "re-OLD")]),
        &text,
    );
    // The deployment's own story says why the new pods waited.
    let d = explain_now(&c, "deploy/re");
    assert!(d.contains("rolloutRecreate: Recreate: no old pod is left"), "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_loop_explains_the_doubling_back_off() {
    let c = cluster().await;
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: crash
  annotations:
    sim.miniplane.dev/run-seconds: "1"
    sim.miniplane.dev/exit-code: "1"
spec:
  containers:
  - name: app
    image: busybox:1.36
"#;
    let r = c.run_with_yaml(&["create"], pod).await;
    assert!(r.success, "{}", r.stderr);
    c.eventually_json(
        &["get", "pod", "crash"],
        "three restarts",
        |p: &serde_json::Value| {
            p["status"]["containerStatuses"][0]["restartCount"]
                .as_i64()
                .unwrap_or(0)
                >= 3
        },
    )
    .await;
    let text = explain_now(&c, "po/crash");
    let backoffs = kept(&text, &["doBackOff"]);
    assert!(backoffs.len() >= 2, "{text}");
    // What woke each kubelet sync (its own write's event, or its requeue) is timing.
    let oldest_two: Vec<Group> = backoffs[backoffs.len() - 2..]
        .iter()
        .map(|g| Group {
            header: g.header.split(", ").next().unwrap_or_default().to_string(),
            lines: g.lines.clone(),
        })
        .collect();
    golden("crash_loop", &normalise(&print(&oldest_two), &[]), &text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_pod_is_explained_as_adopted_by_the_replica_set() {
    let c = cluster().await;
    let orphan = r#"apiVersion: v1
kind: Pod
metadata:
  name: orphan
  labels: {app: adopt}
spec:
  containers:
  - name: app
    image: nginx:1.25
"#;
    assert!(c.run_with_yaml(&["create"], orphan).await.success);
    c.eventually_json(&["get", "pod", "orphan"], "Running", |p: &serde_json::Value| {
        p["status"]["phase"] == "Running"
    })
    .await;
    let rs = r#"apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: adopt
spec:
  replicas: 1
  selector:
    matchLabels: {app: adopt}
  template:
    metadata:
      labels: {app: adopt}
    spec:
      containers:
      - name: app
        image: nginx:1.25
"#;
    assert!(c.run_with_yaml(&["create"], rs).await.success);
    c.eventually_json(&["get", "pod", "orphan"], "adopted", |p: &serde_json::Value| {
        p["metadata"]["ownerReferences"][0]["name"] == "adopt"
    })
    .await;
    let text = explain_now(&c, "po/orphan");
    golden("adoption", &normalise(&print(&kept(&text, &[""])), &[]), &text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreground_deletion_explains_a_pods_deletion_back_to_kubectl_delete() {
    let c = cluster().await;
    c.ok(&["create", "deployment", "fg", "--image=nginx:1.25", "--replicas=1"])
        .await;
    rollout_done(&c, "fg").await;
    let rss = replica_sets(&c, "fg").await;
    let pod = first_pod_of(&c, &rss[0]).await;
    c.ok(&["delete", "deploy/fg", "--cascade=foreground", "--timeout=60s"])
        .await;
    // Gone: the kubelet's final delete is in the journal.
    let deadline = PATIENCE;
    let mut waited = Duration::ZERO;
    while c.run(&["get", "pod", &pod]).await.success && waited < deadline {
        c.sleep_real(Duration::from_millis(200)).await;
        waited += Duration::from_millis(200);
    }
    let text = explain_now(&c, &format!("po/{pod}"));
    let names = [(pod.as_str(), "fg-OLD-POD"), (rss[0].as_str(), "fg-OLD")];
    golden(
        "foreground_deletion",
        &normalise(&print(&kept(&text, &[""])), &names),
        &text,
    );
    assert!(
        text.contains("you (kubectl) deleted deployment default/fg"),
        "{text}"
    );
}
