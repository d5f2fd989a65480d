//! Chained builders for CronJobs and Jobs.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{
    CronJob, CronJobSpec, CronJobStatus, Job, JobCondition, JobSpec, JobStatus, JobTemplateSpec,
};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use crate::runtime::new_controller_ref;

/// A timestamp from RFC 3339.
pub fn ts(s: &str) -> Timestamp {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// A CronJob `cj` in `default`, uid `cj-uid`, created at `created`, with `schedule`.
pub fn cronjob(schedule: &str, created: &str) -> CronJob {
    CronJob {
        metadata: ObjectMeta {
            name: Some("cj".into()),
            namespace: Some("default".into()),
            uid: Some("cj-uid".into()),
            creation_timestamp: Some(Time(ts(created))),
            ..Default::default()
        },
        spec: Some(CronJobSpec {
            schedule: schedule.into(),
            concurrency_policy: Some("Allow".into()),
            job_template: JobTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some([("app".to_string(), "report".to_string())].into()),
                    ..Default::default()
                }),
                spec: Some(JobSpec::default()),
            },
            ..Default::default()
        }),
        status: Some(CronJobStatus::default()),
    }
}

/// Builder methods on a CronJob.
pub trait CronJobExt {
    /// `status.lastScheduleTime`.
    fn last_scheduled(self, at: &str) -> Self;
    /// `spec.concurrencyPolicy`.
    fn policy(self, policy: &str) -> Self;
    /// `spec.startingDeadlineSeconds`.
    fn deadline(self, seconds: i64) -> Self;
    /// `spec.timeZone`.
    fn zone(self, tz: &str) -> Self;
    /// `spec.suspend: true`.
    fn suspended(self) -> Self;
    /// `status.active` lists `job`.
    fn with_active(self, job: &Job) -> Self;
    /// History limits.
    fn limits(self, successful: Option<i32>, failed: Option<i32>) -> Self;
}

impl CronJobExt for CronJob {
    fn last_scheduled(mut self, at: &str) -> Self {
        self.status
            .get_or_insert_with(Default::default)
            .last_schedule_time = Some(Time(ts(at)));
        self
    }

    fn policy(mut self, policy: &str) -> Self {
        self.spec.as_mut().unwrap().concurrency_policy = Some(policy.into());
        self
    }

    fn deadline(mut self, seconds: i64) -> Self {
        self.spec.as_mut().unwrap().starting_deadline_seconds = Some(seconds);
        self
    }

    fn zone(mut self, tz: &str) -> Self {
        self.spec.as_mut().unwrap().time_zone = Some(tz.into());
        self
    }

    fn suspended(mut self) -> Self {
        self.spec.as_mut().unwrap().suspend = Some(true);
        self
    }

    fn with_active(mut self, job: &Job) -> Self {
        let status = self.status.get_or_insert_with(Default::default);
        status.active.get_or_insert_with(Vec::new).push(ObjectReference {
            name: job.metadata.name.clone(),
            namespace: job.metadata.namespace.clone(),
            uid: job.metadata.uid.clone(),
            ..Default::default()
        });
        self
    }

    fn limits(mut self, successful: Option<i32>, failed: Option<i32>) -> Self {
        let spec = self.spec.as_mut().unwrap();
        spec.successful_jobs_history_limit = successful;
        spec.failed_jobs_history_limit = failed;
        self
    }
}

/// A Job `name` controlled by `cj`, uid `<name>-uid`.
pub fn job_of(cj: &CronJob, name: &str) -> Job {
    Job {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("{name}-uid")),
            owner_references: Some(vec![new_controller_ref(&cj.metadata, "batch/v1", "CronJob")]),
            ..Default::default()
        },
        spec: Some(JobSpec::default()),
        status: Some(JobStatus::default()),
    }
}

/// Builder methods on a Job.
pub trait JobExt {
    /// `status.startTime`.
    fn started(self, at: &str) -> Self;
    /// A True `Complete` condition and `completionTime`.
    fn completed(self, at: &str) -> Self;
    /// A True `Failed` condition.
    fn failed(self) -> Self;
    /// Shared.
    fn arc(self) -> Arc<Job>;
}

impl JobExt for Job {
    fn started(mut self, at: &str) -> Self {
        self.status.get_or_insert_with(Default::default).start_time = Some(Time(ts(at)));
        self
    }

    fn completed(mut self, at: &str) -> Self {
        let status = self.status.get_or_insert_with(Default::default);
        status.completion_time = Some(Time(ts(at)));
        status.conditions.get_or_insert_with(Vec::new).push(JobCondition {
            type_: "Complete".into(),
            status: "True".into(),
            ..Default::default()
        });
        self
    }

    fn failed(mut self) -> Self {
        let status = self.status.get_or_insert_with(Default::default);
        status.conditions.get_or_insert_with(Vec::new).push(JobCondition {
            type_: "Failed".into(),
            status: "True".into(),
            ..Default::default()
        });
        self
    }

    fn arc(self) -> Arc<Job> {
        Arc::new(self)
    }
}
