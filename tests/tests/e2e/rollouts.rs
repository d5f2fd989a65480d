//! Deployment and ReplicaSet rollouts, end to end: the real `kubectl` against
//! an in-process miniplane whose one clock runs [`SCALE`] times faster than
//! real time (3 simulated nodes, controllers, scheduler and kubelet; nothing
//! mocked).
//!
//! Covered:
//! * a 10-replica Deployment rolls out: `rollout status`, the `get pods` and
//!   `get deploy` tables, pods spread over every node;
//! * `set image` rolling updates (absolute `maxSurge: 2, maxUnavailable: 0`
//!   and the 25%/25% default), with a pod watch in the test checking the
//!   surge/unavailability bounds after every event; revision 2 and one old
//!   ReplicaSet at 0 afterwards;
//! * `rollout undo` (reuses the old ReplicaSet as the next revision),
//!   `rollout history`, `rollout undo --to-revision`;
//! * `rollout pause` / `resume`, `rollout restart` (every pod replaced);
//! * `scale` in the middle of a stuck rollout: proportional scaling, checked
//!   against upstream's `getReplicaSetProportion` on the observed state;
//! * a failing image pull ends in `ProgressDeadlineExceeded` and a failing
//!   `rollout status`;
//! * the Recreate strategy never runs old and new pods together;
//! * a ReplicaSet replaces deleted pods, and adopts a matching orphan instead
//!   of creating one pod too many;
//! * `kubectl delete --cascade=foreground --wait` of a Deployment returns
//!   only once the garbage collector has removed its ReplicaSet and pods.
//!
//! Every wait is bounded: kubectl with `--timeout=`, polls with
//! [`tokio::time::timeout`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use apiserver::Api;
use apiserver::api::{ListOptions, WatchEvent, WatchOptions, WatchStream};
use e2e::{Cluster, Config};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Simulated seconds per real second.
const SCALE: f64 = 20.0;
/// Real-time bound of every poll in this file.
const WAIT: Duration = Duration::from_secs(20);
/// `--timeout` of every `kubectl rollout status` (real time).
const ROLLOUT_TIMEOUT: &str = "--timeout=25s";
const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH: &str = "pod-template-hash";

// ---------------------------------------------------------------------------
// Cluster, manifests and kubectl helpers.

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

/// A Deployment `name` (label `app: name`, image `nginx:1.25`); `strategy`
/// is a YAML flow map, `extra` more lines of `spec` (indented 2).
fn deployment(name: &str, replicas: u32, strategy: &str, extra: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  strategy: {strategy}
{extra}  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: nginx:1.25
"#
    )
}

/// Writes `yaml` to a file and `kubectl apply`s it.
async fn apply(c: &Cluster, yaml: &str) -> String {
    let f = c.file("manifest.yaml", yaml);
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await
}

/// `kubectl rollout status deployment/<name>`, which must succeed.
async fn rolled_out(c: &Cluster, name: &str) {
    let out = c
        .ok(&[
            "rollout",
            "status",
            &format!("deployment/{name}"),
            ROLLOUT_TIMEOUT,
        ])
        .await;
    assert!(
        out.contains(&format!("deployment \"{name}\" successfully rolled out")),
        "{out}"
    );
}

/// Applies a Deployment and waits for its rollout.
async fn deploy(c: &Cluster, name: &str, replicas: u32, strategy: &str, extra: &str) {
    let out = apply(c, &deployment(name, replicas, strategy, extra)).await;
    assert!(out.contains(&format!("deployment.apps/{name} created")), "{out}");
    rolled_out(c, name).await;
}

// ---------------------------------------------------------------------------
// Reading the server in-process.

fn info(api: &Api, plural: &str) -> std::sync::Arc<apiserver::registry::ResourceInfo> {
    let (group, version) = if plural == "pods" {
        ("", "v1")
    } else {
        ("apps", "v1")
    };
    api.resource(group, version, plural).expect("served resource")
}

/// Objects of `plural` in `default` matching the label selector.
fn list(api: &Api, plural: &str, selector: &str) -> Vec<Value> {
    let opts = ListOptions {
        label_selector: Some(selector.to_string()),
        ..Default::default()
    };
    api.list(&info(api, plural), Some("default"), &opts)
        .expect("list")
        .items
}

fn get(api: &Api, plural: &str, name: &str) -> Value {
    api.get(&info(api, plural), Some("default"), name).expect("get")
}

