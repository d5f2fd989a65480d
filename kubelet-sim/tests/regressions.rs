//! Named regression tests for defects found and fixed in the simulated kubelet, each with a short
//! postmortem. They exercise the pure parts the kubelet's loop is made of (no sockets, no timing).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use kubelet_sim::run::{HEARTBEAT_PERIOD, heartbeat_period};
use kubelet_sim::status_cache::WrittenStatuses;
use kubelet_sim::{Behaviour, next};
use serde_json::json;
use store::Clock;

const KEY: &str = "default/web";

fn t0() -> Timestamp {
    "2024-01-01T00:00:00Z".parse().expect("valid timestamp")
}

/// A pod bound to `node-1`, as the informer would show it at `resource_version`.
fn bound_pod(resource_version: u64) -> Pod {
    serde_json::from_value(json!({
        "metadata": {
            "name": "web", "namespace": "default", "uid": "uid-web",
            "resourceVersion": resource_version.to_string(),
        },
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx:1.27"}]},
    }))
    .expect("pod")
}

fn reasons(step: &kubelet_sim::Step) -> Vec<&str> {
    step.events.iter().map(|e| e.reason.as_str()).collect()
}

/// What the API server returns for the kubelet's status write: the pod with that status at the
/// next resourceVersion.
fn written(mut pod: Pod, step: &kubelet_sim::Step, resource_version: u64) -> Pod {
    pod.status = step.status.clone();
    pod.metadata.resource_version = Some(resource_version.to_string());
    pod
}

/// Postmortem: the kubelet decides each pod's next lifecycle step from the pod's own status, and it
/// read the pod from its informer cache. Under load the cache lags the kubelet's own status writes by
/// a few events, so a sync right after a write saw the pod as it was before it: the kubelet took the
/// same step again (a second `Pulling`, a second `Created`/`Started`) and wrote a status that went
/// back in time. Fix: the kubelet remembers the status it last wrote per pod
/// ([`WrittenStatuses`], upstream's status manager cache) and syncs from the newer of that and the
/// cache, by resourceVersion, dropping the entry once the cache has caught up.
#[test]
fn kubelet_does_not_replay_lifecycle_steps_from_a_stale_cache() {
    let statuses = WrittenStatuses::default();
    let stale = Arc::new(bound_pod(5));
    let behaviour = Behaviour::for_pod(&stale, 0);

    // First sync: the pull starts, and the status saying so is written (resourceVersion 6).
    let first = next(&statuses.latest(KEY, stale.clone()), &behaviour, t0());
    assert_eq!(reasons(&first), ["Pulling"]);
    statuses.record(KEY, written(Pod::clone(&stale), &first, 6));

    // What the old code did: sync from the stale cache, and pull again.
    let replayed = next(&stale, &behaviour, t0() + SignedDuration::from_millis(100));
    assert_eq!(
        reasons(&replayed),
        ["Pulling"],
        "the stale pod on its own replays the step"
    );

    // The fix: the same stale cache, but the written status wins. Nothing is repeated.
    let pod = statuses.latest(KEY, stale.clone());
    let again = next(&pod, &behaviour, t0() + SignedDuration::from_millis(100));
    assert!(
        !reasons(&again).contains(&"Pulling"),
        "replayed {:?}",
        reasons(&again)
    );

    // Past pull and start: the container starts once; with the cache still at 5, a later sync
    // does not create or start it a second time, nor move the status back.
    let later = t0() + SignedDuration::from_secs(10);
    let started = next(&pod, &behaviour, later);
    let started_reasons = reasons(&started);
    assert!(
        started_reasons.contains(&"Created") && started_reasons.contains(&"Started"),
        "{started_reasons:?}"
    );
    statuses.record(KEY, written(Pod::clone(&pod), &started, 7));
    let pod = statuses.latest(KEY, stale.clone());
    let after = next(&pod, &behaviour, later + SignedDuration::from_millis(100));
    for reason in ["Pulling", "Pulled", "Created", "Started"] {
        assert!(
            !reasons(&after).contains(&reason),
            "{reason} replayed: {:?}",
            reasons(&after)
        );
    }
    let phase = |p: &Pod| p.status.as_ref().and_then(|s| s.phase.clone());
    assert_eq!(phase(&pod).as_deref(), Some("Running"));

    // Once the cache shows the kubelet's write, the cache is used again.
    let caught_up = Arc::new(written(Pod::clone(&pod), &started, 8));
    let synced = statuses.latest(KEY, caught_up);
    assert_eq!(synced.metadata.resource_version.as_deref(), Some("8"));
}

/// Postmortem: each simulated node refreshed its status and its Lease every 10 s of simulated time.
/// At `--time-scale 1000` that is every 10 ms of real time per node: each node wrote its status and
/// its Lease a hundred times a second, crowding out everything else at high time scales. Fix: the heartbeat period is 10 simulated seconds but never less than one real
/// second ([`heartbeat_period`]); the node lifecycle controller keeps its grace periods above a few real seconds for the same reason.
#[test]
fn heartbeats_are_at_most_once_per_real_second_at_high_time_scale() {
    for scale in [1.0, 10.0, 100.0, 1000.0, 10_000.0] {
        let clock = Clock::starting_at(SystemTime::UNIX_EPOCH, scale);
        let period = heartbeat_period(&clock);
        assert!(
            clock.real_duration(period) >= Duration::from_secs(1),
            "scale {scale}: a heartbeat every {:?} of real time",
            clock.real_duration(period)
        );
        assert!(
            period >= HEARTBEAT_PERIOD,
            "scale {scale}: never more often than upstream's 10 s"
        );
    }
    // At real time it is upstream's nodeStatusUpdateFrequency.
    let real_time = Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0);
    assert_eq!(heartbeat_period(&real_time), HEARTBEAT_PERIOD);
}
