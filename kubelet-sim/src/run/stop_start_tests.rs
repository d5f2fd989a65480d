//! A node's kubelet stopped and started with the `sim.miniplane.dev/heartbeat` annotation, against
//! a real API on paused tokio time: while stopped, no heartbeat, no Lease renewal, nothing done for
//! its pods; once started, a Ready status (with `NodeReady` if the conditions had changed), a
//! renewed Lease, and its pods synced (the terminating one finalized and removed). And a Node a
//! user creates with `sim.miniplane.dev/node: simulated` is adopted.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::testkit::{Tasks, TestApi};
use controllers::runtime::{Client, InProcessClient, Informer, ListParams, PatchType, Typed};
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use serde_json::json;
use store::Clock;

use crate::node::{Capacity, HEARTBEAT, NODE_LEASE_NAMESPACE};
use crate::run::Kubelet;

struct Sim {
    clock: Clock,
    client: Arc<dyn Client>,
    tasks: Tasks,
}

impl Sim {
    async fn start() -> Sim {
        let clock = Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000), 1.0);
        let api = TestApi::builder().clock(clock.clone()).build().await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        let mut tasks = Tasks::new();
        let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let nodes = Informer::<Node>::new(client.clone(), clock.clone(), None);
        let kubelet = Kubelet::new(
            client.clone(),
            clock.clone(),
            7,
            vec!["n1".into()],
            Capacity::default(),
            &pods,
        )
        .with_node_informer(&nodes);
        tasks.spawn(|stop| kubelet.run(stop));
        tasks.push(pods.run(tasks.shutdown()));
        tasks.push(nodes.run(tasks.shutdown()));
        Sim { clock, client, tasks }
    }

    async fn pass(&self, secs: u64) {
        for _ in 0..secs {
            self.clock.sleep(Duration::from_secs(1)).await;
        }
    }

    fn now(&self) -> Timestamp {
        Timestamp::try_from(self.clock.now()).unwrap()
    }

    async fn node(&self) -> Node {
        Typed::<Node>::new(self.client.clone())
            .get(None, "n1")
            .await
            .unwrap()
    }

    async fn ready_heartbeat(&self) -> Timestamp {
        let node = self.node().await;
        let conditions = node.status.unwrap().conditions.unwrap();
        let ready = conditions.into_iter().find(|c| c.type_ == "Ready").unwrap();
        ready.last_heartbeat_time.unwrap().0
    }

    async fn lease_renewed(&self) -> Timestamp {
        let lease = Typed::<Lease>::new(self.client.clone())
            .get(Some(NODE_LEASE_NAMESPACE), "n1")
            .await
            .unwrap();
        lease.spec.unwrap().renew_time.unwrap().0
    }

    async fn annotate(&self, value: Option<&str>) {
        let patch = json!({"metadata": {"annotations": {HEARTBEAT: value}}});
        Typed::<Node>::new(self.client.clone())
            .patch(None, "n1", PatchType::Merge, patch)
            .await
            .unwrap();
    }

    fn pods(&self) -> Typed<Pod> {
        Typed::new(self.client.clone())
    }

    async fn create_pod(&self, name: &str) {
        let pod: Pod = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
        }))
        .unwrap();
        self.pods().create(Some("default"), &pod).await.unwrap();
    }

    async fn pod(&self, name: &str) -> Option<Pod> {
        self.pods().get(Some("default"), name).await.ok()
    }

    async fn phase(&self, name: &str) -> Option<String> {
        self.pod(name).await?.status?.phase
    }

    async fn node_events(&self, reason: &str) -> Vec<String> {
        let events = Typed::<Event>::new(self.client.clone())
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter(|e| e.involved_object.kind.as_deref() == Some("Node"))
            .filter_map(|e| e.message)
            .collect()
    }
}

