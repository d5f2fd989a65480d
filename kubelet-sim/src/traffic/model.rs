//! The pure traffic model: no IO, no clock. [`Topology::build`] compiles the
//! cached objects into streams of requests (one per live HTTPRoute, one per
//! Service annotated with a rate), their rules, weighted backends and ready
//! endpoints; [`Topology::tick`] sends one tick's requests through it with a
//! seeded generator and counts the answers into a [`Tally`].
//!
//! Upstream (for the routing rules): Gateway API `apis/v1/httproute_types.go`
//! (`HTTPRouteRule.BackendRefs`: invalid backends answer 500, weight 0 gets
//! no traffic, a Service without ready endpoints SHOULD answer 503; match
//! precedence: the most header matches win) and
//! `pkg/controller/endpointslice` (the `kubernetes.io/service-name` label,
//! `conditions.ready`, where nil means ready).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use controllers::gateway::types::{GROUP, Gateway, HTTPRoute, HTTPRouteRule};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use rand::{Rng, RngExt};
use sim_metrics::names::DURATION_BUCKETS;

use super::annotations::{PodTraffic, header_share, route_rps, service_rps};
use crate::stable_hash;

/// The simulated gateway controller's name: routes it refused
/// (`Accepted=False`) receive no traffic.
pub const GATEWAY_CONTROLLER: &str = "sim.miniplane.dev/gateway-controller";
/// The EndpointSlice label naming its Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// Histogram slots: one per bound of [`DURATION_BUCKETS`], then `+Inf`.
pub const SLOTS: usize = DURATION_BUCKETS.len() + 1;

/// The code of a successful answer.
pub const OK: u16 = 200;
/// The code of a pod's error answer, and of the gateway's for an invalid backend.
pub const SERVER_ERROR: u16 = 500;
/// The code the gateway answers for a backend without ready endpoints.
pub const UNAVAILABLE: u16 = 503;

/// The cached objects one build reads.
#[derive(Clone, Copy, Debug)]
pub struct Objects<'a> {
    /// HTTPRoutes.
    pub routes: &'a [Arc<HTTPRoute>],
    /// Gateways.
    pub gateways: &'a [Arc<Gateway>],
    /// Services.
    pub services: &'a [Arc<Service>],
    /// EndpointSlices.
    pub slices: &'a [Arc<EndpointSlice>],
    /// Pods.
    pub pods: &'a [Arc<Pod>],
}

/// A source of requests: a live HTTPRoute, or a Service with its own rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    /// `route/<namespace>/<name>` or `service/<namespace>/<name>`.
    pub key: String,
    /// The `route` label: `<namespace>/<name>`, `""` for a Service's own traffic.
    pub route: String,
    /// The route's (or Service's) namespace.
    pub namespace: String,
    /// Requests per simulated second.
    pub rps: f64,
    /// The share of requests carrying the headers a rule matches on.
    pub header_share: f64,
    /// Rules with header matches, most header matches first.
    pub header_rules: Vec<Rule>,
    /// Rules without header matches, in order.
    pub plain_rules: Vec<Rule>,
    /// The fraction of a request owed from earlier ticks.
    pub carry: f64,
}

/// One rule's weighted backends.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rule {
    /// (weight, index into [`Topology::backends`]); weight-0 entries are dropped.
    pub backends: Vec<(u64, usize)>,
    /// The sum of the weights.
    pub total_weight: u64,
}

/// A backendRef's target.
#[derive(Debug, Clone, PartialEq)]
pub struct Backend {
    /// The namespace the ref points into.
    pub namespace: String,
    /// The Service name (the `service` label).
    pub name: String,
    /// Whether it is an existing Service (else the gateway answers 500).
    pub valid: bool,
    /// Its ready endpoints: indices into [`Topology::pods`].
    pub endpoints: Vec<usize>,
}

