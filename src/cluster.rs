//! The control plane's components, started around one [`Api`]: shared
//! informers, the built-in controllers (chosen by name, as
//! kube-controller-manager's `--controllers`), the scheduler and the
//! simulated kubelet.
//!
//! Every component is an API client (an `InProcessClient` named after it,
//! so managedFields and Events say who wrote what). Informers are shared:
//! one per kind, created first, subscribed to by every component that
//! watches the kind, and only then started — the order upstream's
//! `SharedInformerFactory` enforces. An informer no started component reads
//! is never run.
//!
//! Where to start: [`start`] for a server, [`start_components`]'s loop over
//! [`CONTROLLERS`], then `build_controller`, one arm per controller. The test
//! harness ([`Cluster`]) is in `src/harness.rs`.

use std::cell::Cell;
use std::sync::Arc;

use apiserver::Api;
use controllers::gateway::types::{Gateway, HTTPRoute};
use controllers::runtime::informer::Object;
use controllers::runtime::{Client, InProcessClient, Informer, Recorder};
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Node, PersistentVolumeClaim, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::storage::v1::StorageClass;
use kubelet_sim::node::Capacity;
use scheduler_stub::run::Scheduler;
use store::Clock;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use crate::harness::{Cluster, ClusterBuilder, HarnessError};

/// What the simulation runs.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Simulated nodes (`miniplane-worker-1` ...); 0 runs no kubelet.
    pub nodes: usize,
    /// What each node offers.
    pub capacity: Capacity,
    /// Workers per controller.
    pub workers: usize,
    /// The cluster CA certificate (PEM) the root-CA publisher puts in every
    /// namespace's `kube-root-ca.crt`; `None` (no certificates: plain HTTP)
    /// runs no publisher.
    pub root_ca: Option<String>,
    /// The cluster CA's private key (PEM) the CSR signer issues certificates
    /// with; `None` runs no signer.
    pub ca_key: Option<String>,
    /// Which built-in controllers run (`--controllers`; all by default).
    pub controllers: ControllerSelection,
    /// Whether the scheduler runs.
    pub scheduler: bool,
    /// Terminated pods the pod garbage collector keeps (`--terminated-pod-gc-threshold`; 0: all).
    pub terminated_pod_gc_threshold: usize,
    /// The simulated world's metrics: the traffic simulation writes them,
    /// the Canary and HPA controllers query them, `/metrics` and
    /// `/api/v1/query` serve them.
    pub metrics: sim_metrics::Tsdb,
    /// Mechanisms switched off on purpose (`--disable`, `--informer-lag`):
    /// the ReplicaSet controller gets the switches, every informer the lag
    /// (not the garbage collector's monitors). See
    /// `controllers::runtime::lessons` and `docs/lessons/`.
    pub lessons: controllers::runtime::lessons::Lessons,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 3,
            capacity: Capacity::default(),
            workers: 2,
            root_ca: None,
            ca_key: None,
            controllers: ControllerSelection::all(),
            scheduler: true,
            terminated_pod_gc_threshold: controllers::podgc::sync::DEFAULT_TERMINATED_POD_THRESHOLD,
            metrics: sim_metrics::Tsdb::new(),
            lessons: Default::default(),
        }
    }
}

/// The names of the simulated nodes.
pub fn node_names(count: usize) -> Vec<String> {
    (1..=count).map(|i| format!("miniplane-worker-{i}")).collect()
}

