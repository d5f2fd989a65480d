//! What the signer does with one CSR: nothing, sign it, or mark it Failed.
//!
//! Upstream: `handle`, `duration` and the signer checks
//! (`isKubernetesAPIServerClient`, `isKubeletClient`,
//! `validAPIServerClientUsages`, `ValidateKubeletClientCSR`) of
//! `pkg/controller/certificates/signer/signer.go` and
//! `pkg/apis/certificates/v1/helpers.go`.
//!
//! ```text
//! not Approved, or Failed, or already issued ─▶ Skip
//! signer not ours                            ─▶ Skip
//! request or usages wrong for the signer     ─▶ Fail(SignerValidationFailure, why)
//! a subject repeating an attribute type      ─▶ Fail (miniplane's limit, see [`REPEATED_ATTRIBUTE`])
//! otherwise                                  ─▶ Sign(duration)
//! ```

use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;

/// `kubernetes.io/kube-apiserver-client`: client certificates for anyone.
pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
/// `kubernetes.io/kube-apiserver-client-kubelet`: client certificates for nodes.
pub const KUBE_APISERVER_CLIENT_KUBELET: &str = "kubernetes.io/kube-apiserver-client-kubelet";
/// Upstream's `--cluster-signing-duration` default: a year.
pub const DEFAULT_CERT_TTL: Duration = Duration::from_secs(365 * 24 * 3600);
/// Why a subject with a repeated attribute type is not signed (miniplane's
/// own limit: upstream signs it).
pub const REPEATED_ATTRIBUTE: &str = "subjects with more than one value of an attribute type (e.g. two O values) are not supported by miniplane's signer; request one group per O in separate certificates";
/// The shortest certificate issued (twice the hard-coded clock skew).
const MIN_DURATION: Duration = Duration::from_secs(600);

/// What to do with one CSR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Nothing: not approved yet, failed, issued, or another signer's.
    Skip,
    /// Issue a certificate valid this long.
    Sign(Duration),
    /// Add a `Failed` condition: reason `SignerValidationFailure`, this message.
    Fail(String),
}

/// The subject and SANs of a parsed request: what the signers check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestSubject {
    /// The CN.
    pub common_name: String,
    /// The O values.
    pub organizations: Vec<String>,
    /// Whether the request asks for any subjectAltName (DNS, IP, email, URI).
    pub has_sans: bool,
    /// Whether an attribute type appears twice (`O=dev, O=ops`), which the
    /// certificate writer (rcgen: one value per type) cannot reproduce.
    pub repeated_attribute: bool,
}

/// Upstream `handle`'s decision for `csr`, whose request parsed to `subject`.
pub fn plan_csr(csr: &CertificateSigningRequest, subject: &RequestSubject, cert_ttl: Duration) -> Plan {
    let status = csr.status.as_ref();
    let has = |t: &str| {
        status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == t && c.status == "True"))
    };
    let issued = status
        .and_then(|s| s.certificate.as_ref())
        .is_some_and(|c| !c.0.is_empty());
    if !has("Approved") || has("Denied") || has("Failed") || issued {
        return Plan::Skip;
    }
    let usages = csr.spec.usages.as_deref().unwrap_or_default();
    let checked = match csr.spec.signer_name.as_str() {
        KUBE_APISERVER_CLIENT => valid_client_usages(usages),
        KUBE_APISERVER_CLIENT_KUBELET => valid_kubelet_client(subject, usages),
        _ => return Plan::Skip,
    };
    if checked.is_ok() && subject.repeated_attribute {
        return Plan::Fail(REPEATED_ATTRIBUTE.into());
    }
    match checked {
        Ok(()) => Plan::Sign(duration(csr.spec.expiration_seconds, cert_ttl)),
        Err(why) => Plan::Fail(why),
    }
}

/// Upstream `duration`: the requested one within [10 minutes, `cert_ttl`].
pub fn duration(expiration_seconds: Option<i32>, cert_ttl: Duration) -> Duration {
    let Some(seconds) = expiration_seconds else {
        return cert_ttl;
    };
    Duration::from_secs(u64::try_from(seconds).unwrap_or(0)).clamp(MIN_DURATION, cert_ttl.max(MIN_DURATION))
}

/// Upstream `validAPIServerClientUsages`: `client auth`, and optionally
/// `digital signature` and `key encipherment`.
fn valid_client_usages(usages: &[String]) -> Result<(), String> {
    for u in usages {
        if !matches!(
            u.as_str(),
            "digital signature" | "key encipherment" | "client auth"
        ) {
            return Err(format!("invalid usage for client certificate: {u}"));
        }
    }
    if !usages.iter().any(|u| u == "client auth") {
        return Err("missing required usage for client certificate: client auth".into());
    }
    Ok(())
}

/// Upstream `ValidateKubeletClientCSR`: O exactly `system:nodes`, a CN
/// `system:node:<name>`, no SANs, and client usages.
fn valid_kubelet_client(subject: &RequestSubject, usages: &[String]) -> Result<(), String> {
    if subject.organizations != ["system:nodes"] {
        return Err("subject organization is not system:nodes".into());
    }
    if !subject.common_name.starts_with("system:node:") {
        return Err("subject common name does not begin with system:node:".into());
    }
    if subject.has_sans {
        return Err("DNS, email, IP or URI subjectAltNames are not allowed".into());
    }
    valid_client_usages(usages)
}