/// A pod the simulation knows: an endpoint, or a Running pod (it uses CPU).
#[derive(Debug, Clone, PartialEq)]
pub struct PodEntry {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The first container's name (the CPU series' `container`); `None`
    /// for an endpoint whose pod is not cached.
    pub container: Option<String>,
    /// Whether its phase is Running (it is charged CPU).
    pub running: bool,
    /// How it answers.
    pub traffic: PodTraffic,
    /// Errors owed: each answer adds the error rate, an answer is an error
    /// when this reaches 1 (so every window shows the configured share).
    pub error_debt: f64,
}

/// Counts per tick (or per scrape interval), by index into the topology.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Answers by (stream, backend, pod, code); backend and pod are `None`
    /// when the gateway answered (no backend / no endpoint).
    pub requests: BTreeMap<(usize, Option<usize>, Option<usize>, u16), u64>,
    /// Durations of pods' answers by (stream, backend, pod).
    pub durations: BTreeMap<(usize, usize, usize), Histogram>,
    /// CPU seconds used, by pod.
    pub cpu_seconds: BTreeMap<usize, f64>,
}

impl Tally {
    /// Forgets every count.
    pub fn clear(&mut self) {
        self.requests.clear();
        self.durations.clear();
        self.cpu_seconds.clear();
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.durations.is_empty() && self.cpu_seconds.is_empty()
    }
}

/// Observations split by histogram slot; each slot keeps its count and sum,
/// so writing one observation of the slot's mean `count` times lands in the
/// same buckets with the same sum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Histogram {
    /// Observations per slot.
    pub counts: [u64; SLOTS],
    /// Sum of the observations per slot (seconds).
    pub sums: [f64; SLOTS],
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: [0; SLOTS],
            sums: [0.0; SLOTS],
        }
    }
}

impl Histogram {
    /// Adds one observation (seconds).
    pub fn observe(&mut self, seconds: f64) {
        let slot = DURATION_BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(DURATION_BUCKETS.len());
        self.counts[slot] += 1;
        self.sums[slot] += seconds;
    }
}

/// The compiled traffic plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Topology {
    /// Request sources, routes first, each group in key order.
    pub streams: Vec<Stream>,
    /// Backends by index.
    pub backends: Vec<Backend>,
    /// Pods by index (in key order).
    pub pods: Vec<PodEntry>,
    /// Invalid annotations met (their defaults were used).
    pub warnings: Vec<String>,
    /// Requests each pod served this tick (scratch).
    served: Vec<u64>,
}

impl Topology {
    /// Compiles `objects`. Carries (the fraction of a request a stream owes,
    /// the errors a pod owes) come from `previous` by key; a new pod starts
    /// its error debt at an offset drawn from `seed` and its name.
    pub fn build<'a>(objects: Objects<'a>, previous: &'a Topology, seed: u64) -> Topology {
        let mut b = Builder::new(objects, seed, previous);
        for route in objects.routes {
            if is_live(route, objects.gateways) {
                b.route(route);
            }
        }
        for service in objects.services {
            b.service_stream(service);
        }
        let Builder { mut topology, .. } = b;
        topology.served = vec![0; topology.pods.len()];
        topology
    }

    /// Sends `dt` seconds of requests through the plan and charges every
    /// Running pod its CPU for `dt`, counting into `tally`.
    pub fn tick(&mut self, rng: &mut impl Rng, dt: f64, tally: &mut Tally) {
        self.served.iter_mut().for_each(|s| *s = 0);
        for s in 0..self.streams.len() {
            let due = self.streams[s].carry + self.streams[s].rps * dt.max(0.0);
            // A hair of slack: 0.3 × 10 ticks is 3 requests, not 2.999….
            let n = (due + 1e-9).floor();
            self.streams[s].carry = (due - n).max(0.0);
            // At most MAX_RPS × dt: a whole number well within u64.
            for _ in 0..(n as u64) {
                self.request(s, rng, tally);
            }
        }
        for (p, pod) in self.pods.iter().enumerate() {
            if !pod.running {
                continue;
            }
            let millicore_seconds = pod.traffic.cpu_millicores * dt.max(0.0)
                + pod.traffic.cpu_millicores_per_request * self.served[p] as f64;
            *tally.cpu_seconds.entry(p).or_default() += millicore_seconds / 1000.0;
        }
    }

    /// One request of stream `s`.
    fn request(&mut self, s: usize, rng: &mut impl Rng, tally: &mut Tally) {
        let stream = &self.streams[s];
        let carries_header = !stream.header_rules.is_empty() && rng.random::<f64>() < stream.header_share;
        let rule = if carries_header {
            // The most specific rule wins: the first, after sorting.
            &stream.header_rules[0]
        } else if stream.plain_rules.is_empty() {
            // No rule matches a request without the header: it is not this route's.
            return;
        } else {
            &stream.plain_rules[pick(rng, stream.plain_rules.len())]
        };
        let Some(backend) = pick_weighted(rng, rule) else {
            count(tally, (s, None, None, SERVER_ERROR));
            return;
        };
        let target = &self.backends[backend];
        if !target.valid {
            count(tally, (s, Some(backend), None, SERVER_ERROR));
            return;
        }
        if target.endpoints.is_empty() {
            count(tally, (s, Some(backend), None, UNAVAILABLE));
            return;
        }
        let pod = target.endpoints[pick(rng, target.endpoints.len())];
        let entry = &mut self.pods[pod];
        entry.error_debt += entry.traffic.error_rate;
        let code = if entry.error_debt >= 1.0 {
            entry.error_debt -= 1.0;
            SERVER_ERROR
        } else {
            OK
        };
        let seconds = entry.traffic.latency.sample_seconds(rng);
        self.served[pod] += 1;
        count(tally, (s, Some(backend), Some(pod), code));
        tally
            .durations
            .entry((s, backend, pod))
            .or_default()
            .observe(seconds);
    }
}

