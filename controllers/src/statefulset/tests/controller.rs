//! The StatefulSet controller running for real against an in-process API server on paused tokio
//! time. The test plays the kubelet: it marks pods Running and Ready and finishes graceful
//! deletions (a delete with grace period 0).

use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Event, PersistentVolumeClaim, Pod};
use serde_json::json;
use store::Clock;

use crate::runtime::events::Recorder;
use crate::runtime::{Informer, ListParams, PatchType, Typed};
use crate::statefulset::controller::StatefulSetController;
use crate::testing::{eventually, stop_tasks, test_client, test_clock};

struct Cluster {
    clock: Clock,
    sets: Typed<StatefulSet>,
    pods: Typed<Pod>,
    claims: Typed<PersistentVolumeClaim>,
    revisions: Typed<ControllerRevision>,
    events: Typed<Event>,
    tasks: Tasks,
}

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            sets: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            claims: Typed::new(client.clone()),
            revisions: Typed::new(client.clone()),
            events: Typed::new(client),
            clock,
            tasks: Tasks::new(),
        }
    }

    /// Starts the informers and the controller (2 workers).
    fn start(&mut self) {
        let client = self.sets.client().clone();
        let sets = Informer::<StatefulSet>::new(client.clone(), self.clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), self.clock.clone(), None);
        let revisions = Informer::<ControllerRevision>::new(client.clone(), self.clock.clone(), None);
        let claims = Informer::<PersistentVolumeClaim>::new(client.clone(), self.clock.clone(), None);
        let recorder = Recorder::new(client.clone(), self.clock.clone(), "statefulset-controller", None);
        let controller = StatefulSetController::new(
            client,
            self.clock.clone(),
            recorder,
            &sets,
            &pods,
            &revisions,
            &claims,
        );
        self.tasks.push(sets.run(self.tasks.shutdown()));
        self.tasks.push(pods.run(self.tasks.shutdown()));
        self.tasks.push(revisions.run(self.tasks.shutdown()));
        self.tasks.push(claims.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(2, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    async fn eventually<T>(&self, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
        eventually(&self.clock, what, check).await
    }

    /// The pod names, sorted, with `~` after terminating ones.
    async fn pod_names(&self) -> Vec<String> {
        let pods = self
            .pods
            .list(Some("default"), &ListParams::default())
            .await
            .unwrap();
        let mut names: Vec<String> = pods
            .iter()
            .map(|p| {
                let n = p.metadata.name.clone().unwrap_or_default();
                if p.metadata.deletion_timestamp.is_some() {
                    format!("{n}~")
                } else {
                    n
                }
            })
            .collect();
        names.sort();
        names
    }

    async fn wait_pods(&self, want: &[&str]) {
        self.eventually(&format!("pods {want:?}"), || async {
            (self.pod_names().await == want).then_some(())
        })
        .await;
    }

    /// Waits a while and checks that the pods are still exactly `want`.
    async fn still_pods(&self, want: &[&str]) {
        self.clock.sleep(Duration::from_secs(3)).await;
        assert_eq!(self.pod_names().await, want);
    }

    /// The kubelet: Running and Ready now.
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

    async fn get_set(&self) -> StatefulSet {
        self.sets.get(Some("default"), "web").await.unwrap()
    }

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

    async fn revision_label(&self, pod: &str) -> String {
        let pod = self.pods.get(Some("default"), pod).await.unwrap();
        pod.metadata.labels.unwrap_or_default()["controller-revision-hash"].clone()
    }
}

fn stateful_set(replicas: i32, image: &str) -> StatefulSet {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    }))
    .unwrap()
}

