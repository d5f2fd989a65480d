//! The rollout benchmark: how close to the cost of its API writes is a large
//! rolling update, and how much memory does a 10,000-pod cluster take? It
//! prints figures; it asserts nothing.
//!
//! Run it with `cargo bench --bench rollout` (release profile; Cargo also
//! builds the `miniplane` binary that section 2 starts). It takes a few
//! minutes on 2 cores; all traffic stays on 127.0.0.1.
//!
//! 1. **1,000-replica rolling update** on an in-process `miniplane::Server`
//!    (`Durability::Flush`, `Clock::scaled(1000)` so that simulated delays —
//!    image pulls of 1–3 s, grace periods — shrink to milliseconds; 20 nodes
//!    × 110 pods). A Deployment of 1,000 replicas is created and rolled out
//!    (not timed), then its pod template is changed with a merge patch
//!    (`kubectl set image` equivalent) and the time until the Deployment's
//!    status reports the rollout complete is measured. Every store write has
//!    its own revision, so `store().revision()` after minus before is the
//!    number of writes the rollout took (a store watch splits them by
//!    resource; node heartbeats and Leases run meanwhile and are included).
//!    In the same run, 2,000 sequential in-process `Api::create`s of small
//!    ConfigMaps give the mean single-write time, and the bench prints
//!    `wall / (writes × mean write)`: near 1 means the rollout costs what its
//!    writes cost; below 1 means writes overlapped (group commit, several
//!    writers); well above 1 means time went elsewhere (waits, reconcile
//!    cost, lists).
//!
//!    The section runs twice on fresh servers: with the causal journal at
//!    its default size (`--journal-size 20000`, `store::journal`), then with
//!    it off (`--journal-size 0`), and prints `journal on / off`, the ratio
//!    of the two rolling updates' wall times (target ≤ 1.10: the journal
//!    stays off the hot path).
//! 2. **RSS with 10,000 running pods**: spawns the binary (`up --nodes 100
//!    --time-scale 1000`, 110 pods per node by default), POSTs 10
//!    Deployments of 1,000 replicas, polls the Deployments until their
//!    `readyReplicas` add up to 10,000, and reads VmRSS/VmHWM from
//!    `/proc/<pid>/status` then, and again after 5 idle seconds; then a
//!    `fieldSelector=status.phase=Running` pod list checks that the pods run.
//!
//! Waits are bounded; when a phase does not finish in time, what was reached
//! is printed and the phase is marked as not finished. Targets are printed
//! beside the figures; none is enforced here.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use apiserver::api::{ListOptions, PatchType, WriteOptions};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use miniplane::cluster::SimConfig;
use serde_json::json;
use store::Clock;
use tokio::time::Instant;

mod common;

use common::{Result, section};

/// Replicas of the rolled-out Deployment.
const ROLLOUT_REPLICAS: u64 = 1_000;
/// Nodes × pods per node for section 1.
const ROLLOUT_NODES: usize = 20;
const ROLLOUT_PODS_PER_NODE: u32 = 110;
/// Simulated seconds per real second in both sections.
const TIME_SCALE: f64 = 1000.0;
/// Sequential creates for the mean write time.
const MEAN_WRITES: usize = 2_000;
/// Bounds on each wait of section 1.
const ROLLOUT_WAIT: Duration = Duration::from_secs(100);
/// Section 2: nodes, Deployments × replicas, bound on the wait.
const RSS_NODES: usize = 100;
const RSS_DEPLOYMENTS: u64 = 10;
const RSS_REPLICAS_EACH: u64 = 1_000;
const RSS_WAIT: Duration = Duration::from_secs(300);
/// The binary Cargo built for this bench (same profile).
const MINIPLANE_BIN: &str = env!("CARGO_BIN_EXE_miniplane");

fn main() -> Result<()> {
    common::main("rollout", run)
}

