//! The Deployment controller against a real API on a temporary store, together with the real
//! ReplicaSet controller. The test itself plays the kubelet: it marks pods Ready through the
//! `pods/status` subresource, one at a time where the steps of a rollout matter.

use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{Event, Pod};
use serde_json::{Value, json};
use store::Clock;
use tokio::time::timeout;

use crate::controller_utils::pods::is_pod_ready;
use crate::deployment::controller::DeploymentController;
use crate::deployment::util::{DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, REVISION_ANNOTATION};
use crate::replicaset::controller::ReplicaSetController;
use crate::runtime::{Informer, PatchType, Recorder, Typed};
use crate::testing::{poll, test_client};

const NS: Option<&str> = Some("default");
/// Upper bound of every wait.
const WAIT: Duration = Duration::from_secs(20);

/// An API, the three informers, the Deployment and ReplicaSet controllers.
struct Cluster {
    clock: Clock,
    tasks: Tasks,
    deployments: Typed<Deployment>,
    replicasets: Typed<ReplicaSet>,
    pods: Typed<Pod>,
    events: Typed<Event>,
}

impl Cluster {
    async fn start() -> Cluster {
        let clock = Clock::system();
        let client = test_client(&clock).await;
        let d_inf = Informer::<Deployment>::new(client.clone(), clock.clone(), None);
        let rs_inf = Informer::<ReplicaSet>::new(client.clone(), clock.clone(), None);
        let pod_inf = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let recorder = |c: &str| Recorder::new(client.clone(), clock.clone(), c, None);
        let dc = DeploymentController::new(
            client.clone(),
            clock.clone(),
            recorder("deployment-controller"),
            &d_inf,
            &rs_inf,
            &pod_inf,
        );
        let rsc = ReplicaSetController::new(
            client.clone(),
            clock.clone(),
            recorder("replicaset-controller"),
            &rs_inf,
            &pod_inf,
        );
        let mut tasks = Tasks::new();
        tasks.push(d_inf.run(tasks.shutdown()));
        tasks.push(rs_inf.run(tasks.shutdown()));
        tasks.push(pod_inf.run(tasks.shutdown()));
        tasks.spawn(|stop| dc.run(2, stop));
        tasks.spawn(|stop| rsc.run(2, stop));
        Cluster {
            clock,
            tasks,
            deployments: Typed::new(client.clone()),
            replicasets: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            events: Typed::new(client),
        }
    }

    async fn stop(self) {
        self.tasks.stop(WAIT).await.expect("stops, no panic");
    }

    async fn create(&self, d: Value) -> Deployment {
        let d: Deployment = serde_json::from_value(d).unwrap();
        self.deployments.create(NS, &d).await.unwrap()
    }

    async fn patch(&self, patch: Value) -> Deployment {
        self.deployments
            .patch(NS, "web", PatchType::Merge, patch)
            .await
            .unwrap()
    }

    async fn deployment(&self) -> Deployment {
        self.deployments.get(NS, "web").await.unwrap()
    }

    /// The ReplicaSets, oldest revision first.
    async fn replica_sets(&self) -> Vec<ReplicaSet> {
        let mut rss = self.replicasets.list(NS, &Default::default()).await.unwrap();
        rss.sort_by_key(revision_of);
        rss
    }

    /// Plays the kubelet for at most `limit` pods: marks not-ready pods Running and Ready.
    async fn make_ready(&self, limit: usize) -> usize {
        let pods = self.pods.list(NS, &Default::default()).await.unwrap();
        let now = jiff::Timestamp::try_from(self.clock.now()).unwrap().to_string();
        let status = json!({"status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
        }});
        let mut done = 0;
        for pod in pods.iter().filter(|p| !is_pod_ready(p)).take(limit) {
            let name = pod.metadata.name.as_deref().unwrap();
            // A pod deleted meanwhile is fine.
            let patched = self
                .pods
                .patch_status(NS, name, PatchType::Merge, status.clone())
                .await;
            done += usize::from(patched.is_ok());
        }
        done
    }

    /// Keeps marking pods ready until `done` holds for the Deployment.
    async fn settle(&self, what: &str, done: impl Fn(&Deployment) -> bool) -> Deployment {
        poll(&self.clock, what, WAIT, Duration::from_millis(10), async || {
            self.make_ready(usize::MAX).await;
            let d = self.deployment().await;
            done(&d).then_some(d)
        })
        .await
    }

    /// How many pods `rs` controls.
    async fn pods_of(&self, rs: &ReplicaSet) -> usize {
        let pods = self.pods.list(NS, &Default::default()).await.unwrap();
        let uid = rs.metadata.uid.as_deref();
        let owned = |p: &&Pod| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|r| Some(r.uid.as_str()) == uid)
        };
        pods.iter().filter(owned).count()
    }

    /// The messages of the Events recorded for the Deployment.
    async fn event_messages(&self) -> Vec<String> {
        let events = self.events.list(NS, &Default::default()).await.unwrap();
        events
            .into_iter()
            .filter(|e| e.involved_object.kind.as_deref() == Some("Deployment"))
            .filter_map(|e| e.message)
            .collect()
    }
}

