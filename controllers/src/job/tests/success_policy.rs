//! Success policies of Indexed Jobs (cases after upstream's `success_policy_test.go`).

use k8s_openapi::api::batch::v1::SuccessPolicy;
use serde_json::json;

use crate::job::indexed::parse_indexes_from_string;
use crate::job::success_policy::match_success_policy;

fn policy(rules: serde_json::Value) -> SuccessPolicy {
    serde_json::from_value(json!({ "rules": rules })).unwrap()
}

#[test]
fn rules_by_indexes_by_count_and_both() {
    let succeeded = parse_indexes_from_string("0-2,4", 10);
    let cases = [
        (
            json!([{"succeededIndexes": "0-2"}]),
            Some("Matched rules at index 0"),
        ),
        (json!([{"succeededIndexes": "0-3"}]), None),
        (
            json!([{"succeededIndexes": "0-3", "succeededCount": 3}]),
            Some("Matched rules at index 0"),
        ),
        (
            json!([{"succeededCount": 5}, {"succeededCount": 4}]),
            Some("Matched rules at index 1"),
        ),
        (
            json!([{"succeededIndexes": "5-9"}, {"succeededIndexes": "4"}]),
            Some("Matched rules at index 1"),
        ),
        (json!([{"succeededIndexes": "x"}]), None),
    ];
    for (rules, want) in cases {
        let p = policy(rules.clone());
        assert_eq!(
            match_success_policy(Some(&p), 10, &succeeded).as_deref(),
            want,
            "{rules}"
        );
    }
    let p = policy(json!([{"succeededCount": 1}]));
    assert_eq!(
        match_success_policy(Some(&p), 10, &parse_indexes_from_string("", 10)),
        None
    );
    assert_eq!(match_success_policy(None, 10, &succeeded), None);
}
