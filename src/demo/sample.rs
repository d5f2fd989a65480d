//! What the demo observes at each step: the rollout's phase and canary weight, the replicas
//! of each version, each version's success rate and p99 latency (from the simulated metrics
//! store, in PromQL), and the Events that say why the controller acted.
//!
//! A "version" is what the user rolls out. With a Deployment alone it is a ReplicaSet (one pod
//! template hash), named by its image's tag; under a Canary it is `primary` (the
//! `<target>-primary` Deployment the controller runs) or `canary` (the target Deployment). A
//! pod's series are the version's through the pod's ReplicaSet, read from the pod's name
//! (`<replicaset>-<suffix>`), so the pods already gone still count in the window.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use controllers::canary::types::Canary;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use sim_metrics::{Query, Tsdb};
use store::Clock;

use super::scenarios::{Driver, NAMESPACE, Scenario};

/// The range of the rate queries, in simulated time.
pub const WINDOW: &str = "30s";

/// One version at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    /// `primary` / `canary`, or the image's tag.
    pub name: String,
    /// Its pod template's first image.
    pub image: String,
    /// Replicas wanted.
    pub desired: i32,
    /// Replicas Ready.
    pub ready: i32,
    /// Requests per second answered over the window.
    pub rps: Option<f64>,
    /// Percent of requests answered with a status below 500.
    pub success: Option<f64>,
    /// The 99th percentile of request durations, in milliseconds.
    pub p99_ms: Option<f64>,
}

/// Everything seen at one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Simulated time since the demo started.
    pub t: Duration,
    /// The Canary's phase, or the Deployment's rollout state (`Progressing`, `Complete`,
    /// `ProgressDeadlineExceeded`).
    pub phase: String,
    /// The canary's traffic weight (percent); `None` without a Canary.
    pub weight: Option<i32>,
    /// The Canary's failed checks.
    pub failed_checks: Option<i32>,
    /// The Canary's passed iterations (blue/green, A/B testing).
    pub iterations: Option<i32>,
    /// Each version with replicas or traffic.
    pub versions: Vec<Version>,
    /// Requests per second no pod answered (the gateway's 5xx: no ready endpoint, no backend).
    pub unserved: f64,
    /// The newest Event of the rollout's driver since the previous step.
    pub why: Option<String>,
    /// The driver's other Events since the previous step, oldest first, with their times (a
    /// busy machine may take more than one controller step between two samples).
    pub earlier: Vec<(Duration, String)>,
}

/// An Event of the Canary or a Deployment, as the timeline lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    /// When it was last seen, in simulated time since the demo started.
    pub t: Duration,
    /// `canary/podinfo`, `deployment/podinfo`.
    pub object: String,
    /// `Normal` or `Warning`.
    pub type_: String,
    /// Its reason.
    pub reason: String,
    /// Its message.
    pub message: String,
}

/// Reads the cluster step after step, remembering what it needs across steps.
pub struct Observer {
    client: kube::Client,
    tsdb: Tsdb,
    clock: Clock,
    start: SystemTime,
    scenario: &'static Scenario,
    /// Every ReplicaSet seen, to its version's name.
    versions_of: BTreeMap<String, String>,
    /// The events taken already: (uid, count).
    seen: BTreeSet<(String, i32)>,
    /// Every Event taken, oldest first.
    pub events: Vec<EventRow>,
    /// The driver's message shown last.
    last_why: Option<String>,
}

impl Observer {
    /// An observer of `scenario`'s objects; times count from `start`.
    pub fn new(client: kube::Client, tsdb: Tsdb, clock: Clock, scenario: &'static Scenario) -> Self {
        let start = clock.now();
        Observer {
            client,
            tsdb,
            clock,
            start,
            scenario,
            versions_of: BTreeMap::new(),
            seen: BTreeSet::new(),
            events: Vec::new(),
            last_why: None,
        }
    }

