//! The authenticated user (upstream `user.Info`).

use std::collections::BTreeMap;

/// The group every authenticated user is in.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group whose members may do anything (bound to `cluster-admin`).
pub const MASTERS: &str = "system:masters";

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

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}
