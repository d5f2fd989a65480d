//! Which rules apply to a user in a namespace, and where each comes from.
//!
//! Upstream: `pkg/registry/rbac/validation/rule.go` — `VisitRulesFor`
//! (ClusterRoleBindings first, then the RoleBindings of the namespace),
//! `appliesTo` / `appliesToUser` (a service-account subject without a
//! namespace means the binding's), `GetRoleReferenceRules` and the
//! `clusterRoleBindingDescriber` / `roleBindingDescriber` whose text ends
//! up in a SubjectAccessReview's reason.

use std::fmt;

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef, Subject};

use super::cache::Snapshot;
use crate::auth::UserInfo;

/// What the visitor is shown: a rule and the binding it came from, or an
/// error (a binding to a role that does not exist).
pub enum Visit<'a> {
    /// One rule of a role bound to the user.
    Rule(&'a Source<'a>, &'a PolicyRule),
    /// Why some rules could not be read.
    Error(String),
}

/// The binding (and its subject) that granted a rule.
pub struct Source<'a> {
    /// `ClusterRoleBinding` or `RoleBinding`.
    kind: &'static str,
    /// The binding's name; `name/namespace` for a RoleBinding, as upstream prints it.
    name: String,
    role_ref: &'a RoleRef,
    subject: &'a Subject,
    /// The binding's namespace (for service accounts named without one).
    namespace: &'a str,
}

impl fmt::Display for Source<'_> {
    /// `ClusterRoleBinding "x" of ClusterRole "y" to User "z"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?} of {} {:?} to {}",
            self.kind,
            self.name,
            self.role_ref.kind,
            self.role_ref.name,
            describe_subject(self.subject, self.namespace)
        )
    }
}

/// Upstream `describeSubject`: `User "jane"`, `ServiceAccount "sa/ns"`.
fn describe_subject(s: &Subject, binding_namespace: &str) -> String {
    if s.kind == "ServiceAccount" {
        let ns = s
            .namespace
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(binding_namespace);
        return format!("{} {:?}", s.kind, format!("{}/{ns}", s.name));
    }
    format!("{} {:?}", s.kind, s.name)
}

/// Calls `visitor` with every rule that applies to `user` in `namespace`
/// (cluster-wide when empty), until it returns false.
pub fn visit_rules_for(
    snapshot: &Snapshot,
    user: &UserInfo,
    namespace: &str,
    visitor: &mut dyn FnMut(Visit<'_>) -> bool,
) {
    for binding in &snapshot.cluster_role_bindings {
        let subjects = binding.subjects.as_deref().unwrap_or_default();
        let Some(subject) = applies_to(user, subjects, "") else {
            continue;
        };
        let source = Source {
            kind: "ClusterRoleBinding",
            name: binding.metadata.name.clone().unwrap_or_default(),
            role_ref: &binding.role_ref,
            subject,
            namespace: "",
        };
        if !visit_role(snapshot, &source, "", visitor) {
            return;
        }
    }
    if namespace.is_empty() {
        return;
    }
    for binding in snapshot.role_bindings.get(namespace).into_iter().flatten() {
        let subjects = binding.subjects.as_deref().unwrap_or_default();
        let Some(subject) = applies_to(user, subjects, namespace) else {
            continue;
        };
        let name = binding.metadata.name.clone().unwrap_or_default();
        let source = Source {
            kind: "RoleBinding",
            name: format!("{name}/{namespace}"),
            role_ref: &binding.role_ref,
            subject,
            namespace,
        };
        if !visit_role(snapshot, &source, namespace, visitor) {
            return;
        }
    }
}

/// Visits the rules of the role `source` refers to; false when the visitor
/// asked to stop.
fn visit_role(
    snapshot: &Snapshot,
    source: &Source<'_>,
    namespace: &str,
    visitor: &mut dyn FnMut(Visit<'_>) -> bool,
) -> bool {
    match role_reference_rules(snapshot, source.role_ref, namespace) {
        Ok(rules) => rules.iter().all(|rule| visitor(Visit::Rule(source, rule))),
        Err(e) => visitor(Visit::Error(e)),
    }
}

/// Upstream `GetRoleReferenceRules`, with its not-found texts.
fn role_reference_rules<'a>(
    snapshot: &'a Snapshot,
    role_ref: &RoleRef,
    namespace: &str,
) -> Result<&'a [PolicyRule], String> {
    let name = &role_ref.name;
    match role_ref.kind.as_str() {
        "Role" => snapshot
            .roles
            .get(&(namespace.to_string(), name.clone()))
            .map(|r| r.rules.as_deref().unwrap_or_default())
            .ok_or_else(|| format!("role.rbac.authorization.k8s.io {name:?} not found")),
        "ClusterRole" => snapshot
            .cluster_roles
            .get(name)
            .map(|r| r.rules.as_deref().unwrap_or_default())
            .ok_or_else(|| format!("clusterrole.rbac.authorization.k8s.io {name:?} not found")),
        other => Err(format!("unsupported role reference kind: {other:?}")),
    }
}