#[tokio::test(start_paused = true)]
async fn ordered_ready_creates_claims_then_pods_one_at_a_time() {
    let mut c = Cluster::new().await;
    c.start();
    c.sets
        .create(Some("default"), &stateful_set(3, "nginx:1"))
        .await
        .unwrap();

    c.wait_pods(&["web-0"]).await;
    c.still_pods(&["web-0"]).await;
    let claim = c.claims.get(Some("default"), "www-web-0").await.unwrap();
    assert_eq!(claim.metadata.labels.unwrap_or_default()["app"], "web");
    c.make_ready("web-0").await;
    c.wait_pods(&["web-0", "web-1"]).await;
    c.still_pods(&["web-0", "web-1"]).await;
    c.make_ready("web-1").await;
    c.wait_pods(&["web-0", "web-1", "web-2"]).await;
    c.make_ready("web-2").await;

    let status = c
        .eventually("readyReplicas = 3", || async {
            let status = c.get_set().await.status?;
            (status.ready_replicas == Some(3)).then_some(status)
        })
        .await;
    assert_eq!(status.replicas, 3);
    assert_eq!(status.current_replicas, Some(3));
    assert_eq!(status.updated_replicas, Some(3));
    assert_eq!(status.available_replicas, Some(3));
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.collision_count, Some(0));
    let revision = status.update_revision.clone().unwrap();
    assert_eq!(status.current_revision.as_deref(), Some(revision.as_str()));
    let cr = c.revisions.get(Some("default"), &revision).await.unwrap();
    assert_eq!(cr.revision, 1);
    assert_eq!(c.revision_label("web-2").await, revision);

    let mut created = c.event_messages("SuccessfulCreate").await;
    created.sort();
    assert_eq!(
        created,
        [
            "create Claim www-web-0 Pod web-0 in StatefulSet web success",
            "create Claim www-web-1 Pod web-1 in StatefulSet web success",
            "create Claim www-web-2 Pod web-2 in StatefulSet web success",
            "create Pod web-0 in StatefulSet web successful",
            "create Pod web-1 in StatefulSet web successful",
            "create Pod web-2 in StatefulSet web successful",
        ]
    );
    c.stop().await;
}

/// Brings `web` up with `n` ready pods.
async fn ready_set(c: &Cluster, n: i32) {
    c.sets
        .create(Some("default"), &stateful_set(n, "nginx:1"))
        .await
        .unwrap();
    for i in 0..n {
        let name = format!("web-{i}");
        c.eventually(&name, || async {
            c.pods.get(Some("default"), &name).await.ok().map(drop)
        })
        .await;
        c.make_ready(&name).await;
    }
    c.eventually("all ready", || async {
        (c.get_set().await.status?.ready_replicas == Some(n)).then_some(())
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn scale_down_goes_from_the_top_and_keeps_the_claims() {
    let mut c = Cluster::new().await;
    c.start();
    ready_set(&c, 3).await;
    c.sets
        .patch(
            Some("default"),
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 1}}),
        )
        .await
        .unwrap();
    // The pods are on no node, so the API removes them at once (no graceful termination):
    // the events show the order.
    c.wait_pods(&["web-0"]).await;
    c.still_pods(&["web-0"]).await;
    let claims = c
        .claims
        .list(Some("default"), &ListParams::default())
        .await
        .unwrap();
    assert_eq!(claims.len(), 3, "Retain keeps every claim");
    assert_eq!(
        c.event_messages("SuccessfulDelete").await,
        [
            "delete Pod web-2 in StatefulSet web successful",
            "delete Pod web-1 in StatefulSet web successful"
        ]
    );
    c.stop().await;
}

