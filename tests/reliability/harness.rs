//! What every section shares: the suite's size and seed, the real
//! `miniplane up` process, an HTTPS client that tells a full response from a
//! dropped connection, the server's memory from `/proc`, and the rows of
//! the table.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use store::Clock;

// ---------------------------------------------------------------------------
// Size and seed
// ---------------------------------------------------------------------------

/// How much of each check to run: the short form in `cargo test`, the full
/// form with `MINIPLANE_TORTURE=full`.
#[derive(Clone, Copy, Debug)]
pub struct Mode {
    /// `MINIPLANE_TORTURE=full`.
    pub full: bool,
    /// Seeds every random choice of the suite (`MINIPLANE_TORTURE_SEED`,
    /// else random and printed).
    pub seed: u64,
}

impl Mode {
    /// Reads `MINIPLANE_TORTURE` and `MINIPLANE_TORTURE_SEED`.
    pub fn from_env() -> Mode {
        let full = std::env::var("MINIPLANE_TORTURE").is_ok_and(|v| v == "full");
        let seed = match std::env::var("MINIPLANE_TORTURE_SEED") {
            Ok(s) => s
                .parse()
                .unwrap_or_else(|_| panic!("MINIPLANE_TORTURE_SEED={s:?} is not a u64")),
            Err(_) => rand::random(),
        };
        Mode { full, seed }
    }

    /// `short` in the short form, `full` in the full one.
    pub fn pick<T>(&self, short: T, full: T) -> T {
        if self.full { full } else { short }
    }

    /// The seed of one part of the suite, so that sections draw independent
    /// sequences from the one seed.
    pub fn seed_for(&self, part: &str) -> u64 {
        mix(self.seed, part)
    }
}

/// `seed` mixed with a name (FNV-1a of the name): stable across builds.
pub fn mix(seed: u64, part: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in part.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    seed ^ h
}

/// A seeded generator (reproducible for one seed and one rand version).
pub fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::SeedableRng::seed_from_u64(seed)
}

/// Waits `d` of real time (the suite runs on the system clock).
pub async fn sleep(d: Duration) {
    Clock::system().sleep(d).await;
}

/// A temporary directory for a section's data dirs and server logs; kept
/// (and its path printed) with `MINIPLANE_TORTURE_KEEP=1`.
pub fn temp_dir(section: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("miniplane-{}-", section.replace(' ', "")))
        .tempdir()
        .expect("a temporary directory");
    if std::env::var_os("MINIPLANE_TORTURE_KEEP").is_some() {
        println!("   {section}: data and logs kept in {}", dir.path().display());
        let mut dir = dir;
        dir.disable_cleanup(true);
        return dir;
    }
    dir
}

// ---------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------

/// How a row of the table came out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A figure the suite checks, within its bound.
    Ok,
    /// A figure the suite checks, out of its bound: the suite fails.
    Fail,
    /// A figure reported, not checked.
    Info,
}

/// One row: what was measured, the figure, and whether it passed.
#[derive(Clone, Debug)]
pub struct Row {
    /// The section it belongs to (`crash`, `watch`, ...).
    pub section: String,
    /// What was measured.
    pub what: String,
    /// The figure, as printed.
    pub figure: String,
    /// Checked and passed, checked and failed, or reported only.
    pub verdict: Verdict,
}

/// The rows of one section, and why its checks failed.
#[derive(Debug, Default)]
pub struct Report {
    section: String,
    /// The rows, in order.
    pub rows: Vec<Row>,
    /// One line per failed check, with what is needed to reproduce it.
    pub failures: Vec<String>,
}

impl Report {
    /// An empty report for `section`.
    pub fn new(section: &str) -> Report {
        Report {
            section: section.to_string(),
            ..Default::default()
        }
    }

    /// A figure reported, not checked.
    pub fn info(&mut self, what: &str, figure: impl std::fmt::Display) {
        self.push(what, figure.to_string(), Verdict::Info);
    }

    /// A checked figure: `ok` says whether it is within its bound, and
    /// `why` is the failure line when it is not.
    pub fn check(
        &mut self,
        what: &str,
        figure: impl std::fmt::Display,
        ok: bool,
        why: impl FnOnce() -> String,
    ) {
        let verdict = if ok { Verdict::Ok } else { Verdict::Fail };
        if !ok {
            self.failures.push(format!("{}: {what}: {}", self.section, why()));
        }
        self.push(what, figure.to_string(), verdict);
    }

    fn push(&mut self, what: &str, figure: String, verdict: Verdict) {
        self.rows.push(Row {
            section: self.section.clone(),
            what: what.to_string(),
            figure,
            verdict,
        });
    }
}

