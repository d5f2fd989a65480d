//! A watcher that follows one namespace's ConfigMaps across kill -9
//! restarts, as client-go's reflector does: list, then watch from the
//! list's resourceVersion, resume from the last event's resourceVersion
//! whenever the stream ends, and list again on 410 Gone. Its history is
//! checked at the end ([`WatchLog::check`]) against what the writers
//! acknowledged and what the server holds.
//!
//! | check | what counts |
//! | --- | --- |
//! | gaps | an acknowledged create never seen (no ADDED with its resourceVersion, no list at or after it) |
//! | state at the end | an object on which the watcher's state (events and relists applied) and the final list disagree |
//! | duplicates | the same event (type, name, resourceVersion) delivered twice |
//! | out of order | an event whose resourceVersion is not above the previous one of the stream (resumes included; a relist starts over) |
//! | phantoms | an object the watch showed that the final list lacks, that no writer deleted and whose deletion the watch never showed |

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::Value;
use tokio::sync::watch;

use crate::harness::{Endpoint, EventLines, Failure, Http, Report, Request, rv_of, sleep, thousands};

/// What the watcher saw.
#[derive(Debug, Default)]
pub struct WatchLog {
    /// ADDED, MODIFIED and DELETED events received.
    pub events: u64,
    /// BOOKMARK events received.
    pub bookmarks: u64,
    /// Every (type, name, resourceVersion) received.
    seen: HashSet<(String, String, u64)>,
    /// (name, resourceVersion) of every ADDED event.
    added: HashSet<(String, u64)>,
    /// Names of every DELETED event.
    deleted: HashSet<String>,
    /// Names ever shown by an event or a list.
    shown: BTreeSet<String>,
    /// The watcher's state of the namespace: name → resourceVersion.
    view: BTreeMap<String, u64>,
    /// resourceVersions of every list (the first and each relist).
    lists: Vec<u64>,
    /// Same event twice.
    pub duplicates: u64,
    /// An event not above the previous one of its stream.
    pub out_of_order: u64,
    /// Watches resumed from the last resourceVersion after the stream ended.
    pub resumes: u64,
    /// Lists after 410 Gone (or another refusal to resume).
    pub relists: u64,
    /// Examples of each problem, for the report.
    pub examples: Vec<String>,
    /// The last steps the watcher took (lists, watches, how streams ended).
    pub steps: std::collections::VecDeque<String>,
}

impl WatchLog {
    fn example(&mut self, s: String) {
        if self.examples.len() < 20 {
            self.examples.push(s);
        }
    }

    fn step(&mut self, s: String) {
        if self.steps.len() == 30 {
            self.steps.pop_front();
        }
        self.steps.push_back(s);
    }

    fn relisted(&mut self, items: &[Value], rv: u64) {
        self.view = items
            .iter()
            .filter_map(|o| Some((name_of(o)?.to_string(), rv_of(o)?)))
            .collect();
        self.shown.extend(self.view.keys().cloned());
        self.lists.push(rv);
    }

    /// Records one event; `last` is the resourceVersion the stream is at.
    fn event(&mut self, kind: &str, obj: &Value, last: &mut u64) {
        let (Some(name), Some(rv)) = (name_of(obj), rv_of(obj)) else {
            self.example(format!("an event without name or resourceVersion: {obj}"));
            self.out_of_order += 1;
            return;
        };
        let name = name.to_string();
        self.events += 1;
        if !self.seen.insert((kind.to_string(), name.clone(), rv)) {
            self.duplicates += 1;
            self.example(format!("duplicate {kind} {name} at {rv}"));
        }
        if rv <= *last {
            self.out_of_order += 1;
            self.example(format!("{kind} {name} at {rv} after {last}"));
        }
        *last = (*last).max(rv);
        self.shown.insert(name.clone());
        match kind {
            "DELETED" => {
                self.deleted.insert(name.clone());
                self.view.remove(&name);
            }
            _ => {
                if kind == "ADDED" {
                    self.added.insert((name.clone(), rv));
                }
                self.view.insert(name, rv);
            }
        }
    }