async fn set_image(c: &Cluster, image: &str) {
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}});
    c.sets
        .patch(Some("default"), "web", PatchType::Strategic, patch)
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn rolling_update_replaces_from_the_top_and_a_rollback_renumbers_the_old_revision() {
    let mut c = Cluster::new().await;
    c.start();
    ready_set(&c, 3).await;
    let first = c.get_set().await.status.unwrap().update_revision.unwrap();
    set_image(&c, "nginx:2").await;
    let new_revision = c
        .eventually("the new update revision", || async {
            let status = c.get_set().await.status?;
            status.update_revision.filter(|r| *r != first)
        })
        .await;
    for i in (0..3).rev() {
        let name = format!("web-{i}");
        c.eventually(&format!("{name} recreated at the new revision"), || async {
            let pod = c.pods.get(Some("default"), &name).await.ok()?;
            let labels = pod.metadata.labels.unwrap_or_default();
            (labels.get("controller-revision-hash") == Some(&new_revision)).then_some(())
        })
        .await;
        // The ones below are untouched until this one is Ready.
        c.clock.sleep(Duration::from_secs(2)).await;
        for below in 0..i {
            assert_eq!(
                c.revision_label(&format!("web-{below}")).await,
                first,
                "web-{below} while web-{i} not ready"
            );
        }
        c.make_ready(&name).await;
    }
    let status = c
        .eventually("rollout complete", || async {
            let status = c.get_set().await.status?;
            (status.current_revision == status.update_revision
                && status.update_revision.as_deref() != Some(&first))
            .then_some(status)
        })
        .await;
    let second = status.update_revision.unwrap();
    assert_eq!(c.revision_label("web-0").await, second);
    assert_eq!(
        c.revisions.get(Some("default"), &second).await.unwrap().revision,
        2
    );

    // Back to nginx:1: the first revision is reused as revision 3, no third one is made.
    set_image(&c, "nginx:1").await;
    c.eventually("the rollback's update revision", || async {
        let status = c.get_set().await.status?;
        (status.update_revision.as_deref() == Some(&first)).then_some(())
    })
    .await;
    assert_eq!(
        c.revisions.get(Some("default"), &first).await.unwrap().revision,
        3
    );
    let all = c
        .revisions
        .list(Some("default"), &ListParams::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 2);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_restarted_controller_continues_without_duplicating_pods() {
    let mut c = Cluster::new().await;
    c.start();
    c.sets
        .create(Some("default"), &stateful_set(3, "nginx:1"))
        .await
        .unwrap();
    c.wait_pods(&["web-0"]).await;
    c.make_ready("web-0").await;
    c.wait_pods(&["web-0", "web-1"]).await;
    // Stop the controller while web-1 is not ready, then start a fresh one (empty expectations,
    // new caches).
    let Cluster {
        clock,
        sets,
        pods,
        claims,
        revisions,
        events,
        tasks,
    } = c;
    stop_tasks(tasks).await;
    let mut c = Cluster {
        clock,
        sets,
        pods,
        claims,
        revisions,
        events,
        tasks: Tasks::new(),
    };
    c.start();
    c.still_pods(&["web-0", "web-1"]).await;
    c.make_ready("web-1").await;
    c.wait_pods(&["web-0", "web-1", "web-2"]).await;
    let revisions = c
        .revisions
        .list(Some("default"), &ListParams::default())
        .await
        .unwrap();
    assert_eq!(revisions.len(), 1, "the restarted controller reuses the revision");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn retention_policy_delete_delete_hands_scaled_down_claims_to_their_pods() {
    let mut c = Cluster::new().await;
    c.start();
    let mut set = stateful_set(2, "nginx:1");
    set.spec
        .as_mut()
        .unwrap()
        .persistent_volume_claim_retention_policy =
        serde_json::from_value(json!({"whenDeleted": "Delete", "whenScaled": "Delete"})).unwrap();
    set.spec.as_mut().unwrap().pod_management_policy = Some("Parallel".into());
    c.sets.create(Some("default"), &set).await.unwrap();
    c.wait_pods(&["web-0", "web-1"]).await;
    c.make_ready("web-0").await;
    c.make_ready("web-1").await;
    let set_uid = c.get_set().await.metadata.uid.unwrap();
    // In range: owned by the set, not the pod.
    c.eventually("claims owned by the set", || async {
        let claims = c
            .claims
            .list(Some("default"), &ListParams::default())
            .await
            .ok()?;
        let owned = claims.len() == 2
            && claims.iter().all(|cl| {
                let refs = cl.metadata.owner_references.clone().unwrap_or_default();
                refs.len() == 1 && refs[0].uid == set_uid
            });
        owned.then_some(())
    })
    .await;
    // Scale to 1: web-1's claim passes from the set to web-1 before web-1 is deleted, so the
    // garbage collector deletes the claim with the pod.
    c.sets
        .patch(
            Some("default"),
            "web",
            PatchType::Merge,
            json!({"spec": {"replicas": 1}}),
        )
        .await
        .unwrap();
    c.wait_pods(&["web-0"]).await;
    let claim = c.claims.get(Some("default"), "www-web-1").await.unwrap();
    let refs = claim.metadata.owner_references.unwrap_or_default();
    assert!(
        refs.iter().all(|r| r.uid != set_uid),
        "a condemned pod's claim is no longer the set's: {refs:?}"
    );
    assert!(
        refs.iter().any(|r| r.kind == "Pod" && r.name == "web-1"),
        "{refs:?}"
    );
    c.stop().await;
}
