//! The Kubernetes API server of miniplane.
//!
//! Layout, in the order a request meets it:
//! - [`http`]: axum routes — `/version`, health, `/metrics`, discovery,
//!   OpenAPI, and one handler for every resource URL;
//! - [`api`]: the in-process API ([`Api`]) that HTTP handlers and in-process
//!   components both call: create/get/list/watch/update/patch/delete;
//! - [`registry`]: which kinds are served and how (scope, short names,
//!   subresources);
//! - [`kinds`]: per-kind defaulting, strategies and validation;
//! - [`patch`], [`managed`]: strategic merge patch, server-side apply and
//!   managedFields;
//! - [`labels`], [`fields`]: label and field selectors for lists, watches,
//!   validation and controllers; [`table`]: Tables for `kubectl get`;
//! - [`validation`] (name and label syntax), [`gofmt`] (Go `%q`/`%#v` in
//!   error text), [`jsonpath`] (reading v1 JSON objects by path);
//! - [`error`]: every failure as an upstream `metav1.Status`;
//! - [`testkit`]: an [`Api`] over a temporary store in one line, for tests.
//!
//! Start reading at [`api::Api::create`].

pub mod admission;
pub mod api;
pub mod auth;
pub mod conversion;
pub mod crd;
pub mod error;
pub mod event_ttl;
pub mod fields;
pub mod gofmt;
pub mod http;
pub mod jsonpath;
pub mod kinds;
pub mod labels;
pub mod managed;
pub mod openapi;
pub mod patch;
pub mod protobuf;
pub mod quantity;
pub mod registry;
pub mod schema;
pub mod table;
pub mod testkit;
pub mod typed;
pub mod validation;

pub use api::Api;
pub use error::{ApiError, ApiResult};
pub use registry::Registry;

/// Builds the process-wide tables that writes read: the built-in kinds'
/// schemas for strict decoding ([`schema`], [`typed`]) and for patches and
/// managedFields ([`patch::meta`]), and the CEL environment. Each is built
/// once per process, by whichever caller comes first, and the first
/// writes at start-up would build them on their way; a server calls this
/// on a thread of its own as it starts, so that they are built while the
/// store opens.
pub fn prepare_tables() {
    schema::prepare();
    typed::prepare();
    patch::meta::prepare();
    crd::schema::cel::prepare();
}
