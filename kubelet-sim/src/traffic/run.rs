//! The traffic loop: the one impure part of [`crate::traffic`].
//!
//! ```text
//! informers (routes, gateways, services, slices, pods) ── change ──▶ dirty
//! every simulated second (longer above --time-scale 100, see tick_period):
//!     dirty → write the counts so far, Topology::build from the caches,
//!             forget the series of pods gone from the cache
//!     Topology::tick(rng, dt = simulated time since the last tick) → Tally
//! every 5 simulated seconds:
//!     write the Tally into the store (counters, histograms), Tsdb::scrape(now)
//! ```
//!
//! Counts reach the store in batches, just before each scrape (and before
//! each rebuild): a query sees exactly what a Prometheus scraping every 5 s
//! would, and `/metrics` may trail by up to one scrape interval.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

use controllers::gateway::types::{Gateway, HTTPRoute};
use controllers::runtime::{Change, Informer, Store};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sim_metrics::names::{
    CONTAINER_CPU_USAGE_SECONDS_TOTAL, DURATION_BUCKETS, HTTP_REQUEST_DURATION_SECONDS, HTTP_REQUESTS_TOTAL,
};
use sim_metrics::{MetricKind, Tsdb};
use store::Clock;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::model::{Objects, Tally, Topology};
use crate::stable_hash;

/// Simulated time between two ticks (see [`tick_period`]).
pub const TICK: Duration = Duration::from_secs(1);
/// The shortest real time between two ticks: above `--time-scale 100` the
/// ticks grow longer than [`TICK`] instead of running more than a hundred
/// times per real second.
pub const MIN_REAL_TICK: Duration = Duration::from_millis(10);
/// Simulated time between two scrapes.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(5);
/// The longest tick counted (or two tick periods, if longer): after a
/// longer stall the missed traffic is not made up all at once.
const MAX_DT: Duration = Duration::from_secs(10);

/// The simulated time between two ticks at `scale`: [`TICK`], or
/// [`MIN_REAL_TICK`] of real time when that is longer.
pub fn tick_period(scale: f64) -> Duration {
    TICK.max(MIN_REAL_TICK.mul_f64(scale.clamp(1.0, 1e6)))
}

/// The traffic simulation: one tick per simulated second.
pub struct Traffic {
    clock: Clock,
    seed: u64,
    metrics: Tsdb,
    routes: Watched<HTTPRoute>,
    gateways: Watched<Gateway>,
    services: Watched<Service>,
    slices: Watched<EndpointSlice>,
    pods: Watched<Pod>,
}

/// An informer's cache and its change feed (only used to notice changes).
struct Watched<K> {
    store: Store<K>,
    changes: UnboundedReceiver<Change<K>>,
}

impl<K: controllers::runtime::informer::Object> Watched<K> {
    fn new(informer: &Informer<K>) -> Self {
        Watched {
            store: informer.store(),
            changes: informer.subscribe(),
        }
    }

    /// Takes every change waiting; whether one of them matters.
    fn drain(&mut self, matters: impl Fn(&Change<K>) -> bool) -> bool {
        let mut any = false;
        while let Ok(change) = self.changes.try_recv() {
            any |= matters(&change);
        }
        any
    }
}

impl Traffic {
    /// Subscribes to the informers it reads (call before they run).
    #[allow(clippy::too_many_arguments, reason = "one informer per kind it reads")]
    pub fn new(
        clock: Clock,
        seed: u64,
        metrics: Tsdb,
        routes: &Informer<HTTPRoute>,
        gateways: &Informer<Gateway>,
        services: &Informer<Service>,
        slices: &Informer<EndpointSlice>,
        pods: &Informer<Pod>,
    ) -> Self {
        Traffic {
            clock,
            seed,
            metrics,
            routes: Watched::new(routes),
            gateways: Watched::new(gateways),
            services: Watched::new(services),
            slices: Watched::new(slices),
            pods: Watched::new(pods),
        }
    }

