//! The disruption controller running against an in-process API server on paused tokio time.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::testkit::Tasks;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Pod, ReplicationController};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};
use store::Clock;

use crate::disruption::controller::{DisruptionController, DisruptionInformers};
use crate::runtime::events::Recorder;
use crate::runtime::{Client, Informer, PatchType, Typed};
use crate::testing::{poll, stop_tasks, test_client, test_clock};

/// The API, typed clients for the test, and what runs.
struct Cluster {
    clock: Clock,
    client: Arc<dyn Client>,
    rs: Typed<ReplicaSet>,
    pods: Typed<Pod>,
    pdbs: Typed<PodDisruptionBudget>,
    tasks: Tasks,
}

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            rs: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            pdbs: Typed::new(client.clone()),
            client,
            clock,
            tasks: Tasks::new(),
        }
    }

    /// Starts the six informers and the controller.
    fn start(&mut self) {
        let (client, clock) = (self.client.clone(), self.clock.clone());
        let pdbs = Informer::<PodDisruptionBudget>::new(client.clone(), clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let rcs = Informer::<ReplicationController>::new(client.clone(), clock.clone(), None);
        let rss = Informer::<ReplicaSet>::new(client.clone(), clock.clone(), None);
        let deployments = Informer::<Deployment>::new(client.clone(), clock.clone(), None);
        let statefulsets = Informer::<StatefulSet>::new(client.clone(), clock.clone(), None);
        let recorder = Recorder::new(client.clone(), clock.clone(), "controllermanager", None);
        let informers = DisruptionInformers {
            pdbs: &pdbs,
            pods: &pods,
            replication_controllers: &rcs,
            replicasets: &rss,
            deployments: &deployments,
            statefulsets: &statefulsets,
        };
        let controller = DisruptionController::new(client, clock, recorder, informers);
        let stop = self.tasks.shutdown();
        self.tasks.push(pdbs.run(stop.clone()));
        self.tasks.push(pods.run(stop.clone()));
        self.tasks.push(rcs.run(stop.clone()));
        self.tasks.push(rss.run(stop.clone()));
        self.tasks.push(deployments.run(stop.clone()));
        self.tasks.push(statefulsets.run(stop));
        self.tasks.spawn(|stop| controller.run(1, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// Polls until the budget's status satisfies `check`, for up to 300 s of simulated time.
    async fn wait_for_status(&self, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        let (limit, every) = (Duration::from_secs(300), Duration::from_millis(50));
        poll(&self.clock, what, limit, every, async || {
            let pdb = self.pdbs.get(Some("default"), "web").await.unwrap();
            let status = serde_json::to_value(pdb.status).unwrap();
            check(&status).then_some(status)
        })
        .await
    }

    /// A ReplicaSet `web` of 3 (no controller runs: the test makes its pods).
    async fn replicaset(&self) -> String {
        let rs: ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        }))
        .unwrap();
        let rs = self.rs.create(Some("default"), &rs).await.unwrap();
        rs.metadata.uid.unwrap()
    }

    /// A pod of the ReplicaSet, Running and as ready as asked.
    async fn pod(&self, name: &str, rs_uid: &str, ready: bool) {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                    "uid": rs_uid, "controller": true}]},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "n1"},
        }))
        .unwrap();
        self.pods.create(Some("default"), &pod).await.unwrap();
        self.set_ready(name, ready).await;
    }

    async fn set_ready(&self, name: &str, ready: bool) {
        let status = if ready { "True" } else { "False" };
        let patch =
            json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": status}]}});
        self.pods
            .patch_status(Some("default"), name, PatchType::Merge, patch)
            .await
            .unwrap();
    }

    async fn budget(&self, spec: Value) {
        let pdb: PodDisruptionBudget = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default"}, "spec": spec,
        }))
        .unwrap();
        self.pdbs.create(Some("default"), &pdb).await.unwrap();
    }
}

fn counts(s: &Value) -> (i64, i64, i64, i64) {
    let n = |k: &str| s[k].as_i64().unwrap_or(-1);
    (
        n("expectedPods"),
        n("desiredHealthy"),
        n("currentHealthy"),
        n("disruptionsAllowed"),
    )
}

#[tokio::test(start_paused = true)]
async fn a_budget_follows_its_pods_and_their_replicaset() {
    let mut c = Cluster::new().await;
    let uid = c.replicaset().await;
    c.pod("web-a", &uid, true).await;
    c.pod("web-b", &uid, true).await;
    c.pod("web-c", &uid, false).await;
    c.budget(json!({"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}))
        .await;
    c.start();

    // Expected from the ReplicaSet's scale (3), desired 3 − 1, two ready: nothing to spare.
    let s = c
        .wait_for_status("the first count", |s| s["observedGeneration"] == json!(1))
        .await;
    assert_eq!(counts(&s), (3, 2, 2, 0));
    assert_eq!(s["conditions"][0]["reason"], json!("InsufficientPods"));

    c.set_ready("web-c", true).await;
    let s = c
        .wait_for_status("one disruption allowed", |s| s["disruptionsAllowed"] == json!(1))
        .await;
    assert_eq!(counts(&s), (3, 2, 3, 1));
    assert_eq!(s["conditions"][0]["status"], json!("True"));
    assert_eq!(s["conditions"][0]["reason"], json!("SufficientPods"));
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_evicted_pod_that_is_never_deleted_counts_again_after_two_minutes() {
    let mut c = Cluster::new().await;
    let uid = c.replicaset().await;
    for name in ["web-a", "web-b", "web-c"] {
        c.pod(name, &uid, true).await;
    }
    c.budget(json!({"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}))
        .await;
    c.start();
    c.wait_for_status("one disruption allowed", |s| s["disruptionsAllowed"] == json!(1))
        .await;

    // What the eviction handler writes; here the pod is then not deleted.
    let mut pdb = c.pdbs.get(Some("default"), "web").await.unwrap();
    let evicted_at = jiff::Timestamp::try_from(c.clock.now()).unwrap();
    let mut status = serde_json::to_value(pdb.status.take()).unwrap();
    status["disruptionsAllowed"] = json!(0);
    status["disruptedPods"] = json!({"web-a": evicted_at.round(jiff::Unit::Second).unwrap().to_string()});
    pdb.status = serde_json::from_value(status).unwrap();
    c.pdbs.update_status(&pdb).await.unwrap();

    let s = c
        .wait_for_status("the evicted pod not counted", |s| s["currentHealthy"] == json!(2))
        .await;
    assert_eq!(counts(&s), (3, 2, 2, 0));
    assert!(s["disruptedPods"]["web-a"].is_string());
    let s = c
        .wait_for_status("the entry expired", |s| {
            s.get("disruptedPods").is_none_or(Value::is_null)
        })
        .await;
    assert_eq!(counts(&s), (3, 2, 3, 1));
    let waited = c
        .clock
        .now()
        .duration_since(SystemTime::from(evicted_at))
        .unwrap();
    assert!(waited >= Duration::from_secs(119), "expired after {waited:?}");
    c.stop().await;
}
