//! The scheduler and the simulated kubelet together against a real
//! `apiserver::Api` on a temporary store: pods are bound, started, shown
//! Running, deleted; unschedulable pods wait for a bigger node; nodes
//! heartbeat and renew their Leases.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apiserver::testkit::{Tasks, TestApi};
use controllers::runtime::{Client, InProcessClient, Informer, ListParams, Recorder, Typed};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kubelet_sim::{Capacity, Kubelet, node_object};
use scheduler_stub::Scheduler;
use serde_json::json;
use store::Clock;
use tokio::time::timeout;

/// Simulated seconds per real second: a 10 s heartbeat is 50 ms.
const SCALE: f64 = 200.0;
const NODES: [&str; 3] = ["sim-node-1", "sim-node-2", "sim-node-3"];

/// A running scheduler and kubelet (or just a scheduler).
struct Cluster {
    client: Arc<dyn Client>,
    clock: Clock,
    tasks: Tasks,
}

impl Cluster {
    async fn start(with_kubelet: bool) -> Cluster {
        let cluster = Cluster::new().await;
        cluster.run(with_kubelet).await
    }

    async fn new() -> Cluster {
        let clock = Clock::scaled(SCALE);
        let api = TestApi::builder()
            .clock(clock.clone())
            .history(10_000)
            .build()
            .await;
        Cluster {
            client: Arc::new(InProcessClient::new(api, "test")),
            clock,
            tasks: Tasks::new(),
        }
    }

    async fn run(mut self, with_kubelet: bool) -> Cluster {
        let (client, clock) = (self.client.clone(), self.clock.clone());
        let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let nodes = Informer::<Node>::new(client.clone(), clock.clone(), None);
        let recorder = Recorder::new(client.clone(), clock.clone(), "default-scheduler", None);
        let scheduler = Scheduler::new(client.clone(), clock.clone(), recorder, &pods, &nodes);
        if with_kubelet {
            let names = NODES.iter().map(|n| n.to_string()).collect();
            let kubelet = Kubelet::new(
                client.clone(),
                clock.clone(),
                0,
                names,
                Capacity::default(),
                &pods,
            );
            self.tasks.spawn(|stop| kubelet.run(stop));
        }
        self.tasks.spawn(|stop| scheduler.run(stop));
        self.tasks.push(pods.run(self.tasks.shutdown()));
        self.tasks.push(nodes.run(self.tasks.shutdown()));
        self
    }

    async fn stop(self) {
        let stopped = self.tasks.stop(Duration::from_secs(10)).await;
        stopped.expect("every task stops within 10 s, without panicking");
    }

    /// Waits until the kubelet's three nodes are registered and Ready.
    async fn wait_for_nodes(&self) {
        let nodes = Typed::<Node>::new(self.client.clone());
        self.eventually("three Ready nodes", || async {
            let list = nodes.list(None, &ListParams::default()).await.unwrap();
            list.iter().filter(|n| node_ready(n)).count() == NODES.len()
        })
        .await;
    }

    fn pods(&self) -> Typed<Pod> {
        Typed::new(self.client.clone())
    }

    async fn pod(&self, name: &str) -> Option<Pod> {
        self.pods().get(Some("default"), name).await.ok()
    }

    async fn events(&self, reason: &str) -> Vec<Event> {
        let all = Typed::<Event>::new(self.client.clone())
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        all.into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .collect()
    }

    /// Polls `cond` every 20 ms of real time, for at most 10 s.
    async fn eventually<F, Fut>(&self, what: &str, mut cond: F)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = bool>,
    {
        let poll = async {
            while !cond().await {
                self.clock.sleep(self.clock_step()).await;
            }
        };
        timeout(Duration::from_secs(10), poll)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for: {what}"));
    }

    fn clock_step(&self) -> Duration {
        Duration::from_millis(20).mul_f64(SCALE)
    }
}

fn pod(name: &str, cpu: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{
            "name": "app", "image": "nginx:1.27",
            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
        }]},
    }))
    .unwrap()
}

fn condition(pod: &Pod, type_: &str) -> Option<(String, Option<String>, Option<String>)> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let c = conditions.iter().find(|c| c.type_ == type_)?;
    Some((c.status.clone(), c.reason.clone(), c.message.clone()))
}

fn is_true(pod: &Pod, type_: &str) -> bool {
    condition(pod, type_).is_some_and(|c| c.0 == "True")
}

