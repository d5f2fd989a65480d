//! Table tests of the pure sync: `wantActive`, the finish checks, `manageJob`'s plan, the tracking
//! of finished pods and the final conditions (cases after upstream's `job_controller_test.go`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::fixtures::{JobFixture, PodFixture, at, t0};
use crate::job::backoff::BackoffRecord;
use crate::job::indexed::{COMPLETION_INDEX_ANNOTATION, INDEX_FAILURE_COUNT_ANNOTATION};
use crate::job::plan::{
    ManagePlan, SyncJobCtx, check_completion, evaluate_finish, manage_job, new_sync_ctx, want_active,
};
use crate::job::tracking::{JOB_TRACKING_FINALIZER, enact_job_finished, plan_tracking};

fn arcs(list: Vec<PodFixture>) -> Vec<Arc<Pod>> {
    list.into_iter().map(PodFixture::arc).collect()
}

fn ctx(job: JobFixture, pods: Vec<PodFixture>, now: jiff::Timestamp) -> SyncJobCtx {
    new_sync_ctx(&job.build(), arcs(pods), HashSet::new(), None, now)
}

fn names(pods: &[Arc<Pod>]) -> Vec<String> {
    let mut n: Vec<String> = pods.iter().map(|p| p.metadata.name.clone().unwrap()).collect();
    n.sort();
    n
}

#[test]
fn want_active_follows_completions_parallelism_and_successes() {
    // (completions, parallelism, succeeded, active) → wantActive
    let cases = [
        (Some(5), 2, 0, 0, 2),
        (Some(5), 2, 4, 2, 1),
        (Some(5), 2, 5, 0, 0),
        (Some(5), 2, 7, 0, 0),
        (Some(1), 10, 0, 0, 1),
        (None, 3, 0, 1, 3),
        (None, 3, 1, 2, 2),
        (Some(4), 0, 0, 0, 0),
    ];
    for (completions, parallelism, succeeded, active, want) in cases {
        let job = JobFixture::new(completions, parallelism).build();
        assert_eq!(
            want_active(&job, succeeded, active),
            want,
            "completions {completions:?} parallelism {parallelism} succeeded {succeeded} active {active}"
        );
    }
}

#[test]
fn a_new_job_starts_and_creates_parallelism_pods_with_the_finalizer() {
    let mut c = ctx(JobFixture::new(Some(5), 2), vec![], t0());
    assert_eq!(evaluate_finish(&mut c, t0()), None);
    assert_eq!(
        c.job.status.as_ref().unwrap().start_time.as_ref().unwrap().0,
        t0()
    );
    let ManagePlan::Create(pods) = manage_job(&c, t0()).unwrap() else {
        panic!("creates pods")
    };
    assert_eq!(pods.len(), 2);
    for pod in pods {
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("pi-"));
        assert_eq!(
            pod.metadata.finalizers.as_deref(),
            Some(&[JOB_TRACKING_FINALIZER.to_string()][..])
        );
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.uid.as_str()), ("Job", "job-uid"));
    }
}

#[test]
fn counts_add_status_uncounted_and_new_pods_once() {
    let job = JobFixture::new(Some(10), 2).status(json!({
        "succeeded": 2, "failed": 1,
        "uncountedTerminatedPods": {"succeeded": ["uid-s1"], "failed": ["uid-f1"]},
    }));
    let pods = vec![
        PodFixture::new("s1").succeeded(at(1)),
        PodFixture::new("f1").failed(1, at(1)),
        PodFixture::new("s2").succeeded(at(2)),
        PodFixture::new("f2").failed(1, at(3)),
        PodFixture::new("s3").succeeded(at(0)).counted(),
        PodFixture::new("r1").ready(),
    ];
    let c = ctx(job, pods, at(5));
    assert_eq!(
        c.succeeded,
        2 + 1 + 1,
        "status + uncounted + new; a counted pod is not new"
    );
    assert_eq!(c.failed, 1 + 1 + 1);
    assert_eq!((c.active, c.ready), (1, 1));
    assert_eq!(
        c.new_backoff_record,
        BackoffRecord {
            failures_after_last_success: 1,
            last_failure_time: Some(at(3)),
        }
    );
}

