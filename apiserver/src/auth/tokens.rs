//! Bearer tokens: who a token names, as upstream's union of token
//! authenticators answers (the static token file first, then
//! service-account JWTs).
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/authentication/token/union`,
//! `.../token/tokenfile` and `pkg/serviceaccount/jwt.go`
//! (`jwtTokenAuthenticator.AuthenticateToken`) with the lookup of
//! `claims.go` (the service account, and the pod or secret the token is
//! bound to, must still exist with the uids the token names).
//!
//! The outcome has upstream's three shapes: a user (with the audiences the
//! token is good for), "not mine" (no authenticator recognised the token:
//! 401, or a TokenReview with `authenticated: false` and no error), or an
//! error (ours but invalid: expired, wrong audience, deleted account).

use std::collections::BTreeMap;

use serde_json::Value;

use super::UserInfo;
use super::serviceaccount::{self, Claims, Rejection, ServiceAccountTokens};
use super::user::{CREDENTIAL_ID, POD_NAME, POD_UID};
use crate::api::Api;

/// A token that authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    /// Who.
    pub user: UserInfo,
    /// The audiences the token is valid for among those asked for.
    pub audiences: Vec<String>,
}

/// The API server's audiences (upstream `--api-audiences`, which defaults
/// to the service-account issuer).
pub fn api_audiences() -> Vec<String> {
    vec![serviceaccount::ISSUER.to_string()]
}

/// The static tokens and the service-account key.
#[derive(Clone, Debug, Default)]
pub struct TokenAuthenticator {
    /// Tokens that authenticate as the admin (compared in constant time).
    static_tokens: Vec<String>,
    /// Signs and verifies service-account tokens; `None` issues none.
    service_accounts: Option<ServiceAccountTokens>,
}

impl TokenAuthenticator {
    /// Accepts these admin tokens.
    pub fn new(static_tokens: Vec<String>) -> Self {
        TokenAuthenticator {
            static_tokens,
            service_accounts: None,
        }
    }

    /// Also issues and accepts service-account tokens signed with `keys`.
    pub fn with_service_accounts(mut self, keys: ServiceAccountTokens) -> Self {
        self.service_accounts = Some(keys);
        self
    }

    /// The service-account key, when tokens are issued.
    pub fn service_accounts(&self) -> Option<&ServiceAccountTokens> {
        self.service_accounts.as_ref()
    }

    /// Who `token` names, for a request meant for `wanted` audiences:
    /// `Ok(None)` when no authenticator recognises it.
    pub fn authenticate(
        &self,
        api: &Api,
        token: &str,
        wanted: &[String],
    ) -> Result<Option<Authenticated>, String> {
        if self
            .static_tokens
            .iter()
            .any(|t| constant_time_eq(t.as_bytes(), token.as_bytes()))
        {
            // An audience-agnostic authenticator: good for the API's audiences only.
            let audiences: Vec<String> = api_audiences()
                .into_iter()
                .filter(|a| wanted.contains(a))
                .collect();
            return Ok((!audiences.is_empty()).then(|| Authenticated {
                user: UserInfo::admin(),
                audiences,
            }));
        }
        let Some(keys) = &self.service_accounts else {
            return Ok(None);
        };
        let claims = match keys.verify(token) {
            Ok(claims) => claims,
            Err(Rejection::NotOurs) => return Ok(None),
            Err(Rejection::Invalid(why)) => return Err(why),
        };
        let audiences = serviceaccount::audiences(&claims, wanted)?;
        let now = api
            .clock()
            .now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        serviceaccount::check_times(&claims, now)?;
        let user = user_of(api, &claims)?;
        Ok(Some(Authenticated { user, audiences }))
    }
}

/// The user of verified claims, once the objects they name are checked to
/// exist still with the same uids (upstream `validator.Validate`).
fn user_of(api: &Api, claims: &Claims) -> Result<UserInfo, String> {
    let k = &claims.kubernetes;
    let ns = k.namespace.as_str();
    let sa = &k.serviceaccount;
    let live_uid = |plural: &str, name: &str| -> Option<String> {
        let info = api.resource("", "v1", plural).ok()?;
        let obj: Value = api.get(&info, Some(ns), name).ok()?;
        obj.pointer("/metadata/uid")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let Some(uid) = live_uid("serviceaccounts", &sa.name) else {
        return Err(format!("service account {ns}/{} has been deleted", sa.name));
    };
    if uid != sa.uid {
        return Err(format!(
            "service account UID ({uid}) does not match claim ({})",
            sa.uid
        ));
    }
    let mut extra = BTreeMap::new();
    if let Some(secret) = &k.secret {
        match live_uid("secrets", &secret.name) {
            None => return Err(format!("secret {ns}/{} has been deleted", secret.name)),
            Some(u) if u != secret.uid => {
                return Err(format!(
                    "secret {ns}/{} has been deleted: the secret's UID ({u}) does not match the claim ({})",
                    secret.name, secret.uid
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(pod) = &k.pod {
        match live_uid("pods", &pod.name) {
            None => return Err(format!("pod {ns}/{} has been deleted", pod.name)),
            Some(u) if u != pod.uid => {
                return Err(format!(
                    "pod {ns}/{} has been deleted: the pod's UID ({u}) does not match the claim ({})",
                    pod.name, pod.uid
                ));
            }
            Some(_) => {}
        }
        extra.insert(POD_NAME.to_string(), vec![pod.name.clone()]);
        extra.insert(POD_UID.to_string(), vec![pod.uid.clone()]);
    }
    if !claims.jti.is_empty() {
        extra.insert(CREDENTIAL_ID.to_string(), vec![format!("JTI={}", claims.jti)]);
    }
    Ok(UserInfo::service_account(ns, &sa.name, &sa.uid, extra))
}

/// Equality whose time does not depend on where the inputs differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