/// `12345` as `12,345`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The rows as a Markdown table.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from("| section | check | figure | result |\n| --- | --- | --- | --- |\n");
    for r in rows {
        let verdict = match r.verdict {
            Verdict::Ok => "ok",
            Verdict::Fail => "**FAIL**",
            Verdict::Info => "",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {verdict} |\n",
            r.section, r.what, r.figure
        ));
    }
    out
}

// ---------------------------------------------------------------------------
// The server process
// ---------------------------------------------------------------------------

/// The `miniplane` binary Cargo built beside this test.
pub fn miniplane_binary() -> PathBuf {
    // The test runs from target/<profile>/deps/; the binary is one level up.
    let exe = std::env::current_exe().expect("the test binary's path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("miniplane"))
        .expect("target/<profile>/");
    assert!(
        bin.is_file(),
        "{} not built; run with `cargo test --test reliability`",
        bin.display()
    );
    bin
}

/// A running `miniplane up` on a data dir.
pub struct Miniplane {
    child: tokio::process::Child,
    /// How to reach it.
    pub endpoint: Endpoint,
}

impl Miniplane {
    /// Starts `miniplane up --listen 127.0.0.1:0 --data-dir <data> <args>`
    /// (HTTPS) and waits for the kubeconfig it writes once it answers. Its
    /// log goes to `<data>/../<data-name>.log`, appended across restarts.
    pub async fn start(data: &Path, args: &[&str]) -> Miniplane {
        let kubeconfig = data.join("kubeconfig");
        let _ = std::fs::remove_file(&kubeconfig);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data.with_extension("log"))
            .expect("the server's log file");
        let child = tokio::process::Command::new(miniplane_binary())
            .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("miniplane up starts");
        let mut child = child;
        for _ in 0..3000 {
            if kubeconfig.is_file() {
                let endpoint = Endpoint::from_data_dir(data);
                return Miniplane { child, endpoint };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "miniplane up exited with {status} before it served; log: {}",
                    data.with_extension("log").display()
                );
            }
            sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "miniplane up on {} wrote no kubeconfig within 30 s",
            data.display()
        );
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the server is running")
    }

    /// Whether the process has exited (and how).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGKILL, and waits for the process to be gone.
    pub async fn kill9(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// SIGTERM, and waits (at most 5 s, then SIGKILL).
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            self.kill9().await;
        }
    }
}

/// `VmRSS` and `VmHWM` (peak RSS) of a process, in KiB, from `/proc/<pid>/status`.
pub fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

// ---------------------------------------------------------------------------
// HTTPS client
// ---------------------------------------------------------------------------

/// Where a server is and how to authenticate: what the kubeconfig holds.
#[derive(Clone)]
pub struct Endpoint {
    /// The address the kubeconfig names.
    pub addr: SocketAddr,
    tls: Arc<rustls::ClientConfig>,
    token: String,
}

impl Endpoint {
    /// Reads the address from `<data>/kubeconfig` and the CA and token from
    /// `<data>/pki/` (the kubeconfig carries the same, base64-encoded).
    pub fn from_data_dir(data: &Path) -> Endpoint {
        let kubeconfig = std::fs::read_to_string(data.join("kubeconfig")).expect("kubeconfig");
        let server = kubeconfig
            .lines()
            .find_map(|l| l.trim().strip_prefix("server: https://"))
            .expect("an https server in the kubeconfig");
        let ca = std::fs::read_to_string(data.join("pki/ca.crt")).expect("pki/ca.crt");
        let token = std::fs::read_to_string(data.join("pki/token")).expect("pki/token");
        Endpoint {
            addr: server.parse().expect("host:port"),
            tls: miniplane::pki::client_config(&ca),
            token: token.trim().to_string(),
        }
    }