/// The built-in controllers, by kube-controller-manager's names
/// (`cmd/kube-controller-manager/names/controller_names.go`), each with the
/// older name upstream still accepts as an alias. Every one is on by
/// default (upstream's only default-off controllers, the bootstrap-token
/// signer and cleaner, are not here). Upstream controllers not listed
/// (`replicationcontroller-controller`, ...) do not exist in miniplane and
/// are refused by name. A controller upstream gives no alias has its name
/// twice. The last two are miniplane's own: the simulated Gateway API
/// implementation and the Canary (progressive delivery) controller.
pub const CONTROLLERS: [(&str, &str); 23] = [
    ("replicaset-controller", "replicaset"),
    ("deployment-controller", "deployment"),
    ("garbage-collector-controller", "garbagecollector"),
    ("resourcequota-controller", "resourcequota"),
    ("serviceaccount-controller", "serviceaccount"),
    (
        "root-ca-certificate-publisher-controller",
        "root-ca-cert-publisher",
    ),
    ("endpoints-controller", "endpoint"),
    ("endpointslice-controller", "endpointslice"),
    ("clusterrole-aggregation-controller", "clusterrole-aggregation"),
    ("persistentvolume-binder-controller", "persistentvolume-binder"),
    ("disruption-controller", "disruption"),
    ("certificatesigningrequest-signing-controller", "csrsigning"),
    ("statefulset-controller", "statefulset"),
    ("daemonset-controller", "daemonset"),
    ("job-controller", "job"),
    ("cronjob-controller", "cronjob"),
    ("ttl-after-finished-controller", "ttl-after-finished"),
    ("pod-garbage-collector-controller", "podgc"),
    ("node-lifecycle-controller", "nodelifecycle"),
    ("taint-eviction-controller", "taint-eviction-controller"),
    ("horizontal-pod-autoscaler-controller", "horizontalpodautoscaling"),
    ("gateway-controller", "gateway"),
    ("canary-controller", "canary"),
];

/// Which controllers run: kube-controller-manager's `--controllers` list.
/// `*` turns on every controller, `name` turns one on and `-name` off;
/// the first entry that names a controller decides, and a controller no
/// entry names runs only when `*` is in the list (upstream
/// `IsControllerEnabled`). Names are canonical or aliases ([`CONTROLLERS`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerSelection {
    /// `*`, or a canonical name with an optional leading `-`.
    entries: Vec<String>,
}

/// A `--controllers` entry names no known controller.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}; the known controllers are {} (or their aliases {}); `*` turns every one on, `-name` turns one off", quoted(.unknown), known_names(0), known_names(1))]
pub struct UnknownControllers {
    /// The unknown names, without their `-`.
    pub unknown: Vec<String>,
}

fn quoted(unknown: &[String]) -> String {
    let each: Vec<String> = unknown
        .iter()
        .map(|n| format!("{n:?} is not in the list of known controllers"))
        .collect();
    each.join(", ")
}

fn known_names(column: usize) -> String {
    let names: Vec<&str> = CONTROLLERS
        .iter()
        .map(|(name, alias)| if column == 0 { *name } else { *alias })
        .collect();
    names.join(", ")
}

impl ControllerSelection {
    /// Every controller (`*`).
    pub fn all() -> Self {
        ControllerSelection {
            entries: vec!["*".into()],
        }
    }

    /// No controller (an empty list).
    pub fn none() -> Self {
        ControllerSelection { entries: Vec::new() }
    }

    /// Parses a comma-separated list (`*,-deployment-controller`); empty
    /// entries are skipped, so `""` selects nothing. Every unknown name is
    /// reported, as upstream's validation does.
    pub fn parse(list: &str) -> Result<Self, UnknownControllers> {
        let mut entries = Vec::new();
        let mut unknown = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                entries.push(entry.to_string());
                continue;
            }
            let (off, name) = match entry.strip_prefix('-') {
                Some(name) => ("-", name),
                None => ("", entry),
            };
            match canonical(name) {
                Some(name) => entries.push(format!("{off}{name}")),
                None => unknown.push(name.to_string()),
            }
        }
        match unknown.is_empty() {
            true => Ok(ControllerSelection { entries }),
            false => Err(UnknownControllers { unknown }),
        }
    }

    /// Whether the controller `name` (canonical) runs.
    pub fn enabled(&self, name: &str) -> bool {
        let mut star = false;
        for entry in &self.entries {
            if entry == name {
                return true;
            }
            if entry.strip_prefix('-') == Some(name) {
                return false;
            }
            star |= entry == "*";
        }
        star
    }

    /// The canonical names of the controllers that run, in [`CONTROLLERS`] order.
    pub fn names(&self) -> Vec<&'static str> {
        CONTROLLERS
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| self.enabled(name))
            .collect()
    }
}

impl Default for ControllerSelection {
    fn default() -> Self {
        ControllerSelection::all()
    }
}

