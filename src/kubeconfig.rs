//! The kubeconfig a user exports to reach the server: the cluster CA and
//! both kinds of credentials (a bearer token and a client certificate),
//! inline, as kind and k3s write theirs.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::pki::Pki;

/// The kubeconfig YAML for the server at `addr`: HTTPS with `pki`, plain
/// HTTP without credentials when `None` (`--insecure-http`).
pub fn render(addr: SocketAddr, pki: Option<&Pki>) -> String {
    let b64 = |pem: &str| STANDARD.encode(pem.as_bytes());
    let (cluster, user) = match pki {
        None => (format!("    server: http://{addr}\n"), "  user: {}\n".to_string()),
        Some(pki) => (
            format!(
                "    server: https://{addr}\n    certificate-authority-data: {}\n",
                b64(&pki.ca_cert)
            ),
            format!(
                "  user:\n    token: {}\n    client-certificate-data: {}\n    client-key-data: {}\n",
                pki.token,
                b64(&pki.admin_cert),
                b64(&pki.admin_key)
            ),
        ),
    };
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: miniplane
  cluster:
{cluster}contexts:
- name: miniplane
  context:
    cluster: miniplane
    user: miniplane
    namespace: default
current-context: miniplane
users:
- name: miniplane
{user}"
    )
}

/// Writes the kubeconfig atomically (a temporary file beside it, then a
/// rename), readable by its owner only: it holds credentials.
pub fn write(path: &Path, addr: SocketAddr, pki: Option<&Pki>) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&tmp)?;
        f.write_all(render(addr, pki).as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// Sends `GET /readyz` until the server answers 200 (a few tries).
pub async fn wait_until_ready(addr: SocketAddr, pki: Option<&Pki>) -> std::io::Result<()> {
    let tls = pki.map(Pki::client_config);
    let mut last = None;
    for _ in 0..50 {
        match readyz(addr, tls.clone()).await {
            Ok(true) => return Ok(()),
            Ok(false) => last = None,
            Err(e) => last = Some(e),
        }
        tokio::task::yield_now().await;
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("/readyz never answered 200")))
}

async fn readyz(
    addr: SocketAddr,
    tls: Option<std::sync::Arc<rustls::ClientConfig>>,
) -> std::io::Result<bool> {
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    async fn ask(mut s: impl AsyncRead + AsyncWrite + Unpin) -> std::io::Result<bool> {
        s.write_all(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await?;
        Ok(buf.starts_with(b"HTTP/1.1 200"))
    }
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    match tls {
        None => ask(tcp).await,
        Some(config) => {
            let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
            let stream = tokio_rustls::TlsConnector::from(config)
                .connect(name, tcp)
                .await?;
            ask(stream).await
        }
    }
}