async fn run() -> Result<()> {
    let started = Instant::now();
    println!(
        "miniplane rollout benchmark — time scale {TIME_SCALE}, {} cores",
        cores()
    );

    // `cargo bench --bench rollout -- rollout` (or `-- rss`) runs one section.
    let only = |name: &str| {
        let filters: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| !a.starts_with("--"))
            .collect();
        filters.is_empty() || filters.iter().any(|f| f == name)
    };
    let r = if only("rollout") {
        let on = rolling_update(store::journal::DEFAULT_CAPACITY).await?;
        let off = rolling_update(0).await?;
        Some((on, off))
    } else {
        None
    };
    let m = if only("rss") {
        section("2. RSS with 10,000 running pods (miniplane up, 100 nodes)");
        Some(rss_10k().await?)
    } else {
        None
    };

    section("summary");
    println!("{:<46} {:>14} {:>14}", "figure", "value", "target");
    if let Some((on, off)) = &r {
        println!(
            "with the causal journal ({} entries):",
            store::journal::DEFAULT_CAPACITY
        );
        rollout_summary(on);
        println!("without it (--journal-size 0):");
        rollout_summary(off);
        journal_summary(on, off);
    }
    if let Some(m) = &m {
        rss_summary(m);
    }
    println!("\ntotal bench time {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

// ---------------------------------------------------------------- 1. rolling update

fn rollout_summary(r: &RolloutFigures) {
    match &r.rollout {
        Some(done) => {
            let ratio = done.wall.as_secs_f64() / (done.writes as f64 * r.mean_write.as_secs_f64());
            println!(
                "{:<46} {:>14} {:>14}",
                "rolling update wall time",
                format!("{:.2} s", done.wall.as_secs_f64()),
                ""
            );
            println!(
                "{:<46} {:>14} {:>14}",
                "writes (store revisions)", done.writes, ""
            );
            println!(
                "{:<46} {:>14} {:>14}",
                "mean single write (sequential Api::create)",
                format!("{:.3} ms", ms(r.mean_write)),
                ""
            );
            println!(
                "{:<46} {:>14} {:>14}",
                "wall / (writes × mean write)",
                format!("{ratio:.2}"),
                "≤ 2"
            );
        }
        None => println!(
            "{:<46} {:>14} {:>14}",
            "rolling update", "NOT FINISHED", "complete"
        ),
    }
}

/// The cost of the causal journal: the rolling update's wall time with it
/// over the time without.
fn journal_summary(on: &RolloutFigures, off: &RolloutFigures) {
    let (Some(a), Some(b)) = (&on.rollout, &off.rollout) else {
        println!(
            "{:<46} {:>14} {:>14}",
            "journal on / off", "NOT FINISHED", "≤ 1.10"
        );
        return;
    };
    let ratio = a.wall.as_secs_f64() / b.wall.as_secs_f64();
    println!(
        "{:<46} {:>14} {:>14}",
        "journal on / off (rolling update wall time)",
        format!("{ratio:.3}"),
        "≤ 1.10"
    );
}

struct RolloutFigures {
    mean_write: Duration,
    rollout: Option<Done>,
}

struct Done {
    wall: Duration,
    writes: u64,
}

/// Section 1 on a fresh server whose journal keeps `journal` entries (0: off).
async fn rolling_update(journal: usize) -> Result<RolloutFigures> {
    section(&format!(
        "1. {ROLLOUT_REPLICAS}-replica rolling update (in-process server, Flush, {ROLLOUT_NODES} nodes × {ROLLOUT_PODS_PER_NODE} pods, journal size {journal})"
    ));
    let server = miniplane::Server::start(miniplane::Config {
        clock: Clock::scaled(TIME_SCALE).with_journal(store::Journal::new(journal)),
        sim: Some(SimConfig {
            nodes: ROLLOUT_NODES,
            capacity: kubelet_sim::node::Capacity {
                pods: ROLLOUT_PODS_PER_NODE,
                ..Default::default()
            },
            ..SimConfig::default()
        }),
        // No Event expires during the measurement (at this scale the default
        // hour is 3.6 s): every write counted is one the rollout made.
        event_ttl: Duration::from_secs(24 * 3600),
        ..miniplane::Config::ephemeral()
    })
    .await?;
    let api = server.api().clone();
    let opts = WriteOptions {
        field_manager: Some("rollout-bench".into()),
        ..Default::default()
    };

    // Mean single-write time: sequential creates of small ConfigMaps, on the
    // same server (its heartbeats run meanwhile, as during the rollout).
    let cm = api.resource("", "v1", "configmaps")?;
    let start = Instant::now();
    for i in 0..MEAN_WRITES {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("w-{i:05}")}, "data": {"k": "v"}});
        api.create(&cm, Some("default"), body, &opts).await?;
    }
    let mean_write = start.elapsed() / MEAN_WRITES as u32;
    println!(
        "mean write: {MEAN_WRITES} sequential Api::create of small ConfigMaps, {:.3} ms each ({:.0} writes/s)",
        ms(mean_write),
        1.0 / mean_write.as_secs_f64()
    );

    let deployments = api.resource("apps", "v1", "deployments")?;
    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "big"},
        "spec": {
            "replicas": ROLLOUT_REPLICAS,
            "selector": {"matchLabels": {"app": "big"}},
            "template": {
                "metadata": {"labels": {"app": "big"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.0"}]}
            }
        }
    });
    let start = Instant::now();
    api.create(&deployments, Some("default"), body, &opts).await?;
    if !wait_complete(&server, "initial rollout", start).await? {
        server.stop().await?;
        return Ok(RolloutFigures {
            mean_write,
            rollout: None,
        });
    }
    println!(
        "initial rollout of {ROLLOUT_REPLICAS} pods: {:.2} s (not part of the figure)",
        start.elapsed().as_secs_f64()
    );

    // Count the rollout's writes by resource with a store watch.
    let store = api.store().clone();
    let before = store.revision();
    let end = Arc::new(AtomicU64::new(u64::MAX));
    let mut watch = store.watch("/registry/", before)?;
    let counter = {
        let end = end.clone();
        tokio::spawn(async move {
            let mut by_resource: BTreeMap<String, u64> = BTreeMap::new();
            while let Some(Ok(event)) = watch.next().await {
                if event.revision > end.load(Ordering::Acquire) {
                    break;
                }
                let mut resource = event.key.split('/').nth(3).unwrap_or("?").to_string();
                if resource == "events" {
                    // Events by reason: which part of the system wrote them.
                    let reason = serde_json::from_slice::<serde_json::Value>(&event.value)
                        .ok()
                        .and_then(|e| e["reason"].as_str().map(str::to_string));
                    resource = format!("events:{}", reason.unwrap_or_default());
                }
                *by_resource.entry(resource).or_default() += 1;
                if event.revision == end.load(Ordering::Acquire) {
                    break;
                }
            }
            by_resource
        })
    };

    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2.0"}]}}}});
    let start = Instant::now();
    api.patch(
        &deployments,
        Some("default"),
        "big",
        PatchType::Merge,
        &patch,
        None,
        &opts,
    )
    .await?;
    let finished = wait_complete(&server, "rolling update", start).await?;
    let wall = start.elapsed();
    let after = store.revision();
    let writes = after - before;
    end.store(after, Ordering::Release);
    let by_resource = tokio::time::timeout(Duration::from_secs(10), counter)
        .await
        .ok()
        .and_then(|r| r.ok());
    println!(
        "rolling update: {} in {:.2} s, {writes} writes ({:.0} writes/s)",
        if finished { "complete" } else { "NOT FINISHED" },
        wall.as_secs_f64(),
        writes as f64 / wall.as_secs_f64()
    );
    if let Some(by_resource) = by_resource {
        let parts: Vec<_> = by_resource.iter().map(|(r, n)| format!("{r} {n}")).collect();
        println!("  writes by resource: {}", parts.join(", "));
    }
    server.stop().await?;
    Ok(RolloutFigures {
        mean_write,
        rollout: finished.then_some(Done { wall, writes }),
    })
}

