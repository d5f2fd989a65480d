//! Test harness: an in-process miniplane and the real `kubectl` binary.
//!
//! Every end-to-end test starts its own [`Cluster`] on a free loopback port
//! with a temporary data dir, and drives it with `kubectl` exactly as a user
//! would, with a kubeconfig and a fresh discovery cache of its own. Nothing
//! is mocked.

use std::path::{Path, PathBuf};
use std::process::Output;

pub use miniplane::{Config, Server};

/// How long a test waits, in real time, for something it polls or watches for.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether the words of `needle` appear in `line` in that order.
pub fn matches_words(line: &str, needle: &str) -> bool {
    let mut rest = line;
    needle.split_whitespace().all(|word| match rest.find(word) {
        Some(i) => {
            rest = &rest[i + word.len()..];
            true
        }
        None => false,
    })
}

/// A running miniplane plus what kubectl needs to reach it.
pub struct Cluster {
    /// The server (None after [`Cluster::stop`]).
    pub server: Option<Server>,
    kubeconfig: PathBuf,
    /// Holds the kubectl cache dir and the test's files.
    pub dir: tempfile::TempDir,
    /// Which kubectl to run (`kubectl`, or a versioned `kubectl.1.NN`).
    pub kubectl: PathBuf,
}

/// The result of one kubectl run.
#[derive(Debug)]
pub struct Run {
    /// Exit status was 0.
    pub success: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            success: o.status.success(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Cluster {
    /// Starts a throwaway miniplane.
    pub async fn start() -> Cluster {
        Self::start_with(Config::ephemeral()).await
    }

    /// Starts miniplane with `config`.
    pub async fn start_with(config: Config) -> Cluster {
        let server = Server::start(config).await.expect("miniplane starts");
        let kubeconfig = server.kubeconfig().to_path_buf();
        Cluster {
            server: Some(server),
            kubeconfig,
            dir: tempfile::tempdir().expect("temp dir"),
            kubectl: PathBuf::from("kubectl"),
        }
    }

    /// The server.
    pub fn server(&self) -> &Server {
        self.server.as_ref().expect("server is running")
    }

    /// Waits `real` of wall-clock time, measured on the server's clock (so
    /// scaled by its `--time-scale`): the one way a test outside the server
    /// waits, since the wall clock is not read directly.
    pub async fn sleep_real(&self, real: std::time::Duration) {
        let clock = self.server().api().clock();
        clock.sleep(real.mul_f64(clock.scale())).await;
    }

    /// Uses another kubectl binary for later calls.
    pub fn with_kubectl(mut self, path: PathBuf) -> Self {
        self.kubectl = path;
        self
    }

    /// Writes a file into the test dir and returns its path.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, contents).expect("write test file");
        p
    }

    /// Runs `kubectl <args> -f FILE` with `yaml` written to FILE.
    pub async fn run_with_yaml(&self, args: &[&str], yaml: &str) -> Run {
        let f = self.file("manifest.yaml", yaml);
        let f = f.to_str().expect("utf-8 path");
        self.run(&[args, &["-f", f]].concat()).await
    }

    /// `kubectl create -f` of `yaml`, which must fail; returns stderr.
    pub async fn create_fails(&self, yaml: &str) -> String {
        let r = self.run_with_yaml(&["create"], yaml).await;
        assert!(!r.success, "create should have failed: {}\n{yaml}", r.stdout);
        r.stderr
    }

    /// Polls `kubectl <args> -o json` until `check` holds, for up to
    /// [`PATIENCE`] of real time; returns the object.
    pub async fn eventually_json(
        &self,
        args: &[&str],
        what: &str,
        check: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let polled = tokio::time::timeout(PATIENCE, async {
            loop {
                let r = self.run(&[args, &["-o", "json"]].concat()).await;
                if r.success
                    && let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.stdout)
                    && check(&v)
                {
                    return v;
                }
                self.sleep_real(std::time::Duration::from_millis(100)).await;
            }
        });
        polled
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
    }