#[test]
fn failures_past_the_backoff_limit_fail_the_job_through_failure_target() {
    let pods = (0..3)
        .map(|i| PodFixture::new(&format!("f{i}")).failed(1, at(i)))
        .collect();
    let mut c = ctx(
        JobFixture::new(Some(1), 1).backoff_limit(2).started(t0()),
        pods,
        at(10),
    );
    evaluate_finish(&mut c, at(10));
    let cond = c.finished_condition.clone().expect("finished");
    assert_eq!(cond.type_, "FailureTarget");
    assert_eq!(cond.reason.as_deref(), Some("BackoffLimitExceeded"));
    assert_eq!(
        cond.message.as_deref(),
        Some("Job has reached the specified backoff limit")
    );

    let plan = plan_tracking(&mut c, false, at(10));
    assert!(plan.needs_flush);
    assert_eq!(plan.pods_to_remove_finalizer.len(), 3);
    let status = c.job.status.clone().unwrap();
    let uncounted = status.uncounted_terminated_pods.unwrap();
    assert_eq!(uncounted.failed.unwrap().len(), 3);
    let conditions: Vec<&str> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.as_str())
        .collect();
    assert_eq!(conditions, ["FailureTarget"]);
    assert_eq!(
        c.finished_condition.as_ref().unwrap().type_,
        "Failed",
        "Failed comes next"
    );
    assert!(
        !enact_job_finished(&mut c, at(10)),
        "not before the uncounted pods are counted"
    );
}

#[test]
fn backoff_limit_equal_to_failures_keeps_retrying_after_the_delay() {
    let pods = vec![
        PodFixture::new("f0").failed(1, at(0)).counted(),
        PodFixture::new("f1").failed(1, at(20)),
    ];
    let previous = BackoffRecord {
        failures_after_last_success: 1,
        last_failure_time: Some(at(0)),
    };
    let job = JobFixture::new(Some(1), 1)
        .backoff_limit(2)
        .status(json!({"failed": 1}))
        .started(t0())
        .build();
    let mut c = new_sync_ctx(&job, arcs(pods), HashSet::new(), Some(previous), at(25));
    evaluate_finish(&mut c, at(25));
    assert!(
        c.finished_condition.is_none(),
        "2 failures, limit 2: not exceeded"
    );
    match manage_job(&c, at(25)).unwrap() {
        ManagePlan::Backoff(d) => assert_eq!(d, Duration::from_secs(15), "20 s after the 2nd failure"),
        other => panic!("waits, got {other:?}"),
    }
    assert!(matches!(manage_job(&c, at(40)).unwrap(), ManagePlan::Create(p) if p.len() == 1));
}

#[test]
fn the_deadline_fails_the_job_or_says_when_to_look_again() {
    let job = || JobFixture::new(Some(2), 2).deadline(30).started(t0());
    let mut c = ctx(job(), vec![PodFixture::new("a")], at(10));
    assert_eq!(evaluate_finish(&mut c, at(10)), Some(Duration::from_secs(20)));
    assert!(c.finished_condition.is_none());
    let mut c = ctx(job(), vec![PodFixture::new("a")], at(30));
    evaluate_finish(&mut c, at(30));
    let cond = c.finished_condition.expect("deadline passed");
    assert_eq!(cond.reason.as_deref(), Some("DeadlineExceeded"));
    assert_eq!(
        cond.message.as_deref(),
        Some("Job was active longer than specified deadline")
    );
    let mut c = ctx(job().suspended(true), vec![], at(100));
    assert_eq!(
        evaluate_finish(&mut c, at(100)),
        None,
        "no deadline while suspended"
    );
    assert!(c.finished_condition.is_none());
}