impl std::str::FromStr for ControllerSelection {
    type Err = UnknownControllers;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ControllerSelection::parse(s)
    }
}

/// The canonical name of a controller named by its name or its alias.
fn canonical(name: &str) -> Option<&'static str> {
    CONTROLLERS
        .iter()
        .find(|(canonical, alias)| *canonical == name || *alias == name)
        .map(|(canonical, _)| *canonical)
}

fn client(api: &Api, component: &str) -> Arc<dyn Client> {
    Arc::new(InProcessClient::new(api.clone(), component))
}

/// Starts every component `sim` selects, the kubelet drawing its random
/// choices under `seed`; each stops when `shutdown` is cancelled.
pub fn start(
    api: &Api,
    clock: &Clock,
    sim: &SimConfig,
    seed: u64,
    shutdown: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    start_components(api, clock, sim, seed, shutdown, &|c| client(api, c))
}

/// An informer of one kind shared by the components that read it; it runs
/// only if one of them asked for it (the `Cell`: set while the components
/// are built, on one thread, before anything runs).
struct Shared<K> {
    informer: Informer<K>,
    used: Cell<bool>,
}

impl<K: Object> Shared<K> {
    fn new(informer: Informer<K>) -> Self {
        Shared {
            informer,
            used: Cell::new(false),
        }
    }

    /// The informer, for a component to subscribe to.
    fn get(&self) -> &Informer<K> {
        self.used.set(true);
        &self.informer
    }

    /// Runs the informer if a component subscribed.
    fn run(self, shutdown: &CancellationToken) -> Option<JoinHandle<()>> {
        self.used.get().then(|| self.informer.run(shutdown.clone()))
    }
}

/// The informers more than one component reads.
struct Informers {
    deployments: Shared<Deployment>,
    replicasets: Shared<ReplicaSet>,
    pods: Shared<Pod>,
    nodes: Shared<Node>,
    claims: Shared<PersistentVolumeClaim>,
    classes: Shared<StorageClass>,
    namespaces: Shared<Namespace>,
    services: Shared<Service>,
    statefulsets: Shared<StatefulSet>,
    daemonsets: Shared<DaemonSet>,
    jobs: Shared<Job>,
    revisions: Shared<ControllerRevision>,
    slices: Shared<EndpointSlice>,
    routes: Shared<HTTPRoute>,
    gateways: Shared<Gateway>,
}

impl Informers {
    /// One not yet running informer per kind, each with a client from `client`.
    fn new(client: &dyn Fn() -> Arc<dyn Client>, clock: &Clock) -> Self {
        fn shared<K: Object>(client: &dyn Fn() -> Arc<dyn Client>, clock: &Clock) -> Shared<K> {
            Shared::new(Informer::new(client(), clock.clone(), None))
        }
        Informers {
            deployments: shared(client, clock),
            replicasets: shared(client, clock),
            pods: shared(client, clock),
            nodes: shared(client, clock),
            claims: shared(client, clock),
            classes: shared(client, clock),
            namespaces: shared(client, clock),
            services: shared(client, clock),
            statefulsets: shared(client, clock),
            daemonsets: shared(client, clock),
            jobs: shared(client, clock),
            revisions: shared(client, clock),
            slices: shared(client, clock),
            routes: shared(client, clock),
            gateways: shared(client, clock),
        }
    }

