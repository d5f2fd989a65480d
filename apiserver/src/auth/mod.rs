//! Who is asking, and may they: the user a request authenticated as, and
//! (later in this module) the authorizers that decide on it.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/authentication/user` (the
//! `user.Info` every authenticator returns) and `.../authorization`.

mod user;

pub use user::UserInfo;
