//! Authorization: may this user do this verb on this resource (or path)?
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/authorization/authorizer`
//! (`Attributes`, `Decision`, `RuleResolver`), the `AlwaysAllow` authorizer
//! (`authorizerfactory/builtin.go`), the `system:masters` authorizer that
//! kube-apiserver puts before RBAC (`authorizerfactory.NewPrivilegedGroups`),
//! and the forbidden message of `endpoints/handlers/responsewriters/errors.go`.
//!
//! The mode is chosen at start (`--authorization rbac|always-allow`); the
//! HTTP middleware ([`crate::http`]'s `authz`), impersonation and the
//! SubjectAccessReview family all ask the same [`Authorizer`].

use serde_json::json;

use super::UserInfo;
use super::rbac::{PolicyRules, RbacAuthorizer};
use crate::api::Api;
use crate::error::{ApiError, Reason};

/// What a request asks to do (upstream `authorizer.AttributesRecord`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// `get`, `list`, `watch`, `create`, ..., `impersonate`; for a
    /// non-resource request the lower-case HTTP method.
    pub verb: String,
    /// A resource request (`/api/v1/...` with a resource) or a path.
    pub resource_request: bool,
    /// The namespace, empty for cluster-scoped requests.
    pub namespace: String,
    /// The API group (`""` for core).
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The resource (`pods`).
    pub resource: String,
    /// The subresource (`status`, `log`), empty for none.
    pub subresource: String,
    /// The object's name, empty for collections.
    pub name: String,
    /// The request path, for non-resource requests.
    pub path: String,
}

/// An authorizer's answer (upstream `authorizer.Decision` with its reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authorization {
    /// Allowed, or not (no authorizer here ever denies explicitly: RBAC
    /// only allows or has no opinion).
    pub allowed: bool,
    /// Why, e.g. `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`.
    pub reason: String,
    /// What went wrong while evaluating (a binding to a missing role, ...).
    pub evaluation_error: String,
}

impl Authorization {
    fn allow(reason: impl Into<String>) -> Self {
        Authorization {
            allowed: true,
            reason: reason.into(),
            evaluation_error: String::new(),
        }
    }
}

/// The configured authorization mode.
#[derive(Clone, Default)]
pub enum Authorizer {
    /// Every request is allowed (upstream `--authorization-mode=AlwaysAllow`).
    #[default]
    AlwaysAllow,
    /// `system:masters` may do anything; everyone else as RBAC allows.
    Rbac(RbacAuthorizer),
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Authorizer::AlwaysAllow => "AlwaysAllow",
            Authorizer::Rbac(_) => "Rbac",
        })
    }
}

/// The `--authorization` flag's values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthorizationMode {
    /// `always-allow` (the default).
    #[default]
    AlwaysAllow,
    /// `rbac`.
    Rbac,
}

impl std::str::FromStr for AuthorizationMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "always-allow" | "AlwaysAllow" => Ok(AuthorizationMode::AlwaysAllow),
            "rbac" | "RBAC" => Ok(AuthorizationMode::Rbac),
            other => Err(format!(
                "unknown authorization mode {other:?}: supported values: \"always-allow\", \"rbac\""
            )),
        }
    }
}

impl Authorizer {
    /// The authorizer of `mode`, reading RBAC objects from `api`.
    pub fn new(mode: AuthorizationMode, api: &Api) -> Self {
        match mode {
            AuthorizationMode::AlwaysAllow => Authorizer::AlwaysAllow,
            AuthorizationMode::Rbac => Authorizer::Rbac(RbacAuthorizer::new(api.clone())),
        }
    }

    /// Decides on `attrs`.
    pub fn authorize(&self, attrs: &Attributes) -> Authorization {
        match self {
            Authorizer::AlwaysAllow => Authorization::allow(""),
            Authorizer::Rbac(_) if attrs.user.in_group(super::user::MASTERS) => Authorization::allow(""),
            Authorizer::Rbac(rbac) => rbac.authorize(attrs),
        }
    }

    /// Everything `user` may do in `namespace` (upstream `RulesFor`, for
    /// SelfSubjectRulesReview): the rules, and an evaluation error if some
    /// could not be read.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (PolicyRules, String) {
        let everything = PolicyRules::everything();
        match self {
            Authorizer::AlwaysAllow => (everything, String::new()),
            Authorizer::Rbac(rbac) => {
                let (mut rules, error) = rbac.rules_for(user, namespace);
                if user.in_group(super::user::MASTERS) {
                    rules.prepend(everything);
                }
                (rules, error)
            }
        }
    }
}

/// Upstream `forbiddenMessage`: `User "u" cannot list resource "pods" in API
/// group "" in the namespace "ns"`, or `... cannot get path "/foo"`.
pub fn forbidden_message(attrs: &Attributes) -> String {
    let user = &attrs.user.name;
    if !attrs.resource_request {
        return format!("User {user:?} cannot {} path {:?}", attrs.verb, attrs.path);
    }
    let mut resource = attrs.resource.clone();
    if !attrs.subresource.is_empty() {
        resource = format!("{resource}/{}", attrs.subresource);
    }
    let scope = if attrs.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace {:?}", attrs.namespace)
    };
    format!(
        "User {user:?} cannot {} resource {resource:?} in API group {:?} {scope}",
        attrs.verb, attrs.api_group
    )
}

