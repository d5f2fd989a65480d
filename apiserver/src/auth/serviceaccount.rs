//! Service-account tokens: signed JWTs with upstream's claims, issued by
//! TokenRequest and verified on every request that presents one.
//!
//! Upstream: `pkg/serviceaccount/jwt.go` (signing, the `kid`, the
//! authenticator's audience check) and `pkg/serviceaccount/claims.go` (the
//! claims and their validation). Signed ES256 with the key kept in
//! `<data-dir>/pki/sa.key`; the `kid` is the base64url SHA-256 of the public
//! key's DER, as upstream computes it.
//!
//! Time is the injected clock's: the JWT library's own expiry check (which
//! reads the wall clock) is off, and [`check_times`] does it with `now`
//! passed in, with upstream's one-minute leeway.
//!
//! Simplified: no legacy (Secret-based) tokens, no `warnafter` claim and no
//! extended expiry for kubelet-projected tokens; a token may be bound to a
//! Pod or a Secret (not a Node).

use serde::{Deserialize, Serialize};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};

/// Why a signing key could not be used.
pub use jsonwebtoken::errors::Error as KeyError;

/// The issuer (`iss`) of every token, and the API server's audience:
/// upstream's `--service-account-issuer` as kubeadm and kind set it.
pub const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// How far `exp` and `nbf` may be off (go-jose's `DefaultLeeway`).
const LEEWAY_SECONDS: i64 = 60;

/// The claims of a service-account token (upstream `privateClaims` plus the
/// registered claims).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// The audiences the token is for.
    #[serde(deserialize_with = "one_or_many")]
    pub aud: Vec<String>,
    /// Expiry, seconds since the epoch.
    pub exp: i64,
    /// Issued at.
    pub iat: i64,
    /// [`ISSUER`].
    pub iss: String,
    /// The credential's id (the user's `credential-id` extra is `JTI=<jti>`).
    #[serde(default)]
    pub jti: String,
    /// The object claims.
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubernetesClaims,
    /// Not before.
    pub nbf: i64,
    /// `system:serviceaccount:NS:NAME`.
    pub sub: String,
}

/// The `kubernetes.io` claim: what the token is bound to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KubernetesClaims {
    /// The service account's namespace.
    pub namespace: String,
    /// The pod the token is bound to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<ObjectRef>,
    /// The secret the token is bound to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ObjectRef>,
    /// The service account.
    pub serviceaccount: ObjectRef,
}

/// A name and uid, as the claims carry them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
}

/// `aud` is an array, or (from other issuers) a single string.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Aud {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Aud::deserialize(d)? {
        Aud::One(a) => vec![a],
        Aud::Many(a) => a,
    })
}

/// Why a presented token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Not a token of this issuer (not a JWT, another `iss`): other
    /// authenticators may still accept it.
    NotOurs,
    /// Ours, but invalid; the text is upstream's.
    Invalid(String),
}

/// The key pair that signs and verifies service-account tokens.
#[derive(Clone)]
pub struct ServiceAccountTokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    key_id: String,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl ServiceAccountTokens {
    /// From a P-256 private key (PKCS#8 PEM) and its public key (SPKI PEM).
    pub fn from_pem(private_key: &str, public_key: &str) -> Result<Self, KeyError> {
        Ok(ServiceAccountTokens {
            encoding: EncodingKey::from_ec_pem(private_key.as_bytes())?,
            decoding: DecodingKey::from_ec_pem(public_key.as_bytes())?,
            key_id: key_id(public_key),
        })
    }

    /// Signs `claims`.
    pub fn issue(&self, claims: &Claims) -> Result<String, KeyError> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.key_id.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding)
    }

    /// The claims of `token` when its signature is this key's and its
    /// issuer is [`ISSUER`]; times are not checked here ([`check_times`]).
    pub fn verify(&self, token: &str) -> Result<Claims, Rejection> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| Rejection::NotOurs)?;
        if header.alg != Algorithm::ES256 {
            return Err(Rejection::NotOurs);
        }
        let mut validation = Validation::new(Algorithm::ES256);
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        let unverified = {
            let mut v = validation.clone();
            v.insecure_disable_signature_validation();
            jsonwebtoken::decode::<serde_json::Value>(token, &DecodingKey::from_secret(&[]), &v)
        };
        match unverified {
            Ok(data) if data.claims.get("iss").and_then(|i| i.as_str()) == Some(ISSUER) => {}
            _ => return Err(Rejection::NotOurs),
        }
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)
            .map(|data| data.claims)
            .map_err(|e| Rejection::Invalid(e.to_string()))
    }
}