    fn run(self, shutdown: &CancellationToken) -> Vec<JoinHandle<()>> {
        [
            self.deployments.run(shutdown),
            self.replicasets.run(shutdown),
            self.pods.run(shutdown),
            self.nodes.run(shutdown),
            self.claims.run(shutdown),
            self.classes.run(shutdown),
            self.namespaces.run(shutdown),
            self.services.run(shutdown),
            self.statefulsets.run(shutdown),
            self.daemonsets.run(shutdown),
            self.jobs.run(shutdown),
            self.revisions.run(shutdown),
            self.slices.run(shutdown),
            self.routes.run(shutdown),
            self.gateways.run(shutdown),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// What a built component does when started: run its own informers (those
/// no other component reads) and itself; returns their tasks.
type Run = Box<dyn FnOnce(&CancellationToken) -> Vec<JoinHandle<()>> + Send>;

/// What every component is built with.
struct Context<'a> {
    clock: &'a Clock,
    sim: &'a SimConfig,
    client: &'a dyn Fn(&str) -> Arc<dyn Client>,
    informers: &'a Informers,
    api: &'a Api,
}

impl Context<'_> {
    /// A component's client and its Event recorder, both named after it.
    fn named(&self, component: &str) -> (Arc<dyn Client>, Recorder) {
        let c = (self.client)(component);
        (c.clone(), Recorder::new(c, self.clock.clone(), component, None))
    }

    /// An informer only one component reads.
    fn own<K: Object>(&self) -> Informer<K> {
        Informer::new(self.lagged("miniplane-informers"), self.clock.clone(), None)
    }

    /// The client an informer lists and watches through: its watches lag by
    /// `--informer-lag`.
    fn lagged(&self, component: &str) -> Arc<dyn Client> {
        let lag = self.sim.lessons.informer_lag;
        controllers::runtime::lessons::lag_watches((self.client)(component), self.clock, lag)
    }
}

/// [`start`], each component's client made by `client(component)`: the
/// controllers `sim.controllers` selects, in [`CONTROLLERS`] order, then the
/// scheduler and the kubelet; the shared informers start once every
/// component has subscribed.
pub fn start_components(
    api: &Api,
    clock: &Clock,
    sim: &SimConfig,
    seed: u64,
    shutdown: &CancellationToken,
    client: &dyn Fn(&str) -> Arc<dyn Client>,
) -> Vec<JoinHandle<()>> {
    // `--informer-lag`: every informer lists and watches through a client
    // whose watch events arrive late (only watches; writes are not delayed).
    let lag = sim.lessons.informer_lag;
    let lagged = |c: &str| controllers::runtime::lessons::lag_watches(client(c), clock, lag);
    let informers = Informers::new(&|| lagged("miniplane-informers"), clock);
    if sim.lessons.any() {
        tracing::warn!(
            "lessons: {} (mechanisms switched off on purpose; see docs/lessons/)",
            sim.lessons.describe()
        );
    }
    let cx = Context {
        clock,
        sim,
        client,
        informers: &informers,
        api,
    };
    let mut runs: Vec<Run> = sim
        .controllers
        .names()
        .into_iter()
        .filter_map(|name| build_controller(name, &cx))
        .collect();
    if sim.scheduler {
        let (c, events) = cx.named("default-scheduler");
        let i = &informers;
        let scheduler = Scheduler::new(c, clock.clone(), events, i.pods.get(), i.nodes.get())
            .with_volumes(i.claims.get(), i.classes.get());
        runs.push(Box::new(move |stop| {
            vec![tokio::spawn(scheduler.run(stop.clone()))]
        }));
    }
    if sim.nodes > 0 {
        api.set_log_source(Arc::new(kubelet_logs));
        let kubelet = kubelet_sim::run::Kubelet::new(
            client("kubelet"),
            clock.clone(),
            seed,
            node_names(sim.nodes),
            sim.capacity.clone(),
            informers.pods.get(),
        )
        .with_node_informer(informers.nodes.get());
        let i = &informers;
        let traffic = kubelet_sim::traffic::run::Traffic::new(
            clock.clone(),
            seed,
            sim.metrics.clone(),
            i.routes.get(),
            i.gateways.get(),
            i.services.get(),
            i.slices.get(),
            i.pods.get(),
        );
        runs.push(Box::new(move |stop| {
            vec![
                tokio::spawn(kubelet.run(stop.clone())),
                tokio::spawn(traffic.run(stop.clone())),
            ]
        }));
    }
    // Every reader has subscribed: the shared informers start, those read only.
    let mut handles = informers.run(shutdown);
    for run in runs {
        handles.extend(run(shutdown));
    }
    handles
}

/// Builds the controller `name` (canonical), subscribed to its informers;
/// `None` when it cannot run here (the root-CA publisher and the CSR signer
/// without a cluster CA).
#[allow(clippy::too_many_lines, reason = "one short arm per controller, in one place")]
fn build_controller(name: &str, cx: &Context<'_>) -> Option<Run> {
    use controllers::garbagecollector::controller::deletable_resources;
    let (clock, workers, i) = (cx.clock.clone(), cx.sim.workers, cx.informers);
    // Spawns `controller.run(workers, token)` after starting `informers`.
    macro_rules! run {
        ($controller:expr $(, $informer:expr)*) => {{
            let controller = $controller;
            Box::new(move |stop: &CancellationToken| {
                let informers = [$($informer.run(stop.clone())),*];
                let controller = tokio::spawn(controller.run(workers, stop.clone()));
                informers.into_iter().chain([controller]).collect()
            }) as Run
        }};
    }
    Some(match name {
        "replicaset-controller" => {
            use controllers::replicaset::controller::ReplicaSetController;
            let (c, events) = cx.named(name);
            let (sets, pods, lessons) = (i.replicasets.get(), i.pods.get(), &cx.sim.lessons);
            run!(ReplicaSetController::with_lessons(
                c, clock, events, sets, pods, lessons
            ))
        }
        "deployment-controller" => {
            use controllers::deployment::controller::DeploymentController;
            let (c, events) = cx.named(name);
            let (d, rs, pods) = (i.deployments.get(), i.replicasets.get(), i.pods.get());
            run!(DeploymentController::new(c, clock, events, d, rs, pods))
        }
        "garbage-collector-controller" => {
            // It lists and watches every kind itself, keeping only metadata
            // in its owner graph, as upstream's monitors do.
            use controllers::garbagecollector::controller::{FIELD_MANAGER, GarbageCollector};
            let resources = deletable_resources(cx.api.registry());
            // Follows the registry: a CRD's resources get monitors once served.
            run!(
                GarbageCollector::new((cx.client)(FIELD_MANAGER), clock, resources)
                    .following(cx.api.registry().clone())
            )
        }
        "resourcequota-controller" => {
            use controllers::resourcequota::controller::ResourceQuotaController;
            use k8s_openapi::api::core::v1::ResourceQuota;
            let quotas = cx.own::<ResourceQuota>();
            let resources = deletable_resources(cx.api.registry());
            let c = (cx.client)(name);
            run!(
                ResourceQuotaController::new(c, clock, &quotas, i.pods.get(), resources),
                quotas
            )
        }
        "serviceaccount-controller" => {
            use controllers::serviceaccount::controller::{NAME, ServiceAccountsController};
            use k8s_openapi::api::core::v1::ServiceAccount;
            let accounts = cx.own::<ServiceAccount>();
            let c = (cx.client)(NAME);
            run!(
                ServiceAccountsController::new(c, clock, i.namespaces.get(), &accounts),
                accounts
            )
        }
        "root-ca-certificate-publisher-controller" => {
            use controllers::rootcacertpublisher::controller::{NAME, RootCaPublisher};
            use k8s_openapi::api::core::v1::ConfigMap;
            let ca = cx.sim.root_ca.clone()?;
            let config_maps = cx.own::<ConfigMap>();
            let c = (cx.client)(NAME);
            run!(
                RootCaPublisher::new(c, clock, ca, i.namespaces.get(), &config_maps),
                config_maps
            )
        }
        "endpoints-controller" => {
            use controllers::endpoint::controller::{EndpointsController, NAME};
            use k8s_openapi::api::core::v1::Endpoints;
            let endpoints = cx.own::<Endpoints>();
            let c = (cx.client)(NAME);
            run!(
                EndpointsController::new(c, clock, i.services.get(), i.pods.get(), &endpoints),
                endpoints
            )
        }
        "endpointslice-controller" => {
            use controllers::endpointslice::controller::{EndpointSliceController, NAME};
            let c = (cx.client)(NAME);
            let slices = i.slices.get();
            run!(EndpointSliceController::new(
                c,
                clock,
                i.services.get(),
                i.pods.get(),
                slices
            ))
        }
        "clusterrole-aggregation-controller" => {
            use controllers::clusterroleaggregation::controller::{
                ClusterRoleAggregationController, FIELD_MANAGER,
            };
            use k8s_openapi::api::rbac::v1::ClusterRole;
            let roles = cx.own::<ClusterRole>();
            let c = (cx.client)(FIELD_MANAGER);
            run!(ClusterRoleAggregationController::new(c, clock, &roles), roles)
        }
        "persistentvolume-binder-controller" => {
            // The binder and its simulated provisioner.
            use controllers::volume::controller::PersistentVolumeController;
            use k8s_openapi::api::core::v1::PersistentVolume;
            let volumes = cx.own::<PersistentVolume>();
            let (c, events) = cx.named("persistentvolume-controller");
            let (claims, classes) = (i.claims.get(), i.classes.get());
            run!(
                PersistentVolumeController::new(c, clock, events, claims, &volumes, classes),
                volumes
            )
        }
        "disruption-controller" => {
            // PodDisruptionBudget status, with the informers only it reads.
            use controllers::disruption::controller::{DisruptionController, DisruptionInformers};
            use k8s_openapi::api::core::v1::ReplicationController;
            use k8s_openapi::api::policy::v1::PodDisruptionBudget;
            let pdbs = cx.own::<PodDisruptionBudget>();
            let rcs = cx.own::<ReplicationController>();
            let c = (cx.client)(name);
            let events = Recorder::new(c.clone(), clock.clone(), "controllermanager", None);
            let informers = DisruptionInformers {
                pdbs: &pdbs,
                pods: i.pods.get(),
                replication_controllers: &rcs,
                replicasets: i.replicasets.get(),
                deployments: i.deployments.get(),
                statefulsets: i.statefulsets.get(),
            };
            run!(DisruptionController::new(c, clock, events, informers), pdbs, rcs)
        }
        "certificatesigningrequest-signing-controller" => {
            // kube-apiserver-client(-kubelet) certificates from the cluster CA.
            use controllers::certificates::controller::{CsrSigningController, NAME};
            use controllers::certificates::plan::DEFAULT_CERT_TTL;
            use controllers::certificates::sign::CertificateAuthority;
            use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
            let ca = CertificateAuthority {
                cert: cx.sim.root_ca.clone()?,
                key: cx.sim.ca_key.clone()?,
            };
            let csrs = cx.own::<CertificateSigningRequest>();
            let c = (cx.client)(NAME);
            run!(
                CsrSigningController::new(c, clock, ca, DEFAULT_CERT_TTL, &csrs),
                csrs
            )
        }
        "statefulset-controller" => {
            use controllers::statefulset::controller::StatefulSetController;
            let (c, events) = cx.named(name);
            let (sets, pods) = (i.statefulsets.get(), i.pods.get());
            let (revisions, claims) = (i.revisions.get(), i.claims.get());
            run!(StatefulSetController::new(
                c, clock, events, sets, pods, revisions, claims
            ))
        }
        "daemonset-controller" => {
            use controllers::daemon::controller::DaemonSetsController;
            let (c, events) = cx.named(name);
            let (sets, pods) = (i.daemonsets.get(), i.pods.get());
            let (nodes, revisions) = (i.nodes.get(), i.revisions.get());
            run!(DaemonSetsController::new(
                c, clock, events, sets, pods, nodes, revisions
            ))
        }
        "job-controller" => {
            use controllers::job::controller::JobController;
            let (c, events) = cx.named(name);
            run!(JobController::new(c, clock, events, i.jobs.get(), i.pods.get()))
        }
        "cronjob-controller" => {
            use controllers::cronjob::controller::CronJobController;
            use k8s_openapi::api::batch::v1::CronJob;
            let cronjobs = cx.own::<CronJob>();
            let (c, events) = cx.named(name);
            run!(
                CronJobController::new(c, clock, events, &cronjobs, i.jobs.get()),
                cronjobs
            )
        }
        "ttl-after-finished-controller" => {
            use controllers::ttlafterfinished::controller::TtlAfterFinishedController;
            let (c, events) = cx.named(name);
            run!(TtlAfterFinishedController::new(c, clock, events, i.jobs.get()))
        }
        "pod-garbage-collector-controller" => {
            use controllers::podgc::controller::PodGcController;
            let c = (cx.client)(name);
            let threshold = cx.sim.terminated_pod_gc_threshold;
            run!(
                PodGcController::new(c, clock, i.pods.get(), i.nodes.get())
                    .with_terminated_pod_threshold(threshold)
            )
        }
        "node-lifecycle-controller" => {
            use controllers::nodelifecycle::controller::NodeLifecycleController;
            use k8s_openapi::api::coordination::v1::Lease;
            let leases = cx.own::<Lease>();
            // Upstream's event source for this controller is `node-controller`.
            let (c, events) = cx.named("node-controller");
            let (nodes, pods) = (i.nodes.get(), i.pods.get());
            run!(
                NodeLifecycleController::new(c, clock, events, nodes, pods, &leases),
                leases
            )
        }
        "taint-eviction-controller" => {
            use controllers::tainteviction::controller::TaintEvictionController;
            let (c, events) = cx.named(name);
            run!(TaintEvictionController::new(
                c,
                clock,
                events,
                i.nodes.get(),
                i.pods.get()
            ))
        }
        "horizontal-pod-autoscaler-controller" => {
            use controllers::podautoscaler::controller::HorizontalController;
            use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
            let hpas = cx.own::<HorizontalPodAutoscaler>();
            // Upstream's client and event source for this controller is `horizontal-pod-autoscaler`.
            let (c, events) = cx.named(controllers::podautoscaler::controller::NAME);
            let metrics = Arc::new(cx.sim.metrics.clone());
            run!(
                HorizontalController::new(c, clock, events, &hpas, i.pods.get(), metrics),
                hpas
            )
        }
        "gateway-controller" => {
            use controllers::gateway::controller::{GatewayController, NAME};
            use controllers::gateway::types::GatewayClass;
            let classes = cx.own::<GatewayClass>();
            let c = (cx.client)(NAME);
            let (gateways, routes) = (i.gateways.get(), i.routes.get());
            run!(
                GatewayController::new(c, clock, &classes, gateways, routes, i.services.get()),
                classes
            )
        }
        "canary-controller" => {
            use controllers::canary::controller::CanaryController;
            use controllers::canary::types::Canary;
            let canaries = cx.own::<Canary>();
            let (c, events) = cx.named(name);
            let (deployments, jobs, routes) = (i.deployments.get(), i.jobs.get(), i.routes.get());
            let metrics = Arc::new(cx.sim.metrics.clone());
            run!(
                CanaryController::new(c, clock, events, &canaries, deployments, jobs, routes, metrics),
                canaries
            )
        }
        // `names()` yields only the names above.
        other => unreachable!("{other} is in CONTROLLERS but has no arm"),
    })
}

/// The simulated kubelet's container logs, for `kubectl logs`.
fn kubelet_logs(
    pod: &serde_json::Value,
    container: &str,
    previous: bool,
    now: std::time::SystemTime,
) -> Vec<(String, String)> {
    let Ok(pod) = serde_json::from_value::<Pod>(pod.clone()) else {
        return Vec::new();
    };
    let now = jiff::Timestamp::try_from(now).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let lines = if previous {
        kubelet_sim::logs::previous_log_lines(&pod, container, now)
    } else {
        kubelet_sim::logs::log_lines(&pod, container, now)
    };
    lines
        .into_iter()
        .map(|(t, line)| (t.strftime("%Y-%m-%dT%H:%M:%S%.9fZ").to_string(), line))
        .collect()
}

#[cfg(test)]
mod tests {
    //! The whole control plane on paused tokio time: the clock jumps to the
    //! next timer whenever every task waits, so simulated minutes of image
    //! pulls, readiness and grace periods pass without real waiting.

