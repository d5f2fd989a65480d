//! The control plane's components, started around one [`Api`]: shared
//! informers, the ReplicaSet and Deployment controllers, the garbage
//! collector, the scheduler and the simulated kubelet.
//!
//! Every component is an API client (an `InProcessClient` named after it,
//! so managedFields and Events say who wrote what). Informers are shared:
//! one per kind, created first, subscribed to by every component that
//! watches the kind, and only then started — the order upstream's
//! `SharedInformerFactory` enforces.

use std::sync::Arc;

use apiserver::Api;
use apiserver::testkit::{Tasks, TestApi, TestApiBuilder};
use controllers::clusterroleaggregation::controller::{
    ClusterRoleAggregationController, FIELD_MANAGER as AGGREGATION_CLIENT,
};
use controllers::deployment::controller::DeploymentController;
use controllers::endpoint::controller::EndpointsController;
use controllers::endpointslice::controller::EndpointSliceController;
use controllers::garbagecollector::controller::{
    FIELD_MANAGER as GC_CLIENT, GarbageCollector, deletable_resources,
};
use controllers::replicaset::controller::ReplicaSetController;
use controllers::resourcequota::controller::ResourceQuotaController;
use controllers::rootcacertpublisher::controller::RootCaPublisher;
use controllers::runtime::{Client, InProcessClient, Informer, Recorder};
use controllers::serviceaccount::controller::ServiceAccountsController;
use controllers::volume::controller::PersistentVolumeController;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Namespace, Service, ServiceAccount};
use k8s_openapi::api::core::v1::{Node, Pod, ResourceQuota};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::api::storage::v1::StorageClass;
use kubelet_sim::node::Capacity;
use scheduler_stub::run::Scheduler;
use store::Clock;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

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
    /// namespace's `kube-root-ca.crt`; `None` (no certificates: plain HTTP,
    /// or an in-process [`Cluster`]) runs no publisher.
    pub root_ca: Option<String>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 3,
            capacity: Capacity::default(),
            workers: 2,
            root_ca: None,
        }
    }
}

/// The names of the simulated nodes.
pub fn node_names(count: usize) -> Vec<String> {
    (1..=count).map(|i| format!("miniplane-worker-{i}")).collect()
}

fn client(api: &Api, component: &str) -> Arc<dyn Client> {
    Arc::new(InProcessClient::new(api.clone(), component))
}

/// Starts every component, the kubelet drawing its random choices under
/// `seed`; each stops when `shutdown` is cancelled. (Tests and the
/// reliability suite start theirs with [`Cluster::builder`], which can pick
/// the components and wrap their clients.)
pub fn start(
    api: &Api,
    clock: &Clock,
    sim: &SimConfig,
    seed: u64,
    shutdown: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    let every = Components {
        controllers: true,
        scheduler: true,
    };
    start_components(api, clock, sim, seed, shutdown, &|c| client(api, c), every)
}

/// Which components run besides the kubelet (that one runs when
/// [`SimConfig::nodes`] is above 0).
#[derive(Clone, Copy, Debug)]
struct Components {
    /// The ReplicaSet and Deployment controllers and the garbage collector.
    controllers: bool,
    /// The scheduler.
    scheduler: bool,
}

