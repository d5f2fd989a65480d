//! The decisions of one CronJob sync, pure: what the Jobs say about the status, whether a Job
//! is due now, what it looks like, and which finished Jobs the history limits drop.
//!
//! Upstream: `pkg/controller/cronjob/cronjob_controllerv2.go` (`syncCronJob`,
//! `cleanupFinishedJobs`, `removeOldestJobs`, `getFinishedStatus`) and `utils.go`
//! (`getJobFromTemplate2`, `inActiveList`, `inActiveListByName`, `deleteFromActiveList`,
//! `byJobStartTime`, `IsJobFinished`).
//!
//! [`decide`] is `syncCronJob` from the deletion check to the create, as a value:
//!
//! ```text
//! deleting                          → Deleting                     (status only)
//! spec.timeZone does not load       → UnknownTimeZone              (warning, no requeue)
//! suspended                         → Suspended                    (no requeue)
//! schedule does not parse           → Unparseable                  (warning, no requeue)
//! next_schedule_time fails          → Invalid                      (warning, no requeue)
//! nothing due                       → Wait(next)
//! due + startingDeadlineSeconds < now → MissSchedule(next)         (warning)
//! job of that time in active, or lastScheduleTime = it → Wait(next)
//! Forbid and something active       → JobAlreadyActive(next)       (event)
//! otherwise                         → Start { scheduled, replace: Replace policy }
//! ```

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use k8s_openapi::api::batch::v1::{CronJob, CronJobStatus, Job};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::schedule::{
    ScheduleState, get_job_name, next_schedule_time, next_schedule_time_duration, schedule_of,
};
use crate::runtime::{name_of, new_controller_ref};
use apiserver::kinds::batch::cron::load_location;

/// The annotation with the scheduled time of a Job, in the CronJob's zone, RFC 3339 (upstream
/// `batchv1.CronJobScheduledTimestampAnnotation`).
pub const SCHEDULED_TIMESTAMP_ANNOTATION: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// A warning or event the sync records on the CronJob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// `true` for a Warning, `false` for Normal.
    pub warning: bool,
    /// Upstream's reason.
    pub reason: &'static str,
    /// Upstream's message.
    pub message: String,
}

impl Note {
    fn warning(reason: &'static str, message: String) -> Self {
        Note {
            warning: true,
            reason,
            message,
        }
    }

    fn normal(reason: &'static str, message: String) -> Self {
        Note {
            warning: false,
            reason,
            message,
        }
    }
}

// ---------------------------------------------------------------------------
// Jobs → status
// ---------------------------------------------------------------------------

/// Upstream `getFinishedStatus`: the type of the first `Complete` or `Failed` condition with
/// status True.
pub fn finished_condition(job: &Job) -> Option<&str> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        .map(|c| c.type_.as_str())
}

/// Upstream `IsJobFinished`.
pub fn is_job_finished(job: &Job) -> bool {
    finished_condition(job).is_some()
}

/// Upstream `inActiveList`: the status lists a Job of this uid.
pub fn in_active_list(status: Option<&CronJobStatus>, uid: &str) -> bool {
    active_of(status).iter().any(|r| r.uid.as_deref() == Some(uid))
}

/// Upstream `inActiveListByName`.
pub fn in_active_list_by_name(status: Option<&CronJobStatus>, ns: Option<&str>, name: &str) -> bool {
    active_of(status)
        .iter()
        .any(|r| r.name.as_deref() == Some(name) && r.namespace.as_deref() == ns)
}

fn active_of(status: Option<&CronJobStatus>) -> &[ObjectReference] {
    status.and_then(|s| s.active.as_deref()).unwrap_or(&[])
}

/// Upstream `deleteFromActiveList`.
pub fn delete_from_active_list(cj: &mut CronJob, uid: &str) {
    if let Some(active) = cj.status.as_mut().and_then(|s| s.active.as_mut()) {
        active.retain(|r| r.uid.as_deref() != Some(uid));
    }
}