    /// Simulated time since the start.
    pub fn elapsed(&self) -> Duration {
        self.clock.now().duration_since(self.start).unwrap_or_default()
    }

    /// The Deployment `name`, if it exists.
    pub async fn deployment(&self, name: &str) -> Option<Deployment> {
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), NAMESPACE);
        api.get_opt(name).await.ok().flatten()
    }

    /// The scenario's Canary, if it has one and it exists.
    pub async fn canary(&self) -> Option<Canary> {
        let Driver::Canary { canary } = self.scenario.driver else {
            return None;
        };
        let api: Api<Canary> = Api::namespaced(self.client.clone(), NAMESPACE);
        api.get_opt(canary).await.ok().flatten()
    }

    /// One step's observation.
    pub async fn sample(&mut self) -> Sample {
        let t = self.elapsed();
        let now = self.clock.now();
        let replica_sets = self.replica_sets().await;
        let mut versions = match self.scenario.driver {
            Driver::Deployment => self.replica_set_versions(&replica_sets),
            Driver::Canary { .. } => self.canary_versions(&replica_sets).await,
        };
        let (traffic, unserved) = self.traffic(now);
        for v in &mut versions {
            if let Some(m) = traffic.get(&v.name) {
                v.rps = Some(m.rps);
                v.success = m.success;
                v.p99_ms = m.p99_ms;
            }
        }
        let (phase, weight, failed_checks, iterations) = match self.scenario.driver {
            Driver::Deployment => {
                let d = self.deployment(self.scenario.deployment).await;
                let phase = d.as_ref().map_or("Absent", deployment_phase);
                (phase.to_string(), None, None, None)
            }
            Driver::Canary { .. } => {
                let status = self.canary().await.and_then(|c| c.status);
                let phase = status.as_ref().and_then(|s| s.phase.clone());
                (
                    phase.unwrap_or_else(|| "Pending".into()),
                    Some(status.as_ref().map_or(0, |s| s.canary_weight)),
                    Some(status.as_ref().map_or(0, |s| s.failed_checks)),
                    Some(status.as_ref().map_or(0, |s| s.iterations)),
                )
            }
        };
        let (why, earlier) = self.new_events().await;
        Sample {
            t,
            phase,
            weight,
            failed_checks,
            iterations,
            versions,
            unserved,
            why,
            earlier,
        }
    }

    /// The namespace's ReplicaSets, remembering each one's version.
    async fn replica_sets(&mut self) -> Vec<ReplicaSet> {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), NAMESPACE);
        let list = api.list(&ListParams::default()).await.map(|l| l.items);
        let sets = list.unwrap_or_default();
        for rs in &sets {
            if let Some(version) = self.version_of(rs) {
                let name = rs.metadata.name.clone().unwrap_or_default();
                self.versions_of.insert(name, version);
            }
        }
        sets
    }

    /// The version a ReplicaSet is part of, if it is the scenario's.
    fn version_of(&self, rs: &ReplicaSet) -> Option<String> {
        let owner = rs
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.kind == "Deployment")?;
        let target = self.scenario.deployment;
        match self.scenario.driver {
            Driver::Deployment if owner.name == target => Some(tag(&rs_image(rs)).to_string()),
            Driver::Canary { .. } if owner.name == target => Some("canary".into()),
            Driver::Canary { .. } if owner.name == format!("{target}-primary") => Some("primary".into()),
            _ => None,
        }
    }

    /// The Deployment's ReplicaSets with replicas, oldest revision first.
    fn replica_set_versions(&self, sets: &[ReplicaSet]) -> Vec<Version> {
        let mut ours: Vec<(i64, Version)> = sets
            .iter()
            .filter_map(|rs| {
                let name = self.version_of(rs)?;
                let desired = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0);
                let status = rs.status.as_ref();
                let current = status.map_or(0, |s| s.replicas);
                if desired == 0 && current == 0 {
                    return None;
                }
                let revision = rs
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("deployment.kubernetes.io/revision"))
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                let version = Version {
                    name,
                    image: rs_image(rs),
                    desired,
                    ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
                    rps: None,
                    success: None,
                    p99_ms: None,
                };
                Some((revision, version))
            })
            .collect();
        ours.sort_by_key(|(revision, _)| *revision);
        ours.into_iter().map(|(_, v)| v).collect()
    }

    /// `primary` and `canary`: the two Deployments of a Canary.
    async fn canary_versions(&self, _sets: &[ReplicaSet]) -> Vec<Version> {
        let target = self.scenario.deployment;
        let mut versions = Vec::new();
        for (name, deployment) in [
            ("primary", format!("{target}-primary")),
            ("canary", target.to_string()),
        ] {
            let Some(d) = self.deployment(&deployment).await else {
                continue;
            };
            let image = d
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.clone())
                .unwrap_or_default();
            let status = d.status.as_ref();
            versions.push(Version {
                name: name.into(),
                image,
                desired: d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
                ready: status.and_then(|s| s.ready_replicas).unwrap_or(0),
                rps: None,
                success: None,
                p99_ms: None,
            });
        }
        versions
    }

    /// Each version's traffic over the window ending `now`, and the rate of requests no pod
    /// answered.
    fn traffic(&self, now: SystemTime) -> (BTreeMap<String, Traffic>, f64) {
        let requests =
            format!("sum by (pod, code) (rate(http_requests_total{{namespace=\"{NAMESPACE}\"}}[{WINDOW}]))");
        let buckets = format!(
            "sum by (pod, le) (rate(http_request_duration_seconds_bucket{{namespace=\"{NAMESPACE}\"}}[{WINDOW}]))"
        );
        let mut by_code: Vec<(String, String, f64)> = Vec::new();
        let mut unserved = 0.0;
        if let Ok(sim_metrics::Value::Vector(samples)) = self.tsdb.instant(&requests, now) {
            for s in samples {
                if s.labels.get("pod").is_none_or(String::is_empty) {
                    unserved += s.value;
                    continue;
                }
                let Some(version) = self.pod_version(s.labels.get("pod")) else {
                    continue;
                };
                let code = s.labels.get("code").cloned().unwrap_or_default();
                by_code.push((version, code, s.value));
            }
        }
        let mut by_le: Vec<(String, f64, f64)> = Vec::new();
        if let Ok(sim_metrics::Value::Vector(samples)) = self.tsdb.instant(&buckets, now) {
            for s in samples {
                let Some(version) = self.pod_version(s.labels.get("pod")) else {
                    continue;
                };
                let le = match s.labels.get("le").map(String::as_str) {
                    Some("+Inf") => f64::INFINITY,
                    Some(le) => match le.parse() {
                        Ok(le) => le,
                        Err(_) => continue,
                    },
                    None => continue,
                };
                by_le.push((version, le, s.value));
            }
        }
        (summarize(&by_code, &by_le), unserved)
    }

    /// The version of the pod named `pod`, through its ReplicaSet.
    fn pod_version(&self, pod: Option<&String>) -> Option<String> {
        let (rs, _) = pod?.rsplit_once('-')?;
        self.versions_of.get(rs).cloned()
    }

    /// Takes the Events of the Canary and the Deployments not taken yet; returns the newest
    /// message of the driver's (the Canary's, or the Deployment's), and its earlier ones.
    async fn new_events(&mut self) -> (Option<String>, Vec<(Duration, String)>) {
        let api: Api<Event> = Api::namespaced(self.client.clone(), NAMESPACE);
        let Ok(list) = api.list(&ListParams::default()).await else {
            return (None, Vec::new());
        };
        let driver_kind = match self.scenario.driver {
            Driver::Deployment => "Deployment",
            Driver::Canary { .. } => "Canary",
        };
        let mut fresh: Vec<(SystemTime, bool, EventRow)> = Vec::new();
        for e in list.items {
            let kind = e.involved_object.kind.clone().unwrap_or_default();
            if kind != "Canary" && kind != "Deployment" {
                continue;
            }
            let key = (e.metadata.uid.clone().unwrap_or_default(), e.count.unwrap_or(1));
            if !self.seen.insert(key) {
                continue;
            }
            let at = event_time(&e).unwrap_or(self.start);
            let row = EventRow {
                t: at.duration_since(self.start).unwrap_or_default(),
                object: format!(
                    "{}/{}",
                    kind.to_lowercase(),
                    e.involved_object.name.clone().unwrap_or_default()
                ),
                type_: e.type_.clone().unwrap_or_default(),
                reason: e.reason.clone().unwrap_or_default(),
                message: e.message.clone().unwrap_or_default(),
            };
            fresh.push((at, kind == driver_kind, row));
        }
        fresh.sort_by_key(|(at, _, _)| *at);
        let mut mine: Vec<(Duration, String)> = fresh
            .iter()
            .filter(|(_, driver, _)| *driver)
            .map(|(_, _, row)| (row.t, row.message.clone()))
            .collect();
        // An Event seen again (its count went up) repeats the message just shown: once is enough.
        mine.dedup_by(|a, b| a.1 == b.1);
        if mine
            .first()
            .is_some_and(|(_, m)| Some(m) == self.last_why.as_ref())
        {
            mine.remove(0);
        }
        let why = mine.pop().map(|(_, message)| message);
        if why.is_some() {
            self.last_why.clone_from(&why);
        }
        self.events.extend(fresh.into_iter().map(|(_, _, row)| row));
        (why, mine)
    }
}

