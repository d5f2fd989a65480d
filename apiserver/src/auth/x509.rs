//! Who a client certificate names: the subject of the leaf certificate the
//! TLS handshake verified against the cluster CA.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go`
//! (`CommonNameUserConversion`). The chain itself is verified by rustls
//! during the handshake (`http/tls.rs`); this only reads the subject.

use x509_parser::prelude::{FromDer, X509Certificate};

use super::UserInfo;

/// The user a verified client certificate (DER) authenticates as; `None`
/// when it cannot be parsed or names no CN.
pub fn certificate_user(der: &[u8]) -> Option<UserInfo> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let subject = cert.subject();
    let common_name = subject.iter_common_name().next()?.as_str().ok()?;
    let organizations: Vec<String> = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect();
    UserInfo::from_certificate(common_name, &organizations, &sha256_hex(der))
}

/// The SHA-256 of `bytes` in lower-case hex.
fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}