#[tokio::test(start_paused = true)]
async fn a_stopped_kubelet_does_nothing_and_a_started_one_catches_up() {
    let sim = Sim::start().await;
    sim.pass(5).await;
    sim.create_pod("before").await;
    sim.pass(30).await;
    assert_eq!(sim.phase("before").await.as_deref(), Some("Running"));

    // Stop: no heartbeat, no Lease renewal for a minute.
    sim.annotate(Some("stopped")).await;
    sim.pass(2).await;
    let (heartbeat, renewed) = (sim.ready_heartbeat().await, sim.lease_renewed().await);
    sim.pass(60).await;
    assert_eq!(sim.ready_heartbeat().await, heartbeat, "no status heartbeat");
    assert_eq!(sim.lease_renewed().await, renewed, "no Lease renewal");

    // Nothing happens to its pods: a new one is not started, a deleted one is not removed.
    sim.create_pod("during").await;
    sim.pods().delete(Some("default"), "before").await.unwrap();
    sim.pass(60).await;
    let during = sim.pod("during").await.expect("the new pod");
    assert!(during.status.and_then(|s| s.start_time).is_none(), "not started");
    let before = sim.pod("before").await.expect("still there, terminating");
    assert!(before.metadata.deletion_timestamp.is_some());

    // Meanwhile the node lifecycle controller would have set the conditions Unknown.
    let mut node = sim.node().await;
    for c in node.status.as_mut().unwrap().conditions.as_mut().unwrap() {
        c.status = "Unknown".into();
        c.reason = Some("NodeStatusUnknown".into());
    }
    Typed::<Node>::new(sim.client.clone())
        .update_status(&node)
        .await
        .unwrap();

    // Start (any other value resumes it too): Ready again, the Lease renewed, the pods synced.
    let resumed = sim.now();
    sim.annotate(Some("running")).await;
    sim.pass(2).await;
    assert!(sim.ready_heartbeat().await >= resumed, "a heartbeat at once");
    assert!(sim.lease_renewed().await >= resumed, "the Lease renewed at once");
    let node = sim.node().await;
    let conditions = node.status.unwrap().conditions.unwrap();
    let ready = conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!(ready.status, "True");
    assert_eq!(ready.reason.as_deref(), Some("KubeletReady"));
    assert_eq!(
        sim.node_events("NodeReady").await,
        ["Node n1 status is now: NodeReady"]
    );
    sim.pass(30).await;
    assert!(
        sim.pod("before").await.is_none(),
        "the terminating pod is removed"
    );
    assert_eq!(sim.phase("during").await.as_deref(), Some("Running"));

    // Removing the annotation keeps it running; heartbeats go on.
    sim.annotate(None).await;
    let again = sim.now();
    sim.pass(25).await;
    assert!(sim.ready_heartbeat().await > again);
    sim.tasks.stop(Duration::from_secs(10)).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_node_stopped_before_the_kubelet_starts_stays_stopped() {
    // Registered once, stopped, then a new kubelet (a restart of miniplane) comes up.
    let first = Sim::start().await;
    first.pass(5).await;
    first.annotate(Some("stopped")).await;
    first.pass(2).await;
    let heartbeat = first.ready_heartbeat().await;
    let Sim { clock, client, tasks } = first;
    tasks.stop(Duration::from_secs(10)).await.unwrap();

    let mut tasks = Tasks::new();
    let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
    let nodes = Informer::<Node>::new(client.clone(), clock.clone(), None);
    let kubelet = Kubelet::new(
        client.clone(),
        clock.clone(),
        7,
        vec!["n1".into()],
        Capacity::default(),
        &pods,
    )
    .with_node_informer(&nodes);
    tasks.spawn(|stop| kubelet.run(stop));
    tasks.push(pods.run(tasks.shutdown()));
    tasks.push(nodes.run(tasks.shutdown()));
    let second = Sim { clock, client, tasks };
    second.pass(60).await;
    assert_eq!(
        second.ready_heartbeat().await,
        heartbeat,
        "no status posted on start"
    );
    second.tasks.stop(Duration::from_secs(10)).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_node_created_with_the_simulated_annotation_is_adopted_until_deleted() {
    let sim = Sim::start().await;
    sim.pass(5).await;
    let node: Node = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "edge-1", "labels": {"zone": "edge"},
                     "annotations": {crate::node::SIMULATED: "simulated"}},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "10"}},
    }))
    .unwrap();
    let nodes = Typed::<Node>::new(sim.client.clone());
    nodes.create(None, &node).await.unwrap();
    // A Node without the annotation is left alone.
    let other: Node = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "other"},
    }))
    .unwrap();
    nodes.create(None, &other).await.unwrap();
    sim.pass(15).await;

    let adopted = nodes.get(None, "edge-1").await.unwrap();
    let labels = adopted.metadata.labels.clone().unwrap();
    assert_eq!(labels["zone"], "edge", "the user's labels kept");
    assert_eq!(labels["kubernetes.io/hostname"], "edge-1", "the kubelet's added");
    let status = adopted.status.unwrap();
    assert_eq!(
        status.capacity.as_ref().unwrap()["cpu"].0,
        "2",
        "the user's capacity kept"
    );
    assert_eq!(status.allocatable.as_ref().unwrap()["pods"].0, "10");
    let ready = status
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(ready.status, "True");
    let lease = Typed::<Lease>::new(sim.client.clone())
        .get(Some(NODE_LEASE_NAMESPACE), "edge-1")
        .await
        .expect("its Lease");
    assert!(lease.spec.unwrap().renew_time.is_some());
    assert!(
        nodes
            .get(None, "other")
            .await
            .unwrap()
            .status
            .and_then(|s| s.conditions)
            .is_none()
    );

    // Its pods run.
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "on-edge", "namespace": "default"},
        "spec": {"nodeName": "edge-1", "containers": [{"name": "c", "image": "nginx"}]},
    }))
    .unwrap();
    sim.pods().create(Some("default"), &pod).await.unwrap();
    sim.pass(30).await;
    assert_eq!(sim.phase("on-edge").await.as_deref(), Some("Running"));

    // Heartbeats go on, and stop once the Node is deleted (it is not registered again).
    let beat = sim.now();
    sim.pass(15).await;
    let node = nodes.get(None, "edge-1").await.unwrap();
    let ready = node
        .status
        .unwrap()
        .conditions
        .unwrap()
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert!(ready.last_heartbeat_time.unwrap().0 > beat);
    nodes.delete(None, "edge-1").await.unwrap();
    sim.pass(30).await;
    assert!(nodes.get(None, "edge-1").await.is_err(), "not registered again");
    sim.tasks.stop(Duration::from_secs(10)).await.unwrap();
}
