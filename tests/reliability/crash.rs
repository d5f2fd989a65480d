//! kill -9 loops of the real `miniplane up` under concurrent writers, in
//! the manner of sled's crash tests and etcd's robustness tests.
//!
//! Each cycle starts the binary on the same data dir, lets N writers create
//! ConfigMaps with unique names (and delete a few of their own) for a
//! random while, and sends SIGKILL in the middle of their requests. After
//! each restart:
//!
//! - **lost**: every acknowledged create is there with the resourceVersion
//!   it was acknowledged with, and no acknowledged delete came back;
//! - **revisions only grow**: the list's resourceVersion is at least every
//!   one acknowledged before, and every write after the restart is
//!   acknowledged above them (never twice the same).
//!
//! A request in flight at the kill has no answer: it may or may not have
//! happened, and the check takes either. One watcher ([`crate::watch`])
//! follows the namespace through every restart.
//!
//! With `--no-fsync` the server acknowledges before the disk has the write,
//! so a crash may lose the last writes: lost writes, gaps and phantoms are
//! reported, and only the revision checks are asserted.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use rand::RngExt;
use serde_json::json;
use tokio::sync::watch;

use crate::harness::{Endpoint, Failure, Http, Miniplane, Mode, Report, Request, rng, sleep, thousands};

/// The namespace the writers write in (created on the first start).
const NS: &str = "torture";

/// What the writers learnt, over every cycle.
#[derive(Debug, Default)]
struct History {
    /// Acknowledged creates: name → resourceVersion.
    acked: BTreeMap<String, u64>,
    /// Every acknowledged create, in order: (name, resourceVersion, cycle).
    acked_in_order: Vec<(String, u64, usize)>,
    /// Acknowledged deletes.
    deleted: HashSet<String>,
    /// Creates without an answer (killed in flight).
    unknown_creates: HashSet<String>,
    /// Deletes without an answer, or acknowledged: either way the object may be gone.
    delete_tried: HashSet<String>,
    /// Answers other than the expected ones.
    unexpected: Vec<String>,
    /// Writes acknowledged in total (creates and deletes).
    writes: u64,
}

/// One writer's outcome in one cycle.
#[derive(Debug, Default)]
struct WriterLog {
    acked: Vec<(String, u64)>,
    deleted: Vec<String>,
    unknown_creates: Vec<String>,
    delete_tried: Vec<String>,
    unexpected: Vec<String>,
}

/// Creates (and now and then deletes) ConfigMaps until its request fails.
async fn writer(endpoint: Endpoint, id: usize, cycle: usize, seed: u64, mut mine: Vec<String>) -> WriterLog {
    let mut rng = rng(seed);
    let mut http = Http::new(&endpoint);
    http.timeout = Duration::from_secs(20);
    let mut log = WriterLog::default();
    for seq in 0.. {
        if !mine.is_empty() && rng.random_bool(0.1) {
            let name = mine.swap_remove(rng.random_range(0..mine.len()));
            let req = Request::new("DELETE", format!("/api/v1/namespaces/{NS}/configmaps/{name}"));
            match http.send(&req).await {
                Ok(r) if r.status == 200 => {
                    log.delete_tried.push(name.clone());
                    log.deleted.push(name);
                }
                Ok(r) => log
                    .unexpected
                    .push(format!("DELETE {name}: {} {}", r.status, r.text())),
                Err(Failure::Connect(_)) => return log,
                Err(_) => {
                    log.delete_tried.push(name);
                    return log;
                }
            }
            continue;
        }
        let name = format!("w{id}-c{cycle}-{seq}");
        let body = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"writer": id.to_string()}},
            "data": {"cycle": cycle.to_string(), "seq": seq.to_string()},
        });
        let req = Request::new("POST", format!("/api/v1/namespaces/{NS}/configmaps")).json(&body);
        match http.send(&req).await {
            Ok(r) if r.status == 201 => match r.resource_version() {
                Some(rv) => {
                    log.acked.push((name.clone(), rv));
                    mine.push(name);
                }
                None => log
                    .unexpected
                    .push(format!("POST {name}: 201 without resourceVersion")),
            },
            Ok(r) => log
                .unexpected
                .push(format!("POST {name}: {} {}", r.status, r.text())),
            Err(Failure::Connect(_)) => return log,
            Err(_) => {
                log.unknown_creates.push(name);
                return log;
            }
        }
    }
    log
}

