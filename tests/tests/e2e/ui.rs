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
//! A second test checks, over HTTPS, what is public: the page's files, and
//! none of the data it shows without the token.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_follows_a_rollout_in_a_browser() {
    require_browser();
    let mut cluster = Cluster::start_with(Config {
        insecure_http: true,
        clock: Clock::scaled(SCALE),
        ..Config::ephemeral()
    })
    .await;
    let applied = cluster.run_with_yaml(&["apply"], WEB).await;
    assert!(applied.success, "kubectl apply: {}", applied.stderr);
    cluster
        .ok(&["rollout", "status", "deployment/web", "--timeout=60s"])
        .await;
    let screenshot = match std::env::var_os("MINIPLANE_UI_SCREENSHOT") {
        Some(path) => workspace().join(path),
        None => cluster.dir.path().join("ui.png"),
    };
    let url = format!("{}/ui/", cluster.server().url());
    let mut check = tokio::process::Command::new("node")
        .arg("check.mjs")
        .arg(&url)
        .arg(&screenshot)
        .current_dir(workspace().join("tests/ui"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let mut stdout = BufReader::new(check.stdout.take().expect("piped")).lines();
    let mut seen = Vec::new();
    let ready = tokio::time::timeout(PATIENCE * 2, async {
        while let Ok(Some(line)) = stdout.next_line().await {
            let done = line == "READY";
            seen.push(line);
            if done {
                return true;
            }
        }
        false
    })
    .await;
    if ready != Ok(true) {
        let mut stderr = String::new();
        let _ = check
            .stderr
            .take()
            .expect("piped")
            .read_to_string(&mut stderr)
            .await;
        panic!("the page never showed web's 3 ready pods: {seen:#?}\n{stderr}");
    }
    cluster
        .ok(&["set", "image", "deployment/web", "web=nginx:1.26"])
        .await;
    let mut stdin = check.stdin.take().expect("piped");
    stdin.write_all(b"rollout\n").await.expect("write to the script");
    drop(stdin);
    let rest = tokio::time::timeout(PATIENCE * 3, async {
        while let Ok(Some(line)) = stdout.next_line().await {
            seen.push(line);
        }
        let mut stderr = String::new();
        let _ = check
            .stderr
            .take()
            .expect("piped")
            .read_to_string(&mut stderr)
            .await;
        (check.wait().await, stderr)
    })
    .await;
    let Ok((status, stderr)) = rest else {
        panic!("the browser check did not finish; it printed {seen:#?}");
    };
    assert!(
        status.is_ok_and(|s| s.success()) && seen.last().is_some_and(|l| l == "PASS"),
        "the browser check failed:\n{}\n{stderr}\n(screenshot: {})",
        seen.join("\n"),
        screenshot.display()
    );
    let png = std::fs::read(&screenshot).expect("the screenshot was written");
    assert!(png.starts_with(b"\x89PNG"), "{} is no PNG", screenshot.display());
    cluster.stop().await;
}

#[tokio::test]
async fn over_https_the_page_is_public_and_its_data_needs_the_token() {
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