/// Polls the Deployment `big` until its status reports the rollout complete
/// (every replica updated and available, none old, generation observed, the
/// old ReplicaSets at 0). Prints progress; false when `ROLLOUT_WAIT` passes.
async fn wait_complete(server: &miniplane::Server, what: &str, start: Instant) -> Result<bool> {
    let api = server.api();
    let deployments = api.resource("apps", "v1", "deployments")?;
    let replicasets = api.resource("apps", "v1", "replicasets")?;
    let mut last_print = start;
    loop {
        let d = api.get(&deployments, Some("default"), "big")?;
        let s = &d["status"];
        let n = |f: &str| s[f].as_u64().unwrap_or(0);
        let generation_seen = s["observedGeneration"].as_i64() >= d["metadata"]["generation"].as_i64();
        let status_done = generation_seen
            && n("updatedReplicas") == ROLLOUT_REPLICAS
            && n("availableReplicas") == ROLLOUT_REPLICAS
            && n("replicas") == ROLLOUT_REPLICAS;
        if status_done {
            let rss = api.list(&replicasets, Some("default"), &ListOptions::default())?;
            let template = &d["spec"]["template"]["spec"]["containers"][0]["image"];
            let old_at_zero = rss
                .items
                .iter()
                .filter(|rs| &rs["spec"]["template"]["spec"]["containers"][0]["image"] != template)
                .all(|rs| {
                    rs["spec"]["replicas"].as_u64() == Some(0)
                        && rs["status"]["replicas"].as_u64().unwrap_or(0) == 0
                });
            if old_at_zero {
                return Ok(true);
            }
        }
        if last_print.elapsed() >= Duration::from_secs(5) {
            last_print = Instant::now();
            println!(
                "  {what}: {:>5.1} s  replicas {} updated {} available {}",
                start.elapsed().as_secs_f64(),
                n("replicas"),
                n("updatedReplicas"),
                n("availableReplicas")
            );
        }
        if start.elapsed() > ROLLOUT_WAIT {
            println!(
                "  {what}: NOT FINISHED within {} s (replicas {} updated {} available {})",
                ROLLOUT_WAIT.as_secs(),
                n("replicas"),
                n("updatedReplicas"),
                n("availableReplicas")
            );
            return Ok(false);
        }
        pause(Duration::from_millis(5)).await;
    }
}

