//! The sentences a CronJob sync records in the causal journal: the Job it starts for a due
//! schedule, the run it skips (`concurrencyPolicy: Forbid`, a missed `startingDeadlineSeconds`),
//! the active Jobs `Replace` deletes, and the finished Jobs the history limits drop.
//!
//! Upstream: `cronjob_controllerv2.go` (`syncCronJob`, `cleanupFinishedJobs`). Upstream says the
//! same in events (`SuccessfulCreate`, `JobAlreadyActive`, `MissSchedule`) without the schedule
//! arithmetic; these sentences give the scheduled time and the next one.
//!
//! The message functions take plain values and are tested by their exact sentences;
//! [`of_plan`] reads what [`super::plan::decide`] decided and picks them. A sync that only waits
//! for the next scheduled time decides nothing and records nothing.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::{CronJob, Job};

use super::plan::{Decision as Planned, Plan, finished_condition};
use super::schedule::{ScheduleState, get_job_name, next_schedule_time, schedule_of};
use crate::runtime::name_of;

pub use crate::runtime::Decision;
use crate::runtime::decision;

/// `next run at …, requeue after …`, or that the schedule has no next time.
pub fn next_run(now: Timestamp, requeue: Option<Duration>) -> String {
    let Some(after) = requeue else {
        return "the schedule has no next time: no requeue".to_owned();
    };
    let delta = super::schedule::NEXT_SCHEDULE_DELTA;
    let next = now
        .saturating_add(jiff::SignedDuration::try_from(after.saturating_sub(delta)).unwrap_or_default())
        .unwrap_or(now);
    format!("next run at {next}, requeue after {:.3}s", after.as_secs_f64())
}

/// `syncCronJob` starting the Job of a due scheduled time.
pub fn creating(schedule: &str, scheduled: Timestamp, job: &str, next: &str) -> Decision {
    decision(
        "syncCronJob",
        format!("schedule '{schedule}' due at {scheduled}: creating job {job}; {next}"),
    )
}

/// `concurrencyPolicy: Replace` deleting the active Jobs before the new one starts.
pub fn replacing(active: &[String], job: &str) -> Decision {
    decision(
        "syncCronJob",
        format!(
            "concurrencyPolicy Replace: deleting active job {} before starting {job}",
            active.join(", ")
        ),
    )
}

/// `concurrencyPolicy: Forbid` skipping a due run while Jobs are active.
pub fn forbidden(scheduled: Option<Timestamp>, active: &[String], next: &str) -> Decision {
    let at = scheduled.map_or_else(|| "due now".to_owned(), |t| format!("at {t}"));
    decision(
        "syncCronJob",
        format!(
            "concurrencyPolicy Forbid: skipping the run {at} ({} active job: {}); {next}",
            active.len(),
            active.join(", ")
        ),
    )
}

/// `startingDeadlineSeconds` passed for the run due at `scheduled`.
pub fn missed_deadline(
    scheduled: Option<Timestamp>,
    deadline_seconds: i64,
    now: Timestamp,
    next: &str,
) -> Decision {
    let at = scheduled.map_or_else(|| "due".to_owned(), |t| format!("at {t}"));
    decision(
        "syncCronJob",
        format!(
            "missed the run {at}: now {now} is more than startingDeadlineSeconds {deadline_seconds} after it, \
             so it is skipped; {next}"
        ),
    )
}

/// `cleanupFinishedJobs` deleting finished Jobs beyond a history limit.
pub fn cleaning_up(kind: &str, limit_field: &str, limit: i32, finished: usize, jobs: &[String]) -> Decision {
    decision(
        "cleanupFinishedJobs",
        format!(
            "{finished} {kind} jobs > {limit_field} {limit}: deleting the oldest: {}",
            jobs.join(", ")
        ),
    )
}

fn active_names(cj: &CronJob) -> Vec<String> {
    let active = cj
        .status
        .as_ref()
        .and_then(|s| s.active.as_deref())
        .unwrap_or(&[]);
    active.iter().filter_map(|r| r.name.clone()).collect()
}

fn schedule_text(cj: &CronJob) -> &str {
    cj.spec.as_ref().map_or("", |s| s.schedule.as_str())
}

/// The scheduled time due at `now`, as `decide` found it.
fn due(cj: &CronJob, now: Timestamp) -> Option<Timestamp> {
    let schedule = schedule_of(cj).0.ok()?;
    next_schedule_time(&ScheduleState::of(cj), now, &schedule).ok()?.0
}

