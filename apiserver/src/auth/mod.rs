//! Who is asking, and may they: the user a request authenticated as, and
//! (later in this module) the authorizers that decide on it.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/authentication/user` (the
//! `user.Info` every authenticator returns) and `.../authorization`.

mod user;

// Authorization (may they): the authorizer and its RBAC mode, the default
// roles, impersonation, and the SubjectAccessReview family.
pub mod authorizer;
pub mod bootstrap_policy;
pub mod impersonation;
pub mod rbac;
pub mod reviews;

pub use user::UserInfo;
