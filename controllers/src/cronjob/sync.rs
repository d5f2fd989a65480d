//! One CronJob sync: the thin async shell around [`super::plan`] and [`super::schedule`].
//!
//! Upstream: `pkg/controller/cronjob/cronjob_controllerv2.go` (`sync`, `getJobsToBeReconciled`,
//! `cleanupFinishedJobs`, `syncCronJob`, `deleteJob`) and `injection.go` (the Job calls:
//! deletes are Background).
//!
//! ```text
//! sync_cronjob(key)
//!   CronJob not in cache         → Done
//!   jobs                         = the namespace's Jobs whose controller reference names it
//!   now                          = the clock, once
//!   history cleanup              → delete the oldest finished Jobs beyond the limits
//!   observe the Jobs             → finished ones leave status.active (SawCompletedJob),
//!                                  lastSuccessfulTime; an unlisted running Job: re-read the
//!                                  CronJob, else UnexpectedJob; an active Job gone: GET, MissingJob
//!   decide                       → Deleting | UnknownTimeZone | Suspended | Broken | Wait | Start
//!   Start                        → (Replace: delete the active Jobs) → create the Job
//!                                  (AlreadyExists: adopt it into active if it is ours)
//!   status changed               → PUT status
//!   RequeueAfter(next scheduled time − now + 100 ms) or Done
//! ```
//!
//! Simplified against upstream: the Jobs are read from the informer's namespace index; when an
//! unlisted running Job turns out to be listed by the live CronJob, the sync goes on from that
//! fresh copy (upstream goes on from it too, but writes the older copy's status); no metrics.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{CronJob, Job};

