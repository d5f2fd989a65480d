//! Jobs, end to end: the real `kubectl` against an in-process miniplane whose one clock runs
//! [`SCALE`] times faster than real time (3 simulated nodes, every controller, the scheduler and
//! the simulated kubelet; nothing mocked). The pods "work" for the time and exit with the code of
//! their `sim.miniplane.dev/run-seconds` / `exit-code` annotations.
//!
//! Covered:
//! * `examples/workloads/job-parallel.yaml` (completions 5, parallelism 2): a pod watch in the test
//!   never sees more than 2 active pods; `kubectl wait --for=condition=complete`; 5 succeeded,
//!   `SuccessCriteriaMet` and `Complete` with reason `CompletionsReached`; the `get jobs` table
//!   (STATUS, COMPLETIONS, DURATION); the events;
//! * `examples/workloads/job-indexed.yaml`: every index completes exactly once, pods named
//!   `<job>-<index>-…` with the index annotation, label, env and hostname; `completedIndexes`;
//! * a failing Job retries up to `backoffLimit` with the upstream delays (10 s, 20 s, 40 s between a
//!   failure and the next pod, measured on the simulated clock from the pods' timestamps) and ends
//!   `Failed` with `BackoffLimitExceeded`;
//! * `examples/workloads/job-pod-failure-policy.yaml`: a `FailJob` rule ends the Job at the first
//!   matching exit code, with upstream's message;
//! * `activeDeadlineSeconds` ends a Job of never-ending pods with `DeadlineExceeded`;
//! * suspend and resume: pods deleted, `Suspended` condition and events, `startTime` reset;
//! * `backoffLimitPerIndex`: each index retried once with its inherited failure count, then
//!   `failedIndexes` and `FailedIndexes`.
//!
//! Every wait is bounded: kubectl with `--timeout=`, polls with [`tokio::time::timeout`].

use std::collections::BTreeMap;
use std::time::Duration;

use apiserver::Api;
use apiserver::api::{ListOptions, WatchEvent, WatchOptions};
use e2e::{Cluster, Config};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;
use tokio::sync::oneshot;

/// Simulated seconds per real second.
const SCALE: f64 = 20.0;
/// Real-time bound of every poll in this file.
const WAIT: Duration = Duration::from_secs(25);
/// `--timeout` of every `kubectl wait` (real time).
const WAIT_TIMEOUT: &str = "--timeout=25s";

const PARALLEL: &str = include_str!("../../../examples/workloads/job-parallel.yaml");
const INDEXED: &str = include_str!("../../../examples/workloads/job-indexed.yaml");
const POD_FAILURE_POLICY: &str = include_str!("../../../examples/workloads/job-pod-failure-policy.yaml");
const INDEX: &str = "batch.kubernetes.io/job-completion-index";

// ---------------------------------------------------------------------------
// Cluster and helpers.

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

async fn apply(c: &Cluster, yaml: &str) -> String {
    let r = c.run_with_yaml(&["apply"], yaml).await;
    assert!(r.success, "apply failed: {}\n{}", r.stderr, r.stdout);
    r.stdout
}

fn info(api: &Api, plural: &str) -> std::sync::Arc<apiserver::registry::ResourceInfo> {
    let (group, version) = match plural {
        "jobs" => ("batch", "v1"),
        _ => ("", "v1"),
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

fn job(api: &Api, name: &str) -> Value {
    api.get(&info(api, "jobs"), Some("default"), name)
        .expect("get job")
}

fn pods_of(api: &Api, job: &str) -> Vec<Value> {
    list(api, "pods", &format!("batch.kubernetes.io/job-name={job}"))
}

fn name(o: &Value) -> String {
    o["metadata"]["name"].as_str().unwrap_or_default().to_string()
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("")
}

/// Upstream `IsPodActive`: not terminal and not being deleted.
fn active(pod: &Value) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && pod["metadata"]["deletionTimestamp"].is_null()
}

fn condition<'a>(job: &'a Value, type_: &str) -> Option<&'a Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// A timestamp field (`.0` is the instant).
fn time(v: &Value) -> Time {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("not a timestamp: {v}: {e}"))
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

