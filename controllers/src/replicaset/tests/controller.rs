//! The ReplicaSet controller running for real against an in-process API
//! server on a temporary, buffered store, on paused tokio time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use apiserver::testkit::Tasks;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Event, Pod};
use serde_json::json;
use store::Clock;

use crate::replicaset::controller::ReplicaSetController;
use crate::runtime::events::Recorder;
use crate::runtime::{
    BoxFuture, Call, Client, ClientError, ClientResult, Informer, ListParams, PatchType, Typed, Verb,
    WrapClient, Written,
};
use crate::testing::{eventually, stop_tasks, test_client, test_clock};

/// A running controller, its informers, and typed clients for the test.
struct Cluster {
    clock: Clock,
    rs: Typed<ReplicaSet>,
    pods: Typed<Pod>,
    events: Typed<Event>,
    tasks: Tasks,
}

impl Cluster {
    /// An API server with nothing running yet: create objects, then `start`.
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            rs: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            events: Typed::new(client),
            clock,
            tasks: Tasks::new(),
        }
    }

    /// Starts the informers and the controller (2 workers).
    fn start(&mut self) {
        self.start_with(self.rs.client().clone());
    }

    /// Starts the informers and the controller on `client`.
    fn start_with(&mut self, client: Arc<dyn Client>) {
        let replicasets = Informer::<ReplicaSet>::new(client.clone(), self.clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), self.clock.clone(), None);
        let recorder = Recorder::new(client.clone(), self.clock.clone(), "replicaset-controller", None);
        let controller = ReplicaSetController::new(client, self.clock.clone(), recorder, &replicasets, &pods);
        self.tasks.push(replicasets.run(self.tasks.shutdown()));
        self.tasks.push(pods.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(2, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// Polls (on the clock) until `check` returns `Some`, for up to 60 s of
    /// simulated time.
    async fn eventually<T>(&self, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
        eventually(&self.clock, what, check).await
    }

    async fn live_pods(&self) -> Vec<Pod> {
        let pods = self
            .pods
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        pods.into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect()
    }

    /// Waits until exactly `n` live pods exist, all controlled by `web`.
    async fn wait_for_owned_pods(&self, n: usize) -> Vec<Pod> {
        let uid = self.get_rs().await.metadata.uid.unwrap();
        self.eventually(&format!("{n} pods owned by web"), || async {
            let pods = self.live_pods().await;
            let owned = pods.iter().all(|p| controller_uid(p) == Some(uid.as_str()));
            (pods.len() == n && owned).then_some(pods)
        })
        .await
    }

    async fn get_rs(&self) -> ReplicaSet {
        self.rs.get(Some("default"), "web").await.unwrap()
    }

    async fn patch_rs(&self, patch: serde_json::Value) {
        self.rs
            .patch(Some("default"), "web", PatchType::Merge, patch)
            .await
            .unwrap();
    }

    /// Marks a pod Running and Ready (as a kubelet would) through the status subresource.
    async fn make_ready(&self, name: &str) {
        let now = jiff::Timestamp::try_from(self.clock.now()).unwrap();
        let now = now.round(jiff::Unit::Second).unwrap().to_string();
        let patch = json!({"status": {"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": now},
        ]}});
        self.pods
            .patch_status(Some("default"), name, PatchType::Merge, patch)
            .await
            .unwrap();
    }

    /// The messages of the Events with `reason`.
    async fn event_messages(&self, reason: &str) -> Vec<String> {
        let events = self
            .events
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter_map(|e| e.message)
            .collect()
    }
}

fn replica_set(replicas: i32, min_ready_seconds: i32) -> ReplicaSet {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "minReadySeconds": min_ready_seconds,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }))
    .unwrap()
}

/// A pod labelled `app=web` without an owner, optionally already on a node.
fn orphan(name: &str, node: Option<&str>) -> Pod {
    let mut v = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    });
    if let Some(node) = node {
        v["spec"]["nodeName"] = json!(node);
    }
    serde_json::from_value(v).unwrap()
}