/// [`start`], for the chosen components only, each component's client made
/// by `client(component)`; an informer runs when a started component reads it.
fn start_components(
    api: &Api,
    clock: &Clock,
    sim: &SimConfig,
    seed: u64,
    shutdown: &CancellationToken,
    client: &dyn Fn(&str) -> Arc<dyn Client>,
    which: Components,
) -> Vec<JoinHandle<()>> {
    let informer_client = client("miniplane-informers");
    let deployments = Informer::<Deployment>::new(informer_client.clone(), clock.clone(), None);
    let replicasets = Informer::<ReplicaSet>::new(informer_client.clone(), clock.clone(), None);
    let pods = Informer::<Pod>::new(informer_client.clone(), clock.clone(), None);
    let quotas = Informer::<ResourceQuota>::new(informer_client.clone(), clock.clone(), None);
    let nodes = Informer::<Node>::new(informer_client, clock.clone(), None);
    // Claims, volumes and classes: the persistent-volume controller's and the scheduler's.
    let claims = Informer::<PersistentVolumeClaim>::new(client("miniplane-informers"), clock.clone(), None);
    let volumes = Informer::<PersistentVolume>::new(client("miniplane-informers"), clock.clone(), None);
    let classes = Informer::<StorageClass>::new(client("miniplane-informers"), clock.clone(), None);

    // A component's client and its Event recorder, both named after it.
    let named = |component: &str| {
        let c = client(component);
        (c.clone(), Recorder::new(c, clock.clone(), component, None))
    };
    let controllers = which.controllers.then(|| {
        let (c, events) = named("replicaset-controller");
        let rs_controller = ReplicaSetController::new(c, clock.clone(), events, &replicasets, &pods);
        let (c, events) = named("deployment-controller");
        let d_controller =
            DeploymentController::new(c, clock.clone(), events, &deployments, &replicasets, &pods);
        // The garbage collector lists and watches every kind itself, keeping
        // only metadata in its owner graph, as upstream's monitors do.
        let gc = GarbageCollector::new(
            client(GC_CLIENT),
            clock.clone(),
            deletable_resources(api.registry()),
        );
        (rs_controller, d_controller, gc)
    });
    let scheduler = which.scheduler.then(|| {
        let (c, events) = named("default-scheduler");
        Scheduler::new(c, clock.clone(), events, &pods, &nodes).with_volumes(&claims, &classes)
    });
    if sim.nodes > 0 {
        api.set_log_source(Arc::new(kubelet_logs));
    }
    let kubelet = (sim.nodes > 0).then(|| {
        kubelet_sim::run::Kubelet::new(
            client("kubelet"),
            clock.clone(),
            seed,
            node_names(sim.nodes),
            sim.capacity.clone(),
            &pods,
        )
    });

    // The ResourceQuota controller: every quota's status.hard and status.used.
    let quota_controller = which.controllers.then(|| {
        let resources = deletable_resources(api.registry());
        ResourceQuotaController::new(
            client("resourcequota-controller"),
            clock.clone(),
            &quotas,
            &pods,
            resources,
        )
    });

    // What every namespace and Service gets: the default ServiceAccount,
    // kube-root-ca.crt, Endpoints and EndpointSlices.
    let namespace_controllers = which
        .controllers
        .then(|| NamespaceControllers::new(&client("miniplane-informers"), clock, sim, &pods, &client));
    // The ClusterRole aggregation controller (admin, edit, view), on its own informer.
    let aggregation = which.controllers.then(|| {
        let roles = Informer::<ClusterRole>::new(client("miniplane-informers"), clock.clone(), None);
        let c = ClusterRoleAggregationController::new(client(AGGREGATION_CLIENT), clock.clone(), &roles);
        (roles, c)
    });

    // The persistent-volume binder and its simulated provisioner.
    let volume_controller = which.controllers.then(|| {
        let (c, events) = named("persistentvolume-controller");
        PersistentVolumeController::new(c, clock.clone(), events, &claims, &volumes, &classes)
    });

    // The disruption controller (PodDisruptionBudget status), with the
    // informers only it reads; pods, ReplicaSets and Deployments are shared.
    let disruption = which.controllers.then(|| {
        use controllers::disruption::controller::{DisruptionController, DisruptionInformers};
        use k8s_openapi::api::apps::v1::StatefulSet;
        use k8s_openapi::api::core::v1::ReplicationController;
        use k8s_openapi::api::policy::v1::PodDisruptionBudget;
        let pdbs = Informer::<PodDisruptionBudget>::new(client("miniplane-informers"), clock.clone(), None);
        let rcs = Informer::<ReplicationController>::new(client("miniplane-informers"), clock.clone(), None);
        let statefulsets = Informer::<StatefulSet>::new(client("miniplane-informers"), clock.clone(), None);
        let c = client("disruption-controller");
        let events = Recorder::new(c.clone(), clock.clone(), "controllermanager", None);
        let informers = DisruptionInformers {
            pdbs: &pdbs,
            pods: &pods,
            replication_controllers: &rcs,
            replicasets: &replicasets,
            deployments: &deployments,
            statefulsets: &statefulsets,
        };
        let controller = DisruptionController::new(c, clock.clone(), events, informers);
        let informers = vec![
            pdbs.run(shutdown.clone()),
            rcs.run(shutdown.clone()),
            statefulsets.run(shutdown.clone()),
        ];
        (informers, controller)
    });

    // Every reader has subscribed: the informers start, those read only.
    let mut handles = Vec::new();
    if controllers.is_some() {
        handles.push(deployments.run(shutdown.clone()));
        handles.push(replicasets.run(shutdown.clone()));
    }
    if controllers.is_some() || scheduler.is_some() || kubelet.is_some() {
        handles.push(pods.run(shutdown.clone()));
    }
    if scheduler.is_some() {
        handles.push(nodes.run(shutdown.clone()));
    }
    if let Some((rs_controller, d_controller, gc)) = controllers {
        handles.push(tokio::spawn(rs_controller.run(sim.workers, shutdown.clone())));
        handles.push(tokio::spawn(d_controller.run(sim.workers, shutdown.clone())));
        handles.push(tokio::spawn(gc.run(sim.workers, shutdown.clone())));
    }
    if let Some(quota_controller) = quota_controller {
        handles.push(quotas.run(shutdown.clone()));
        handles.push(tokio::spawn(quota_controller.run(sim.workers, shutdown.clone())));
    }
    if let Some(namespace_controllers) = namespace_controllers {
        handles.extend(namespace_controllers.run(sim.workers, shutdown));
    }
    if let Some((informers, disruption)) = disruption {
        handles.extend(informers);
        handles.push(tokio::spawn(disruption.run(sim.workers, shutdown.clone())));
    }
    if let Some((roles, aggregation)) = aggregation {
        handles.push(roles.run(shutdown.clone()));
        handles.push(tokio::spawn(aggregation.run(sim.workers, shutdown.clone())));
    }
    if volume_controller.is_some() || scheduler.is_some() {
        handles.push(claims.run(shutdown.clone()));
        handles.push(classes.run(shutdown.clone()));
    }
    if let Some(volume_controller) = volume_controller {
        handles.push(volumes.run(shutdown.clone()));
        handles.push(tokio::spawn(volume_controller.run(sim.workers, shutdown.clone())));
    }
    if let Some(scheduler) = scheduler {
        handles.push(tokio::spawn(scheduler.run(shutdown.clone())));
    }
    if let Some(kubelet) = kubelet {
        handles.push(tokio::spawn(kubelet.run(shutdown.clone())));
    }
    handles
}

