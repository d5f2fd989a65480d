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
use controllers::deployment::controller::DeploymentController;
use controllers::garbagecollector::controller::{
    FIELD_MANAGER as GC_CLIENT, GarbageCollector, deletable_resources,
};
use controllers::replicaset::controller::ReplicaSetController;
use controllers::runtime::{Client, InProcessClient, Informer, Recorder};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Node, Pod};
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
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 3,
            capacity: Capacity::default(),
            workers: 2,
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
/// `seed`; each stops when `shutdown` is cancelled.
pub fn start(
    api: &Api,
    clock: &Clock,
    sim: &SimConfig,
    seed: u64,
    shutdown: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    let informer_client = client(api, "miniplane-informers");
    let deployments = Informer::<Deployment>::new(informer_client.clone(), clock.clone(), None);
    let replicasets = Informer::<ReplicaSet>::new(informer_client.clone(), clock.clone(), None);
    let pods = Informer::<Pod>::new(informer_client.clone(), clock.clone(), None);
    let nodes = Informer::<Node>::new(informer_client, clock.clone(), None);

    let recorder =
        |c: &Arc<dyn Client>, component: &str| Recorder::new(c.clone(), clock.clone(), component, None);
    let rs_client = client(api, "replicaset-controller");
    let rs_controller = ReplicaSetController::new(
        rs_client.clone(),
        clock.clone(),
        recorder(&rs_client, "replicaset-controller"),
        &replicasets,
        &pods,
    );
    let d_client = client(api, "deployment-controller");
    let d_controller = DeploymentController::new(
        d_client.clone(),
        clock.clone(),
        recorder(&d_client, "deployment-controller"),
        &deployments,
        &replicasets,
        &pods,
    );
    // The garbage collector lists and watches every kind itself, keeping
    // only metadata in its owner graph, as upstream's monitors do.
    let gc = GarbageCollector::new(
        client(api, GC_CLIENT),
        clock.clone(),
        deletable_resources(api.registry()),
    );
    let s_client = client(api, "default-scheduler");
    let scheduler = Scheduler::new(
        s_client.clone(),
        clock.clone(),
        recorder(&s_client, "default-scheduler"),
        &pods,
        &nodes,
    );
    if sim.nodes > 0 {
        api.set_log_source(Arc::new(kubelet_logs));
    }
    let kubelet = (sim.nodes > 0).then(|| {
        kubelet_sim::run::Kubelet::new(
            client(api, "kubelet"),
            clock.clone(),
            seed,
            node_names(sim.nodes),
            sim.capacity.clone(),
            &pods,
        )
    });

    let mut handles = vec![
        deployments.run(shutdown.clone()),
        replicasets.run(shutdown.clone()),
        pods.run(shutdown.clone()),
        nodes.run(shutdown.clone()),
    ];
    handles.push(tokio::spawn(rs_controller.run(sim.workers, shutdown.clone())));
    handles.push(tokio::spawn(d_controller.run(sim.workers, shutdown.clone())));
    handles.push(tokio::spawn(gc.run(sim.workers, shutdown.clone())));
    handles.push(tokio::spawn(scheduler.run(shutdown.clone())));
    if let Some(kubelet) = kubelet {
        handles.push(tokio::spawn(kubelet.run(shutdown.clone())));
    }
    handles
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
