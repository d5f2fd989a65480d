//! Impersonation: a request with `Impersonate-User` (and `-Group`, `-Uid`,
//! `-Extra-<key>`) headers runs as that user, if its sender may
//! `impersonate` each of them (`kubectl --as`, `--as-group`, `--as-uid`).
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`
//! (`WithImpersonation`, `buildImpersonationRequests`). A user named
//! `system:serviceaccount:NS:NAME` is impersonated as the service account
//! (resource `serviceaccounts` in NS, its groups when none are asked for);
//! groups are `groups`, extras `userextras/<key>` and the uid `uids` (the
//! last two in group `authentication.k8s.io`). The impersonated user gets
//! `system:authenticated` unless the request named it or
//! `system:unauthenticated`.
//!
//! Simplified: headers asking for groups, extras or a uid without a user
//! answer 400 (upstream: 500 with the same text); `system:anonymous` is
//! not special-cased.

use axum::http::HeaderMap;

use super::UserInfo;
use super::authorizer::{Attributes, Authorizer, forbidden};
use super::user::AUTHENTICATED;
use crate::error::ApiError;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";
const UNAUTHENTICATED: &str = "system:unauthenticated";

/// One thing the request asks to act as (upstream: an `ObjectReference`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Request {
    ServiceAccount { namespace: String, name: String },
    User(String),
    Group(String),
    Extra { key: String, value: String },
    Uid(String),
}

impl Request {
    /// What the requestor must be allowed: `impersonate` on this.
    fn attributes(&self, requestor: &UserInfo) -> Attributes {
        let (group, resource, sub, namespace, name) = match self {
            Request::ServiceAccount { namespace, name } => {
                ("", "serviceaccounts", "", namespace.as_str(), name)
            }
            Request::User(name) => ("", "users", "", "", name),
            Request::Group(name) => ("", "groups", "", "", name),
            Request::Extra { key, value } => ("authentication.k8s.io", "userextras", key.as_str(), "", value),
            Request::Uid(uid) => ("authentication.k8s.io", "uids", "", "", uid),
        };
        Attributes {
            user: requestor.clone(),
            verb: "impersonate".into(),
            resource_request: true,
            namespace: namespace.into(),
            api_group: group.into(),
            api_version: "v1".into(),
            resource: resource.into(),
            subresource: sub.into(),
            name: name.clone(),
            path: String::new(),
        }
    }
}

fn header_values<'a>(headers: &'a HeaderMap, name: &str) -> impl Iterator<Item = String> + 'a {
    headers
        .get_all(name)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// Upstream `buildImpersonationRequests`.
fn requests(headers: &HeaderMap) -> Result<Vec<Request>, ApiError> {
    let mut out = Vec::new();
    let user = header_values(headers, USER).next().filter(|u| !u.is_empty());
    if let Some(user) = &user {
        out.push(match split_service_account(user) {
            Some((namespace, name)) => Request::ServiceAccount { namespace, name },
            None => Request::User(user.clone()),
        });
    }
    out.extend(header_values(headers, GROUP).map(Request::Group));
    for name in headers.keys().map(|k| k.as_str()) {
        if let Some(key) = name.strip_prefix(EXTRA_PREFIX) {
            let key = percent_decode(key);
            out.extend(header_values(headers, name).map(|value| Request::Extra {
                key: key.clone(),
                value,
            }));
        }
    }
    if let Some(uid) = header_values(headers, UID).next().filter(|u| !u.is_empty()) {
        out.push(Request::Uid(uid));
    }
    if user.is_none() && !out.is_empty() {
        return Err(ApiError::bad_request(format!(
            "requested {out:?} without impersonating a user"
        )));
    }
    Ok(out)
}

/// `system:serviceaccount:NS:NAME` → (NS, NAME) (upstream `SplitUsername`).
fn split_service_account(user: &str) -> Option<(String, String)> {
    let rest = user.strip_prefix(super::user::SERVICE_ACCOUNT_PREFIX)?;
    let (ns, name) = rest.split_once(':')?;
    (!ns.is_empty() && !name.is_empty() && !name.contains(':')).then(|| (ns.to_string(), name.to_string()))
}

/// Extra keys are percent-encoded in header names (upstream `unescapeExtraKey`).
fn percent_decode(key: &str) -> String {
    form_urlencoded::parse(format!("k={key}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| key.to_string())
}

/// The user the request runs as: `None` without impersonation headers, the
/// impersonated user when `requestor` may impersonate every part of it,
/// 403 naming the first part it may not.
pub fn impersonate(
    headers: &HeaderMap,
    requestor: &UserInfo,
    authorizer: &Authorizer,
) -> Result<Option<UserInfo>, ApiError> {
    let requests = requests(headers)?;
    if requests.is_empty() {
        return Ok(None);
    }
    let groups_specified = requests.iter().any(|r| matches!(r, Request::Group(_)));
    let mut user = UserInfo::default();
    for request in &requests {
        let attrs = request.attributes(requestor);
        let decision = authorizer.authorize(&attrs);
        if !decision.allowed {
            return Err(forbidden(&attrs, &decision.reason));
        }
        match request {
            Request::ServiceAccount { namespace, name } => {
                user.name = format!("{}{namespace}:{name}", super::user::SERVICE_ACCOUNT_PREFIX);
                if !groups_specified {
                    user.groups = vec![
                        super::user::ALL_SERVICE_ACCOUNTS.to_string(),
                        format!("{}:{namespace}", super::user::ALL_SERVICE_ACCOUNTS),
                    ];
                }
            }
            Request::User(name) => user.name = name.clone(),
            Request::Group(g) => user.groups.push(g.clone()),
            Request::Extra { key, value } => user.extra.entry(key.clone()).or_default().push(value.clone()),
            Request::Uid(uid) => user.uid = uid.clone(),
        }
    }
    if !user
        .groups
        .iter()
        .any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED)
    {
        user.groups.push(AUTHENTICATED.to_string());
    }
    Ok(Some(user))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn service_accounts_users_groups_and_extras() {
        let h = headers(&[("Impersonate-User", "system:serviceaccount:ns:sa")]);
        let user = impersonate(&h, &UserInfo::admin(), &Authorizer::AlwaysAllow)
            .unwrap()
            .unwrap();
        assert_eq!(user.name, "system:serviceaccount:ns:sa");
        assert_eq!(
            user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                AUTHENTICATED
            ]
        );
        let h = headers(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "devs"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Uid", "u-1"),
            ("Impersonate-Extra-Scopes%2Fa", "x"),
        ]);
        let user = impersonate(&h, &UserInfo::admin(), &Authorizer::AlwaysAllow)
            .unwrap()
            .unwrap();
        assert_eq!(user.name, "jane");
        assert_eq!(user.groups, ["devs", "ops", AUTHENTICATED]);
        assert_eq!(user.uid, "u-1");
        assert_eq!(user.extra["scopes/a"], ["x"]);
        assert_eq!(
            impersonate(&HeaderMap::new(), &UserInfo::admin(), &Authorizer::AlwaysAllow).unwrap(),
            None
        );
        let groups_only = headers(&[("Impersonate-Group", "devs")]);
        let err = impersonate(&groups_only, &UserInfo::admin(), &Authorizer::AlwaysAllow).unwrap_err();
        assert!(
            err.message.contains("without impersonating a user"),
            "{}",
            err.message
        );
    }

    #[test]
    fn impersonating_needs_the_verb() {
        let api = crate::testkit::TestApi::builder().open();
        let rbac = Authorizer::new(super::super::authorizer::AuthorizationMode::Rbac, &api);
        let bob = UserInfo {
            name: "bob".into(),
            groups: vec![AUTHENTICATED.into()],
            ..UserInfo::default()
        };
        let h = headers(&[("Impersonate-User", "alice")]);
        let err = impersonate(&h, &bob, &rbac).unwrap_err();
        assert_eq!(
            err.message,
            r#"users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope"#
        );
        let h = headers(&[("Impersonate-User", "system:serviceaccount:ns:sa")]);
        let err = impersonate(&h, &bob, &rbac).unwrap_err();
        assert_eq!(
            err.message,
            r#"serviceaccounts "sa" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns""#
        );
        assert!(impersonate(&h, &UserInfo::admin(), &rbac).unwrap().is_some());
    }
}
