//! certificates.k8s.io/v1 CertificateSigningRequest: the strategy (who
//! asked is recorded by the server; each write path may change only its
//! part) and validation.
//!
//! Upstream: `pkg/registry/certificates/certificates/strategy.go` (the
//! main, `status` and `approval` strategies) and
//! `pkg/apis/certificates/validation/validation.go`
//! (`ValidateCertificateSigningRequestCreate` / `...Update`, with their
//! compatibility options read from the stored object).
//!
//! Write paths:
//! - create: `spec.username`, `uid`, `groups`, `extra` are the requesting
//!   user's ([`set_requestor`], called by the HTTP layer, which knows the
//!   user); the status starts empty;
//! - update of the object: spec and status are the stored ones (only
//!   metadata changes);
//! - `approval`: only `status.conditions` changes (Approved / Denied);
//! - `status`: the spec is kept and so are the Approved / Denied conditions
//!   (the signer writes `certificate` and `Failed`).
//!
//! Simplified: `status` quietly keeps the stored Approved / Denied
//! conditions where upstream answers 422 "updates may not add a condition";
//! a condition's missing `lastTransitionTime` becomes its `lastUpdateTime`
//! (upstream: now); `status.certificate` must be PEM CERTIFICATE blocks that
//! parse as X.509.

use base64::Engine as _;
use serde_json::{Value, json};
use x509_parser::prelude::{FromDer, X509Certificate, X509CertificationRequest};

use super::{copy_key, items};
use crate::auth::UserInfo;
use crate::error::FieldError;
use crate::validation::{invalid_raw, is_dns1123_label, is_dns1123_subdomain};

/// Condition types that may only be `True`.
const TRUE_ONLY: [&str; 3] = ["Approved", "Denied", "Failed"];

/// The signer name of requests made through the v1beta1 API only.
const LEGACY_UNKNOWN_SIGNER: &str = "kubernetes.io/legacy-unknown";

/// Every key usage upstream knows, sorted as its messages list them.
const USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// Records who asks for the certificate (upstream `PrepareForCreate`):
/// whatever the body said is replaced by the requesting user.
pub fn set_requestor(csr: &mut Value, user: &UserInfo) {
    let Some(spec) = super::child(csr, "spec") else {
        return;
    };
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    for k in ["username", "uid", "groups", "extra"] {
        spec.remove(k);
    }
    spec.insert("username".into(), json!(user.name));
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        spec.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
}

/// Create: no request comes pre-approved.
pub(super) fn prepare_csr_create(csr: &mut Value) {
    super::set(csr, "status", json!({}));
}

/// Update of the object: only metadata may change.
pub(super) fn prepare_csr_update(new: &mut Value, old: &Value) {
    copy_key(new, old, "spec");
    copy_key(new, old, "status");
}

/// `status`: the stored Approved / Denied conditions are kept.
pub(super) fn prepare_csr_status_update(new: &mut Value, old: &Value) {
    let approval = |c: &&Value| matches!(c["type"].as_str(), Some("Approved" | "Denied"));
    let mut conditions: Vec<Value> = items(old.get("status").unwrap_or(&Value::Null), "conditions")
        .filter(approval)
        .cloned()
        .collect();
    conditions.extend(
        items(new.get("status").unwrap_or(&Value::Null), "conditions")
            .filter(|c| !approval(c))
            .cloned(),
    );
    set_conditions(new, conditions);
}

/// `approval`: the conditions are the request's, the rest of the status the stored one.
pub fn prepare_csr_approval_update(new: &mut Value, old: &Value) {
    copy_key(new, old, "spec");
    let conditions: Vec<Value> = items(new.get("status").unwrap_or(&Value::Null), "conditions")
        .cloned()
        .collect();
    copy_key(new, old, "status");
    set_conditions(new, conditions);
}

fn set_conditions(csr: &mut Value, mut conditions: Vec<Value>) {
    for c in &mut conditions {
        if c.get("lastTransitionTime").is_none_or(Value::is_null)
            && let Some(t) = c.get("lastUpdateTime").cloned()
        {
            c["lastTransitionTime"] = t;
        }
    }
    let Some(status) = super::child(csr, "status") else {
        return;
    };
    if conditions.is_empty() {
        super::remove(status, "conditions");
    } else {
        status["conditions"] = json!(conditions);
    }
}

/// What the stored object tolerates (upstream `getValidationOptions`).
#[derive(Clone, Copy, Debug, Default)]
struct Tolerate {
    both_approved_and_denied: bool,
    legacy_signer: bool,
    duplicate_conditions: bool,
    empty_condition_type: bool,
    arbitrary_certificate: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
}