/// Upstream `responsewriters.Forbidden`: a 403 Status naming the resource
/// (`pods is forbidden: ...`, `pods "web" is forbidden: ...`, or
/// `forbidden: ...` for a path), the authorizer's reason after a colon.
pub fn forbidden(attrs: &Attributes, reason: &str) -> ApiError {
    let mut why = forbidden_message(attrs);
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let resource = if attrs.resource_request {
        attrs.resource.as_str()
    } else {
        ""
    };
    let qualified = crate::error::qualified(resource, &attrs.api_group);
    let message = match (resource.is_empty(), attrs.name.is_empty()) {
        (true, _) => format!("forbidden: {why}"),
        (false, true) => format!("{qualified} is forbidden: {why}"),
        (false, false) => format!("{qualified} {:?} is forbidden: {why}", attrs.name),
    };
    ApiError {
        reason: Reason::Forbidden,
        message,
        details: Some(json!({"name": attrs.name, "group": attrs.api_group, "kind": resource})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa() -> UserInfo {
        UserInfo::service_account("ns", "sa", "", Default::default())
    }

    #[test]
    fn forbidden_messages_are_upstreams() {
        let attrs = Attributes {
            user: sa(),
            verb: "list".into(),
            resource_request: true,
            namespace: "ns".into(),
            api_version: "v1".into(),
            resource: "pods".into(),
            ..Attributes::default()
        };
        let e = forbidden(&attrs, "");
        assert_eq!(
            e.message,
            r#"pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the namespace "ns""#
        );
        let named = Attributes {
            verb: "get".into(),
            name: "web".into(),
            api_group: "apps".into(),
            resource: "deployments".into(),
            subresource: "scale".into(),
            namespace: String::new(),
            ..attrs.clone()
        };
        assert_eq!(
            forbidden(&named, "RBAC: role.rbac.authorization.k8s.io \"x\" not found").message,
            r#"deployments.apps "web" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource "deployments/scale" in API group "apps" at the cluster scope: RBAC: role.rbac.authorization.k8s.io "x" not found"#
        );
        let path = Attributes {
            user: UserInfo {
                name: "x".into(),
                ..UserInfo::default()
            },
            verb: "get".into(),
            path: "/foo".into(),
            ..Attributes::default()
        };
        assert_eq!(
            forbidden(&path, "").message,
            r#"forbidden: User "x" cannot get path "/foo""#
        );
    }

    #[test]
    fn always_allow_allows_and_masters_pass_rbac() {
        let attrs = Attributes {
            user: sa(),
            verb: "delete".into(),
            resource_request: true,
            resource: "nodes".into(),
            ..Attributes::default()
        };
        assert!(Authorizer::AlwaysAllow.authorize(&attrs).allowed);
        let api = crate::testkit::TestApi::builder().open();
        let rbac = Authorizer::new(AuthorizationMode::Rbac, &api);
        assert!(!rbac.authorize(&attrs).allowed);
        let admin = Attributes {
            user: UserInfo::admin(),
            ..attrs
        };
        assert!(rbac.authorize(&admin).allowed);
    }
}
