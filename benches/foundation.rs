//! The foundation benchmark: how fast is the storage and API path, end to end,
//! compared with the raw sled it is built on? It prints figures; it asserts
//! nothing.
//!
//! Run it with `cargo bench --bench foundation` (release profile; Cargo also
//! builds the `miniplane` binary that sections 5 and 6 start). It takes well
//! under two minutes on 2 cores, and all traffic stays on 127.0.0.1.
//!
//! What is measured, in one run, with ~1 KiB JSON values throughout:
//!
//! 1. **Raw sled 0.34** (one writer, a fresh temp dir): inserts with no flush,
//!    and with `flush()` after every insert. These are the baselines.
//! 2. **`store::Store::create`** in `Durability::Flush` and `Buffered`, with 1
//!    and 64 concurrent writers (tokio tasks), and the number of disk flushes
//!    per write (`stats().flushes`): below 1 means group commit is working.
//! 3. **HTTP create** (`POST /api/v1/namespaces/default/configmaps`) against an
//!    in-process `miniplane::Server` with 1, 16 and 64 keep-alive clients (one
//!    HTTP/1.1 connection each), with per-request p50/p99 latency. Sections 3
//!    and 4 use plain HTTP (`insecure_http`), so that they measure the API
//!    path as earlier runs did; section 7 shows what TLS adds. Rows
//!    marked "N api" do the same creates through the in-process
//!    `Api::create` from N tasks: the gap to the HTTP rows is the HTTP cost.
//! 4. **Watch delivery**: 100 HTTP watch streams; objects are created one at
//!    a time and each event's arrival on every stream is timed, from the
//!    create's response and from the moment the create was sent.
//! 5. **Start to ready**: spawn `miniplane up --listen 127.0.0.1:0
//!    --data-dir <fresh tmp>` (HTTPS, the default) and time until the
//!    kubeconfig exists and `/readyz` answers 200 over TLS; then once more on
//!    the same data dir, where the certificates are reused; 10 times.
//! 6. **Idle RSS** of that process one second after it is ready, and its
//!    parts: anonymous memory (heap, stacks) and file-backed pages (mostly
//!    the binary's code, shared with the page cache).
//! 7. **A new connection**: TCP connect, TLS handshake and one `GET
//!    /readyz`, against an in-process server with and without TLS; the
//!    difference is what TLS costs a client that does not keep connections.
//!
//! How to read the "vs sled" ratios: a throughput divided by raw sled's in
//! the same durability mode — `Flush` against sled insert + flush per write,
//! `Buffered` against sled insert without flush. In `Flush` mode a ratio above
//! 100% is expected with many writers: concurrent writes share one flush
//! (group commit), which a single raw writer flushing every insert cannot.
//! In `Buffered` mode the ratio is the cost of everything above sled (history,
//! index, JSON, HTTP) relative to the bare insert.
//!
//! The HTTP clients, the watchers and the server share this process's tokio
//! runtime and the machine's cores, so the HTTP figures include client cost.
//! Every figure moves with whatever else runs on the machine (a parallel
//! `cargo build` halves some of them): compare runs made on a quiet machine.
//! Targets are printed beside the figures; none is enforced here.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use store::Durability;
use tokio::time::Instant;

mod common;

use common::{Result, section};

/// Size of every stored value and HTTP request body.
const VALUE_BYTES: usize = 1024;
/// Writes per raw sled measurement.
const SLED_WRITES: usize = 10_000;
/// Writes per store measurement.
const STORE_WRITES: usize = 10_000;
/// Creates per HTTP measurement (split evenly across the clients).
const HTTP_CREATES: usize = 8064;
/// Client counts for the HTTP measurement.
const HTTP_CLIENTS: [usize; 3] = [1, 16, 64];
/// Concurrent watch streams.
const WATCHERS: usize = 100;
/// Objects created (one at a time) while the watchers listen.
const WATCH_EVENTS: usize = 200;
/// Process starts for the start-to-ready figure.
const STARTS: usize = 10;
/// New connections timed in section 7.
const HANDSHAKES: usize = 200;
/// The binary Cargo built for this bench (same profile).
const MINIPLANE_BIN: &str = env!("CARGO_BIN_EXE_miniplane");
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn main() -> Result<()> {
    common::main("foundation", run)
}

