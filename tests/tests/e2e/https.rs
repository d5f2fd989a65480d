//! HTTPS and credentials, as a real cluster serves them: the kubeconfig
//! miniplane writes carries the cluster CA, a bearer token and a client
//! certificate; requests without valid credentials get 401 but for the
//! health and version endpoints; `--insecure-http` keeps plain HTTP, on
//! loopback only. `curl` is the real one, as a user would type it.

use std::path::{Path, PathBuf};

use e2e::{Cluster, Config, http, http_anonymous};

/// The kubeconfig's inline credentials, written out as files for curl.
struct CurlFiles {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    token: String,
}

fn curl_files(c: &Cluster) -> CurlFiles {
    let pki = c.server().pki().expect("HTTPS by default");
    CurlFiles {
        ca: c.file("ca.crt", &pki.ca_cert),
        cert: c.file("admin.crt", &pki.admin_cert),
        key: c.file("admin.key", &pki.admin_key),
        token: pki.token.clone(),
    }
}

/// Runs curl; returns (HTTP status, body).
async fn curl(args: &[&str]) -> (u16, String) {
    let out = tokio::process::Command::new("curl")
        .args(["-sS", "-w", "\n%{http_code}"])
        .args(args)
        .output()
        .await
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_credentials_only_health_and_version_answer() {
    let mut c = Cluster::start().await;
    let s = c.server();
    let r = http_anonymous(s, "GET", "/api/v1/pods", &[], b"").await;
    assert_eq!(r.status, 401, "{r:?}");
    let status = r.json();
    assert_eq!(
        (
            status["kind"].as_str(),
            status["reason"].as_str(),
            status["code"].as_i64()
        ),
        (Some("Status"), Some("Unauthorized"), Some(401))
    );
    for path in ["/healthz", "/livez", "/readyz", "/version"] {
        assert_eq!(
            http_anonymous(s, "GET", path, &[], b"").await.status,
            200,
            "{path}"
        );
    }
    for path in [
        "/apis",
        "/openapi/v3",
        "/metrics",
        "/api/v1/namespaces/default/configmaps",
    ] {
        assert_eq!(
            http_anonymous(s, "GET", path, &[], b"").await.status,
            401,
            "{path}"
        );
    }
    let wrong = [("Authorization", "Bearer not-the-token")];
    assert_eq!(http(s, "GET", "/api/v1/pods", &wrong, b"").await.status, 401);
    assert_eq!(http(s, "GET", "/api/v1/pods", &[], b"").await.status, 200);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_with_the_ca_and_either_credential() {
    let mut c = Cluster::start().await;
    let f = curl_files(&c);
    let base = c.server().url();
    let pods = format!("{base}/api/v1/namespaces/default/pods");
    let (code, body) = curl(&["--cacert", path_str(&f.ca), &pods]).await;
    assert_eq!(code, 401, "{body}");
    let (code, body) = curl(&["--cacert", path_str(&f.ca), &format!("{base}/readyz")]).await;
    assert_eq!((code, body.as_str()), (200, "ok"));
    let bearer = format!("Authorization: Bearer {}", f.token);
    let (code, body) = curl(&["--cacert", path_str(&f.ca), "-H", &bearer, &pods]).await;
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"kind\":\"PodList\""), "{body}");
    // The client certificate alone (CN admin, O system:masters), over HTTP/2.
    let (code, body) = curl(&[
        "--http2",
        "--cacert",
        path_str(&f.ca),
        "--cert",
        path_str(&f.cert),
        "--key",
        path_str(&f.key),
        &pods,
    ])
    .await;
    assert_eq!(code, 200, "{body}");
    // Without the CA the serving certificate is not trusted.
    let (code, _) = curl(&[&pods]).await;
    assert_eq!(code, 0, "curl refuses an unknown CA");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubeconfig_carries_the_ca_a_token_and_a_client_certificate() {
    let mut c = Cluster::start().await;
    let text = std::fs::read_to_string(c.server().kubeconfig()).unwrap();
    for field in [
        "server: https://127.0.0.1:",
        "certificate-authority-data: ",
        "token: ",
        "client-certificate-data: ",
        "client-key-data: ",
    ] {
        assert!(text.contains(field), "{field} in\n{text}");
    }
    let out = c
        .ok(&["get", "namespace", "default", "-o", "jsonpath={.status.phase}"])
        .await;
    assert_eq!(out, "Active", "kubectl reaches the API with it");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_are_made_once_per_data_dir() {
    let data = tempfile::tempdir().unwrap();
    let config = || Config {
        data_dir: Some(data.path().to_path_buf()),
        ..Config::ephemeral()
    };
    let mut c = Cluster::start_with(config()).await;
    let first = c.server().pki().unwrap().clone();
    c.ok(&["create", "configmap", "kept"]).await;
    c.stop().await;
    // Another port, same data dir: the same CA and credentials, so a
    // client that trusted the first start trusts the second.
    let mut again = Cluster::start_with(config()).await;
    let second = again.server().pki().unwrap().clone();
    assert_eq!(first.ca_cert, second.ca_cert);
    assert_eq!(first.token, second.token);
    assert_eq!(first.admin_cert, second.admin_cert);
    again.ok(&["get", "configmap", "kept"]).await;
    again.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insecure_http_is_plain_and_loopback_only() {
    let mut c = Cluster::start_with(Config {
        insecure_http: true,
        ..Config::ephemeral()
    })
    .await;
    assert!(c.server().url().starts_with("http://"));
    assert!(c.server().pki().is_none());
    let r = http_anonymous(
        c.server(),
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200, "no credentials needed on the insecure port");
    c.ok(&["get", "namespaces"]).await;
    c.stop().await;

    let refused = miniplane::Server::start(Config {
        insecure_http: true,
        listen: "0.0.0.0:0".parse().unwrap(),
        ..Config::ephemeral()
    })
    .await;
    let err = refused
        .err()
        .expect("plain HTTP on a wildcard address is refused");
    assert!(
        err.to_string()
            .contains("refusing to serve plain HTTP on 0.0.0.0:0"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_may_listen_beyond_loopback_and_on_several_addresses() {
    let mut c = Cluster::start_with(Config {
        listen: "0.0.0.0:0".parse().unwrap(),
        also_listen: vec!["127.0.0.2:0".parse().unwrap()],
        ..Config::ephemeral()
    })
    .await;
    // The kubeconfig names a loopback address the certificate covers.
    c.ok(&["get", "namespaces"]).await;
    let sans = std::fs::read_to_string(
        c.server()
            .kubeconfig()
            .with_file_name("pki")
            .join("apiserver.sans"),
    )
    .unwrap();
    assert!(sans.lines().any(|l| l == "127.0.0.2"), "{sans}");
    c.stop().await;
}