    /// Checks the history against the acknowledged creates (name,
    /// resourceVersion), the names the writers deleted (or tried to) and
    /// the final list (name → resourceVersion). `strict` makes gaps and
    /// phantoms failures; otherwise (`--no-fsync`, where a crash may lose
    /// writes a watcher saw) they are reported only. Duplicates, order and
    /// the state at the end are checked in both modes: a watch resumed from
    /// a lost revision must get 410 and relist.
    pub fn check(
        &self,
        report: &mut Report,
        acked: &[(String, u64)],
        deleted_by_writers: &HashSet<String>,
        final_list: &BTreeMap<String, u64>,
        strict: bool,
    ) {
        let mut gaps = 0u64;
        let mut examples = Vec::new();
        let note = |examples: &mut Vec<String>, s: String| {
            if examples.len() < 20 {
                examples.push(s);
            }
        };
        for (name, rv) in acked {
            let by_event = self.added.contains(&(name.clone(), *rv));
            let by_list = self.lists.iter().any(|l| l >= rv);
            if !by_event && !by_list {
                gaps += 1;
                note(
                    &mut examples,
                    format!("acknowledged create {name} at {rv} never seen"),
                );
            }
        }
        // The watcher's state at the end against the final list: what a
        // cache fed by this watch would hold for good.
        let mut stale = 0u64;
        for (name, rv) in final_list {
            if self.view.get(name) != Some(rv) {
                stale += 1;
                note(
                    &mut examples,
                    format!(
                        "{name}: the final list has it at {rv}, the watcher's state at {:?}",
                        self.view.get(name)
                    ),
                );
            }
        }
        for name in self.view.keys().filter(|n| !final_list.contains_key(*n)) {
            stale += 1;
            note(
                &mut examples,
                format!("{name}: in the watcher's state at the end, not in the final list"),
            );
        }
        let mut phantoms = 0u64;
        for name in &self.shown {
            let deleted = self.deleted.contains(name) || deleted_by_writers.contains(name);
            if !final_list.contains_key(name) && !deleted {
                phantoms += 1;
                note(
                    &mut examples,
                    format!("phantom {name}: shown by the watch, never deleted, not in the final list"),
                );
            }
        }
        let all_examples = || {
            self.examples
                .iter()
                .chain(&examples)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        };
        report.check(
            "watch events checked",
            format!(
                "{} ({} resumes, {} relists on 410, {} bookmarks)",
                thousands(self.events),
                self.resumes,
                self.relists,
                self.bookmarks
            ),
            self.events > 0,
            || "no event was seen".into(),
        );
        let verdict = |report: &mut Report, what: &str, n: u64, checked: bool| {
            if checked {
                report.check(what, n, n == 0, all_examples);
            } else {
                report.info(what, format!("{n} (reported, not checked in this mode)"));
            }
        };
        verdict(report, "watch gaps", gaps, strict);
        report.check(
            "watcher's state at the end ≠ final list",
            stale,
            stale == 0,
            all_examples,
        );
        verdict(report, "watch duplicates", self.duplicates, true);
        verdict(report, "watch out of order", self.out_of_order, true);
        verdict(report, "watch phantoms", phantoms, strict);
    }
}

fn name_of(o: &Value) -> Option<&str> {
    o.pointer("/metadata/name")?.as_str()
}

/// The namespace's ConfigMaps and the list's resourceVersion.
pub async fn list(http: &mut Http, ns: &str) -> Result<(Vec<Value>, u64), String> {
    let reply = http
        .send(&Request::new(
            "GET",
            format!("/api/v1/namespaces/{ns}/configmaps"),
        ))
        .await
        .map_err(|e| e.to_string())?;
    if reply.status != 200 {
        return Err(format!("list: {} {}", reply.status, reply.text()));
    }
    let list = reply.json();
    let rv = rv_of(&list).ok_or("a list without resourceVersion")?;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    Ok((items, rv))
}

