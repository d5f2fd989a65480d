//! The pod GC running for real against an in-process API server, on paused tokio time: each
//! collection deletes what it should, when it should, and leaves the rest.

use std::time::{Duration, SystemTime};

use apiserver::testkit::Tasks;
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};
use store::Clock;

use super::fixtures::node;
use crate::podgc::controller::PodGcController;
use crate::podgc::plan::TAINT_NODE_OUT_OF_SERVICE;
use crate::runtime::{DeleteParams, Informer, PatchType, Typed};
use crate::testing::{poll, stop_tasks, test_client, test_clock};

/// A finalizer nobody removes: a pod carrying it stays visible after its delete.
const HOLD: &str = "test.miniplane.dev/hold";

struct Cluster {
    clock: Clock,
    pods: Typed<Pod>,
    nodes: Typed<Node>,
    tasks: Tasks,
}

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            pods: Typed::new(client.clone()),
            nodes: Typed::new(client),
            clock,
            tasks: Tasks::new(),
        }
    }

    /// Starts the informers and the controller; `threshold` as `--terminated-pod-gc-threshold`.
    fn start(&mut self, threshold: Option<usize>) {
        let client = self.pods.client().clone();
        let pods = Informer::<Pod>::new(client.clone(), self.clock.clone(), None);
        let nodes = Informer::<Node>::new(client.clone(), self.clock.clone(), None);
        let mut controller = PodGcController::new(client, self.clock.clone(), &pods, &nodes);
        if let Some(threshold) = threshold {
            controller = controller.with_terminated_pod_threshold(threshold);
        }
        self.tasks.push(pods.run(self.tasks.shutdown()));
        self.tasks.push(nodes.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(2, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// Creates `node`, then writes its status (as a kubelet would).
    async fn add_node(&self, node: Node) {
        let name = node.metadata.name.clone().unwrap();
        let status = serde_json::to_value(node.status.clone()).unwrap();
        self.nodes.create(None, &node).await.unwrap();
        self.nodes
            .patch_status(None, &name, PatchType::Merge, json!({"status": status}))
            .await
            .unwrap();
    }

    /// Creates pod `name` bound to `node` (unbound for `""`) and sets its `phase`.
    async fn add_pod(&self, name: &str, node: &str, phase: &str, finalizers: &[&str]) {
        let mut spec = json!({"containers": [{"name": "c", "image": "busybox"}]});
        if !node.is_empty() {
            spec["nodeName"] = node.into();
        }
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "finalizers": finalizers},
            "spec": spec,
        }))
        .unwrap();
        self.pods.create(Some("default"), &pod).await.unwrap();
        self.pods
            .patch_status(
                Some("default"),
                name,
                PatchType::Merge,
                json!({"status": {"phase": phase}}),
            )
            .await
            .unwrap();
    }

    async fn pod(&self, name: &str) -> Option<Pod> {
        match self.pods.get(Some("default"), name).await {
            Ok(pod) => Some(pod),
            Err(e) if e.is_not_found() => None,
            Err(e) => panic!("GET pod {name}: {e}"),
        }
    }

    /// Polls (on the clock) until `check` returns `Some`, for up to 120 s of simulated time.
    async fn eventually<T>(&self, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
        poll(
            &self.clock,
            what,
            Duration::from_secs(120),
            Duration::from_millis(200),
            check,
        )
        .await
    }

    async fn gone(&self, name: &str) {
        self.eventually(&format!("pod {name} deleted"), || async {
            self.pod(name).await.is_none().then_some(())
        })
        .await;
    }

    fn now_secs(&self) -> u64 {
        self.clock
            .now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            - 1_700_000_000
    }
}

fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

fn condition(pod: &Pod, type_: &str) -> Option<Value> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    let c = conditions.iter().find(|c| c.type_ == type_)?;
    Some(serde_json::to_value(c).unwrap())
}

