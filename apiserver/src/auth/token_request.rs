//! `POST /api/v1/namespaces/NS/serviceaccounts/NAME/token`: an
//! authentication.k8s.io/v1 TokenRequest, answered with a signed token for
//! the service account (what `kubectl create token` sends).
//!
//! Upstream: `pkg/registry/core/serviceaccount/storage/token.go`
//! (`TokenREST.Create`), `pkg/apis/authentication/validation`
//! (`ValidateTokenRequest`), `pkg/apis/authentication/v1/defaults.go`
//! (expirationSeconds 3600) and `pkg/serviceaccount/claims.go` (`Claims`).
//!
//! Simplified: a token may be bound to a Pod or a Secret, not a Node; the
//! expiry is never extended (upstream extends kubelet tokens of an hour).

use serde_json::{Value, json};

use super::serviceaccount::{Claims, ISSUER, KubernetesClaims, ObjectRef, ServiceAccountTokens};
use super::tokens::api_audiences;
use crate::api::{Api, format_time};
use crate::error::{ApiError, ApiResult, FieldError};

/// The shortest token upstream issues (`ValidateTokenRequest`).
const MIN_EXPIRATION_SECONDS: i64 = 600;
/// The longest: 2^32 seconds.
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
/// `spec.expirationSeconds` when not given.
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;

/// Answers a TokenRequest for service account `name` in `namespace`.
pub fn create_token(
    api: &Api,
    keys: &ServiceAccountTokens,
    namespace: &str,
    name: &str,
    mut request: Value,
) -> ApiResult<Value> {
    default_token_request(&mut request);
    let errs = validate_token_request(&request, namespace, name);
    if !errs.is_empty() {
        return Err(ApiError::invalid(
            "authentication.k8s.io",
            "TokenRequest",
            name,
            &errs,
        ));
    }
    let sa_info = api.resource("", "v1", "serviceaccounts")?;
    let sa = api.get(&sa_info, Some(namespace), name)?;
    let (pod, secret) = bound_object(api, namespace, name, request.pointer("/spec/boundObjectRef"))?;
    let now = api.clock().now();
    let now_secs = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let expiration = request["spec"]["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let audiences: Vec<String> = request["spec"]["audiences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    let claims = Claims {
        aud: audiences,
        exp: now_secs + expiration,
        iat: now_secs,
        iss: ISSUER.to_string(),
        jti: uuid::Uuid::new_v4().to_string(),
        kubernetes: KubernetesClaims {
            namespace: namespace.to_string(),
            pod,
            secret,
            serviceaccount: object_ref(&sa),
        },
        nbf: now_secs,
        sub: format!("system:serviceaccount:{namespace}:{name}"),
    };
    let token = keys
        .issue(&claims)
        .map_err(|e| ApiError::internal(format!("failed to generate token: {e}")))?;
    let expires = now + std::time::Duration::from_secs(u64::try_from(expiration).unwrap_or(0));
    let mut out = request;
    out["kind"] = json!("TokenRequest");
    out["apiVersion"] = json!("authentication.k8s.io/v1");
    let meta = crate::kinds::child(&mut out, "metadata")
        .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
    crate::kinds::default_key(meta, "name", json!(name));
    crate::kinds::default_key(meta, "namespace", json!(namespace));
    meta["creationTimestamp"] = json!(format_time(now));
    out["status"] = json!({"token": token, "expirationTimestamp": format_time(expires)});
    Ok(out)
}

/// v1 defaulting: an hour, and the API server's audiences when none are given.
fn default_token_request(request: &mut Value) {
    if let Some(spec) = crate::kinds::child(request, "spec") {
        crate::kinds::default_key(spec, "expirationSeconds", json!(DEFAULT_EXPIRATION_SECONDS));
        if spec["audiences"].as_array().is_none_or(Vec::is_empty) {
            spec["audiences"] = json!(api_audiences());
        }
    }
}

/// `ValidateTokenRequest`, and the body's name and namespace, when given,
/// must be the URL's.
fn validate_token_request(request: &Value, namespace: &str, name: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let given = |k: &str| {
        request
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    if !given("name").is_empty() && given("name") != name {
        errs.push(FieldError::invalid(
            "metadata.name",
            json!(given("name")),
            "must match the service account name if specified",
        ));
    }
    if !given("namespace").is_empty() && given("namespace") != namespace {
        errs.push(FieldError::invalid(
            "metadata.namespace",
            json!(given("namespace")),
            "must match the service account namespace if specified",
        ));
    }
    let seconds = &request["spec"]["expirationSeconds"];
    match seconds.as_i64() {
        Some(s) if s < MIN_EXPIRATION_SECONDS => errs.push(FieldError::invalid(
            "spec.expirationSeconds",
            seconds.clone(),
            "may not specify a duration less than 10 minutes",
        )),
        Some(s) if s > MAX_EXPIRATION_SECONDS => errs.push(FieldError::invalid(
            "spec.expirationSeconds",
            seconds.clone(),
            "may not specify a duration larger than 2^32 seconds",
        )),
        Some(_) => {}
        None => errs.push(FieldError::invalid(
            "spec.expirationSeconds",
            seconds.clone(),
            "must be an integer",
        )),
    }
    errs
}

/// The pod or secret a token is bound to (`spec.boundObjectRef`).
fn bound_object(
    api: &Api,
    namespace: &str,
    sa_name: &str,
    reference: Option<&Value>,
) -> ApiResult<(Option<ObjectRef>, Option<ObjectRef>)> {
    let Some(reference) = reference.filter(|r| r.is_object()) else {
        return Ok((None, None));
    };
    let field = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or("");
    let api_version = field("apiVersion");
    let (kind, plural) = match (api_version, field("kind")) {
        ("v1", "Pod") => ("Pod", "pods"),
        ("v1", "Secret") => ("Secret", "secrets"),
        (v, k) => {
            let gvk = match v.split_once('/') {
                Some((g, v)) => format!("{g}/{v}, Kind={k}"),
                None => format!("/{v}, Kind={k}"),
            };
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {gvk}"
            )));
        }
    };
    let info = api.resource("", "v1", plural)?;
    let object = api.get(&info, Some(namespace), field("name"))?;
    if kind == "Pod" {
        let runs_as = object
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if runs_as != sa_name {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {sa_name:?} to pod running with serviceaccount {runs_as:?}"
            )));
        }
    }
    let bound = object_ref(&object);
    if !field("uid").is_empty() && field("uid") != bound.uid {
        return Err(ApiError::conflict(
            "",
            kind,
            &bound.name,
            &format!(
                "the UID in the bound object reference ({}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                field("uid"),
                bound.uid
            ),
        ));
    }
    Ok(match kind {
        "Pod" => (Some(bound), None),
        _ => (None, Some(bound)),
    })
}

