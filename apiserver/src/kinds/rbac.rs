//! rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and
//! ClusterRoleBinding: defaulting and validation.
//!
//! Upstream: `pkg/apis/rbac/v1/defaults.go` (a binding's `roleRef.apiGroup`
//! and each subject's `apiGroup`), `pkg/apis/rbac/validation/validation.go`
//! (names are path segments; rules need verbs, and either resources with API
//! groups or non-resource URLs, the latter only in ClusterRoles; `roleRef`
//! kind and apiGroup; subjects by kind; `roleRef` immutable on update) and
//! `pkg/registry/rbac/*/strategy.go` (no status, no generation, nothing
//! prepared on create or update).
//!
//! Simplified: the escalation check of upstream's RBAC REST storage (a
//! user may only create a role granting what they hold, or bind a role
//! they may `bind`) is not done here; the authorizer in
//! [`crate::auth::rbac`] still decides who may write RBAC objects at all.

use serde_json::{Value, json};

use super::{items, items_mut, remove};
use crate::error::FieldError;
use crate::gofmt::{go_quote, go_string_list};
use crate::jsonpath::str_at;
use crate::labels::validation::validate_label_selector;
use crate::validation::{invalid_raw, is_dns1123_subdomain};

/// The API group of the RBAC kinds, and of User and Group subjects.
pub const GROUP: &str = "rbac.authorization.k8s.io";