/// Checks `exp`, `nbf` and `iat` against `now` (seconds since the epoch),
/// with upstream's texts (`claims.go` `Validate`).
pub fn check_times(claims: &Claims, now: i64) -> Result<(), String> {
    if now > claims.exp + LEEWAY_SECONDS {
        return Err("service account token has expired".into());
    }
    if now + LEEWAY_SECONDS < claims.nbf {
        return Err("service account token is not valid yet".into());
    }
    if now + LEEWAY_SECONDS < claims.iat {
        return Err("service account token is issued in the future".into());
    }
    Ok(())
}

/// The audiences of the token that are also `wanted` (upstream
/// `Audiences.Intersect`); an error with upstream's text when none is.
pub fn audiences(claims: &Claims, wanted: &[String]) -> Result<Vec<String>, String> {
    let both: Vec<String> = claims
        .aud
        .iter()
        .filter(|a| wanted.contains(a))
        .cloned()
        .collect();
    if both.is_empty() {
        return Err(format!(
            "token audiences {} is invalid for the target audiences {}",
            go_quoted_slice(&claims.aud),
            go_quoted_slice(wanted)
        ));
    }
    Ok(both)
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn go_quoted_slice(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| crate::gofmt::go_quote(s)).collect();
    format!("[{}]", quoted.join(" "))
}

/// The `kid` of a public key: base64url (no padding) of the SHA-256 of its DER.
fn key_id(public_key_pem: &str) -> String {
    use base64::Engine as _;
    let der = x509_parser::pem::parse_x509_pem(public_key_pem.as_bytes())
        .map(|(_, pem)| pem.contents)
        .unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, &der);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> ServiceAccountTokens {
        let key = rcgen::KeyPair::generate().unwrap();
        ServiceAccountTokens::from_pem(&key.serialize_pem(), &key.public_key_pem()).unwrap()
    }

    fn claims(aud: &[&str]) -> Claims {
        Claims {
            aud: aud.iter().map(|a| a.to_string()).collect(),
            exp: 1_000 + 600,
            iat: 1_000,
            iss: ISSUER.into(),
            jti: "id-1".into(),
            kubernetes: KubernetesClaims {
                namespace: "ns".into(),
                pod: None,
                secret: None,
                serviceaccount: ObjectRef {
                    name: "sa".into(),
                    uid: "u-1".into(),
                },
            },
            nbf: 1_000,
            sub: "system:serviceaccount:ns:sa".into(),
        }
    }

    #[test]
    fn a_token_verifies_with_its_key_only() {
        let (ours, theirs) = (keys(), keys());
        let token = ours.issue(&claims(&[ISSUER])).unwrap();
        assert_eq!(ours.verify(&token).unwrap(), claims(&[ISSUER]));
        assert!(matches!(theirs.verify(&token), Err(Rejection::Invalid(_))));
        assert_eq!(ours.verify("not-a-jwt"), Err(Rejection::NotOurs));
        let mut foreign = claims(&[ISSUER]);
        foreign.iss = "https://accounts.example.com".into();
        assert_eq!(
            ours.verify(&theirs.issue(&foreign).unwrap()),
            Err(Rejection::NotOurs)
        );
    }

    #[test]
    fn times_have_a_minute_of_leeway() {
        let c = claims(&[ISSUER]);
        assert_eq!(check_times(&c, 1_000), Ok(()));
        assert_eq!(check_times(&c, 1_660), Ok(()));
        assert_eq!(
            check_times(&c, 1_661),
            Err("service account token has expired".into())
        );
        assert_eq!(
            check_times(&c, 939),
            Err("service account token is not valid yet".into())
        );
    }

    #[test]
    fn audiences_intersect_or_fail_with_upstreams_text() {
        let c = claims(&["vault", ISSUER]);
        assert_eq!(audiences(&c, &[ISSUER.to_string()]), Ok(vec![ISSUER.to_string()]));
        assert_eq!(
            audiences(&claims(&["vault"]), &[ISSUER.to_string()]),
            Err(format!(
                "token audiences [\"vault\"] is invalid for the target audiences [\"{ISSUER}\"]"
            ))
        );
    }
}