/// Tells the watcher where the server is (`None` while it is down) and when to stop.
pub struct Control {
    /// The server's endpoint, `None` between a kill and the next start.
    pub endpoint: watch::Receiver<Option<Endpoint>>,
    /// Stop once the stream has reached this resourceVersion.
    pub stop_at: watch::Receiver<Option<u64>>,
}

/// Follows `ns` until the stream reaches `stop_at`; returns the log.
pub async fn follow(ns: String, mut control: Control) -> WatchLog {
    let mut log = WatchLog::default();
    // The resourceVersion the stream is at; None: list first.
    let mut at: Option<u64> = None;
    loop {
        let reached = |at: Option<u64>, stop: Option<u64>| matches!((at, stop), (Some(a), Some(s)) if a >= s);
        if reached(at, *control.stop_at.borrow()) {
            return log;
        }
        let Some(endpoint) = control.endpoint.borrow_and_update().clone() else {
            // The server is down: wait for the next start.
            let _ = control.endpoint.changed().await;
            continue;
        };
        let mut http = Http::new(&endpoint);
        http.timeout = Duration::from_secs(10);
        let from = match at {
            Some(rv) => rv,
            None => match list(&mut http, &ns).await {
                Ok((items, rv)) => {
                    log.step(format!("listed {} at {rv}", items.len()));
                    log.relisted(&items, rv);
                    at = Some(rv);
                    // The list may already be at the stop (checked at the top).
                    continue;
                }
                Err(e) => {
                    log.step(format!("list failed: {e}"));
                    sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let path = format!(
            "/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={from}&allowWatchBookmarks=true"
        );
        let (status, mut body) = match http.stream(&Request::new("GET", path)).await {
            Ok(r) => r,
            Err(Failure::Connect(e)) => {
                log.step(format!("watch from {from}: no connection ({e})"));
                // Down, or the kill is under way: wait for a new endpoint (or retry soon).
                let _ = tokio::time::timeout(Duration::from_millis(200), control.endpoint.changed()).await;
                continue;
            }
            Err(e) => {
                log.step(format!("watch from {from}: {e}"));
                continue;
            }
        };
        log.step(format!("watch from {from}: {status}"));
        if status == 410 {
            log.relists += 1;
            at = None;
            continue;
        }
        if status != 200 {
            log.example(format!("watch from {from}: status {status}"));
            sleep(Duration::from_millis(50)).await;
            continue;
        }
        let mut lines = EventLines::default();
        let mut last = from;
        let mut expired = false;
        'stream: loop {
            let frame = tokio::select! {
                f = body.frame() => f,
                _ = control.stop_at.changed() => {
                    if reached(Some(last), *control.stop_at.borrow()) { break 'stream; }
                    continue;
                }
            };
            let Some(Ok(frame)) = frame else { break };
            let Ok(data) = frame.into_data() else { continue };
            for ev in lines.push(&data) {
                match ev["type"].as_str().unwrap_or("") {
                    t @ ("ADDED" | "MODIFIED" | "DELETED") => log.event(t, &ev["object"], &mut last),
                    "BOOKMARK" => {
                        log.bookmarks += 1;
                        if let Some(rv) = rv_of(&ev["object"]) {
                            last = last.max(rv);
                        }
                    }
                    "ERROR" if ev["object"]["code"] == 410 => expired = true,
                    _ => log.example(format!("watch from {from}: unexpected event {ev}")),
                }
            }
            at = Some(last);
            if expired || reached(at, *control.stop_at.borrow()) {
                break;
            }
        }
        log.step(format!("stream from {from} ended at {last} (expired: {expired})"));
        if expired {
            log.relists += 1;
            at = None;
        } else if !reached(at, *control.stop_at.borrow()) {
            log.resumes += 1;
        }
    }
}
