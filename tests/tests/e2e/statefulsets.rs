//! StatefulSets end to end: the real `kubectl` against an in-process miniplane on accelerated
//! time (3 simulated nodes, every controller, scheduler, kubelet, the volume binder; nothing
//! mocked). The examples in `examples/workloads/statefulset-*.yaml` are what gets applied.
//!
//! Covered:
//! * OrderedReady: a pod watch in the test sees pod i+1 created only once pod i is Ready; scaling
//!   5 → 2 deletes 4, then 3, then 2; claims `www-web-<i>` exist per ordinal, are bound, and
//!   survive the scale-down (Retain); the events of upstream;
//! * Parallel: every pod is created before any is Ready;
//! * a partitioned rolling update (only ordinals >= 3 updated), lowering the partition finishes it
//!   in reverse ordinal order; `rollout status`, `rollout history`, `rollout undo` print what
//!   upstream prints;
//! * a restart of miniplane on its data dir in the middle of a rollout.
//!
//! Every observed state is checked: never two pods with one ordinal, never more pods than
//! `replicas`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use apiserver::Api;
use apiserver::api::{ListOptions, WatchEvent, WatchOptions};
use e2e::{Cluster, Config};
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long (real time) a stopping [`Observer`] waits for more events before it ends.
const DRAIN: Duration = Duration::from_millis(300);
/// Simulated seconds per real second.
const SCALE: f64 = 30.0;
/// Real-time bound of every poll.
const WAIT: Duration = Duration::from_secs(25);
/// `--timeout` of every `kubectl rollout status` (real time).
const ROLLOUT_TIMEOUT: &str = "--timeout=30s";

const ORDERED: &str = include_str!("../../../examples/workloads/statefulset-ordered.yaml");
const PARALLEL: &str = include_str!("../../../examples/workloads/statefulset-parallel.yaml");
const PARTITIONED: &str = include_str!("../../../examples/workloads/statefulset-partitioned-rollout.yaml");