    use std::time::Duration;

    use apiserver::api::{PatchType, WriteOptions};
    use serde_json::{Value, json};

    use super::*;

    /// Waits (in simulated time, at most ten minutes) until `done` holds for Deployment `web`.
    async fn wait_for(api: &Api, clock: &Clock, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deployments = api.resource("apps", "v1", "deployments").unwrap();
        for _ in 0..600 {
            let d = api.get(&deployments, Some("default"), "web").unwrap();
            if done(&d) {
                return d;
            }
            clock.sleep(Duration::from_secs(1)).await;
        }
        panic!("deployment web: {what} not reached in ten simulated minutes");
    }

    fn complete(d: &Value, image: &str, replicas: u64) -> bool {
        let status = |k: &str| d["status"][k].as_u64().unwrap_or(0);
        d["spec"]["template"]["spec"]["containers"][0]["image"] == image
            && d["status"]["observedGeneration"] == d["metadata"]["generation"]
            && status("updatedReplicas") == replicas
            && status("availableReplicas") == replicas
            && status("replicas") == replicas
    }

    #[tokio::test(start_paused = true)]
    async fn a_rolling_update_runs_on_paused_time() {
        let cluster = Cluster::builder().seed(1).start().await;
        let (api, clock) = (cluster.api(), cluster.clock());

        let started = clock.now();
        let opts = WriteOptions {
            field_manager: Some("test".into()),
            ..Default::default()
        };
        let deployments = api.resource("apps", "v1", "deployments").unwrap();
        let body = json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}}
        });
        api.create(&deployments, Some("default"), body, &opts)
            .await
            .unwrap();
        wait_for(api, clock, "first rollout", |d| complete(d, "nginx:1", 6)).await;

        let patch =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}});
        api.patch(
            &deployments,
            Some("default"),
            "web",
            PatchType::Merge,
            &patch,
            None,
            &opts,
        )
        .await
        .unwrap();
        let d = wait_for(api, clock, "rolling update", |d| complete(d, "nginx:2", 6)).await;
        assert_eq!(
            d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
            "2"
        );

        // Image pulls take simulated seconds each: the rollouts took simulated time, not real time.
        let took = clock.now().duration_since(started).unwrap();
        assert!(took >= Duration::from_secs(2), "{took:?}");
        let pods = api.resource("", "v1", "pods").unwrap();
        let listed = api.list(&pods, Some("default"), &Default::default()).unwrap();
        let running: Vec<_> = listed
            .items
            .iter()
            .filter(|p| p["status"]["phase"] == "Running" && p["metadata"]["deletionTimestamp"].is_null())
            .collect();
        assert_eq!(running.len(), 6);
        assert!(
            running
                .iter()
                .all(|p| p["spec"]["containers"][0]["image"] == "nginx:2")
        );

        cluster.stop().await.unwrap();
    }

    #[test]
    fn controllers_are_chosen_as_kube_controller_managers_flag_does() {
        let on = |list: &str| ControllerSelection::parse(list).unwrap().names();
        assert_eq!(on("*").len(), CONTROLLERS.len());
        assert!(on("").is_empty());
        assert_eq!(
            on("deployment,replicaset-controller"),
            ["replicaset-controller", "deployment-controller"]
        );
        let without = on("*,-deployment-controller");
        assert_eq!(without.len(), CONTROLLERS.len() - 1);
        assert!(!without.contains(&"deployment-controller"));
        // The first entry naming a controller decides.
        assert!(on("-garbagecollector,*,garbage-collector-controller").len() == CONTROLLERS.len() - 1);
        assert_eq!(on("csrsigning"), ["certificatesigningrequest-signing-controller"]);
    }

    #[test]
    fn unknown_controllers_are_each_named_with_the_known_ones() {
        let err = ControllerSelection::parse("*,-bootstrap-signer-controller,bogus").unwrap_err();
        assert_eq!(err.unknown, ["bootstrap-signer-controller", "bogus"]);
        let text = err.to_string();
        assert!(
            text.starts_with(
                "\"bootstrap-signer-controller\" is not in the list of known controllers, \"bogus\" is not in the list of known controllers; the known controllers are replicaset-controller, deployment-controller,"
            ),
            "{text}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn every_controller_has_a_builder_arm() {
        let cluster = Cluster::builder().nodes(0).start().await;
        let api = cluster.api().clone();
        let sim = SimConfig {
            root_ca: Some("ca".into()),
            ca_key: Some("key".into()),
            ..SimConfig::default()
        };
        let make = |c: &str| client(&api, c);
        let informers = Informers::new(&|| make("i"), api.clock());
        let cx = Context {
            clock: api.clock(),
            sim: &sim,
            client: &make,
            informers: &informers,
            api: &api,
        };
        for (name, _) in CONTROLLERS {
            assert!(build_controller(name, &cx).is_some(), "{name}");
        }
        cluster.stop().await.unwrap();
    }
}