/// What the owned Jobs say, before anything is scheduled (the first loop of `syncCronJob`).
#[derive(Debug, Default)]
pub struct Observed {
    /// `SawCompletedJob` and the like.
    pub notes: Vec<Note>,
    /// The status changed.
    pub update_status: bool,
    /// Unfinished Jobs the status does not list: the sync re-reads the CronJob for them.
    pub unlisted: Vec<Arc<Job>>,
    /// Active references whose Job is not in the cache: the sync confirms with a GET.
    pub missing: Vec<ObjectReference>,
}

/// Upstream `syncCronJob`'s loop over the Jobs, applied to `cj` (a copy): finished Jobs leave
/// `status.active` (`SawCompletedJob`), a succeeded Job moves `lastSuccessfulTime` forward.
pub fn observe_jobs(cj: &mut CronJob, jobs: &[Arc<Job>]) -> Observed {
    let mut out = Observed::default();
    for job in jobs {
        let uid = job.metadata.uid.as_deref().unwrap_or("");
        let found = in_active_list(cj.status.as_ref(), uid);
        let Some(condition) = finished_condition(job) else {
            if !found {
                out.unlisted.push(job.clone());
            }
            continue;
        };
        if found {
            delete_from_active_list(cj, uid);
            let message = format!(
                "Saw completed job: {}, condition: {condition}",
                name_of(&job.metadata)
            );
            out.notes.push(Note::normal("SawCompletedJob", message));
            out.update_status = true;
        }
        if condition == "Complete" {
            let completion = job.status.as_ref().and_then(|s| s.completion_time.clone());
            let status = cj.status.get_or_insert_with(Default::default);
            let later = match (&status.last_successful_time, &completion) {
                (None, _) => true,
                (Some(last), Some(c)) => c.0 > last.0,
                (Some(_), None) => false,
            };
            if later && completion.is_some() {
                status.last_successful_time = completion;
                out.update_status = true;
            }
        }
    }
    let children: Vec<&str> = jobs.iter().filter_map(|j| j.metadata.uid.as_deref()).collect();
    out.missing = active_of(cj.status.as_ref())
        .iter()
        .filter(|r| !children.contains(&r.uid.as_deref().unwrap_or("")))
        .cloned()
        .collect();
    out
}

// ---------------------------------------------------------------------------
// The scheduling decision
// ---------------------------------------------------------------------------

/// What this sync does about starting a Job (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The CronJob is being deleted: status only, no requeue.
    Deleting,
    /// `spec.timeZone` does not load: warning `UnknownTimeZone`, no requeue.
    UnknownTimeZone,
    /// `spec.suspend`: nothing, no requeue (an update wakes it).
    Suspended,
    /// The schedule does not parse (`UnparseableSchedule`), or has no next time
    /// (`InvalidSchedule`): no requeue until the spec changes.
    Broken,
    /// Nothing to start now: look again after the delay (`None`: never).
    Wait(Option<Duration>),
    /// Start the Job of `scheduled`; with `replace`, delete the active ones first. `requeue` is
    /// the delay counted from the status after the start.
    Start {
        /// The scheduled time the Job is for.
        scheduled: Timestamp,
        /// Delete every active Job first (`concurrencyPolicy: Replace`).
        replace: bool,
        /// The requeue after the start.
        requeue: Option<Duration>,
    },
}

/// The decision with the notes that come with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Warnings and events to record.
    pub notes: Vec<Note>,
    /// What to do.
    pub decision: Decision,
}