// ---------------------------------------------------------------- 2. RSS at 10,000 pods

fn rss_summary(m: &RssFigures) {
    match &m.reached {
        Some(t) => println!(
            "{:<46} {:>14} {:>14}",
            "time to 10,000 ready pods",
            format!("{:.1} s", t.as_secs_f64()),
            ""
        ),
        None => println!(
            "{:<46} {:>14} {:>14}",
            "10,000 ready pods",
            format!("NOT REACHED ({})", m.ready),
            "10,000"
        ),
    }
    println!(
        "{:<46} {:>14} {:>14}",
        format!("VmRSS at {} ready pods ({} Running)", m.ready, m.running),
        format!("{:.1} MiB", m.rss_mib),
        "< 300 MiB"
    );
    println!(
        "{:<46} {:>14} {:>14}",
        "VmRSS after 5 idle s",
        format!("{:.1} MiB", m.rss_idle_mib),
        "< 300 MiB"
    );
    println!(
        "{:<46} {:>14} {:>14}",
        "VmHWM (peak RSS)",
        format!("{:.1} MiB", m.hwm_mib),
        ""
    );
}

struct RssFigures {
    /// Time from the first POST to 10,000 ready pods, when reached.
    reached: Option<Duration>,
    /// Ready replicas when RSS was read, and Running pods listed just after.
    ready: usize,
    running: usize,
    rss_mib: f64,
    rss_idle_mib: f64,
    hwm_mib: f64,
}

async fn rss_10k() -> Result<RssFigures> {
    let dir = tempfile::tempdir()?;
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = tokio::process::Command::new(MINIPLANE_BIN)
        .args(["up", "--insecure-http", "--listen", "127.0.0.1:0", "--nodes"])
        .arg(RSS_NODES.to_string())
        .arg("--time-scale")
        .arg(TIME_SCALE.to_string())
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let pid = child.id().ok_or("miniplane exited")?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let addr = loop {
        if let Some(addr) = std::fs::read_to_string(&kubeconfig)
            .ok()
            .and_then(|k| server_addr(&k))
        {
            break addr;
        }
        if let Some(status) = child.try_wait()? {
            return Err(format!("miniplane exited before it was ready: {status}").into());
        }
        if Instant::now() > deadline {
            return Err("miniplane wrote no kubeconfig within 20 s".into());
        }
        pause(Duration::from_millis(10)).await;
    };
    let (rss0, _) = rss_of(pid)?;
    println!("ready; VmRSS {rss0:.1} MiB before any Deployment");

    let mut conn = connect(addr).await?;
    let start = Instant::now();
    for d in 0..RSS_DEPLOYMENTS {
        let name = format!("load-{d}");
        let body = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "replicas": RSS_REPLICAS_EACH,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1.0"}]}
                }
            }
        });
        let (status, text) = request(
            &mut conn,
            addr,
            "POST",
            "/apis/apps/v1/namespaces/default/deployments",
            serde_json::to_vec(&body)?,
        )
        .await?;
        if status != StatusCode::CREATED {
            return Err(format!(
                "POST deployment {name}: {status}: {}",
                String::from_utf8_lossy(&text)
            )
            .into());
        }
    }
    // Progress is read from the Deployments' readyReplicas (ten small
    // objects): listing 10,000 pods on every poll would itself cost the
    // server hundreds of MiB of transient memory and skew the figure.
    let want = (RSS_DEPLOYMENTS * RSS_REPLICAS_EACH) as usize;
    let mut ready = 0;
    let mut reached = None;
    while start.elapsed() < RSS_WAIT {
        pause(Duration::from_secs(3)).await;
        ready = ready_replicas(&mut conn, addr).await?;
        let (rss, _) = rss_of(pid)?;
        println!(
            "  {:>5.1} s  {ready:>6} ready pods  VmRSS {rss:.1} MiB",
            start.elapsed().as_secs_f64()
        );
        if ready >= want {
            reached = Some(start.elapsed());
            break;
        }
    }
    if reached.is_none() {
        println!(
            "  NOT REACHED: {ready} of {want} pods ready after {} s; RSS below is at that point",
            RSS_WAIT.as_secs()
        );
    }
    let (rss_mib, _) = rss_of(pid)?;
    pause(Duration::from_secs(5)).await;
    let (rss_idle_mib, hwm_mib) = rss_of(pid)?;
    // After the figures: check with a pod list that the pods really run.
    let running = running_pods(&mut conn, addr).await?;
    println!("  pods with status.phase=Running: {running}");
    drop(conn);
    child.start_kill()?;
    child.wait().await?;
    Ok(RssFigures {
        reached,
        ready,
        running,
        rss_mib,
        rss_idle_mib,
        hwm_mib,
    })
}

