//! Concurrent read-modify-write: K clients increment one counter in one
//! ConfigMap, each with GET, then PUT carrying the resourceVersion it read,
//! and a new GET after every 409 Conflict — optimistic concurrency as
//! every Kubernetes controller relies on it.
//!
//! No update is lost when the final value equals the number of
//! acknowledged PUTs and the values the acknowledged PUTs wrote are exactly
//! 1..=n, each once (two clients acknowledged for the same value is a lost
//! update).

use serde_json::json;

use crate::harness::{Endpoint, Http, Miniplane, Mode, Report, Request, thousands};

const PATH: &str = "/api/v1/namespaces/default/configmaps/counter";

/// One client's tally.
#[derive(Default)]
struct Tally {
    /// Values written by acknowledged PUTs.
    written: Vec<u64>,
    conflicts: u64,
    unexpected: Vec<String>,
}

async fn client(endpoint: Endpoint, updates: u64) -> Tally {
    let mut http = Http::new(&endpoint);
    let mut t = Tally::default();
    while (t.written.len() as u64) < updates {
        let got = match http.send(&Request::new("GET", PATH)).await {
            Ok(r) if r.status == 200 => r,
            other => {
                t.unexpected.push(format!("GET: {other:?}"));
                return t;
            }
        };
        let mut cm = got.json();
        let n: u64 = cm["data"]["n"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(u64::MAX);
        if n == u64::MAX {
            t.unexpected.push(format!("GET: no counter in {}", got.text()));
            return t;
        }
        cm["data"]["n"] = json!((n + 1).to_string());
        let read_rv = got.resource_version();
        match http.send(&Request::new("PUT", PATH).json(&cm)).await {
            Ok(r) if r.status == 200 => {
                if r.resource_version() <= read_rv {
                    t.unexpected.push(format!(
                        "PUT acknowledged at {:?}, read at {read_rv:?}",
                        r.resource_version()
                    ));
                }
                t.written.push(n + 1);
            }
            Ok(r) if r.status == 409 => t.conflicts += 1,
            other => {
                t.unexpected.push(format!("PUT: {other:?}"));
                return t;
            }
        }
    }
    t
}

/// Runs K clients against a fresh server.
pub async fn run(mode: Mode) -> Report {
    let mut report = Report::new("rmw");
    let clients: u64 = mode.pick(8, 16);
    let per_client: u64 = mode.pick(40, 400);
    let dir = crate::harness::temp_dir("rmw");
    let seed = mode.seed_for("rmw").to_string();
    let server = Miniplane::start(&dir.path().join("data"), &["--seed", &seed, "--nodes", "1"]).await;
    let mut http = Http::new(&server.endpoint);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "counter"}, "data": {"n": "0"}});
    let r = http
        .send(&Request::new("POST", "/api/v1/namespaces/default/configmaps").json(&cm))
        .await
        .expect("creating the counter");
    assert_eq!(r.status, 201, "creating the counter: {}", r.text());

    let started = tokio::time::Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| tokio::spawn(client(server.endpoint.clone(), per_client)))
        .collect();
    let mut written = Vec::new();
    let mut conflicts = 0;
    let mut unexpected = Vec::new();
    for t in tasks {
        let t = t.await.expect("client task");
        written.extend(t.written);
        conflicts += t.conflicts;
        unexpected.extend(t.unexpected);
    }
    let took = started.elapsed();
    let final_value = http
        .send(&Request::new("GET", PATH))
        .await
        .ok()
        .and_then(|r| r.json()["data"]["n"].as_str().and_then(|s| s.parse::<u64>().ok()));
    server.stop().await;

    let acked = written.len() as u64;
    written.sort_unstable();
    let distinct = {
        let mut w = written.clone();
        w.dedup();
        w.len() as u64
    };
    let exact = written.iter().copied().eq(1..=acked);
    report.info(
        "clients × acknowledged updates",
        format!(
            "{clients} × {per_client} = {} ({} conflicts retried, {:.1} s)",
            thousands(acked),
            thousands(conflicts),
            took.as_secs_f64()
        ),
    );
    report.check(
        "lost updates",
        format!(
            "{} (final value {}, {acked} acknowledged, each value 1..={acked} written once: {exact})",
            acked.saturating_sub(final_value.unwrap_or(0)) + (acked - distinct),
            final_value.map_or("unreadable".to_string(), |v| v.to_string())
        ),
        final_value == Some(acked) && exact && acked == clients * per_client,
        || {
            format!(
                "final value {final_value:?}, {acked} acknowledged, {distinct} distinct values written, values exactly 1..={acked}: {exact}"
            )
        },
    );
    report.check(
        "unexpected answers",
        unexpected.len(),
        unexpected.is_empty(),
        || unexpected.iter().take(5).cloned().collect::<Vec<_>>().join("; "),
    );
    report
}
