//! The CronJob controller running for real against an in-process API server on paused tokio
//! time (the clock starts at 2023-11-14T22:13:20Z). No Job controller runs here: the tests
//! finish Jobs by writing their status, as the Job controller would.

use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::Event;
use serde_json::json;
use store::Clock;

use crate::cronjob::controller::CronJobController;
use crate::cronjob::plan::SCHEDULED_TIMESTAMP_ANNOTATION;
use crate::runtime::events::Recorder;
use crate::runtime::{Informer, ListParams, PatchType, Typed};
use crate::testing::{poll, stop_tasks, test_client, test_clock};

/// Unix minute of the clock's first full minute (2023-11-14T22:14:00Z).
const FIRST_MINUTE: i64 = 28_333_334;

struct Cluster {
    clock: Clock,
    cronjobs: Typed<CronJob>,
    jobs: Typed<Job>,
    events: Typed<Event>,
    tasks: Tasks,
}

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            cronjobs: Typed::new(client.clone()),
            jobs: Typed::new(client.clone()),
            events: Typed::new(client),
            clock,
            tasks: Tasks::new(),
        }
    }

    fn start(&mut self) {
        let client = self.cronjobs.client().clone();
        let cronjobs = Informer::<CronJob>::new(client.clone(), self.clock.clone(), None);
        let jobs = Informer::<Job>::new(client.clone(), self.clock.clone(), None);
        let recorder = Recorder::new(client.clone(), self.clock.clone(), "cronjob-controller", None);
        let controller = CronJobController::new(client, self.clock.clone(), recorder, &cronjobs, &jobs);
        self.tasks.push(cronjobs.run(self.tasks.shutdown()));
        self.tasks.push(jobs.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(1, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// Polls every simulated second until `check` answers, for up to `limit` simulated.
    async fn eventually<T>(&self, what: &str, limit: Duration, check: impl AsyncFnMut() -> Option<T>) -> T {
        poll(&self.clock, what, limit, Duration::from_secs(1), check).await
    }

    async fn create(&self, cj: serde_json::Value) {
        let cj: CronJob = serde_json::from_value(cj).unwrap();
        self.cronjobs.create(Some("default"), &cj).await.unwrap();
    }

    async fn cronjob(&self) -> CronJob {
        self.cronjobs.get(Some("default"), "report").await.unwrap()
    }

    /// Live Jobs (not being deleted), by name.
    async fn job_names(&self) -> Vec<String> {
        let jobs = self
            .jobs
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        let mut names: Vec<String> = jobs
            .into_iter()
            .filter(|j| j.metadata.deletion_timestamp.is_none())
            .filter_map(|j| j.metadata.name)
            .collect();
        names.sort();
        names
    }

    async fn wait_for_jobs(&self, names: &[String]) {
        let what = format!("jobs {names:?}");
        self.eventually(&what, Duration::from_secs(3600), || async {
            (self.job_names().await == names).then_some(())
        })
        .await;
    }

    /// Finishes a Job as the Job controller would: `Complete` (or `Failed`) with times.
    async fn finish(&self, name: &str, condition: &str) {
        let now = jiff::Timestamp::try_from(self.clock.now())
            .unwrap()
            .round(jiff::Unit::Second)
            .unwrap();
        let now = now.to_string();
        let mut status = json!({
            "startTime": now,
            "conditions": [{"type": condition, "status": "True", "lastTransitionTime": now}],
        });
        if condition == "Complete" {
            status["completionTime"] = json!(now);
            status["succeeded"] = json!(1);
        } else {
            status["failed"] = json!(1);
        }
        self.jobs
            .patch_status(Some("default"), name, PatchType::Merge, json!({"status": status}))
            .await
            .unwrap();
    }

    async fn event_messages(&self, reason: &str) -> Vec<String> {
        let events = self
            .events
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter_map(|e| e.message)
            .collect()
    }

    async fn wait_for_event(&self, reason: &str, message: &str) {
        self.eventually(&format!("{reason} event"), Duration::from_secs(3600), || async {
            self.event_messages(reason)
                .await
                .iter()
                .any(|m| m == message)
                .then_some(())
        })
        .await;
    }
}

fn report(schedule: &str, policy: &str) -> serde_json::Value {
    json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "report", "namespace": "default"},
        "spec": {
            "schedule": schedule,
            "concurrencyPolicy": policy,
            "successfulJobsHistoryLimit": 2,
            "jobTemplate": {
                "metadata": {"labels": {"app": "report"}},
                "spec": {"template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }}},
            },
        },
    })
}

