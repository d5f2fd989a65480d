//! Chained builders of Jobs and their pods for the table and property tests.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{Job, PodFailurePolicy};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use crate::job::indexed::COMPLETION_INDEX_ANNOTATION;
use crate::job::tracking::JOB_TRACKING_FINALIZER;

/// A fixed `now`: 2026-01-01T00:00:00Z.
pub fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

/// `t0` plus `s` seconds.
pub fn at(s: i64) -> Timestamp {
    t0() + jiff::SignedDuration::from_secs(s)
}

/// A Job `pi` in `default` (uid `job-uid`), as the API server stores it: defaulted, with a
/// generated selector and template labels.
pub struct JobFixture(pub Job);

impl JobFixture {
    /// completions / parallelism as given (None: unset).
    pub fn new(completions: Option<i32>, parallelism: i32) -> Self {
        let job = json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default", "uid": "job-uid", "generation": 1},
            "spec": {
                "completions": completions, "parallelism": parallelism, "backoffLimit": 6,
                "completionMode": "NonIndexed", "suspend": false, "podReplacementPolicy": "TerminatingOrFailed",
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "job-uid"}},
                "template": {
                    "metadata": {"labels": {"batch.kubernetes.io/controller-uid": "job-uid",
                                            "batch.kubernetes.io/job-name": "pi"}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]},
                },
            },
        });
        JobFixture(serde_json::from_value(job).unwrap())
    }

    fn spec(&mut self) -> &mut k8s_openapi::api::batch::v1::JobSpec {
        self.0.spec.get_or_insert_with(Default::default)
    }

    /// `completionMode: Indexed`.
    pub fn indexed(mut self) -> Self {
        self.spec().completion_mode = Some("Indexed".into());
        self
    }

    /// `backoffLimit`.
    pub fn backoff_limit(mut self, n: i32) -> Self {
        self.spec().backoff_limit = Some(n);
        self
    }

    /// `backoffLimitPerIndex` (and `backoffLimit` MaxInt32, as defaulted).
    pub fn backoff_limit_per_index(mut self, n: i32) -> Self {
        self.spec().backoff_limit_per_index = Some(n);
        self.spec().backoff_limit = Some(i32::MAX);
        self
    }

    /// `spec.suspend`.
    pub fn suspended(mut self, suspend: bool) -> Self {
        self.spec().suspend = Some(suspend);
        self
    }

    /// `activeDeadlineSeconds`.
    pub fn deadline(mut self, seconds: i64) -> Self {
        self.spec().active_deadline_seconds = Some(seconds);
        self
    }

    /// A pod failure policy from JSON (and podReplacementPolicy Failed, as defaulted).
    pub fn pod_failure_policy(mut self, policy: serde_json::Value) -> Self {
        let policy: PodFailurePolicy = serde_json::from_value(policy).unwrap();
        self.spec().pod_failure_policy = Some(policy);
        self.spec().pod_replacement_policy = Some("Failed".into());
        self
    }

    /// `restartPolicy` of the template.
    pub fn restart_policy(mut self, policy: &str) -> Self {
        if let Some(s) = self.spec().template.spec.as_mut() {
            s.restart_policy = Some(policy.into());
        }
        self
    }

    /// The status, from JSON.
    pub fn status(mut self, status: serde_json::Value) -> Self {
        self.0.status = Some(serde_json::from_value(status).unwrap());
        self
    }

    /// Started at `t`.
    pub fn started(mut self, t: Timestamp) -> Self {
        self.0.status.get_or_insert_with(Default::default).start_time = Some(Time(t));
        self
    }

    /// The Job.
    pub fn build(self) -> Job {
        self.0
    }
}

/// A pod of the Job `pi` (controlled by it, with the tracking finalizer), created at `t0`, Running.
pub struct PodFixture(pub Pod);

impl PodFixture {
    /// A running pod `name` (uid `uid-<name>`).
    pub fn new(name: &str) -> Self {
        let pod = json!({
            "metadata": {
                "name": name, "namespace": "default", "uid": format!("uid-{name}"),
                "creationTimestamp": t0().to_string(), "resourceVersion": "1",
                "labels": {"batch.kubernetes.io/controller-uid": "job-uid"},
                "finalizers": [JOB_TRACKING_FINALIZER],
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": "job-uid",
                                     "controller": true, "blockOwnerDeletion": true}],
            },
            "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "busybox"}]},
            "status": {"phase": "Running"},
        });
        PodFixture(serde_json::from_value(pod).unwrap())
    }

    /// The completion index annotation.
    pub fn index(mut self, ix: i64) -> Self {
        self.0
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(COMPLETION_INDEX_ANNOTATION.into(), ix.to_string());
        self
    }

    /// Another annotation.
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.0
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(key.into(), value.into());
        self
    }

    /// Ready (condition Ready=True).
    pub fn ready(mut self) -> Self {
        let status = self.0.status.get_or_insert_with(Default::default);
        status.conditions = Some(vec![
            serde_json::from_value(json!({"type": "Ready", "status": "True"})).unwrap(),
        ]);
        self
    }

    /// Pending (not yet running).
    pub fn pending(mut self) -> Self {
        self.0.status.get_or_insert_with(Default::default).phase = Some("Pending".into());
        self
    }

    /// Succeeded at `t` (its container exited 0).
    pub fn succeeded(self, t: Timestamp) -> Self {
        self.terminated("Succeeded", 0, t)
    }

    /// Failed at `t` with `exit_code`.
    pub fn failed(self, exit_code: i32, t: Timestamp) -> Self {
        self.terminated("Failed", exit_code, t)
    }

    fn terminated(mut self, phase: &str, exit_code: i32, t: Timestamp) -> Self {
        let status = json!({
            "phase": phase,
            "containerStatuses": [{"name": "main", "image": "busybox", "imageID": "", "ready": false,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": exit_code, "finishedAt": t.to_string()}}}],
        });
        self.0.status = Some(serde_json::from_value(status).unwrap());
        self
    }

    /// Being deleted since `t`.
    pub fn deleting(mut self, t: Timestamp) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(t));
        self
    }

    /// Without the tracking finalizer (already counted).
    pub fn counted(mut self) -> Self {
        self.0.metadata.finalizers = None;
        self
    }

    /// The pod.
    pub fn build(self) -> Pod {
        self.0
    }

    /// The pod, shared as a cache hands it out.
    pub fn arc(self) -> Arc<Pod> {
        Arc::new(self.0)
    }
}