/// The namespace's ConfigMaps after a restart (retried while the server warms up).
async fn list_after_restart(endpoint: &Endpoint) -> (BTreeMap<String, u64>, u64) {
    let mut http = Http::new(endpoint);
    let mut last = String::new();
    for _ in 0..50 {
        match crate::watch::list(&mut http, NS).await {
            Ok((items, rv)) => {
                let map = items
                    .iter()
                    .filter_map(|o| {
                        let name = o.pointer("/metadata/name")?.as_str()?;
                        Some((name.to_string(), crate::harness::rv_of(o)?))
                    })
                    .collect();
                return (map, rv);
            }
            Err(e) => last = e,
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("no list after the restart: {last}");
}

/// Counters of one run of cycles.
#[derive(Debug, Default)]
struct Figures {
    cycles: usize,
    lost: u64,
    resurrected: u64,
    /// Lists after a restart below an acknowledged resourceVersion.
    list_behind: u64,
    /// Writes acknowledged after a restart at or below one acknowledged before it.
    backwards: u64,
    /// resourceVersions acknowledged for two different writes.
    reissued: u64,
    examples: Vec<String>,
}

impl Figures {
    fn example(&mut self, s: String) {
        if self.examples.len() < 20 {
            self.examples.push(s);
        }
    }
}

/// Runs the kill -9 cycles on a fresh data dir; durable unless `no_fsync`.
pub async fn run(mode: Mode, no_fsync: bool) -> Report {
    let label = if no_fsync { "crash --no-fsync" } else { "crash" };
    let mut report = Report::new(label);
    let seed = mode.seed_for(label);
    let mut rng = rng(seed);
    let cycles: usize = mode.pick(3, 50);
    let writers: usize = mode.pick(6, 8);
    let dir = crate::harness::temp_dir(label);
    let data = dir.path().join("data");
    let mut args = vec![
        "--seed".to_string(),
        seed.to_string(),
        "--nodes".into(),
        "1".into(),
    ];
    if no_fsync {
        args.push("--no-fsync".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = tokio::time::Instant::now();

    let mut server = Miniplane::start(&data, &args).await;
    let mut http = Http::new(&server.endpoint);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}});
    let r = http
        .send(&Request::new("POST", "/api/v1/namespaces").json(&ns))
        .await
        .expect("creating the namespace");
    assert_eq!(r.status, 201, "creating the namespace: {}", r.text());

    let (endpoint_tx, endpoint_rx) = watch::channel(Some(server.endpoint.clone()));
    let (stop_tx, stop_rx) = watch::channel(None);
    let watcher = tokio::spawn(crate::watch::follow(
        NS.to_string(),
        crate::watch::Control {
            endpoint: endpoint_rx,
            stop_at: stop_rx,
        },
    ));

    let mut h = History::default();
    let mut f = Figures::default();
    let mut issued: HashSet<u64> = HashSet::new();
    let mut live: Vec<Vec<String>> = vec![Vec::new(); writers];
    for cycle in 0..cycles {
        let before = h.acked_in_order.iter().map(|a| a.1).max().unwrap_or(0);
        let tasks: Vec<_> = (0..writers)
            .map(|id| {
                let endpoint = server.endpoint.clone();
                let mine = std::mem::take(&mut live[id]);
                let s = rng.random();
                tokio::spawn(writer(endpoint, id, cycle, s, mine))
            })
            .collect();
        let run_for = Duration::from_millis(rng.random_range(200..1200));
        sleep(run_for).await;
        endpoint_tx.send_replace(None);
        server.kill9().await;
        for (id, t) in tasks.into_iter().enumerate() {
            let log = t.await.expect("writer task");
            for (name, rv) in log.acked {
                if !issued.insert(rv) {
                    f.reissued += 1;
                    f.example(format!(
                        "resourceVersion {rv} acknowledged twice (again for {name})"
                    ));
                }
                if rv <= before {
                    f.backwards += 1;
                    f.example(format!(
                        "cycle {cycle}: {name} acknowledged at {rv}, not above {before} acknowledged before the restart"
                    ));
                }
                h.acked.insert(name.clone(), rv);
                h.acked_in_order.push((name.clone(), rv, cycle));
                live[id].push(name);
                h.writes += 1;
            }
            h.writes += log.deleted.len() as u64;
            for name in &log.deleted {
                live[id].retain(|n| n != name);
            }
            h.deleted.extend(log.deleted);
            for name in &log.delete_tried {
                live[id].retain(|n| n != name);
            }
            h.delete_tried.extend(log.delete_tried);
            h.unknown_creates.extend(log.unknown_creates);
            h.unexpected.extend(log.unexpected);
        }

        server = Miniplane::start(&data, &args).await;
        f.cycles += 1;
        let (listed, list_rv) = list_after_restart(&server.endpoint).await;
        let max_acked = h.acked_in_order.iter().map(|a| a.1).max().unwrap_or(0);
        if list_rv < max_acked {
            f.list_behind += 1;
            f.example(format!(
                "cycle {cycle}: the list after the restart is at {list_rv}, below {max_acked} acknowledged before"
            ));
        }
        let mut gone = Vec::new();
        for (name, rv) in &h.acked {
            if h.delete_tried.contains(name) {
                continue;
            }
            match listed.get(name) {
                Some(got) if got == rv => {}
                got => {
                    f.lost += 1;
                    f.example(format!(
                        "cycle {cycle}: {name} acknowledged at {rv}, after the restart {got:?}"
                    ));
                    gone.push(name.clone());
                }
            }
        }
        let back: Vec<String> = h
            .deleted
            .iter()
            .filter(|n| listed.contains_key(*n))
            .cloned()
            .collect();
        for name in back {
            f.resurrected += 1;
            f.example(format!(
                "cycle {cycle}: {name} was deleted (acknowledged) and is back"
            ));
            // Counted once.
            h.deleted.remove(&name);
        }
        // A lost write is counted once; later cycles expect it gone.
        for name in gone {
            h.acked.remove(&name);
            for l in &mut live {
                l.retain(|n| n != &name);
            }
        }
        // A create killed in flight either happened (now expected to stay) or not.
        for name in std::mem::take(&mut h.unknown_creates) {
            if let Some(rv) = listed.get(&name) {
                h.acked.insert(name.clone(), *rv);
            }
        }
        endpoint_tx.send_replace(Some(server.endpoint.clone()));
    }

    // The watcher catches up: one more create, and it stops at that one.
    let mut http = Http::new(&server.endpoint);
    let sentinel = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sentinel"}});
    let r = http
        .send(&Request::new("POST", format!("/api/v1/namespaces/{NS}/configmaps")).json(&sentinel))
        .await
        .expect("the sentinel create");
    assert_eq!(r.status, 201, "the sentinel create: {}", r.text());
    let sentinel_rv = r.resource_version().expect("resourceVersion");
    h.acked_in_order.push(("sentinel".into(), sentinel_rv, cycles));
    stop_tx.send_replace(Some(sentinel_rv));
    let mut watcher = watcher;
    let caught_up = tokio::time::timeout(Duration::from_secs(30), &mut watcher)
        .await
        .ok();
    let caught_up_in_time = caught_up.is_some();
    let log = match caught_up {
        Some(log) => log,
        None => {
            // Stop it where it is, to check what it saw.
            stop_tx.send_replace(Some(0));
            tokio::time::timeout(Duration::from_secs(15), watcher)
                .await
                .unwrap_or_else(|_| panic!("the watcher does not stop"))
        }
    };
    let (listed, _) = list_after_restart(&server.endpoint).await;
    server.stop().await;

    let acked_writes = h.writes;
    let elapsed = started.elapsed();
    report.info(
        "kill -9 cycles",
        format!("{} ({writers} writers, {:.1} s)", f.cycles, elapsed.as_secs_f64()),
    );
    report.check(
        "acknowledged writes",
        format!(
            "{} ({} creates, {} deletes)",
            thousands(acked_writes),
            // The sentinel, last, is the suite's own.
            thousands(h.acked_in_order.len() as u64 - 1),
            thousands(h.deleted.len() as u64)
        ),
        acked_writes > 0,
        || "no write was acknowledged".into(),
    );
    let examples = f.examples.join("; ");
    let lost = f.lost + f.resurrected;
    let lost_figure = format!("{lost} ({} creates, {} deletes undone)", f.lost, f.resurrected);
    if no_fsync {
        report.info("lost (expected with --no-fsync)", lost_figure);
    } else {
        report.check("lost", lost_figure, lost == 0, || examples.clone());
    }
    let revisions = f.list_behind + f.backwards + f.reissued;
    report.check(
        "revisions going backwards / issued twice",
        format!(
            "{revisions} (lists behind {}, writes not above earlier acks {}, resourceVersions acknowledged twice {})",
            f.list_behind, f.backwards, f.reissued
        ),
        revisions == 0,
        || examples.clone(),
    );
    report.check(
        "unexpected answers to writers",
        h.unexpected.len(),
        h.unexpected.is_empty(),
        || {
            h.unexpected
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        },
    );
    match log {
        Ok(log) => {
            report.check(
                "watch caught up with the last write",
                if caught_up_in_time {
                    "yes"
                } else {
                    "no, within 30 s"
                },
                caught_up_in_time,
                || {
                    format!(
                        "the watcher never reached the sentinel at {sentinel_rv}: {}; its last steps: {}",
                        log.examples.join("; "),
                        log.steps.iter().cloned().collect::<Vec<_>>().join("; ")
                    )
                },
            );
            let acked: Vec<(String, u64)> = h
                .acked_in_order
                .iter()
                .map(|(n, rv, _)| (n.clone(), *rv))
                .collect();
            log.check(&mut report, &acked, &h.delete_tried, &listed, !no_fsync);
        }
        Err(e) => report.check("watch", "panicked", false, || e.to_string()),
    }
    report
}