/// One version's traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct Traffic {
    /// Requests per second.
    pub rps: f64,
    /// Percent answered below 500; `None` without requests.
    pub success: Option<f64>,
    /// p99 in milliseconds; `None` without requests.
    pub p99_ms: Option<f64>,
}

/// Per version: the request rates by code `(version, code, rate)` and the bucket rates
/// `(version, le, rate)` summed into a request rate, a success rate and a p99.
pub fn summarize(
    by_code: &[(String, String, f64)],
    by_le: &[(String, f64, f64)],
) -> BTreeMap<String, Traffic> {
    let mut totals: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (version, code, rate) in by_code {
        let entry = totals.entry(version.clone()).or_default();
        entry.0 += rate;
        if !code.starts_with('5') {
            entry.1 += rate;
        }
    }
    let mut buckets: BTreeMap<String, BTreeMap<u64, (f64, f64)>> = BTreeMap::new();
    for (version, le, rate) in by_le {
        let entry = buckets.entry(version.clone()).or_default();
        entry.entry(le.to_bits()).or_insert((*le, 0.0)).1 += rate;
    }
    totals
        .into_iter()
        .map(|(version, (total, ok))| {
            let has = total > 0.0;
            let mut bs: Vec<(f64, f64)> = buckets
                .get(&version)
                .map(|b| b.values().copied().collect())
                .unwrap_or_default();
            bs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let traffic = Traffic {
                rps: total,
                success: has.then(|| 100.0 * ok / total),
                p99_ms: histogram_quantile(0.99, &bs).map(|s| s * 1000.0),
            };
            (version, traffic)
        })
        .collect()
}

