//! `sign`: the certificate carries the request's subject, the CSR's
//! usages and the planned validity, and chains to the CA.

use std::time::{Duration, SystemTime};

use super::fixtures::{ca, request};
use crate::certificates::sign::sign;

#[test]
fn a_signed_certificate_has_the_subject_usages_and_validity_asked_for() {
    let ca = ca();
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let pem = sign(
        &request("jane", &["dev"], &[]),
        &["client auth".into(), "digital signature".into()],
        Duration::from_secs(3600),
        now,
        &ca,
    )
    .unwrap();
    // Read it back as a client would.
    let (_, block) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
    let cert = block.parse_x509().unwrap();
    assert_eq!(cert.subject().to_string(), "CN=jane, O=dev");
    assert_eq!(cert.issuer().to_string(), "CN=test-ca");
    let eku = cert.extended_key_usage().unwrap().unwrap().value;
    assert!(eku.client_auth && !eku.server_auth);
    assert!(cert.key_usage().unwrap().unwrap().value.digital_signature());
    assert!(!cert.is_ca());
    // Backdated five minutes, then valid for the hour asked for.
    assert_eq!(cert.validity().not_before.timestamp(), 1_800_000_000 - 300);
    assert_eq!(cert.validity().not_after.timestamp(), 1_800_000_000 - 300 + 3600);
    // It authenticates as its subject.
    let user = apiserver::auth::x509::certificate_user(&block.contents).unwrap();
    assert_eq!(
        (user.name.as_str(), user.groups.as_slice()),
        (
            "jane",
            &["dev".to_string(), "system:authenticated".to_string()][..]
        )
    );
}

#[test]
fn a_request_that_is_not_pem_is_refused() {
    let err = sign(
        "junk",
        &["client auth".into()],
        Duration::from_secs(600),
        SystemTime::UNIX_EPOCH,
        &ca(),
    )
    .unwrap_err();
    assert!(!err.is_empty());
}
