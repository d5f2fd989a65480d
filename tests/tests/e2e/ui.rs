//! The web view (`/ui/`) in a real browser: headless Chromium, driven by
//! `tests/ui/check.mjs` (playwright-core), watches a Deployment roll out.
//!
//! The test starts a cluster on plain HTTP, creates Deployment `web` (3
//! replicas) with kubectl and runs the script, which checks the owner tree;
//! on its `READY` the test runs `kubectl set image`, and the script checks
//! the tree and the timeline follow the rollout, the journal's cause links
//! and the time controls, and that the page logged no error. The
//! screenshot goes to `$MINIPLANE_UI_SCREENSHOT` (relative to the
//! workspace: `MINIPLANE_UI_SCREENSHOT=docs/ui.png` regenerates the
//! README's picture), else into the test's temporary directory.
//!
//! Chromium and node are required, not optional: `.ci/run` installs them
//! (Debian's `chromium`, `npm ci --prefix tests/ui`), so a missing one is a
//! failure with the command that installs it.
//!
//! Over HTTPS (`miniplane up`'s default), the page opened at the address
//! `up` prints, with the admin's token in the fragment, shows the tree and
//! takes the token out of the address bar; and its files are public while
//! the data it shows is not.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use e2e::{Cluster, Config, PATIENCE, http, http_anonymous};
use store::Clock;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Simulated seconds per real second: a rollout takes a few real seconds,
/// slow enough for the page to show it step by step.
const SCALE: f64 = 5.0;
const CHROMIUM: &str = "/usr/bin/chromium";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

/// Panics, saying how to install it, when Chromium, node or playwright-core is missing.
fn require_browser() {
    let ui = workspace().join("tests/ui");
    assert!(
        Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is missing: the web view's browser test needs Debian's chromium \
         (apt-get install -y --no-install-recommends chromium, as .ci/run does)"
    );
    let node = std::process::Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "node is missing: the web view's browser test runs tests/ui/check.mjs with node"
    );
    assert!(
        ui.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run `npm ci --prefix tests/ui` (as .ci/run does)"
    );
}

const WEB: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
"#;

/// Applies Deployment `web` and waits for its rollout.
async fn deploy_web(cluster: &Cluster) {
    let applied = cluster.run_with_yaml(&["apply"], WEB).await;
    assert!(applied.success, "kubectl apply: {}", applied.stderr);
    cluster
        .ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
}

/// Where the screenshot goes: `$MINIPLANE_UI_SCREENSHOT` or the test's directory.
fn screenshot(cluster: &Cluster) -> PathBuf {
    match std::env::var_os("MINIPLANE_UI_SCREENSHOT") {
        Some(path) => workspace().join(path),
        None => cluster.dir.path().join("ui.png"),
    }
}

/// `node tests/ui/check.mjs URL SCREENSHOT FLAGS...`, read line by line.
struct BrowserCheck {
    child: tokio::process::Child,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    /// Every line printed so far.
    seen: Vec<String>,
    screenshot: PathBuf,
}

impl BrowserCheck {
    fn start(url: &str, screenshot: PathBuf, flags: &[&str]) -> BrowserCheck {
        let mut child = tokio::process::Command::new("node")
            .arg("check.mjs")
            .arg(url)
            .arg(&screenshot)
            .args(flags)
            .current_dir(workspace().join("tests/ui"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let stdout = BufReader::new(child.stdout.take().expect("piped")).lines();
        BrowserCheck {
            child,
            stdout,
            seen: Vec::new(),
            screenshot,
        }
    }

    /// Reads lines until `wanted`; panics with what was printed if it does not come.
    async fn wait_for(&mut self, wanted: &str) {
        let found = tokio::time::timeout(PATIENCE * 2, async {
            while let Ok(Some(line)) = self.stdout.next_line().await {
                let hit = line == wanted;
                self.seen.push(line);
                if hit {
                    return true;
                }
            }
            false
        })
        .await;
        if found != Ok(true) {
            let stderr = self.stderr().await;
            panic!(
                "the browser check never printed {wanted}:\n{}\n{stderr}",
                self.seen.join("\n")
            );
        }
    }

    async fn stderr(&mut self) -> String {
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr).await;
        }
        stderr
    }

    /// Tells the script the test has acted.
    async fn send(&mut self, line: &str) {
        let mut stdin = self.child.stdin.take().expect("piped, written once");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the script");
    }

    /// Waits for the script to end; it must print `PASS` last, and write a PNG.
    async fn passes(mut self) {
        let finished = tokio::time::timeout(PATIENCE * 3, async {
            while let Ok(Some(line)) = self.stdout.next_line().await {
                self.seen.push(line);
            }
            let stderr = self.stderr().await;
            (self.child.wait().await, stderr)
        })
        .await;
        let Ok((status, stderr)) = finished else {
            panic!("the browser check did not finish; it printed {:#?}", self.seen);
        };
        assert!(
            status.is_ok_and(|s| s.success()) && self.seen.last().is_some_and(|l| l == "PASS"),
            "the browser check failed:\n{}\n{stderr}\n(screenshot: {})",
            self.seen.join("\n"),
            self.screenshot.display()
        );
        let png = std::fs::read(&self.screenshot).expect("the screenshot was written");
        assert!(
            png.starts_with(b"\x89PNG"),
            "{} is no PNG",
            self.screenshot.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_follows_a_rollout_in_a_browser() {
    require_browser();
    let mut cluster = Cluster::start_with(Config {
        insecure_http: true,
        clock: Clock::scaled(SCALE),
        ..Config::ephemeral()
    })
    .await;
    deploy_web(&cluster).await;
    let url = format!("{}/ui/", cluster.server().url());
    let mut check = BrowserCheck::start(&url, screenshot(&cluster), &["--require-debug"]);
    check.wait_for("READY").await;
    cluster
        .ok(&["set", "image", "deployment/web", "web=nginx:1.26"])
        .await;
    check.send("rollout").await;
    check.passes().await;
    cluster.stop().await;
}

/// HTTPS, as `miniplane up` serves by default: the browser has no client
/// certificate and opens the address `up` prints, with the admin's token
/// in the fragment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_the_page_works_with_the_token_in_the_fragment() {
    require_browser();
    let mut cluster = Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        ..Config::ephemeral()
    })
    .await;
    deploy_web(&cluster).await;
    let server = cluster.server();
    let token = &server.pki().expect("HTTPS has credentials").token;
    let url = format!("{}/ui/#token={token}", server.url());
    let shot = cluster.dir.path().join("https.png");
    BrowserCheck::start(&url, shot, &["--tls", "--no-rollout"])
        .passes()
        .await;
    cluster.stop().await;
}

#[tokio::test]
async fn over_https_the_page_is_public_and_its_data_is_not() {
    let mut cluster = Cluster::start().await;
    let server = cluster.server();
    let page = http_anonymous(server, "GET", "/ui/", &[], b"").await;
    assert_eq!(page.status, 200);
    assert!(String::from_utf8_lossy(&page.body).contains("<script src=\"app.js\">"));
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let redirect = http_anonymous(server, "GET", "/ui", &[], b"").await;
    assert_eq!(
        (redirect.status, redirect.header("location")),
        (308, Some("/ui/"))
    );
    let pods = "/api/v1/namespaces/default/pods";
    assert_eq!(http_anonymous(server, "GET", pods, &[], b"").await.status, 401);
    // With the kubeconfig's token, as the page sends it.
    assert_eq!(http(server, "GET", pods, &[], b"").await.status, 200);
    cluster.stop().await;
}
