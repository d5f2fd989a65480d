//! The TaintEviction controller running for real against an in-process API server on paused tokio
//! time: untolerated taints evict at once, the default 300 s toleration of `unreachable` runs out,
//! a taint removed in time cancels the eviction, a toleration without seconds keeps the pod.

use std::sync::Arc;
use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use serde_json::json;
use store::Clock;

use crate::runtime::{Client, Informer, ListParams, PatchType, Recorder, Typed};
use crate::tainteviction::controller::TaintEvictionController;
use crate::testing::{stop_tasks, test_client, test_clock};

struct Cluster {
    clock: Clock,
    client: Arc<dyn Client>,
    nodes: Typed<Node>,
    pods: Typed<Pod>,
    tasks: Tasks,
}

impl Cluster {
    /// Node `n1` and the controller running.
    async fn start() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        let mut c = Cluster {
            nodes: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            client: client.clone(),
            clock: clock.clone(),
            tasks: Tasks::new(),
        };
        let node: Node =
            serde_json::from_value(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))
                .unwrap();
        c.nodes.create(None, &node).await.unwrap();
        let nodes = Informer::<Node>::new(client.clone(), clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let recorder = Recorder::new(client.clone(), clock.clone(), "taint-eviction-controller", None);
        let controller = TaintEvictionController::new(client, clock, recorder, &nodes, &pods);
        c.tasks.push(nodes.run(c.tasks.shutdown()));
        c.tasks.push(pods.run(c.tasks.shutdown()));
        c.tasks.spawn(|stop| controller.run(2, stop));
        c
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// A pod on `n1` with extra `tolerations` (the API server adds the default 300 s ones).
    async fn pod(&self, name: &str, tolerations: serde_json::Value) {
        let pod: Pod = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "n1", "tolerations": tolerations,
                     "containers": [{"name": "c", "image": "nginx"}]},
        }))
        .unwrap();
        self.pods.create(Some("default"), &pod).await.unwrap();
    }

    async fn taint(&self, taints: serde_json::Value) {
        let patch = json!({"spec": {"taints": taints}});
        self.nodes
            .patch(None, "n1", PatchType::Merge, patch)
            .await
            .unwrap();
    }

    async fn terminating(&self, name: &str) -> bool {
        let pod = self.pods.get(Some("default"), name).await.unwrap();
        pod.metadata.deletion_timestamp.is_some()
    }

    async fn messages(&self, reason: &str) -> Vec<String> {
        let events = Typed::<Event>::new(self.client.clone())
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter_map(|e| e.message)
            .collect()
    }

    async fn pass(&self, secs: u64) {
        for _ in 0..secs {
            self.clock.sleep(Duration::from_secs(1)).await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_pod_that_does_not_tolerate_a_no_execute_taint_is_evicted_at_once() {
    let c = Cluster::start().await;
    c.pod("p", json!([])).await;
    c.pass(1).await;
    c.taint(json!([{"key": "example.com/evict", "effect": "NoExecute"}]))
        .await;
    c.pass(2).await;
    assert!(c.terminating("p").await, "deleted");
    let pod = c.pods.get(Some("default"), "p").await.unwrap();
    let conditions = pod.status.unwrap().conditions.unwrap_or_default();
    let target = conditions
        .iter()
        .find(|c| c.type_ == "DisruptionTarget")
        .expect("the DisruptionTarget condition");
    assert_eq!(target.status, "True");
    assert_eq!(target.reason.as_deref(), Some("DeletionByTaintManager"));
    assert_eq!(
        target.message.as_deref(),
        Some("Taint manager: deleting due to NoExecute taint")
    );
    assert_eq!(
        c.messages("TaintManagerEviction").await,
        ["Marking for deletion Pod default/p"]
    );
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_pod_on_an_unreachable_node_is_evicted_when_its_300_s_toleration_runs_out() {
    let c = Cluster::start().await;
    c.pod("p", json!([])).await;
    c.pod(
        "daemon",
        json!([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]),
    )
    .await;
    c.pass(1).await;
    let tainted_at = c.clock.now();
    c.taint(json!([{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]))
        .await;
    c.pass(295).await;
    assert!(!c.terminating("p").await, "still tolerated after 295 s");
    c.pass(10).await;
    assert!(c.terminating("p").await, "evicted after 300 s");
    // Evicted when the toleration ran out (the deletionTimestamp adds the pod's 30 s grace period).
    let pod = c.pods.get(Some("default"), "p").await.unwrap();
    let conditions = pod.status.unwrap().conditions.unwrap_or_default();
    let target = conditions.iter().find(|c| c.type_ == "DisruptionTarget").unwrap();
    let evicted = target.last_transition_time.as_ref().unwrap().0;
    let waited = jiff::Timestamp::try_from(tainted_at)
        .unwrap()
        .duration_until(evicted);
    assert!(
        waited >= jiff::SignedDuration::from_secs(299) && waited <= jiff::SignedDuration::from_secs(302),
        "{waited:?}"
    );
    let deleted = pod.metadata.deletion_timestamp.unwrap().0;
    assert_eq!(
        evicted.duration_until(deleted),
        jiff::SignedDuration::from_secs(30)
    );
    // The pod whose toleration has no seconds (a DaemonSet's) stays.
    assert!(!c.terminating("daemon").await);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_eviction_is_cancelled_when_the_taint_goes_in_time() {
    let c = Cluster::start().await;
    c.pod("p", json!([])).await;
    c.pass(1).await;
    c.taint(json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]))
        .await;
    c.pass(100).await;
    c.taint(json!(null)).await;
    c.pass(400).await;
    assert!(!c.terminating("p").await);
    assert_eq!(
        c.messages("TaintManagerEviction").await,
        ["Cancelling deletion of Pod default/p"]
    );
    c.stop().await;
}
