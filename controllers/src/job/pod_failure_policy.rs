//! Matching a failed pod against `spec.podFailurePolicy`: the first matching rule decides whether
//! the failure fails the whole Job (`FailJob`), fails its index (`FailIndex`), is not counted against
//! `backoffLimit` (`Ignore`) or is counted as usual (`Count`); no match counts as usual.
//!
//! Upstream: `pkg/controller/job/pod_failure_policy.go` (`matchPodFailurePolicy`, `matchOnExitCodes`,
//! `matchOnPodConditions`, `getMatchingContainerFromList`, `isOnExitCodesOperatorMatching`).
//!
//! A rule's `onExitCodes` looks at the terminated containers with a non-zero exit code, regular
//! containers first, then init containers, optionally only the one named by `containerName`; the
//! first whose code is (`In`) or is not (`NotIn`) in `values` matches. `onPodConditions` matches a
//! pod condition of the given type and status. Rules are tried in order.

use k8s_openapi::api::batch::v1::{PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement};
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition};

/// The action of a matched rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodFailurePolicyAction {
    /// Fail the Job at once.
    FailJob,
    /// Fail the pod's index (Indexed Jobs with `backoffLimitPerIndex`).
    FailIndex,
    /// Do not count the failure.
    Ignore,
    /// Count the failure as usual.
    Count,
}

/// What matching one failed pod found (upstream's three return values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyMatch {
    /// The Job failure message, when a `FailJob` rule matched.
    pub fail_job_message: Option<String>,
    /// Whether the failure counts towards `backoffLimit` / `backoffLimitPerIndex` (false for `Ignore`).
    pub count_failed: bool,
    /// The action of the matched rule, if one matched.
    pub action: Option<PodFailurePolicyAction>,
}

impl PolicyMatch {
    fn no_match() -> Self {
        PolicyMatch {
            fail_job_message: None,
            count_failed: true,
            action: None,
        }
    }

    fn action(action: PodFailurePolicyAction) -> Self {
        PolicyMatch {
            fail_job_message: None,
            count_failed: action != PodFailurePolicyAction::Ignore,
            action: Some(action),
        }
    }
}

/// Upstream `matchPodFailurePolicy` for one failed pod. An unknown action string makes the rule
/// match nothing (upstream's switch falls through to the next rule).
pub fn match_pod_failure_policy(policy: &PodFailurePolicy, pod: &Pod) -> PolicyMatch {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
    let name = pod.metadata.name.as_deref().unwrap_or("");
    for (index, rule) in policy.rules.iter().enumerate() {
        let action = match rule.action.as_str() {
            "FailJob" => PodFailurePolicyAction::FailJob,
            "FailIndex" => PodFailurePolicyAction::FailIndex,
            "Ignore" => PodFailurePolicyAction::Ignore,
            "Count" => PodFailurePolicyAction::Count,
            _ => continue,
        };
        let message = if let Some(requirement) = &rule.on_exit_codes {
            let Some(container) = match_on_exit_codes(pod, requirement) else {
                continue;
            };
            let code = container
                .state
                .as_ref()
                .and_then(|s| s.terminated.as_ref())
                .map_or(0, |t| t.exit_code);
            format!(
                "Container {} for pod {namespace}/{name} failed with exit code {code} matching {} rule at index {index}",
                container.name, rule.action
            )
        } else if let Some(patterns) = &rule.on_pod_conditions {
            let Some(condition) = match_on_pod_conditions(pod, patterns) else {
                continue;
            };
            format!(
                "Pod {namespace}/{name} has condition {} matching {} rule at index {index}",
                condition.type_, rule.action
            )
        } else {
            continue;
        };
        if action == PodFailurePolicyAction::FailJob {
            return PolicyMatch {
                fail_job_message: Some(message),
                count_failed: true,
                action: Some(action),
            };
        }
        return PolicyMatch::action(action);
    }
    PolicyMatch::no_match()
}

/// Upstream `matchOnExitCodes`: the first matching terminated container, regular ones before init ones.
pub fn match_on_exit_codes<'a>(
    pod: &'a Pod,
    requirement: &PodFailurePolicyOnExitCodesRequirement,
) -> Option<&'a ContainerStatus> {
    let status = pod.status.as_ref()?;
    let regular = status.container_statuses.iter().flatten();
    let init = status.init_container_statuses.iter().flatten();
    regular.chain(init).find(|c| container_matches(c, requirement))
}

fn container_matches(status: &ContainerStatus, requirement: &PodFailurePolicyOnExitCodesRequirement) -> bool {
    let Some(terminated) = status.state.as_ref().and_then(|s| s.terminated.as_ref()) else {
        return false;
    };
    if requirement
        .container_name
        .as_ref()
        .is_some_and(|name| *name != status.name)
    {
        return false;
    }
    terminated.exit_code != 0 && is_on_exit_codes_operator_matching(terminated.exit_code, requirement)
}

/// Upstream `isOnExitCodesOperatorMatching`: `In` / `NotIn` over `values`; any other operator never matches.
pub fn is_on_exit_codes_operator_matching(
    exit_code: i32,
    requirement: &PodFailurePolicyOnExitCodesRequirement,
) -> bool {
    let listed = requirement.values.contains(&exit_code);
    match requirement.operator.as_str() {
        "In" => listed,
        "NotIn" => !listed,
        _ => false,
    }
}

/// Upstream `matchOnPodConditions`: the first pod condition equal in type and status to a pattern.
pub fn match_on_pod_conditions<'a>(
    pod: &'a Pod,
    patterns: &[k8s_openapi::api::batch::v1::PodFailurePolicyOnPodConditionsPattern],
) -> Option<&'a PodCondition> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    conditions.iter().find(|c| {
        patterns
            .iter()
            .any(|p| p.type_ == c.type_ && p.status == c.status)
    })
}