/// Prometheus's `histogram_quantile`: `buckets` are `(upper bound, cumulative count)` in
/// ascending bounds, the last `+Inf`; linear interpolation inside the bucket; a quantile in the
/// `+Inf` bucket is the highest finite bound. `None` without observations.
pub fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    let total = buckets.last()?.1;
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    let rank = q * total;
    let mut lower = (0.0, 0.0);
    for &(le, count) in buckets {
        if count >= rank {
            if le.is_infinite() {
                return Some(lower.0);
            }
            let width = count - lower.1;
            if width <= 0.0 {
                return Some(le);
            }
            return Some(lower.0 + (le - lower.0) * (rank - lower.1) / width);
        }
        lower = (le, count);
    }
    Some(lower.0)
}

/// kubectl's `rollout status` in one word: `Complete` once every replica runs the newest
/// template and is available, `ProgressDeadlineExceeded` when the Deployment says so, else
/// `Progressing`.
pub fn deployment_phase(d: &Deployment) -> &'static str {
    let (Some(spec), Some(status)) = (d.spec.as_ref(), d.status.as_ref()) else {
        return "Progressing";
    };
    if status.observed_generation.unwrap_or(0) < d.metadata.generation.unwrap_or(0) {
        return "Progressing";
    }
    let exceeded = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Progressing" && c.reason.as_deref() == Some("ProgressDeadlineExceeded"));
    if exceeded {
        return "ProgressDeadlineExceeded";
    }
    let want = spec.replicas.unwrap_or(1);
    let updated = status.updated_replicas.unwrap_or(0);
    let all = status.replicas.unwrap_or(0);
    let available = status.available_replicas.unwrap_or(0);
    if updated < want || all > updated || available < updated {
        return "Progressing";
    }
    "Complete"
}