/// The sum of `status.readyReplicas` over the Deployments of `default`.
async fn ready_replicas(conn: &mut SendRequest<Full<Bytes>>, addr: SocketAddr) -> Result<usize> {
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let (status, text) = request(conn, addr, "GET", path, Vec::new()).await?;
    if status != StatusCode::OK {
        return Err(format!("GET deployments: {status}").into());
    }
    let list: serde_json::Value = serde_json::from_slice(&text)?;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    Ok(items
        .iter()
        .map(|d| d["status"]["readyReplicas"].as_u64().unwrap_or(0) as usize)
        .sum())
}

/// How many pods of the cluster are Running.
async fn running_pods(conn: &mut SendRequest<Full<Bytes>>, addr: SocketAddr) -> Result<usize> {
    let path = "/api/v1/pods?fieldSelector=status.phase%3DRunning";
    let (status, text) = request(conn, addr, "GET", path, Vec::new()).await?;
    if status != StatusCode::OK {
        return Err(format!("GET pods: {status}").into());
    }
    Ok(serde_json::from_slice::<PodCount>(&text)?.items.len())
}

/// A pod list, counted without decoding the pods.
#[derive(serde::Deserialize)]
struct PodCount {
    items: Vec<serde::de::IgnoredAny>,
}

/// VmRSS and VmHWM of `pid`, in MiB.
fn rss_of(pid: u32) -> Result<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let rss = proc_kib(&status, "VmRSS:").ok_or("no VmRSS")? as f64 / 1024.0;
    let hwm = proc_kib(&status, "VmHWM:").ok_or("no VmHWM")? as f64 / 1024.0;
    Ok((rss, hwm))
}

fn proc_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The `server: http://<addr>` of a kubeconfig.
fn server_addr(kubeconfig: &str) -> Option<SocketAddr> {
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: http://"))
        .and_then(|a| a.parse().ok())
}

// ---------------------------------------------------------------- helpers

/// One HTTP/1.1 keep-alive connection to `addr`.
async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(async move {
        let _ = conn.await; // ends when the sender and any response body are dropped
    });
    Ok(sender)
}

/// Sends one request and reads the whole answer.
async fn request(
    conn: &mut SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    method: &str,
    uri: &str,
    body: Vec<u8>,
) -> Result<(StatusCode, Bytes)> {
    conn.ready().await?;
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(HOST, addr.to_string())
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))?;
    let response = conn.send_request(request).await?;
    let status = response.status();
    Ok((status, response.into_body().collect().await?.to_bytes()))
}

/// Waits `d` of real time (benchmarks measure real time).
async fn pause(d: Duration) {
    let mut interval = tokio::time::interval(d);
    interval.tick().await; // the first tick is immediate
    interval.tick().await;
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