#[tokio::test(start_paused = true)]
async fn pods_of_a_deleted_node_are_failed_and_deleted_after_the_quarantine() {
    let mut c = Cluster::new().await;
    c.add_node(node("here").build()).await;
    c.add_pod("kept", "here", "Running", &[]).await;
    c.add_pod("orphan", "gone", "Running", &[]).await;
    // Held by a finalizer, so that what the GC wrote before its delete can be read.
    c.add_pod("held", "gone", "Running", &[HOLD]).await;
    c.start(None);

    // Within the 40 s quarantine nothing happens, though a pass ran at once and another at 20 s.
    c.clock.sleep(Duration::from_secs(35)).await;
    assert!(
        c.pod("orphan").await.is_some(),
        "quarantined at {} s",
        c.now_secs()
    );
    assert_eq!(phase(&c.pod("held").await.unwrap()), "Running");

    c.gone("orphan").await;
    assert!(
        c.now_secs() >= 40,
        "deleted after the quarantine, at {} s",
        c.now_secs()
    );
    assert!(
        c.now_secs() <= 70,
        "deleted by the pass after the quarantine, at {} s",
        c.now_secs()
    );
    let held = c.pod("held").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some(), "deleted too");
    assert_eq!(held.metadata.deletion_grace_period_seconds, Some(0));
    assert_eq!(phase(&held), "Failed");
    let target = condition(&held, "DisruptionTarget").expect("a DisruptionTarget condition");
    assert_eq!(target["status"], "True");
    assert_eq!(target["reason"], "DeletionByPodGC");
    assert_eq!(target["message"], "PodGC: node no longer exists");
    assert!(target["lastTransitionTime"].is_string());
    // The pod of the existing node stays, untouched.
    assert_eq!(phase(&c.pod("kept").await.unwrap()), "Running");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_node_that_comes_back_within_the_quarantine_keeps_its_pods() {
    let mut c = Cluster::new().await;
    c.add_node(node("here").build()).await;
    c.add_pod("late", "late-node", "Running", &[]).await;
    c.start(None);
    c.clock.sleep(Duration::from_secs(25)).await;
    // The node registers during the quarantine.
    c.add_node(node("late-node").build()).await;
    c.clock.sleep(Duration::from_secs(60)).await;
    assert_eq!(phase(&c.pod("late").await.expect("not collected")), "Running");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn terminated_pods_beyond_the_threshold_are_deleted_oldest_first() {
    let mut c = Cluster::new().await;
    c.add_node(node("here").build()).await;
    for (name, phase) in [
        ("t1", "Succeeded"),
        ("t2", "Failed"),
        ("r", "Running"),
        ("t3", "Succeeded"),
        ("t4", "Failed"),
    ] {
        c.add_pod(name, "here", phase, &[]).await;
        c.clock.sleep(Duration::from_secs(2)).await; // distinct creation timestamps
    }
    c.start(Some(2));
    c.gone("t2").await;
    assert!(c.pod("t1").await.is_none());
    // Two terminated pods stay (the newest), and the running one.
    c.clock.sleep(Duration::from_secs(45)).await;
    for name in ["t3", "t4", "r"] {
        assert!(c.pod(name).await.is_some(), "{name} stays");
    }
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_default_threshold_keeps_terminated_pods() {
    let mut c = Cluster::new().await;
    c.add_node(node("here").build()).await;
    c.add_pod("done", "here", "Succeeded", &[]).await;
    c.start(None);
    c.clock.sleep(Duration::from_secs(60)).await;
    assert!(c.pod("done").await.is_some());
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn terminating_pods_on_an_out_of_service_node_are_force_deleted() {
    let mut c = Cluster::new().await;
    c.add_node(node("oos").not_ready().tainted(TAINT_NODE_OUT_OF_SERVICE).build())
        .await;
    c.add_node(node("ready").tainted(TAINT_NODE_OUT_OF_SERVICE).build())
        .await;
    for (name, on) in [("stuck", "oos"), ("running", "oos"), ("elsewhere", "ready")] {
        c.add_pod(name, on, "Running", &[]).await;
    }
    // A graceful delete: without a kubelet the pods would stay Terminating for 10 minutes.
    for name in ["stuck", "elsewhere"] {
        let r = c.pods.resource().clone();
        c.pods
            .client()
            .delete(&r, Some("default"), name, &DeleteParams::grace(600))
            .await
            .unwrap();
        assert!(c.pod(name).await.unwrap().metadata.deletion_timestamp.is_some());
    }
    c.start(None);
    c.gone("stuck").await;
    assert!(
        c.now_secs() < 30,
        "the first pass deletes it, at {} s",
        c.now_secs()
    );
    c.clock.sleep(Duration::from_secs(30)).await;
    assert!(c.pod("running").await.is_some(), "not terminating: stays");
    assert!(c.pod("elsewhere").await.is_some(), "its node is Ready: stays");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_unscheduled_terminating_pod_is_failed_and_force_deleted() {
    let mut c = Cluster::new().await;
    c.add_pod("never-bound", "", "Pending", &[HOLD]).await;
    c.add_pod("waiting", "", "Pending", &[]).await;
    c.pods.delete(Some("default"), "never-bound").await.unwrap();
    c.start(None);
    let failed = c
        .eventually("never-bound marked Failed", || async {
            let pod = c.pod("never-bound").await?;
            (phase(&pod) == "Failed").then_some(pod)
        })
        .await;
    assert_eq!(failed.metadata.deletion_grace_period_seconds, Some(0));
    assert!(
        condition(&failed, "DisruptionTarget").is_none(),
        "only orphans get the condition"
    );
    c.clock.sleep(Duration::from_secs(30)).await;
    assert_eq!(
        phase(&c.pod("waiting").await.unwrap()),
        "Pending",
        "not terminating: stays"
    );
    c.stop().await;
}