fn controller_uid(pod: &Pod) -> Option<&str> {
    let refs = pod.metadata.owner_references.as_deref()?;
    let owner = refs.iter().find(|r| r.controller == Some(true))?;
    Some(owner.uid.as_str())
}

fn names(pods: &[Pod]) -> Vec<String> {
    let mut names: Vec<String> = pods.iter().filter_map(|p| p.metadata.name.clone()).collect();
    names.sort();
    names
}

#[tokio::test(start_paused = true)]
async fn a_new_replicaset_creates_its_pods_with_events_and_status() {
    let mut c = Cluster::new().await;
    c.start();
    c.rs.create(Some("default"), &replica_set(3, 0)).await.unwrap();

    let pods = c.wait_for_owned_pods(3).await;
    for pod in &pods {
        assert!(pod.metadata.name.as_deref().unwrap().starts_with("web-"));
        assert_eq!(pod.metadata.labels.as_ref().unwrap()["app"], "web");
    }
    let status = c
        .eventually("status.replicas = 3", || async {
            let status = c.get_rs().await.status?;
            (status.replicas == 3).then_some(status)
        })
        .await;
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.fully_labeled_replicas, Some(3));
    assert_eq!(status.ready_replicas, None);

    let created = c
        .eventually("3 SuccessfulCreate events", || async {
            let messages = c.event_messages("SuccessfulCreate").await;
            (messages.len() == 3).then_some(messages)
        })
        .await;
    let mut expected: Vec<String> = names(&pods).iter().map(|n| format!("Created pod: {n}")).collect();
    let mut created = created;
    expected.sort();
    created.sort();
    assert_eq!(created, expected);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_pod_deleted_by_hand_is_replaced() {
    let mut c = Cluster::new().await;
    c.start();
    c.rs.create(Some("default"), &replica_set(3, 0)).await.unwrap();
    let before = c.wait_for_owned_pods(3).await;
    let victim = before[0].metadata.name.clone().unwrap();
    c.pods.delete(Some("default"), &victim).await.unwrap();

    let after = c
        .eventually("a replacement pod", || async {
            let pods = c.live_pods().await;
            let replaced = pods.len() == 3 && !names(&pods).contains(&victim);
            replaced.then_some(pods)
        })
        .await;
    let kept: Vec<String> = names(&before).into_iter().filter(|n| *n != victim).collect();
    assert!(kept.iter().all(|n| names(&after).contains(n)), "the others stay");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_matching_orphan_is_adopted_instead_of_creating_a_pod() {
    let mut c = Cluster::new().await;
    c.pods
        .create(Some("default"), &orphan("stray", None))
        .await
        .unwrap();
    c.rs.create(Some("default"), &replica_set(2, 0)).await.unwrap();
    c.start();

    let pods = c.wait_for_owned_pods(2).await;
    assert!(names(&pods).contains(&"stray".to_string()), "{:?}", names(&pods));
    // Nothing more happens: still exactly two pods a while later.
    c.clock.sleep(Duration::from_secs(5)).await;
    assert_eq!(c.live_pods().await.len(), 2);
    assert_eq!(c.event_messages("SuccessfulCreate").await.len(), 1);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn scaling_down_deletes_unscheduled_pods_first() {
    let mut c = Cluster::new().await;
    for (name, node) in [
        ("bound-a", Some("node-1")),
        ("loose", None),
        ("bound-b", Some("node-2")),
    ] {
        c.pods.create(Some("default"), &orphan(name, node)).await.unwrap();
    }
    c.rs.create(Some("default"), &replica_set(3, 0)).await.unwrap();
    c.start();
    c.wait_for_owned_pods(3).await;

    c.patch_rs(json!({"spec": {"replicas": 2}})).await;
    let pods = c.wait_for_owned_pods(2).await;
    assert_eq!(names(&pods), ["bound-a", "bound-b"]);
    let deleted = c
        .eventually("a SuccessfulDelete event", || async {
            let messages = c.event_messages("SuccessfulDelete").await;
            (!messages.is_empty()).then_some(messages)
        })
        .await;
    assert_eq!(deleted, ["Deleted pod: loose"]);
    let status = c
        .eventually("status.replicas = 2", || async {
            let rs = c.get_rs().await;
            let status = rs.status?;
            (status.replicas == 2).then_some(status)
        })
        .await;
    assert_eq!(status.observed_generation, Some(2));
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn ready_pods_become_available_after_min_ready_seconds() {
    let mut c = Cluster::new().await;
    c.start();
    c.rs.create(Some("default"), &replica_set(2, 10)).await.unwrap();
    let pods = c.wait_for_owned_pods(2).await;
    for name in names(&pods) {
        c.make_ready(&name).await;
    }
    let ready_at = c.clock.now();

    let status = c
        .eventually("readyReplicas = 2", || async {
            let status = c.get_rs().await.status?;
            (status.ready_replicas == Some(2)).then_some(status)
        })
        .await;
    assert_eq!(status.available_replicas, None, "not yet available");

    c.eventually("availableReplicas = 2", || async {
        let status = c.get_rs().await.status?;
        (status.available_replicas == Some(2)).then_some(())
    })
    .await;
    let waited = c.clock.now().duration_since(ready_at).unwrap();
    assert!(waited >= Duration::from_secs(9), "available after {waited:?}");
    assert!(waited <= Duration::from_secs(13), "available after {waited:?}");
    c.stop().await;
}

/// A client whose pod creates are refused (as by a quota), counting them.
struct RefusingPodCreates {
    inner: Arc<dyn Client>,
    attempts: AtomicUsize,
}

impl WrapClient for RefusingPodCreates {
    fn inner(&self) -> &dyn Client {
        &*self.inner
    }

    fn around_write<'a, T: Written + 'a>(
        &'a self,
        call: &Call<'_>,
        next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
    ) -> BoxFuture<'a, ClientResult<T>> {
        if (call.verb, call.subresource, call.resource.kind.as_str()) != (Verb::Create, None, "Pod") {
            return next();
        }
        self.attempts.fetch_add(1, Ordering::SeqCst);
        let refused = ClientError::new(403, "Forbidden", "exceeded quota: pods");
        Box::pin(async move { Err(refused) })
    }
}

#[tokio::test(start_paused = true)]
async fn a_refused_create_is_reported_and_retried_without_waiting_for_expectations() {
    let mut c = Cluster::new().await;
    let refusing = Arc::new(RefusingPodCreates {
        inner: c.rs.client().clone(),
        attempts: AtomicUsize::new(0),
    });
    c.start_with(refusing.clone());
    c.rs.create(Some("default"), &replica_set(3, 0)).await.unwrap();

    let condition = c
        .eventually("a ReplicaFailure condition", || async {
            let status = c.get_rs().await.status?;
            status
                .conditions?
                .into_iter()
                .find(|c| c.type_ == "ReplicaFailure")
        })
        .await;
    assert_eq!(condition.reason.as_deref(), Some("FailedCreate"));
    assert_eq!(condition.message.as_deref(), Some("exceeded quota: pods"));
    let messages = c
        .eventually("a FailedCreate event", || async {
            let messages = c.event_messages("FailedCreate").await;
            (!messages.is_empty()).then_some(messages)
        })
        .await;
    assert_eq!(messages, ["Error creating: exceeded quota: pods"]);

    // The failed and skipped creations left the expectations, so the backoff
    // retries come well before the 5-minute expectations timeout.
    c.eventually("three retries", || async {
        (refusing.attempts.load(Ordering::SeqCst) >= 4).then_some(())
    })
    .await;
    assert!(c.clock.now() < SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_060));
    assert!(c.live_pods().await.is_empty());
    c.stop().await;
}
