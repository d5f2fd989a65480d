//! Issuing a certificate for a request: the request's subject and public
//! key, the usages the CSR object asks for, signed by the cluster CA.
//!
//! Upstream: `pkg/controller/certificates/authority/authority.go` (`Sign`)
//! and `policies.go` (`PermissiveSigningPolicy`): the certificate starts 5
//! minutes in the past (clock skew) and is valid for the planned duration;
//! it is never a CA; key usages come from `spec.usages`, not from the
//! request's own extensions.
//!
//! Simplified: a certificate does not outlive the CA here because the CA
//! is valid far into the future (rcgen's default); upstream caps it.

use std::time::{Duration, SystemTime};

use rcgen::{
    CertificateSigningRequestParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};

use super::plan::RequestSubject;

/// How far back a certificate's validity starts (upstream `backdate`).
const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// The cluster CA, as PEM.
#[derive(Clone, Debug)]
pub struct CertificateAuthority {
    /// The CA certificate.
    pub cert: String,
    /// Its private key.
    pub key: String,
}

/// The subject of a PEM request (the signers check it before signing).
pub fn request_subject(request_pem: &str) -> Result<RequestSubject, String> {
    use x509_parser::prelude::{FromDer, X509CertificationRequest};
    let (_, block) = x509_parser::pem::parse_x509_pem(request_pem.as_bytes()).map_err(|e| e.to_string())?;
    let (_, request) = X509CertificationRequest::from_der(&block.contents).map_err(|e| e.to_string())?;
    let info = &request.certification_request_info;
    let text = |a: &x509_parser::x509::AttributeTypeAndValue<'_>| a.as_str().unwrap_or_default().to_string();
    let mut types: Vec<String> = Vec::new();
    let mut subject = RequestSubject::default();
    for attribute in info.subject.iter_attributes() {
        let oid = attribute.attr_type().to_id_string();
        subject.repeated_attribute |= types.contains(&oid);
        types.push(oid);
    }
    subject.common_name = info
        .subject
        .iter_common_name()
        .next()
        .map(text)
        .unwrap_or_default();
    subject.organizations = info.subject.iter_organization().map(text).collect();
    subject.has_sans = request.requested_extensions().into_iter().flatten().any(|e| {
        matches!(e, x509_parser::extensions::ParsedExtension::SubjectAlternativeName(san) if !san.general_names.is_empty())
    });
    Ok(subject)
}

/// Signs `request_pem` with `ca` at `now`, valid for `duration`, with these
/// `usages` (`spec.usages` names): the certificate, PEM.
pub fn sign(
    request_pem: &str,
    usages: &[String],
    duration: Duration,
    now: SystemTime,
    ca: &CertificateAuthority,
) -> Result<String, String> {
    let key = KeyPair::from_pem(&ca.key).map_err(|e| format!("the CA key: {e}"))?;
    let issuer = Issuer::from_ca_cert_pem(&ca.cert, key).map_err(|e| format!("the CA certificate: {e}"))?;
    let mut request = CertificateSigningRequestParams::from_pem(request_pem).map_err(|e| e.to_string())?;
    let params = &mut request.params;
    let not_before = now.checked_sub(BACKDATE).unwrap_or(now);
    // rcgen's dates are `time::OffsetDateTime`: the epoch plus whole seconds.
    let epoch = rcgen::date_time_ymd(1970, 1, 1);
    params.not_before = epoch + seconds_since_epoch(not_before);
    params.not_after = epoch + seconds_since_epoch(not_before + duration);
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = usages.iter().filter_map(|u| key_usage(u)).collect();
    params.extended_key_usages = usages.iter().filter_map(|u| extended_key_usage(u)).collect();
    params.use_authority_key_identifier_extension = true;
    let cert = request.signed_by(&issuer).map_err(|e| e.to_string())?;
    Ok(cert.pem())
}

/// Whole seconds since the epoch (X.509 times keep no more).
fn seconds_since_epoch(t: SystemTime) -> Duration {
    Duration::from_secs(
        t.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs(),
    )
}

/// The X.509 key usage of a `spec.usages` name (upstream `keyUsageDict`).
fn key_usage(usage: &str) -> Option<KeyUsagePurpose> {
    Some(match usage {
        "signing" | "digital signature" => KeyUsagePurpose::DigitalSignature,
        "content commitment" => KeyUsagePurpose::ContentCommitment,
        "key encipherment" => KeyUsagePurpose::KeyEncipherment,
        "key agreement" => KeyUsagePurpose::KeyAgreement,
        "data encipherment" => KeyUsagePurpose::DataEncipherment,
        "cert sign" => KeyUsagePurpose::KeyCertSign,
        "crl sign" => KeyUsagePurpose::CrlSign,
        "encipher only" => KeyUsagePurpose::EncipherOnly,
        "decipher only" => KeyUsagePurpose::DecipherOnly,
        _ => return None,
    })
}

/// The extended key usage of a `spec.usages` name (upstream `extKeyUsageDict`).
fn extended_key_usage(usage: &str) -> Option<ExtendedKeyUsagePurpose> {
    Some(match usage {
        "any" => ExtendedKeyUsagePurpose::Any,
        "server auth" => ExtendedKeyUsagePurpose::ServerAuth,
        "client auth" => ExtendedKeyUsagePurpose::ClientAuth,
        "code signing" => ExtendedKeyUsagePurpose::CodeSigning,
        "email protection" | "s/mime" => ExtendedKeyUsagePurpose::EmailProtection,
        "timestamping" => ExtendedKeyUsagePurpose::TimeStamping,
        "ocsp signing" => ExtendedKeyUsagePurpose::OcspSigning,
        _ => return None,
    })
}