/// `syncCronJob` after the Jobs are observed: whether and what to start at `now`.
pub fn decide(cj: &CronJob, now: Timestamp) -> Plan {
    let mut notes = Vec::new();
    let plan = |notes, decision| Plan { notes, decision };
    if cj.metadata.deletion_timestamp.is_some() {
        return plan(notes, Decision::Deleting);
    }
    let Some(spec) = cj.spec.as_ref() else {
        return plan(notes, Decision::Broken);
    };
    if let Some(tz) = spec.time_zone.as_deref()
        && let Err(e) = load_location(tz)
    {
        let message = format!("invalid timeZone: {}: {e}", go_quote(tz));
        notes.push(Note::warning("UnknownTimeZone", message));
        return plan(notes, Decision::UnknownTimeZone);
    }
    if spec.suspend == Some(true) {
        return plan(notes, Decision::Suspended);
    }
    let (parsed, unsupported) = schedule_of(cj);
    if unsupported {
        notes.push(Note::warning(
            "UnsupportedSchedule",
            unsupported_message(&spec.schedule),
        ));
    }
    let schedule = match parsed {
        Ok(s) => s,
        Err(e) => {
            let message = format!("unparseable schedule: {} : {e}", go_quote(&spec.schedule));
            notes.push(Note::warning("UnparseableSchedule", message));
            return plan(notes, Decision::Broken);
        }
    };
    let state = ScheduleState::of(cj);
    let wait = next_schedule_time_duration(&state, now, &schedule);
    let scheduled = match next_schedule_time(&state, now, &schedule) {
        Err(e) => {
            let message = format!("invalid schedule: {} : {e}", spec.schedule);
            notes.push(Note::warning("InvalidSchedule", message));
            return plan(notes, Decision::Broken);
        }
        Ok((None, _)) => return plan(notes, Decision::Wait(wait)),
        Ok((Some(t), too_many)) => {
            if too_many {
                notes.push(Note::warning(
                    "TooManyMissedTimes",
                    "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
                        .to_string(),
                ));
            }
            t
        }
    };
    if let Some(sds) = spec.starting_deadline_seconds {
        let deadline = scheduled
            .saturating_add(jiff::SignedDuration::from_secs(sds))
            .unwrap_or(Timestamp::MAX);
        if deadline < now {
            let message = format!("Missed scheduled time to start a job: {}", rfc1123z(scheduled));
            notes.push(Note::warning("MissSchedule", message));
            return plan(notes, Decision::Wait(wait));
        }
    }
    let job_name = get_job_name(name_of(&cj.metadata), scheduled);
    let status = cj.status.as_ref();
    let processed = in_active_list_by_name(status, cj.metadata.namespace.as_deref(), &job_name)
        || status.and_then(|s| s.last_schedule_time.as_ref()).map(|t| t.0) == Some(scheduled);
    if processed {
        return plan(notes, Decision::Wait(wait));
    }
    let policy = spec.concurrency_policy.as_deref().unwrap_or("Allow");
    if policy == "Forbid" && !active_of(status).is_empty() {
        notes.push(Note::normal(
            "JobAlreadyActive",
            "Not starting job because prior execution is running and concurrency policy is Forbid"
                .to_string(),
        ));
        return plan(notes, Decision::Wait(wait));
    }
    let after_start = ScheduleState {
        last_schedule_time: Some(scheduled),
        ..state
    };
    let decision = Decision::Start {
        scheduled,
        replace: policy == "Replace",
        requeue: next_schedule_time_duration(&after_start, now, &schedule),
    };
    plan(notes, decision)
}

/// The delay until the next scheduled time, for the event handler that sees a new schedule
/// (upstream `updateCronJob`); `Err` is the `UnParseableCronJobSchedule` message.
pub fn requeue_for_new_schedule(cj: &CronJob, now: Timestamp) -> Result<Option<Duration>, String> {
    let (parsed, _) = schedule_of(cj);
    let schedule_text = cj.spec.as_ref().map_or("", |s| s.schedule.as_str());
    let schedule = parsed.map_err(|_| format!("unparseable schedule for cronjob: {schedule_text}"))?;
    Ok(next_schedule_time_duration(
        &ScheduleState::of(cj),
        now,
        &schedule,
    ))
}

fn unsupported_message(schedule: &str) -> String {
    format!(
        "CRON_TZ or TZ used in schedule {} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
        go_quote(schedule)
    )
}

/// Go's `%q` of a string.
fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Go's `time.RFC1123Z` in UTC: `Mon, 02 Jan 2006 15:04:05 -0700`.
pub fn rfc1123z(t: Timestamp) -> String {
    t.strftime("%a, %d %b %Y %H:%M:%S +0000").to_string()
}

/// Go's `time.RFC3339` of `t` in `zone`: `Z` for a zero offset, else `±hh:mm`.
pub fn rfc3339_in(t: Timestamp, zone: &TimeZone) -> String {
    let zoned = t.to_zoned(zone.clone());
    if zoned.offset().seconds() == 0 {
        zoned.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
    }
}

