//! The TTL-after-finished controller against an in-process API server on paused time. No
//! garbage collector runs here: a Foreground delete leaves the Job with its
//! `foregroundDeletion` finalizer and a deletionTimestamp, which is what the tests look for.

use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::batch::v1::Job;
use serde_json::json;
use store::Clock;

use crate::runtime::events::Recorder;
use crate::runtime::{Informer, PatchType, Typed};
use crate::testing::{stop_tasks, test_client, test_clock};
use crate::ttlafterfinished::controller::TtlAfterFinishedController;

struct Cluster {
    clock: Clock,
    jobs: Typed<Job>,
    tasks: Tasks,
}

impl Cluster {
    async fn start() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        let jobs = Informer::<Job>::new(client.clone(), clock.clone(), None);
        let recorder = Recorder::new(
            client.clone(),
            clock.clone(),
            "ttl-after-finished-controller",
            None,
        );
        let controller = TtlAfterFinishedController::new(client.clone(), clock.clone(), recorder, &jobs);
        let mut tasks = Tasks::new();
        tasks.push(jobs.run(tasks.shutdown()));
        tasks.spawn(|stop| controller.run(1, stop));
        Cluster {
            clock,
            jobs: Typed::new(client),
            tasks,
        }
    }

    async fn create(&self, name: &str, ttl: Option<i32>) {
        let mut v = json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}],
            }}},
        });
        if let Some(ttl) = ttl {
            v["spec"]["ttlSecondsAfterFinished"] = json!(ttl);
        }
        let job: Job = serde_json::from_value(v).unwrap();
        self.jobs.create(Some("default"), &job).await.unwrap();
    }

    async fn finish(&self, name: &str) {
        let now = jiff::Timestamp::try_from(self.clock.now())
            .unwrap()
            .round(jiff::Unit::Second)
            .unwrap();
        let now = now.to_string();
        let status = json!({"status": {
            "startTime": now, "completionTime": now, "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": now}],
        }});
        self.jobs
            .patch_status(Some("default"), name, PatchType::Merge, status)
            .await
            .unwrap();
    }

    /// Whether the Job is being (or was) deleted.
    async fn deleted(&self, name: &str) -> bool {
        match self.jobs.get(Some("default"), name).await {
            Ok(job) => job.metadata.deletion_timestamp.is_some(),
            Err(e) => e.is_not_found(),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_finished_job_is_deleted_foreground_after_its_ttl() {
    let c = Cluster::start().await;
    c.create("short", Some(30)).await;
    c.create("kept", None).await;
    c.create("running", Some(0)).await;
    c.clock.sleep(Duration::from_secs(5)).await;
    c.finish("short").await;
    c.finish("kept").await;
    c.clock.sleep(Duration::from_secs(28)).await;
    assert!(!c.deleted("short").await, "deleted before its TTL");
    c.clock.sleep(Duration::from_secs(5)).await;
    let job = c.jobs.get(Some("default"), "short").await.unwrap();
    assert!(job.metadata.deletion_timestamp.is_some(), "deleted after its TTL");
    let finalizers = job.metadata.finalizers.unwrap_or_default();
    assert!(
        finalizers.contains(&"foregroundDeletion".to_string()),
        "{finalizers:?}"
    );
    c.clock.sleep(Duration::from_secs(600)).await;
    assert!(!c.deleted("kept").await, "no TTL: kept");
    assert!(!c.deleted("running").await, "not finished: kept");
    stop_tasks(c.tasks).await;
}

#[tokio::test(start_paused = true)]
async fn a_ttl_raised_before_expiry_is_respected() {
    let c = Cluster::start().await;
    c.create("j", Some(10)).await;
    c.finish("j").await;
    c.clock.sleep(Duration::from_secs(3)).await;
    c.jobs
        .patch(
            Some("default"),
            "j",
            PatchType::Merge,
            json!({"spec": {"ttlSecondsAfterFinished": 100}}),
        )
        .await
        .unwrap();
    c.clock.sleep(Duration::from_secs(30)).await;
    assert!(!c.deleted("j").await, "the new TTL counts");
    c.clock.sleep(Duration::from_secs(80)).await;
    assert!(c.deleted("j").await);
    stop_tasks(c.tasks).await;
}