/// The first image of a ReplicaSet's pod template.
fn rs_image(rs: &ReplicaSet) -> String {
    rs.spec
        .as_ref()
        .and_then(|s| s.template.as_ref())
        .and_then(|t| t.spec.as_ref())
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

/// An image's tag (`6.1.0` of `ghcr.io/stefanprodan/podinfo:6.1.0`), or the image.
pub fn tag(image: &str) -> &str {
    match image.rsplit_once(':') {
        Some((_, tag)) if !tag.contains('/') => tag,
        _ => image,
    }
}

/// When an Event last happened.
fn event_time(e: &Event) -> Option<SystemTime> {
    let t = e
        .last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0))?;
    Some(SystemTime::from(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quantile_interpolates_inside_its_bucket_as_prometheus() {
        let b = [(0.1, 50.0), (0.2, 90.0), (0.5, 100.0), (f64::INFINITY, 100.0)];
        assert_eq!(histogram_quantile(0.5, &b), Some(0.1));
        let p99 = histogram_quantile(0.99, &b).unwrap();
        assert!((p99 - 0.47).abs() < 1e-9, "{p99}");
        // All in +Inf: the highest finite bound.
        assert_eq!(
            histogram_quantile(0.99, &[(1.0, 0.0), (f64::INFINITY, 5.0)]),
            Some(1.0)
        );
        assert_eq!(
            histogram_quantile(0.99, &[(1.0, 0.0), (f64::INFINITY, 0.0)]),
            None
        );
        assert_eq!(histogram_quantile(0.99, &[]), None);
    }

    #[test]
    fn versions_sum_their_pods_and_5xx_are_failures() {
        let v = |s: &str| s.to_string();
        let by_code = [
            (v("primary"), v("200"), 90.0),
            (v("primary"), v("503"), 10.0),
            (v("canary"), v("200"), 5.0),
        ];
        let by_le = [
            (v("canary"), 0.05, 4.0),
            (v("canary"), f64::INFINITY, 5.0),
            (v("canary"), 0.05, 1.0),
        ];
        let s = summarize(&by_code, &by_le);
        assert_eq!(s["primary"].rps, 100.0);
        assert_eq!(s["primary"].success, Some(90.0));
        assert_eq!(s["primary"].p99_ms, None);
        assert_eq!(s["canary"].success, Some(100.0));
        // Rank 4.95 of 5 in the first bucket, interpolated from 0: 0.05 × 4.95 / 5 seconds.
        let p99 = s["canary"].p99_ms.unwrap();
        assert!((p99 - 49.5).abs() < 1e-9, "{p99}");
    }

    #[test]
    fn a_tag_is_after_the_last_colon_outside_the_registry_port() {
        assert_eq!(tag("ghcr.io/stefanprodan/podinfo:6.1.0"), "6.1.0");
        assert_eq!(tag("localhost:5000/app"), "localhost:5000/app");
        assert_eq!(tag("nginx"), "nginx");
    }
}
