//! `spec.successPolicy` of an Indexed Job: the Job succeeds early once a rule's indexes (or a count of
//! them) succeeded; the remaining pods are then stopped.
//!
//! Upstream: `pkg/controller/job/success_policy.go` (`matchSuccessPolicy`,
//! `hasSuccessCriteriaMetCondition`, `isSuccessCriteriaMetCondition`, `matchSucceededIndexesRule`).
//!
//! A rule with `succeededIndexes` matches when all of those indexes succeeded, or, with
//! `succeededCount` too, when at least that many of them did; a rule with only `succeededCount`
//! matches when that many indexes succeeded. The first matching rule wins: its message is
//! `Matched rules at index <i>`.

use k8s_openapi::api::batch::v1::{Job, JobCondition, SuccessPolicy};

use super::indexed::{OrderedIntervals, parse_indexes_from_string};
use super::util::{SUCCESS_CRITERIA_MET, conditions, find_condition};

/// Upstream `matchSuccessPolicy`: the message of the first rule the succeeded indexes satisfy.
pub fn match_success_policy(
    policy: Option<&SuccessPolicy>,
    completions: i64,
    succeeded: &OrderedIntervals,
) -> Option<String> {
    let policy = policy?;
    if succeeded.is_empty() {
        return None;
    }
    for (index, rule) in policy.rules.iter().enumerate() {
        let matched = if let Some(indexes) = &rule.succeeded_indexes {
            let required = parse_indexes_from_string(indexes, completions);
            if required.is_empty() {
                continue;
            }
            match_succeeded_indexes_rule(&required, succeeded, rule.succeeded_count)
        } else if let Some(count) = rule.succeeded_count {
            succeeded.total() >= i64::from(count)
        } else {
            false
        };
        if matched {
            return Some(format!("Matched rules at index {index}"));
        }
    }
    None
}

/// Upstream `matchSucceededIndexesRule`: the rule's indexes all succeeded, or at least
/// `succeeded_count` of them did.
pub fn match_succeeded_indexes_rule(
    rule: &OrderedIntervals,
    succeeded: &OrderedIntervals,
    succeeded_count: Option<i32>,
) -> bool {
    let (r, s) = (&rule.0, &succeeded.0);
    let (mut i, mut j, mut contains) = (0, 0, 0i64);
    while i < r.len() && j < s.len() {
        let overlap = r[i].last.min(s[j].last) - r[i].first.max(s[j].first) + 1;
        if overlap > 0 {
            contains += overlap;
        }
        match s[j].last.cmp(&r[i].last) {
            std::cmp::Ordering::Less => j += 1,
            std::cmp::Ordering::Greater => i += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    contains == rule.total() || succeeded_count.is_some_and(|c| contains >= i64::from(c))
}

/// Upstream `hasSuccessCriteriaMetCondition`: the Job's `SuccessCriteriaMet=True` condition.
pub fn success_criteria_met_condition(job: &Job) -> Option<&JobCondition> {
    find_condition(conditions(job), SUCCESS_CRITERIA_MET).filter(|c| c.status == "True")
}

/// Upstream `isSuccessCriteriaMetCondition`.
pub fn is_success_criteria_met(condition: Option<&JobCondition>) -> bool {
    condition.is_some_and(|c| c.type_ == SUCCESS_CRITERIA_MET && c.status == "True")
}