/// The decisions of a `syncCronJob` plan, before its writes; none when it only waits.
pub fn of_plan(cj: &CronJob, plan: &Plan, now: Timestamp) -> Vec<Decision> {
    let mut out = Vec::new();
    match &plan.decision {
        Planned::Start {
            scheduled,
            replace,
            requeue,
        } => {
            let job = get_job_name(name_of(&cj.metadata), *scheduled);
            let active = active_names(cj);
            if *replace && !active.is_empty() {
                out.push(replacing(&active, &job));
            }
            out.push(creating(
                schedule_text(cj),
                *scheduled,
                &job,
                &next_run(now, *requeue),
            ));
        }
        Planned::Wait(requeue) => {
            let next = next_run(now, *requeue);
            for note in &plan.notes {
                match note.reason {
                    "JobAlreadyActive" => out.push(forbidden(due(cj, now), &active_names(cj), &next)),
                    "MissSchedule" => {
                        let deadline = cj.spec.as_ref().and_then(|s| s.starting_deadline_seconds);
                        out.push(missed_deadline(due(cj, now), deadline.unwrap_or(0), now, &next));
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    out
}

/// The `cleanupFinishedJobs` decisions for the Jobs it deletes (`to_delete`), one per limit.
pub fn cleanup(
    cj: &CronJob,
    jobs: &[std::sync::Arc<Job>],
    to_delete: &[std::sync::Arc<Job>],
) -> Vec<Decision> {
    let spec = cj.spec.as_ref();
    let kinds = [
        (
            "Complete",
            "succeeded",
            "successfulJobsHistoryLimit",
            spec.and_then(|s| s.successful_jobs_history_limit),
        ),
        (
            "Failed",
            "failed",
            "failedJobsHistoryLimit",
            spec.and_then(|s| s.failed_jobs_history_limit),
        ),
    ];
    let mut out = Vec::new();
    for (condition, kind, field, limit) in kinds {
        let names: Vec<String> = to_delete
            .iter()
            .filter(|j| finished_condition(j) == Some(condition))
            .map(|j| name_of(&j.metadata).to_owned())
            .collect();
        if names.is_empty() {
            continue;
        }
        let finished = jobs
            .iter()
            .filter(|j| finished_condition(j) == Some(condition))
            .count();
        out.push(cleaning_up(kind, field, limit.unwrap_or(0), finished, &names));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().expect("a timestamp")
    }

    #[test]
    fn next_run_undoes_the_delta() {
        let now = at("2026-01-01T12:01:00Z");
        assert_eq!(
            next_run(now, Some(Duration::from_millis(60_100))),
            "next run at 2026-01-01T12:02:00Z, requeue after 60.100s"
        );
        assert_eq!(next_run(now, None), "the schedule has no next time: no requeue");
    }

    #[test]
    fn creating_names_the_schedule_and_the_job() {
        let d = creating(
            "*/1 * * * *",
            at("2026-01-01T12:01:00Z"),
            "hello-28913461",
            "next",
        );
        assert_eq!(d.function, "syncCronJob");
        assert_eq!(
            d.message,
            "schedule '*/1 * * * *' due at 2026-01-01T12:01:00Z: creating job hello-28913461; next"
        );
    }

    #[test]
    fn concurrency_policies() {
        assert_eq!(
            replacing(&["hello-1".into()], "hello-2").message,
            "concurrencyPolicy Replace: deleting active job hello-1 before starting hello-2"
        );
        assert_eq!(
            forbidden(Some(at("2026-01-01T12:01:00Z")), &["hello-1".into()], "next").message,
            "concurrencyPolicy Forbid: skipping the run at 2026-01-01T12:01:00Z (1 active job: hello-1); next"
        );
    }

    #[test]
    fn missed_deadline_and_cleanup() {
        assert_eq!(
            missed_deadline(
                Some(at("2026-01-01T12:01:00Z")),
                10,
                at("2026-01-01T12:01:30Z"),
                "next"
            )
            .message,
            "missed the run at 2026-01-01T12:01:00Z: now 2026-01-01T12:01:30Z is more than \
             startingDeadlineSeconds 10 after it, so it is skipped; next"
        );
        let d = cleaning_up(
            "succeeded",
            "successfulJobsHistoryLimit",
            3,
            4,
            &["hello-1".into()],
        );
        assert_eq!(d.function, "cleanupFinishedJobs");
        assert_eq!(
            d.message,
            "4 succeeded jobs > successfulJobsHistoryLimit 3: deleting the oldest: hello-1"
        );
    }
}

/// [`of_plan`] over real plans.
#[cfg(test)]
mod plan_tests {
    use super::*;
    use crate::cronjob::plan::decide;
    use crate::cronjob::tests::fixtures::{CronJobExt, cronjob, job_of, ts};

    fn decisions_at(cj: &CronJob, now: &str) -> Vec<String> {
        let now = ts(now);
        of_plan(cj, &decide(cj, now), now)
            .into_iter()
            .map(|d| format!("{}: {}", d.function, d.message))
            .collect()
    }

    #[test]
    fn a_due_time_creates_its_job() {
        let cj = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z");
        assert_eq!(
            decisions_at(&cj, "2018-01-01T00:01:00.050Z"),
            [
                "syncCronJob: schedule '*/1 * * * *' due at 2018-01-01T00:01:00Z: creating job cj-25246081; \
              next run at 2018-01-01T00:02:00Z, requeue after 60.050s"
            ]
        );
    }

    #[test]
    fn waiting_for_the_next_time_decides_nothing() {
        let cj = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z");
        assert!(decisions_at(&cj, "2018-01-01T00:00:30Z").is_empty());
    }

    #[test]
    fn forbid_skips_and_replace_deletes() {
        let base = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z").last_scheduled("2018-01-01T00:01:00Z");
        let running = job_of(&base, "cj-25246081");
        let now = "2018-01-01T00:02:00.010Z";
        assert_eq!(
            decisions_at(&base.clone().policy("Forbid").with_active(&running), now),
            [
                "syncCronJob: concurrencyPolicy Forbid: skipping the run at 2018-01-01T00:02:00Z \
              (1 active job: cj-25246081); next run at 2018-01-01T00:03:00Z, requeue after 60.090s"
            ]
        );
        assert_eq!(
            decisions_at(&base.policy("Replace").with_active(&running), now),
            [
                "syncCronJob: concurrencyPolicy Replace: deleting active job cj-25246081 before starting cj-25246082",
                "syncCronJob: schedule '*/1 * * * *' due at 2018-01-01T00:02:00Z: creating job cj-25246082; \
                 next run at 2018-01-01T00:03:00Z, requeue after 60.090s",
            ]
        );
    }
}
