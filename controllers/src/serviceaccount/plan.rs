//! Which ServiceAccounts a namespace must get: pure.
//!
//! Upstream: `syncNamespace` of
//! `pkg/controller/serviceaccount/serviceaccounts_controller.go` and the
//! controller-manager's option `serviceAccountsToEnsure` (one account,
//! `default`).

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The account every namespace gets (upstream `DefaultServiceAccountName`).
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// The names of the accounts to ensure (upstream `serviceAccountsToEnsure`).
pub const SERVICE_ACCOUNTS_TO_ENSURE: [&str; 1] = [DEFAULT_SERVICE_ACCOUNT];

/// Whether a namespace takes new objects: its phase is `Active`. A namespace
/// without a phase yet counts as active (the API server defaults it).
pub fn is_active(namespace: &Namespace) -> bool {
    let phase = namespace.status.as_ref().and_then(|s| s.phase.as_deref());
    matches!(phase, None | Some("Active"))
}

/// The ServiceAccounts to create in `namespace`, given which of its accounts
/// exist (`exists(name)`): none for a namespace that is not active.
pub fn accounts_to_create(namespace: &Namespace, exists: impl Fn(&str) -> bool) -> Vec<ServiceAccount> {
    if !is_active(namespace) || namespace.metadata.deletion_timestamp.is_some() {
        return Vec::new();
    }
    let ns = namespace.metadata.name.clone();
    SERVICE_ACCOUNTS_TO_ENSURE
        .into_iter()
        .filter(|name| !exists(name))
        .map(|name| ServiceAccount {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: ns.clone(),
                ..Default::default()
            },
            ..Default::default()
        })
        .collect()
}