impl Tolerate {
    fn of(new: &Value, old: Option<&Value>) -> Tolerate {
        let Some(old) = old else {
            return Tolerate::default();
        };
        let types: Vec<&str> = conditions(old).filter_map(|c| c["type"].as_str()).collect();
        let usages: Vec<&str> = usages(old);
        Tolerate {
            both_approved_and_denied: types.contains(&"Approved") && types.contains(&"Denied"),
            legacy_signer: old.pointer("/spec/signerName").and_then(Value::as_str)
                == Some(LEGACY_UNKNOWN_SIGNER),
            duplicate_conditions: has_duplicates(&types),
            empty_condition_type: conditions(old).any(|c| c["type"].as_str().unwrap_or("").is_empty()),
            arbitrary_certificate: certificate(new) == certificate(old)
                || validate_certificate(&certificate(old)).is_err(),
            unknown_usages: usages.iter().any(|u| !USAGES.contains(u)),
            duplicate_usages: has_duplicates(&usages),
        }
    }
}

fn has_duplicates(values: &[&str]) -> bool {
    values.iter().enumerate().any(|(i, v)| values[..i].contains(v))
}

fn conditions(csr: &Value) -> impl Iterator<Item = &Value> {
    items(csr.get("status").unwrap_or(&Value::Null), "conditions")
}

fn usages(csr: &Value) -> Vec<&str> {
    items(csr.get("spec").unwrap_or(&Value::Null), "usages")
        .filter_map(Value::as_str)
        .collect()
}

/// The bytes of a base64 field (`spec.request`, `status.certificate`).
fn bytes_at(csr: &Value, pointer: &str) -> Vec<u8> {
    let text = csr.pointer(pointer).and_then(Value::as_str).unwrap_or("");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default()
}

fn certificate(csr: &Value) -> Vec<u8> {
    bytes_at(csr, "/status/certificate")
}

/// Validation of a new CertificateSigningRequest (spec and status; the
/// ObjectMeta rules are the caller's).
pub(super) fn validate_csr(csr: &Value) -> Vec<FieldError> {
    validate_with(csr, Tolerate::of(csr, None))
}

/// Validation of an update: the create rules with what the stored object
/// tolerates, no condition removed, no certificate replaced.
pub(super) fn validate_csr_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = validate_with(new, Tolerate::of(new, Some(old)));
    for t in TRUE_ONLY {
        let count = |csr: &Value| conditions(csr).filter(|c| c["type"] == t).count();
        if count(new) < count(old) {
            errs.push(FieldError::forbidden(
                "status.conditions",
                format!("updates may not remove a condition of type {t:?}"),
            ));
        }
    }
    let (new_cert, old_cert) = (certificate(new), certificate(old));
    if new_cert != old_cert && !old_cert.is_empty() {
        errs.push(FieldError::forbidden(
            "status.certificate",
            "updates may not modify existing certificate content",
        ));
    }
    errs
}