fn job_name(minute: i64) -> String {
    format!("report-{minute}")
}

#[tokio::test(start_paused = true)]
async fn an_every_minute_cronjob_starts_a_job_each_minute_named_by_its_minute() {
    let mut c = Cluster::new().await;
    c.start();
    c.create(report("*/1 * * * *", "Allow")).await;
    c.wait_for_jobs(&[job_name(FIRST_MINUTE)]).await;

    let job = c
        .jobs
        .get(Some("default"), &job_name(FIRST_MINUTE))
        .await
        .unwrap();
    let annotations = job.metadata.annotations.unwrap();
    assert_eq!(
        annotations[SCHEDULED_TIMESTAMP_ANNOTATION],
        "2023-11-14T22:14:00Z"
    );
    assert_eq!(job.metadata.labels.unwrap()["app"], "report");
    let owner = &job.metadata.owner_references.unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.controller), ("CronJob", Some(true)));
    let created = job.metadata.creation_timestamp.unwrap().0;
    assert!(created >= "2023-11-14T22:14:00Z".parse().unwrap());
    assert!(
        created < "2023-11-14T22:14:01Z".parse().unwrap(),
        "started on time: {created}"
    );

    let status = c.cronjob().await.status.unwrap();
    assert_eq!(
        status.last_schedule_time.unwrap().0.to_string(),
        "2023-11-14T22:14:00Z"
    );
    let active = status.active.unwrap();
    assert_eq!(active[0].name.as_deref(), Some(job_name(FIRST_MINUTE).as_str()));
    c.wait_for_event(
        "SuccessfulCreate",
        &format!("Created job {}", job_name(FIRST_MINUTE)),
    )
    .await;

    // Allow: the next minute starts another while the first still runs.
    c.wait_for_jobs(&[job_name(FIRST_MINUTE), job_name(FIRST_MINUTE + 1)])
        .await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn finished_jobs_leave_active_and_history_limits_hold() {
    let mut c = Cluster::new().await;
    c.start();
    c.create(report("*/1 * * * *", "Allow")).await;
    for i in 0..4 {
        let name = job_name(FIRST_MINUTE + i);
        c.eventually(&name, Duration::from_secs(120), || async {
            c.job_names().await.contains(&name).then_some(())
        })
        .await;
        c.finish(&name, "Complete").await;
    }
    // Two successful Jobs are kept: the two oldest go.
    c.wait_for_jobs(&[job_name(FIRST_MINUTE + 2), job_name(FIRST_MINUTE + 3)])
        .await;
    c.wait_for_event(
        "SuccessfulDelete",
        &format!("Deleted job {}", job_name(FIRST_MINUTE)),
    )
    .await;
    let message = format!(
        "Saw completed job: {}, condition: Complete",
        job_name(FIRST_MINUTE + 3)
    );
    c.wait_for_event("SawCompletedJob", &message).await;
    let status = c.cronjob().await.status.unwrap();
    assert!(status.last_successful_time.is_some());
    let active: Vec<String> = status
        .active
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| r.name)
        .collect();
    assert!(!active.contains(&job_name(FIRST_MINUTE + 3)), "{active:?}");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn forbid_skips_while_a_job_runs() {
    let mut c = Cluster::new().await;
    c.start();
    c.create(report("*/1 * * * *", "Forbid")).await;
    c.wait_for_jobs(&[job_name(FIRST_MINUTE)]).await;
    let message = "Not starting job because prior execution is running and concurrency policy is Forbid";
    c.wait_for_event("JobAlreadyActive", message).await;
    c.clock.sleep(Duration::from_secs(120)).await;
    assert_eq!(c.job_names().await, [job_name(FIRST_MINUTE)]);
    // Once it finishes, the next minute starts the next Job.
    c.finish(&job_name(FIRST_MINUTE), "Failed").await;
    c.eventually("a second job", Duration::from_secs(120), || async {
        (c.job_names().await.len() == 2).then_some(())
    })
    .await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn replace_deletes_the_running_job_first() {
    let mut c = Cluster::new().await;
    c.start();
    c.create(report("*/1 * * * *", "Replace")).await;
    c.wait_for_jobs(&[job_name(FIRST_MINUTE)]).await;
    c.wait_for_jobs(&[job_name(FIRST_MINUTE + 1)]).await;
    c.wait_for_event(
        "SuccessfulDelete",
        &format!("Deleted job {}", job_name(FIRST_MINUTE)),
    )
    .await;
    let active = c.cronjob().await.status.unwrap().active.unwrap();
    let names: Vec<_> = active.iter().filter_map(|r| r.name.clone()).collect();
    assert_eq!(names, [job_name(FIRST_MINUTE + 1)]);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_suspended_cronjob_starts_nothing_until_resumed() {
    let mut c = Cluster::new().await;
    c.start();
    let mut cj = report("*/1 * * * *", "Allow");
    cj["spec"]["suspend"] = json!(true);
    c.create(cj).await;
    c.clock.sleep(Duration::from_secs(150)).await;
    assert!(c.job_names().await.is_empty());
    c.cronjobs
        .patch(
            Some("default"),
            "report",
            PatchType::Merge,
            json!({"spec": {"suspend": false}}),
        )
        .await
        .unwrap();
    // Resumed at 22:15:50: the missed 22:15:00 run starts at once (no deadline).
    c.wait_for_jobs(&[job_name(FIRST_MINUTE + 1)]).await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_job_made_by_hand_from_the_cronjob_is_not_a_scheduled_run() {
    let mut c = Cluster::new().await;
    c.create(report("0 * * * *", "Forbid")).await;
    let cj = c.cronjob().await;
    // What `kubectl create job manual --from=cronjob/report` sends.
    let manual: Job = serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {
            "name": "manual", "namespace": "default",
            "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
            "labels": {"app": "report"},
            "ownerReferences": [{
                "apiVersion": "batch/v1", "kind": "CronJob", "name": "report",
                "uid": cj.metadata.uid.clone().unwrap(), "controller": true,
            }],
        },
        "spec": cj.spec.as_ref().unwrap().job_template.spec.clone(),
    }))
    .unwrap();
    c.jobs.create(Some("default"), &manual).await.unwrap();
    c.start();
    c.wait_for_event(
        "UnexpectedJob",
        "Saw a job that the controller did not create or forgot: manual",
    )
    .await;
    let status = c.cronjob().await.status.unwrap_or_default();
    assert!(status.active.unwrap_or_default().is_empty());
    assert!(status.last_schedule_time.is_none());
    // Forbid does not count it: the 23:00 run starts beside it.
    c.wait_for_jobs(&["manual".to_string(), job_name(28_333_380)])
        .await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_active_job_deleted_by_hand_goes_missing() {
    let mut c = Cluster::new().await;
    c.start();
    c.create(report("0 * * * *", "Forbid")).await;
    c.wait_for_jobs(&[job_name(28_333_380)]).await;
    c.jobs
        .delete(Some("default"), &job_name(28_333_380))
        .await
        .unwrap();
    c.wait_for_event(
        "MissingJob",
        &format!("Active job went missing: {}", job_name(28_333_380)),
    )
    .await;
    let status = c.cronjob().await.status.unwrap();
    assert!(status.active.unwrap_or_default().is_empty());
    c.stop().await;
}
