//! CronJobs and the TTL of finished Jobs, end to end: the real `kubectl` against an in-process
//! miniplane whose one clock runs [`SCALE`] times faster than real time (a simulated minute per
//! real second; 3 simulated nodes, every controller, the scheduler and the simulated kubelet;
//! nothing mocked). The pods "work" for the time of their `sim.miniplane.dev/run-seconds`
//! annotation.
//!
//! Covered:
//! * `*/1 * * * *` starts a Job each minute, named `<cronjob>-<scheduled Unix minute>`, with the
//!   `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation; `lastScheduleTime`,
//!   `lastSuccessfulTime`; `successfulJobsHistoryLimit` holds (`SuccessfulDelete`);
//! * `examples/workloads/cronjob-forbid.yaml`: runs of 90 s never overlap, skipped minutes give
//!   `JobAlreadyActive`;
//! * `concurrencyPolicy: Replace` deletes the running Job (and its pods) for the next;
//! * `suspend` stops the runs; `kubectl get cronjob` shows it;
//! * `examples/workloads/cronjob-timezone.yaml`, moved to a Paris time a few minutes ahead: the
//!   run starts at that time less two hours UTC (summer), annotated `+02:00`;
//!   `kubectl create job --from=cronjob/nightly` makes a Job owned
//!   by the CronJob that it does not count as a scheduled run (`UnexpectedJob`);
//! * `ttlSecondsAfterFinished`: a finished Job is deleted after it, with its pods;
//! * a bad schedule and an unknown time zone are refused with 422 and upstream's messages.
//!
//! Every wait is bounded: polls with [`tokio::time::timeout`] or `eventually_json`.

use std::time::{Duration, SystemTime};

use e2e::{Cluster, Config};
use k8s_openapi::jiff;
use miniplane::cluster::SimConfig;
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second.
const SCALE: f64 = 60.0;
/// Real-time bound of every poll in this file.
const WAIT: Duration = Duration::from_secs(30);
/// The annotation with a Job's scheduled time.
const SCHEDULED: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

const FORBID: &str = include_str!("../../../examples/workloads/cronjob-forbid.yaml");
const TIMEZONE: &str = include_str!("../../../examples/workloads/cronjob-timezone.yaml");

// ---------------------------------------------------------------------------
// Cluster and helpers.

