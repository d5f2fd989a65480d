//! Table tests of the pure traffic model: fixtures as the informers would
//! cache them, many ticks under a fixed seed, shares checked within
//! tolerances a few standard deviations wide.

use std::collections::BTreeMap;
use std::sync::Arc;

use controllers::gateway::types::{Gateway, HTTPRoute};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::annotations::{CPU_MILLICORES, ERROR_RATE, LATENCY_MS, LATENCY_P99_MS};
use super::model::{OK, Objects, SERVER_ERROR, Tally, Topology, UNAVAILABLE};

const NS: &str = "shop";

fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Arc<T> {
    Arc::new(serde_json::from_value(v).expect("fixture"))
}

/// The cluster a test builds from.
#[derive(Default)]
struct World {
    routes: Vec<Arc<HTTPRoute>>,
    gateways: Vec<Arc<Gateway>>,
    services: Vec<Arc<Service>>,
    slices: Vec<Arc<EndpointSlice>>,
    pods: Vec<Arc<Pod>>,
}

impl World {
    /// Gateway `gw` and Services `names`, each with `pods` Running pods
    /// (`<service>-<i>`) annotated `annotations`, all ready.
    fn new(names: &[&str], pods: usize, annotations: &[(&str, &str)]) -> World {
        let mut w = World::default();
        w.gateways.push(parse(json!({
            "metadata": {"namespace": NS, "name": "gw"},
            "spec": {"gatewayClassName": "miniplane", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
        })));
        for name in names {
            w.service(name, pods, annotations, true);
        }
        w
    }

    fn service(&mut self, name: &str, pods: usize, annotations: &[(&str, &str)], ready: bool) {
        self.services.push(parse(
            json!({"metadata": {"namespace": NS, "name": name}, "spec": {}}),
        ));
        let a: BTreeMap<&str, &str> = annotations.iter().copied().collect();
        let mut endpoints = Vec::new();
        for i in 0..pods {
            let pod = format!("{name}-{i}");
            self.pods.push(parse(json!({
                "metadata": {"namespace": NS, "name": pod, "annotations": a},
                "spec": {"containers": [{"name": "app", "image": "nginx"}, {"name": "sidecar", "image": "envoy"}]},
                "status": {"phase": "Running"},
            })));
            endpoints.push(json!({
                "addresses": [format!("10.0.0.{i}")],
                "conditions": {"ready": ready},
                "targetRef": {"kind": "Pod", "namespace": NS, "name": pod},
            }));
        }
        self.slices.push(parse(json!({
            "metadata": {"namespace": NS, "name": format!("{name}-abcde"),
                         "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4",
            "endpoints": endpoints,
        })));
    }

    /// HTTPRoute `name` on `gw` with `rules` and `annotations`.
    fn route(&mut self, name: &str, annotations: Value, rules: Value) {
        self.routes.push(parse(json!({
            "metadata": {"namespace": NS, "name": name, "annotations": annotations},
            "spec": {"parentRefs": [{"name": "gw"}], "rules": rules},
        })));
    }

    fn objects(&self) -> Objects<'_> {
        Objects {
            routes: &self.routes,
            gateways: &self.gateways,
            services: &self.services,
            slices: &self.slices,
            pods: &self.pods,
        }
    }

    fn topology(&self) -> Topology {
        Topology::build(self.objects(), &Topology::default(), 42)
    }

    /// `ticks` one-second ticks under seed `seed`.
    fn run(&self, seed: u64, ticks: usize) -> (Topology, Tally) {
        let mut topology = self.topology();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut tally = Tally::default();
        for _ in 0..ticks {
            topology.tick(&mut rng, 1.0, &mut tally);
        }
        (topology, tally)
    }
}

/// Requests per (service, pod, code) label values.
fn by_labels(topology: &Topology, tally: &Tally) -> BTreeMap<(String, String, u16), u64> {
    let mut out = BTreeMap::new();
    for ((_, b, p, code), n) in &tally.requests {
        let service = b.map_or(String::new(), |b| topology.backends[b].name.clone());
        let pod = p.map_or(String::new(), |p| topology.pods[p].name.clone());
        *out.entry((service, pod, *code)).or_default() += n;
    }
    out
}

fn total(tally: &Tally, filter: impl Fn(&(usize, Option<usize>, Option<usize>, u16)) -> bool) -> u64 {
    tally
        .requests
        .iter()
        .filter(|(k, _)| filter(k))
        .map(|(_, n)| n)
        .sum()
}

fn service_total(topology: &Topology, tally: &Tally, service: &str) -> u64 {
    total(tally, |(_, b, _, _)| {
        b.is_some_and(|b| topology.backends[b].name == service)
    })
}

/// One rule sending everything to `service`.
fn to(service: &str) -> Value {
    json!([{"backendRefs": [{"name": service, "port": 80}]}])
}

fn weighted(stable: i32, canary: i32) -> Value {
    json!([{"backendRefs": [
        {"name": "stable", "port": 80, "weight": stable},
        {"name": "canary", "port": 80, "weight": canary},
    ]}])
}

#[test]
fn weights_split_90_10() {
    let mut w = World::new(&["stable", "canary"], 2, &[]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "100"}),
        weighted(90, 10),
    );
    let (t, tally) = w.run(1, 600);
    let all = total(&tally, |_| true);
    assert_eq!(all, 60_000);
    let canary = service_total(&t, &tally, "canary") as f64 / all as f64;
    // σ ≈ 0.0012: ±0.005 is four of them.
    assert!((canary - 0.10).abs() < 0.005, "canary share {canary}");
    // Uniform over endpoints: each stable pod gets about half of stable's.
    let labels = by_labels(&t, &tally);
    let stable0 = labels[&("stable".into(), "stable-0".into(), OK)] as f64;
    let stable = service_total(&t, &tally, "stable") as f64;
    assert!((stable0 / stable - 0.5).abs() < 0.01, "{stable0} of {stable}");
}

