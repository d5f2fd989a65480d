use k8s_openapi::api::apps::v1::ReplicaSetStatus;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::fixtures::{now, pod, rs, t};
use crate::replicaset::status::*;

fn pods() -> Vec<Pod> {
    vec![
        pod("ready-long").running().ready_since(t(-100)).build(),
        pod("ready-10s").running().ready_since(t(-10)).build(),
        pod("not-ready").running().not_ready_since(t(-10)).build(),
        pod("extra-labels").labels(&[("app", "web"), ("x", "y")]).build(),
        pod("missing-label").labels(&[("x", "y")]).build(),
    ]
}

#[test]
fn counts_with_and_without_min_ready_seconds() {
    let cases = [(0, 2), (10, 2), (11, 1), (100, 1), (101, 0)];
    for (min_ready, want_available) in cases {
        let set = rs("web").min_ready_seconds(min_ready).build();
        let counts = count_pods(&set, &pods(), now());
        let want = PodCounts {
            replicas: 5,
            fully_labeled: 4,
            ready: 2,
            available: want_available,
        };
        assert_eq!(counts, want, "minReadySeconds {min_ready}");
    }
}

#[test]
fn fully_labeled_needs_every_template_label() {
    let set = rs("web").template_labels(&[("app", "web"), ("x", "y")]).build();
    assert_eq!(count_pods(&set, &pods(), now()).fully_labeled, 1);
}

#[test]
fn status_fields_and_omitted_zeroes() {
    let set = rs("web").generation(7).build();
    let status = calculate_status(&set, &pods(), None, now());
    assert_eq!(status.replicas, 5);
    assert_eq!(status.fully_labeled_replicas, Some(4));
    assert_eq!(status.ready_replicas, Some(2));
    assert_eq!(status.available_replicas, Some(2));
    assert_eq!(status.observed_generation, Some(7));
    assert_eq!(status.conditions, None);
    let empty = calculate_status(&set, &Vec::<Pod>::new(), None, now());
    assert_eq!(
        (empty.replicas, empty.ready_replicas, empty.available_replicas),
        (0, None, None)
    );
}

#[test]
fn replica_failure_reason_follows_the_direction() {
    let cases = [(10, FAILED_CREATE), (1, FAILED_DELETE)];
    for (replicas, reason) in cases {
        let set = rs("web").replicas(replicas).build();
        let status = calculate_status(&set, &pods(), Some("quota exceeded"), now());
        let cond = get_condition(&status, REPLICA_FAILURE).expect("condition added");
        assert_eq!(cond.status, "True");
        assert_eq!(cond.reason.as_deref(), Some(reason));
        assert_eq!(cond.message.as_deref(), Some("quota exceeded"));
        assert_eq!(cond.last_transition_time, Some(Time(now())));
    }
}

fn with_failure(since: jiff::Timestamp) -> ReplicaSetStatus {
    let mut status = ReplicaSetStatus::default();
    set_condition(
        &mut status,
        new_condition(REPLICA_FAILURE, "True", FAILED_CREATE, "old error", since),
    );
    set_condition(&mut status, new_condition("Other", "True", "", "", since));
    status
}

#[test]
fn existing_failure_is_kept_on_error_and_removed_on_success() {
    let set = rs("web").replicas(10).status(with_failure(t(-300))).build();
    let still_failing = calculate_status(&set, &pods(), Some("new error"), now());
    let cond = get_condition(&still_failing, REPLICA_FAILURE).expect("kept");
    assert_eq!(
        cond.message.as_deref(),
        Some("old error"),
        "an existing condition is not rewritten"
    );
    assert_eq!(cond.last_transition_time, Some(Time(t(-300))));
    let recovered = calculate_status(&set, &pods(), None, now());
    assert!(get_condition(&recovered, REPLICA_FAILURE).is_none());
    assert!(
        get_condition(&recovered, "Other").is_some(),
        "other conditions survive"
    );
}

#[test]
fn set_condition_keeps_same_status_and_reason_and_remove_empties_the_list() {
    let mut status = with_failure(t(-300));
    set_condition(
        &mut status,
        new_condition(REPLICA_FAILURE, "True", FAILED_CREATE, "changed", now()),
    );
    assert_eq!(
        get_condition(&status, REPLICA_FAILURE).and_then(|c| c.message.as_deref()),
        Some("old error")
    );
    set_condition(
        &mut status,
        new_condition(REPLICA_FAILURE, "True", FAILED_DELETE, "changed", now()),
    );
    assert_eq!(
        get_condition(&status, REPLICA_FAILURE).and_then(|c| c.message.as_deref()),
        Some("changed")
    );
    remove_condition(&mut status, REPLICA_FAILURE);
    remove_condition(&mut status, "Other");
    assert_eq!(status.conditions, None);
}

#[test]
fn status_write_is_skipped_only_in_the_steady_state() {
    let set = rs("web").generation(2).build();
    let fresh = calculate_status(&set, &pods(), None, now());
    assert!(status_needs_update(&set, &fresh), "nothing written yet");
    let steady = rs("web").generation(2).status(fresh.clone()).build();
    assert!(!status_needs_update(
        &steady,
        &calculate_status(&steady, &pods(), None, now())
    ));
    let bumped = rs("web").generation(3).status(fresh.clone()).build();
    assert!(
        status_needs_update(&bumped, &calculate_status(&bumped, &pods(), None, now())),
        "new generation"
    );
    let failing = calculate_status(&steady, &pods(), Some("boom"), now());
    assert!(status_needs_update(&steady, &failing), "condition changed");
}

#[test]
fn requeue_while_waiting_for_min_ready_seconds() {
    let ready_pods = [
        pod("a").ready_since(t(-5)).build(),
        pod("b").ready_since(t(-5)).build(),
    ];
    let waiting = rs("web").replicas(2).min_ready_seconds(30).build();
    let status = calculate_status(&waiting, &ready_pods, None, now());
    let secs = availability_requeue_after(&waiting, &status, true).map(|d| d.as_secs());
    assert_eq!(secs, Some(30));
    assert_eq!(
        availability_requeue_after(&waiting, &status, false),
        None,
        "not after a failed manage"
    );
    let no_min = rs("web").replicas(2).build();
    let status = calculate_status(&no_min, &ready_pods, None, now());
    assert_eq!(availability_requeue_after(&no_min, &status, true), None);
    let later = calculate_status(&waiting, &ready_pods, None, t(60));
    assert_eq!(
        availability_requeue_after(&waiting, &later, true),
        None,
        "all available"
    );
}
