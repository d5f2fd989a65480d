//! Table tests of the schedule arithmetic: upstream's cases from
//! `controllers/testdata/cronjob_schedule.json` (`utils_test.go`), plus the ones this project
//! adds (too many missed, `@every`, time zones, job names).

use std::time::Duration;

use apiserver::kinds::batch::cron::Schedule;
use jiff::Timestamp;
use serde_json::Value;

use super::fixtures::ts;
use crate::cronjob::schedule::{
    MissedSchedules, ScheduleState, format_schedule, get_job_name, most_recent_schedule_time,
    next_schedule_time, next_schedule_time_duration,
};

fn cases(function: &str) -> Vec<Value> {
    let all: Vec<Value> =
        serde_json::from_str(include_str!("../../../testdata/cronjob_schedule.json")).unwrap();
    let picked: Vec<Value> = all
        .into_iter()
        .filter(|c| c["function"].as_str().is_some_and(|f| f.starts_with(function)))
        .collect();
    assert!(!picked.is_empty(), "no cases for {function}");
    picked
}

fn time(v: &Value) -> Option<Timestamp> {
    v.as_str().map(ts)
}

fn state(input: &Value) -> ScheduleState {
    ScheduleState {
        creation: ts(input["creationTimestamp"].as_str().unwrap()),
        last_schedule_time: time(&input["lastScheduleTime"]),
        starting_deadline_seconds: input["startingDeadlineSeconds"].as_i64(),
    }
}

fn schedule(input: &Value) -> Schedule {
    Schedule::parse_standard(input["schedule"].as_str().unwrap()).unwrap()
}

#[test]
fn most_recent_schedule_time_upstream_cases() {
    for case in cases("cronjob.mostRecentScheduleTime") {
        let (name, input, want) = (&case["name"], &case["input"], &case["expected"]);
        let now = ts(input["now"].as_str().unwrap());
        let include = input["includeStartingDeadlineSeconds"].as_bool().unwrap();
        let got = most_recent_schedule_time(&state(input), now, &schedule(input), include);
        if want["error"] == true {
            assert!(got.is_err(), "{name}: {got:?}");
            continue;
        }
        let got = got.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            Some(got.earliest),
            time(&want["earliestTime"]),
            "{name}: earliest"
        );
        assert_eq!(
            got.most_recent,
            time(&want["mostRecentTime"]),
            "{name}: most recent"
        );
        let missed = match want["missedSchedules"].as_str().unwrap() {
            "none" => MissedSchedules::None,
            "few" => MissedSchedules::Few,
            _ => MissedSchedules::Many,
        };
        assert_eq!(got.missed, missed, "{name}: missed");
    }
}

#[test]
fn next_schedule_time_upstream_cases() {
    for case in cases("cronjob.nextScheduleTime") {
        if case["function"] != "cronjob.nextScheduleTime" {
            continue;
        }
        let (name, input, want) = (&case["name"], &case["input"], &case["expected"]);
        let now = ts(input["now"].as_str().unwrap());
        let got = next_schedule_time(&state(input), now, &schedule(input));
        if want["error"] == true {
            assert!(got.is_err(), "{name}: {got:?}");
            continue;
        }
        let (scheduled, _) = got.unwrap_or_else(|e| panic!("{name}: {e}"));
        if want["scheduledTimeIsNonNil"] == true {
            assert!(scheduled.is_some(), "{name}");
        } else {
            assert_eq!(scheduled, time(&want["scheduledTime"]), "{name}");
        }
    }
}

#[test]
fn next_schedule_time_duration_upstream_cases() {
    for case in cases("cronjob.nextScheduleTimeDuration") {
        let (name, input, want) = (&case["name"], &case["input"], &case["expected"]);
        let now = ts(input["now"].as_str().unwrap());
        let got = next_schedule_time_duration(&state(input), now, &schedule(input));
        let millis = want["requeueAfterMillis"].as_u64().unwrap();
        assert_eq!(got, Some(Duration::from_millis(millis)), "{name}");
    }
}

#[test]
fn many_missed_start_times_are_reported() {
    // Hourly, created ten days ago: 240 missed, the last one is due.
    let state = ScheduleState {
        creation: ts("2016-05-19T08:00:00Z"),
        last_schedule_time: Some(ts("2016-05-19T09:00:00Z")),
        starting_deadline_seconds: None,
    };
    let hourly = Schedule::parse_standard("0 * * * ?").unwrap();
    let (scheduled, too_many) = next_schedule_time(&state, ts("2016-05-29T11:00:00Z"), &hourly).unwrap();
    assert_eq!(scheduled, Some(ts("2016-05-29T11:00:00Z")));
    assert!(too_many);
    // With a deadline of 200 s the search starts at now − 200 s: one due, none too many.
    let state = ScheduleState {
        starting_deadline_seconds: Some(200),
        ..state
    };
    let (scheduled, too_many) = next_schedule_time(&state, ts("2016-05-29T11:02:00Z"), &hourly).unwrap();
    assert_eq!(scheduled, Some(ts("2016-05-29T11:00:00Z")));
    assert!(!too_many);
}

#[test]
fn every_minute_requeues_just_after_the_next_minute() {
    let state = ScheduleState {
        creation: ts("2016-05-19T10:00:10Z"),
        last_schedule_time: Some(ts("2016-05-19T10:05:00Z")),
        starting_deadline_seconds: None,
    };
    let every_minute = Schedule::parse_standard("*/1 * * * *").unwrap();
    let after = next_schedule_time_duration(&state, ts("2016-05-19T10:05:00.250Z"), &every_minute);
    assert_eq!(after, Some(Duration::from_millis(59_850)));
}

#[test]
fn every_descriptor_counts_from_the_last_run() {
    let state = ScheduleState {
        creation: ts("2016-05-19T10:00:07Z"),
        last_schedule_time: None,
        starting_deadline_seconds: None,
    };
    let every = Schedule::parse_standard("@every 5m").unwrap();
    let found = most_recent_schedule_time(&state, ts("2016-05-19T10:21:00Z"), &every, false).unwrap();
    assert_eq!(found.most_recent, Some(ts("2016-05-19T10:20:07Z")));
}

#[test]
fn impossible_schedules_never_requeue() {
    let state = ScheduleState {
        creation: ts("2016-05-19T10:00:10Z"),
        last_schedule_time: None,
        starting_deadline_seconds: None,
    };
    let never = Schedule::parse_standard("59 23 31 2 *").unwrap();
    assert_eq!(
        next_schedule_time_duration(&state, ts("2016-05-19T11:00:00Z"), &never),
        None
    );
}

#[test]
fn a_time_zone_becomes_a_prefix_unless_the_schedule_has_one() {
    assert_eq!(
        format_schedule("0 3 * * *", Some("Europe/Paris")),
        ("TZ=Europe/Paris 0 3 * * *".to_string(), false)
    );
    assert_eq!(
        format_schedule("0 3 * * *", None),
        ("0 3 * * *".to_string(), false)
    );
    assert_eq!(
        format_schedule("0 3 * * *", Some("Mars/Olympus")),
        ("0 3 * * *".to_string(), false)
    );
    assert_eq!(
        format_schedule("TZ=UTC 0 3 * * *", Some("Europe/Paris")),
        ("TZ=UTC 0 3 * * *".to_string(), true)
    );
}

#[test]
fn job_names_count_unix_minutes() {
    assert_eq!(
        get_job_name("report", ts("2016-05-19T10:00:00Z")),
        "report-24394200"
    );
    assert_eq!(
        get_job_name("report", ts("2016-05-19T10:00:59Z")),
        "report-24394200"
    );
}
