//! Does one policy rule allow a request? Pure functions over the rule and
//! the request's attributes.
//!
//! Upstream: `pkg/apis/rbac/v1/evaluation_helpers.go` (`RuleAllows`,
//! `VerbMatches`, `APIGroupMatches`, `ResourceMatches`,
//! `ResourceNameMatches`, `NonResourceURLMatches`).

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::auth::authorizer::Attributes;

/// `*` in verbs, apiGroups, resources and nonResourceURLs.
const ALL: &str = "*";

/// Upstream `RuleAllows`: a resource request needs a matching verb, API
/// group, resource (`pods`, `pods/log`, `*` or `*/log`) and, when the rule
/// names objects, a matching name; a path needs a matching verb and URL.
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if !verb_matches(rule, &attrs.verb) {
        return false;
    }
    if !attrs.resource_request {
        return non_resource_url_matches(rule, &attrs.path);
    }
    let combined = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    api_group_matches(rule, &attrs.api_group)
        && resource_matches(rule, &combined, &attrs.subresource)
        && resource_name_matches(rule, &attrs.name)
}

fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or_default()
}

fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == ALL || v == verb)
}

fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    list(&rule.api_groups).iter().any(|g| g == ALL || g == group)
}

/// `*`, the exact `resource/subresource`, or `*/subresource`.
fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    list(&rule.resources).iter().any(|r| {
        r == ALL || r == combined || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource))
    })
}

/// No names in the rule: every object; otherwise only those.
fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    let names = list(&rule.resource_names);
    names.is_empty() || names.iter().any(|n| n == name)
}

/// `*`, the exact path, or a prefix ending in `*` (`/apis/*`).
fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    list(&rule.non_resource_urls).iter().any(|u| {
        u == ALL
            || u == path
            || u.strip_suffix('*')
                .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Option<Vec<String>> {
        Some(v.iter().map(|s| s.to_string()).collect())
    }

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        PolicyRule {
            verbs: strings(verbs).unwrap_or_default(),
            api_groups: strings(groups),
            resources: strings(resources),
            resource_names: (!names.is_empty()).then(|| strings(names).unwrap_or_default()),
            non_resource_urls: None,
        }
    }

    fn request(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.into(),
            ..Attributes::default()
        }
    }

    #[test]
    fn resource_rules() {
        let pods = rule(&["get", "list"], &[""], &["pods"], &[]);
        assert!(rule_allows(&request("list", "", "pods", "", ""), &pods));
        assert!(!rule_allows(&request("delete", "", "pods", "", "p"), &pods));
        assert!(!rule_allows(&request("get", "apps", "pods", "", "p"), &pods));
        assert!(
            !rule_allows(&request("get", "", "pods", "log", "p"), &pods),
            "a subresource is not the resource"
        );
        let logs = rule(&["get"], &[""], &["pods/log"], &[]);
        assert!(rule_allows(&request("get", "", "pods", "log", "p"), &logs));
        let any_status = rule(&["*"], &["*"], &["*/status"], &[]);
        assert!(rule_allows(
            &request("update", "apps", "deployments", "status", "d"),
            &any_status
        ));
        assert!(!rule_allows(
            &request("update", "apps", "deployments", "scale", "d"),
            &any_status
        ));
        assert!(!rule_allows(
            &request("update", "apps", "deployments", "", "d"),
            &any_status
        ));
        let named = rule(&["get"], &[""], &["configmaps"], &["cfg"]);
        assert!(rule_allows(&request("get", "", "configmaps", "", "cfg"), &named));
        assert!(!rule_allows(
            &request("get", "", "configmaps", "", "other"),
            &named
        ));
        assert!(!rule_allows(&request("list", "", "configmaps", "", ""), &named));
    }

    #[test]
    fn non_resource_rules() {
        let r = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: strings(&["/healthz", "/apis/*"]),
            ..PolicyRule::default()
        };
        let path = |verb: &str, p: &str| Attributes {
            verb: verb.into(),
            path: p.into(),
            ..Attributes::default()
        };
        assert!(rule_allows(&path("get", "/healthz"), &r));
        assert!(rule_allows(&path("get", "/apis/apps/v1"), &r));
        assert!(rule_allows(&path("get", "/apis/"), &r));
        assert!(!rule_allows(&path("get", "/apis"), &r));
        assert!(!rule_allows(&path("post", "/healthz"), &r));
        assert!(!rule_allows(&path("get", "/healthz/ping"), &r));
    }
}