fn config() -> Config {
    Config {
        clock: Clock::scaled(SCALE),
        sim: Some(SimConfig {
            nodes: 3,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    }
}

async fn apply(c: &Cluster, yaml: &str) -> String {
    let f = c.file("manifest.yaml", yaml);
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await
}

async fn rollout_status(c: &Cluster, name: &str) -> String {
    c.ok(&[
        "rollout",
        "status",
        &format!("statefulset/{name}"),
        ROLLOUT_TIMEOUT,
    ])
    .await
}

fn info(api: &Api, plural: &str) -> std::sync::Arc<apiserver::registry::ResourceInfo> {
    let (group, version) = match plural {
        "pods" | "persistentvolumeclaims" => ("", "v1"),
        _ => ("apps", "v1"),
    };
    api.resource(group, version, plural).expect("served resource")
}

fn list(api: &Api, plural: &str, selector: &str) -> Vec<Value> {
    let opts = ListOptions {
        label_selector: Some(selector.to_string()),
        ..Default::default()
    };
    api.list(&info(api, plural), Some("default"), &opts)
        .expect("list")
        .items
}

fn get(api: &Api, plural: &str, name: &str) -> Option<Value> {
    api.get(&info(api, plural), Some("default"), name).ok()
}

fn name(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

fn label(o: &Value, key: &str) -> String {
    o["metadata"]["labels"][key]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn terminating(o: &Value) -> bool {
    !o["metadata"]["deletionTimestamp"].is_null()
}

fn ordinal(pod_name: &str) -> i64 {
    pod_name
        .rsplit_once('-')
        .and_then(|(_, o)| o.parse().ok())
        .unwrap_or(-1)
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

// ---------------------------------------------------------------------------
// A pod watch in the test, checking the identity guarantee after every event.

/// One observed pod event.
#[derive(Debug, Clone)]
struct Seen {
    /// ADDED, MODIFIED or DELETED.
    kind: &'static str,
    name: String,
    terminating: bool,
    revision: String,
    /// The names of the pods present after the event, with whether each is Ready.
    present: BTreeMap<String, bool>,
}

/// What a [`Observer`] saw.
#[derive(Debug, Default)]
struct Observed {
    log: Vec<Seen>,
    violations: Vec<String>,
}

impl Observed {
    /// The pods in the order their deletion was first seen (deletionTimestamp or DELETED).
    fn deletion_order(&self) -> Vec<String> {
        let mut order = Vec::new();
        for s in &self.log {
            if (s.terminating || s.kind == "DELETED") && !order.contains(&s.name) {
                order.push(s.name.clone());
            }
        }
        order
    }

    /// The pods in the order they were created.
    fn creation_order(&self) -> Vec<&Seen> {
        self.log.iter().filter(|s| s.kind == "ADDED").collect()
    }
}

/// Watches the pods of `selector`, checking after every event that no two pods share an ordinal
/// (`apps.kubernetes.io/pod-index` or the name's) and that at most `max` pods exist.
struct Observer {
    stop: oneshot::Sender<bool>,
    task: JoinHandle<Observed>,
}

impl Observer {
    fn start(api: &Api, selector: &str, max: usize) -> Observer {
        let info = info(api, "pods");
        let opts = ListOptions {
            label_selector: Some(selector.to_string()),
            ..Default::default()
        };
        let initial = api.list(&info, Some("default"), &opts).expect("list");
        let wopts = WatchOptions {
            resource_version: Some(initial.resource_version),
            label_selector: Some(selector.to_string()),
            ..Default::default()
        };
        let mut rx = api.watch(&info, Some("default"), &wopts).expect("watch");
        let mut pods: BTreeMap<String, Value> = initial.items.into_iter().map(|o| (name(&o), o)).collect();
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let mut seen = Observed::default();
            let mut draining = false;
            loop {
                // Once told to stop, the events already on their way are still taken (the test
                // stops after a list showed the end state, which the watch may trail): until the
                // watch has been quiet for a moment.
                let ev = if draining {
                    match tokio::time::timeout(DRAIN, rx.recv()).await {
                        Ok(ev) => ev,
                        Err(_) => break,
                    }
                } else {
                    tokio::select! {
                        drain = &mut stopped => {
                            if drain != Ok(true) {
                                break;
                            }
                            draining = true;
                            continue;
                        }
                        ev = rx.recv() => ev,
                    }
                };
                let (kind, obj) = match ev {
                    Some(WatchEvent::Added(o)) => ("ADDED", o),
                    Some(WatchEvent::Modified(o)) => ("MODIFIED", o),
                    Some(WatchEvent::Deleted(o)) => ("DELETED", o),
                    Some(WatchEvent::Bookmark(_)) => continue,
                    other => {
                        seen.violations.push(format!("watch ended: {other:?}"));
                        break;
                    }
                };
                let n = name(&obj);
                if kind == "ADDED"
                    && let Some(old) = pods.get(&n)
                    && old["metadata"]["uid"] != obj["metadata"]["uid"]
                {
                    seen.violations
                        .push(format!("{n} added while another {n} existed"));
                }
                if kind == "DELETED" {
                    pods.remove(&n);
                } else {
                    pods.insert(n.clone(), obj.clone());
                }
                let mut by_index: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for (pn, p) in &pods {
                    let index = label(p, "apps.kubernetes.io/pod-index");
                    by_index.entry(index).or_default().push(pn.clone());
                    by_index
                        .entry(format!("name-ordinal-{}", ordinal(pn)))
                        .or_default()
                        .push(pn.clone());
                }
                for (index, names) in &by_index {
                    if names.len() > 1 {
                        seen.violations.push(format!("ordinal {index} held by {names:?}"));
                    }
                }
                if pods.len() > max {
                    seen.violations
                        .push(format!("{} pods > {max}: {:?}", pods.len(), pods.keys()));
                }
                seen.log.push(Seen {
                    kind,
                    name: n,
                    terminating: terminating(&obj),
                    revision: label(&obj, "controller-revision-hash"),
                    present: pods.iter().map(|(k, v)| (k.clone(), ready(v))).collect(),
                });
            }
            seen
        });
        Observer { stop, task }
    }

    async fn finish(self) -> Observed {
        self.end(true).await
    }

    /// [`Observer::finish`] without waiting for the events still on their way (where the test
    /// must act at once, e.g. stop the server mid-rollout).
    async fn finish_now(self) -> Observed {
        self.end(false).await
    }

    async fn end(self, drain: bool) -> Observed {
        let _ = self.stop.send(drain);
        let seen = self.task.await.expect("observer task");
        assert!(seen.violations.is_empty(), "violations: {:#?}", seen.violations);
        seen
    }
}

/// The pods of `app`, by name.
fn pods_of(api: &Api, app: &str) -> BTreeMap<String, Value> {
    list(api, "pods", &format!("app={app}"))
        .into_iter()
        .map(|p| (name(&p), p))
        .collect()
}

// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordered_ready_creates_in_order_scales_down_from_the_top_and_keeps_claims() {
    let c = Cluster::start_with(config()).await;
    let api = c.server().api();
    let observer = Observer::start(api, "app=web", 5);
    let out = apply(&c, &ORDERED.replace("replicas: 3", "replicas: 5")).await;
    assert!(out.contains("statefulset.apps/web created"), "{out}");
    assert!(out.contains("service/web created"), "{out}");
    let status = rollout_status(&c, "web").await;
    assert!(status.contains("Waiting for"), "{status}");
    // The API defaults `rollingUpdate.partition: 0`, so kubectl reports a partitioned roll out,
    // as against a real cluster.
    assert!(
        status.contains("partitioned roll out complete: 5 new pods have been updated..."),
        "{status}"
    );

    // Scale down to 2 and wait for it.
    c.ok(&["scale", "statefulset", "web", "--replicas=2"]).await;
    eventually(&c, "2 pods of web", |api| {
        (pods_of(api, "web").len() == 2).then_some(())
    })
    .await;
    let seen = observer.finish().await;

    // Creation order: web-i+1 only once web-i is present and Ready.
    let created = seen.creation_order();
    let names: Vec<&str> = created.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["web-0", "web-1", "web-2", "web-3", "web-4"]);
    for s in &created[1..] {
        let before = format!("web-{}", ordinal(&s.name) - 1);
        assert_eq!(
            s.present.get(&before),
            Some(&true),
            "{} created while {before} not Ready: {s:?}",
            s.name
        );
    }
    // Scale-down order, one at a time: web-3's deletion starts after web-4 is gone.
    assert_eq!(seen.deletion_order(), ["web-4", "web-3", "web-2"]);
    for s in seen.log.iter().filter(|s| s.terminating && s.name == "web-3") {
        assert!(
            !s.present.contains_key("web-4"),
            "web-3 deleted while web-4 remained: {s:?}"
        );
    }

    // Identity on the pods.
    let pod = get(api, "pods", "web-1").expect("web-1");
    assert_eq!(pod["spec"]["hostname"], "web-1");
    assert_eq!(pod["spec"]["subdomain"], "web");
    assert_eq!(label(&pod, "statefulset.kubernetes.io/pod-name"), "web-1");
    assert_eq!(label(&pod, "apps.kubernetes.io/pod-index"), "1");
    assert!(label(&pod, "controller-revision-hash").starts_with("web-"));
    let volumes = pod["spec"]["volumes"].as_array().cloned().unwrap_or_default();
    assert!(
        volumes
            .iter()
            .any(|v| v["name"] == "www" && v["persistentVolumeClaim"]["claimName"] == "www-web-1"),
        "{volumes:?}"
    );

    // Claims: one per ordinal, bound, kept after the scale-down (Retain).
    let claims = eventually(&c, "5 bound claims", |api| {
        let claims = list(api, "persistentvolumeclaims", "app=web");
        let bound = claims.iter().filter(|c| c["status"]["phase"] == "Bound").count();
        (bound == 5).then_some(claims)
    })
    .await;
    let claim_names: BTreeSet<String> = claims.iter().map(name).collect();
    let want: BTreeSet<String> = (0..5).map(|i| format!("www-web-{i}")).collect();
    assert_eq!(claim_names, want);
    let out = c.ok(&["get", "pvc"]).await;
    assert!(e2e::matches_words(&out, "www-web-4 Bound"), "{out}");

    // The events, as upstream words them.
    let events = c
        .ok(&["get", "events", "--field-selector", "involvedObject.name=web"])
        .await;
    for needle in [
        "SuccessfulCreate create Pod web-0 in StatefulSet web successful",
        "SuccessfulCreate create Claim www-web-0 Pod web-0 in StatefulSet web success",
        "SuccessfulDelete delete Pod web-4 in StatefulSet web successful",
    ] {
        assert!(
            events.lines().any(|l| e2e::matches_words(l, needle)),
            "no {needle:?} in\n{events}"
        );
    }
    let described = c.ok(&["describe", "statefulset", "web"]).await;
    assert!(
        e2e::matches_words(&described, "Pods Status: 2 Running"),
        "{described}"
    );
    assert!(
        e2e::matches_words(&described, "Volume Claims: Name: www"),
        "{described}"
    );
    let table = c.ok(&["get", "statefulset", "web"]).await;
    assert!(e2e::matches_words(&table, "web 2/2"), "{table}");
    let sts = c.json(&["get", "statefulset", "web"]).await;
    assert_eq!(sts["status"]["replicas"], 2);
    assert_eq!(sts["status"]["readyReplicas"], 2);
    assert_eq!(sts["status"]["availableReplicas"], 2);
    assert_eq!(sts["status"]["observedGeneration"], sts["metadata"]["generation"]);
    assert_eq!(sts["status"]["currentRevision"], sts["status"]["updateRevision"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_creates_every_pod_at_once() {
    let c = Cluster::start_with(config()).await;
    let api = c.server().api();
    let observer = Observer::start(api, "app=cache", 4);
    apply(&c, PARALLEL).await;
    rollout_status(&c, "cache").await;
    let seen = observer.finish().await;
    // Parallel does not wait: pods are created while lower ordinals are not Ready yet, which
    // OrderedReady never does (the first Ready pod usually finds all four there already).
    let eager = seen
        .creation_order()
        .iter()
        .filter(|s| {
            s.present
                .iter()
                .any(|(other, ready)| ordinal(other) < ordinal(&s.name) && !ready)
        })
        .count();
    assert!(
        eager >= 1,
        "no pod was created before a lower one was Ready: {:#?}",
        seen.log
    );
    assert_eq!(seen.creation_order().len(), 4);
    // Scale-down does not wait for a condemned pod to be gone either. A finalizer holds every pod
    // in Terminating (the kubelet would otherwise remove one before the next delete is seen), so
    // all three condemned pods must be terminating at once; OrderedReady would stop at cache-3.
    const HOLD: &str = r#"{"metadata":{"finalizers":["miniplane.dev/hold"]}}"#;
    for pod in ["cache-1", "cache-2", "cache-3"] {
        c.ok(&["patch", "pod", pod, "--type=merge", "-p", HOLD]).await;
    }
    c.ok(&["scale", "statefulset", "cache", "--replicas=1"]).await;
    let terminating = eventually(&c, "cache-1..3 terminating together", |api| {
        let terminating: BTreeSet<String> = pods_of(api, "cache")
            .into_iter()
            .filter(|(_, p)| !p["metadata"]["deletionTimestamp"].is_null())
            .map(|(n, _)| n)
            .collect();
        (terminating.len() == 3).then_some(terminating)
    })
    .await;
    assert_eq!(
        terminating,
        BTreeSet::from([
            "cache-1".to_string(),
            "cache-2".to_string(),
            "cache-3".to_string()
        ])
    );
    for pod in ["cache-1", "cache-2", "cache-3"] {
        c.ok(&[
            "patch",
            "pod",
            pod,
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ])
        .await;
    }
    eventually(&c, "1 pod of cache", |api| {
        (pods_of(api, "cache").len() == 1).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_rolling_update_history_and_undo() {
    let c = Cluster::start_with(config()).await;
    let api = c.server().api();
    apply(&c, PARTITIONED).await;
    rollout_status(&c, "db").await;
    let first = c.json(&["get", "statefulset", "db"]).await["status"]["updateRevision"]
        .as_str()
        .expect("updateRevision")
        .to_string();

    let observer = Observer::start(api, "app=db", 5);
    c.ok(&["set", "image", "statefulset/db", "pg=postgres:16.1"])
        .await;
    let out = rollout_status(&c, "db").await;
    assert!(
        e2e::matches_words(
            &out,
            "partitioned roll out complete: 2 new pods have been updated..."
        ),
        "{out}"
    );
    let sts = c.json(&["get", "statefulset", "db"]).await;
    let second = sts["status"]["updateRevision"]
        .as_str()
        .expect("updateRevision")
        .to_string();
    assert_ne!(first, second);
    assert_eq!(sts["status"]["currentRevision"], first.as_str());
    assert_eq!(sts["status"]["updatedReplicas"], 2);
    let pods = pods_of(api, "db");
    for (n, p) in &pods {
        let want = if ordinal(n) >= 3 { &second } else { &first };
        assert_eq!(&label(p, "controller-revision-hash"), want, "{n}");
    }

    // Lower the partition: 2, 1, 0 follow, highest first.
    c.ok(&[
        "patch",
        "statefulset",
        "db",
        "-p",
        r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}"#,
    ])
    .await;
    let out = rollout_status(&c, "db").await;
    assert!(
        out.contains("partitioned roll out complete: 5 new pods have been updated..."),
        "{out}"
    );
    let sts = eventually(&c, "the rollout to complete", |api| {
        let sts = get(api, "statefulsets", "db")?;
        (sts["status"]["currentRevision"] == second.as_str()).then_some(sts)
    })
    .await;
    assert_eq!(sts["status"]["updateRevision"], second.as_str());
    assert_eq!(sts["status"]["currentReplicas"], 5);
    let seen = observer.finish().await;
    assert_eq!(seen.deletion_order(), ["db-4", "db-3", "db-2", "db-1", "db-0"]);
    // Each replacement waited for the one above to be Ready at the new revision.
    for s in seen.log.iter().filter(|s| s.kind == "ADDED") {
        assert_eq!(s.revision, second, "{s:?}");
    }

    let history = c.ok(&["rollout", "history", "statefulset/db"]).await;
    assert!(history.contains("statefulset.apps/db"), "{history}");
    assert!(e2e::matches_words(&history, "REVISION CHANGE-CAUSE"), "{history}");
    let rows: Vec<&str> = history.lines().filter(|l| l.ends_with("<none>")).collect();
    assert_eq!(rows.len(), 2, "{history}");

    let one = c
        .ok(&["rollout", "history", "statefulset/db", "--revision=1"])
        .await;
    assert!(one.contains("revision #1"), "{one}");
    assert!(e2e::matches_words(&one, "Image: postgres:16"), "{one}");
    assert!(!one.contains("postgres:16.1"), "{one}");

    let out = c.ok(&["rollout", "undo", "statefulset/db"]).await;
    assert!(out.contains("statefulset.apps/db rolled back"), "{out}");
    let out = rollout_status(&c, "db").await;
    assert!(
        out.contains("partitioned roll out complete: 5 new pods have been updated..."),
        "{out}"
    );
    let sts = eventually(&c, "the rollback to complete", |api| {
        let sts = get(api, "statefulsets", "db")?;
        (sts["status"]["currentRevision"] == first.as_str() && sts["status"]["currentReplicas"] == 5)
            .then_some(sts)
    })
    .await;
    assert_eq!(sts["status"]["updateRevision"], first.as_str());
    assert_eq!(
        sts["spec"]["template"]["spec"]["containers"][0]["image"],
        "postgres:16"
    );
    let history = c.ok(&["rollout", "history", "statefulset/db"]).await;
    let numbers: Vec<&str> = history
        .lines()
        .filter(|l| l.ends_with("<none>"))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        numbers,
        ["2", "3"],
        "the rollback renumbered revision 1 to 3:\n{history}"
    );
    let revision = get(api, "controllerrevisions", &first).expect("first revision");
    assert_eq!(revision["revision"], 3);
    assert_eq!(revision["data"]["spec"]["template"]["$patch"], "replace");
}

/// Starts miniplane on the data dir of a stopped one. Once, under load on 2 cores, the second
/// start failed (its cause was not captured); a start is retried twice, a second apart.
async fn start_again(cfg: impl Fn() -> Config) -> Cluster {
    use futures::FutureExt;
    for _ in 0..2 {
        match std::panic::AssertUnwindSafe(Cluster::start_with(cfg()))
            .catch_unwind()
            .await
        {
            Ok(c) => return c,
            Err(_) => Clock::system().sleep(Duration::from_secs(1)).await,
        }
    }
    Cluster::start_with(cfg()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_mid_rollout_never_doubles_an_ordinal() {
    let data = tempfile::tempdir().expect("temp dir");
    let cfg = || Config {
        data_dir: Some(data.path().to_path_buf()),
        ..config()
    };
    let mut c = Cluster::start_with(cfg()).await;
    apply(&c, &PARTITIONED.replace("partition: 3", "partition: 0")).await;
    rollout_status(&c, "db").await;
    let observer = Observer::start(c.server().api(), "app=db", 5);
    c.ok(&["set", "image", "statefulset/db", "pg=postgres:16.1"])
        .await;
    // Stop once the rollout is under way: some pod at the new revision, some still old.
    eventually(&c, "a rollout in progress", |api| {
        let sts = get(api, "statefulsets", "db")?;
        let updated = sts["status"]["updatedReplicas"].as_i64().unwrap_or(0);
        (1..5).contains(&updated).then_some(())
    })
    .await;
    observer.finish_now().await;
    c.stop().await;

    let c = start_again(cfg).await;
    let observer = Observer::start(c.server().api(), "app=db", 5);
    let out = rollout_status(&c, "db").await;
    assert!(
        out.contains("partitioned roll out complete: 5 new pods have been updated..."),
        "{out}"
    );
    let seen = observer.finish().await;
    assert!(!seen.log.is_empty(), "the rollout went on after the restart");
    let pods = pods_of(c.server().api(), "db");
    assert_eq!(pods.len(), 5);
    let revisions: BTreeSet<String> = pods
        .values()
        .map(|p| label(p, "controller-revision-hash"))
        .collect();
    assert_eq!(revisions.len(), 1, "{revisions:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_scaled_delete_removes_the_claims_of_scaled_down_pods() {
    let c = Cluster::start_with(config()).await;
    let yaml = ORDERED
        .replace("replicas: 3", "replicas: 3\n  podManagementPolicy: Parallel")
        .replace(
            "  volumeClaimTemplates:",
            "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Delete}\n  volumeClaimTemplates:",
        );
    assert!(yaml.contains("whenScaled: Delete"), "{yaml}");
    apply(&c, &yaml).await;
    rollout_status(&c, "web").await;
    eventually(&c, "3 bound claims", |api| {
        let claims = list(api, "persistentvolumeclaims", "app=web");
        (claims.iter().filter(|c| c["status"]["phase"] == "Bound").count() == 3).then_some(())
    })
    .await;
    c.ok(&["scale", "statefulset", "web", "--replicas=1"]).await;
    let claims = eventually(&c, "the claims of web-1 and web-2 gone", |api| {
        let names: BTreeSet<String> = list(api, "persistentvolumeclaims", "app=web")
            .iter()
            .map(name)
            .collect();
        (names.len() == 1).then_some(names)
    })
    .await;
    assert_eq!(claims, BTreeSet::from(["www-web-0".to_string()]));
}