async fn run() -> Result<()> {
    let started = Instant::now();
    println!(
        "miniplane foundation benchmark — ~{VALUE_BYTES} B JSON values, {} cores",
        cores()
    );

    section("1. raw sled 0.34 insert (1 writer, fresh temp dir)");
    println!("{:<28} {:>12} {:>10}", "mode", "writes/s", "writes");
    let sled_buffered = tokio::task::spawn_blocking(|| sled_inserts(false, SLED_WRITES)).await??;
    println!(
        "{:<28} {:>12} {:>10}",
        "insert, no flush",
        rate(sled_buffered),
        SLED_WRITES
    );
    let sled_flush = tokio::task::spawn_blocking(|| sled_inserts(true, SLED_WRITES)).await??;
    println!(
        "{:<28} {:>12} {:>10}",
        "insert + flush every write",
        rate(sled_flush),
        SLED_WRITES
    );
    let sled_for = |d: Durability| match d {
        Durability::Flush => sled_flush,
        Durability::Buffered => sled_buffered,
    };

    section("2. store::Store::create (tokio tasks, fresh temp dir)");
    println!(
        "{:<10} {:>8} {:>12} {:>10} {:>14} {:>13}",
        "mode", "writers", "creates/s", "vs sled", "flushes/write", "writes/flush"
    );
    let mut store_flush_64 = None;
    for durability in [Durability::Flush, Durability::Buffered] {
        for writers in [1, 64] {
            let f = store_creates(durability, writers, STORE_WRITES).await?;
            let (per_write, per_flush) = flush_columns(durability, f.flushes, STORE_WRITES);
            println!(
                "{:<10} {:>8} {:>12} {:>10} {:>14} {:>13}",
                mode(durability),
                writers,
                rate(f.rate),
                percent(f.rate / sled_for(durability)),
                per_write,
                per_flush
            );
            if durability == Durability::Flush && writers == 64 {
                store_flush_64 = Some(STORE_WRITES as f64 / f.flushes.max(1) as f64);
            }
        }
    }

    section("3. HTTP POST configmaps (in-process server, 1 keep-alive connection per client)");
    println!(
        "{:<10} {:>8} {:>12} {:>10} {:>9} {:>9} {:>14}",
        "mode", "clients", "creates/s", "vs sled", "p50 ms", "p99 ms", "flushes/write"
    );
    let mut http_64 = Vec::new();
    for durability in [Durability::Flush, Durability::Buffered] {
        let server = start_server(durability).await?;
        // Warm-up, not counted: first connections, first allocations.
        http_creates(&server, 4, 200, "warm").await?;
        for clients in HTTP_CLIENTS {
            let f = http_creates(&server, clients, HTTP_CREATES, &format!("c{clients}")).await?;
            let ratio = f.rate / sled_for(durability);
            println!(
                "{:<10} {:>8} {:>12} {:>10} {:>9} {:>9} {:>14}",
                mode(durability),
                clients,
                rate(f.rate),
                percent(ratio),
                ms(f.p50),
                ms(f.p99),
                flush_columns(durability, f.flushes, HTTP_CREATES).0
            );
            if clients == 64 {
                http_64.push((durability, ratio));
            }
        }
        // The same creates without HTTP: what the API layer alone costs.
        for tasks in [1, 64] {
            let f = api_creates(&server, tasks, HTTP_CREATES, &format!("a{tasks}")).await?;
            println!(
                "{:<10} {:>8} {:>12} {:>10} {:>9} {:>9} {:>14}",
                mode(durability),
                format!("{tasks} api"),
                rate(f.rate),
                percent(f.rate / sled_for(durability)),
                ms(f.p50),
                ms(f.p99),
                flush_columns(durability, f.flushes, HTTP_CREATES).0
            );
        }
        server.stop().await?;
    }

    println!("(\"N api\": the same creates through the in-process Api::create from N tasks, no HTTP)");

    section(&format!(
        "4. watch delivery ({WATCHERS} HTTP watch streams, {WATCH_EVENTS} creates one at a time)"
    ));
    println!(
        "{:<10} {:<22} {:>9} {:>9} {:>9} {:>16}",
        "mode", "measured from", "p50 ms", "p99 ms", "max ms", "before response"
    );
    for durability in [Durability::Flush, Durability::Buffered] {
        let f = watch_latency(durability).await?;
        let n = f.from_response.len();
        println!(
            "{:<10} {:<22} {:>9} {:>9} {:>9} {:>16}",
            mode(durability),
            "create response",
            ms(pct(&f.from_response, 50.0)),
            ms(pct(&f.from_response, 99.0)),
            ms(pct(&f.from_response, 100.0)),
            format!("{}/{n}", f.early)
        );
        println!(
            "{:<10} {:<22} {:>9} {:>9} {:>9}",
            "",
            "create request sent",
            ms(pct(&f.from_request, 50.0)),
            ms(pct(&f.from_request, 99.0)),
            ms(pct(&f.from_request, 100.0)),
        );
    }
    println!("(\"before response\": deliveries that arrived before the create's response; counted as 0 ms)");

    section(&format!("5. start to /readyz over HTTPS ({MINIPLANE_BIN})"));
    let bin = Path::new(MINIPLANE_BIN);
    let mut firsts = Vec::with_capacity(STARTS);
    let mut starts = Vec::with_capacity(STARTS);
    let mut rss = None;
    for i in 0..STARTS {
        let last = i + 1 == STARTS;
        // A fresh data dir makes the CA, certificates and token first;
        // starting again on it reuses them.
        let dir = tempfile::tempdir()?;
        firsts.push(start_to_ready(bin, dir.path(), false).await?.0);
        let (took, mem) = start_to_ready(bin, dir.path(), last).await?;
        starts.push(took);
        rss = rss.or(mem);
    }
    firsts.sort();
    starts.sort();
    let start_median = pct(&starts, 50.0);
    println!(
        "{STARTS} first starts (fresh data dir, certificates made): median {} ms, min {} ms, max {} ms",
        ms(pct(&firsts, 50.0)),
        ms(firsts[0]),
        ms(pct(&firsts, 100.0))
    );
    println!(
        "{STARTS} starts on a kept data dir: median {} ms, min {} ms, max {} ms",
        ms(start_median),
        ms(starts[0]),
        ms(pct(&starts, 100.0))
    );

    section("6. idle RSS (1 s after /readyz, last start above)");
    let rss = rss.ok_or("no RSS reading")?;
    println!(
        "VmRSS {:.1} MiB (peak VmHWM {:.1} MiB): RssAnon {:.1} MiB (heap, stacks), RssFile {:.1} MiB (the binary's mapped code)",
        rss.rss_mib, rss.hwm_mib, rss.anon_mib, rss.file_mib
    );

    section(&format!(
        "7. a new connection: TCP + TLS handshake + GET /readyz ({HANDSHAKES} sequential)"
    ));
    let (plain, tls) = connection_cost().await?;
    println!(
        "plain HTTP p50 {} ms, p99 {} ms; HTTPS p50 {} ms, p99 {} ms; TLS adds {} ms per new connection (p50)",
        ms(pct(&plain, 50.0)),
        ms(pct(&plain, 99.0)),
        ms(pct(&tls, 50.0)),
        ms(pct(&tls, 99.0)),
        ms(pct(&tls, 50.0).saturating_sub(pct(&plain, 50.0)))
    );

    section("targets (printed, not enforced)");
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    println!(
        "{:<52} {:>12}  {}",
        "start to /readyz over HTTPS (median) < 100 ms",
        format!("{} ms", ms(start_median)),
        verdict(start_median < Duration::from_millis(100))
    );
    println!(
        "{:<52} {:>12}  {}",
        "idle RSS < 30 MiB",
        format!("{:.1} MiB", rss.rss_mib),
        verdict(rss.rss_mib < 30.0)
    );
    for (durability, ratio) in http_64 {
        println!(
            "{:<52} {:>12}  {}",
            format!("HTTP creates, 64 clients, {} ≥ 50% of raw sled", mode(durability)),
            percent(ratio),
            verdict(ratio >= 0.5)
        );
    }
    let per_flush = store_flush_64.unwrap_or(0.0);
    println!(
        "{:<52} {:>12}  {}",
        "group commit: store Flush, 64 writers, writes/flush ≫ 1",
        format!("{per_flush:.1}"),
        verdict(per_flush >= 4.0)
    );
    println!("\ntotal bench time {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

// ---------------------------------------------------------------- 1. raw sled

/// Inserts `writes` values into a fresh sled database, optionally flushing
/// after each; returns writes per second.
fn sled_inserts(flush_each: bool, writes: usize) -> Result<f64> {
    let dir = tempfile::tempdir()?;
    let db = sled::Config::new().path(dir.path()).open()?;
    let items: Vec<(String, Vec<u8>)> = (0..writes)
        .map(|i| {
            let name = format!("obj-{i:06}");
            (format!("/registry/configmaps/default/{name}"), json_value(&name))
        })
        .collect();
    let start = Instant::now();
    for (key, value) in items {
        db.insert(key.as_bytes(), value)?;
        if flush_each {
            db.flush()?;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    drop(db);
    Ok(writes as f64 / secs)
}

// ---------------------------------------------------------------- 2. store

struct StoreFigures {
    rate: f64,
    /// Group-commit flushes during the run.
    flushes: u64,
}

/// `writes` creates split across `writers` tasks on a fresh store.
async fn store_creates(durability: Durability, writers: usize, writes: usize) -> Result<StoreFigures> {
    let dir = tempfile::tempdir()?;
    let store = store::Store::open(store::Config {
        path: Some(dir.path().join("store")),
        durability,
        ..Default::default()
    })?;
    let per_writer = writes / writers;
    let flushes_before = store.stats().flushes;
    let start = Instant::now();
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..per_writer {
                    let name = format!("obj-{w:02}-{i:05}");
                    store
                        .create(&format!("/registry/configmaps/default/{name}"), json_value(&name))
                        .await?;
                }
                Ok::<_, store::Error>(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    let secs = start.elapsed().as_secs_f64();
    let flushes = store.stats().flushes - flushes_before;
    store.close().await?;
    Ok(StoreFigures {
        rate: (per_writer * writers) as f64 / secs,
        flushes,
    })
}

// ---------------------------------------------------------------- 3. HTTP creates

struct CreateFigures {
    rate: f64,
    p50: Duration,
    p99: Duration,
    /// Group-commit flushes during the run.
    flushes: u64,
}

async fn start_server(durability: Durability) -> Result<miniplane::Server> {
    Ok(miniplane::Server::start(miniplane::Config {
        durability,
        insecure_http: true,
        ..miniplane::Config::ephemeral()
    })
    .await?)
}

/// `creates` ConfigMap POSTs split across `clients` connections, all opened
/// before the clock starts.
async fn http_creates(
    server: &miniplane::Server,
    clients: usize,
    creates: usize,
    tag: &str,
) -> Result<CreateFigures> {
    let addr = server.addr();
    let per_client = creates / clients;
    let mut conns = Vec::with_capacity(clients);
    for _ in 0..clients {
        conns.push(connect(addr).await?);
    }
    let flushes_before = server.api().store().stats().flushes;
    let start = Instant::now();
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(c, mut conn)| {
            let tag = tag.to_string();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_client);
                for i in 0..per_client {
                    let sent = Instant::now();
                    create_configmap(&mut conn, addr, &format!("{tag}-{c:02}-{i:05}")).await?;
                    latencies.push(sent.elapsed());
                }
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(creates);
    for task in tasks {
        latencies.extend(task.await??);
    }
    let secs = start.elapsed().as_secs_f64();
    let flushes = server.api().store().stats().flushes - flushes_before;
    latencies.sort();
    Ok(CreateFigures {
        rate: latencies.len() as f64 / secs,
        p50: pct(&latencies, 50.0),
        p99: pct(&latencies, 99.0),
        flushes,
    })
}

/// `creates` ConfigMap creates through the in-process `Api::create` (body
/// parsed from the same JSON bytes, as the HTTP handler does), split across
/// `tasks` tokio tasks.
async fn api_creates(
    server: &miniplane::Server,
    tasks: usize,
    creates: usize,
    tag: &str,
) -> Result<CreateFigures> {
    let api = server.api().clone();
    let info = api
        .registry()
        .get("", "v1", "configmaps")
        .ok_or("configmaps are not registered")?;
    let per_task = creates / tasks;
    let flushes_before = api.store().stats().flushes;
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let (api, info, tag) = (api.clone(), info.clone(), tag.to_string());
            tokio::spawn(async move {
                let opts = apiserver::api::WriteOptions::default();
                let mut latencies = Vec::with_capacity(per_task);
                for i in 0..per_task {
                    let sent = Instant::now();
                    let body = serde_json::from_slice(&json_value(&format!("{tag}-{t:02}-{i:05}")))?;
                    api.create(&info, Some("default"), body, &opts).await?;
                    latencies.push(sent.elapsed());
                }
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(creates);
    for handle in handles {
        latencies.extend(handle.await??);
    }
    let secs = start.elapsed().as_secs_f64();
    let flushes = api.store().stats().flushes - flushes_before;
    latencies.sort();
    Ok(CreateFigures {
        rate: latencies.len() as f64 / secs,
        p50: pct(&latencies, 50.0),
        p99: pct(&latencies, 99.0),
        flushes,
    })
}

/// One HTTP/1.1 keep-alive connection to `addr` (plain HTTP).
async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>> {
    connect_with(addr, None).await
}

/// One HTTP/1.1 keep-alive connection to `addr`, over TLS when `tls` is given.
async fn connect_with(addr: SocketAddr, tls: Option<&Arc<ClientConfig>>) -> Result<SendRequest<Full<Bytes>>> {
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let Some(tls) = tls else {
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(conn); // ends when the sender and any response body are dropped
        return Ok(sender);
    };
    let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
    let stream = tokio_rustls::TlsConnector::from(tls.clone())
        .connect(name, tcp)
        .await?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

async fn send(
    conn: &mut SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    method: &str,
    uri: &str,
    body: Vec<u8>,
) -> Result<Response<Incoming>> {
    conn.ready().await?;
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(HOST, addr.to_string())
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))?;
    Ok(conn.send_request(request).await?)
}

/// POSTs a ~1 KiB ConfigMap named `name`; fails unless the answer is 201.
async fn create_configmap(conn: &mut SendRequest<Full<Bytes>>, addr: SocketAddr, name: &str) -> Result<()> {
    let response = send(conn, addr, "POST", CONFIGMAPS, json_value(name)).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    if status != StatusCode::CREATED {
        return Err(format!("POST {name}: {status}: {}", String::from_utf8_lossy(&body)).into());
    }
    Ok(())
}

// ---------------------------------------------------------------- 4. watch latency

struct WatchFigures {
    /// Arrival minus the create's response (0 if it arrived before), sorted.
    from_response: Vec<Duration>,
    /// Arrival minus the moment the create was sent, sorted.
    from_request: Vec<Duration>,
    /// Deliveries that arrived before the create's response.
    early: usize,
}

/// Opens `WATCHERS` watch streams from the current list revision, then
/// creates objects one at a time, each only after every stream got the last.
async fn watch_latency(durability: Durability) -> Result<WatchFigures> {
    let server = start_server(durability).await?;
    let addr = server.addr();
    let mut control = connect(addr).await?;
    let list = send(&mut control, addr, "GET", CONFIGMAPS, Vec::new()).await?;
    let list: serde_json::Value = serde_json::from_slice(&list.into_body().collect().await?.to_bytes())?;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .ok_or("list without resourceVersion")?
        .to_string();

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Instant)>();
    let mut watchers = Vec::with_capacity(WATCHERS);
    for _ in 0..WATCHERS {
        let mut conn = connect(addr).await?;
        let uri = format!("{CONFIGMAPS}?watch=true&resourceVersion={rv}");
        let response = send(&mut conn, addr, "GET", &uri, Vec::new()).await?;
        if response.status() != StatusCode::OK {
            return Err(format!("watch: {}", response.status()).into());
        }
        let tx = tx.clone();
        watchers.push(tokio::spawn(async move {
            let _conn = conn;
            read_watch(response.into_body(), tx).await
        }));
    }
    drop(tx);

    let mut figures = WatchFigures {
        from_response: Vec::new(),
        from_request: Vec::new(),
        early: 0,
    };
    // Object 0 is a warm-up (every stream is live once all got it); not counted.
    for seq in 0..=WATCH_EVENTS {
        let sent = Instant::now();
        create_configmap(&mut control, addr, &format!("w-{seq:05}")).await?;
        let answered = Instant::now();
        for _ in 0..WATCHERS {
            let (got, at) = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await?
                .ok_or("a watch stream ended")?;
            if got != seq {
                return Err(format!("watch delivered w-{got} while waiting for w-{seq}").into());
            }
            if seq > 0 {
                figures.from_request.push(at - sent);
                figures.from_response.push(at.saturating_duration_since(answered));
                figures.early += usize::from(at < answered);
            }
        }
    }
    for watcher in &watchers {
        watcher.abort();
    }
    server.stop().await?;
    figures.from_response.sort();
    figures.from_request.sort();
    Ok(figures)
}

/// One line of a watch stream, as far as this bench reads it.
#[derive(serde::Deserialize)]
struct WatchLine {
    #[serde(rename = "type")]
    kind: String,
    object: WatchObject,
}

#[derive(serde::Deserialize)]
struct WatchObject {
    metadata: WatchMeta,
}

#[derive(serde::Deserialize)]
struct WatchMeta {
    name: String,
}

/// Reads newline-delimited watch events; sends `(n, arrival)` for every
/// `ADDED` of `w-<n>`. Arrival is stamped when the chunk arrives, before
/// parsing, so client-side JSON cost is not counted.
async fn read_watch(
    mut body: Incoming,
    tx: tokio::sync::mpsc::UnboundedSender<(usize, Instant)>,
) -> Result<()> {
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        let at = Instant::now();
        let Ok(data) = frame?.into_data() else { continue };
        buf.extend_from_slice(&data);
        while let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            let Ok(event) = serde_json::from_slice::<WatchLine>(&line) else {
                continue;
            };
            let seq = event
                .object
                .metadata
                .name
                .strip_prefix("w-")
                .and_then(|n| n.parse().ok());
            if let (true, Some(seq)) = (event.kind == "ADDED", seq) {
                tx.send((seq, at))?;
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- 5./6. process start and RSS

struct Rss {
    rss_mib: f64,
    hwm_mib: f64,
    anon_mib: f64,
    file_mib: f64,
}

/// Spawns `miniplane up` on a fresh data dir and times spawn → kubeconfig
/// written and `/readyz` 200. With `measure_rss`, also reads its memory after
/// one idle second. The process is killed afterwards.
async fn start_to_ready(bin: &Path, dir: &Path, measure_rss: bool) -> Result<(Duration, Option<Rss>)> {
    let kubeconfig = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let start = Instant::now();
    let mut child = tokio::process::Command::new(bin)
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let deadline = start + Duration::from_secs(10);
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
            return Err("miniplane wrote no kubeconfig within 10 s".into());
        }
        pause(Duration::from_millis(1)).await;
    };
    let tls = miniplane::pki::client_config(&std::fs::read_to_string(dir.join("pki/ca.crt"))?);
    while !readyz(addr, Some(&tls)).await {
        if Instant::now() > deadline {
            return Err("/readyz did not answer 200 within 10 s".into());
        }
        pause(Duration::from_millis(1)).await;
    }
    let took = start.elapsed();
    let rss = if measure_rss {
        pause(Duration::from_secs(1)).await;
        let pid = child.id().ok_or("miniplane already exited")?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        Some(Rss {
            rss_mib: proc_kib(&status, "VmRSS:").ok_or("no VmRSS")? as f64 / 1024.0,
            hwm_mib: proc_kib(&status, "VmHWM:").ok_or("no VmHWM")? as f64 / 1024.0,
            anon_mib: proc_kib(&status, "RssAnon:").ok_or("no RssAnon")? as f64 / 1024.0,
            file_mib: proc_kib(&status, "RssFile:").ok_or("no RssFile")? as f64 / 1024.0,
        })
    } else {
        None
    };
    child.start_kill()?;
    child.wait().await?;
    Ok((took, rss))
}

/// The `server: https://<addr>` of a kubeconfig.
fn server_addr(kubeconfig: &str) -> Option<SocketAddr> {
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://"))
        .and_then(|a| a.parse().ok())
}

/// Whether `GET /readyz` answers 200 (on a new connection).
async fn readyz(addr: SocketAddr, tls: Option<&Arc<ClientConfig>>) -> bool {
    let Ok(mut conn) = connect_with(addr, tls).await else {
        return false;
    };
    match send(&mut conn, addr, "GET", "/readyz", Vec::new()).await {
        Ok(response) => response.status() == StatusCode::OK,
        Err(_) => false,
    }
}

// ---------------------------------------------------------------- 7. TLS handshake

/// Times `HANDSHAKES` new connections, each making one `GET /readyz`,
/// against an in-process server on plain HTTP and one on HTTPS (sorted).
async fn connection_cost() -> Result<(Vec<Duration>, Vec<Duration>)> {
    let mut results = Vec::new();
    for insecure_http in [true, false] {
        let server = miniplane::Server::start(miniplane::Config {
            insecure_http,
            sim: None,
            ..miniplane::Config::ephemeral()
        })
        .await?;
        let tls = server.pki().map(|p| p.client_config());
        let mut times = Vec::with_capacity(HANDSHAKES);
        for _ in 0..HANDSHAKES {
            let start = Instant::now();
            if !readyz(server.addr(), tls.as_ref()).await {
                return Err("/readyz did not answer 200".into());
            }
            times.push(start.elapsed());
        }
        times.sort();
        results.push(times);
        server.stop().await?;
    }
    let tls = results.pop().ok_or("no HTTPS figures")?;
    let plain = results.pop().ok_or("no HTTP figures")?;
    Ok((plain, tls))
}

/// A `/proc/<pid>/status` field in KiB.
fn proc_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

// ---------------------------------------------------------------- helpers

/// A ~`VALUE_BYTES` JSON ConfigMap named `name` (also the raw value for
/// sled and the store).
fn json_value(name: &str) -> Vec<u8> {
    let head = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default"}},"data":{{"payload":""#
    );
    let tail = r#""}}"#;
    let mut value = head.into_bytes();
    let pad = VALUE_BYTES.saturating_sub(value.len() + tail.len());
    value.extend(std::iter::repeat_n(b'x', pad));
    value.extend_from_slice(tail.as_bytes());
    value
}

/// Waits `d` of real time. A tick of a tokio interval: `tokio::time::sleep`
/// is reserved for `store::Clock`, and a benchmark waits in real time.
async fn pause(d: Duration) {
    let mut interval = tokio::time::interval(d);
    interval.tick().await; // the first tick is immediate
    interval.tick().await;
}

/// The `p`-th percentile (nearest rank) of sorted durations.
fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The flushes/write and writes/flush columns ("-" in Buffered mode).
fn flush_columns(durability: Durability, flushes: u64, writes: usize) -> (String, String) {
    match durability {
        Durability::Buffered => ("-".into(), "-".into()),
        Durability::Flush => (
            format!("{:.3}", flushes as f64 / writes as f64),
            format!("{:.1}", writes as f64 / flushes.max(1) as f64),
        ),
    }
}

fn mode(durability: Durability) -> &'static str {
    match durability {
        Durability::Flush => "Flush",
        Durability::Buffered => "Buffered",
    }
}

fn rate(per_sec: f64) -> String {
    let n = per_sec.round() as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percent(ratio: f64) -> String {
    format!("{:.0}%", ratio * 100.0)
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
