//! Identity end to end with the real `kubectl`: service-account tokens
//! (`kubectl create token`, then `kubectl --token ... auth whoami`), their
//! expiry, audience and revocation; TokenReview and SelfSubjectReview
//! through `kubectl create -f` / `kubectl auth whoami`;
//! CertificateSigningRequests created, listed (upstream's columns),
//! watched, patched, approved or denied with `kubectl certificate`, signed
//! by the cluster CA, and the issued certificate authenticating as its CN.
//! Every wait is bounded.

use std::time::Duration;

use base64::Engine as _;
use e2e::{Cluster, Config};
use serde_json::Value;

/// Real-time bound of every poll.
const WAIT: Duration = Duration::from_secs(30);

/// Writes `yaml` to a file and runs `kubectl <args> -f` on it.
async fn with_file(c: &Cluster, args: &[&str], yaml: &str) -> e2e::Run {
    c.run_with_yaml(args, yaml).await
}

/// A kubeconfig reaching the cluster with only `credentials` (a `token:`
/// or `client-certificate-data:` / `client-key-data:` block), so that the
/// admin certificate of the default kubeconfig does not answer instead.
fn kubeconfig_with(c: &Cluster, name: &str, credentials: &str) -> String {
    let server = c.server().url();
    let ca = base64::engine::general_purpose::STANDARD.encode(&c.server().pki().expect("https").ca_cert);
    let yaml = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\nusers:\n- name: u\n  user:\n{credentials}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
    );
    c.file(name, &yaml).to_str().expect("utf-8 path").to_string()
}

/// `kubectl --kubeconfig=<token-only config> auth whoami -o json`.
async fn whoami_with_token(c: &Cluster, token: &str) -> e2e::Run {
    let config = kubeconfig_with(c, "token.kubeconfig", &format!("    token: {token}"));
    c.run(&["--kubeconfig", &config, "auth", "whoami", "-o", "json"])
        .await
}

/// The claims of a JWT (its middle part), unverified.
fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT has three parts");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