#[test]
fn weight_defaults_to_one() {
    let mut w = World::new(&["stable", "canary"], 1, &[]);
    w.route(
        "web",
        json!({}),
        json!([{"backendRefs": [{"name": "stable"}, {"name": "canary"}]}]),
    );
    let (t, tally) = w.run(2, 1000);
    // The default rate, 10/s.
    assert_eq!(total(&tally, |_| true), 10_000);
    let canary = service_total(&t, &tally, "canary") as f64 / 10_000.0;
    assert!((canary - 0.5).abs() < 0.02, "{canary}");
}

#[test]
fn header_share_goes_to_the_header_rule() {
    let mut w = World::new(&["stable", "canary"], 1, &[]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "100", "sim.miniplane.dev/header-share": "0.25"}),
        json!([
            {"matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
             "backendRefs": [{"name": "stable"}]},
            {"matches": [{"headers": [{"name": "x-canary", "value": "always"}]}],
             "backendRefs": [{"name": "canary"}]},
        ]),
    );
    let (t, tally) = w.run(3, 400);
    let canary = service_total(&t, &tally, "canary") as f64 / 40_000.0;
    assert!((canary - 0.25).abs() < 0.01, "{canary}");
}

#[test]
fn default_header_share_is_ten_percent() {
    let mut w = World::new(&["stable", "canary"], 1, &[]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "100"}),
        json!([
            {"backendRefs": [{"name": "stable"}]},
            {"matches": [{"headers": [{"name": "x-canary", "value": "always"}]}],
             "backendRefs": [{"name": "canary"}]},
        ]),
    );
    let (t, tally) = w.run(4, 400);
    let canary = service_total(&t, &tally, "canary") as f64 / 40_000.0;
    assert!((canary - 0.10).abs() < 0.01, "{canary}");
}

#[test]
fn a_route_of_header_rules_only_receives_the_header_share() {
    let mut w = World::new(&["canary"], 1, &[]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "100", "sim.miniplane.dev/header-share": "0.5"}),
        json!([{"matches": [{"headers": [{"name": "x-canary", "value": "always"}]}],
                "backendRefs": [{"name": "canary"}]}]),
    );
    let (_, tally) = w.run(5, 200);
    let all = total(&tally, |_| true) as f64;
    assert!((all / 20_000.0 - 0.5).abs() < 0.02, "{all}");
    assert_eq!(total(&tally, |k| k.3 != OK), 0);
}

#[test]
fn the_most_header_matches_win() {
    let mut w = World::new(&["a", "b"], 1, &[]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/header-share": "1"}),
        json!([
            {"matches": [{"headers": [{"name": "x-one", "value": "1"}]}], "backendRefs": [{"name": "a"}]},
            {"matches": [{"headers": [{"name": "x-one", "value": "1"}, {"name": "x-two", "value": "2"}]}],
             "backendRefs": [{"name": "b"}]},
        ]),
    );
    let (t, tally) = w.run(6, 10);
    assert_eq!(service_total(&t, &tally, "b"), 100);
    assert_eq!(service_total(&t, &tally, "a"), 0);
}

