//! Table tests of the sync's decisions: observing Jobs, the scheduling decision, the Job from
//! the template, and the history limits (upstream's `byJobStartTime` cases from
//! `controllers/testdata/cronjob_schedule.json`).

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use serde_json::Value;

use super::fixtures::{CronJobExt, JobExt, cronjob, job_of, ts};
use crate::cronjob::plan::{
    Decision, SCHEDULED_TIMESTAMP_ANNOTATION, by_job_start_time, decide, get_job_from_template,
    jobs_to_clean_up, observe_jobs, record_start,
};

#[test]
fn by_job_start_time_upstream_cases() {
    let all: Vec<Value> =
        serde_json::from_str(include_str!("../../../testdata/cronjob_schedule.json")).unwrap();
    let cases: Vec<&Value> = all
        .iter()
        .filter(|c| {
            c["function"]
                .as_str()
                .is_some_and(|f| f.starts_with("cronjob.byJobStartTime"))
        })
        .collect();
    assert!(!cases.is_empty());
    let cj = cronjob("* * * * *", "2018-01-01T00:00:00Z");
    let job = |v: &Value| {
        let j = job_of(&cj, v["name"].as_str().unwrap());
        match v["startTime"].as_str() {
            Some(t) => j.started(t),
            None => j,
        }
    };
    for case in cases {
        let mut jobs: Vec<Job> = case["input"]["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(job)
            .collect();
        jobs.sort_by(by_job_start_time);
        let got: Vec<&str> = jobs.iter().map(|j| j.metadata.name.as_deref().unwrap()).collect();
        let want: Vec<&str> = case["expected"]["sorted"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["name"].as_str().unwrap())
            .collect();
        assert_eq!(got, want, "{}", case["name"]);
    }
}

#[test]
fn history_limits_drop_the_oldest_finished_jobs() {
    let cj = cronjob("* * * * *", "2018-01-01T00:00:00Z").limits(Some(2), Some(1));
    let jobs = vec![
        job_of(&cj, "s3")
            .started("2018-01-01T00:03:00Z")
            .completed("2018-01-01T00:03:30Z")
            .arc(),
        job_of(&cj, "s1")
            .started("2018-01-01T00:01:00Z")
            .completed("2018-01-01T00:01:30Z")
            .arc(),
        job_of(&cj, "s2")
            .started("2018-01-01T00:02:00Z")
            .completed("2018-01-01T00:02:30Z")
            .arc(),
        job_of(&cj, "s0").completed("2018-01-01T00:04:30Z").arc(), // no start time: newest
        job_of(&cj, "f1").started("2018-01-01T00:01:00Z").failed().arc(),
        job_of(&cj, "f2").started("2018-01-01T00:02:00Z").failed().arc(),
        job_of(&cj, "running").started("2018-01-01T00:00:00Z").arc(),
    ];
    let dropped: Vec<String> = jobs_to_clean_up(&cj, &jobs)
        .iter()
        .map(|j| j.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(dropped, ["s1", "s2", "f1"]);
    // No limits: nothing.
    let unlimited = cj.clone().limits(None, None);
    assert!(jobs_to_clean_up(&unlimited, &jobs).is_empty());
    // A zero limit drops every finished Job of that kind.
    let zero = cj.limits(None, Some(0));
    assert_eq!(jobs_to_clean_up(&zero, &jobs).len(), 2);
}

#[test]
fn finished_jobs_leave_active_and_move_last_successful_time() {
    let base = cronjob("* * * * *", "2018-01-01T00:00:00Z");
    let done = job_of(&base, "done").completed("2018-01-01T00:05:00Z");
    let older = job_of(&base, "older").completed("2018-01-01T00:01:00Z");
    let running = job_of(&base, "running");
    let stray = job_of(&base, "stray");
    let gone = job_of(&base, "gone");
    let mut cj = base.with_active(&done).with_active(&running).with_active(&gone);
    let jobs = vec![done.arc(), older.arc(), running.arc(), stray.arc()];
    let observed = observe_jobs(&mut cj, &jobs);
    let status = cj.status.as_ref().unwrap();
    let active: Vec<&str> = status
        .active
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| r.name.as_deref().unwrap())
        .collect();
    assert_eq!(active, ["running", "gone"]);
    assert_eq!(
        status.last_successful_time.as_ref().unwrap().0,
        ts("2018-01-01T00:05:00Z")
    );
    assert!(observed.update_status);
    assert_eq!(observed.notes.len(), 1);
    assert_eq!(observed.notes[0].reason, "SawCompletedJob");
    assert_eq!(
        observed.notes[0].message,
        "Saw completed job: done, condition: Complete"
    );
    let unlisted: Vec<&str> = observed
        .unlisted
        .iter()
        .map(|j| j.metadata.name.as_deref().unwrap())
        .collect();
    assert_eq!(unlisted, ["stray"]);
    let missing: Vec<&str> = observed
        .missing
        .iter()
        .map(|r| r.name.as_deref().unwrap())
        .collect();
    assert_eq!(missing, ["gone"]);
}

fn start_time(decision: &Decision) -> Option<jiff::Timestamp> {
    match decision {
        Decision::Start { scheduled, .. } => Some(*scheduled),
        _ => None,
    }
}

#[test]
fn a_due_time_starts_a_job_and_requeues_for_the_next() {
    let cj = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z");
    let plan = decide(&cj, ts("2018-01-01T00:01:00.050Z"));
    assert!(plan.notes.is_empty());
    assert_eq!(
        plan.decision,
        Decision::Start {
            scheduled: ts("2018-01-01T00:01:00Z"),
            replace: false,
            requeue: Some(Duration::from_millis(60_050)),
        }
    );
    // Before the first time: wait for it (+100 ms).
    let plan = decide(&cj, ts("2018-01-01T00:00:30Z"));
    assert_eq!(plan.decision, Decision::Wait(Some(Duration::from_millis(30_100))));
}

#[test]
fn a_processed_time_is_not_started_again() {
    let cj = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z").last_scheduled("2018-01-01T00:01:00Z");
    let plan = decide(&cj, ts("2018-01-01T00:01:20Z"));
    assert_eq!(plan.decision, Decision::Wait(Some(Duration::from_millis(40_100))));
    // Listed by name in active (lastScheduleTime lost): also processed.
    let mut cj = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z");
    let job = job_of(&cj, "cj-25246081");
    cj = cj.with_active(&job);
    assert!(matches!(
        decide(&cj, ts("2018-01-01T00:01:20Z")).decision,
        Decision::Wait(_)
    ));
}

#[test]
fn forbid_waits_while_a_job_runs_and_replace_replaces() {
    let base = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z").last_scheduled("2018-01-01T00:01:00Z");
    let running = job_of(&base, "cj-25246081");
    let now = ts("2018-01-01T00:02:00.010Z");
    let forbid = base.clone().policy("Forbid").with_active(&running);
    let plan = decide(&forbid, now);
    assert_eq!(plan.notes[0].reason, "JobAlreadyActive");
    assert_eq!(
        plan.notes[0].message,
        "Not starting job because prior execution is running and concurrency policy is Forbid"
    );
    assert!(matches!(plan.decision, Decision::Wait(Some(_))));
    let replace = base.clone().policy("Replace").with_active(&running);
    assert!(matches!(
        decide(&replace, now).decision,
        Decision::Start { replace: true, .. }
    ));
    let allow = base.with_active(&running);
    assert!(matches!(
        decide(&allow, now).decision,
        Decision::Start { replace: false, .. }
    ));
}

#[test]
fn a_late_start_past_the_deadline_is_missed() {
    let cj = cronjob("0 * * * *", "2018-01-01T00:00:10Z").deadline(10);
    let plan = decide(&cj, ts("2018-01-01T01:00:30Z"));
    // The search starts at now − 10 s: nothing due in that window.
    assert!(matches!(plan.decision, Decision::Wait(Some(_))));
    assert!(plan.notes.is_empty());
    let cj = cronjob("0 * * * *", "2018-01-01T00:00:10Z").deadline(100);
    let plan = decide(&cj, ts("2018-01-01T01:00:30Z"));
    assert_eq!(start_time(&plan.decision), Some(ts("2018-01-01T01:00:00Z")));
}

#[test]
fn suspended_unknown_zone_and_broken_schedules_start_nothing() {
    let now = ts("2018-01-01T01:00:30Z");
    let cj = cronjob("0 * * * *", "2018-01-01T00:00:10Z");
    assert_eq!(decide(&cj.clone().suspended(), now).decision, Decision::Suspended);
    let plan = decide(&cj.clone().zone("Mars/Olympus"), now);
    assert_eq!(plan.decision, Decision::UnknownTimeZone);
    assert_eq!(plan.notes[0].reason, "UnknownTimeZone");
    assert_eq!(
        plan.notes[0].message,
        "invalid timeZone: \"Mars/Olympus\": unknown time zone Mars/Olympus"
    );
    let plan = decide(&cronjob("61 * * * *", "2018-01-01T00:00:10Z"), now);
    assert_eq!(plan.decision, Decision::Broken);
    assert_eq!(plan.notes[0].reason, "UnparseableSchedule");
    assert_eq!(
        plan.notes[0].message,
        "unparseable schedule: \"61 * * * *\" : end of range (61) above maximum (59): 61"
    );
    let plan = decide(&cronjob("59 23 31 2 *", "2018-01-01T00:00:10Z"), now);
    assert_eq!(plan.decision, Decision::Broken);
    assert_eq!(plan.notes[0].reason, "InvalidSchedule");
    let plan = decide(&cronjob("TZ=UTC 0 * * * *", "2018-01-01T00:00:10Z"), now);
    assert_eq!(plan.notes[0].reason, "UnsupportedSchedule");
    assert_eq!(start_time(&plan.decision), Some(ts("2018-01-01T01:00:00Z")));
}

#[test]
fn the_job_carries_name_annotation_labels_and_controller_reference() {
    let cj = cronjob("0 3 * * *", "2018-01-01T00:00:10Z").zone("Europe/Paris");
    let scheduled = ts("2018-06-01T01:00:00Z");
    let job = get_job_from_template(&cj, scheduled);
    assert_eq!(job.metadata.name.as_deref(), Some("cj-25463580"));
    assert_eq!(job.metadata.namespace.as_deref(), Some("default"));
    let annotations = job.metadata.annotations.as_ref().unwrap();
    assert_eq!(
        annotations[SCHEDULED_TIMESTAMP_ANNOTATION],
        "2018-06-01T03:00:00+02:00"
    );
    assert_eq!(job.metadata.labels.as_ref().unwrap()["app"], "report");
    let owner = &job.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
        ("CronJob", "cj", "cj-uid")
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    // Without a zone: UTC, written with a Z.
    let utc = get_job_from_template(&cronjob("0 3 * * *", "2018-01-01T00:00:10Z"), scheduled);
    assert_eq!(
        utc.metadata.annotations.unwrap()[SCHEDULED_TIMESTAMP_ANNOTATION],
        "2018-06-01T01:00:00Z"
    );
    // The start is recorded.
    let mut cj = cj;
    let mut created = job;
    created.metadata.uid = Some("u1".into());
    record_start(&mut cj, &created, scheduled);
    let status = cj.status.unwrap();
    assert_eq!(status.last_schedule_time.unwrap().0, scheduled);
    assert_eq!(status.active.unwrap()[0].uid.as_deref(), Some("u1"));
}

#[test]
fn many_missed_times_warn_and_start_only_the_most_recent() {
    let cj = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z");
    let plan = decide(&cj, ts("2018-01-02T00:00:30Z"));
    assert_eq!(plan.notes.len(), 1);
    assert_eq!(plan.notes[0].reason, "TooManyMissedTimes");
    assert_eq!(
        plan.notes[0].message,
        "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
    );
    assert!(plan.notes[0].warning);
    assert_eq!(start_time(&plan.decision), Some(ts("2018-01-02T00:00:00Z")));
    // A deadline of a minute keeps the search short: no warning.
    let plan = decide(&cj.deadline(60), ts("2018-01-02T00:00:30Z"));
    assert!(plan.notes.is_empty());
    assert_eq!(start_time(&plan.decision), Some(ts("2018-01-02T00:00:00Z")));
}

#[test]
fn a_deadline_counts_from_now_back() {
    // The search starts at the later of the last run and now − startingDeadlineSeconds, so a
    // time it finds is within the deadline (upstream's MissSchedule check then never fires).
    let cj = cronjob("*/1 * * * *", "2018-01-01T00:00:10Z")
        .last_scheduled("2018-01-01T00:01:00Z")
        .deadline(10);
    let plan = decide(&cj, ts("2018-01-01T00:02:05Z"));
    assert_eq!(start_time(&plan.decision), Some(ts("2018-01-01T00:02:00Z")));
    let cj = cj.deadline(100);
    let plan = decide(&cj, ts("2018-01-01T00:03:59Z"));
    // The search starts at 00:02:19: the 00:03 run is due and within its deadline.
    assert_eq!(start_time(&plan.decision), Some(ts("2018-01-01T00:03:00Z")));
}
