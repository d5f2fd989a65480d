//! authorization.k8s.io/v1 SubjectAccessReview, SelfSubjectAccessReview,
//! LocalSubjectAccessReview and SelfSubjectRulesReview: created, answered
//! from the authorizer, never stored.
//!
//! Upstream: `pkg/registry/authorization/*/rest.go` (each `Create`),
//! `pkg/apis/authorization/validation/validation.go` and
//! `pkg/registry/authorization/util/helpers.go` (`ResourceAttributesFrom`,
//! `NonResourceAttributesFrom`). A SubjectAccessReview asks about the user
//! in its spec, a self review about the requester; `kubectl auth can-i`
//! sends SelfSubjectAccessReviews and, with `--list`, a
//! SelfSubjectRulesReview.
//!
//! Simplified: field and label selectors of `resourceAttributes` are
//! ignored (RBAC does not read them); the `metadata must be empty` rule is
//! not checked.

use serde_json::{Value, json};

use super::UserInfo;
use super::authorizer::{Attributes, Authorizer};
use crate::error::{ApiError, ApiResult, FieldError};
use crate::jsonpath::str_at;

const GROUP: &str = "authorization.k8s.io";

/// Which review a request creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Review {
    /// About any user (`spec.user`, `spec.groups`).
    SubjectAccess,
    /// About the requester.
    SelfSubjectAccess,
    /// About any user, within the namespace of the URL.
    LocalSubjectAccess,
    /// Everything the requester may do in `spec.namespace`.
    SelfSubjectRules,
}

impl Review {
    /// The review served at `plural`, if any.
    pub fn from_plural(plural: &str) -> Option<Review> {
        Some(match plural {
            "subjectaccessreviews" => Review::SubjectAccess,
            "selfsubjectaccessreviews" => Review::SelfSubjectAccess,
            "localsubjectaccessreviews" => Review::LocalSubjectAccess,
            "selfsubjectrulesreviews" => Review::SelfSubjectRules,
            _ => return None,
        })
    }

    fn kind(self) -> &'static str {
        match self {
            Review::SubjectAccess => "SubjectAccessReview",
            Review::SelfSubjectAccess => "SelfSubjectAccessReview",
            Review::LocalSubjectAccess => "LocalSubjectAccessReview",
            Review::SelfSubjectRules => "SelfSubjectRulesReview",
        }
    }
}

/// Answers one review created by `requester` (in `namespace`, for the
/// local review): the body with its `status` filled in.
pub fn answer(
    review: Review,
    mut body: Value,
    namespace: Option<&str>,
    requester: &UserInfo,
    authorizer: &Authorizer,
) -> ApiResult<Value> {
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = match review {
        Review::SelfSubjectRules => rules_status(&spec, requester, authorizer)?,
        _ => {
            let errs = validate(review, &spec, body.pointer("/metadata/namespace"), namespace);
            if !errs.is_empty() {
                return Err(ApiError::invalid(GROUP, review.kind(), "", &errs));
            }
            let user = match review {
                Review::SelfSubjectAccess => requester.clone(),
                _ => user_of(&spec),
            };
            let decision = authorizer.authorize(&attributes(&spec, user));
            let mut status = json!({"allowed": decision.allowed});
            if !decision.reason.is_empty() {
                status["reason"] = json!(decision.reason);
            }
            if !decision.evaluation_error.is_empty() {
                status["evaluationError"] = json!(decision.evaluation_error);
            }
            status
        }
    };
    body["apiVersion"] = json!("authorization.k8s.io/v1");
    body["kind"] = json!(review.kind());
    if !body.get("metadata").is_some_and(Value::is_object) {
        body["metadata"] = json!({});
    }
    body["metadata"]["creationTimestamp"] = Value::Null;
    body["status"] = status;
    Ok(body)
}

/// Upstream `ValidateSubjectAccessReviewSpec` and the local review's
/// namespace rules.
fn validate(review: Review, spec: &Value, meta_ns: Option<&Value>, url_ns: Option<&str>) -> Vec<FieldError> {
    let resource = spec.get("resourceAttributes").filter(|v| !v.is_null());
    let non_resource = spec.get("nonResourceAttributes").filter(|v| !v.is_null());
    let mut errs = Vec::new();
    match (resource, non_resource) {
        (Some(_), Some(n)) => errs.push(FieldError::invalid(
            "spec.nonResourceAttributes",
            n.clone(),
            "cannot be specified in combination with resourceAttributes",
        )),
        (None, None) => errs.push(FieldError::invalid(
            "spec.resourceAttributes",
            Value::Null,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )),
        _ => {}
    }
    if review != Review::SelfSubjectAccess {
        let groups = spec.get("groups").and_then(Value::as_array).map_or(0, Vec::len);
        if str_at(spec, &["user"]).is_empty() && groups == 0 {
            errs.push(FieldError::invalid(
                "spec.user",
                json!(""),
                "at least one of user or group must be specified",
            ));
        }
    }
    if review == Review::LocalSubjectAccess {
        let ns = meta_ns.and_then(Value::as_str).or(url_ns).unwrap_or_default();
        if let Some(r) = resource {
            let asked = str_at(r, &["namespace"]);
            if asked != ns {
                errs.push(FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    json!(asked),
                    "must match metadata.namespace",
                ));
            }
        }
        if let Some(n) = non_resource {
            errs.push(FieldError::invalid(
                "spec.nonResourceAttributes",
                n.clone(),
                "disallowed on this kind of request",
            ));
        }
    }
    errs
}