    /// Runs until `shutdown`.
    pub async fn run(mut self, shutdown: CancellationToken) {
        let synced = async {
            self.routes.store.wait_synced().await;
            self.gateways.store.wait_synced().await;
            self.services.store.wait_synced().await;
            self.slices.store.wait_synced().await;
            self.pods.store.wait_synced().await;
        };
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = synced => {}
        }
        describe(&self.metrics);
        let mut rng = ChaCha8Rng::seed_from_u64(stable_hash(&[&self.seed.to_string(), "traffic"]));
        let mut topology = Topology::default();
        let mut tally = Tally::default();
        let mut written = BTreeSet::new();
        let mut dirty = true;
        let mut last = self.clock.now();
        let mut next_scrape = last + SCRAPE_INTERVAL;
        let period = tick_period(self.clock.scale());
        let max_dt = MAX_DT.max(period * 2);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = self.clock.sleep(period) => {}
            }
            let now = self.clock.now();
            let dt = now.duration_since(last).unwrap_or_default().min(max_dt);
            last = now;
            dirty |= self.drain_changes();
            if dirty {
                dirty = false;
                write(&self.metrics, &topology, &mut tally, &mut written);
                topology = self.rebuild(&topology);
                self.forget_gone(&mut written);
            }
            topology.tick(&mut rng, dt.as_secs_f64(), &mut tally);
            if now >= next_scrape {
                write(&self.metrics, &topology, &mut tally, &mut written);
                self.metrics.scrape(now);
                next_scrape = next_after(next_scrape, now);
            }
        }
    }

    /// Whether anything the topology reads changed.
    fn drain_changes(&mut self) -> bool {
        let mut dirty = self.routes.drain(|_| true);
        dirty |= self.gateways.drain(|_| true);
        dirty |= self.services.drain(|_| true);
        dirty |= self.slices.drain(|_| true);
        dirty |= self.pods.drain(pod_change_matters);
        dirty
    }

    fn rebuild(&self, previous: &Topology) -> Topology {
        let (routes, gateways) = (self.routes.store.list(), self.gateways.store.list());
        let (services, slices) = (self.services.store.list(), self.slices.store.list());
        let pods = self.pods.store.list();
        let objects = Objects {
            routes: &routes,
            gateways: &gateways,
            services: &services,
            slices: &slices,
            pods: &pods,
        };
        let topology = Topology::build(objects, previous, self.seed);
        for w in &topology.warnings {
            tracing::debug!(target: "traffic", "{w}");
        }
        topology
    }

    /// Forgets the series of the pods written before and gone from the cache
    /// now. Series are forgotten by pod name, so only once no namespace has
    /// a pod of that name.
    fn forget_gone(&self, written: &mut BTreeSet<(String, String)>) {
        let gone: Vec<(String, String)> = written
            .iter()
            .filter(|(ns, name)| self.pods.store.get(Some(ns), name).is_none())
            .cloned()
            .collect();
        if gone.is_empty() {
            return;
        }
        let live_names: BTreeSet<String> = self
            .pods
            .store
            .list()
            .iter()
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        for key in gone {
            written.remove(&key);
            if !live_names.contains(&key.1) {
                self.metrics.forget("pod", &key.1);
            }
        }
    }
}

/// Whether a pod change can change the topology: a pod added or deleted,
/// its phase, annotations or first container changed.
fn pod_change_matters(change: &Change<Pod>) -> bool {
    match change {
        Change::Added(_) | Change::Deleted(_) => true,
        Change::Updated { old, new } => {
            let phase = |p: &Pod| p.status.as_ref().and_then(|s| s.phase.clone());
            let container = |p: &Pod| {
                p.spec
                    .as_ref()
                    .and_then(|s| s.containers.first())
                    .map(|c| c.name.clone())
            };
            phase(old) != phase(new)
                || old.metadata.annotations != new.metadata.annotations
                || container(old) != container(new)
        }
    }
}

