//! Matching failed pods against pod failure policies (cases after upstream's
//! `pod_failure_policy_test.go`), with upstream's messages.

use k8s_openapi::api::batch::v1::PodFailurePolicy;
use serde_json::json;

use super::fixtures::{PodFixture, at};
use crate::job::pod_failure_policy::{PodFailurePolicyAction, match_pod_failure_policy};

fn policy(rules: serde_json::Value) -> PodFailurePolicy {
    serde_json::from_value(json!({ "rules": rules })).unwrap()
}

#[test]
fn a_fail_job_rule_on_exit_codes_gives_upstreams_message() {
    let p = policy(json!([{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]));
    let pod = PodFixture::new("pi-abc").failed(42, at(0)).build();
    let m = match_pod_failure_policy(&p, &pod);
    assert_eq!(m.action, Some(PodFailurePolicyAction::FailJob));
    assert!(m.count_failed);
    assert_eq!(
        m.fail_job_message.as_deref(),
        Some(
            "Container main for pod default/pi-abc failed with exit code 42 matching FailJob rule at index 0"
        )
    );
    let other = PodFixture::new("pi-abc").failed(1, at(0)).build();
    let m = match_pod_failure_policy(&p, &other);
    assert_eq!((m.action, m.count_failed), (None, true), "no match: counted");
}

#[test]
fn rules_are_tried_in_order_and_the_first_match_wins() {
    let p = policy(json!([
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1, 2]}},
        {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [3]}},
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}},
    ]));
    let action = |code| match_pod_failure_policy(&p, &PodFixture::new("p").failed(code, at(0)).build());
    assert_eq!(action(1).action, Some(PodFailurePolicyAction::Ignore));
    assert!(!action(1).count_failed, "an ignored failure does not count");
    assert_eq!(action(5).action, Some(PodFailurePolicyAction::Count));
    let fail = action(3);
    assert_eq!(fail.action, Some(PodFailurePolicyAction::FailJob));
    assert!(
        fail.fail_job_message
            .unwrap()
            .ends_with("matching FailJob rule at index 2")
    );
}

#[test]
fn exit_code_zero_and_other_containers_never_match() {
    let p = policy(json!([{"action": "FailJob",
        "onExitCodes": {"containerName": "sidecar", "operator": "NotIn", "values": [7]}}]));
    let pod = PodFixture::new("p").failed(1, at(0)).build();
    assert_eq!(
        match_pod_failure_policy(&p, &pod).action,
        None,
        "the rule names another container"
    );
    let any = policy(json!([{"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [7]}}]));
    let ok = PodFixture::new("p").succeeded(at(0)).build();
    assert_eq!(
        match_pod_failure_policy(&any, &ok).action,
        None,
        "exit code 0 is no failure"
    );
}

#[test]
fn pod_conditions_match_by_type_and_status() {
    let p = policy(json!([
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "FailIndex", "onPodConditions": [{"type": "ConfigIssue", "status": "True"}]},
        {"action": "FailJob", "onPodConditions": [{"type": "Fatal", "status": "True"}]},
    ]));
    let with = |type_: &str, status: &str| {
        let mut pod = PodFixture::new("p").failed(1, at(0)).build();
        pod.status.as_mut().unwrap().conditions = Some(vec![
            serde_json::from_value(json!({"type": type_, "status": status})).unwrap(),
        ]);
        match_pod_failure_policy(&p, &pod)
    };
    assert_eq!(
        with("DisruptionTarget", "True").action,
        Some(PodFailurePolicyAction::Ignore)
    );
    assert_eq!(with("DisruptionTarget", "False").action, None);
    assert_eq!(
        with("ConfigIssue", "True").action,
        Some(PodFailurePolicyAction::FailIndex)
    );
    assert_eq!(
        with("Fatal", "True").fail_job_message.as_deref(),
        Some("Pod default/p has condition Fatal matching FailJob rule at index 2")
    );
}