/// Upstream `path.IsValidPathSegmentName`: the name rule of every RBAC kind.
pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
    if let Some(bad) = [".", ".."].into_iter().find(|b| *b == name) {
        return vec![format!("may not be '{bad}'")];
    }
    ["/", "%"]
        .into_iter()
        .filter(|c| name.contains(c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// `SetDefaults_RoleBinding` / `SetDefaults_ClusterRoleBinding` and
/// `SetDefaults_Subject`.
pub fn default_binding(obj: &mut Value) {
    if let Some(role_ref) = obj.get_mut("roleRef").filter(|r| r.is_object())
        && str_at(role_ref, &["apiGroup"]).is_empty()
    {
        role_ref["apiGroup"] = json!(GROUP);
    }
    for subject in items_mut(obj, "subjects") {
        if !subject.is_object() || !str_at(subject, &["apiGroup"]).is_empty() {
            continue;
        }
        match str_at(subject, &["kind"]) {
            "User" | "Group" => subject["apiGroup"] = json!(GROUP),
            // Defaulted to "", which Go's `omitempty` then leaves out.
            "ServiceAccount" => remove(subject, "apiGroup"),
            _ => {}
        }
    }
}

/// `ValidateRole` without ObjectMeta.
pub fn validate_role(obj: &Value) -> Vec<FieldError> {
    validate_rules(obj, true)
}

/// `ValidateClusterRole` without ObjectMeta: the rules and the
/// aggregation rule's selectors.
pub fn validate_cluster_role(obj: &Value) -> Vec<FieldError> {
    let mut errs = validate_rules(obj, false);
    let selectors = obj.pointer("/aggregationRule/clusterRoleSelectors");
    for (i, sel) in selectors
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = format!("aggregationRule.clusterRoleSelectors[{i}]");
        errs.extend(validate_label_selector(Some(sel), &path));
    }
    errs
}

fn validate_rules(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    items(obj, "rules")
        .enumerate()
        .flat_map(|(i, rule)| validate_policy_rule(rule, namespaced, &format!("rules[{i}]")))
        .collect()
}

fn list_len(rule: &Value, key: &str) -> usize {
    rule.get(key).and_then(Value::as_array).map_or(0, Vec::len)
}

/// `ValidatePolicyRule`.
pub fn validate_policy_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if list_len(rule, "verbs") == 0 {
        errs.push(FieldError::required(
            format!("{path}.verbs"),
            "verbs must contain at least one value",
        ));
    }
    if list_len(rule, "nonResourceURLs") > 0 {
        let urls = go_string_list(rule.get("nonResourceURLs"));
        let field = format!("{path}.nonResourceURLs");
        if namespaced {
            errs.push(invalid_raw(
                &field,
                urls.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|k| list_len(rule, k) > 0)
        {
            errs.push(invalid_raw(
                &field,
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if list_len(rule, "apiGroups") == 0 {
        errs.push(FieldError::required(
            format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if list_len(rule, "resources") == 0 {
        errs.push(FieldError::required(
            format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// `ValidateRoleBinding` (`namespaced`) or `ValidateClusterRoleBinding`
/// without ObjectMeta.
pub fn validate_binding(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let api_group = str_at(obj, &["roleRef", "apiGroup"]);
    if api_group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            json!(api_group),
            &[GROUP],
        ));
    }
    let kind = str_at(obj, &["roleRef", "kind"]);
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported("roleRef.kind", json!(kind), kinds));
    }
    let name = str_at(obj, &["roleRef", "name"]);
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    }
    for msg in is_valid_path_segment_name(name)
        .into_iter()
        .filter(|_| !name.is_empty())
    {
        errs.push(FieldError::invalid("roleRef.name", json!(name), msg));
    }
    for (i, subject) in items(obj, "subjects").enumerate() {
        errs.extend(validate_subject(subject, namespaced, &format!("subjects[{i}]")));
    }
    errs
}

/// `ValidateRoleBindingSubject`.
fn validate_subject(subject: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let s = |k: &str| str_at(subject, &[k]);
    let name = s("name");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    match s("kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in is_dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(format!("{path}.name"), json!(name), msg));
                }
            }
            if !s("apiGroup").is_empty() {
                errs.push(FieldError::not_supported(
                    format!("{path}.apiGroup"),
                    json!(s("apiGroup")),
                    &[""],
                ));
            }
            if !namespaced && s("namespace").is_empty() {
                errs.push(FieldError::required(format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" if s("apiGroup") != GROUP => errs.push(FieldError::not_supported(
            format!("{path}.apiGroup"),
            json!(s("apiGroup")),
            &[GROUP],
        )),
        "User" | "Group" => {}
        other => errs.push(FieldError::not_supported(
            format!("{path}.kind"),
            json!(other),
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

/// `roleRef` may not change (`ValidateRoleBindingUpdate`); the value is
/// printed as Go's `%#v` of the internal `rbac.RoleRef`.
pub fn validate_binding_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let part = |v: &Value, k: &str| str_at(v, &["roleRef", k]).to_string();
    let same = ["apiGroup", "kind", "name"]
        .iter()
        .all(|k| part(new, k) == part(old, k));
    if same {
        return Vec::new();
    }
    let raw = format!(
        "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
        go_quote(&part(new, "apiGroup")),
        go_quote(&part(new, "kind")),
        go_quote(&part(new, "name")),
    );
    vec![invalid_raw("roleRef", raw, "cannot change roleRef")]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn path_segment_names() {
        assert!(is_valid_path_segment_name("system:aggregate-to-view").is_empty());
        assert_eq!(is_valid_path_segment_name(".."), ["may not be '..'"]);
        assert_eq!(
            is_valid_path_segment_name("a/b%c"),
            ["may not contain '/'", "may not contain '%'"]
        );
    }

    #[test]
    fn rules_need_verbs_and_resources_or_urls() {
        let role = json!({"rules": [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"]}]});
        assert_eq!(
            fields(&validate_role(&role)),
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[1].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[1].resources: Required value: resource rules must supply at least one resource",
            ]
        );
        let urls =
            json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"], "resources": ["pods"]}]});
        assert_eq!(
            fields(&validate_role(&urls)),
            [
                "rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs",
                "rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: rules cannot apply to both regular resources and non-resource URLs",
            ]
        );
        let ok = json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
        assert!(validate_cluster_role(&ok).is_empty());
    }

    #[test]
    fn bindings_check_role_ref_and_subjects() {
        let mut rb = json!({
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [
                {"kind": "User", "name": "u"},
                {"kind": "ServiceAccount", "name": "Bad_Name"},
                {"kind": "Robot", "name": "x"},
            ],
        });
        default_binding(&mut rb);
        assert_eq!(rb["roleRef"]["apiGroup"], GROUP);
        assert_eq!(rb["subjects"][0]["apiGroup"], GROUP);
        assert!(
            rb["subjects"][1].get("apiGroup").is_none(),
            "omitted, as Go's omitempty does"
        );
        let errs = fields(&validate_binding(&rb, true));
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].starts_with("subjects[1].name: Invalid value: \"Bad_Name\""));
        assert_eq!(
            errs[1],
            "subjects[2].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\""
        );
        // A ClusterRoleBinding binds only ClusterRoles, and its service
        // accounts need a namespace.
        let crb = json!({
            "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "apiGroup": "", "name": "sa"}],
        });
        assert_eq!(
            fields(&validate_binding(&crb, false)),
            [
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
                "subjects[0].namespace: Required value",
            ]
        );
    }

    #[test]
    fn role_ref_is_immutable() {
        let old = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}});
        let new = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "edit"}});
        assert!(validate_binding_update(&old, &old).is_empty());
        assert_eq!(
            fields(&validate_binding_update(&new, &old)),
            [
                "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef"
            ]
        );
    }
}
