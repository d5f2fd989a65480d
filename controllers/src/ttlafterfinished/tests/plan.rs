//! When a finished Job expires (upstream `ttlafterfinished_controller_test.go`: `TestTimeLeft`).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use serde_json::json;

use crate::ttlafterfinished::plan::{Ttl, job_finish_time, needs_cleanup, process_ttl, time_left};

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn job(ttl: Option<i32>, condition: Option<(&str, &str, Option<&str>)>) -> Job {
    let mut v = json!({"metadata": {"name": "j", "namespace": "default"}, "spec": {"template": {}}});
    if let Some(ttl) = ttl {
        v["spec"]["ttlSecondsAfterFinished"] = json!(ttl);
    }
    if let Some((type_, status, at)) = condition {
        let mut c = json!({"type": type_, "status": status});
        if let Some(at) = at {
            c["lastTransitionTime"] = json!(at);
        }
        v["status"] = json!({"conditions": [c]});
    }
    serde_json::from_value(v).unwrap()
}

#[test]
fn only_finished_jobs_with_a_ttl_need_cleanup() {
    let at = Some("2018-01-01T00:00:00Z");
    assert!(!needs_cleanup(&job(None, Some(("Complete", "True", at)))));
    assert!(!needs_cleanup(&job(Some(10), None)));
    assert!(!needs_cleanup(&job(Some(10), Some(("Complete", "False", at)))));
    assert!(!needs_cleanup(&job(Some(10), Some(("Suspended", "True", at)))));
    assert!(needs_cleanup(&job(Some(10), Some(("Complete", "True", at)))));
    assert!(needs_cleanup(&job(Some(0), Some(("Failed", "True", at)))));
}

#[test]
fn time_left_counts_from_the_finish_condition() {
    let now = ts("2018-01-01T00:00:05Z");
    let cases = [
        // (ttl, condition time, left seconds, expired at)
        (10, "2018-01-01T00:00:00Z", 5, "2018-01-01T00:00:10Z"),
        (0, "2018-01-01T00:00:00Z", -5, "2018-01-01T00:00:00Z"),
        (5, "2018-01-01T00:00:00Z", 0, "2018-01-01T00:00:05Z"),
        // Finished "in the future" (clock skew): waits the whole TTL and more.
        (10, "2018-01-01T00:00:10Z", 15, "2018-01-01T00:00:20Z"),
    ];
    for (ttl, finished, left, expire) in cases {
        let j = job(Some(ttl), Some(("Failed", "True", Some(finished))));
        let (got_left, got_expire) = time_left(&j, now).unwrap();
        assert_eq!(
            (got_left.as_secs(), got_expire),
            (left, ts(expire)),
            "ttl {ttl}, finished {finished}"
        );
    }
}

#[test]
fn a_finish_without_a_time_is_an_error() {
    let j = job(Some(10), Some(("Complete", "True", None)));
    assert_eq!(
        job_finish_time(&j).unwrap_err(),
        "unable to find the time when the Job default/j finished"
    );
    assert!(process_ttl(&j, ts("2018-01-01T00:00:00Z")).is_err());
    assert_eq!(
        time_left(&job(None, None), ts("2018-01-01T00:00:00Z")).unwrap_err(),
        "job default/j should not be cleaned up"
    );
}

#[test]
fn process_ttl_says_now_later_or_never() {
    let j = job(Some(10), Some(("Complete", "True", Some("2018-01-01T00:00:00Z"))));
    assert_eq!(
        process_ttl(&j, ts("2018-01-01T00:00:04Z")),
        Ok(Ttl::Later(Duration::from_secs(6)))
    );
    assert_eq!(
        process_ttl(&j, ts("2018-01-01T00:00:10Z")),
        Ok(Ttl::Expired(ts("2018-01-01T00:00:10Z")))
    );
    let mut deleting = j.clone();
    deleting.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(ts(
        "2018-01-01T00:00:11Z",
    )));
    assert_eq!(
        process_ttl(&deleting, ts("2018-01-01T00:00:20Z")),
        Ok(Ttl::NotApplicable)
    );
    assert_eq!(
        process_ttl(&job(None, None), ts("2018-01-01T00:00:20Z")),
        Ok(Ttl::NotApplicable)
    );
}