#[test]
fn a_fail_job_rule_fails_at_once_with_its_message() {
    let job = JobFixture::new(Some(3), 1).pod_failure_policy(json!({"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}));
    let mut c = ctx(job, vec![PodFixture::new("pi-x").failed(42, at(1))], at(2));
    evaluate_finish(&mut c, at(2));
    let cond = c.finished_condition.expect("failed");
    assert_eq!(
        (cond.type_.as_str(), cond.reason.as_deref()),
        ("FailureTarget", Some("PodFailurePolicy"))
    );
    assert_eq!(
        cond.message.as_deref(),
        Some("Container main for pod default/pi-x failed with exit code 42 matching FailJob rule at index 0")
    );
}

#[test]
fn ignored_failures_do_not_count_toward_the_backoff_limit() {
    let job = JobFixture::new(Some(1), 1)
        .backoff_limit(0)
        .pod_failure_policy(json!({"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [137]}}]}));
    let mut c = ctx(job, vec![PodFixture::new("a").failed(137, at(1))], at(2));
    assert_eq!(c.failed, 0);
    evaluate_finish(&mut c, at(2));
    assert!(c.finished_condition.is_none());
    let plan = plan_tracking(&mut c, false, at(2));
    assert_eq!(
        plan.pods_to_remove_finalizer.len(),
        1,
        "its finalizer still comes off"
    );
    assert!(
        c.job
            .status
            .unwrap()
            .uncounted_terminated_pods
            .unwrap()
            .failed
            .is_none()
    );
}

#[test]
fn on_failure_restarts_count_against_the_backoff_limit() {
    let job = || {
        JobFixture::new(Some(1), 1)
            .backoff_limit(2)
            .restart_policy("OnFailure")
    };
    let restarted = |n: i32| {
        let mut p = PodFixture::new("a");
        p.0.status.as_mut().unwrap().container_statuses = Some(vec![
            serde_json::from_value(
                json!({"name": "main", "image": "x", "imageID": "", "ready": false,
                "restartCount": n}),
            )
            .unwrap(),
        ]);
        p
    };
    let mut c = ctx(job(), vec![restarted(1)], t0());
    evaluate_finish(&mut c, t0());
    assert!(c.finished_condition.is_none());
    let mut c = ctx(job(), vec![restarted(2)], t0());
    evaluate_finish(&mut c, t0());
    assert_eq!(
        c.finished_condition.unwrap().reason.as_deref(),
        Some("BackoffLimitExceeded")
    );
}

#[test]
fn too_many_active_pods_are_deleted_least_advanced_first() {
    let pods = vec![
        PodFixture::new("ready").ready(),
        PodFixture::new("pending").pending(),
        PodFixture::new("running"),
    ];
    let c = ctx(JobFixture::new(Some(5), 1), pods, t0());
    let ManagePlan::Delete(rm) = manage_job(&c, t0()).unwrap() else {
        panic!("deletes")
    };
    assert_eq!(names(&rm), ["pending", "running"]);
}

#[test]
fn a_suspended_job_deletes_every_active_pod_and_gets_the_condition() {
    let pods = vec![
        PodFixture::new("a"),
        PodFixture::new("b"),
        PodFixture::new("done").succeeded(t0()),
    ];
    let mut c = ctx(JobFixture::new(Some(5), 2).suspended(true), pods, at(1));
    assert!(
        c.job.status.as_ref().unwrap().start_time.is_none(),
        "no startTime while suspended"
    );
    let ManagePlan::Delete(rm) = manage_job(&c, at(1)).unwrap() else {
        panic!("deletes")
    };
    assert_eq!(names(&rm), ["a", "b"]);
    c.active = 0;
    let check = check_completion(&mut c, true, at(1));
    assert_eq!(check.event, Some(("Suspended", "Job suspended")));
    let cond = &c.job.status.as_ref().unwrap().conditions.as_ref().unwrap()[0];
    assert_eq!((cond.type_.as_str(), cond.status.as_str()), ("Suspended", "True"));
    assert_eq!(cond.reason.as_deref(), Some("JobSuspended"));
    assert_eq!(check_completion(&mut c, true, at(2)).event, None, "once");
}

#[test]
fn resuming_resets_start_time() {
    let job = JobFixture::new(Some(5), 2).started(t0()).status(json!({
        "startTime": t0().to_string(),
        "conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended", "message": "Job suspended"}],
    }));
    let mut c = ctx(job, vec![], at(60));
    let check = check_completion(&mut c, true, at(60));
    assert_eq!(check.event, Some(("Resumed", "Job resumed")));
    let status = c.job.status.as_ref().unwrap();
    assert_eq!(status.start_time.as_ref().unwrap().0, at(60));
    assert_eq!(
        status.conditions.as_ref().unwrap()[0].reason.as_deref(),
        Some("JobResumed")
    );
}

#[test]
fn enough_successes_complete_the_job_in_one_sync() {
    let pods = (0..3)
        .map(|i| PodFixture::new(&format!("s{i}")).succeeded(at(i)))
        .collect();
    let mut c = ctx(JobFixture::new(Some(3), 2).started(t0()), pods, at(5));
    evaluate_finish(&mut c, at(5));
    assert!(matches!(manage_job(&c, at(5)).unwrap(), ManagePlan::Nothing));
    check_completion(&mut c, true, at(5));
    let cond = c.finished_condition.clone().unwrap();
    assert_eq!(cond.type_, "SuccessCriteriaMet");
    assert_eq!(cond.reason.as_deref(), Some("CompletionsReached"));

    let plan = plan_tracking(&mut c, false, at(5));
    assert_eq!(plan.pods_to_remove_finalizer.len(), 3);
    let status = c.job.status.clone().unwrap();
    assert_eq!(
        status.uncounted_terminated_pods.unwrap().succeeded.unwrap().len(),
        3
    );
    // The sync removed the finalizers: the uids move to the counter.
    let no_finalizers = HashSet::new();
    let job_status = c.job.status.as_mut().unwrap();
    assert!(crate::job::tracking::clean_uncounted_pods_without_finalizers(
        job_status,
        &no_finalizers
    ));
    assert!(enact_job_finished(&mut c, at(5)));
    let status = c.job.status.clone().unwrap();
    assert_eq!(status.succeeded, Some(3));
    let conditions: Vec<(&str, Option<&str>)> = status
        .conditions
        .iter()
        .flatten()
        .map(|c| (c.type_.as_str(), c.reason.as_deref()))
        .collect();
    assert_eq!(
        conditions,
        [
            ("SuccessCriteriaMet", Some("CompletionsReached")),
            ("Complete", Some("CompletionsReached"))
        ]
    );
    assert_eq!(status.completion_time.unwrap().0, at(5));
}

#[test]
fn terminating_pods_hold_back_the_terminal_condition() {
    let job = || {
        JobFixture::new(Some(1), 1).started(t0()).status(json!({
            "startTime": t0().to_string(),
            "conditions": [{"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded",
                            "message": "Job was active longer than specified deadline"}],
        }))
    };
    let mut c = ctx(job(), vec![PodFixture::new("a").deleting(at(1)).counted()], at(2));
    evaluate_finish(&mut c, at(2));
    assert_eq!(c.finished_condition.as_ref().unwrap().type_, "Failed");
    assert_eq!(c.terminating, 1);
    plan_tracking(&mut c, false, at(2));
    assert!(!enact_job_finished(&mut c, at(2)), "a pod is still terminating");
    let mut c = ctx(job(), vec![], at(3));
    evaluate_finish(&mut c, at(3));
    plan_tracking(&mut c, false, at(3));
    assert!(enact_job_finished(&mut c, at(3)));
    let failed = c
        .job
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Failed")
        .unwrap();
    assert_eq!(failed.reason.as_deref(), Some("DeadlineExceeded"));
}

#[test]
fn an_indexed_job_creates_the_lowest_pending_indexes() {
    let job = JobFixture::new(Some(5), 3)
        .indexed()
        .status(json!({"completedIndexes": "0"}));
    let pods = vec![
        PodFixture::new("pi-1").index(1),
        PodFixture::new("pi-2-x").index(2).succeeded(at(1)),
    ];
    let mut c = ctx(job, pods, at(2));
    evaluate_finish(&mut c, at(2));
    assert_eq!(c.succeeded_indexes.to_string(), "0,2");
    let ManagePlan::Create(pods) = manage_job(&c, at(2)).unwrap() else {
        panic!("creates")
    };
    let got: Vec<(String, String, String)> = pods
        .iter()
        .map(|p| {
            let ix = p.metadata.annotations.as_ref().unwrap()[COMPLETION_INDEX_ANNOTATION].clone();
            let label = p.metadata.labels.as_ref().unwrap()[COMPLETION_INDEX_ANNOTATION].clone();
            assert_eq!(ix, label);
            let host = p.spec.as_ref().unwrap().hostname.clone().unwrap();
            (ix, p.metadata.generate_name.clone().unwrap(), host)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("3".to_string(), "pi-3-".to_string(), "pi-3".to_string()),
            ("4".to_string(), "pi-4-".to_string(), "pi-4".to_string()),
        ]
    );
    let env = &pods[0].spec.as_ref().unwrap().containers[0].env.as_ref().unwrap()[0];
    assert_eq!(env.name, "JOB_COMPLETION_INDEX");

    let plan = plan_tracking(&mut c, false, at(2));
    assert!(plan.needs_flush);
    assert_eq!(
        c.job.status.as_ref().unwrap().completed_indexes.as_deref(),
        Some("0,2")
    );
    assert_eq!(c.job.status.as_ref().unwrap().succeeded, Some(2));
}

#[test]
fn backoff_limit_per_index_fails_an_index_and_keeps_its_last_pod_until_replaced() {
    let job = || {
        JobFixture::new(Some(3), 3)
            .indexed()
            .backoff_limit_per_index(1)
            .started(t0())
    };
    // First failure of index 0: the pod stays (finalizer kept) until its replacement exists.
    let mut c = ctx(job(), vec![PodFixture::new("a").index(0).failed(1, at(1))], at(1));
    evaluate_finish(&mut c, at(1));
    assert!(c.finished_condition.is_none());
    assert_eq!(c.failed_indexes.as_ref().unwrap().to_string(), "");
    assert!(c.pods_with_delayed_deletion_per_index.contains_key(&0));
    match manage_job(&c, at(1)).unwrap() {
        ManagePlan::Create(pods) => {
            let ix: Vec<&str> = pods
                .iter()
                .map(|p| p.metadata.annotations.as_ref().unwrap()[COMPLETION_INDEX_ANNOTATION].as_str())
                .collect();
            assert_eq!(ix, ["1", "2"], "index 0 waits for its backoff");
        }
        other => panic!("creates the other indexes, got {other:?}"),
    }
    let ManagePlan::Create(pods) = manage_job(&c, at(11)).unwrap() else {
        panic!("creates")
    };
    let zero = pods
        .iter()
        .find(|p| p.metadata.annotations.as_ref().unwrap()[COMPLETION_INDEX_ANNOTATION] == "0")
        .expect("index 0 after 10 s");
    assert_eq!(
        zero.metadata.annotations.as_ref().unwrap()[INDEX_FAILURE_COUNT_ANNOTATION],
        "1"
    );
    let plan = plan_tracking(&mut c, false, at(1));
    assert!(
        plan.pods_to_remove_finalizer.is_empty(),
        "the failed pod waits for its replacement"
    );

    // The replacement fails too: its count (1) reaches the limit, the index fails.
    let retry = PodFixture::new("b")
        .index(0)
        .annotation(INDEX_FAILURE_COUNT_ANNOTATION, "1")
        .failed(1, at(20));
    let others = vec![
        PodFixture::new("c").index(1).succeeded(at(5)),
        PodFixture::new("d").index(2).succeeded(at(5)),
    ];
    let mut pods = vec![retry, PodFixture::new("a").index(0).failed(1, at(1)).counted()];
    pods.extend(others);
    let mut c = ctx(job(), pods, at(21));
    evaluate_finish(&mut c, at(21));
    assert_eq!(c.failed_indexes.as_ref().unwrap().to_string(), "0");
    let cond = c
        .finished_condition
        .clone()
        .expect("every index finished, one failed");
    assert_eq!(cond.reason.as_deref(), Some("FailedIndexes"));
    assert_eq!(cond.message.as_deref(), Some("Job has failed indexes"));
    plan_tracking(&mut c, false, at(21));
    assert_eq!(
        c.job.status.as_ref().unwrap().failed_indexes.as_deref(),
        Some("0")
    );
}

#[test]
fn a_success_policy_finishes_an_indexed_job_early() {
    let mut job = JobFixture::new(Some(5), 5).indexed().started(t0());
    job.0.spec.as_mut().unwrap().success_policy =
        Some(serde_json::from_value(json!({"rules": [{"succeededIndexes": "0"}]})).unwrap());
    let pods = vec![
        PodFixture::new("leader").index(0).succeeded(at(3)),
        PodFixture::new("w").index(1),
    ];
    let mut c = ctx(job, pods, at(4));
    evaluate_finish(&mut c, at(4));
    let cond = c.finished_condition.clone().expect("met");
    assert_eq!(cond.type_, "SuccessCriteriaMet");
    assert_eq!(cond.reason.as_deref(), Some("SuccessPolicy"));
    assert_eq!(cond.message.as_deref(), Some("Matched rules at index 0"));
}