/// Starts the CSR signing controller (and its CSR informer) issuing
/// certificates from the cluster CA in `pki`; it stops when `shutdown` is
/// cancelled. Separate from [`start`] because only HTTPS has a CA.
pub fn start_csr_signer(
    api: &Api,
    clock: &Clock,
    pki: &crate::pki::Pki,
    workers: usize,
    shutdown: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    use controllers::certificates::controller::{CsrSigningController, NAME};
    use controllers::certificates::plan::DEFAULT_CERT_TTL;
    use controllers::certificates::sign::CertificateAuthority;
    use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
    let csrs =
        Informer::<CertificateSigningRequest>::new(client(api, "miniplane-informers"), clock.clone(), None);
    let ca = CertificateAuthority {
        cert: pki.ca_cert.clone(),
        key: pki.ca_key.clone(),
    };
    let signer = CsrSigningController::new(client(api, NAME), clock.clone(), ca, DEFAULT_CERT_TTL, &csrs);
    vec![
        csrs.run(shutdown.clone()),
        tokio::spawn(signer.run(workers, shutdown.clone())),
    ]
}

/// The controllers of what every namespace and Service gets, with the
/// informers only they read (pods are shared with the other components).
struct NamespaceControllers {
    informers: Vec<Box<dyn FnOnce(CancellationToken) -> JoinHandle<()> + Send>>,
    service_accounts: ServiceAccountsController,
    root_ca: Option<RootCaPublisher>,
    endpoints: EndpointsController,
    endpoint_slices: EndpointSliceController,
}