/// A TokenReview of `token` through `kubectl create -f`, answered as JSON.
async fn review(c: &Cluster, token: &str) -> Value {
    let yaml = format!("apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: {token}\n");
    let r = with_file(c, &["create", "-o", "json"], &yaml).await;
    assert!(r.success, "TokenReview: {}", r.stderr);
    serde_json::from_str(&r.stdout).expect("JSON TokenReview")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_account_tokens_authenticate_as_their_account() {
    let mut c = Cluster::start().await;

    // The admin, through the kubeconfig's client certificate.
    let me: Value = serde_json::from_str(&c.ok(&["auth", "whoami", "-o", "json"]).await).unwrap();
    assert_eq!(me["kind"], "SelfSubjectReview");
    assert_eq!(me["status"]["userInfo"]["username"], "admin");
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        serde_json::json!(["system:masters", "system:authenticated"])
    );

    // `kubectl create token default`: a JWT with upstream's claims.
    let token = c.ok(&["create", "token", "default"]).await.trim().to_string();
    let cl = claims(&token);
    assert_eq!(cl["iss"], "https://kubernetes.default.svc.cluster.local");
    assert_eq!(cl["sub"], "system:serviceaccount:default:default");
    assert_eq!(
        cl["aud"],
        serde_json::json!(["https://kubernetes.default.svc.cluster.local"])
    );
    assert_eq!(cl["exp"].as_i64().unwrap() - cl["iat"].as_i64().unwrap(), 3600);
    assert_eq!(cl["nbf"], cl["iat"]);
    assert_eq!(cl["kubernetes.io"]["namespace"], "default");
    assert_eq!(cl["kubernetes.io"]["serviceaccount"]["name"], "default");
    let sa = c.json(&["get", "serviceaccount", "default"]).await;
    assert_eq!(
        cl["kubernetes.io"]["serviceaccount"]["uid"],
        sa["metadata"]["uid"]
    );

    // It authenticates as the account.
    let who = whoami_with_token(&c, &token).await;
    assert!(who.success, "{}", who.stderr);
    let who: Value = serde_json::from_str(&who.stdout).unwrap();
    let user = &who["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:default:default");
    assert_eq!(user["uid"], sa["metadata"]["uid"]);
    assert_eq!(
        user["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    assert_eq!(
        user["extra"]["authentication.kubernetes.io/credential-id"],
        serde_json::json!([format!("JTI={}", cl["jti"].as_str().unwrap())])
    );

    // --duration and --audience.
    let day = c.ok(&["create", "token", "default", "--duration=24h"]).await;
    let cl = claims(day.trim());
    assert_eq!(cl["exp"].as_i64().unwrap() - cl["iat"].as_i64().unwrap(), 86400);
    let err = c.fails(&["create", "token", "default", "--duration=5m"]).await;
    assert!(
        err.contains(r#"TokenRequest.authentication.k8s.io "default" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes"#),
        "{err}"
    );
    let vault = c.ok(&["create", "token", "default", "--audience=vault"]).await;
    assert_eq!(claims(vault.trim())["aud"], serde_json::json!(["vault"]));
    let refused = whoami_with_token(&c, vault.trim()).await;
    assert!(
        !refused.success && refused.stderr.contains("Unauthorized"),
        "{refused:?}"
    );
    let err = c.fails(&["create", "token", "nobody"]).await;
    assert!(err.contains(r#"serviceaccounts "nobody" not found"#), "{err}");

    // TokenReview: the same answer the authenticator gives.
    let answer = review(&c, &token).await;
    assert_eq!(answer["kind"], "TokenReview");
    assert_eq!(answer["status"]["authenticated"], true);
    assert_eq!(
        answer["status"]["user"]["username"],
        "system:serviceaccount:default:default"
    );
    assert_eq!(
        answer["status"]["audiences"],
        serde_json::json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let junk = review(&c, "not-a-token").await;
    assert_eq!(junk["status"]["authenticated"], Value::Null);
    assert_eq!(junk["status"]["error"], "invalid bearer token");
    let r = with_file(
        &c,
        &["create"],
        "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec: {}\n",
    )
    .await;
    assert!(
        !r.success
            && r.stderr
                .contains("token is required for TokenReview in authentication"),
        "{r:?}"
    );

    // A deleted account's tokens stop working, and so do they when an
    // account of the same name is made again (a new uid).
    c.ok(&["create", "serviceaccount", "builder"]).await;
    let builder = c.ok(&["create", "token", "builder"]).await.trim().to_string();
    assert!(whoami_with_token(&c, &builder).await.success);
    c.ok(&["delete", "serviceaccount", "builder"]).await;
    let gone = whoami_with_token(&c, &builder).await;
    assert!(!gone.success && gone.stderr.contains("Unauthorized"), "{gone:?}");
    let answer = review(&c, &builder).await;
    assert_eq!(
        answer["status"]["error"],
        "[invalid bearer token, service account default/builder has been deleted]"
    );
    c.ok(&["create", "serviceaccount", "builder"]).await;
    let recreated = whoami_with_token(&c, &builder).await;
    assert!(!recreated.success, "a token of the old account: {recreated:?}");
    let answer = review(&c, &builder).await;
    assert!(
        answer["status"]["error"]
            .as_str()
            .unwrap()
            .contains("service account UID ("),
        "{answer}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_refused() {
    // 100 simulated seconds a second: the shortest token (10 minutes, plus
    // upstream's one-minute leeway) expires in under 7 real seconds.
    let mut c = Cluster::start_with(Config {
        clock: store::Clock::scaled(100.0),
        ..Config::ephemeral()
    })
    .await;
    let token = c
        .ok(&["create", "token", "default", "--duration=10m"])
        .await
        .trim()
        .to_string();
    let fresh = whoami_with_token(&c, &token).await;
    assert!(fresh.success, "{}", fresh.stderr);
    c.sleep_real(Duration::from_secs(8)).await;
    let expired = whoami_with_token(&c, &token).await;
    assert!(!expired.success, "{expired:?}");
    assert!(
        expired
            .stderr
            .contains("error: You must be logged in to the server (Unauthorized)"),
        "{}",
        expired.stderr
    );
    let answer = review(&c, &token).await;
    assert_eq!(
        answer["status"]["error"],
        "[invalid bearer token, service account token has expired]"
    );
    c.stop().await;
}

/// A new key and a PEM request for `cn` in group `group`: (key PEM, request PEM).
fn key_and_request(cn: &str, group: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, cn);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, group);
    let request = params.serialize_request(&key).unwrap().pem().unwrap();
    (key.serialize_pem(), request)
}

fn csr_yaml(name: &str, request: &str, signer: &str) -> String {
    let request = base64::engine::general_purpose::STANDARD.encode(request);
    format!(
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: {name}\nspec:\n  request: {request}\n  signerName: {signer}\n  expirationSeconds: 86400\n  usages: [client auth]\n"
    )
}

/// Runs `kubectl get csr --watch --output-watch-events`, then `act`, and
/// waits until every (event, name) was printed.
async fn watch_while(c: &Cluster, needles: &[(&str, &str)], act: impl AsyncFnOnce()) {
    let needles: Vec<String> = needles
        .iter()
        .map(|(event, name)| format!("{event} {name}"))
        .collect();
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    c.watch_while(&["csr"], &[], &needles, act).await;
}

/// Polls `kubectl get csr NAME -o json` until `check` holds.
async fn csr_until(c: &Cluster, name: &str, desc: &str, check: impl Fn(&Value) -> bool) -> Value {
    let polled = tokio::time::timeout(WAIT, async {
        loop {
            let r = c.run(&["get", "csr", name, "-o", "json"]).await;
            if r.success
                && let Ok(v) = serde_json::from_str::<Value>(&r.stdout)
                && check(&v)
            {
                return v;
            }
            c.sleep_real(Duration::from_millis(100)).await;
        }
    });
    polled
        .await
        .unwrap_or_else(|_| panic!("csr {name}: {desc} not reached"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_csr_is_signed_and_its_certificate_authenticates_as_its_cn() {
    let mut c = Cluster::start().await;
    let (key, request) = key_and_request("jane", "dev");
    let (_, other) = key_and_request("mallory", "dev");

    // Create (watched), list with upstream's columns, patch, approve / deny.
    watch_while(
        &c,
        &[("ADDED", "jane"), ("ADDED", "mallory"), ("MODIFIED", "jane")],
        async || {
            let r = with_file(
                &c,
                &["create"],
                &csr_yaml("jane", &request, "kubernetes.io/kube-apiserver-client"),
            )
            .await;
            assert!(r.success, "{}", r.stderr);
            let r = with_file(
                &c,
                &["create"],
                &csr_yaml("mallory", &other, "kubernetes.io/kube-apiserver-client"),
            )
            .await;
            assert!(r.success, "{}", r.stderr);
            let table = c.ok(&["get", "csr"]).await;
            let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
            assert_eq!(
                header,
                [
                    "NAME",
                    "AGE",
                    "SIGNERNAME",
                    "REQUESTOR",
                    "REQUESTEDDURATION",
                    "CONDITION"
                ]
            );
            let jane = table.lines().find(|l| l.starts_with("jane ")).unwrap();
            let cells: Vec<&str> = jane.split_whitespace().collect();
            assert_eq!(
                cells[2..],
                ["kubernetes.io/kube-apiserver-client", "admin", "24h", "Pending"]
            );
            c.ok(&["label", "csr", "jane", "team=dev"]).await;
        },
    )
    .await;

    // The requestor is the user who asked, whatever the body said.
    let jane = c.json(&["get", "csr", "jane"]).await;
    assert_eq!(jane["spec"]["username"], "admin");
    assert_eq!(
        jane["spec"]["groups"],
        serde_json::json!(["system:masters", "system:authenticated"])
    );
    assert_eq!(jane["metadata"]["labels"]["team"], "dev");
    // The spec is immutable: an update keeps the stored one.
    c.ok(&[
        "patch",
        "csr",
        "jane",
        "--type=merge",
        "-p",
        r#"{"spec":{"usages":["server auth"]}}"#,
    ])
    .await;
    assert_eq!(
        c.json(&["get", "csr", "jane"]).await["spec"]["usages"],
        serde_json::json!(["client auth"])
    );

    c.ok(&["certificate", "approve", "jane"]).await;
    c.ok(&["certificate", "deny", "mallory"]).await;
    let signed = csr_until(&c, "jane", "a certificate", |v| {
        v["status"]["certificate"].is_string()
    })
    .await;
    let approved = &signed["status"]["conditions"][0];
    assert_eq!(approved["type"], "Approved");
    assert_eq!(approved["reason"], "KubectlApprove");
    let table = c.ok(&["get", "csr"]).await;
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("jane ") && l.ends_with("Approved,Issued")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("mallory ") && l.ends_with("Denied")),
        "{table}"
    );
    c.sleep_real(Duration::from_secs(1)).await;
    assert!(c.json(&["get", "csr", "mallory"]).await["status"]["certificate"].is_null());

    // The certificate authenticates as its CN, in its O.
    let cert = base64::engine::general_purpose::STANDARD
        .decode(signed["status"]["certificate"].as_str().unwrap())
        .unwrap();
    let b64 = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
    let config = kubeconfig_with(
        &c,
        "jane.kubeconfig",
        &format!(
            "    client-certificate-data: {}\n    client-key-data: {}",
            b64(&cert),
            b64(key.as_bytes())
        ),
    );
    let who: Value = serde_json::from_str(
        &c.ok(&["--kubeconfig", &config, "auth", "whoami", "-o", "json"])
            .await,
    )
    .unwrap();
    assert_eq!(who["status"]["userInfo"]["username"], "jane");
    assert_eq!(
        who["status"]["userInfo"]["groups"],
        serde_json::json!(["dev", "system:authenticated"])
    );

    // A CSR jane makes is hers.
    let (_, again) = key_and_request("jane", "dev");
    let f = c.file(
        "again.yaml",
        &csr_yaml("jane-2", &again, "kubernetes.io/kube-apiserver-client"),
    );
    c.ok(&["--kubeconfig", &config, "create", "-f", f.to_str().unwrap()])
        .await;
    let mine = c.json(&["get", "csr", "jane-2"]).await;
    assert_eq!(mine["spec"]["username"], "jane");

    // Usages the signer does not allow: Failed, with upstream's message.
    let (_, server) = key_and_request("web", "dev");
    let yaml = csr_yaml("web", &server, "kubernetes.io/kube-apiserver-client")
        .replace("[client auth]", "[server auth]");
    assert!(with_file(&c, &["create"], &yaml).await.success);
    c.ok(&["certificate", "approve", "web"]).await;
    let failed = csr_until(&c, "web", "Failed", |v| {
        v["status"]["conditions"]
            .as_array()
            .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Failed"))
    })
    .await;
    let condition = failed["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Failed")
        .unwrap()
        .clone();
    assert_eq!(condition["reason"], "SignerValidationFailure");
    assert_eq!(
        condition["message"],
        "invalid usage for client certificate: server auth"
    );

    // Delete.
    c.ok(&["delete", "csr", "jane", "mallory", "web", "jane-2"]).await;
    assert!(c.ok(&["get", "csr", "-o", "name"]).await.trim().is_empty());
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csr_validation_errors_name_upstreams_fields() {
    let mut c = Cluster::start().await;
    let (_, request) = key_and_request("jane", "dev");
    let r = with_file(&c, &["create"], &csr_yaml("bad-signer", &request, "signer")).await;
    assert!(!r.success);
    assert!(
        r.stderr.contains(r#"The CertificateSigningRequest "bad-signer" is invalid: spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form 'example.com/signer-name'"#),
        "{}",
        r.stderr
    );
    let r = with_file(&c, &["create"], &csr_yaml("not-pem", "hi", "example.com/signer")).await;
    assert!(!r.success);
    assert!(
        r.stderr.contains(
            "spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST"
        ),
        "{}",
        r.stderr
    );
    let short = csr_yaml("short", &request, "example.com/signer").replace("86400", "60");
    let r = with_file(&c, &["create"], &short).await;
    assert!(
        r.stderr.contains("spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"),
        "{}",
        r.stderr
    );
    c.stop().await;
}
