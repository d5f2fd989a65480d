//! Table tests of the CSR strategy and validation, with upstream's messages.

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A real PKCS#10 request for CN `jane`, O `dev`, PEM.
fn request_pem() -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, "jane");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "dev");
    params.serialize_request(&key).unwrap().pem().unwrap()
}

fn csr() -> Value {
    json!({
        "metadata": {"name": "jane"},
        "spec": {
            "request": b64(request_pem().as_bytes()),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"],
        },
    })
}

fn messages(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

#[test]
fn a_real_request_is_valid() {
    assert_eq!(messages(&validate_csr(&csr())), Vec::<String>::new());
}

#[test]
fn a_request_that_is_not_a_pem_csr_is_invalid() {
    let mut bad = csr();
    bad["spec"]["request"] = json!(b64(b"hi"));
    assert_eq!(
        messages(&validate_csr(&bad)),
        ["spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"]
    );
}

#[test]
fn signer_names_must_be_a_domain_and_a_path() {
    let check = |signer: &str| {
        let mut c = csr();
        c["spec"]["signerName"] = json!(signer);
        messages(&validate_csr(&c))
    };
    assert_eq!(check(""), ["spec.signerName: Required value"]);
    assert_eq!(
        check("signer"),
        [
            "spec.signerName: Invalid value: \"signer\": must be a fully qualified domain and path of the form 'example.com/signer-name'"
        ]
    );
    assert_eq!(
        check("example/signer"),
        [
            "spec.signerName: Invalid value: \"example\": should be a domain with at least two segments separated by dots"
        ]
    );
    assert_eq!(
        check("kubernetes.io/legacy-unknown"),
        [
            "spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version"
        ]
    );
    assert!(check("example.com/my-signer").is_empty());
}

#[test]
fn usages_and_duration() {
    let mut c = csr();
    c["spec"]["usages"] = json!([]);
    c["spec"]["expirationSeconds"] = json!(599);
    assert_eq!(
        messages(&validate_csr(&c)),
        [
            "spec.usages: Required value",
            "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)",
        ]
    );
    c["spec"]["usages"] = json!(["client auth", "flying", "client auth"]);
    c["spec"]["expirationSeconds"] = json!(600);
    let errs = messages(&validate_csr(&c));
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].starts_with(
        "spec.usages[1]: Unsupported value: \"flying\": supported values: \"any\", \"cert sign\""
    ));
    assert_eq!(errs[1], "spec.usages[2]: Duplicate value: \"client auth\"");
}

#[test]
fn the_requestor_is_the_user_not_the_body() {
    let mut c = csr();
    c["spec"]["username"] = json!("someone-else");
    c["spec"]["groups"] = json!(["system:masters"]);
    let user = UserInfo::service_account("ns", "sa", "u-1", Default::default());
    set_requestor(&mut c, &user);
    assert_eq!(c["spec"]["username"], "system:serviceaccount:ns:sa");
    assert_eq!(c["spec"]["uid"], "u-1");
    assert_eq!(
        c["spec"]["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:ns",
            "system:authenticated"
        ])
    );
}

fn approved(mut c: Value) -> Value {
    c["status"] = json!({"conditions": [{"type": "Approved", "status": "True", "reason": "KubectlApprove",
        "lastUpdateTime": "2026-01-01T00:00:00Z"}]});
    c
}

#[test]
fn approval_changes_only_the_conditions_and_status_only_the_rest() {
    let old = csr();
    let mut new = approved(old.clone());
    new["spec"]["usages"] = json!(["server auth"]);
    new["status"]["certificate"] = json!("bm9wZQ==");
    prepare_csr_approval_update(&mut new, &old);
    assert_eq!(new["spec"], old["spec"]);
    assert_eq!(new["status"]["certificate"], Value::Null);
    assert_eq!(new["status"]["conditions"][0]["type"], "Approved");
    assert_eq!(
        new["status"]["conditions"][0]["lastTransitionTime"],
        "2026-01-01T00:00:00Z"
    );

    // The signer's status write keeps Approved even when it does not send it.
    let stored = approved(csr());
    let mut signed = stored.clone();
    signed["status"] = json!({"conditions": [{"type": "Failed", "status": "True"}]});
    prepare_csr_status_update(&mut signed, &stored);
    let types: Vec<&str> = signed["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["Approved", "Failed"]);

    // A plain update changes neither spec nor status.
    let mut edited = csr();
    edited["spec"]["signerName"] = json!("example.com/other");
    edited["status"] = json!({"conditions": [{"type": "Denied", "status": "True"}]});
    prepare_csr_update(&mut edited, &stored);
    assert_eq!(edited["spec"], stored["spec"]);
    assert_eq!(edited["status"], stored["status"]);
}

#[test]
fn updates_may_not_remove_decisions_or_replace_certificates() {
    let old = approved(csr());
    let removed = csr();
    assert_eq!(
        messages(&validate_csr_update(&removed, &old)),
        ["status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""]
    );
    let mut both = approved(csr());
    both["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "Denied", "status": "True"}));
    assert_eq!(
        messages(&validate_csr_update(&both, &old)),
        [
            "status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"
        ]
    );
    let mut bad_status = approved(csr());
    bad_status["status"]["conditions"][0]["status"] = json!("False");
    assert_eq!(
        messages(&validate_csr_update(&bad_status, &old)),
        ["status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\""]
    );
    let mut junk_cert = approved(csr());
    junk_cert["status"]["certificate"] = json!(b64(b"junk"));
    assert_eq!(
        messages(&validate_csr_update(&junk_cert, &old)),
        [
            "status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"
        ]
    );
}
