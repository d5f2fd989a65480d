//! The Job controller running for real against an in-process API server on a temporary store, on
//! paused tokio time. There is no kubelet: the tests play it, writing pod phases and container exit
//! states through the status subresource.

use std::collections::BTreeSet;
use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use serde_json::json;
use store::Clock;

use crate::job::controller::JobController;
use crate::job::tracking::JOB_TRACKING_FINALIZER;
use crate::runtime::events::Recorder;
use crate::runtime::{Informer, ListParams, PatchType, Typed};
use crate::testing::{poll, stop_tasks, test_client, test_clock};

struct Cluster {
    clock: Clock,
    jobs: Typed<Job>,
    pods: Typed<Pod>,
    events: Typed<Event>,
    tasks: Tasks,
}

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            jobs: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            events: Typed::new(client),
            clock,
            tasks: Tasks::new(),
        }
    }

    /// Starts the informers and the controller (2 workers).
    fn start(&mut self) {
        let client = self.jobs.client().clone();
        let jobs = Informer::<Job>::new(client.clone(), self.clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), self.clock.clone(), None);
        let recorder = Recorder::new(client.clone(), self.clock.clone(), "job-controller", None);
        let controller = JobController::new(client, self.clock.clone(), recorder, &jobs, &pods);
        self.tasks.push(jobs.run(self.tasks.shutdown()));
        self.tasks.push(pods.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(2, stop));
    }

    /// Stops the controller and its informers (the API keeps running).
    async fn stop_controller(&mut self) {
        let tasks = std::mem::replace(&mut self.tasks, Tasks::new());
        stop_tasks(tasks).await;
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// Polls (on the clock) until `check` returns `Some`, for up to 10 simulated minutes.
    async fn eventually<T>(&self, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
        poll(
            &self.clock,
            what,
            Duration::from_secs(600),
            Duration::from_millis(50),
            check,
        )
        .await
    }

    async fn all_pods(&self) -> Vec<Pod> {
        self.pods
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap()
    }

    /// The pods not yet finished (as a kubelet would see them: not terminal, not deleting).
    async fn running_pods(&self) -> Vec<Pod> {
        let pods = self.all_pods().await;
        pods.into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter(|p| {
                let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
                !matches!(phase, Some("Succeeded" | "Failed"))
            })
            .collect()
    }

    async fn wait_for_running(&self, n: usize) -> Vec<Pod> {
        self.eventually(&format!("{n} running pods"), || async {
            let pods = self.running_pods().await;
            (pods.len() == n).then_some(pods)
        })
        .await
    }

    async fn job(&self, name: &str) -> Job {
        self.jobs.get(Some("default"), name).await.unwrap()
    }

    async fn wait_for_condition(&self, name: &str, type_: &str) -> Job {
        self.eventually(&format!("{type_} on {name}"), || async {
            let job = self.job(name).await;
            let has = job
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == type_ && c.status == "True"));
            has.then_some(job)
        })
        .await
    }

    /// Plays the kubelet: the pod's container exited with `exit_code` (0: Succeeded, else Failed).
    async fn finish(&self, pod: &Pod, exit_code: i32) {
        let now = jiff::Timestamp::try_from(self.clock.now()).unwrap();
        let now = now.round(jiff::Unit::Second).unwrap().to_string();
        let phase = if exit_code == 0 { "Succeeded" } else { "Failed" };
        let patch = json!({"status": {"phase": phase, "containerStatuses": [{
            "name": "main", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"terminated": {"exitCode": exit_code, "finishedAt": now}},
        }]}});
        let name = pod.metadata.name.as_deref().unwrap();
        self.pods
            .patch_status(Some("default"), name, PatchType::Merge, patch)
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
}

fn job(name: &str, spec: serde_json::Value) -> Job {
    let mut spec = spec;
    spec["template"] = json!({
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
    });
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }))
    .unwrap()
}

fn has_finalizer(pod: &Pod) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == JOB_TRACKING_FINALIZER)
}

fn created(pod: &Pod) -> jiff::Timestamp {
    pod.metadata.creation_timestamp.as_ref().unwrap().0
}