impl NamespaceControllers {
    /// Subscribes the four controllers to their informers (before any runs).
    fn new(
        informer_client: &Arc<dyn Client>,
        clock: &Clock,
        sim: &SimConfig,
        pods: &Informer<Pod>,
        client: &dyn Fn(&str) -> Arc<dyn Client>,
    ) -> Self {
        let informer = || (informer_client.clone(), clock.clone());
        let (c, k) = informer();
        let namespaces = Informer::<Namespace>::new(c, k, None);
        let (c, k) = informer();
        let accounts = Informer::<ServiceAccount>::new(c, k, None);
        let (c, k) = informer();
        let services = Informer::<Service>::new(c, k, None);
        let (c, k) = informer();
        let endpoints = Informer::<Endpoints>::new(c, k, None);
        let (c, k) = informer();
        let slices = Informer::<EndpointSlice>::new(c, k, None);
        let service_accounts = ServiceAccountsController::new(
            client(controllers::serviceaccount::controller::NAME),
            clock.clone(),
            &namespaces,
            &accounts,
        );
        let endpoints_controller = EndpointsController::new(
            client(controllers::endpoint::controller::NAME),
            clock.clone(),
            &services,
            pods,
            &endpoints,
        );
        let slices_controller = EndpointSliceController::new(
            client(controllers::endpointslice::controller::NAME),
            clock.clone(),
            &services,
            pods,
            &slices,
        );
        let mut informers: Vec<Box<dyn FnOnce(CancellationToken) -> JoinHandle<()> + Send>> = Vec::new();
        let root_ca = sim.root_ca.clone().map(|ca| {
            let (c, k) = informer();
            let config_maps = Informer::<ConfigMap>::new(c, k, None);
            let publisher = RootCaPublisher::new(
                client(controllers::rootcacertpublisher::controller::NAME),
                clock.clone(),
                ca,
                &namespaces,
                &config_maps,
            );
            informers.push(Box::new(move |stop| config_maps.run(stop)));
            publisher
        });
        informers.push(Box::new(move |stop| namespaces.run(stop)));
        informers.push(Box::new(move |stop| accounts.run(stop)));
        informers.push(Box::new(move |stop| services.run(stop)));
        informers.push(Box::new(move |stop| endpoints.run(stop)));
        informers.push(Box::new(move |stop| slices.run(stop)));
        NamespaceControllers {
            informers,
            service_accounts,
            root_ca,
            endpoints: endpoints_controller,
            endpoint_slices: slices_controller,
        }
    }

    /// Starts the informers, then the controllers.
    fn run(self, workers: usize, shutdown: &CancellationToken) -> Vec<JoinHandle<()>> {
        let mut handles: Vec<JoinHandle<()>> = self
            .informers
            .into_iter()
            .map(|run| run(shutdown.clone()))
            .collect();
        handles.push(tokio::spawn(self.service_accounts.run(workers, shutdown.clone())));
        if let Some(publisher) = self.root_ca {
            handles.push(tokio::spawn(publisher.run(workers, shutdown.clone())));
        }
        handles.push(tokio::spawn(self.endpoints.run(workers, shutdown.clone())));
        handles.push(tokio::spawn(self.endpoint_slices.run(workers, shutdown.clone())));
        handles
    }
}

/// Makes a client for a component: `(api, component name)`.
type ClientFactory = Box<dyn Fn(&Api, &str) -> Arc<dyn Client> + Send + Sync>;

