//! One ServiceAccounts sync: create the accounts a namespace lacks.
//!
//! Upstream: `syncNamespace` of
//! `pkg/controller/serviceaccount/serviceaccounts_controller.go`.
//!
//! ```text
//! sync_namespace(name)
//!   namespace not in cache          → Done
//!   plan::accounts_to_create        → none for a namespace that is not Active
//!   create each: AlreadyExists      → fine (the cache lagged)
//!                NotFound/Forbidden → fine (the namespace went away or is terminating)
//!                other failure      → Err (retried with backoff)
//! ```
//!
//! Simplified: upstream skips only the `NamespaceTerminating` cause of a
//! 403; the client here does not carry status causes, so every 403 of a
//! create is taken as that one (no authorizer refuses the controller).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};

use super::plan::accounts_to_create;
use crate::runtime::client::{Client, Typed};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError};

/// What one sync reads and writes.
pub struct ServiceAccountsSync {
    service_accounts_api: Typed<ServiceAccount>,
    namespaces: Store<Namespace>,
    service_accounts: Store<ServiceAccount>,
}

impl ServiceAccountsSync {
    /// A syncer reading the given caches and writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        namespaces: Store<Namespace>,
        service_accounts: Store<ServiceAccount>,
    ) -> Self {
        ServiceAccountsSync {
            service_accounts_api: Typed::new(client),
            namespaces,
            service_accounts,
        }
    }

    /// Upstream `syncNamespace`: creates the ensured accounts missing from
    /// namespace `name`.
    pub async fn sync_namespace(&self, name: &str) -> Result<Action, ReconcileError> {
        let Some(namespace) = self.namespaces.get(None, name) else {
            return Ok(Action::Done);
        };
        let exists = |sa: &str| self.service_accounts.get(Some(name), sa).is_some();
        for sa in accounts_to_create(&namespace, exists) {
            match self.service_accounts_api.create(Some(name), &sa).await {
                Ok(_) => {}
                Err(e) if e.is_already_exists() || e.is_not_found() || e.code == 403 => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Action::Done)
    }
}
