//! The harness benchmark: how fast does a test get a ready cluster? It
//! prints figures; it asserts nothing.
//!
//! Run it with `cargo bench --bench harness` (release profile; Cargo also
//! builds the `miniplane` binary that section 3 starts). It needs `kubectl`
//! on the PATH for the yardstick.
//!
//! What is measured, in one run:
//!
//! 0. **The yardstick**: one `kubectl version --client=false` against a
//!    served cluster (a process start, a TLS handshake, one request), the
//!    median of 10. Every other figure is also printed as a ratio to it, so
//!    that runs on different machines compare.
//! 1. **In-process**: `miniplane::Cluster::builder().start()` until it
//!    returns (the kube client is ready: its first request succeeds), and
//!    one `GET /version` through that client, 20 times.
//! 2. **Served**: the same with `.serve()` (HTTPS on an ephemeral port, a
//!    kubeconfig written), 20 times.
//! 3. **`miniplane up --in-memory`**: spawn the binary until `/readyz`
//!    answers over TLS (the kubeconfig it writes names the port), 10 times.
//! 4. **Clusters per second**: 50 in-process clusters started and stopped
//!    one after another.
//!
//! The figures move with whatever else runs on the machine: compare runs
//! made on a quiet machine. The target (a ready cluster in under 50 ms) is
//! printed beside them, not enforced.

use std::path::Path;
use std::time::Duration;

use tokio::time::Instant;

mod common;

use common::{Result, section};

/// The binary Cargo built for this bench (same profile).
const MINIPLANE_BIN: &str = env!("CARGO_BIN_EXE_miniplane");
/// Starts timed per mode.
const STARTS: usize = 20;
/// `miniplane up` processes started.
const PROCESS_STARTS: usize = 10;
/// `kubectl version` calls for the yardstick.
const KUBECTL_CALLS: usize = 10;
/// Clusters started and stopped for the rate.
const CYCLES: usize = 50;
/// The target for a ready cluster.
const TARGET: Duration = Duration::from_millis(50);

fn main() -> Result<()> {
    common::main("harness", run)
}

async fn run() -> Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("miniplane harness benchmark — {cores} cores; target: a ready cluster in under {TARGET:?}");

    section("0. yardstick: one `kubectl version --client=false` (process + TLS + 1 request)");
    let served = miniplane::Cluster::builder().serve().start().await;
    let mut calls = Vec::new();
    for _ in 0..KUBECTL_CALLS {
        calls.push(kubectl_version(served.kubeconfig()).await?);
    }
    served.stop().await?;
    let kubectl = median(&mut calls);
    println!("{:<44} {:>10}", "kubectl version (median)", ms(kubectl));

    section("1-3. start to a ready client (median, p90; ratio of the median to one kubectl call)");
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "mode", "median", "p90", "× kubectl"
    );
    let mut in_process = Vec::new();
    for _ in 0..STARTS {
        in_process.push(start_to_ready(false).await?);
    }
    report("in-process Cluster::builder().start()", &mut in_process, kubectl);
    let mut served = Vec::new();
    for _ in 0..STARTS {
        served.push(start_to_ready(true).await?);
    }
    report("served (.serve(): HTTPS + kubeconfig)", &mut served, kubectl);
    let mut process = Vec::new();
    for _ in 0..PROCESS_STARTS {
        process.push(process_to_readyz().await?);
    }
    report("miniplane up --in-memory to /readyz", &mut process, kubectl);

    section("4. clusters per second (in-process, started and stopped one after another)");
    let t = Instant::now();
    for _ in 0..CYCLES {
        let cluster = miniplane::Cluster::builder().start().await;
        cluster.stop().await?;
    }
    let took = t.elapsed();
    println!(
        "{CYCLES} clusters in {}: {:.1} clusters/s",
        ms(took),
        CYCLES as f64 / took.as_secs_f64()
    );
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn report(what: &str, samples: &mut [Duration], kubectl: Duration) {
    let m = median(samples);
    let p90 = samples[(samples.len() * 9 / 10).min(samples.len() - 1)];
    println!(
        "{what:<44} {:>10} {:>10} {:>9.2}×",
        ms(m),
        ms(p90),
        m.as_secs_f64() / kubectl.as_secs_f64()
    );
}

/// `Cluster::builder().start()` until its client has answered one request.
async fn start_to_ready(serve: bool) -> Result<Duration> {
    let t = Instant::now();
    let builder = miniplane::Cluster::builder();
    let builder = if serve { builder.serve() } else { builder };
    let cluster = builder.start().await;
    cluster.client().apiserver_version().await?;
    let took = t.elapsed();
    cluster.stop().await?;
    Ok(took)
}

/// One `kubectl version --client=false`.
async fn kubectl_version(kubeconfig: &Path) -> Result<Duration> {
    let cache = tempfile::tempdir()?;
    let t = Instant::now();
    let out = tokio::process::Command::new("kubectl")
        .args(["version", "--client=false"])
        .arg(format!("--cache-dir={}", cache.path().display()))
        .env("KUBECONFIG", kubeconfig)
        .output()
        .await?;
    let took = t.elapsed();
    if !out.status.success() {
        return Err(format!("kubectl version: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(took)
}

/// Spawns `miniplane up --in-memory` and times until `/readyz` answers 200
/// over TLS: the kubeconfig appears only after the server's own readiness
/// check, and names the chosen port and the CA.
async fn process_to_readyz() -> Result<Duration> {
    let dir = tempfile::tempdir()?;
    let kubeconfig = dir.path().join("kubeconfig");
    let t = Instant::now();
    let mut child = tokio::process::Command::new(MINIPLANE_BIN)
        .args(["up", "--in-memory", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(&kubeconfig)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    while !kubeconfig.is_file() {
        tokio::task::yield_now().await;
        if t.elapsed() > Duration::from_secs(30) {
            return Err("miniplane up did not become ready in 30 s".into());
        }
    }
    let kc = kube::config::Kubeconfig::read_from(&kubeconfig)?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default()).await?;
    let client = kube::Client::try_from(config)?;
    let request = hyper::Request::get("/readyz").body(Vec::new())?;
    let text = client.request_text(request).await?;
    let took = t.elapsed();
    if text.trim() != "ok" {
        return Err(format!("/readyz answered {text:?}").into());
    }
    child.start_kill()?;
    child.wait().await?;
    Ok(took)
}