/// An in-process control plane for tests and benchmarks: an API over a
/// temporary store ([`TestApi`]), the chosen components started on it, and
/// a client for the test. Stopped by [`Cluster::stop`], or (without
/// waiting) when dropped.
pub struct Cluster {
    api: Api,
    client: Arc<dyn Client>,
    tasks: Tasks,
}

/// What [`ClusterBuilder::start`] starts: by default every component, three
/// nodes, the system clock and seed 0.
pub struct ClusterBuilder {
    api: TestApiBuilder,
    seed: u64,
    sim: SimConfig,
    components: Components,
    clients: Option<ClientFactory>,
}

impl Cluster {
    /// A builder: every component, [`SimConfig::default`], the system
    /// clock, seed 0.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder {
            api: TestApi::builder(),
            seed: 0,
            sim: SimConfig::default(),
            components: Components {
                controllers: true,
                scheduler: true,
            },
            clients: None,
        }
    }

    /// The in-process API.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The one clock.
    pub fn clock(&self) -> &Clock {
        self.api.clock()
    }

    /// A client for the test, an `InProcessClient` named `test` (not made
    /// by [`ClusterBuilder::clients`]).
    pub fn client(&self) -> Arc<dyn Client> {
        self.client.clone()
    }

    /// The token every component watches; cancelling it stops them.
    pub fn shutdown(&self) -> CancellationToken {
        self.tasks.shutdown()
    }

    /// Stops every component and waits for each, at most a minute apiece
    /// (see [`Tasks::stop`]).
    pub async fn stop(self) -> Result<(), String> {
        self.tasks.stop(std::time::Duration::from_secs(60)).await
    }
}

impl ClusterBuilder {
    /// The clock of the store, the API and every component.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.api = self.api.clock(clock);
        self
    }

    /// A clock running `scale` simulated seconds per real second
    /// ([`Clock::scaled`]).
    pub fn time_scale(self, scale: f64) -> Self {
        self.clock(Clock::scaled(scale))
    }

    /// The seed of the API's uids and names and of the kubelet's choices.
    pub fn seed(mut self, seed: u64) -> Self {
        (self.api, self.seed) = (self.api.seed(seed), seed);
        self
    }

    /// Keep at most `events` events of watch history.
    pub fn history(mut self, events: usize) -> Self {
        self.api = self.api.history(events);
        self
    }

    /// Nodes, their capacity and workers per controller.
    pub fn sim(mut self, sim: SimConfig) -> Self {
        self.sim = sim;
        self
    }

    /// Simulated nodes; 0 runs no kubelet.
    pub fn nodes(mut self, nodes: usize) -> Self {
        self.sim.nodes = nodes;
        self
    }

    /// Whether the ReplicaSet and Deployment controllers and the garbage
    /// collector run.
    pub fn controllers(mut self, on: bool) -> Self {
        self.components.controllers = on;
        self
    }

    /// Whether the scheduler runs.
    pub fn scheduler(mut self, on: bool) -> Self {
        self.components.scheduler = on;
        self
    }

    /// Each component's client is `make(api, component)` instead of an
    /// `InProcessClient` named after it (the reliability suite wraps one in
    /// a `FaultyClient`).
    pub fn clients(mut self, make: impl Fn(&Api, &str) -> Arc<dyn Client> + Send + Sync + 'static) -> Self {
        self.clients = Some(Box::new(make));
        self
    }

    /// Opens the API (the default namespaces created) and starts the
    /// components.
    ///
    /// # Panics
    /// If the temporary store cannot be opened or the namespaces created.
    pub async fn start(self) -> Cluster {
        let api = self.api.build().await;
        let mut tasks = Tasks::new();
        let make = |component: &str| match &self.clients {
            Some(make) => make(&api, component),
            None => client(&api, component),
        };
        let clock = api.clock().clone();
        let started = start_components(
            &api,
            &clock,
            &self.sim,
            self.seed,
            &tasks.shutdown(),
            &make,
            self.components,
        );
        tasks.extend(started);
        Cluster {
            client: client(&api, "test"),
            api,
            tasks,
        }
    }
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
}