#[tokio::test(start_paused = true)]
async fn a_job_runs_parallelism_pods_until_completions_succeed() {
    let mut c = Cluster::new().await;
    c.start();
    c.jobs
        .create(
            Some("default"),
            &job("pi", json!({"completions": 3, "parallelism": 2})),
        )
        .await
        .unwrap();
    let first = c.wait_for_running(2).await;
    assert!(
        first.iter().all(has_finalizer),
        "every pod carries the tracking finalizer"
    );
    assert!(
        first
            .iter()
            .all(|p| p.metadata.generate_name.as_deref() == Some("pi-"))
    );
    for pod in &first {
        c.finish(pod, 0).await;
    }
    let last = c.wait_for_running(1).await;
    c.finish(&last[0], 0).await;

    let done = c.wait_for_condition("pi", "Complete").await;
    let status = done.status.unwrap();
    assert_eq!(status.succeeded, Some(3));
    assert_eq!(
        (status.active, status.failed, status.ready, status.terminating),
        (None, None, Some(0), Some(0))
    );
    let types: Vec<(String, Option<String>)> = status
        .conditions
        .unwrap()
        .into_iter()
        .map(|c| (c.type_, c.reason))
        .collect();
    assert_eq!(
        types,
        [
            (
                "SuccessCriteriaMet".to_string(),
                Some("CompletionsReached".to_string())
            ),
            ("Complete".to_string(), Some("CompletionsReached".to_string())),
        ]
    );
    assert!(status.completion_time.is_some() && status.start_time.is_some());
    c.eventually("every finalizer removed", || async {
        let pods = c.all_pods().await;
        (pods.len() == 3 && !pods.iter().any(has_finalizer)).then_some(())
    })
    .await;
    let created = c.event_messages("SuccessfulCreate").await;
    assert_eq!(created.len(), 3, "{created:?}");
    assert!(created.iter().all(|m| m.starts_with("Created pod: pi-")));
    assert_eq!(c.event_messages("Completed").await, ["Job completed"]);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn failed_pods_are_replaced_after_the_backoff_until_the_limit() {
    let mut c = Cluster::new().await;
    c.start();
    c.jobs
        .create(Some("default"), &job("flaky", json!({"backoffLimit": 2})))
        .await
        .unwrap();
    let mut tried: Vec<Pod> = Vec::new();
    for _ in 0..3 {
        let pod = c.wait_for_running(1).await.remove(0);
        c.finish(&pod, 1).await;
        tried.push(pod);
    }
    let failed = c.wait_for_condition("flaky", "Failed").await;
    let status = failed.status.unwrap();
    assert_eq!(status.failed, Some(3));
    let cond = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Failed")
        .unwrap();
    assert_eq!(cond.reason.as_deref(), Some("BackoffLimitExceeded"));
    assert_eq!(c.all_pods().await.len(), 3, "no pod after the limit");
    // Replacements waited 10 s, then 20 s after the previous failure (here: right after its creation).
    let gaps: Vec<f64> = tried
        .windows(2)
        .map(|w| created(&w[1]).duration_since(created(&w[0])).as_secs_f64())
        .collect();
    assert!((10.0..13.0).contains(&gaps[0]), "{gaps:?}");
    assert!((20.0..23.0).contains(&gaps[1]), "{gaps:?}");
    assert_eq!(
        c.event_messages("BackoffLimitExceeded").await,
        ["Job has reached the specified backoff limit"]
    );
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn no_completion_is_lost_or_counted_twice_across_a_controller_restart() {
    let mut c = Cluster::new().await;
    c.start();
    c.jobs
        .create(
            Some("default"),
            &job("pi", json!({"completions": 4, "parallelism": 2})),
        )
        .await
        .unwrap();
    let first = c.wait_for_running(2).await;
    for pod in &first {
        c.finish(pod, 0).await;
    }
    // The controller counts them, then stops while the next two pods run.
    c.wait_for_running(2).await;
    c.eventually("2 succeeded", || async {
        (c.job("pi").await.status?.succeeded == Some(2)).then_some(())
    })
    .await;
    c.stop_controller().await;
    // Finished while no controller watched.
    for pod in c.running_pods().await {
        c.finish(&pod, 0).await;
    }
    c.clock.sleep(Duration::from_secs(30)).await;
    c.start();
    let done = c.wait_for_condition("pi", "Complete").await;
    assert_eq!(done.status.unwrap().succeeded, Some(4));
    assert_eq!(c.all_pods().await.len(), 4, "no extra pod");
    c.clock.sleep(Duration::from_secs(30)).await;
    assert_eq!(
        c.job("pi").await.status.unwrap().succeeded,
        Some(4),
        "still 4 later"
    );
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn suspending_deletes_the_pods_without_counting_them_and_resuming_restarts() {
    let mut c = Cluster::new().await;
    c.start();
    c.jobs
        .create(
            Some("default"),
            &job("s", json!({"completions": 2, "parallelism": 2})),
        )
        .await
        .unwrap();
    c.wait_for_running(2).await;
    c.jobs
        .patch(
            Some("default"),
            "s",
            PatchType::Merge,
            json!({"spec": {"suspend": true}}),
        )
        .await
        .unwrap();
    let suspended = c.wait_for_condition("s", "Suspended").await;
    c.eventually("no pod running", || async {
        c.running_pods().await.is_empty().then_some(())
    })
    .await;
    let status = suspended.status.unwrap();
    assert_eq!(
        status.failed, None,
        "deleted pods of a suspended Job are no failures"
    );
    let cond = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Suspended")
        .unwrap();
    assert_eq!(cond.reason.as_deref(), Some("JobSuspended"));
    assert_eq!(c.event_messages("Suspended").await, ["Job suspended"]);

    let before = c.job("s").await.status.unwrap().start_time.unwrap().0;
    c.clock.sleep(Duration::from_secs(5)).await;
    c.jobs
        .patch(
            Some("default"),
            "s",
            PatchType::Merge,
            json!({"spec": {"suspend": false}}),
        )
        .await
        .unwrap();
    c.wait_for_running(2).await;
    let resumed = c.job("s").await.status.unwrap();
    assert!(resumed.start_time.unwrap().0 > before, "startTime restarts");
    assert_eq!(c.event_messages("Resumed").await, ["Job resumed"]);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_indexed_job_runs_each_index_once_and_reports_completed_indexes() {
    let mut c = Cluster::new().await;
    c.start();
    let spec = json!({"completions": 3, "parallelism": 3, "completionMode": "Indexed"});
    c.jobs.create(Some("default"), &job("ix", spec)).await.unwrap();
    let pods = c.wait_for_running(3).await;
    let index = |p: &Pod| {
        p.metadata.annotations.as_ref().unwrap()["batch.kubernetes.io/job-completion-index"].clone()
    };
    let indexes: BTreeSet<String> = pods.iter().map(index).collect();
    assert_eq!(indexes, BTreeSet::from(["0".into(), "1".into(), "2".into()]));
    let by_index = |ix: &str| pods.iter().find(|p| index(p) == ix).unwrap().clone();
    c.finish(&by_index("2"), 0).await;
    c.eventually("completedIndexes 2", || async {
        (c.job("ix").await.status?.completed_indexes.as_deref() == Some("2")).then_some(())
    })
    .await;
    // Index 0 fails once and is retried under the same index.
    c.finish(&by_index("0"), 1).await;
    let retry = c
        .eventually("a new pod for index 0", || async {
            let pods = c.running_pods().await;
            pods.into_iter()
                .find(|p| index(p) == "0" && p.metadata.name != by_index("0").metadata.name)
        })
        .await;
    assert!(retry.metadata.name.as_deref().unwrap().starts_with("ix-0-"));
    c.finish(&retry, 0).await;
    c.finish(&by_index("1"), 0).await;
    let done = c.wait_for_condition("ix", "Complete").await;
    let status = done.status.unwrap();
    assert_eq!(status.completed_indexes.as_deref(), Some("0-2"));
    assert_eq!((status.succeeded, status.failed), (Some(3), Some(1)));
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_deleted_job_leaves_no_finalizer_behind() {
    let mut c = Cluster::new().await;
    c.start();
    c.jobs
        .create(Some("default"), &job("gone", json!({"parallelism": 2})))
        .await
        .unwrap();
    c.wait_for_running(2).await;
    c.jobs.delete(Some("default"), "gone").await.unwrap();
    c.eventually("finalizers removed from the orphaned pods", || async {
        let pods = c.all_pods().await;
        (!pods.is_empty() && !pods.iter().any(has_finalizer)).then_some(())
    })
    .await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_fail_job_rule_fails_the_job_once_the_other_pods_are_gone() {
    let mut c = Cluster::new().await;
    c.start();
    let spec = json!({"completions": 2, "parallelism": 2, "podFailurePolicy": {"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}});
    c.jobs.create(Some("default"), &job("pfp", spec)).await.unwrap();
    let pods = c.wait_for_running(2).await;
    c.finish(&pods[0], 42).await;

    // The interim condition comes first; the other pod is deleted but still terminating.
    let target = c.wait_for_condition("pfp", "FailureTarget").await;
    let status = target.status.unwrap();
    let failed_yet = status.conditions.iter().flatten().any(|c| c.type_ == "Failed");
    assert!(!failed_yet, "Failed waits for the terminating pod");
    assert_eq!(status.terminating, Some(1));
    let message = format!(
        "Container main for pod default/{} failed with exit code 42 matching FailJob rule at index 0",
        pods[0].metadata.name.as_deref().unwrap()
    );
    let cond = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "FailureTarget")
        .unwrap();
    assert_eq!(cond.reason.as_deref(), Some("PodFailurePolicy"));
    assert_eq!(cond.message.as_deref(), Some(message.as_str()));

    // Play the kubelet: a terminating pod goes away (an unscheduled one is gone at once).
    let pods_api = crate::runtime::ResourceRef::of::<Pod>();
    let failed = c
        .eventually("Failed", || async {
            for pod in c.all_pods().await {
                if pod.metadata.deletion_timestamp.is_some() {
                    let name = pod.metadata.name.as_deref().unwrap();
                    let grace = crate::runtime::DeleteParams::grace(0);
                    let _ = c
                        .jobs
                        .client()
                        .delete(&pods_api, Some("default"), name, &grace)
                        .await;
                }
            }
            let job = c.job("pfp").await;
            let failed = job
                .status
                .as_ref()?
                .conditions
                .as_ref()?
                .iter()
                .any(|c| c.type_ == "Failed");
            failed.then_some(job)
        })
        .await;
    let status = failed.status.unwrap();
    assert_eq!(
        status.failed,
        Some(2),
        "the deleted active pod counts as failed too"
    );
    assert_eq!(status.terminating, Some(0));
    let cond = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Failed")
        .unwrap();
    assert_eq!(cond.message.as_deref(), Some(message.as_str()));
    assert_eq!(c.event_messages("PodFailurePolicy").await, [message]);
    c.stop().await;
}
