//! The authentication.k8s.io/v1 reviews: TokenReview (who does this token
//! name?) and SelfSubjectReview (who am I? — `kubectl auth whoami`).
//! Both are create-only: the answer is the request with its status filled
//! in, and nothing is stored.
//!
//! Upstream: `pkg/registry/authentication/tokenreview/storage.go` and
//! `pkg/registry/authentication/selfsubjectreview/rest.go`. A token review
//! asks the same bearer-token authenticators as a request does
//! (`auth/tokens.rs`); the error texts are those of upstream's union of
//! request authenticators (`invalid bearer token`, then the reason).

use serde_json::{Value, json};

use super::UserInfo;
use super::tokens::{TokenAuthenticator, api_audiences};
use crate::api::{Api, format_time};
use crate::error::{ApiError, ApiResult};

/// The error of a token that no authenticator recognised (upstream
/// `bearertoken.invalidToken`).
const INVALID_TOKEN: &str = "invalid bearer token";

/// Answers a TokenReview. Without token authenticators (plain HTTP) no
/// token authenticates.
pub fn review_token(
    api: &Api,
    authenticator: Option<&TokenAuthenticator>,
    mut review: Value,
) -> ApiResult<Value> {
    let token = review
        .pointer("/spec/token")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let asked: Vec<String> = review
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    let wanted = if asked.is_empty() { api_audiences() } else { asked };
    let outcome = match authenticator {
        Some(a) => a.authenticate(api, &token, &wanted),
        None => Ok(None),
    };
    let status = match outcome {
        Ok(Some(found)) => json!({
            "authenticated": true,
            "user": found.user.to_json(),
            "audiences": found.audiences,
        }),
        Ok(None) => json!({"user": {}, "error": INVALID_TOKEN}),
        Err(why) => json!({"user": {}, "error": format!("[{INVALID_TOKEN}, {why}]")}),
    };
    set_kind(&mut review, "TokenReview");
    review["status"] = status;
    if let Some(meta) = crate::kinds::child(&mut review, "metadata") {
        meta["creationTimestamp"] = json!(format_time(api.clock().now()));
    }
    Ok(review)
}

/// Answers a SelfSubjectReview: the requesting user.
pub fn review_self(api: &Api, user: &UserInfo) -> Value {
    json!({
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": format_time(api.clock().now())},
        "status": {"userInfo": user.to_json()},
    })
}

fn set_kind(review: &mut Value, kind: &str) {
    review["kind"] = json!(kind);
    review["apiVersion"] = json!("authentication.k8s.io/v1");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_empty_token_is_a_bad_request_and_a_foreign_one_authenticates_no_one() {
        let api = crate::testkit::TestApi::builder().open();
        let auth = TokenAuthenticator::new(vec!["admin-token".into()]);
        let err = review_token(&api, Some(&auth), json!({"spec": {}})).unwrap_err();
        assert_eq!(err.message, "token is required for TokenReview in authentication");
        let answer = review_token(&api, Some(&auth), json!({"spec": {"token": "nope"}})).unwrap();
        assert_eq!(
            answer["status"],
            json!({"user": {}, "error": "invalid bearer token"})
        );
        let admin = review_token(&api, Some(&auth), json!({"spec": {"token": "admin-token"}})).unwrap();
        assert_eq!(admin["status"]["authenticated"], true);
        assert_eq!(admin["status"]["user"]["username"], "admin");
        assert_eq!(admin["status"]["audiences"], json!(api_audiences()));
        assert_eq!(admin["kind"], "TokenReview");
    }

    #[tokio::test]
    async fn self_review_answers_the_requesting_user() {
        let api = crate::testkit::TestApi::builder().open();
        let answer = review_self(&api, &UserInfo::admin());
        assert_eq!(
            answer["status"]["userInfo"],
            json!({"username": "admin", "groups": ["system:masters", "system:authenticated"]})
        );
    }
}
