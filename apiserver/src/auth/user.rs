//! The authenticated user (upstream `user.Info`, `staging/src/k8s.io/apiserver/pkg/authentication/user`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The group every authenticated user is in.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group whose members may do anything (bound to `cluster-admin`).
pub const MASTERS: &str = "system:masters";
/// The group of every service account.
pub const ALL_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// The prefix of a service account's user name: `system:serviceaccount:NS:NAME`.
pub const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
/// The extra key naming the credential a user authenticated with
/// (`X509SHA256=<fingerprint>` for a certificate, `JTI=<id>` for a
/// service-account token): upstream `user.CredentialIDKey`.
pub const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";
/// Extra keys of a service-account token bound to a pod (upstream
/// `serviceaccount.PodNameKey`, `PodUIDKey`).
pub const POD_NAME: &str = "authentication.kubernetes.io/pod-name";
/// See [`POD_NAME`].
pub const POD_UID: &str = "authentication.kubernetes.io/pod-uid";

/// A user as the authenticators return it and the authorizers read it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// `admin`, `system:serviceaccount:NS:NAME`, ...
    pub name: String,
    /// Empty when the authenticator knows none.
    pub uid: String,
    /// `system:masters`, `system:authenticated`, ...
    pub groups: Vec<String>,
    /// Extra attributes (`authentication.kubernetes.io/pod-name`, ...).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The cluster's administrator: the kubeconfig's client certificate
    /// (CN admin, O system:masters) and the admin token authenticate as this.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: "admin".into(),
            groups: vec![MASTERS.into(), AUTHENTICATED.into()],
            ..UserInfo::default()
        }
    }

    /// A client certificate's user (upstream `CommonNameUserConversion`):
    /// the subject's CN is the name, its O values the groups; `None` when
    /// the CN is empty (the certificate then authenticates no one).
    pub fn from_certificate(
        common_name: &str,
        organizations: &[String],
        sha256_hex: &str,
    ) -> Option<UserInfo> {
        if common_name.is_empty() {
            return None;
        }
        let user = UserInfo {
            name: common_name.to_string(),
            groups: organizations.to_vec(),
            extra: BTreeMap::from([(
                CREDENTIAL_ID.to_string(),
                vec![format!("X509SHA256={sha256_hex}")],
            )]),
            ..UserInfo::default()
        };
        Some(user.authenticated())
    }

    /// A service account's user (upstream `serviceaccount.UserInfo`):
    /// `system:serviceaccount:NS:NAME`, the SA's uid, groups
    /// `system:serviceaccounts` and `system:serviceaccounts:NS`.
    pub fn service_account(
        namespace: &str,
        name: &str,
        uid: &str,
        extra: BTreeMap<String, Vec<String>>,
    ) -> UserInfo {
        let user = UserInfo {
            name: format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"),
            uid: uid.to_string(),
            groups: vec![
                ALL_SERVICE_ACCOUNTS.to_string(),
                format!("{ALL_SERVICE_ACCOUNTS}:{namespace}"),
            ],
            extra,
        };
        user.authenticated()
    }

    /// Adds `system:authenticated` unless the user is in it already
    /// (upstream `AuthenticatedGroupAdder`).
    pub fn authenticated(mut self) -> UserInfo {
        if !self.in_group(AUTHENTICATED) {
            self.groups.push(AUTHENTICATED.to_string());
        }
        self
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// As an `authentication.k8s.io/v1` UserInfo (`username`, `uid`,
    /// `groups`, `extra`; empty fields left out, as Go's `omitempty`).
    pub fn to_json(&self) -> Value {
        let mut out = json!({"username": self.name});
        if !self.uid.is_empty() {
            out["uid"] = json!(self.uid);
        }
        if !self.groups.is_empty() {
            out["groups"] = json!(self.groups);
        }
        if !self.extra.is_empty() {
            out["extra"] = json!(self.extra);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_user_is_its_cn_and_organizations_and_authenticated() {
        let user = UserInfo::from_certificate("jane", &["dev".into(), "ops".into()], "ab12").unwrap();
        assert_eq!(user.name, "jane");
        assert_eq!(user.groups, ["dev", "ops", AUTHENTICATED]);
        assert_eq!(user.extra[CREDENTIAL_ID], ["X509SHA256=ab12"]);
        assert_eq!(UserInfo::from_certificate("", &["dev".into()], "ab12"), None);
    }

    #[test]
    fn a_service_account_user_has_upstreams_name_and_groups() {
        let user = UserInfo::service_account("ns1", "builder", "u-1", BTreeMap::new());
        assert_eq!(user.name, "system:serviceaccount:ns1:builder");
        assert_eq!(user.uid, "u-1");
        assert_eq!(
            user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns1",
                AUTHENTICATED
            ]
        );
        assert_eq!(
            user.to_json(),
            json!({"username": "system:serviceaccount:ns1:builder", "uid": "u-1",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:ns1", AUTHENTICATED]})
        );
    }

    #[test]
    fn authenticated_is_added_once() {
        let admin = UserInfo::admin().authenticated();
        assert_eq!(admin.groups, [MASTERS, AUTHENTICATED]);
    }
}