/// The messages of the Events about `job` with `reason`.
async fn events(c: &Cluster, job: &str, reason: &str) -> Vec<String> {
    let all = c
        .json(&[
            "get",
            "events",
            "--field-selector",
            &format!("involvedObject.name={job}"),
        ])
        .await;
    all["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["reason"] == reason)
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The `kubectl get job <name>` row as columns.
async fn job_row(c: &Cluster, job: &str) -> Vec<String> {
    let out = c.ok(&["get", "job", job, "--no-headers"]).await;
    out.split_whitespace().map(str::to_string).collect()
}

/// A watch of a Job's pods that records the most active pods ever seen at once.
struct ActiveWatch {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<(usize, BTreeMap<String, Value>)>,
}

impl ActiveWatch {
    fn start(api: &Api, job: &str) -> ActiveWatch {
        let selector = format!("batch.kubernetes.io/job-name={job}");
        let initial = api
            .list(
                &info(api, "pods"),
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
        let mut rx = api
            .watch(&info(api, "pods"), Some("default"), &opts)
            .expect("watch");
        let mut pods: BTreeMap<String, Value> = initial.items.into_iter().map(|p| (name(&p), p)).collect();
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let mut most = pods.values().filter(|p| active(p)).count();
            let mut draining = false;
            loop {
                // Once told to stop, the events still on their way are taken until the watch has
                // been quiet for a moment: the test stops after kubectl saw the Job's condition,
                // which the pod watch may trail.
                let ev = if draining {
                    match tokio::time::timeout(Duration::from_millis(300), rx.recv()).await {
                        Ok(ev) => ev,
                        Err(_) => break,
                    }
                } else {
                    tokio::select! {
                        _ = &mut stopped => {
                            draining = true;
                            continue;
                        }
                        ev = rx.recv() => ev,
                    }
                };
                match ev {
                    Some(WatchEvent::Added(p) | WatchEvent::Modified(p)) => {
                        pods.insert(name(&p), p);
                    }
                    Some(WatchEvent::Deleted(p)) => {
                        // Remembered: a deleted pod still ran once.
                        pods.insert(name(&p), p);
                    }
                    Some(_) => {}
                    None => break,
                }
                let now = pods.values().filter(|p| active(p)).count();
                most = most.max(now);
            }
            (most, pods)
        });
        ActiveWatch { stop, task }
    }

    /// The most active pods seen at once, and every pod seen (last state).
    async fn finish(self) -> (usize, BTreeMap<String, Value>) {
        let _ = self.stop.send(());
        self.task.await.expect("watch task")
    }
}

// ---------------------------------------------------------------------------
// Tests.

#[tokio::test]
async fn a_parallel_job_never_runs_more_than_parallelism_pods_and_completes() {
    let c = cluster().await;
    let api = c.server().api();
    let watch = ActiveWatch::start(api, "parallel");
    let out = apply(&c, PARALLEL).await;
    assert!(out.contains("job.batch/parallel created"), "{out}");
    let out = c
        .ok(&["wait", "--for=condition=complete", "job/parallel", WAIT_TIMEOUT])
        .await;
    assert!(out.contains("job.batch/parallel condition met"), "{out}");
    let (most, pods) = watch.finish().await;
    assert!(most <= 2, "at most 2 active pods at once, saw {most}");
    assert_eq!(most, 2, "parallelism 2 is used");
    assert_eq!(pods.len(), 5, "one pod per completion: {:?}", pods.keys());
    assert!(pods.values().all(|p| phase(p) == "Succeeded"));

    let j = job(api, "parallel");
    let status = &j["status"];
    assert_eq!(status["succeeded"], 5, "{status}");
    assert!(
        status["active"].is_null() && status["failed"].is_null(),
        "{status}"
    );
    assert_eq!(status["ready"], 0);
    assert_eq!(status["terminating"], 0);
    for type_ in ["SuccessCriteriaMet", "Complete"] {
        let cond = condition(&j, type_).unwrap_or_else(|| panic!("{type_} in {status}"));
        assert_eq!(cond["status"], "True");
        assert_eq!(cond["reason"], "CompletionsReached");
        assert_eq!(cond["message"], "Reached expected number of succeeded pods");
    }
    let completion = time(&status["completionTime"]).0;
    assert!(completion >= time(&status["startTime"]).0);

    // Every pod finished: the controller removed every tracking finalizer.
    eventually(&c, "no pod keeps the tracking finalizer", |api| {
        let pods = pods_of(api, "parallel");
        let clean = pods.iter().all(|p| p["metadata"]["finalizers"].is_null());
        (pods.len() == 5 && clean).then_some(())
    })
    .await;

    let row = job_row(&c, "parallel").await;
    assert_eq!(row[0], "parallel");
    assert_eq!(row[1], "Complete", "{row:?}");
    assert_eq!(row[2], "5/5", "{row:?}");
    assert!(row[3].ends_with('s') || row[3].ends_with('m'), "DURATION {row:?}");

    let created = events(&c, "parallel", "SuccessfulCreate").await;
    assert_eq!(created.len(), 5, "{created:?}");
    let mut expected: Vec<String> = pods.keys().map(|n| format!("Created pod: {n}")).collect();
    let mut created = created;
    expected.sort();
    created.sort();
    assert_eq!(created, expected);
    assert_eq!(events(&c, "parallel", "Completed").await, ["Job completed"]);
    let described = c.ok(&["describe", "job", "parallel"]).await;
    let statuses = described
        .lines()
        .find(|l| l.starts_with("Pods Statuses:"))
        .unwrap_or_else(|| panic!("{described}"));
    assert!(
        e2e::matches_words(statuses, "0 Active (0 Ready) / 5 Succeeded / 0 Failed"),
        "{statuses}"
    );
}

#[tokio::test]
async fn an_indexed_job_completes_each_index_exactly_once() {
    let c = cluster().await;
    let api = c.server().api();
    let watch = ActiveWatch::start(api, "indexed");
    apply(&c, INDEXED).await;
    c.ok(&["wait", "--for=condition=complete", "job/indexed", WAIT_TIMEOUT])
        .await;
    let (most, pods) = watch.finish().await;
    assert!(most <= 2, "parallelism 2: saw {most} active pods");
    assert_eq!(pods.len(), 4, "{:?}", pods.keys());
    let mut indexes: Vec<String> = Vec::new();
    for (n, pod) in &pods {
        let ix = pod["metadata"]["annotations"][INDEX]
            .as_str()
            .expect("index annotation");
        assert_eq!(pod["metadata"]["labels"][INDEX], ix, "index label of {n}");
        assert!(n.starts_with(&format!("indexed-{ix}-")), "{n}");
        assert_eq!(pod["spec"]["hostname"], format!("indexed-{ix}"));
        let env = &pod["spec"]["containers"][0]["env"][0];
        assert_eq!(env["name"], "JOB_COMPLETION_INDEX");
        assert_eq!(
            env["valueFrom"]["fieldRef"]["fieldPath"],
            format!("metadata.labels['{INDEX}']")
        );
        assert_eq!(phase(pod), "Succeeded");
        indexes.push(ix.to_string());
    }
    indexes.sort();
    assert_eq!(indexes, ["0", "1", "2", "3"], "each index exactly once");

    let j = job(api, "indexed");
    assert_eq!(j["status"]["completedIndexes"], "0-3");
    assert_eq!(j["status"]["succeeded"], 4);
    let row = job_row(&c, "indexed").await;
    assert_eq!(row[1..3], ["Complete", "4/4"], "{row:?}");
}

#[tokio::test]
async fn a_failing_job_backs_off_exponentially_and_stops_at_the_backoff_limit() {
    let c = cluster().await;
    let api = c.server().api();
    let yaml = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: flaky
spec:
  backoffLimit: 3
  template:
    metadata:
      annotations:
        sim.miniplane.dev/run-seconds: "1"
        sim.miniplane.dev/exit-code: "1"
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.36
"#;
    apply(&c, yaml).await;
    c.ok(&["wait", "--for=condition=failed", "job/flaky", "--timeout=30s"])
        .await;
    let j = job(api, "flaky");
    let failed = condition(&j, "Failed").expect("Failed condition");
    assert_eq!(failed["reason"], "BackoffLimitExceeded");
    assert_eq!(failed["message"], "Job has reached the specified backoff limit");
    assert_eq!(
        condition(&j, "FailureTarget").expect("interim FailureTarget")["reason"],
        "BackoffLimitExceeded"
    );
    assert_eq!(j["status"]["failed"], 4, "the first try and 3 retries");
    assert!(j["status"]["completionTime"].is_null());

    let mut pods = pods_of(api, "flaky");
    assert_eq!(pods.len(), 4, "no pod after the limit");
    pods.sort_by_key(|p| time(&p["metadata"]["creationTimestamp"]).0);
    // Between one pod's failure and the next pod: 10 s, 20 s, 40 s (timestamps have whole seconds,
    // and a sync waits up to a second for more events; at 20x a loaded machine's few hundred real
    // milliseconds of lag are several simulated seconds, so up to half the delay late is allowed —
    // still short of the next doubling).
    for (n, pair) in pods.windows(2).enumerate() {
        let finished =
            time(&pair[0]["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]).0;
        let next = time(&pair[1]["metadata"]["creationTimestamp"]).0;
        let gap = next.duration_since(finished).as_secs_f64();
        let want = 10.0 * f64::from(1 << n);
        assert!(
            gap >= want - 1.0 && gap < want * 1.5,
            "retry {}: {gap:.1} s after the failure, want {want} s",
            n + 1
        );
    }
    let warnings = events(&c, "flaky", "BackoffLimitExceeded").await;
    assert_eq!(warnings, ["Job has reached the specified backoff limit"]);
    let row = job_row(&c, "flaky").await;
    assert_eq!(row[1..3], ["Failed", "0/1"], "{row:?}");
}

#[tokio::test]
async fn a_fail_job_rule_ends_the_job_at_the_first_matching_exit_code() {
    let c = cluster().await;
    let api = c.server().api();
    apply(&c, POD_FAILURE_POLICY).await;
    c.ok(&[
        "wait",
        "--for=condition=failed",
        "job/pod-failure-policy",
        WAIT_TIMEOUT,
    ])
    .await;
    let pods = pods_of(api, "pod-failure-policy");
    assert_eq!(pods.len(), 1, "no retry after a FailJob match");
    let j = job(api, "pod-failure-policy");
    let failed = condition(&j, "Failed").expect("Failed");
    assert_eq!(failed["reason"], "PodFailurePolicy");
    let message = format!(
        "Container main for pod default/{} failed with exit code 42 matching FailJob rule at index 0",
        name(&pods[0])
    );
    assert_eq!(failed["message"], message.as_str());
    assert_eq!(
        events(&c, "pod-failure-policy", "PodFailurePolicy").await,
        [message]
    );
}

#[tokio::test]
async fn active_deadline_seconds_ends_a_job_with_deadline_exceeded() {
    let c = cluster().await;
    let api = c.server().api();
    let yaml = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: slow
spec:
  parallelism: 2
  completions: 4
  activeDeadlineSeconds: 8
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox:1.36
"#;
    apply(&c, yaml).await;
    eventually(&c, "two running pods", |api| {
        let pods = pods_of(api, "slow");
        (pods.iter().filter(|p| phase(p) == "Running").count() == 2).then_some(())
    })
    .await;
    c.ok(&["wait", "--for=condition=failed", "job/slow", WAIT_TIMEOUT])
        .await;
    let j = job(api, "slow");
    let failed = condition(&j, "Failed").expect("Failed");
    assert_eq!(failed["reason"], "DeadlineExceeded");
    assert_eq!(failed["message"], "Job was active longer than specified deadline");
    let took = time(&failed["lastTransitionTime"])
        .0
        .duration_since(time(&j["status"]["startTime"]).0);
    assert!(took.as_secs_f64() >= 8.0, "failed after {took:?}, deadline 8 s");
    assert_eq!(j["status"]["failed"], 2, "the two running pods count as failed");
    eventually(&c, "the deleted pods gone", |api| {
        pods_of(api, "slow").is_empty().then_some(())
    })
    .await;
    let deleted = events(&c, "slow", "SuccessfulDelete").await;
    assert_eq!(deleted.len(), 2, "{deleted:?}");
    assert!(
        deleted.iter().all(|m| m.starts_with("Deleted pod: slow-")),
        "{deleted:?}"
    );
    assert_eq!(
        events(&c, "slow", "DeadlineExceeded").await,
        ["Job was active longer than specified deadline"]
    );
}

#[tokio::test]
async fn a_suspended_job_runs_no_pods_until_resumed() {
    let c = cluster().await;
    let api = c.server().api();
    let yaml = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: later
spec:
  suspend: true
  parallelism: 2
  completions: 2
  template:
    metadata:
      annotations:
        sim.miniplane.dev/run-seconds: "30"
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox:1.36
"#;
    apply(&c, yaml).await;
    let j = eventually(&c, "the Suspended condition", |api| {
        let j = job(api, "later");
        condition(&j, "Suspended").is_some().then_some(j)
    })
    .await;
    let suspended = condition(&j, "Suspended").expect("Suspended");
    assert_eq!(
        (&suspended["status"], &suspended["reason"]),
        (&"True".into(), &"JobSuspended".into())
    );
    assert!(
        j["status"]["startTime"].is_null(),
        "a suspended Job has not started"
    );
    assert!(pods_of(api, "later").is_empty());
    assert_eq!(job_row(&c, "later").await[1], "Suspended");

    c.ok(&["patch", "job", "later", "-p", r#"{"spec":{"suspend":false}}"#])
        .await;
    let j = eventually(&c, "two running pods after the resume", |api| {
        let running = pods_of(api, "later")
            .iter()
            .filter(|p| phase(p) == "Running")
            .count();
        (running == 2).then(|| job(api, "later"))
    })
    .await;
    let resumed = condition(&j, "Suspended").expect("Suspended");
    assert_eq!(
        (&resumed["status"], &resumed["reason"]),
        (&"False".into(), &"JobResumed".into())
    );
    let first_start = time(&j["status"]["startTime"]).0;

    // Suspending a running Job deletes its pods, without counting them as failed.
    c.ok(&["patch", "job", "later", "-p", r#"{"spec":{"suspend":true}}"#])
        .await;
    let j = eventually(&c, "no pod left after the suspend", |api| {
        let j = job(api, "later");
        let suspended = condition(&j, "Suspended").is_some_and(|s| s["status"] == "True");
        (pods_of(api, "later").is_empty() && suspended).then_some(j)
    })
    .await;
    assert!(j["status"]["failed"].is_null(), "{}", j["status"]);
    assert!(j["status"]["active"].is_null(), "{}", j["status"]);

    c.sleep_real(Duration::from_millis(200)).await;
    c.ok(&["patch", "job", "later", "-p", r#"{"spec":{"suspend":false}}"#])
        .await;
    let j = eventually(&c, "pods again", |api| {
        let j = job(api, "later");
        (pods_of(api, "later").len() == 2 && j["status"]["active"] == 2).then_some(j)
    })
    .await;
    assert!(
        time(&j["status"]["startTime"]).0 > first_start,
        "a resume restarts startTime"
    );
    assert_eq!(events(&c, "later", "Suspended").await, ["Job suspended"]);
    assert_eq!(events(&c, "later", "Resumed").await, ["Job resumed"]);
}

#[tokio::test]
async fn backoff_limit_per_index_fails_each_index_on_its_own() {
    let c = cluster().await;
    let api = c.server().api();
    let yaml = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: per-index
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimitPerIndex: 1
  template:
    metadata:
      annotations:
        sim.miniplane.dev/run-seconds: "1"
        sim.miniplane.dev/exit-code: "3"
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox:1.36
"#;
    apply(&c, yaml).await;
    c.ok(&["wait", "--for=condition=failed", "job/per-index", WAIT_TIMEOUT])
        .await;
    let j = job(api, "per-index");
    assert_eq!(
        j["spec"]["backoffLimit"],
        i64::from(i32::MAX),
        "defaulted with backoffLimitPerIndex"
    );
    let failed = condition(&j, "Failed").expect("Failed");
    assert_eq!(failed["reason"], "FailedIndexes");
    assert_eq!(failed["message"], "Job has failed indexes");
    assert_eq!(j["status"]["failedIndexes"], "0,1");
    assert_eq!(j["status"]["failed"], 4, "two tries per index");
    let pods = pods_of(api, "per-index");
    assert_eq!(pods.len(), 4, "{:?}", pods.iter().map(name).collect::<Vec<_>>());
    for ix in ["0", "1"] {
        let mut counts: Vec<&str> = pods
            .iter()
            .filter(|p| p["metadata"]["annotations"][INDEX] == ix)
            .map(|p| {
                p["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"]
                    .as_str()
                    .unwrap_or("?")
            })
            .collect();
        counts.sort();
        assert_eq!(
            counts,
            ["0", "1"],
            "index {ix}: the retry inherits the failure count"
        );
    }
}
