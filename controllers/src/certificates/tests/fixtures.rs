//! A CA, requests and CSR objects for the signer's tests.

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::certificates::sign::CertificateAuthority;

/// A fresh self-signed CA.
pub fn ca() -> CertificateAuthority {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "test-ca");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key).unwrap();
    CertificateAuthority {
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

/// A PEM request for `cn` in the organizations `orgs`, with `sans` DNS names.
pub fn request(cn: &str, orgs: &[&str], sans: &[&str]) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let sans: Vec<String> = sans.iter().map(|s| s.to_string()).collect();
    let mut params = rcgen::CertificateParams::new(sans).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, cn);
    for o in orgs {
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, *o);
    }
    params.serialize_request(&key).unwrap().pem().unwrap()
}

/// A CSR object for `request`, for `signer`, with these usages.
pub fn csr(name: &str, request: &str, signer: &str, usages: &[&str]) -> CertificateSigningRequest {
    CertificateSigningRequest {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: CertificateSigningRequestSpec {
            request: ByteString(request.as_bytes().to_vec()),
            signer_name: signer.into(),
            usages: Some(usages.iter().map(|u| u.to_string()).collect()),
            ..CertificateSigningRequestSpec::default()
        },
        status: None,
    }
}

/// `csr` with a `True` condition of type `t` added.
pub fn with_condition(mut csr: CertificateSigningRequest, t: &str) -> CertificateSigningRequest {
    let status = csr
        .status
        .get_or_insert_with(CertificateSigningRequestStatus::default);
    status
        .conditions
        .get_or_insert_with(Vec::new)
        .push(CertificateSigningRequestCondition {
            type_: t.into(),
            status: "True".into(),
            ..CertificateSigningRequestCondition::default()
        });
    csr
}