/// The gateway's own answers: (rules, services, expected code, expected
/// `service` label). `pod` is always empty.
#[test]
fn gateway_answers() {
    let cases: [(&str, Value, &[&str], u16, &str); 5] = [
        (
            "all weights zero",
            weighted(0, 0),
            &["stable", "canary"],
            SERVER_ERROR,
            "",
        ),
        ("no backendRefs", json!([{"matches": []}]), &[], SERVER_ERROR, ""),
        ("no rules", json!([]), &[], SERVER_ERROR, ""),
        (
            "missing Service",
            json!([{"backendRefs": [{"name": "ghost"}]}]),
            &[],
            SERVER_ERROR,
            "ghost",
        ),
        (
            "not a Service",
            json!([{"backendRefs": [{"name": "stable", "kind": "Bucket", "group": "example.com"}]}]),
            &["stable"],
            SERVER_ERROR,
            "stable",
        ),
    ];
    for (name, rules, services, code, service) in cases {
        let mut w = World::new(services, 2, &[]);
        w.route("web", json!({}), rules);
        let (t, tally) = w.run(7, 10);
        let labels = by_labels(&t, &tally);
        let expected = BTreeMap::from([((service.to_string(), String::new(), code), 100)]);
        assert_eq!(labels, expected, "{name}");
        assert!(
            tally.durations.is_empty(),
            "{name}: the gateway's answers have no duration"
        );
    }
}

#[test]
fn no_ready_endpoint_is_503() {
    let mut w = World::new(&[], 0, &[]);
    w.service("stable", 3, &[], false);
    w.route("web", json!({}), json!([{"backendRefs": [{"name": "stable"}]}]));
    let (t, tally) = w.run(8, 10);
    let expected = BTreeMap::from([(("stable".to_string(), String::new(), UNAVAILABLE), 100)]);
    assert_eq!(by_labels(&t, &tally), expected);
}

#[test]
fn zero_weight_backend_gets_nothing() {
    let mut w = World::new(&["stable", "canary"], 1, &[]);
    w.route("web", json!({}), weighted(1, 0));
    let (t, tally) = w.run(9, 100);
    assert_eq!(service_total(&t, &tally, "stable"), 1000);
    assert_eq!(service_total(&t, &tally, "canary"), 0);
}

#[test]
fn error_rate_is_the_share_of_500s() {
    let mut w = World::new(&["web"], 3, &[(ERROR_RATE, "0.2")]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "50"}),
        to("web"),
    );
    // Any minute: 3000 answers, exactly 600 errors give or take one per pod.
    let (t, tally) = w.run(10, 60);
    let errors = total(&tally, |k| k.3 == SERVER_ERROR);
    let all = total(&tally, |_| true);
    assert_eq!(all, 3000);
    assert!(errors.abs_diff(600) <= 3, "{errors}");
    for ((_, pod, code), n) in by_labels(&t, &tally) {
        assert!(
            !pod.is_empty() && (code == OK || code == SERVER_ERROR),
            "{pod} {code} {n}"
        );
    }
}

#[test]
fn pods_answer_by_their_own_error_rate() {
    let mut w = World::new(&["stable"], 1, &[]);
    w.service("canary", 1, &[(ERROR_RATE, "0.5")], true);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "100"}),
        weighted(1, 1),
    );
    let (t, tally) = w.run(11, 100);
    let labels = by_labels(&t, &tally);
    assert!(!labels.contains_key(&("stable".into(), "stable-0".into(), SERVER_ERROR)));
    let ok = labels[&("canary".into(), "canary-0".into(), OK)];
    let err = labels[&("canary".into(), "canary-0".into(), SERVER_ERROR)];
    assert!(ok.abs_diff(err) <= 1, "{ok} {err}");
}

#[test]
fn fractional_rates_carry_over() {
    let mut w = World::new(&["web"], 1, &[]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "0.3"}),
        to("web"),
    );
    let mut t = w.topology();
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut tally = Tally::default();
    let mut seen = Vec::new();
    for _ in 0..10 {
        t.tick(&mut rng, 1.0, &mut tally);
        seen.push(total(&tally, |_| true));
    }
    assert_eq!(seen, [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]);
    // A rebuild keeps the carry: 0.6 owed, then 0.6 more make one request.
    t.tick(&mut rng, 2.0, &mut tally);
    assert_eq!(total(&tally, |_| true), 3);
    let mut rebuilt = Topology::build(w.objects(), &t, 42);
    rebuilt.tick(&mut rng, 2.0, &mut tally);
    assert_eq!(total(&tally, |_| true), 3 + 1);
}