    /// Runs `kubectl get <what> --watch --output-watch-events`; waits for a
    /// line matching each of `ready` (so the watch is running), runs `act`,
    /// then waits for a line matching each of `needles`, in order. A line
    /// matches a needle when the needle's words appear in it in that order
    /// (`"ADDED"`, `"MODIFIED web"`, `"\"maxReplicas\":9"`). Returns every line
    /// read; panics with them when a needle does not come within [`PATIENCE`].
    pub async fn watch_while(
        &self,
        what: &[&str],
        ready: &[&str],
        needles: &[&str],
        act: impl AsyncFnOnce(),
    ) -> Vec<String> {
        use tokio::io::AsyncBufReadExt;
        let cache = self.dir.path().join("kube-cache");
        let mut watcher = tokio::process::Command::new(&self.kubectl)
            .arg("get")
            .args(what)
            .args(["--watch", "--output-watch-events"])
            .arg(format!("--cache-dir={}", cache.display()))
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.dir.path())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("kubectl get --watch starts");
        let stdout = watcher.stdout.take().expect("piped");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let mut seen = Vec::new();
        let mut wait_for = async |needle: &str, seen: &mut Vec<String>| {
            let found = tokio::time::timeout(PATIENCE, async {
                while let Ok(Some(line)) = lines.next_line().await {
                    let hit = matches_words(&line, needle);
                    seen.push(line);
                    if hit {
                        return true;
                    }
                }
                false
            })
            .await;
            assert!(
                matches!(found, Ok(true)),
                "{what:?}: never saw {needle:?}; saw {seen:#?}"
            );
        };
        for needle in ready {
            wait_for(needle, &mut seen).await;
        }
        act().await;
        for needle in needles {
            wait_for(needle, &mut seen).await;
        }
        watcher.kill().await.ok();
        seen
    }

    /// Runs kubectl with `args`.
    pub async fn run(&self, args: &[&str]) -> Run {
        let cache = self.dir.path().join("kube-cache");
        tokio::process::Command::new(&self.kubectl)
            .args(args)
            .arg(format!("--cache-dir={}", cache.display()))
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.dir.path())
            .kill_on_drop(true)
            .output()
            .await
            .unwrap_or_else(|e| panic!("running {}: {e}", self.kubectl.display()))
            .into()
    }

    /// Runs kubectl and returns stdout; panics with stderr if it failed.
    pub async fn ok(&self, args: &[&str]) -> String {
        let r = self.run(args).await;
        assert!(
            r.success,
            "kubectl {args:?} failed:\nstdout: {}\nstderr: {}",
            r.stdout, r.stderr
        );
        r.stdout
    }

    /// Runs kubectl expecting failure; returns stderr.
    pub async fn fails(&self, args: &[&str]) -> String {
        let r = self.run(args).await;
        assert!(
            !r.success,
            "kubectl {args:?} should have failed, printed:\n{}",
            r.stdout
        );
        r.stderr
    }

    /// `kubectl get <what> -o json`, parsed.
    pub async fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let out = self.ok(&all).await;
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("kubectl {args:?} -o json: {e}: {out}"))
    }

    /// Every entry of the causal journal (`/debug/journal`, paged with
    /// `after=next`), by id.
    pub async fn journal(&self) -> std::collections::BTreeMap<u64, serde_json::Value> {
        let mut entries = std::collections::BTreeMap::new();
        let mut after = 0;
        loop {
            let path = format!("/debug/journal?after={after}&limit=5000");
            let resp = http(self.server(), "GET", &path, &[], b"").await;
            assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
            let page = resp.json();
            let list = page["entries"].as_array().expect("entries").clone();
            if list.is_empty() {
                return entries;
            }
            for e in list {
                entries.insert(e["id"].as_u64().expect("id"), e);
            }
            after = page["next"].as_u64().expect("next");
        }
    }

    /// Stops the server.
    pub async fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            s.stop().await.expect("clean stop");
        }
    }
}

/// The directory holding the versioned kubectl binaries (`kubectl.1.27` ...),
/// beside the `kubectl` found on PATH.
pub fn kubectl_dir() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path)
        .map(|d| d.join("kubectl"))
        .find(|p| p.is_file())?;
    let real = std::fs::canonicalize(found).ok()?;
    real.parent().map(Path::to_path_buf)
}

/// The versioned kubectl binary `kubectl.1.<minor>`, when installed.
pub fn versioned_kubectl(minor: u32) -> Option<PathBuf> {
    let p = kubectl_dir()?.join(format!("kubectl.1.{minor}"));
    p.is_file().then_some(p)
}

/// A raw HTTP response.
#[derive(Debug)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Header lines, lower-cased names.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends one HTTP/1.1 request with `Connection: close` to `server` (over
/// TLS, trusting the cluster CA, with the kubeconfig's bearer token unless
/// `headers` has an `Authorization` of its own) and reads the whole
/// response: enough for tests that need to send what kubectl never would.
pub async fn http(
    server: impl Into<Target>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpResponse {
    let target = server.into();
    let token = target.token.as_ref().map(|t| format!("Bearer {t}"));
    let mut all = headers.to_vec();
    if let Some(token) = &token
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        all.push(("Authorization", token));
    }
    send(&target, method, path, &all, body).await
}

/// Where [`http`] sends a request and how: the address, and the CA and
/// token when the server serves HTTPS. Cheap to clone into a task.
#[derive(Clone)]
pub struct Target {
    addr: std::net::SocketAddr,
    tls: Option<std::sync::Arc<tokio_rustls::rustls::ClientConfig>>,
    token: Option<String>,
}

impl From<&Target> for Target {
    fn from(target: &Target) -> Self {
        target.clone()
    }
}

impl From<&Server> for Target {
    fn from(server: &Server) -> Self {
        Target {
            addr: server.addr(),
            tls: server.pki().map(|p| p.client_config()),
            token: server.pki().map(|p| p.token.clone()),
        }
    }
}

/// [`http`] without credentials: what an anonymous client gets.
pub async fn http_anonymous(
    server: impl Into<Target>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpResponse {
    send(&server.into(), method, path, headers, body).await
}

async fn send(
    target: &Target,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> HttpResponse {
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    async fn exchange(mut s: impl AsyncRead + AsyncWrite + Unpin, request: &[u8]) -> Vec<u8> {
        s.write_all(request).await.expect("write request");
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).await.expect("read response");
        raw
    }
    let addr = target.addr;
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut request = req.into_bytes();
    request.extend_from_slice(body);
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let raw = match &target.tls {
        None => exchange(tcp, &request).await,
        Some(config) => {
            let name = tokio_rustls::rustls::pki_types::ServerName::IpAddress(addr.ip().into());
            let tls = tokio_rustls::TlsConnector::from(config.clone())
                .connect(name, tcp)
                .await
                .expect("TLS handshake with the cluster CA");
            exchange(tls, &request).await
        }
    };
    parse_response(&raw)
}

/// Parses one raw HTTP/1.1 response: status line, headers, body (de-chunked).
pub fn parse_response(raw: &[u8]) -> HttpResponse {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = data.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&data[..eol]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = eol + 2;
        out.extend_from_slice(&data[start..start + size]);
        data = &data[(start + size + 2).min(data.len())..];
    }
    out
}