fn node_of(pod: &Pod) -> Option<String> {
    pod.spec.as_ref()?.node_name.clone()
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_is_bound_started_and_shown_running() {
    let cluster = Cluster::start(true).await;
    cluster
        .pods()
        .create(Some("default"), &pod("web", "100m"))
        .await
        .unwrap();
    cluster
        .eventually("web Running and Ready", || async {
            cluster
                .pod("web")
                .await
                .is_some_and(|p| phase(&p) == Some("Running") && is_true(&p, "Ready"))
        })
        .await;

    let web = cluster.pod("web").await.unwrap();
    let node = node_of(&web).expect("bound");
    assert!(NODES.contains(&node.as_str()), "{node}");
    for c in ["PodScheduled", "Initialized", "ContainersReady", "Ready"] {
        assert!(is_true(&web, c), "{c} is True");
    }
    let status = web.status.as_ref().unwrap();
    assert!(status.pod_ip.as_deref().is_some_and(|ip| !ip.is_empty()));
    let containers = status.container_statuses.as_ref().unwrap();
    assert!(containers[0].ready && containers[0].state.as_ref().unwrap().running.is_some());

    let obj = serde_json::to_value(&web).unwrap();
    let now = jiff::Timestamp::try_from(cluster.clock.now()).unwrap();
    let pods = apiserver::Registry::new().get("", "v1", "pods").unwrap();
    let cells = apiserver::table::printer_for(&pods).row_cells(&obj, now);
    assert_eq!(
        (cells[1].as_str(), cells[2].as_str()),
        (Some("1/1"), Some("Running"))
    );

    // Settled: a minute later nothing was rewritten (no status ping-pong).
    let rv = web.metadata.resource_version.clone();
    cluster.clock.sleep(Duration::from_secs(60)).await;
    let later = cluster.pod("web").await.unwrap();
    assert_eq!(later.metadata.resource_version, rv);

    cluster
        .eventually("Scheduled and Started events", || async {
            !cluster.events("Scheduled").await.is_empty() && !cluster.events("Started").await.is_empty()
        })
        .await;
    let scheduled = cluster.events("Scheduled").await;
    assert_eq!(scheduled.len(), 1);
    let expected = format!("Successfully assigned default/web to {node}");
    assert_eq!(scheduled[0].message.as_deref(), Some(expected.as_str()));
    let started = cluster.events("Started").await;
    assert_eq!(started.len(), 1, "kubelet events are recorded");
    let source = started[0].source.as_ref().unwrap();
    assert_eq!(source.component.as_deref(), Some("kubelet"));
    assert_eq!(source.host.as_deref(), Some(node.as_str()));
    assert_eq!(
        started[0].involved_object.field_path.as_deref(),
        Some("spec.containers{app}")
    );
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_too_big_for_every_node_waits_for_a_bigger_node() {
    let cluster = Cluster::start(true).await;
    cluster.wait_for_nodes().await;
    cluster
        .pods()
        .create(Some("default"), &pod("huge", "8"))
        .await
        .unwrap();
    cluster
        .eventually("PodScheduled=False/Unschedulable", || async {
            let Some(p) = cluster.pod("huge").await else {
                return false;
            };
            condition(&p, "PodScheduled")
                .is_some_and(|c| c.0 == "False" && c.1.as_deref() == Some("Unschedulable"))
        })
        .await;
    let huge = cluster.pod("huge").await.unwrap();
    assert_eq!(node_of(&huge), None);
    let message = condition(&huge, "PodScheduled").unwrap().2.unwrap();
    assert!(message.contains("Insufficient cpu"), "{message}");
    assert!(message.starts_with("0/3 nodes are available"), "{message}");
    // Events are written in the background: wait for it.
    cluster
        .eventually(
            "a Warning FailedScheduling with the condition's message",
            || async {
                let failed = cluster.events("FailedScheduling").await;
                failed.iter().any(|e| {
                    e.message.as_deref() == Some(message.as_str()) && e.type_.as_deref() == Some("Warning")
                })
            },
        )
        .await;

    // A bigger node, made by hand (no kubelet serves it).
    let big = Capacity {
        cpu: "16".into(),
        ..Capacity::default()
    };
    let now = jiff::Timestamp::try_from(cluster.clock.now()).unwrap();
    Typed::<Node>::new(cluster.client.clone())
        .create(None, &node_object("big-node", &big, now))
        .await
        .unwrap();
    cluster
        .eventually("huge bound to big-node", || async {
            cluster.pod("huge").await.and_then(|p| node_of(&p)).as_deref() == Some("big-node")
        })
        .await;
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_running_pod_ends_with_the_pod_gone() {
    let cluster = Cluster::start(true).await;
    cluster
        .pods()
        .create(Some("default"), &pod("doomed", "100m"))
        .await
        .unwrap();
    cluster
        .eventually("doomed Running", || async {
            cluster
                .pod("doomed")
                .await
                .is_some_and(|p| phase(&p) == Some("Running"))
        })
        .await;
    // The default (graceful) delete only marks the pod; the kubelet finishes it.
    cluster.pods().delete(Some("default"), "doomed").await.unwrap();
    cluster
        .eventually("doomed gone", || async { cluster.pod("doomed").await.is_none() })
        .await;
    cluster
        .eventually("a Killing event", || async {
            !cluster.events("Killing").await.is_empty()
        })
        .await;
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_are_ready_and_their_leases_renew() {
    let cluster = Cluster::start(true).await;
    let nodes = Typed::<Node>::new(cluster.client.clone());
    let leases = Typed::<Lease>::new(cluster.client.clone());
    cluster
        .eventually("three Ready nodes with leases", || async {
            let ready = nodes
                .list(None, &ListParams::default())
                .await
                .unwrap()
                .iter()
                .filter(|n| node_ready(n))
                .count();
            let leased = leases
                .list(Some("kube-node-lease"), &ListParams::default())
                .await
                .unwrap()
                .len();
            ready == 3 && leased == 3
        })
        .await;
    let renew_time = |l: &Lease| l.spec.as_ref().and_then(|s| s.renew_time.clone()).map(|t| t.0);
    let first = renew_time(&leases.get(Some("kube-node-lease"), NODES[0]).await.unwrap()).unwrap();
    let heartbeat = |n: &Node| {
        let conditions = n.status.as_ref()?.conditions.as_ref()?;
        let ready = conditions.iter().find(|c| c.type_ == "Ready")?;
        ready.last_heartbeat_time.clone().map(|t| t.0)
    };
    let first_beat = heartbeat(&nodes.get(None, NODES[0]).await.unwrap()).unwrap();
    cluster
        .eventually("lease and node heartbeat renewed", || async {
            let lease = leases.get(Some("kube-node-lease"), NODES[0]).await.unwrap();
            let node = nodes.get(None, NODES[0]).await.unwrap();
            renew_time(&lease).is_some_and(|t| t > first) && heartbeat(&node).is_some_and(|t| t > first_beat)
        })
        .await;
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_starting_kubelet_records_its_nodes_events_in_default() {
    let cluster = Cluster::start(true).await;
    cluster
        .eventually(
            "a Starting and a NodeAllocatableEnforced Event per node",
            || async {
                cluster.events("Starting").await.len() == NODES.len()
                    && cluster.events("NodeAllocatableEnforced").await.len() == NODES.len()
            },
        )
        .await;
    for event in cluster.events("Starting").await {
        let about = &event.involved_object;
        let node = about.name.clone().unwrap();
        assert!(NODES.contains(&node.as_str()), "{node}");
        assert_eq!(about.kind.as_deref(), Some("Node"));
        // As upstream's kubelet: the node's name as uid, and no namespace.
        assert_eq!(about.uid.as_deref(), Some(node.as_str()));
        assert_eq!(about.namespace, None);
        assert_eq!(event.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(event.message.as_deref(), Some("Starting kubelet."));
        assert_eq!(
            event.source.as_ref().unwrap().host.as_deref(),
            Some(node.as_str())
        );
    }
    let memory = cluster.events("NodeHasSufficientMemory").await;
    assert_eq!(memory.len(), NODES.len());
    cluster.stop().await;
}

fn node_ready(n: &Node) -> bool {
    let conditions = n.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_scheduled_in_a_row_count_each_others_requests() {
    // One 4-CPU node and two 3-CPU pods waiting before the scheduler starts:
    // the second attempt must see the first pod as assumed on the node.
    let cluster = Cluster::new().await;
    let now = jiff::Timestamp::try_from(cluster.clock.now()).unwrap();
    Typed::<Node>::new(cluster.client.clone())
        .create(None, &node_object("only-node", &Capacity::default(), now))
        .await
        .unwrap();
    for name in ["first", "second"] {
        cluster
            .pods()
            .create(Some("default"), &pod(name, "3"))
            .await
            .unwrap();
    }
    let cluster = cluster.run(false).await;
    cluster
        .eventually("one bound, one unschedulable", || async {
            let pods = [cluster.pod("first").await, cluster.pod("second").await];
            let bound = pods.iter().flatten().filter(|p| node_of(p).is_some()).count();
            let unschedulable = pods
                .iter()
                .flatten()
                .filter(|p| condition(p, "PodScheduled").is_some_and(|c| c.0 == "False"))
                .count();
            bound == 1 && unschedulable == 1
        })
        .await;
    cluster.stop().await;
}