#[test]
fn a_service_rate_goes_straight_to_its_endpoints() {
    let mut w = World::new(&[], 0, &[]);
    w.service("preview", 2, &[], true);
    w.services[0] = parse(json!({
        "metadata": {"namespace": NS, "name": "preview",
                     "annotations": {"sim.miniplane.dev/requests-per-second": "20"}},
        "spec": {},
    }));
    let (t, tally) = w.run(13, 10);
    assert_eq!(service_total(&t, &tally, "preview"), 200);
    assert_eq!(t.streams.len(), 1);
    assert_eq!(
        (t.streams[0].route.as_str(), t.streams[0].key.as_str()),
        ("", "service/shop/preview")
    );
}

/// Regression: a blue/green Canary's `-canary` Service carries a request
/// rate (analysis traffic) also while the canary is scaled to 0. Sent to no
/// endpoint, those requests were counted as the gateway's 503s, and the
/// first analysis check of the next rollout failed on them
/// (request-success-rate ~75 < 99). A Service's own rate now waits for a
/// ready endpoint, as a load generator waits for its target.
#[test]
fn a_service_rate_waits_for_a_ready_endpoint() {
    let mut w = World::new(&[], 0, &[]);
    w.service("preview", 2, &[], false);
    w.services[0] = parse(json!({
        "metadata": {"namespace": NS, "name": "preview",
                     "annotations": {"sim.miniplane.dev/requests-per-second": "20"}},
        "spec": {},
    }));
    let (t, tally) = w.run(13, 10);
    assert_eq!(service_total(&t, &tally, "preview"), 0);
    assert!(t.streams.is_empty());
}