/// The user a (Local)SubjectAccessReview asks about, as its spec gives it.
fn user_of(spec: &Value) -> UserInfo {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let extra = spec
        .get("extra")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), strings(Some(v))))
        .collect();
    UserInfo {
        name: str_at(spec, &["user"]).to_string(),
        uid: str_at(spec, &["uid"]).to_string(),
        groups: strings(spec.get("groups")),
        extra,
    }
}

/// Upstream `ResourceAttributesFrom` / `NonResourceAttributesFrom`.
fn attributes(spec: &Value, user: UserInfo) -> Attributes {
    if let Some(r) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
        let s = |k: &str| str_at(r, &[k]).to_string();
        let version = s("version");
        return Attributes {
            user,
            verb: s("verb"),
            resource_request: true,
            namespace: s("namespace"),
            api_group: s("group"),
            api_version: if version.is_empty() { "*".into() } else { version },
            resource: s("resource"),
            subresource: s("subresource"),
            name: s("name"),
            path: String::new(),
        };
    }
    let n = spec.get("nonResourceAttributes").unwrap_or(&Value::Null);
    Attributes {
        user,
        verb: str_at(n, &["verb"]).to_string(),
        path: str_at(n, &["path"]).to_string(),
        ..Attributes::default()
    }
}

/// The status of a SelfSubjectRulesReview (upstream
/// `SelfSubjectRulesReviewREST.Create`).
fn rules_status(spec: &Value, requester: &UserInfo, authorizer: &Authorizer) -> ApiResult<Value> {
    let namespace = str_at(spec, &["namespace"]);
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let (rules, error) = authorizer.rules_for(requester, namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in &rules.rules {
        if rule.resources.as_ref().is_some_and(|r| !r.is_empty()) {
            let mut r =
                json!({"verbs": rule.verbs, "apiGroups": rule.api_groups, "resources": rule.resources});
            if let Some(names) = rule.resource_names.as_ref().filter(|n| !n.is_empty()) {
                r["resourceNames"] = json!(names);
            }
            resource_rules.push(r);
        }
        if let Some(urls) = rule.non_resource_urls.as_ref().filter(|u| !u.is_empty()) {
            non_resource_rules.push(json!({"verbs": rule.verbs, "nonResourceURLs": urls}));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    if !error.is_empty() {
        status["evaluationError"] = json!(error);
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::authorizer::AuthorizationMode;

    fn sar(spec: Value) -> Value {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
    }

    #[test]
    fn always_allow_allows_everything_and_lists_star() {
        let jane = UserInfo {
            name: "jane".into(),
            ..UserInfo::default()
        };
        let body =
            sar(json!({"user": "jane", "resourceAttributes": {"verb": "delete", "resource": "nodes"}}));
        let out = answer(Review::SubjectAccess, body, None, &jane, &Authorizer::AlwaysAllow).unwrap();
        assert_eq!(out["status"], json!({"allowed": true}));
        let rules = json!({"spec": {"namespace": "default"}});
        let out = answer(
            Review::SelfSubjectRules,
            rules,
            None,
            &jane,
            &Authorizer::AlwaysAllow,
        )
        .unwrap();
        assert_eq!(out["status"]["resourceRules"][0]["verbs"], json!(["*"]));
        assert_eq!(
            out["status"]["nonResourceRules"][0]["nonResourceURLs"],
            json!(["*"])
        );
    }

    #[test]
    fn invalid_reviews_name_the_field() {
        let jane = UserInfo::default();
        let err = answer(
            Review::SubjectAccess,
            sar(json!({"resourceAttributes": {"verb": "get"}})),
            None,
            &jane,
            &Authorizer::AlwaysAllow,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            r#"SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified"#
        );
        let err = answer(
            Review::LocalSubjectAccess,
            json!({"metadata": {"namespace": "a"}, "spec": {"user": "u", "resourceAttributes": {"namespace": "b"}}}),
            Some("a"),
            &jane,
            &Authorizer::AlwaysAllow,
        )
        .unwrap_err();
        assert!(
            err.message.contains(
                "spec.resourceAttributes.namespace: Invalid value: \"b\": must match metadata.namespace"
            ),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn rbac_answers_with_the_binding() {
        let api = crate::testkit::TestApi::builder().open();
        crate::auth::bootstrap_policy::ensure(&api).await.unwrap();
        let rbac = Authorizer::new(AuthorizationMode::Rbac, &api);
        let user = UserInfo {
            name: "jane".into(),
            groups: vec!["system:authenticated".into()],
            ..UserInfo::default()
        };
        let ssar = json!({"spec": {"nonResourceAttributes": {"path": "/version", "verb": "get"}}});
        let out = answer(Review::SelfSubjectAccess, ssar, None, &user, &rbac).unwrap();
        assert_eq!(
            out["status"],
            json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole \"system:discovery\" to Group \"system:authenticated\""})
        );
        let ssar = json!({"spec": {"resourceAttributes": {"verb": "list", "resource": "secrets", "namespace": "default"}}});
        let out = answer(Review::SelfSubjectAccess, ssar, None, &user, &rbac).unwrap();
        assert_eq!(out["status"], json!({"allowed": false}));
    }
}