async fn cluster_with(clock: Clock) -> Cluster {
    Cluster::start_with(Config {
        clock,
        sim: Some(SimConfig {
            nodes: 3,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    })
    .await
}

async fn cluster() -> Cluster {
    cluster_with(Clock::scaled(SCALE)).await
}

/// A CronJob `name` on `schedule` whose pods run `run_seconds`; `extra` adds lines to `spec`
/// (indented 2).
fn cronjob(name: &str, schedule: &str, run_seconds: u32, extra: &str) -> String {
    format!(
        r#"apiVersion: batch/v1
kind: CronJob
metadata:
  name: {name}
spec:
  schedule: "{schedule}"
{extra}  jobTemplate:
    metadata:
      labels: {{app: {name}}}
    spec:
      template:
        metadata:
          labels: {{app: {name}}}
          annotations: {{sim.miniplane.dev/run-seconds: "{run_seconds}"}}
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: busybox:1.36
"#
    )
}

/// The Jobs labelled `app=<app>`.
async fn jobs(c: &Cluster, app: &str) -> Vec<Value> {
    let selector = format!("app={app}");
    let list = c.json(&["get", "jobs", "-l", &selector]).await;
    list["items"].as_array().cloned().unwrap_or_default()
}

fn name(obj: &Value) -> &str {
    obj["metadata"]["name"].as_str().unwrap_or("")
}

fn has_condition(job: &Value, type_: &str) -> bool {
    job["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == type_ && c["status"] == "True"))
}

fn time(v: &Value) -> jiff::Timestamp {
    v.as_str()
        .unwrap_or_else(|| panic!("not a time: {v}"))
        .parse()
        .unwrap_or_else(|e| panic!("{v}: {e}"))
}

/// A Job's name carries its scheduled time in Unix minutes (upstream `getJobName`).
fn assert_named_by_its_minute(cronjob: &str, job: &Value) {
    let scheduled = time(&job["metadata"]["annotations"][SCHEDULED]);
    assert_eq!(scheduled.subsec_nanosecond(), 0);
    let expected = format!("{cronjob}-{}", scheduled.as_second() / 60);
    assert_eq!(name(job), expected, "{job}");
    let owner = &job["metadata"]["ownerReferences"][0];
    assert_eq!(
        (owner["kind"].as_str(), owner["name"].as_str()),
        (Some("CronJob"), Some(cronjob))
    );
}

/// The messages of the events with `reason` about `object`.
async fn events(c: &Cluster, object: &str, reason: &str) -> Vec<String> {
    let selector = format!("involvedObject.name={object},reason={reason}");
    let list = c.json(&["get", "events", "--field-selector", &selector]).await;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect()
}

/// Polls `check` (every 100 ms real) until it answers, for up to [`WAIT`].
async fn eventually<T, F, Fut>(c: &Cluster, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let polled = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(v) = check().await {
                return v;
            }
            c.sleep_real(Duration::from_millis(100)).await;
        }
    });
    polled
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

// ---------------------------------------------------------------------------
// Schedules.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_minute_jobs_are_named_by_their_minute_and_history_is_limited() {
    let c = cluster().await;
    let yaml = cronjob("ticker", "*/1 * * * *", 5, "  successfulJobsHistoryLimit: 2\n");
    c.run_with_yaml(&["apply"], &yaml).await;
    // Four runs done: the last schedule is at least three minutes after the first.
    let first = eventually(&c, "the first run", || async {
        let all = jobs(&c, "ticker").await;
        all.first()
            .map(|j| time(&j["metadata"]["annotations"][SCHEDULED]))
    })
    .await;
    let cj = c
        .eventually_json(&["get", "cronjob", "ticker"], "four runs and a success", |cj| {
            let last = cj["status"]["lastScheduleTime"].as_str();
            let done = cj["status"]["lastSuccessfulTime"].is_string();
            last.is_some_and(|t| {
                t.parse::<jiff::Timestamp>()
                    .is_ok_and(|t| t.as_second() - first.as_second() >= 180)
            }) && done
        })
        .await;
    let last = time(&cj["status"]["lastScheduleTime"]);
    assert_eq!(last.as_second() % 60, 0, "runs start at minute boundaries");

    let all = eventually(&c, "history at its limit", || async {
        let all = jobs(&c, "ticker").await;
        let complete = all.iter().filter(|j| has_condition(j, "Complete")).count();
        (complete <= 2 && !all.is_empty()).then_some(all)
    })
    .await;
    for job in &all {
        assert_named_by_its_minute("ticker", job);
    }
    assert!(
        !events(&c, "ticker", "SuccessfulDelete").await.is_empty(),
        "old Jobs deleted by the history limit"
    );
    let created = events(&c, "ticker", "SuccessfulCreate").await;
    assert!(
        created.iter().all(|m| m.starts_with("Created job ticker-")),
        "{created:?}"
    );
    assert!(created.len() >= 4, "{created:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbid_never_runs_two_at_once() {
    let c = cluster().await;
    c.run_with_yaml(&["apply"], FORBID).await;
    // Runs of 90 s on an every-minute schedule: the second minute is skipped.
    eventually(&c, "JobAlreadyActive", || async {
        let skipped = events(&c, "report", "JobAlreadyActive").await;
        let expected = "Not starting job because prior execution is running and concurrency policy is Forbid";
        skipped.iter().any(|m| m == expected).then_some(())
    })
    .await;
    // Wait for a second run to finish, then compare the runs' times.
    let done = eventually(&c, "two finished runs", || async {
        let all = jobs(&c, "report").await;
        let done: Vec<Value> = all.into_iter().filter(|j| has_condition(j, "Complete")).collect();
        (done.len() >= 2).then_some(done)
    })
    .await;
    let mut spans: Vec<(jiff::Timestamp, jiff::Timestamp)> = done
        .iter()
        .map(|j| {
            (
                time(&j["status"]["startTime"]),
                time(&j["status"]["completionTime"]),
            )
        })
        .collect();
    spans.sort();
    for pair in spans.windows(2) {
        assert!(pair[1].0 >= pair[0].1, "runs overlap: {spans:?}");
    }
    for job in &done {
        assert_named_by_its_minute("report", job);
    }
    let out = c.ok(&["get", "cronjob", "report"]).await;
    assert!(e2e::matches_words(&out, "report */1 * * * * False"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_deletes_the_running_job_and_its_pods() {
    let c = cluster().await;
    let yaml = cronjob("swap", "*/1 * * * *", 100_000, "  concurrencyPolicy: Replace\n");
    c.run_with_yaml(&["apply"], &yaml).await;
    let first = eventually(&c, "the first run with a pod", || async {
        let all = jobs(&c, "swap").await;
        let job = all.first()?;
        let pods = c
            .json(&["get", "pods", "-l", &format!("job-name={}", name(job))])
            .await;
        (!pods["items"].as_array()?.is_empty()).then(|| name(job).to_string())
    })
    .await;
    eventually(&c, "the first run replaced", || async {
        let names: Vec<String> = jobs(&c, "swap")
            .await
            .iter()
            .map(|j| name(j).to_string())
            .collect();
        (!names.is_empty() && !names.contains(&first)).then_some(())
    })
    .await;
    let deleted = events(&c, "swap", "SuccessfulDelete").await;
    assert!(deleted.contains(&format!("Deleted job {first}")), "{deleted:?}");
    eventually(&c, "the replaced run's pods gone", || async {
        let pods = c.json(&["get", "pods", "-l", &format!("job-name={first}")]).await;
        pods["items"].as_array()?.is_empty().then_some(())
    })
    .await;
    let cj = c.json(&["get", "cronjob", "swap"]).await;
    assert!(
        cj["status"]["active"].as_array().is_some_and(|a| a.len() <= 1),
        "{cj}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspend_stops_the_runs() {
    let c = cluster().await;
    c.run_with_yaml(&["apply"], &cronjob("paused", "*/1 * * * *", 1, ""))
        .await;
    c.eventually_json(&["get", "cronjob", "paused"], "a first run", |cj| {
        cj["status"]["lastScheduleTime"].is_string()
    })
    .await;
    c.ok(&["patch", "cronjob", "paused", "-p", r#"{"spec":{"suspend":true}}"#])
        .await;
    let before = c.json(&["get", "cronjob", "paused"]).await["status"]["lastScheduleTime"].clone();
    let runs = jobs(&c, "paused").await.len();
    // Three simulated minutes pass.
    c.sleep_real(Duration::from_secs(3)).await;
    let after = c.json(&["get", "cronjob", "paused"]).await;
    // A run may have been started in the moment between the read and the patch: allow one.
    let later = jobs(&c, "paused").await.len();
    assert!(later <= runs + 1, "suspended, yet {runs} → {later} Jobs");
    if later == runs {
        assert_eq!(after["status"]["lastScheduleTime"], before);
    }
    let out = c.ok(&["get", "cronjob", "paused"]).await;
    assert!(e2e::matches_words(&out, "paused */1 * * * * True"), "{out}");
}

// ---------------------------------------------------------------------------
// Time zones, runs by hand, TTL.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paris_run_and_a_run_by_hand_that_expires() {
    // A summer night (CEST, UTC+2): 2026-06-01T00:30:00Z is 02:30 in Paris.
    let epoch = SystemTime::UNIX_EPOCH + Duration::from_secs(1_780_273_800);
    let clock = Clock::starting_at(epoch, SCALE);
    let c = cluster_with(clock.clone()).await;
    // The example's TTL of 60 s is one real second here: five keep the runs in sight.
    let yaml = TIMEZONE.replace("ttlSecondsAfterFinished: 60", "ttlSecondsAfterFinished: 300");
    c.run_with_yaml(&["apply"], &yaml).await;
    let out = c.ok(&["get", "cronjob", "nightly"]).await;
    assert!(
        e2e::matches_words(&out, "nightly 0 3 * * * Europe/Paris False 0"),
        "{out}"
    );

    // Move the nightly run to three simulated minutes from now, written in Paris time.
    let now = jiff::Timestamp::try_from(clock.now()).expect("clock");
    let at = jiff::Timestamp::from_second((now.as_second() / 60 + 3) * 60).expect("time");
    let paris = at.to_zoned(jiff::tz::TimeZone::get("Europe/Paris").expect("zone"));
    let schedule = format!("{} {} * * *", paris.minute(), paris.hour());
    assert_eq!(paris.hour(), at.to_zoned(jiff::tz::TimeZone::UTC).hour() + 2);
    let patch = serde_json::json!({"spec": {"schedule": schedule}}).to_string();
    c.ok(&["patch", "cronjob", "nightly", "-p", &patch]).await;

    // The run: at that UTC time, annotated in Paris time, named by its Unix minute.
    let run = eventually(&c, "the Paris run", || async {
        jobs(&c, "nightly").await.into_iter().next()
    })
    .await;
    let expected = paris.strftime("%Y-%m-%dT%H:%M:%S+02:00").to_string();
    assert_eq!(run["metadata"]["annotations"][SCHEDULED], expected.as_str());
    assert_eq!(name(&run), format!("nightly-{}", at.as_second() / 60));
    let cj = c.json(&["get", "cronjob", "nightly"]).await;
    assert_eq!(time(&cj["status"]["lastScheduleTime"]), at);

    // By hand: owned by the CronJob, never one of its scheduled runs.
    c.ok(&["create", "job", "nightly-now", "--from=cronjob/nightly"])
        .await;
    let manual = c.json(&["get", "job", "nightly-now"]).await;
    assert_eq!(
        manual["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"],
        "manual"
    );
    assert_eq!(manual["metadata"]["ownerReferences"][0]["kind"], "CronJob");
    assert_eq!(manual["spec"]["ttlSecondsAfterFinished"], 300);
    eventually(&c, "UnexpectedJob", || async {
        let seen = events(&c, "nightly", "UnexpectedJob").await;
        let expected = "Saw a job that the controller did not create or forgot: nightly-now";
        seen.iter().any(|m| m == expected).then_some(())
    })
    .await;
    let cj = c.json(&["get", "cronjob", "nightly"]).await;
    let active: Vec<&str> = cj["status"]["active"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(!active.contains(&"nightly-now"), "{active:?}");

    // Both finish after 5 s and are deleted 300 s later, with their pods.
    eventually(&c, "both runs deleted after their TTL", || async {
        (jobs(&c, "nightly").await.is_empty()).then_some(())
    })
    .await;
    eventually(&c, "their pods gone", || async {
        let pods = c.json(&["get", "pods", "-l", "app=nightly"]).await;
        pods["items"].as_array()?.is_empty().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_job_is_deleted_after_its_ttl_with_its_pods() {
    let clock = Clock::scaled(SCALE);
    let c = cluster_with(clock.clone()).await;
    let yaml = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  ttlSecondsAfterFinished: 300
  template:
    metadata:
      annotations: {sim.miniplane.dev/run-seconds: "2"}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox:1.36
"#;
    c.run_with_yaml(&["apply"], yaml).await;
    let job = c
        .eventually_json(&["get", "job", "once"], "completion", |j| {
            has_condition(j, "Complete")
        })
        .await;
    let finished = job["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Complete"))
        .map(|c| time(&c["lastTransitionTime"]))
        .expect("a Complete condition");
    eventually(&c, "the Job deleted", || async {
        let r = c.run(&["get", "job", "once"]).await;
        (!r.success && r.stderr.contains("NotFound")).then_some(())
    })
    .await;
    eventually(&c, "its pods deleted", || async {
        let pods = c.json(&["get", "pods", "-l", "job-name=once"]).await;
        pods["items"].as_array()?.is_empty().then_some(())
    })
    .await;
    // Not before its TTL (300 simulated seconds, five real ones).
    let now = jiff::Timestamp::try_from(clock.now()).expect("clock");
    assert!(now.as_second() - finished.as_second() >= 300);
}

// ---------------------------------------------------------------------------
// Validation.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_schedules_and_time_zones_are_refused_with_upstreams_messages() {
    let c = cluster().await;
    let cases = [
        (
            cronjob("bad", "61 * * * *", 1, ""),
            r#"The CronJob "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#,
        ),
        (
            cronjob("bad", "0 0 * * mon-sun", 1, ""),
            r#"spec.schedule: Invalid value: "0 0 * * mon-sun": beginning of range (1) beyond end of range (0): mon-sun"#,
        ),
        (
            cronjob("bad", "* * * *", 1, ""),
            r#"spec.schedule: Invalid value: "* * * *": expected exactly 5 fields, found 4: [* * * *]"#,
        ),
        (
            cronjob("bad", "@reboot", 1, ""),
            r#"spec.schedule: Invalid value: "@reboot": unrecognized descriptor: @reboot"#,
        ),
        (
            cronjob("bad", "CRON_TZ=UTC * * * * *", 1, ""),
            r#"spec.schedule: Invalid value: "CRON_TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#,
        ),
        (
            cronjob("bad", "0 3 * * *", 1, "  timeZone: Europe/Pariss\n"),
            r#"The CronJob "bad" is invalid: spec.timeZone: Invalid value: "Europe/Pariss": unknown time zone Europe/Pariss"#,
        ),
        (
            cronjob("bad", "0 3 * * *", 1, "  timeZone: Local\n"),
            r#"spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"#,
        ),
    ];
    for (yaml, message) in cases {
        let stderr = c.create_fails(&yaml).await;
        assert!(stderr.contains(message), "want {message}\ngot {stderr}");
    }
    // The status code is 422 Unprocessable Entity.
    let body = serde_json::json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "bad"},
        "spec": {"schedule": "*/0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}],
        }}}}},
    });
    let response = e2e::http(
        c.server(),
        "POST",
        "/apis/batch/v1/namespaces/default/cronjobs",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .await;
    let status = response.json();
    assert_eq!(status["code"], 422, "{status}");
    assert_eq!(status["reason"], "Invalid");
    let message = status["message"].as_str().unwrap_or("");
    assert!(
        message.contains("step of range should be a positive number: */0"),
        "{message}"
    );
    // The examples are valid.
    for example in [FORBID, TIMEZONE] {
        let r = c.run_with_yaml(&["create", "--dry-run=server"], example).await;
        assert!(r.success, "{}", r.stderr);
    }
}