fn name(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

fn annotation<'a>(o: &'a Value, key: &str) -> Option<&'a str> {
    o["metadata"]["annotations"][key].as_str()
}

fn hash(o: &Value) -> String {
    o["metadata"]["labels"][HASH]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn terminating(o: &Value) -> bool {
    !o["metadata"]["deletionTimestamp"].is_null()
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// Pods of `app` that are not terminating.
fn live_pods(api: &Api, app: &str) -> Vec<Value> {
    let mut pods = list(api, "pods", &format!("app={app}"));
    pods.retain(|p| !terminating(p));
    pods
}

fn spec_replicas(o: &Value) -> i64 {
    o["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// The ReplicaSets of `app`, oldest revision first.
fn replicasets(api: &Api, app: &str) -> Vec<Value> {
    let mut rss = list(api, "replicasets", &format!("app={app}"));
    rss.sort_by_key(revision);
    rss
}

fn revision(o: &Value) -> u64 {
    annotation(o, REVISION).and_then(|r| r.parse().ok()).unwrap_or(0)
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

/// Waits until `app` has exactly `n` live pods, all Ready and of the
/// Deployment's current template; returns them.
async fn settled(c: &Cluster, app: &str, n: usize) -> Vec<Value> {
    eventually(c, &format!("{n} ready current pods of {app}"), |api| {
        let rss = replicasets(api, app);
        let newest = rss.last().map(hash)?;
        let pods = live_pods(api, app);
        let ok = pods.len() == n && pods.iter().all(|p| ready(p) && hash(p) == newest);
        ok.then_some(pods)
    })
    .await
}

// ---------------------------------------------------------------------------
// A pod watch inside the test, checking an invariant after every event.

/// What an [`Observer`] saw.
#[derive(Debug, Default)]
struct Observed {
    /// Watch events handled.
    events: usize,
    /// Invariant violations (the first few).
    violations: Vec<String>,
    /// Every `pod-template-hash` seen on a pod.
    hashes: BTreeSet<String>,
}

/// The observed state: the pods and ReplicaSets of the selector, by name.
#[derive(Default)]
struct State {
    pods: BTreeMap<String, Value>,
    rss: BTreeMap<String, Value>,
}

/// The check run on every observed state.
type Check = Box<dyn FnMut(&State) -> Option<String> + Send>;

/// A running watch of pods and ReplicaSets; [`Observer::finish`] stops it.
struct Observer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Observed>,
}

/// Lists `plural` by `selector` and watches from that list's revision.
fn list_and_watch(api: &Api, plural: &str, selector: &str) -> (BTreeMap<String, Value>, WatchStream) {
    let info = info(api, plural);
    let opts = ListOptions {
        label_selector: Some(selector.to_string()),
        ..Default::default()
    };
    let initial = api.list(&info, Some("default"), &opts).expect("list");
    let opts = WatchOptions {
        resource_version: Some(initial.resource_version),
        label_selector: Some(selector.to_string()),
        ..Default::default()
    };
    let rx = api.watch(&info, Some("default"), &opts).expect("watch");
    (initial.items.into_iter().map(|o| (name(&o), o)).collect(), rx)
}

/// Applies one watch event to `objects`; false when the watch failed.
fn apply_event(objects: &mut BTreeMap<String, Value>, ev: Option<WatchEvent>, seen: &mut Observed) -> bool {
    match ev {
        Some(WatchEvent::Added(o) | WatchEvent::Modified(o)) => {
            objects.insert(name(&o), o);
        }
        Some(WatchEvent::Deleted(o)) => {
            objects.remove(&name(&o));
        }
        Some(WatchEvent::Bookmark(_)) => {}
        Some(WatchEvent::Error(e)) => {
            seen.violations.push(format!("watch error: {e:?}"));
            return false;
        }
        None => {
            seen.violations.push("watch ended early".to_string());
            return false;
        }
    }
    seen.events += 1;
    true
}

impl Observer {
    /// Watches the pods and ReplicaSets matching `selector`, running `check`
    /// on the state after every event.
    fn start(api: &Api, selector: &str, mut check: Check) -> Observer {
        let (pods, mut pod_rx) = list_and_watch(api, "pods", selector);
        let (rss, mut rs_rx) = list_and_watch(api, "replicasets", selector);
        let mut state = State { pods, rss };
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let mut seen = Observed::default();
            let mut ok = true;
            while ok {
                tokio::select! {
                    _ = &mut stopped => break,
                    ev = pod_rx.recv() => ok = apply_event(&mut state.pods, ev, &mut seen),
                    ev = rs_rx.recv() => ok = apply_event(&mut state.rss, ev, &mut seen),
                }
                seen.hashes.extend(state.pods.values().map(hash));
                if let Some(v) = check(&state).filter(|_| seen.violations.len() < 10) {
                    seen.violations.push(v);
                }
            }
            seen
        });
        Observer { stop, task }
    }

    async fn finish(self) -> Observed {
        let _ = self.stop.send(());
        self.task.await.expect("observer task")
    }
}

/// A one-line summary of pods for failure messages (R: ready, T: terminating).
fn describe(pods: &BTreeMap<String, Value>) -> String {
    pods.values()
        .map(|p| {
            let flags = format!(
                "{}{}",
                if ready(p) { "R" } else { "-" },
                if terminating(p) { "T" } else { "" }
            );
            format!("{}[{}]", name(p), flags)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The ReplicaSet controlling `pod`.
fn owner(pod: &Value) -> &str {
    pod["metadata"]["ownerReferences"][0]["name"]
        .as_str()
        .unwrap_or_default()
}

/// The rolling-update bounds, as upstream guarantees them:
/// * live Ready pods ≥ `min_ready`, at every instant;
/// * Σ ReplicaSet `spec.replicas` ≤ `max_total`, at every instant;
/// * live pods ≤ `max_total`, except for pods a just scaled-down ReplicaSet
///   has yet to delete: its controller and the one creating the new pods act
///   independently, upstream too, so for a moment both can exist. Each
///   ReplicaSet therefore counts `min(live pods, spec.replicas)`.
fn rolling_bounds(max_total: usize, min_ready: usize) -> Check {
    Box::new(move |s| {
        let live: Vec<&Value> = s.pods.values().filter(|p| !terminating(p)).collect();
        let ready_count = live.iter().filter(|p| ready(p)).count();
        let specs: i64 = s.rss.values().map(spec_replicas).sum();
        let counted: i64 = s
            .rss
            .values()
            .map(|rs| {
                let mine = live.iter().filter(|p| owner(p) == name(rs)).count();
                spec_replicas(rs).min(mine as i64)
            })
            .sum();
        let orphans = live.iter().filter(|p| !s.rss.contains_key(owner(p))).count();
        let total = counted + orphans as i64;
        let max = max_total as i64;
        (ready_count < min_ready || specs > max || total > max).then(|| {
            let sizes: Vec<String> = s
                .rss
                .values()
                .map(|rs| format!("{}={}", hash(rs), spec_replicas(rs)))
                .collect();
            format!(
                "{} live pods ({total} counted, max {max_total}), {ready_count} ready (min {min_ready}); \
                 RS specs {sizes:?}: {}",
                live.len(),
                describe(&s.pods)
            )
        })
    })
}

// ---------------------------------------------------------------------------
// 1. A plain rollout.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_replicas_roll_out_spread_over_every_node() {
    let mut c = cluster().await;
    deploy(&c, "web", 10, "{}", "").await;

    let table = c.ok(&["get", "pods", "-l", "app=web"]).await;
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 10, "{table}");
    for row in &rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!((cols[1], cols[2]), ("1/1", "Running"), "{table}");
    }

    let api = c.server().api();
    let mut per_node: BTreeMap<String, usize> = miniplane::cluster::node_names(3)
        .into_iter()
        .map(|n| (n, 0))
        .collect();
    for p in live_pods(api, "web") {
        let node = p["spec"]["nodeName"].as_str().expect("bound").to_string();
        *per_node.entry(node).or_default() += 1;
    }
    assert_eq!(per_node.len(), 3, "{per_node:?}");
    assert!(per_node.values().all(|n| *n >= 1), "{per_node:?}");

    let deploys = c.ok(&["get", "deploy", "web"]).await;
    let row: Vec<&str> = deploys
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(&row[..4], ["web", "10/10", "10", "10"], "{deploys}");

    let waited = c
        .ok(&[
            "wait",
            "--for=condition=Available",
            "deployment/web",
            "--timeout=60s",
        ])
        .await;
    assert!(waited.contains("deployment.apps/web condition met"), "{waited}");
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 2. Rolling updates stay within maxSurge / maxUnavailable.

/// Deploys 10 replicas with `strategy`, then `set image` while a pod watch
/// checks `≤ 10 + surge` live pods and `≥ 10 − unavailable` ready ones.
async fn rolling_update_within_bounds(strategy: &str, surge: usize, unavailable: usize) {
    let mut c = cluster().await;
    deploy(&c, "web", 10, strategy, "").await;
    settled(&c, "web", 10).await;
    let api = c.server().api().clone();
    let observer = Observer::start(&api, "app=web", rolling_bounds(10 + surge, 10 - unavailable));

    let out = c.ok(&["set", "image", "deployment/web", "app=nginx:1.26"]).await;
    assert!(out.contains("deployment.apps/web image updated"), "{out}");
    rolled_out(&c, "web").await;
    let pods = settled(&c, "web", 10).await;
    assert!(
        pods.iter()
            .all(|p| p["spec"]["containers"][0]["image"] == "nginx:1.26")
    );
    let seen = observer.finish().await;
    assert!(seen.violations.is_empty(), "{:#?}", seen.violations);
    assert!(
        seen.hashes.len() >= 2 && seen.events >= 20,
        "the watch saw no rollout: {seen:?}"
    );

    let d = get(&api, "deployments", "web");
    assert_eq!(annotation(&d, REVISION), Some("2"), "{d}");
    let rss = replicasets(&api, "web");
    assert_eq!(rss.len(), 2, "{rss:#?}");
    assert_eq!((revision(&rss[0]), spec_replicas(&rss[0])), (1, 0));
    assert_eq!((revision(&rss[1]), spec_replicas(&rss[1])), (2, 10));
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_update_absolute_surge_never_goes_unavailable() {
    let strategy = "{type: RollingUpdate, rollingUpdate: {maxSurge: 2, maxUnavailable: 0}}";
    rolling_update_within_bounds(strategy, 2, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_update_default_percentages_stay_within_bounds() {
    // 25% of 10: maxSurge rounds up (3), maxUnavailable down (2).
    rolling_update_within_bounds("{}", 3, 2).await;
}

// ---------------------------------------------------------------------------
// 3. Undo and history.

/// The ReplicaSet of `app` at `rev`, by name.
fn rs_at_revision(api: &Api, app: &str, rev: u64) -> Option<String> {
    replicasets(api, app)
        .iter()
        .find(|rs| revision(rs) == rev)
        .map(name)
}

/// `(revision, image)` of the Deployment.
fn deployment_state(api: &Api, app: &str) -> (u64, String) {
    let d = get(api, "deployments", app);
    let image = d["spec"]["template"]["spec"]["containers"][0]["image"].as_str();
    (revision(&d), image.unwrap_or_default().to_string())
}

/// The revision numbers `kubectl rollout history` lists.
async fn history(c: &Cluster, app: &str) -> Vec<u64> {
    let out = c.ok(&["rollout", "history", &format!("deployment/{app}")]).await;
    assert!(out.contains("REVISION  CHANGE-CAUSE"), "{out}");
    out.lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_undo_reuses_the_old_replicaset_as_a_new_revision() {
    let mut c = cluster().await;
    deploy(&c, "web", 3, "{}", "").await;
    c.ok(&["set", "image", "deployment/web", "app=nginx:1.26"]).await;
    rolled_out(&c, "web").await;
    let api = c.server().api().clone();
    let rs1 = rs_at_revision(&api, "web", 1).expect("revision 1");
    let rs2 = rs_at_revision(&api, "web", 2).expect("revision 2");
    assert_eq!(history(&c, "web").await, [1, 2]);

    let out = c.ok(&["rollout", "undo", "deployment/web"]).await;
    assert!(out.contains("deployment.apps/web rolled back"), "{out}");
    rolled_out(&c, "web").await;
    assert_eq!(deployment_state(&api, "web"), (3, "nginx:1.25".to_string()));
    assert_eq!(
        rs_at_revision(&api, "web", 3).as_ref(),
        Some(&rs1),
        "old RS reused"
    );
    assert_eq!(replicasets(&api, "web").len(), 2);
    assert_eq!(history(&c, "web").await, [2, 3]);
    let rev3 = c
        .ok(&["rollout", "history", "deployment/web", "--revision=3"])
        .await;
    assert!(rev3.contains("nginx:1.25"), "{rev3}");
    settled(&c, "web", 3).await;

    let out = c
        .ok(&["rollout", "undo", "deployment/web", "--to-revision=2"])
        .await;
    assert!(out.contains("deployment.apps/web rolled back"), "{out}");
    rolled_out(&c, "web").await;
    assert_eq!(deployment_state(&api, "web"), (4, "nginx:1.26".to_string()));
    assert_eq!(rs_at_revision(&api, "web", 4).as_ref(), Some(&rs2));
    assert_eq!(history(&c, "web").await, [3, 4]);

    let err = c
        .fails(&["rollout", "undo", "deployment/web", "--to-revision=9"])
        .await;
    assert!(
        err.contains("unable to find specified revision 9 in history"),
        "{err}"
    );
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 4. Pause, resume, restart.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_deployment_creates_no_replicaset_until_resumed() {
    let mut c = cluster().await;
    deploy(&c, "web", 3, "{}", "").await;
    let out = c.ok(&["rollout", "pause", "deployment/web"]).await;
    assert!(out.contains("deployment.apps/web paused"), "{out}");
    c.ok(&["set", "image", "deployment/web", "app=nginx:1.26"]).await;
    // Once the controller has observed the change, and a while after, there
    // is still only the one ReplicaSet.
    eventually(&c, "the paused spec observed", |api| {
        let d = get(api, "deployments", "web");
        (d["status"]["observedGeneration"] == d["metadata"]["generation"]).then_some(())
    })
    .await;
    let api = c.server().api().clone();
    api.clock().sleep(Duration::from_secs(10)).await;
    let rss = replicasets(&api, "web");
    assert_eq!(rss.len(), 1, "{rss:#?}");
    assert_eq!(deployment_state(&api, "web"), (1, "nginx:1.26".to_string()));

    let out = c.ok(&["rollout", "resume", "deployment/web"]).await;
    assert!(out.contains("deployment.apps/web resumed"), "{out}");
    rolled_out(&c, "web").await;
    assert_eq!(replicasets(&api, "web").len(), 2);
    assert_eq!(deployment_state(&api, "web"), (2, "nginx:1.26".to_string()));
    settled(&c, "web", 3).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_restart_replaces_every_pod() {
    let mut c = cluster().await;
    deploy(&c, "web", 4, "{}", "").await;
    let before: BTreeSet<String> = settled(&c, "web", 4).await.iter().map(name).collect();
    let out = c.ok(&["rollout", "restart", "deployment/web"]).await;
    assert!(out.contains("deployment.apps/web restarted"), "{out}");
    rolled_out(&c, "web").await;
    let after: BTreeSet<String> = settled(&c, "web", 4).await.iter().map(name).collect();
    assert!(before.is_disjoint(&after), "before {before:?}, after {after:?}");
    let d = get(c.server().api(), "deployments", "web");
    let restarted = &d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"];
    assert!(restarted.is_string(), "{d}");
    assert_eq!(revision(&d), 2);
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 5. Proportional scaling.

/// Upstream `getReplicaSetProportion` + the leftover rule of `scale`
/// (`pkg/controller/deployment/sync.go`): the sizes the active ReplicaSets
/// `(name, replicas, max-replicas annotation, revision)` get when the
/// Deployment goes to `replicas` with `max_surge`.
fn proportional_split(
    rss: &[(String, i64, i64, u64)],
    replicas: i64,
    max_surge: i64,
) -> BTreeMap<String, i64> {
    let allowed = replicas + max_surge;
    let to_add = allowed - rss.iter().map(|r| r.1).sum::<i64>();
    let mut order: Vec<&(String, i64, i64, u64)> = rss.iter().collect();
    // Largest first; ties: newer first when growing, older first when shrinking.
    order.sort_by(|a, b| {
        let tie = if to_add > 0 { b.3.cmp(&a.3) } else { a.3.cmp(&b.3) };
        b.1.cmp(&a.1).then(tie)
    });
    let mut added = 0;
    let mut sizes: Vec<(String, i64)> = Vec::new();
    for (rs_name, size, annotated, _) in order {
        let proportion = if *size == 0 || to_add == 0 {
            0
        } else {
            // Round half away from zero, like integer.RoundToInt32.
            let fraction = ((size * allowed) as f64 / *annotated as f64).round() as i64 - size;
            let left = to_add - added;
            if to_add > 0 {
                fraction.min(left)
            } else {
                fraction.max(left)
            }
        };
        added += proportion;
        sizes.push((rs_name.clone(), size + proportion));
    }
    if let Some(first) = sizes.first_mut().filter(|_| to_add != 0) {
        first.1 = (first.1 + to_add - added).max(0);
    }
    sizes.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scaling_mid_rollout_is_proportional() {
    // Upstream's e2e "deployment should support proportional scaling": 10
    // replicas, maxSurge 3, maxUnavailable 2, a rollout that cannot finish
    // (new pods never become ready), then a scale to 30.
    let mut c = cluster().await;
    let strategy = "{type: RollingUpdate, rollingUpdate: {maxSurge: 3, maxUnavailable: 2}}";
    deploy(&c, "web", 10, strategy, "").await;
    let patch = r#"{"spec":{"template":{"metadata":{"annotations":{"sim.miniplane.dev/ready":"never"}},
        "spec":{"containers":[{"name":"app","image":"nginx:1.26"}]}}}}"#;
    c.ok(&["patch", "deployment", "web", "-p", patch]).await;
    // The rollout gets as far as it can: old 10 − 2 = 8, new 13 − 8 = 5.
    let before = eventually(&c, "the stuck rollout (old 8, new 5)", |api| {
        let rss = replicasets(api, "web");
        let sizes: Vec<i64> = rss.iter().map(spec_replicas).collect();
        let marked = rss
            .iter()
            .all(|rs| annotation(rs, "deployment.kubernetes.io/max-replicas") == Some("13"));
        (sizes == [8, 5] && marked).then_some(rss)
    })
    .await;
    let state: Vec<(String, i64, i64, u64)> = before
        .iter()
        .map(|rs| {
            let max = annotation(rs, "deployment.kubernetes.io/max-replicas").and_then(|m| m.parse().ok());
            (name(rs), spec_replicas(rs), max.unwrap_or(10), revision(rs))
        })
        .collect();
    let expected = proportional_split(&state, 30, 3);
    assert_eq!(
        expected.values().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from([20, 13]),
        "upstream's e2e numbers"
    );

    let out = c.ok(&["scale", "deployment/web", "--replicas=30"]).await;
    assert!(out.contains("deployment.apps/web scaled"), "{out}");
    let after = eventually(&c, "the ReplicaSets resized to 33 in all", |api| {
        let rss = replicasets(api, "web");
        let sizes: BTreeMap<String, i64> = rss.iter().map(|rs| (name(rs), spec_replicas(rs))).collect();
        (sizes.values().sum::<i64>() == 33).then_some(sizes)
    })
    .await;
    assert_eq!(after, expected, "before: {state:?}");
    // The pods follow: 20 old (ready) and 13 new (running, never ready).
    eventually(&c, "33 live pods", |api| {
        (live_pods(api, "web").len() == 33).then_some(())
    })
    .await;
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 6. Progress deadline.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_image_pull_exceeds_the_progress_deadline() {
    let mut c = cluster().await;
    deploy(&c, "web", 2, "{}", "  progressDeadlineSeconds: 30\n").await;
    let patch = r#"{"spec":{"template":{"metadata":{"annotations":{"sim.miniplane.dev/image-pull":"fail"}},
        "spec":{"containers":[{"name":"app","image":"nginx:does-not-exist"}]}}}}"#;
    c.ok(&["patch", "deployment", "web", "-p", patch]).await;
    let r = c
        .run(&["rollout", "status", "deployment/web", ROLLOUT_TIMEOUT])
        .await;
    assert!(!r.success, "{r:?}");
    assert!(
        r.stderr
            .contains("error: deployment \"web\" exceeded its progress deadline"),
        "{r:?}"
    );
    let d = c.json(&["get", "deployment", "web"]).await;
    let conditions = d["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let progressing = conditions
        .iter()
        .find(|c| c["type"] == "Progressing")
        .unwrap_or_else(|| panic!("no Progressing condition: {d}"));
    assert_eq!(progressing["status"], "False", "{progressing}");
    assert_eq!(progressing["reason"], "ProgressDeadlineExceeded", "{progressing}");
    // The old pods keep serving: maxUnavailable 25% of 2 rounds down to 0.
    let api = c.server().api();
    let old_hash = replicasets(api, "web").first().map(hash).expect("old RS");
    let old_ready = live_pods(api, "web")
        .iter()
        .filter(|p| hash(p) == old_hash && ready(p))
        .count();
    assert_eq!(old_ready, 2);
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 7. Recreate.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_never_runs_old_and_new_pods_together() {
    let mut c = cluster().await;
    deploy(&c, "web", 3, "{type: Recreate}", "").await;
    settled(&c, "web", 3).await;
    let api = c.server().api().clone();
    // Upstream's Recreate waits until no old pod exists, except pods that
    // already ended (Succeeded/Failed); terminating pods still count.
    let one_template: Check = Box::new(|s| {
        let running = s
            .pods
            .values()
            .filter(|p| !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed")));
        let hashes: BTreeSet<String> = running.map(hash).collect();
        (hashes.len() > 1).then(|| format!("templates {hashes:?} together: {}", describe(&s.pods)))
    });
    let observer = Observer::start(&api, "app=web", one_template);
    c.ok(&["set", "image", "deployment/web", "app=nginx:1.26"]).await;
    rolled_out(&c, "web").await;
    settled(&c, "web", 3).await;
    let seen = observer.finish().await;
    assert!(seen.violations.is_empty(), "{:#?}", seen.violations);
    assert_eq!(seen.hashes.len(), 2, "the watch saw no rollout: {seen:?}");
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 8. ReplicaSets on their own.

fn replicaset(app: &str, replicas: u32) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: {app}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {app}}}
  template:
    metadata:
      labels: {{app: {app}}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: nginx:1.25
"#
    )
}

/// Waits until `app` has `n` live pods, all Ready, and the ReplicaSet's
/// status says so; returns the pods.
async fn rs_ready(c: &Cluster, app: &str, n: usize) -> Vec<Value> {
    eventually(c, &format!("{n} ready pods of replicaset {app}"), |api| {
        let pods = live_pods(api, app);
        let rs = get(api, "replicasets", app);
        let counted = rs["status"]["readyReplicas"].as_u64() == Some(n as u64);
        (pods.len() == n && pods.iter().all(ready) && counted).then_some(pods)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicaset_replaces_deleted_pods() {
    let mut c = cluster().await;
    apply(&c, &replicaset("rs", 3)).await;
    let before: Vec<String> = rs_ready(&c, "rs", 3).await.iter().map(name).collect();
    let mut args = vec!["delete", "pod", "--wait=false"];
    args.extend(before.iter().map(String::as_str));
    c.ok(&args).await;
    let after = eventually(&c, "3 new ready pods", |api| {
        let pods = live_pods(api, "rs");
        let names: BTreeSet<String> = pods.iter().map(name).collect();
        let fresh = pods.len() == 3 && pods.iter().all(ready) && before.iter().all(|b| !names.contains(b));
        fresh.then_some(names)
    })
    .await;
    assert_eq!(after.len(), 3);
    let table = c.ok(&["get", "rs", "rs"]).await;
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(&row[..4], ["rs", "3", "3", "3"], "{table}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicaset_adopts_a_matching_orphan_instead_of_creating_a_pod() {
    let mut c = cluster().await;
    let orphan = r#"apiVersion: v1
kind: Pod
metadata:
  name: orphan
  labels: {app: adopt}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: nginx:1.25
"#;
    apply(&c, orphan).await;
    eventually(&c, "the orphan ready", |api| {
        ready(&get(api, "pods", "orphan")).then_some(())
    })
    .await;
    let api = c.server().api().clone();
    let at_most_two: Check = Box::new(|s| {
        let live = s.pods.values().filter(|p| !terminating(p)).count();
        (live > 2).then(|| format!("{live} pods: {}", describe(&s.pods)))
    });
    let observer = Observer::start(&api, "app=adopt", at_most_two);
    apply(&c, &replicaset("adopt", 2)).await;
    let pods = rs_ready(&c, "adopt", 2).await;
    assert!(pods.iter().any(|p| name(p) == "orphan"), "{pods:#?}");
    let orphan = get(&api, "pods", "orphan");
    let owner = &orphan["metadata"]["ownerReferences"][0];
    assert_eq!(
        (&owner["kind"], &owner["name"], &owner["controller"]),
        (
            &Value::from("ReplicaSet"),
            &Value::from("adopt"),
            &Value::from(true)
        ),
        "{orphan}"
    );
    // A while later there are still exactly two.
    api.clock().sleep(Duration::from_secs(10)).await;
    assert_eq!(live_pods(&api, "adopt").len(), 2);
    let seen = observer.finish().await;
    assert!(seen.violations.is_empty(), "{:#?}", seen.violations);
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 9. Deletion.

/// Foreground deletion through the garbage collector: the pods go first,
/// then the ReplicaSet (its pods' controllerRefs block it), then the
/// Deployment (its ReplicaSet's controllerRef blocks it). `kubectl delete
/// --wait` waits for the Deployment, so when it returns nothing is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_deletion_returns_after_the_replicaset_and_pods_are_gone() {
    let mut c = cluster().await;
    deploy(&c, "fg", 3, "{}", "").await;
    let api = c.server().api().clone();
    assert_eq!(list(&api, "replicasets", "app=fg").len(), 1);
    assert_eq!(list(&api, "pods", "app=fg").len(), 3);
    let out = c
        .ok(&[
            "delete",
            "deployment",
            "fg",
            "--cascade=foreground",
            "--wait",
            "--timeout=30s",
        ])
        .await;
    assert!(out.contains("deployment.apps \"fg\" deleted"), "{out}");
    let left_rs = list(&api, "replicasets", "app=fg");
    assert!(left_rs.is_empty(), "{left_rs:#?}");
    let left_pods = list(&api, "pods", "app=fg");
    assert!(left_pods.is_empty(), "{left_pods:#?}");
    c.stop().await;
}

// ---------------------------------------------------------------------------
// 9. Events: upstream reasons, `kubectl describe`, aggregated repeats.

/// The Events of `default`, as (source component, reason, message, count).
fn events(api: &Api) -> Vec<(String, String, String, i64)> {
    let info = api.resource("", "v1", "events").expect("served resource");
    let listed = api
        .list(&info, Some("default"), &ListOptions::default())
        .expect("list events");
    let text = |e: &Value, p: &str| e.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
    listed
        .items
        .iter()
        .map(|e| {
            let count = e["count"].as_i64().unwrap_or(0);
            (
                text(e, "/source/component"),
                text(e, "/reason"),
                text(e, "/message"),
                count,
            )
        })
        .collect()
}

#[tokio::test]
async fn events_carry_upstream_reasons_and_repeats_are_counted() {
    let mut c = cluster().await;
    deploy(&c, "web", 2, "{}", "").await;
    let pod = live_pods(c.server().api(), "web")[0]["metadata"]["name"]
        .as_str()
        .expect("pod name")
        .to_string();
    let seen = eventually(&c, "Events from every component", |api| {
        let got: std::collections::BTreeSet<(String, String)> = events(api)
            .into_iter()
            .map(|(src, reason, _, _)| (src, reason))
            .collect();
        let want = [
            ("deployment-controller", "ScalingReplicaSet"),
            ("replicaset-controller", "SuccessfulCreate"),
            ("default-scheduler", "Scheduled"),
            ("kubelet", "Pulling"),
            ("kubelet", "Pulled"),
            ("kubelet", "Created"),
            ("kubelet", "Started"),
        ];
        want.iter()
            .all(|(s, r)| got.contains(&(s.to_string(), r.to_string())))
            .then_some(got)
    })
    .await;
    assert!(!seen.is_empty());

    let described = c.ok(&["describe", "deployment", "web"]).await;
    assert!(described.contains("ScalingReplicaSet"), "{described}");
    assert!(described.contains("Scaled up replica set web-"), "{described}");
    let described = c.ok(&["describe", "pod", &pod]).await;
    for text in [
        "Scheduled",
        &format!("Successfully assigned default/{pod} to miniplane-worker-"),
        "Pulling",
        "Started",
    ] {
        assert!(described.contains(text), "{text:?} missing from:\n{described}");
    }

    // A container that exits with 1 after a second, restarted with back-off:
    // the repeated BackOff is one Event whose count grows.
    let labels = "      labels: {app: crash}\n";
    let crashing = format!(
        "{labels}      annotations: {{sim.miniplane.dev/run-seconds: \"1\", sim.miniplane.dev/exit-code: \"1\"}}\n"
    );
    let manifest = deployment("crash", 1, "{}", "").replace(labels, &crashing);
    assert!(manifest.contains("exit-code"), "{manifest}");
    apply(&c, &manifest).await;
    let (_, _, message, count) = eventually(&c, "a BackOff Event counted twice", |api| {
        events(api)
            .into_iter()
            .find(|(src, reason, _, count)| src == "kubelet" && reason == "BackOff" && *count >= 2)
    })
    .await;
    assert!(
        message.starts_with("Back-off restarting failed container app"),
        "{message}"
    );
    assert!(count >= 2);
    c.stop().await;
}