/// The first scrape time after `now` on the grid of `scheduled`.
fn next_after(scheduled: SystemTime, now: SystemTime) -> SystemTime {
    let mut next = scheduled + SCRAPE_INTERVAL;
    if next <= now {
        // Far behind (a stalled process): start the grid again from now.
        next = now + SCRAPE_INTERVAL;
    }
    next
}

/// Declares the three families the simulation writes.
fn describe(tsdb: &Tsdb) {
    tsdb.describe(
        HTTP_REQUESTS_TOTAL,
        MetricKind::Counter,
        "Simulated HTTP requests answered, by backend Service, pod, status code and HTTPRoute.",
    );
    tsdb.describe(
        HTTP_REQUEST_DURATION_SECONDS,
        MetricKind::Histogram,
        "Simulated HTTP request durations in seconds, by backend Service, pod and HTTPRoute.",
    );
    tsdb.describe(
        CONTAINER_CPU_USAGE_SECONDS_TOTAL,
        MetricKind::Counter,
        "Cumulative simulated CPU time consumed, in seconds.",
    );
}

/// Writes `tally` (counted against `topology`) into the store and clears it;
/// remembers the pods written (namespace, name).
pub(crate) fn write(
    tsdb: &Tsdb,
    topology: &Topology,
    tally: &mut Tally,
    written: &mut BTreeSet<(String, String)>,
) {
    if tally.is_empty() {
        return;
    }
    let mut code_text = String::new();
    for ((s, backend, pod, code), n) in &tally.requests {
        let stream = &topology.streams[*s];
        let backend = backend.map(|b| &topology.backends[b]);
        let pod = pod.map(|p| &topology.pods[p]);
        let namespace = backend.map_or(stream.namespace.as_str(), |b| b.namespace.as_str());
        code_text.clear();
        code_text.push_str(&code.to_string());
        tsdb.counter_add(
            HTTP_REQUESTS_TOTAL,
            &[
                ("namespace", namespace),
                ("service", backend.map_or("", |b| b.name.as_str())),
                ("pod", pod.map_or("", |p| p.name.as_str())),
                ("code", &code_text),
                ("route", &stream.route),
            ],
            *n as f64,
        );
    }
    for ((s, b, p), histogram) in &tally.durations {
        let (stream, backend, pod) = (&topology.streams[*s], &topology.backends[*b], &topology.pods[*p]);
        let labels = [
            ("namespace", backend.namespace.as_str()),
            ("service", backend.name.as_str()),
            ("pod", pod.name.as_str()),
            ("route", stream.route.as_str()),
        ];
        for (count, sum) in histogram.counts.iter().zip(&histogram.sums) {
            if *count > 0 {
                // The slot's mean lies in the slot: same buckets, same sum.
                let mean = sum / *count as f64;
                tsdb.histogram_observe(
                    HTTP_REQUEST_DURATION_SECONDS,
                    &labels,
                    &DURATION_BUCKETS,
                    mean,
                    *count,
                );
            }
        }
    }
    for (p, seconds) in &tally.cpu_seconds {
        let pod = &topology.pods[*p];
        let Some(container) = pod.container.as_deref() else {
            continue;
        };
        tsdb.counter_add(
            CONTAINER_CPU_USAGE_SECONDS_TOTAL,
            &[
                ("namespace", pod.namespace.as_str()),
                ("pod", pod.name.as_str()),
                ("container", container),
            ],
            *seconds,
        );
        written.insert((pod.namespace.clone(), pod.name.clone()));
    }
    for (_, _, pod, _) in tally.requests.keys() {
        if let Some(p) = pod.map(|p| &topology.pods[p]) {
            written.insert((p.namespace.clone(), p.name.clone()));
        }
    }
    tally.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_a_second_up_to_scale_100() {
        assert_eq!(tick_period(1.0), TICK);
        assert_eq!(tick_period(60.0), TICK);
        assert_eq!(tick_period(100.0), TICK);
        assert_eq!(tick_period(1000.0), Duration::from_secs(10));
    }
}
