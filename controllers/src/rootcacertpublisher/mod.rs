//! The root CA certificate publisher: keeps the ConfigMap `kube-root-ca.crt`
//! with the cluster CA certificate in every namespace, so that a pod can
//! verify the API server it reaches through `kubernetes.default.svc`.
//!
//! Upstream: `pkg/controller/certificates/rootcacertpublisher/publisher.go`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | namespace and ConfigMap informers → namespace keys → queue; `impl Reconciler`; `run` | `NewPublisher`, `configMapDeleted`, `configMapUpdated`, `namespaceAdded`, `namespaceUpdated`, `Run` |
//! | [`sync`] | one sync: read the cache → [`plan`] → create or update | `syncNamespace` |
//! | [`plan`] | pure: create, correct or leave the ConfigMap | `syncNamespace`'s decisions |
//! | `tests/` | `plan.rs` table tests; `controller.rs` against a real API | `publisher_test.go` |
//!
//! The ConfigMap is created when missing, and its `ca.crt` and the
//! `kubernetes.io/description` annotation are put back when someone edits
//! them; other keys and annotations a user adds are dropped or kept as
//! upstream does (the data is replaced whole, other annotations are kept).
//!
//! The CA is the one `miniplane up` made (`src/pki.rs`), handed in by the
//! server at start. A cluster without certificates (`--insecure-http`, or an
//! in-process `Cluster::builder()` cluster) has no CA to publish: the
//! publisher does not run there, and namespaces get no `kube-root-ca.crt`.
//!
//! Where to start reading: [`sync::RootCaPublisherSync::sync_namespace`].

pub mod controller;
pub mod plan;
pub mod sync;

#[cfg(test)]
mod tests;