#[test]
fn which_routes_are_live() {
    let route = |parents: Value, status: Value| -> Arc<HTTPRoute> {
        parse(json!({
            "metadata": {"namespace": NS, "name": "web"},
            "spec": {"parentRefs": parents, "rules": [{"backendRefs": [{"name": "web"}]}]},
            "status": status,
        }))
    };
    let refused = |controller: &str| {
        json!({"parents": [{"parentRef": {"name": "gw"}, "controllerName": controller,
                            "conditions": [{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners",
                                            "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]})
    };
    let cases = [
        ("same namespace", json!([{"name": "gw"}]), json!({}), true),
        ("missing Gateway", json!([{"name": "other"}]), json!({}), false),
        ("no parents", json!([]), json!({}), false),
        (
            "other namespace",
            json!([{"name": "gw", "namespace": "infra"}]),
            json!({}),
            false,
        ),
        (
            "not a Gateway",
            json!([{"name": "gw", "kind": "Service", "group": ""}]),
            json!({}),
            false,
        ),
        (
            "refused by the simulated gateway",
            json!([{"name": "gw"}]),
            refused("sim.miniplane.dev/gateway-controller"),
            false,
        ),
        (
            "refused by another controller",
            json!([{"name": "gw"}]),
            refused("example.com/gw"),
            true,
        ),
    ];
    let w = World::new(&["web"], 1, &[]);
    for (name, parents, status, live) in cases {
        assert_eq!(
            super::model::is_live(&route(parents, status), &w.gateways),
            live,
            "{name}"
        );
    }
}

#[test]
fn cpu_follows_the_traffic_served() {
    let mut w = World::new(&["web"], 2, &[(CPU_MILLICORES, "100")]);
    w.service("idle", 1, &[], true);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "50"}),
        to("web"),
    );
    let (t, tally) = w.run(14, 100);
    let cpu: BTreeMap<&str, f64> = tally
        .cpu_seconds
        .iter()
        .map(|(p, s)| (t.pods[*p].name.as_str(), *s))
        .collect();
    // 100 s × (100 m base + 10 m × 25 req/s on average) = 35 CPU seconds each.
    let both = cpu["web-0"] + cpu["web-1"];
    assert!((both - 70.0).abs() < 1e-6, "{both}");
    assert!((cpu["web-0"] - 35.0).abs() < 2.0, "{cpu:?}");
    // A Running pod without traffic or base is charged nothing, but counted.
    assert_eq!(cpu["idle-0"], 0.0);
    assert_eq!(
        t.pods
            .iter()
            .find(|p| p.name == "web-0")
            .and_then(|p| p.container.as_deref()),
        Some("app")
    );
}

#[test]
fn durations_follow_each_pods_latency() {
    let mut w = World::new(&["web"], 1, &[(LATENCY_MS, "40"), (LATENCY_P99_MS, "300")]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "100"}),
        to("web"),
    );
    let (_, tally) = w.run(15, 100);
    let [histogram] = tally.durations.values().copied().collect::<Vec<_>>()[..] else {
        panic!("one series: {:?}", tally.durations.keys());
    };
    let count: u64 = histogram.counts.iter().sum();
    assert_eq!(count, 10_000);
    // Cumulative share at le=0.04 (slot 3 ends at 0.05, slot 2 at 0.025):
    // the median, 40 ms, lies between 0.025 and 0.05.
    let cumulative = |slots: usize| histogram.counts[..slots].iter().sum::<u64>() as f64 / count as f64;
    assert!(
        cumulative(3) < 0.5 && cumulative(4) > 0.5,
        "{:?}",
        histogram.counts
    );
    // p99 = 300 ms: 99% at or below le=0.3 (slot 9), well below 99% at le=0.2.
    assert!((cumulative(10) - 0.99).abs() < 0.005, "{}", cumulative(10));
    assert!(cumulative(8) < 0.98);
    // Each slot's mean lies inside the slot.
    for (slot, (n, sum)) in histogram.counts.iter().zip(histogram.sums).enumerate() {
        if *n > 0 && (1..19).contains(&slot) {
            let mean = sum / *n as f64;
            let bounds = sim_metrics::names::DURATION_BUCKETS;
            assert!(mean > bounds[slot - 1] && mean <= bounds[slot], "slot {slot}");
        }
    }
}

#[test]
fn same_seed_same_counts() {
    let mut w = World::new(&["stable", "canary"], 3, &[(ERROR_RATE, "0.1")]);
    w.route(
        "web",
        json!({"sim.miniplane.dev/requests-per-second": "37"}),
        weighted(3, 1),
    );
    assert_eq!(w.run(16, 50).1, w.run(16, 50).1);
    assert_ne!(w.run(16, 50).1, w.run(17, 50).1);
}

/// What reaches the store: the labels of every family, histograms whose
/// count equals the pods' answers, and a forgotten pod's series starting
/// again when a pod of that name comes back.
#[test]
fn written_series() {
    use sim_metrics::Tsdb;
    use std::collections::BTreeSet;
    use std::time::{Duration, SystemTime};

    let mut w = World::new(&["web"], 1, &[(ERROR_RATE, "0.5"), (CPU_MILLICORES, "1000")]);
    w.route("web", json!({}), to("web"));
    let (t, mut tally) = w.run(18, 10);
    let tsdb = Tsdb::new();
    let mut written = BTreeSet::new();
    super::run::write(&tsdb, &t, &mut tally, &mut written);
    assert!(tally.is_empty());
    assert_eq!(written, BTreeSet::from([(NS.to_string(), "web-0".to_string())]));
    let text = tsdb.exposition();
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
            .rsplit_once(' ')
            .map(|(_, v)| v.to_string())
            .unwrap_or_default()
    };
    let labels = r#"namespace="shop",pod="web-0",route="shop/web",service="web""#;
    assert_eq!(
        line(&format!(r#"http_requests_total{{code="200",{labels}}}"#)),
        "50"
    );
    assert_eq!(
        line(&format!(r#"http_requests_total{{code="500",{labels}}}"#)),
        "50"
    );
    assert_eq!(
        line(&format!(r#"http_request_duration_seconds_count{{{labels}}}"#)),
        "100"
    );
    assert_eq!(
        line(&format!(
            r#"http_request_duration_seconds_bucket{{le="+Inf",{labels}}}"#
        )),
        "100"
    );
    // 10 s × 1 core base + 100 requests × 10 ms.
    let cpu: f64 = line(r#"container_cpu_usage_seconds_total{container="app",namespace="shop",pod="web-0"}"#)
        .parse()
        .expect("number");
    assert!((cpu - 11.0).abs() < 1e-9, "{cpu}");

    // The pod goes, its series are forgotten; one of the same name comes back.
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    tsdb.scrape(at);
    tsdb.forget("pod", "web-0");
    assert!(!tsdb.exposition().contains("web-0"));
    let mut tally = Tally::default();
    let mut t = w.topology();
    t.tick(&mut ChaCha8Rng::seed_from_u64(19), 1.0, &mut tally);
    super::run::write(&tsdb, &t, &mut tally, &mut written);
    let text = tsdb.exposition();
    assert!(
        text.contains(&format!(r#"http_request_duration_seconds_count{{{labels}}} 10"#)),
        "{text}"
    );
}