// ---------------------------------------------------------------------------
// The Job
// ---------------------------------------------------------------------------

/// Upstream `getJobFromTemplate2`: the Job of `scheduled`: the template's labels and
/// annotations, the scheduled-timestamp annotation (in the CronJob's zone), the controller
/// reference, the template's spec, and the deterministic name.
pub fn get_job_from_template(cj: &CronJob, scheduled: Timestamp) -> Job {
    let template = cj.spec.as_ref().map(|s| &s.job_template);
    let meta = template.and_then(|t| t.metadata.as_ref());
    let labels: BTreeMap<String, String> = meta.and_then(|m| m.labels.clone()).unwrap_or_default();
    let mut annotations: BTreeMap<String, String> =
        meta.and_then(|m| m.annotations.clone()).unwrap_or_default();
    let zone = cj
        .spec
        .as_ref()
        .and_then(|s| s.time_zone.as_deref())
        .and_then(|tz| load_location(tz).ok())
        .unwrap_or(TimeZone::UTC);
    annotations.insert(
        SCHEDULED_TIMESTAMP_ANNOTATION.to_string(),
        rfc3339_in(scheduled, &zone),
    );
    Job {
        metadata: ObjectMeta {
            name: Some(get_job_name(name_of(&cj.metadata), scheduled)),
            namespace: cj.metadata.namespace.clone(),
            labels: (!labels.is_empty()).then_some(labels),
            annotations: Some(annotations),
            owner_references: Some(vec![new_controller_ref(&cj.metadata, "batch/v1", "CronJob")]),
            ..Default::default()
        },
        spec: template.and_then(|t| t.spec.clone()),
        status: None,
    }
}

/// Upstream `getRef`: the reference `status.active` keeps to a Job.
pub fn job_ref(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".to_string()),
        kind: Some("Job".to_string()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        resource_version: job.metadata.resource_version.clone(),
        field_path: None,
    }
}

/// Records a started Job in `cj`'s status (the end of `syncCronJob`).
pub fn record_start(cj: &mut CronJob, job: &Job, scheduled: Timestamp) {
    let status = cj.status.get_or_insert_with(Default::default);
    status.active.get_or_insert_with(Vec::new).push(job_ref(job));
    status.last_schedule_time = Some(Time(scheduled));
}

// ---------------------------------------------------------------------------
// History limits
// ---------------------------------------------------------------------------

/// Upstream `byJobStartTime`: by `status.startTime`, Jobs without one last, ties by name.
pub fn by_job_start_time(a: &Job, b: &Job) -> Ordering {
    let start = |j: &Job| j.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0);
    match (start(a), start(b)) {
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (x, y) if x == y => name_of(&a.metadata).cmp(name_of(&b.metadata)),
        (x, y) => x.cmp(&y),
    }
}

/// Upstream `cleanupFinishedJobs` / `removeOldestJobs`: the finished Jobs beyond
/// `successfulJobsHistoryLimit` and `failedJobsHistoryLimit`, oldest first. Neither limit set:
/// none.
pub fn jobs_to_clean_up(cj: &CronJob, jobs: &[Arc<Job>]) -> Vec<Arc<Job>> {
    let spec = cj.spec.as_ref();
    let successful_limit = spec.and_then(|s| s.successful_jobs_history_limit);
    let failed_limit = spec.and_then(|s| s.failed_jobs_history_limit);
    let mut succeeded = Vec::new();
    let mut failed = Vec::new();
    for job in jobs {
        match finished_condition(job) {
            Some("Complete") => succeeded.push(job.clone()),
            Some("Failed") => failed.push(job.clone()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (mut list, limit) in [(succeeded, successful_limit), (failed, failed_limit)] {
        let Some(limit) = limit else { continue };
        let excess = list.len().saturating_sub(usize::try_from(limit).unwrap_or(0));
        if excess == 0 {
            continue;
        }
        list.sort_by(|a, b| by_job_start_time(a, b));
        out.extend(list.into_iter().take(excess));
    }
    out
}
