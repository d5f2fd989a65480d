//! The NodeLifecycle controller running for real against an in-process API server on paused tokio
//! time: a node whose kubelet falls silent becomes Unknown after the grace period, is tainted, its
//! pods are marked not Ready; a node whose kubelet posts again is untainted; a heartbeating node
//! is left alone.

use std::sync::Arc;
use std::time::Duration;

use apiserver::testkit::Tasks;
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use serde_json::json;
use store::Clock;

use crate::nodelifecycle::controller::NodeLifecycleController;
use crate::nodelifecycle::health::Periods;
use crate::runtime::{Client, Informer, ListParams, PatchType, Recorder, Typed};
use crate::testing::{holds_within, stop_tasks, test_client, test_clock};

struct Cluster {
    clock: Clock,
    client: Arc<dyn Client>,
    nodes: Typed<Node>,
    pods: Typed<Pod>,
    leases: Typed<Lease>,
    tasks: Tasks,
}

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            nodes: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            leases: Typed::new(client.clone()),
            client,
            clock,
            tasks: Tasks::new(),
        }
    }

    fn start(&mut self) {
        let client = self.client.clone();
        let nodes = Informer::<Node>::new(client.clone(), self.clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), self.clock.clone(), None);
        let leases = Informer::<Lease>::new(client.clone(), self.clock.clone(), None);
        let recorder = Recorder::new(client.clone(), self.clock.clone(), "node-controller", None);
        let controller = NodeLifecycleController::with_periods(
            client,
            self.clock.clone(),
            recorder,
            &nodes,
            &pods,
            &leases,
            Periods::default(),
        );
        self.tasks.push(nodes.run(self.tasks.shutdown()));
        self.tasks.push(pods.run(self.tasks.shutdown()));
        self.tasks.push(leases.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(2, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    fn now(&self) -> String {
        let now = Timestamp::try_from(self.clock.now()).unwrap();
        now.round(jiff::Unit::Second).unwrap().to_string()
    }

    /// What a kubelet posts: the node Ready, every condition's heartbeat now.
    fn healthy_conditions(&self, transition: &str) -> serde_json::Value {
        let now = self.now();
        let c = |t: &str, s: &str, r: &str| {
            json!({"type": t, "status": s, "reason": r, "message": r,
                   "lastHeartbeatTime": now, "lastTransitionTime": transition})
        };
        json!([
            c("MemoryPressure", "False", "KubeletHasSufficientMemory"),
            c("DiskPressure", "False", "KubeletHasNoDiskPressure"),
            c("PIDPressure", "False", "KubeletHasSufficientPID"),
            c("Ready", "True", "KubeletReady"),
        ])
    }

    /// Registers node `name` as a kubelet does (Ready, a fresh Lease) and a Ready pod `p` on it.
    async fn register(&self, name: &str) {
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"conditions": self.healthy_conditions(&self.now())},
        }))
        .unwrap();
        self.nodes.create(None, &node).await.unwrap();
        let lease: Lease = serde_json::from_value(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": self.micro_now()},
        }))
        .unwrap();
        self.leases.create(Some("kube-node-lease"), &lease).await.unwrap();
        let pod: Pod = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("{name}-pod"), "namespace": "default"},
            "spec": {"nodeName": name, "containers": [{"name": "c", "image": "nginx"}]},
        }))
        .unwrap();
        self.pods.create(Some("default"), &pod).await.unwrap();
        let ready = json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": self.now()},
        ]}});
        self.pods
            .patch_status(Some("default"), &format!("{name}-pod"), PatchType::Merge, ready)
            .await
            .unwrap();
    }

    fn micro_now(&self) -> String {
        let now = Timestamp::try_from(self.clock.now()).unwrap();
        now.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
    }

    /// The kubelet of `name` renews its Lease now.
    async fn renew(&self, name: &str) {
        let patch = json!({"spec": {"renewTime": self.micro_now()}});
        self.leases
            .patch(Some("kube-node-lease"), name, PatchType::Merge, patch)
            .await
            .unwrap();
    }

    async fn node(&self, name: &str) -> Node {
        self.nodes.get(None, name).await.unwrap()
    }

    async fn ready(&self, name: &str) -> String {
        let node = self.node(name).await;
        crate::nodelifecycle::health::ready_status(&node)
            .unwrap_or_default()
            .to_owned()
    }

    async fn taints(&self, name: &str) -> Vec<String> {
        let node = self.node(name).await;
        let taints = node.spec.and_then(|s| s.taints).unwrap_or_default();
        taints.iter().map(|t| format!("{}:{}", t.key, t.effect)).collect()
    }

    async fn pod_ready(&self, name: &str) -> String {
        let pod = self.pods.get(Some("default"), name).await.unwrap();
        let conditions = pod.status.and_then(|s| s.conditions).unwrap_or_default();
        let ready = conditions.into_iter().find(|c| c.type_ == "Ready").unwrap();
        ready.status
    }

    async fn events(&self, reason: &str) -> Vec<Event> {
        let events = Typed::<Event>::new(self.client.clone())
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .collect()
    }

    /// Sleeps `secs` simulated seconds, one at a time.
    async fn pass(&self, secs: u64) {
        for _ in 0..secs {
            self.clock.sleep(Duration::from_secs(1)).await;
        }
    }

    /// Polls every simulated second, for at most `secs`.
    async fn eventually<F, Fut>(&self, what: &str, secs: u64, check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let limit = Duration::from_secs(secs);
        holds_within(&self.clock, what, limit, Duration::from_secs(1), check).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_silent_node_becomes_unknown_and_tainted_and_recovers_when_its_kubelet_posts_again() {
    let mut c = Cluster::new().await;
    c.register("n1").await;
    c.start();

    // Within the 50 s grace period nothing happens.
    c.pass(45).await;
    assert_eq!(c.ready("n1").await, "True");
    assert!(c.taints("n1").await.is_empty());

    // Past it (plus at most one 5 s monitor period), the node is Unknown and tainted.
    c.eventually("n1 Unknown", 15, || async { c.ready("n1").await == "Unknown" })
        .await;
    let node = c.node("n1").await;
    let conditions = node.status.unwrap().conditions.unwrap();
    assert_eq!(conditions.len(), 4);
    for condition in &conditions {
        assert_eq!(condition.status, "Unknown");
        assert_eq!(condition.reason.as_deref(), Some("NodeStatusUnknown"));
        assert_eq!(
            condition.message.as_deref(),
            Some("Kubelet stopped posting node status.")
        );
    }
    c.eventually("n1 tainted", 10, || async {
        c.taints("n1").await
            == [
                "node.kubernetes.io/unreachable:NoSchedule",
                "node.kubernetes.io/unreachable:NoExecute",
            ]
    })
    .await;
    c.eventually("its pod not ready", 10, || async {
        c.pod_ready("n1-pod").await == "False"
    })
    .await;

    let registered = c.events("RegisteredNode").await;
    assert_eq!(registered.len(), 1);
    assert_eq!(
        registered[0].message.as_deref(),
        Some("Node n1 event: Registered Node n1 in Controller")
    );
    let not_ready: Vec<Event> = c.events("NodeNotReady").await;
    let on_node: Vec<&Event> = not_ready
        .iter()
        .filter(|e| e.involved_object.kind.as_deref() == Some("Node"))
        .collect();
    assert_eq!(on_node.len(), 1);
    assert_eq!(
        on_node[0].message.as_deref(),
        Some("Node n1 status is now: NodeNotReady")
    );
    let on_pod: Vec<&Event> = not_ready
        .iter()
        .filter(|e| e.involved_object.kind.as_deref() == Some("Pod"))
        .collect();
    assert_eq!(on_pod.len(), 1);
    assert_eq!(on_pod[0].type_.as_deref(), Some("Warning"));
    assert_eq!(on_pod[0].message.as_deref(), Some("Node is not ready"));

    // A minute later it is still so: written once, no flapping, no more events.
    c.pass(60).await;
    assert_eq!(c.ready("n1").await, "Unknown");
    assert_eq!(c.events("NodeNotReady").await.len(), 2);

    // The kubelet is back: Ready posted, Lease renewed. The taints go.
    let mut node = c.node("n1").await;
    node.status.as_mut().unwrap().conditions =
        serde_json::from_value(c.healthy_conditions(&c.now())).unwrap();
    c.nodes.update_status(&node).await.unwrap();
    c.renew("n1").await;
    c.eventually("n1 untainted", 10, || async { c.taints("n1").await.is_empty() })
        .await;
    assert_eq!(c.ready("n1").await, "True");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_node_whose_lease_is_renewed_stays_ready_though_its_status_is_old() {
    let mut c = Cluster::new().await;
    c.register("n1").await;
    c.start();
    // Five minutes of Lease renewals every 10 s, no status update (as a kubelet between
    // nodeStatusReportFrequency reports).
    for _ in 0..30 {
        c.pass(10).await;
        c.renew("n1").await;
    }
    assert_eq!(c.ready("n1").await, "True");
    assert!(c.taints("n1").await.is_empty());
    assert_eq!(c.pod_ready("n1-pod").await, "True");
    assert!(c.events("NodeNotReady").await.is_empty());
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_cordoned_node_gets_the_unschedulable_taint_and_loses_it_when_uncordoned() {
    let mut c = Cluster::new().await;
    c.register("n1").await;
    c.start();
    let cordon = |on: bool| json!({"spec": {"unschedulable": on}});
    c.nodes
        .patch(None, "n1", PatchType::Merge, cordon(true))
        .await
        .unwrap();
    c.eventually("the unschedulable taint", 5, || async {
        c.taints("n1").await == ["node.kubernetes.io/unschedulable:NoSchedule"]
    })
    .await;
    c.nodes
        .patch(None, "n1", PatchType::Merge, cordon(false))
        .await
        .unwrap();
    c.eventually("no taint", 5, || async { c.taints("n1").await.is_empty() })
        .await;
    c.stop().await;
}
