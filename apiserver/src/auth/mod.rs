//! Who is asking, and may they: the user a request authenticated as, and
//! (later in this module) the authorizers that decide on it.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/authentication/user` (the
//! `user.Info` every authenticator returns) and `.../authorization`.

// Authentication (identity): who a certificate or token names, service-account
// tokens, TokenRequest, and the TokenReview / SelfSubjectReview answers.
pub mod serviceaccount;
pub mod token_request;
pub mod token_review;
pub mod tokens;
pub mod user;
pub mod x509;

// Authorization (may they): the authorizer and its RBAC mode, the default
// roles, impersonation, and the SubjectAccessReview family.
pub mod authorizer;
pub mod bootstrap_policy;
pub mod impersonation;
pub mod rbac;
pub mod reviews;

pub use user::UserInfo;
