//! Upstream's backoff cases (`backoff_utils_test.go`, lifted into `testdata/job_backoff.json`), and
//! the delay schedule itself.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::job::backoff::{
    BackoffRecord, DEFAULT_JOB_POD_FAILURE_BACKOFF, MAX_JOB_POD_FAILURE_BACKOFF, finished_time,
    new_backoff_record, remaining_time_per_index,
};

fn cases(function: &str) -> Vec<Value> {
    let all: Vec<Value> = serde_json::from_str(include_str!("../../../testdata/job_backoff.json")).unwrap();
    let picked: Vec<Value> = all.into_iter().filter(|c| c["function"] == function).collect();
    assert!(!picked.is_empty(), "no cases of {function}");
    picked
}

fn ts(v: &Value) -> Option<Timestamp> {
    v.as_str().map(|s| s.parse().unwrap())
}

fn times(v: &Value) -> Vec<Timestamp> {
    v.as_array().unwrap().iter().map(|t| ts(t).unwrap()).collect()
}

fn record(v: &Value) -> Option<BackoffRecord> {
    (!v.is_null()).then(|| BackoffRecord {
        failures_after_last_success: v["failuresAfterLastSuccess"].as_i64().unwrap() as i32,
        last_failure_time: ts(&v["lastFailureTime"]),
    })
}

/// A pod from the cases' short form: container states under `containerStatuses`, and `phase`,
/// `conditions`, `annotations`, `deletionTimestamp`, `creationTimestamp` at the top.
fn pod(v: &Value) -> Pod {
    let statuses: Vec<Value> = v["containerStatuses"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .enumerate()
                .map(|(i, state)| {
                    json!({"name": format!("c{i}"), "image": "x", "imageID": "", "ready": false,
                    "restartCount": 0, "state": state})
                })
                .collect()
        })
        .unwrap_or_default();
    let mut pod = json!({
        "metadata": {"name": "p", "namespace": "default"},
        "status": {"containerStatuses": statuses},
    });
    for key in ["annotations", "deletionTimestamp", "creationTimestamp"] {
        if !v[key].is_null() {
            pod["metadata"][key] = v[key].clone();
        }
    }
    for key in ["phase", "conditions"] {
        if !v[key].is_null() {
            pod["status"][key] = v[key].clone();
        }
    }
    serde_json::from_value(pod).unwrap()
}

fn secs(v: &Value) -> Duration {
    Duration::from_secs(v.as_u64().unwrap())
}

#[test]
fn upstream_new_backoff_record_cases() {
    for case in cases("job.backoffStore.newBackoffRecord") {
        let input = &case["input"];
        let got = new_backoff_record(
            record(&input["previousRecord"]),
            times(&input["newSucceededPodFinishTimes"]),
            times(&input["newFailedPodFinishTimes"]),
        );
        let want = record(&case["expected"]).unwrap();
        assert_eq!(got, want, "{}", case["name"]);
    }
}

#[test]
fn upstream_get_finished_time_cases() {
    for case in cases("job.getFinishedTime") {
        let got = finished_time(&pod(&case["input"]["pod"]));
        assert_eq!(
            Some(got),
            ts(&case["expected"]["finishedTime"]),
            "{}",
            case["name"]
        );
    }
}

#[test]
fn upstream_get_remaining_time_cases() {
    for case in cases("job.backoffRecord.getRemainingTime") {
        let input = &case["input"];
        let record = BackoffRecord {
            failures_after_last_success: input["failuresAfterLastSuccess"].as_i64().unwrap() as i32,
            last_failure_time: ts(&input["lastFailureTime"]),
        };
        let got = record.remaining_time(
            ts(&input["now"]).unwrap(),
            secs(&input["defaultBackoffSeconds"]),
            secs(&input["maxBackoffSeconds"]),
        );
        assert_eq!(
            got,
            secs(&case["expected"]["remainingSeconds"]),
            "{}",
            case["name"]
        );
    }
}

#[test]
fn upstream_get_remaining_time_per_index_cases() {
    for case in cases("job.getRemainingTimePerIndex") {
        let input = &case["input"];
        let last = pod(&input["lastFailedPod"]);
        let got = remaining_time_per_index(
            ts(&input["now"]).unwrap(),
            secs(&input["defaultBackoffSeconds"]),
            secs(&input["maxBackoffSeconds"]),
            Some(&last),
        );
        assert_eq!(
            got,
            secs(&case["expected"]["remainingSeconds"]),
            "{}",
            case["name"]
        );
    }
}

#[test]
fn the_delay_doubles_from_ten_seconds_and_stops_at_ten_minutes() {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let delays: Vec<u64> = (1..=9)
        .map(|failures| {
            let record = BackoffRecord {
                failures_after_last_success: failures,
                last_failure_time: Some(t0),
            };
            record
                .remaining_time(t0, DEFAULT_JOB_POD_FAILURE_BACKOFF, MAX_JOB_POD_FAILURE_BACKOFF)
                .as_secs()
        })
        .collect();
    assert_eq!(delays, [10, 20, 40, 80, 160, 320, 600, 600, 600]);
}

#[test]
fn the_delay_runs_from_the_last_failure_and_none_is_left_after_it() {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let record = BackoffRecord {
        failures_after_last_success: 2,
        last_failure_time: Some(t0),
    };
    let at = |s: i64| t0 + jiff::SignedDuration::from_secs(s);
    let left = |s| {
        record.remaining_time(
            at(s),
            DEFAULT_JOB_POD_FAILURE_BACKOFF,
            MAX_JOB_POD_FAILURE_BACKOFF,
        )
    };
    assert_eq!(left(5), Duration::from_secs(15));
    assert_eq!(left(20), Duration::ZERO);
    assert_eq!(left(100), Duration::ZERO);
    assert_eq!(
        BackoffRecord::default().remaining_time(
            at(0),
            DEFAULT_JOB_POD_FAILURE_BACKOFF,
            MAX_JOB_POD_FAILURE_BACKOFF
        ),
        Duration::ZERO
    );
}

#[test]
fn a_success_resets_the_count_and_only_later_failures_count() {
    let t =
        |s: i64| "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap() + jiff::SignedDuration::from_secs(s);
    let previous = Some(BackoffRecord {
        failures_after_last_success: 5,
        last_failure_time: Some(t(0)),
    });
    let got = new_backoff_record(previous, vec![t(10)], vec![t(5), t(10), t(11), t(12)]);
    assert_eq!(
        got,
        BackoffRecord {
            failures_after_last_success: 2,
            last_failure_time: Some(t(12)),
        },
        "a failure at the same instant as the success does not count"
    );
}