/// The name and uid of a stored object.
fn object_ref(object: &Value) -> ObjectRef {
    let meta = |k: &str| {
        object
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    ObjectRef {
        name: meta("name"),
        uid: meta("uid"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hour_and_the_api_audience_by_default() {
        let mut request = json!({"spec": {}});
        default_token_request(&mut request);
        assert_eq!(request["spec"]["expirationSeconds"], 3600);
        assert_eq!(request["spec"]["audiences"], json!([ISSUER]));
        let mut asked = json!({"spec": {"audiences": ["vault"], "expirationSeconds": 900}});
        default_token_request(&mut asked);
        assert_eq!(
            asked["spec"],
            json!({"audiences": ["vault"], "expirationSeconds": 900})
        );
    }

    #[test]
    fn durations_below_ten_minutes_or_above_two_to_the_32_are_invalid() {
        let errs = |s: i64| {
            validate_token_request(&json!({"spec": {"expirationSeconds": s}}), "ns", "sa")
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            errs(599),
            ["spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"]
        );
        assert!(errs(600).is_empty());
        assert!(errs(1 << 32).is_empty());
        assert_eq!(
            errs((1 << 32) + 1),
            [
                "spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"
            ]
        );
    }

    #[test]
    fn a_body_naming_another_account_is_invalid() {
        let request = json!({"metadata": {"name": "other"}, "spec": {"expirationSeconds": 3600}});
        let errs = validate_token_request(&request, "ns", "sa");
        assert_eq!(
            errs[0].to_string(),
            "metadata.name: Invalid value: \"other\": must match the service account name if specified"
        );
    }
}