fn validate_with(csr: &Value, tolerate: Tolerate) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let request = bytes_at(csr, "/spec/request");
    if let Err(why) = parse_csr(&request) {
        errs.push(invalid_raw("spec.request", go_bytes(&request), &why));
    }
    let usages = usages(csr);
    if usages.is_empty() {
        errs.push(FieldError::required("spec.usages", ""));
    }
    if !tolerate.unknown_usages {
        for (i, u) in usages.iter().enumerate() {
            if !USAGES.contains(u) {
                errs.push(FieldError::not_supported(
                    format!("spec.usages[{i}]"),
                    json!(u),
                    &USAGES,
                ));
            }
        }
    }
    if !tolerate.duplicate_usages {
        for (i, u) in usages.iter().enumerate() {
            if usages[..i].contains(u) {
                errs.push(FieldError::duplicate(format!("spec.usages[{i}]"), json!(u)));
            }
        }
    }
    let signer = csr
        .pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !tolerate.legacy_signer && signer == LEGACY_UNKNOWN_SIGNER {
        errs.push(FieldError::invalid(
            "spec.signerName",
            json!(signer),
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errs.extend(validate_signer_name("spec.signerName", signer));
    }
    if let Some(s) = csr.pointer("/spec/expirationSeconds").and_then(Value::as_i64)
        && s < 600
    {
        errs.push(FieldError::invalid(
            "spec.expirationSeconds",
            json!(s),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errs.extend(validate_conditions(csr, tolerate));
    if !tolerate.arbitrary_certificate
        && let Err(why) = validate_certificate(&certificate(csr))
    {
        errs.push(FieldError::invalid(
            "status.certificate",
            json!("<certificate data>"),
            why,
        ));
    }
    errs
}

fn validate_conditions(csr: &Value, tolerate: Tolerate) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (mut approved, mut denied) = (false, false);
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in conditions(csr).enumerate() {
        let path = format!("status.conditions[{i}]");
        let ty = c["type"].as_str().unwrap_or("");
        if !tolerate.empty_condition_type && ty.is_empty() {
            errs.push(FieldError::required(format!("{path}.type"), ""));
        }
        let allowed: &[&str] = if TRUE_ONLY.contains(&ty) {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        match c["status"].as_str().unwrap_or("") {
            "" => errs.push(FieldError::required(format!("{path}.status"), "")),
            s if !allowed.contains(&s) => errs.push(FieldError::not_supported(
                format!("{path}.status"),
                json!(s),
                allowed,
            )),
            _ => {}
        }
        if !tolerate.both_approved_and_denied {
            let clash = match ty {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if clash {
                errs.push(FieldError::invalid(
                    format!("{path}.type"),
                    json!(ty),
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !tolerate.duplicate_conditions {
            if seen.contains(&ty) {
                errs.push(FieldError::duplicate(format!("{path}.type"), json!(ty)));
            }
            seen.push(ty);
        }
    }
    errs
}

/// Upstream `ValidateSignerName` (`pkg/apis/core/validation`): a domain of
/// at least two DNS labels, a `/`, and a path of DNS subdomains.
pub fn validate_signer_name(path: &str, signer: &str) -> Vec<FieldError> {
    if signer.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let segments: Vec<&str> = signer.split('/').collect();
    let [domain, rest] = segments[..] else {
        return vec![FieldError::invalid(
            path,
            json!(signer),
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        )];
    };
    let mut errs = Vec::new();
    if domain.len() > 253 {
        errs.push(FieldError::too_long(path, "may not be more than 253 bytes"));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if let Some((label, problems)) = labels
        .iter()
        .map(|l| (l, is_dns1123_label(l)))
        .find(|(_, p)| !p.is_empty())
    {
        for p in problems {
            errs.push(FieldError::invalid(
                path,
                json!(domain),
                format!("validating label {label:?}: {p}"),
            ));
        }
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(
            path,
            json!(domain),
            "should be a domain with at least two segments separated by dots",
        ));
    }
    if let Some((label, problems)) = rest
        .split('.')
        .map(|l| (l, is_dns1123_subdomain(l)))
        .find(|(_, p)| !p.is_empty())
    {
        for p in problems {
            errs.push(FieldError::invalid(
                path,
                json!(rest),
                format!("validating label {label:?}: {p}"),
            ));
        }
    }
    let max = 253 + (253 + 63 + 1) + 1;
    if signer.len() > max {
        errs.push(FieldError::too_long(
            path,
            format!("may not be more than {max} bytes"),
        ));
    }
    errs
}

/// The DER of a PEM `CERTIFICATE REQUEST` whose signature checks out
/// (upstream `ParseCSR` then `CheckSignature`), or why not.
pub fn parse_csr(pem: &[u8]) -> Result<Vec<u8>, String> {
    let block = match x509_parser::pem::parse_x509_pem(pem) {
        Ok((_, block)) if block.label == "CERTIFICATE REQUEST" => block,
        _ => return Err("PEM block type must be CERTIFICATE REQUEST".into()),
    };
    let (_, csr) = X509CertificationRequest::from_der(&block.contents)
        .map_err(|e| format!("x509: malformed certificate request: {e}"))?;
    csr.verify_signature()
        .map_err(|e| format!("x509: signature verification failure: {e}"))?;
    Ok(block.contents.clone())
}

/// Upstream `validateCertificate`: empty, or only CERTIFICATE blocks
/// without headers that parse as X.509.
fn validate_certificate(pem: &[u8]) -> Result<(), String> {
    if pem.is_empty() {
        return Ok(());
    }
    let mut blocks = 0;
    for block in x509_parser::pem::Pem::iter_from_buffer(pem) {
        let Ok(block) = block else { break };
        if block.label != "CERTIFICATE" {
            return Err(format!(
                "only CERTIFICATE PEM blocks are allowed, found {:?}",
                block.label
            ));
        }
        X509Certificate::from_der(&block.contents)
            .map_err(|e| format!("x509: malformed certificate: {e}"))?;
        blocks += 1;
    }
    if blocks == 0 {
        return Err("must contain at least one CERTIFICATE PEM block".into());
    }
    Ok(())
}

/// Go's `%#v` of a `[]byte`: `[]byte{0x2d, 0x2d}`.
fn go_bytes(bytes: &[u8]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:#04x}")).collect();
    format!("[]byte{{{}}}", hex.join(", "))
}

#[cfg(test)]
#[path = "certificates_tests.rs"]
mod tests;