fn count(tally: &mut Tally, key: (usize, Option<usize>, Option<usize>, u16)) {
    *tally.requests.entry(key).or_default() += 1;
}

/// A uniform index below `n` (`n > 0`).
fn pick(rng: &mut impl Rng, n: usize) -> usize {
    if n <= 1 { 0 } else { rng.random_range(0..n) }
}

/// A backend drawn by weight; `None` when no backend has weight.
fn pick_weighted(rng: &mut impl Rng, rule: &Rule) -> Option<usize> {
    if rule.total_weight == 0 {
        return None;
    }
    let mut x = rng.random_range(0..rule.total_weight);
    for (weight, backend) in &rule.backends {
        if x < *weight {
            return Some(*backend);
        }
        x -= weight;
    }
    None
}

/// Whether `route` receives traffic: a parentRef names an existing Gateway,
/// and the simulated gateway controller has not refused it.
pub fn is_live(route: &HTTPRoute, gateways: &[Arc<Gateway>]) -> bool {
    let ns = route.metadata.namespace.as_deref().unwrap_or_default();
    let refused = route.status.as_ref().is_some_and(|status| {
        status.parents.iter().any(|p| {
            p.controller_name == GATEWAY_CONTROLLER
                && p.conditions
                    .iter()
                    .any(|c| c.type_ == "Accepted" && c.status == "False")
        })
    });
    !refused
        && route.spec.parent_refs.iter().any(|p| {
            let group_ok = p.group.as_deref().is_none_or(|g| g == GROUP);
            let kind_ok = p.kind.as_deref().is_none_or(|k| k == "Gateway");
            let parent_ns = p.namespace.as_deref().unwrap_or(ns);
            group_ok
                && kind_ok
                && gateways.iter().any(|g| {
                    g.metadata.namespace.as_deref() == Some(parent_ns)
                        && g.metadata.name.as_deref() == Some(p.name.as_str())
                })
        })
}

/// Builds a [`Topology`], sharing backends and pods between streams.
struct Builder<'a> {
    objects: Objects<'a>,
    seed: u64,
    /// The cached pods by (namespace, name).
    cached: BTreeMap<(&'a str, &'a str), &'a Pod>,
    /// The error debts of the previous build's pods.
    debts: BTreeMap<(&'a str, &'a str), f64>,
    /// The carries of the previous build's streams.
    carries: BTreeMap<&'a str, f64>,
    topology: Topology,
    backend_index: BTreeMap<(String, String), usize>,
    pod_index: BTreeMap<(String, String), usize>,
}

