//! The ServiceAccounts controller: keeps a `default` ServiceAccount in every
//! active namespace.
//!
//! Upstream: `pkg/controller/serviceaccount/serviceaccounts_controller.go`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | namespace and ServiceAccount informers → namespace keys → queue; `impl Reconciler`; `run` | `NewServiceAccountsController`, `serviceAccountDeleted`, `namespaceAdded`, `namespaceUpdated`, `Run` |
//! | [`sync`] | one sync: read the caches → [`plan`] → create | `syncNamespace` |
//! | [`plan`] | pure: which ServiceAccounts a namespace lacks | the loop over `serviceAccountsToEnsure` |
//! | `tests/` | `plan.rs` table tests; `controller.rs` against a real API | `serviceaccounts_controller_test.go` |
//!
//! A deleted `default` ServiceAccount comes back; nothing is created in a
//! namespace that is not `Active` (a Terminating namespace refuses creates
//! anyway, see `apiserver::admission::namespace_lifecycle`). Only the
//! ServiceAccount is made: no token Secret, as upstream since 1.24.
//!
//! Where to start reading: [`sync::ServiceAccountsSync::sync_namespace`].

pub mod controller;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
