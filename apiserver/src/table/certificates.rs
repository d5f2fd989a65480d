//! The table of certificates.k8s.io/v1 CertificateSigningRequest.
//!
//! Upstream: `certificateSigningRequestColumnDefinitions`,
//! `printCertificateSigningRequest` and `extractCSRStatus` of
//! `pkg/printers/internalversion/printers.go`.

use serde_json::{Value, json};

use super::helpers::{conditions, human_duration};
use super::{TablePrinter, col};
use crate::jsonpath::str_at;

pub(super) static CERTIFICATE_SIGNING_REQUEST: TablePrinter = TablePrinter::named(
    &[],
    &[
        col("SignerName", "string", D_SIGNER_NAME),
        col("Requestor", "string", D_REQUEST),
        col("RequestedDuration", "string", D_EXPIRATION_SECONDS),
        col("Condition", "string", D_CONDITIONS),
    ],
    |r| {
        let signer = str_at(r.obj, &["spec", "signerName"]);
        let duration = r
            .obj
            .pointer("/spec/expirationSeconds")
            .and_then(Value::as_i64)
            .map_or_else(|| "<none>".to_string(), human_duration);
        r.named(
            [],
            [
                json!(if signer.is_empty() { "<none>" } else { signer }),
                json!(str_at(r.obj, &["spec", "username"])),
                json!(duration),
                json!(csr_status(r.obj)),
            ],
        )
    },
);

/// `Pending`, `Approved` or `Denied` (Denied wins), then `,Failed` and
/// `,Issued` (upstream `extractCSRStatus`).
fn csr_status(csr: &Value) -> String {
    let has = |t: &str| conditions(csr).iter().any(|c| c["type"] == t);
    let mut status = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_string();
    if has("Failed") {
        status.push_str(",Failed");
    }
    if !str_at(csr, &["status", "certificate"]).is_empty() {
        status.push_str(",Issued");
    }
    status
}

const D_SIGNER_NAME: &str = "signerName indicates the requested signer, and is a qualified name.";
const D_REQUEST: &str = "request contains an x509 certificate signing request encoded in a \"CERTIFICATE REQUEST\" PEM block. When serialized as JSON or YAML, the data is additionally base64-encoded.";
const D_EXPIRATION_SECONDS: &str = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.";
const D_CONDITIONS: &str =
    "conditions applied to the request. Known conditions are \"Approved\", \"Denied\", and \"Failed\".";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::cells;

    #[test]
    fn csr_columns_are_upstreams() {
        assert_eq!(
            crate::table::testing::names(&CERTIFICATE_SIGNING_REQUEST),
            [
                "Name",
                "Age",
                "SignerName",
                "Requestor",
                "RequestedDuration",
                "Condition"
            ]
        );
    }

    #[test]
    fn csr_rows() {
        let csr = json!({"metadata": {"name": "jane"},
            "spec": {"signerName": "kubernetes.io/kube-apiserver-client", "username": "admin",
                "expirationSeconds": 86400},
            "status": {}});
        let row = cells(&CERTIFICATE_SIGNING_REQUEST, &csr);
        assert_eq!(
            row.as_array().unwrap()[2..],
            [
                json!("kubernetes.io/kube-apiserver-client"),
                json!("admin"),
                json!("24h"),
                json!("Pending")
            ]
        );
        let issued = json!({"metadata": {"name": "jane"}, "spec": {},
            "status": {"certificate": "Y2VydA==", "conditions": [
                {"type": "Approved", "status": "True"}, {"type": "Failed", "status": "True"}]}});
        let row = cells(&CERTIFICATE_SIGNING_REQUEST, &issued);
        assert_eq!(
            row.as_array().unwrap()[2..],
            [
                json!("<none>"),
                json!(""),
                json!("<none>"),
                json!("Approved,Failed,Issued")
            ]
        );
        let denied = json!({"metadata": {"name": "x"}, "spec": {},
            "status": {"conditions": [{"type": "Approved"}, {"type": "Denied"}]}});
        assert_eq!(cells(&CERTIFICATE_SIGNING_REQUEST, &denied)[5], json!("Denied"));
    }
}