impl<'a> Builder<'a> {
    fn new(objects: Objects<'a>, seed: u64, previous: &'a Topology) -> Self {
        let key = |p: &'a Arc<Pod>| {
            let m = &p.metadata;
            (
                m.namespace.as_deref().unwrap_or_default(),
                m.name.as_deref().unwrap_or_default(),
            )
        };
        let mut b = Builder {
            objects,
            seed,
            cached: objects.pods.iter().map(|p| (key(p), &**p)).collect(),
            debts: previous
                .pods
                .iter()
                .map(|p| ((p.namespace.as_str(), p.name.as_str()), p.error_debt))
                .collect(),
            carries: previous
                .streams
                .iter()
                .map(|s| (s.key.as_str(), s.carry))
                .collect(),
            topology: Topology::default(),
            backend_index: BTreeMap::new(),
            pod_index: BTreeMap::new(),
        };
        for pod in objects.pods {
            let running = pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
            if running {
                let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
                let name = pod.metadata.name.as_deref().unwrap_or_default();
                b.pod(ns, name);
            }
        }
        b
    }

    /// The index of pod `ns/name`, added on first use.
    fn pod(&mut self, ns: &str, name: &str) -> usize {
        let key = (ns.to_string(), name.to_string());
        if let Some(i) = self.pod_index.get(&key) {
            return *i;
        }
        let cached = self.cached.get(&(ns, name)).copied();
        let traffic = cached.map(PodTraffic::for_pod).unwrap_or_default();
        for w in &traffic.warnings {
            self.topology.warnings.push(format!("pod {ns}/{name}: {w}"));
        }
        let error_debt = self
            .debts
            .get(&(ns, name))
            .copied()
            .unwrap_or_else(|| unit(stable_hash(&[&self.seed.to_string(), "error-debt", ns, name])));
        let entry = PodEntry {
            namespace: ns.to_string(),
            name: name.to_string(),
            container: cached
                .and_then(|p| p.spec.as_ref())
                .and_then(|s| s.containers.first())
                .map(|c| c.name.clone()),
            running: cached
                .and_then(|p| p.status.as_ref())
                .and_then(|s| s.phase.as_deref())
                == Some("Running"),
            traffic,
            error_debt,
        };
        let i = self.topology.pods.len();
        self.topology.pods.push(entry);
        self.pod_index.insert(key, i);
        i
    }

    /// The index of backend `ns/name` (a Service when `service_ref`), added on first use.
    fn backend(&mut self, ns: &str, name: &str, service_ref: bool) -> usize {
        let key = (
            ns.to_string(),
            if service_ref {
                name.to_string()
            } else {
                format!("\0{name}")
            },
        );
        if let Some(i) = self.backend_index.get(&key) {
            return *i;
        }
        let valid = service_ref
            && self.objects.services.iter().any(|s| {
                s.metadata.namespace.as_deref() == Some(ns) && s.metadata.name.as_deref() == Some(name)
            });
        let mut endpoints = BTreeSet::new();
        if valid {
            for pod in ready_endpoints(self.objects.slices, ns, name) {
                endpoints.insert(self.pod(ns, pod));
            }
        }
        let i = self.topology.backends.len();
        self.topology.backends.push(Backend {
            namespace: ns.to_string(),
            name: name.to_string(),
            valid,
            endpoints: endpoints.into_iter().collect(),
        });
        self.backend_index.insert(key, i);
        i
    }

    fn rule(&mut self, ns: &str, rule: &HTTPRouteRule) -> Rule {
        let mut out = Rule::default();
        for r in &rule.backend_refs {
            let weight = u64::try_from(r.weight.unwrap_or(1)).unwrap_or(0);
            if weight == 0 {
                continue;
            }
            let core = r.group.as_deref().is_none_or(str::is_empty);
            let service_ref = core && r.kind.as_deref().is_none_or(|k| k == "Service");
            let backend = self.backend(r.namespace.as_deref().unwrap_or(ns), &r.name, service_ref);
            out.backends.push((weight, backend));
            out.total_weight += weight;
        }
        out
    }

    fn route(&mut self, route: &HTTPRoute) {
        let ns = route.metadata.namespace.as_deref().unwrap_or_default();
        let name = route.metadata.name.as_deref().unwrap_or_default();
        let mut warnings = Vec::new();
        let rps = route_rps(&route.metadata, &mut warnings);
        let share = header_share(&route.metadata, &mut warnings);
        let mut header_rules = Vec::new();
        let mut plain_rules = Vec::new();
        for (i, rule) in route.spec.rules.iter().enumerate() {
            let headers = rule.matches.iter().map(|m| m.headers.len()).max().unwrap_or(0);
            let has_plain_match =
                rule.matches.is_empty() || rule.matches.iter().any(|m| m.headers.is_empty());
            let compiled = self.rule(ns, rule);
            if headers > 0 {
                header_rules.push((headers, i, compiled.clone()));
            }
            if has_plain_match {
                plain_rules.push(compiled);
            }
        }
        if route.spec.rules.is_empty() {
            // The API's default: one rule matching every path, with no backends.
            plain_rules.push(Rule::default());
        }
        // Most header matches first, then rule order.
        header_rules.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let key = format!("route/{ns}/{name}");
        self.push_stream(Stream {
            carry: self.carry(&key),
            key,
            route: format!("{ns}/{name}"),
            namespace: ns.to_string(),
            rps,
            header_share: share,
            header_rules: header_rules.into_iter().map(|(_, _, r)| r).collect(),
            plain_rules,
        });
        for w in warnings {
            self.topology.warnings.push(format!("httproute {ns}/{name}: {w}"));
        }
    }

    fn service_stream(&mut self, service: &Service) {
        let ns = service.metadata.namespace.as_deref().unwrap_or_default();
        let name = service.metadata.name.as_deref().unwrap_or_default();
        let mut warnings = Vec::new();
        let rps = service_rps(&service.metadata, &mut warnings);
        for w in warnings {
            self.topology.warnings.push(format!("service {ns}/{name}: {w}"));
        }
        let Some(rps) = rps else { return };
        let backend = self.backend(ns, name, true);
        // A load generator pointed at a Service waits for its target: no
        // ready endpoint, no requests (a canary scaled to 0 between
        // rollouts must not count 503s against its next analysis).
        if self.topology.backends[backend].endpoints.is_empty() {
            return;
        }
        let key = format!("service/{ns}/{name}");
        self.push_stream(Stream {
            carry: self.carry(&key),
            key,
            route: String::new(),
            namespace: ns.to_string(),
            rps,
            header_share: 0.0,
            header_rules: Vec::new(),
            plain_rules: vec![Rule {
                backends: vec![(1, backend)],
                total_weight: 1,
            }],
        });
    }

    fn carry(&self, key: &str) -> f64 {
        self.carries.get(key).copied().unwrap_or(0.0)
    }

    fn push_stream(&mut self, stream: Stream) {
        self.topology.streams.push(stream);
    }
}

/// A number in [0, 1) from a hash.
fn unit(hash: u64) -> f64 {
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

/// The names of the pods ready behind Service `ns/name`, from its EndpointSlices.
pub fn ready_endpoints<'s>(
    slices: &'s [Arc<EndpointSlice>],
    ns: &'s str,
    name: &'s str,
) -> impl Iterator<Item = &'s str> {
    slices
        .iter()
        .filter(move |s| {
            s.metadata.namespace.as_deref() == Some(ns)
                && s.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(SERVICE_NAME_LABEL))
                    .map(String::as_str)
                    == Some(name)
        })
        .flat_map(|s| s.endpoints.iter())
        .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
        .filter_map(|e| e.target_ref.as_ref())
        .filter(|t| t.kind.as_deref() == Some("Pod"))
        .filter_map(|t| t.name.as_deref())
}