use super::controller::NAME;
use super::decisions;
use super::plan::{self, Decision, Note, Observed};
use crate::runtime::client::{ClientError, DeleteParams, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{
    Action, ReconcileError, decision, get_controller_of, is_controlled_by, name_of, split_key,
};
use crate::runtime::{Client, clock_now};
use store::Clock;

/// Everything one sync reads and writes.
pub struct CronJobSync {
    /// CronJob calls (the live GET, status writes).
    cronjobs_api: Typed<CronJob>,
    /// Job calls (GET, create, delete).
    jobs_api: Typed<Job>,
    cronjobs: Store<CronJob>,
    jobs: Store<Job>,
    /// Events on the CronJob.
    recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    clock: Clock,
}

impl CronJobSync {
    /// A syncer reading the given caches and writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        cronjobs: Store<CronJob>,
        jobs: Store<Job>,
    ) -> Self {
        CronJobSync {
            cronjobs_api: Typed::new(client.clone()),
            jobs_api: Typed::new(client),
            cronjobs,
            jobs,
            recorder,
            clock,
        }
    }

    /// Upstream `sync`: reconciles the CronJob named by `key` with its Jobs, starts the one due
    /// now, and says when to look again.
    pub async fn sync_cronjob(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(cj) = self.cronjobs.get(ns, name) else {
            return Ok(Action::Done);
        };
        let jobs = self.jobs_to_be_reconciled(&cj);
        let now = clock_now(&self.clock)?;
        let mut working = (*cj).clone();
        let cleaned = self.cleanup_finished_jobs(&mut working, &jobs).await;
        let (requeue, synced) = self.sync_cron_job(&mut working, &jobs, now).await?;
        if cleaned || synced {
            self.cronjobs_api.update_status(&working).await?;
        }
        Ok(match requeue {
            Some(after) => Action::RequeueAfter(after),
            None => Action::Done,
        })
    }

    /// Upstream `getJobsToBeReconciled`: the namespace's Jobs whose controller reference names
    /// this CronJob (by name, as upstream: labels may have changed since).
    fn jobs_to_be_reconciled(&self, cj: &CronJob) -> Vec<Arc<Job>> {
        let ns = cj.metadata.namespace.as_deref().unwrap_or("");
        let name = name_of(&cj.metadata);
        self.jobs
            .by_index(NAMESPACE_INDEX, ns)
            .into_iter()
            .filter(|j| get_controller_of(&j.metadata).is_some_and(|r| r.kind == "CronJob" && r.name == name))
            .collect()
    }

    /// Upstream `cleanupFinishedJobs`: deletes the finished Jobs beyond the history limits.
    /// Returns whether the status changed.
    async fn cleanup_finished_jobs(&self, cj: &mut CronJob, jobs: &[Arc<Job>]) -> bool {
        let mut changed = false;
        let to_delete = plan::jobs_to_clean_up(cj, jobs);
        decision::record(&self.clock, NAME, cj, || decisions::cleanup(cj, jobs, &to_delete));
        for job in to_delete {
            changed |= self.delete_job(cj, &job).await;
        }
        changed
    }

    /// Upstream `deleteJob`: deletes a Job (Background), takes it out of `status.active`, and
    /// says so in an event. Returns whether it was deleted.
    async fn delete_job(&self, cj: &mut CronJob, job: &Job) -> bool {
        let params = DeleteParams::propagation("Background");
        let name = name_of(&job.metadata);
        let deleted = self
            .jobs_api
            .client()
            .delete(
                self.jobs_api.resource(),
                job.metadata.namespace.as_deref(),
                name,
                &params,
            )
            .await;
        match deleted {
            Err(e) => {
                self.event(
                    cj,
                    EventType::Warning,
                    "FailedDelete",
                    &format!("Deleted job: {}", e.message),
                );
                false
            }
            Ok(()) => {
                plan::delete_from_active_list(cj, job.metadata.uid.as_deref().unwrap_or(""));
                self.event(
                    cj,
                    EventType::Normal,
                    "SuccessfulDelete",
                    &format!("Deleted job {name}"),
                );
                true
            }
        }
    }

    /// Upstream `syncCronJob`: returns the requeue delay and whether the status changed.
    async fn sync_cron_job(
        &self,
        cj: &mut CronJob,
        jobs: &[Arc<Job>],
        now: Timestamp,
    ) -> Result<(Option<std::time::Duration>, bool), ReconcileError> {
        let mut observed = plan::observe_jobs(cj, jobs);
        if !observed.unlisted.is_empty() {
            observed = self.recheck_unlisted(cj, jobs, observed).await?;
        }
        let mut update_status = observed.update_status;
        self.notes(cj, &observed.notes);
        for reference in &observed.missing {
            let ns = reference.namespace.as_deref();
            let name = reference.name.as_deref().unwrap_or("");
            match self.jobs_api.get(ns, name).await {
                Err(e) if e.is_not_found() => {
                    self.event(
                        cj,
                        EventType::Normal,
                        "MissingJob",
                        &format!("Active job went missing: {name}"),
                    );
                    plan::delete_from_active_list(cj, reference.uid.as_deref().unwrap_or(""));
                    update_status = true;
                }
                Err(e) => return Err(e.into()),
                Ok(_) => {}
            }
        }
        let decided = plan::decide(cj, now);
        decision::record(&self.clock, NAME, cj, || decisions::of_plan(cj, &decided, now));
        self.notes(cj, &decided.notes);
        let (scheduled, replace, requeue) = match decided.decision {
            Decision::Deleting | Decision::UnknownTimeZone | Decision::Suspended | Decision::Broken => {
                return Ok((None, update_status));
            }
            Decision::Wait(after) => return Ok((after, update_status)),
            Decision::Start {
                scheduled,
                replace,
                requeue,
            } => (scheduled, replace, requeue),
        };
        if replace {
            update_status |= self.replace_active(cj).await?;
        }
        let request = plan::get_job_from_template(cj, scheduled);
        let ns = cj.metadata.namespace.clone();
        let created = match self.jobs_api.create(ns.as_deref(), &request).await {
            Ok(job) => {
                let message = format!("Created job {}", name_of(&job.metadata));
                self.event(cj, EventType::Normal, "SuccessfulCreate", &message);
                job
            }
            Err(e) if e.is_already_exists() => {
                let job = self
                    .jobs_api
                    .get(ns.as_deref(), name_of(&request.metadata))
                    .await?;
                let ours = is_controlled_by(&job.metadata, cj.metadata.uid.as_deref().unwrap_or(""));
                let uid = job.metadata.uid.as_deref().unwrap_or("");
                if !ours || plan::in_active_list(cj.status.as_ref(), uid) {
                    return Ok((None, update_status));
                }
                tracing::info!(
                    job = name_of(&job.metadata),
                    "job already exists; adding it to the active list"
                );
                job
            }
            Err(e) => {
                let message = format!("Error creating job: {}", e.message);
                self.event(cj, EventType::Warning, "FailedCreate", &message);
                return Err(e.into());
            }
        };
        plan::record_start(cj, &created, scheduled);
        Ok((requeue, true))
    }

    /// An unfinished Job the status does not list may have been started by this controller a
    /// moment ago, with the status write not yet in the cache: re-read the CronJob. When the
    /// live copy lists one of them, go on from the live copy; the rest are `UnexpectedJob`.
    async fn recheck_unlisted(
        &self,
        cj: &mut CronJob,
        jobs: &[Arc<Job>],
        observed: Observed,
    ) -> Result<Observed, ClientError> {
        let ns = cj.metadata.namespace.clone();
        let live = self
            .cronjobs_api
            .get(ns.as_deref(), name_of(&cj.metadata))
            .await?;
        let listed = |j: &Arc<Job>| {
            plan::in_active_list(live.status.as_ref(), j.metadata.uid.as_deref().unwrap_or(""))
        };
        let observed = if observed.unlisted.iter().any(listed) {
            *cj = live.clone();
            plan::observe_jobs(cj, jobs)
        } else {
            observed
        };
        for job in &observed.unlisted {
            if !listed(job) {
                let message = format!(
                    "Saw a job that the controller did not create or forgot: {}",
                    name_of(&job.metadata)
                );
                self.event(cj, EventType::Warning, "UnexpectedJob", &message);
            }
        }
        Ok(observed)
    }

    /// `concurrencyPolicy: Replace`: deletes every active Job before the new one starts.
    async fn replace_active(&self, cj: &mut CronJob) -> Result<bool, ReconcileError> {
        let active = cj
            .status
            .as_ref()
            .and_then(|s| s.active.clone())
            .unwrap_or_default();
        let mut changed = false;
        for reference in active {
            let ns = reference.namespace.as_deref();
            let name = reference.name.as_deref().unwrap_or("");
            let job = match self.jobs_api.get(ns, name).await {
                Ok(job) => job,
                Err(e) => {
                    self.event(
                        cj,
                        EventType::Warning,
                        "FailedGet",
                        &format!("Get job: {}", e.message),
                    );
                    return Err(e.into());
                }
            };
            if !self.delete_job(cj, &job).await {
                let ns = ns.unwrap_or("");
                return Err(ReconcileError::retryable(format!(
                    "could not replace job {ns}/{name}"
                )));
            }
            changed = true;
        }
        Ok(changed)
    }

    fn notes(&self, cj: &CronJob, notes: &[Note]) {
        for note in notes {
            let type_ = if note.warning {
                EventType::Warning
            } else {
                EventType::Normal
            };
            self.event(cj, type_, note.reason, &note.message);
        }
    }

    fn event(&self, cj: &CronJob, type_: EventType, reason: &str, message: &str) {
        self.recorder.record(&ObjectRef::of(cj), type_, reason, message);
    }
}
