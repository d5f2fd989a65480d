//! The requests that are answered rather than stored: the create-only
//! review kinds (`ResourceInfo::create_only`) and `serviceaccounts/token`.
//!
//! Upstream each has its own REST storage whose `Create` computes the
//! answer (`pkg/registry/authentication/*`, `pkg/registry/authorization/*`,
//! `pkg/registry/core/serviceaccount/storage/token.go`); here one match
//! sends each kind to the function that answers it.

use serde_json::Value;

use super::AppState;
use crate::auth::{UserInfo, token_request, token_review};
use crate::error::ApiResult;
use crate::registry::ResourceInfo;

/// The answer to a POST of a create-only kind by `user`.
pub(super) fn answer(
    state: &AppState,
    info: &ResourceInfo,
    review: Value,
    user: &UserInfo,
) -> ApiResult<Value> {
    let tokens = state.authenticator.as_ref().map(|a| a.tokens());
    match (info.group.as_str(), info.kind.as_str()) {
        ("authentication.k8s.io", "TokenReview") => token_review::review_token(&state.api, tokens, review),
        ("authentication.k8s.io", "SelfSubjectReview") => Ok(token_review::review_self(&state.api, user)),
        // The SubjectAccessReview family (auth/reviews.rs), answered by the authorizer.
        ("authorization.k8s.io", _) => match crate::auth::reviews::Review::from_plural(&info.plural) {
            Some(kind) => crate::auth::reviews::answer(kind, review, None, user, &state.authorizer),
            None => Err(super::resource::method_not_allowed(&axum::http::Method::POST)),
        },
        _ => Err(super::resource::method_not_allowed(&axum::http::Method::POST)),
    }
}

/// `POST serviceaccounts/NAME/token`; 404 when the server issues no
/// service-account tokens (plain HTTP has no signing key, as upstream
/// serves no `token` subresource without `--service-account-issuer`).
pub(super) fn token_request(
    state: &AppState,
    namespace: &str,
    name: &str,
    request: Value,
) -> ApiResult<Value> {
    let Some(keys) = state
        .authenticator
        .as_ref()
        .and_then(|a| a.tokens().service_accounts())
    else {
        return Err(super::route::not_found());
    };
    token_request::create_token(&state.api, keys, namespace, name, request)
}