/// The first subject of a binding that names `user` (upstream `appliesTo`).
pub fn applies_to<'a>(user: &UserInfo, subjects: &'a [Subject], namespace: &str) -> Option<&'a Subject> {
    subjects.iter().find(|s| applies_to_user(user, s, namespace))
}

fn applies_to_user(user: &UserInfo, subject: &Subject, namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => user.name == subject.name,
        "Group" => user.in_group(&subject.name),
        "ServiceAccount" => {
            let ns = subject
                .namespace
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or(namespace);
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{}", subject.name)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    use serde_json::json;

    fn snapshot() -> Snapshot {
        let mut s = Snapshot::default();
        let role: Role = serde_json::from_value(json!({
            "metadata": {"name": "pod-reader", "namespace": "ns"},
            "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}],
        }))
        .unwrap();
        s.roles.insert(("ns".into(), "pod-reader".into()), role);
        let view: ClusterRole = serde_json::from_value(json!({
            "metadata": {"name": "view"},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}],
        }))
        .unwrap();
        s.cluster_roles.insert("view".into(), view);
        let rb: RoleBinding = serde_json::from_value(json!({
            "metadata": {"name": "read", "namespace": "ns"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}],
        }))
        .unwrap();
        let dangling: RoleBinding = serde_json::from_value(json!({
            "metadata": {"name": "dangling", "namespace": "ns"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gone"},
            "subjects": [{"kind": "Group", "name": "system:serviceaccounts"}],
        }))
        .unwrap();
        s.role_bindings.insert("ns".into(), vec![rb, dangling]);
        let crb: ClusterRoleBinding = serde_json::from_value(json!({
            "metadata": {"name": "viewers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "jane"}],
        }))
        .unwrap();
        s.cluster_role_bindings.push(crb);
        s
    }

    fn visit_all(s: &Snapshot, user: &UserInfo, ns: &str) -> (Vec<String>, Vec<String>) {
        let (mut sources, mut errors) = (Vec::new(), Vec::new());
        visit_rules_for(s, user, ns, &mut |v| {
            match v {
                Visit::Rule(source, _) => sources.push(source.to_string()),
                Visit::Error(e) => errors.push(e),
            }
            true
        });
        (sources, errors)
    }

    #[test]
    fn bindings_apply_by_user_group_and_service_account() {
        let s = snapshot();
        let sa = UserInfo::service_account("ns", "sa", "", Default::default());
        let (sources, errors) = visit_all(&s, &sa, "ns");
        assert_eq!(
            sources,
            [r#"RoleBinding "read/ns" of Role "pod-reader" to ServiceAccount "sa/ns""#]
        );
        assert_eq!(
            errors,
            [r#"clusterrole.rbac.authorization.k8s.io "gone" not found"#]
        );
        // The same service account elsewhere, and cluster-wide, has nothing.
        assert_eq!(visit_all(&s, &sa, "other").0.len(), 0);
        assert_eq!(visit_all(&s, &sa, "").0.len(), 0);
        let jane = UserInfo {
            name: "jane".into(),
            ..UserInfo::default()
        };
        assert_eq!(
            visit_all(&s, &jane, "").0,
            [r#"ClusterRoleBinding "viewers" of ClusterRole "view" to User "jane""#]
        );
    }
}