fn web(replicas: i32, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
        },
    })
}

fn revision_of(rs: &ReplicaSet) -> i64 {
    annotation(&rs.metadata.annotations, REVISION_ANNOTATION)
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

fn annotation(annotations: &Option<std::collections::BTreeMap<String, String>>, key: &str) -> Option<String> {
    annotations.as_ref()?.get(key).cloned()
}

fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(0)
}

fn available(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0)
}

fn condition(d: &Deployment, type_: &str) -> Option<(String, String)> {
    let conds = d.status.as_ref()?.conditions.as_ref()?;
    let c = conds.iter().find(|c| c.type_ == type_)?;
    Some((c.status.clone(), c.reason.clone().unwrap_or_default()))
}

/// Status says the current generation is fully rolled out and available.
fn complete(d: &Deployment, replicas: i32) -> bool {
    let Some(s) = d.status.as_ref() else { return false };
    s.observed_generation == d.metadata.generation
        && s.updated_replicas == Some(replicas)
        && s.replicas == Some(replicas)
        && s.available_replicas == Some(replicas)
        && condition(d, "Progressing").is_some_and(|(_, r)| r == "NewReplicaSetAvailable")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_deployment_gets_one_replica_set_and_becomes_available() {
    let cluster = Cluster::start().await;
    let created = cluster.create(web(3, "nginx:1")).await;
    let d = cluster.settle("3 available replicas", |d| complete(d, 3)).await;

    let rss = cluster.replica_sets().await;
    assert_eq!(rss.len(), 1);
    let rs = &rss[0];
    let labels = rs.metadata.labels.clone().unwrap_or_default();
    let hash = labels[DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY].clone();
    assert_eq!(rs.metadata.name.as_deref(), Some(format!("web-{hash}").as_str()));
    assert_eq!(revision_of(rs), 1);
    assert_eq!(spec_replicas(rs), 3);
    let owner = &rs.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("Deployment", Some(true))
    );
    assert_eq!(Some(owner.uid.clone()), created.metadata.uid);

    let status = d.status.clone().unwrap();
    assert_eq!(status.observed_generation, d.metadata.generation);
    assert_eq!(status.updated_replicas, Some(3));
    assert_eq!(
        condition(&d, "Available"),
        Some(("True".into(), "MinimumReplicasAvailable".into()))
    );
    assert_eq!(
        condition(&d, "Progressing"),
        Some(("True".into(), "NewReplicaSetAvailable".into()))
    );
    assert_eq!(
        annotation(&d.metadata.annotations, REVISION_ANNOTATION).as_deref(),
        Some("1")
    );

    let expected = format!("Scaled up replica set web-{hash} from 0 to 3");
    let events = timeout(WAIT, async {
        loop {
            let messages = cluster.event_messages().await;
            if messages.contains(&expected) {
                return messages;
            }
            cluster.clock.sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(events.is_ok(), "event {expected:?} recorded");
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_change_rolls_out_within_max_surge_and_max_unavailable() {
    let cluster = Cluster::start().await;
    cluster.create(web(3, "nginx:1")).await;
    cluster.settle("the first rollout", |d| complete(d, 3)).await;

    cluster
        .patch(json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}))
        .await;
    // One pod at a time, checking every observed state: never more than 3 + maxSurge(1) pods
    // wanted, never fewer than 3 - maxUnavailable(0) wanted-or-available.
    let mut steps = Vec::new();
    let rollout = async {
        loop {
            let rss = cluster.replica_sets().await;
            let total: i32 = rss.iter().map(spec_replicas).sum();
            assert!(total <= 4, "maxSurge exceeded: {total} replicas wanted");
            if let [old, new] = rss.as_slice() {
                let kept = spec_replicas(old) + available(new);
                assert!(
                    kept >= 3,
                    "maxUnavailable exceeded: old {} + new available {}",
                    spec_replicas(old),
                    available(new)
                );
                let step = (spec_replicas(old), spec_replicas(new));
                if steps.last() != Some(&step) {
                    steps.push(step);
                }
            }
            if complete(&cluster.deployment().await, 3) && rss.len() == 2 {
                return rss;
            }
            cluster.make_ready(1).await;
            cluster.clock.sleep(Duration::from_millis(20)).await;
        }
    };
    let rss = timeout(WAIT, rollout)
        .await
        .expect("the second rollout completes");

    assert_eq!((spec_replicas(&rss[0]), spec_replicas(&rss[1])), (0, 3));
    assert_eq!((revision_of(&rss[0]), revision_of(&rss[1])), (1, 2));
    assert_eq!(steps.last(), Some(&(0, 3)));
    assert!(steps.len() >= 3, "the rollout went in steps: {steps:?}");
    let d = cluster.deployment().await;
    assert_eq!(
        annotation(&d.metadata.annotations, REVISION_ANNOTATION).as_deref(),
        Some("2")
    );
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_deployment_scales_but_does_not_roll_out_until_resumed() {
    let cluster = Cluster::start().await;
    cluster.create(web(2, "nginx:1")).await;
    cluster.settle("the first rollout", |d| complete(d, 2)).await;

    let paused = cluster
        .patch(json!({"spec": {"paused": true, "replicas": 3,
            "template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}))
        .await;
    let generation = paused.metadata.generation;
    let d = cluster
        .settle("the paused generation observed and scaled", |d| {
            let s = d.status.as_ref();
            s.and_then(|s| s.observed_generation) == generation
                && s.and_then(|s| s.available_replicas) == Some(3)
        })
        .await;
    assert_eq!(
        condition(&d, "Progressing"),
        Some(("Unknown".into(), "DeploymentPaused".into()))
    );
    let rss = cluster.replica_sets().await;
    assert_eq!(rss.len(), 1, "no new ReplicaSet while paused");
    assert_eq!(spec_replicas(&rss[0]), 3, "paused Deployments still scale");

    cluster.patch(json!({"spec": {"paused": false}})).await;
    cluster.settle("the resumed rollout", |d| complete(d, 3)).await;
    let rss = cluster.replica_sets().await;
    assert_eq!(rss.len(), 2);
    assert_eq!((spec_replicas(&rss[0]), spec_replicas(&rss[1])), (0, 3));
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_replica_set_matching_the_selector_is_adopted() {
    let cluster = Cluster::start().await;
    let orphan: ReplicaSet = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "stray", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web", "stray": "yes"}},
            "template": {
                "metadata": {"labels": {"app": "web", "stray": "yes"}},
                "spec": {"containers": [{"name": "c", "image": "old"}]},
            },
        },
    }))
    .unwrap();
    cluster.replicasets.create(NS, &orphan).await.unwrap();
    let d = cluster.create(web(1, "nginx:1")).await;
    cluster.settle("the rollout", |d| complete(d, 1)).await;
    let stray = cluster.replicasets.get(NS, "stray").await.unwrap();
    let owner = &stray.metadata.owner_references.as_ref().expect("adopted")[0];
    assert_eq!(Some(owner.uid.clone()), d.metadata.uid);
    assert_eq!(owner.controller, Some(true));
    cluster.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_scales_the_old_replica_set_to_zero_before_creating_the_new_one() {
    let cluster = Cluster::start().await;
    let mut d = web(2, "nginx:1");
    d["spec"]["strategy"] = json!({"type": "Recreate"});
    cluster.create(d).await;
    cluster.settle("the first rollout", |d| complete(d, 2)).await;

    cluster
        .patch(json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}}))
        .await;
    // Whenever the new ReplicaSet exists, the old one wants no pods and has none left.
    let rollout = async {
        loop {
            let rss = cluster.replica_sets().await;
            if let [old, new] = rss.as_slice() {
                assert_eq!(spec_replicas(old), 0, "old scaled down first");
                let old_pods = cluster.pods_of(old).await;
                assert!(
                    old_pods == 0 || spec_replicas(new) == 0,
                    "no overlap of old and new pods"
                );
            }
            if complete(&cluster.deployment().await, 2) && rss.len() == 2 {
                return rss;
            }
            cluster.make_ready(usize::MAX).await;
            cluster.clock.sleep(Duration::from_millis(10)).await;
        }
    };
    let rss = timeout(WAIT, rollout)
        .await
        .expect("the Recreate rollout completes");
    assert_eq!((spec_replicas(&rss[0]), spec_replicas(&rss[1])), (0, 2));
    cluster.stop().await;
}
