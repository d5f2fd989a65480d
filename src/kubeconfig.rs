//! The kubeconfig a user exports to reach the server.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

/// The kubeconfig YAML for a plain-HTTP server at `addr`.
pub fn render(addr: SocketAddr) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: miniplane
  cluster:
    server: http://{addr}
contexts:
- name: miniplane
  context:
    cluster: miniplane
    user: miniplane
    namespace: default
current-context: miniplane
users:
- name: miniplane
  user: {{}}
"
    )
}

/// Writes the kubeconfig atomically: a temporary file beside it, then a rename.
pub fn write(path: &Path, addr: SocketAddr) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(render(addr).as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// Sends `GET /readyz` until the server answers 200 (a few tries).
pub async fn wait_until_ready(addr: SocketAddr) -> std::io::Result<()> {
    let mut last = None;
    for _ in 0..50 {
        match readyz(addr).await {
            Ok(true) => return Ok(()),
            Ok(false) => last = None,
            Err(e) => last = Some(e),
        }
        tokio::task::yield_now().await;
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("/readyz never answered 200")))
}

async fn readyz(addr: SocketAddr) -> std::io::Result<bool> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    s.write_all(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await?;
    Ok(buf.starts_with(b"HTTP/1.1 200"))
}