    /// A new HTTP/1.1 connection over TLS.
    pub async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, String> {
        let tcp = tokio::net::TcpStream::connect(self.addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let name = rustls::pki_types::ServerName::IpAddress(self.addr.ip().into());
        let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS handshake: {e}"))?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| format!("HTTP handshake: {e}"))?;
        tokio::spawn(async move {
            // Ends when the server closes the connection or the sender is dropped.
            let _ = conn.await;
        });
        Ok(sender)
    }
}

/// One request, as sent.
#[derive(Clone, Debug)]
pub struct Request {
    /// GET, POST, ... (any token).
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Headers besides Host, Authorization and Content-Length.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl Request {
    /// A request without body.
    pub fn new(method: &str, path: impl Into<String>) -> Request {
        Request {
            method: method.to_string(),
            path: path.into(),
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// With a JSON body.
    pub fn json(self, body: &Value) -> Request {
        self.body("application/json", body.to_string())
    }

    /// With a body of the given Content-Type.
    pub fn body(mut self, content_type: &str, body: impl Into<Bytes>) -> Request {
        self.headers.push(("Content-Type".into(), content_type.into()));
        self.body = body.into();
        self
    }

    /// With one more header.
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The request in a few lines: enough to send it again by hand.
    pub fn show(&self) -> String {
        let mut s = format!("{} {}", self.method, self.path);
        for (k, v) in &self.headers {
            s.push_str(&format!("\n  {k}: {v}"));
        }
        if !self.body.is_empty() {
            let body = String::from_utf8_lossy(&self.body);
            let cut: String = body.chars().take(600).collect();
            let more = if cut.len() < body.len() {
                format!(" ... ({} bytes in all)", self.body.len())
            } else {
                String::new()
            };
            s.push_str(&format!("\n  body: {cut}{more}"));
        }
        s
    }

    fn build(&self, endpoint: &Endpoint) -> Result<hyper::Request<Full<Bytes>>, String> {
        let mut b = hyper::Request::builder()
            .method(hyper::Method::from_bytes(self.method.as_bytes()).map_err(|e| e.to_string())?)
            .uri(&self.path)
            .header("Host", endpoint.addr.to_string())
            .header("Authorization", format!("Bearer {}", endpoint.token));
        for (k, v) in &self.headers {
            b = b.header(k, v);
        }
        b.body(Full::new(self.body.clone())).map_err(|e| e.to_string())
    }
}

/// A full response.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The whole body.
    pub body: Bytes,
}

impl Reply {
    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// `metadata.resourceVersion` of the body, as a number.
    pub fn resource_version(&self) -> Option<u64> {
        rv_of(&self.json())
    }

    /// The body, for messages.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).chars().take(500).collect()
    }
}

/// `metadata.resourceVersion` of an object or list, as a number.
pub fn rv_of(obj: &Value) -> Option<u64> {
    obj.pointer("/metadata/resourceVersion")?.as_str()?.parse().ok()
}

/// Why a request got no full response.
#[derive(Debug)]
pub enum Failure {
    /// No connection (the server is down): nothing was sent.
    Connect(String),
    /// The request was sent and the connection ended before a full
    /// response: it may or may not have been carried out.
    Dropped(String),
    /// No full response within the deadline.
    Timeout,
    /// The request could not be built (not a valid method or URI): the
    /// generator's mistake, nothing was sent.
    Invalid(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Connect(e) => write!(f, "no connection ({e})"),
            Failure::Dropped(e) => write!(f, "dropped ({e})"),
            Failure::Timeout => write!(f, "no full response in time"),
            Failure::Invalid(e) => write!(f, "not sendable ({e})"),
        }
    }
}

/// A keep-alive HTTPS connection to one server, made again when the server
/// closed it.
pub struct Http {
    endpoint: Endpoint,
    conn: Option<SendRequest<Full<Bytes>>>,
    /// Requests answered on `conn` so far.
    answered_on_conn: u64,
    /// Deadline of a whole request.
    pub timeout: Duration,
    /// Requests sent again on a new connection because a kept-alive one
    /// was closed before any of their answer came (see [`Http::send`]).
    pub resent: u64,
}

impl Http {
    /// A client of `endpoint` (connects on the first request).
    pub fn new(endpoint: &Endpoint) -> Http {
        Http {
            endpoint: endpoint.clone(),
            conn: None,
            answered_on_conn: 0,
            timeout: Duration::from_secs(30),
            resent: 0,
        }
    }

    /// A connection that is open and ready for a request. A connection the
    /// server closed while idle (it may, after a response that closes) is
    /// replaced; nothing has been sent on it, so that is no dropped request.
    async fn ready(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, Failure> {
        if let Some(c) = &mut self.conn
            && !c.is_closed()
            && c.ready().await.is_ok()
        {
            return Ok(self.conn.as_mut().expect("just checked"));
        }
        self.conn = None;
        self.answered_on_conn = 0;
        let c = self.endpoint.connect().await.map_err(Failure::Connect)?;
        Ok(self.conn.insert(c))
    }

    /// Sends `req` and reads the whole response.
    ///
    /// A kept-alive connection may be closed by the server just as the next
    /// request goes out (hyper's server closes a connection after answering
    /// a request whose body it did not read). When a reused connection
    /// ends before any byte of the answer, the request is sent once more on
    /// a new connection, as Go's `http.Transport` and hyper-util's client
    /// do; [`Http::resent`] counts these. Any other end is [`Failure::Dropped`].
    pub async fn send(&mut self, req: &Request) -> Result<Reply, Failure> {
        match self.send_once(req).await {
            Err(None) => {
                self.resent += 1;
                self.conn = None;
                self.send_once(req).await.map_err(|e| {
                    e.unwrap_or_else(|| Failure::Dropped("a new connection closed before any answer".into()))
                })
            }
            other => other.map_err(|e| e.expect("only a reused connection gives None")),
        }
    }

    /// One try; `Err(None)`: a reused connection closed before any answer.
    async fn send_once(&mut self, req: &Request) -> Result<Reply, Option<Failure>> {
        let built = req.build(&self.endpoint).map_err(|e| Some(Failure::Invalid(e)))?;
        let timeout = self.timeout;
        self.ready().await.map_err(Some)?;
        let reused = self.answered_on_conn > 0;
        let conn = self.conn.as_mut().expect("ready() leaves a connection");
        let exchange = async {
            let resp = match conn.send_request(built).await {
                Ok(r) => r,
                Err(e) if reused && (e.is_incomplete_message() || e.is_canceled() || e.is_closed()) => {
                    return Err(None);
                }
                Err(e) => return Err(Some(Failure::Dropped(format!("no response: {e}")))),
            };
            let status = resp.status().as_u16();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| {
                    Some(Failure::Dropped(format!(
                        "status {status}, then the body broke off: {e}"
                    )))
                })?
                .to_bytes();
            Ok(Reply { status, body })
        };
        let result = match tokio::time::timeout(timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err(Some(Failure::Timeout)),
        };
        match &result {
            Ok(_) => self.answered_on_conn += 1,
            Err(_) => {
                self.conn = None;
                self.answered_on_conn = 0;
            }
        }
        result
    }

