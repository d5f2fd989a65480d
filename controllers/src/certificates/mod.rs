//! The CSR signing controller: once a CertificateSigningRequest for one of
//! its signers is Approved, issues the certificate from the cluster CA into
//! `status.certificate`, or marks the request `Failed` when it cannot.
//!
//! Upstream: `pkg/controller/certificates/signer/` (the
//! `csrsigning` controller of kube-controller-manager), for the signers
//! `kubernetes.io/kube-apiserver-client` and
//! `kubernetes.io/kube-apiserver-client-kubelet`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | CSR informer → names → queue; `impl Reconciler`; `run` | `certificate_controller.go`: `NewCertificateController`, `Run` |
//! | [`sync`] | one sync: read the cache → [`plan`] → write the status | `signer.go`: `handle` |
//! | [`plan`] | pure: skip, sign (for how long), or fail (why) | `signer.go`: `handle`, `duration`, `isKubernetesAPIServerClient`, `isKubeletClient` |
//! | [`sign`] | pure: the certificate, from the request, usages, validity and the CA | `authority/authority.go`: `Sign`, `policies.go` |
//! | `tests/` | `plan.rs` and `sign.rs` table tests, `controller.rs` against a real API | `signer_test.go` |
//!
//! Where to start reading: [`sync::CsrSigningSync::sync_csr`], then [`plan::plan_csr`].
//!
//! It runs only where there is a CA key (HTTPS; `--insecure-http` makes no
//! certificates): `src/lib.rs` starts it with the cluster's `pki`.

pub mod controller;
pub mod plan;
pub mod sign;
pub mod sync;

#[cfg(test)]
mod tests;