    /// Sends `req` on a connection of its own while reading the answer at
    /// the same time, so that a response sent before the whole body was
    /// read (a 413 to a body over the limit, after which the server closes)
    /// is still seen, as curl sees it; hyper's client gives up when the
    /// write fails. For large bodies.
    pub async fn send_closing(&mut self, req: &Request) -> Result<Reply, Failure> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let endpoint = &self.endpoint;
        let mut head = format!(
            "{} {} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            req.method,
            req.path,
            endpoint.addr,
            endpoint.token,
            req.body.len()
        );
        for (k, v) in &req.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let tcp = tokio::net::TcpStream::connect(endpoint.addr)
            .await
            .map_err(|e| Failure::Connect(e.to_string()))?;
        let name = rustls::pki_types::ServerName::IpAddress(endpoint.addr.ip().into());
        let tls = tokio_rustls::TlsConnector::from(endpoint.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| Failure::Connect(format!("TLS handshake: {e}")))?;
        let (mut rd, mut wr) = tokio::io::split(tls);
        let body = req.body.clone();
        let writer = tokio::spawn(async move {
            // A write error only means the server stopped reading; its answer tells.
            let _ = wr.write_all(head.as_bytes()).await;
            let _ = wr.write_all(&body).await;
            let _ = wr.flush().await;
            wr
        });
        let mut raw = Vec::new();
        let read = tokio::time::timeout(self.timeout, rd.read_to_end(&mut raw)).await;
        writer.abort();
        if read.is_err() {
            return Err(Failure::Timeout);
        }
        parse_complete(&raw).ok_or_else(|| {
            Failure::Dropped(format!(
                "the connection ended after {} bytes of response: {:?}",
                raw.len(),
                String::from_utf8_lossy(&raw[..raw.len().min(200)])
            ))
        })
    }

    /// Sends `req` and returns the response head and the streaming body
    /// (a watch, a followed log), on a new connection that is the stream's.
    pub async fn stream(&mut self, req: &Request) -> Result<(u16, Incoming), Failure> {
        let built = req.build(&self.endpoint).map_err(Failure::Invalid)?;
        let timeout = self.timeout;
        // A connection of its own: a kept-alive one may be closing.
        let mut conn = self.endpoint.connect().await.map_err(Failure::Connect)?;
        match tokio::time::timeout(timeout, conn.send_request(built)).await {
            Ok(Ok(resp)) => Ok((resp.status().as_u16(), resp.into_body())),
            Ok(Err(e)) => Err(Failure::Dropped(format!("no response: {e}"))),
            Err(_) => Err(Failure::Timeout),
        }
    }
}

/// A whole HTTP/1.1 response (head, and the body its Content-Length or
/// chunked encoding announces), or None when it is cut short.
fn parse_complete(raw: &[u8]) -> Option<Reply> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
    let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
    let body = &raw[end + 4..];
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let complete = match length {
        Some(n) => body.len() >= n,
        None if head.contains("transfer-encoding: chunked") => body.ends_with(b"0\r\n\r\n"),
        None => true,
    };
    complete.then(|| Reply {
        status,
        body: Bytes::copy_from_slice(body),
    })
}

/// Splits a watch body into its JSON events as frames arrive.
#[derive(Default)]
pub struct EventLines {
    buf: Vec<u8>,
}

impl EventLines {
    /// Adds a frame; returns the complete events it finished.
    pub fn push(&mut self, data: &[u8]) -> Vec<Value> {
        self.buf.extend_from_slice(data);
        let mut out = Vec::new();
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=nl).collect();
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            out.push(serde_json::from_slice(&line).unwrap_or(Value::Null));
        }
        out
    }
}
