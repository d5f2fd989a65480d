//! The DaemonSet controller running for real against an in-process API server on paused tokio
//! time. No scheduler or kubelet runs: pods stay unbound, pinned to their node by affinity, and
//! the tests mark them Ready (or Failed) through the status subresource, as a kubelet would.

use std::collections::BTreeSet;
use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use serde_json::json;
use store::Clock;

use crate::daemon::controller::DaemonSetsController;
use crate::daemon::placement::{get_target_node_name, hash_label};
use crate::runtime::events::Recorder;
use crate::runtime::{Informer, ListParams, PatchType, Typed};
use crate::testing::{eventually, stop_tasks, test_client, test_clock};

struct Cluster {
    clock: Clock,
    ds: Typed<DaemonSet>,
    pods: Typed<Pod>,
    nodes: Typed<Node>,
    revisions: Typed<ControllerRevision>,
    events: Typed<Event>,
    tasks: Tasks,
}

const NS: Option<&str> = Some("default");

impl Cluster {
    async fn new() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        Cluster {
            ds: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            nodes: Typed::new(client.clone()),
            revisions: Typed::new(client.clone()),
            events: Typed::new(client),
            clock,
            tasks: Tasks::new(),
        }
    }

    fn start(&mut self) {
        let client = self.ds.client().clone();
        let clock = self.clock.clone();
        let daemonsets = Informer::<DaemonSet>::new(client.clone(), clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let nodes = Informer::<Node>::new(client.clone(), clock.clone(), None);
        let revisions = Informer::<ControllerRevision>::new(client.clone(), clock.clone(), None);
        let recorder = Recorder::new(client.clone(), clock.clone(), "daemonset-controller", None);
        let controller =
            DaemonSetsController::new(client, clock, recorder, &daemonsets, &pods, &nodes, &revisions);
        let stop = self.tasks.shutdown();
        self.tasks.push(daemonsets.run(stop.clone()));
        self.tasks.push(pods.run(stop.clone()));
        self.tasks.push(nodes.run(stop.clone()));
        self.tasks.push(revisions.run(stop));
        self.tasks.spawn(|stop| controller.run(2, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    async fn eventually<T>(&self, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
        eventually(&self.clock, what, check).await
    }

    async fn node(&self, name: &str, labels: serde_json::Value) {
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
        }))
        .unwrap();
        self.nodes.create(None, &node).await.unwrap();
    }

    async fn live_pods(&self) -> Vec<Pod> {
        let pods = self.pods.list(NS, &ListParams::default()).await.unwrap();
        pods.into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect()
    }

    /// Target node of every live pod, sorted.
    async fn placement(&self) -> Vec<String> {
        let mut nodes: Vec<String> = self
            .live_pods()
            .await
            .iter()
            .filter_map(|p| get_target_node_name(p).map(str::to_owned))
            .collect();
        nodes.sort();
        nodes
    }

    async fn wait_for_placement(&self, want: &[&str]) -> Vec<Pod> {
        self.eventually(&format!("pods on {want:?}"), || async {
            (self.placement().await == want).then_some(())
        })
        .await;
        self.live_pods().await
    }

    async fn get_ds(&self) -> DaemonSet {
        self.ds.get(NS, "agent").await.unwrap()
    }

    async fn patch_ds(&self, patch: serde_json::Value) {
        self.ds.patch(NS, "agent", PatchType::Merge, patch).await.unwrap();
    }

    async fn set_status(&self, name: &str, status: serde_json::Value) {
        self.pods
            .patch_status(NS, name, PatchType::Merge, json!({ "status": status }))
            .await
            .unwrap();
    }

    async fn make_ready(&self, name: &str) {
        let now = jiff::Timestamp::try_from(self.clock.now()).unwrap();
        let now = now.round(jiff::Unit::Second).unwrap().to_string();
        self.set_status(
            name,
            json!({"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": now},
            ]}),
        )
        .await;
    }

    async fn event_messages(&self, reason: &str) -> Vec<String> {
        let events = self.events.list(NS, &ListParams::default()).await.unwrap();
        events
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter_map(|e| e.message)
            .collect()
    }

    async fn revisions(&self) -> Vec<ControllerRevision> {
        let mut r = self.revisions.list(NS, &ListParams::default()).await.unwrap();
        r.sort_by_key(|r| r.revision);
        r
    }
}

fn daemon_set(spec_extra: serde_json::Value) -> DaemonSet {
    let mut v = json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "agent:1"}]},
            },
        },
    });
    if let (Some(spec), Some(extra)) = (v["spec"].as_object_mut(), spec_extra.as_object()) {
        for (k, val) in extra {
            spec.insert(k.clone(), val.clone());
        }
    }
    serde_json::from_value(v).unwrap()
}

fn name(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn one_pinned_pod_per_node_with_revision_events_and_status() {
    let mut c = Cluster::new().await;
    for n in ["n1", "n2", "n3"] {
        c.node(n, json!({})).await;
    }
    c.start();
    c.ds.create(NS, &daemon_set(json!({}))).await.unwrap();
    let pods = c.wait_for_placement(&["n1", "n2", "n3"]).await;

    let revisions = c.revisions().await;
    assert_eq!(revisions.len(), 1);
    assert_eq!(revisions[0].revision, 1);
    let hash = hash_label(&revisions[0].metadata).to_owned();
    assert_eq!(
        revisions[0].metadata.name.as_deref(),
        Some(format!("agent-{hash}").as_str())
    );
    for p in &pods {
        assert_eq!(hash_label(&p.metadata), hash);
        assert!(name(p).starts_with("agent-"));
        let tolerations = p.spec.as_ref().unwrap().tolerations.as_ref().unwrap();
        assert_eq!(tolerations.len(), 6, "the default daemon tolerations");
        let labels = p.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["pod-template-generation"], "1");
    }
    let created = c
        .eventually("3 SuccessfulCreate events", || async {
            let m = c.event_messages("SuccessfulCreate").await;
            (m.len() == 3).then_some(m)
        })
        .await;
    let want: BTreeSet<String> = pods.iter().map(|p| format!("Created pod: {}", name(p))).collect();
    assert_eq!(created.into_iter().collect::<BTreeSet<_>>(), want);

    for p in &pods {
        c.make_ready(&name(p)).await;
    }
    let status = c
        .eventually("3 available", || async {
            let s = c.get_ds().await.status?;
            (s.number_available == Some(3)).then_some(s)
        })
        .await;
    assert_eq!(
        (
            status.desired_number_scheduled,
            status.current_number_scheduled,
            status.number_ready,
            status.updated_number_scheduled,
            status.number_unavailable,
            status.number_misscheduled,
            status.observed_generation,
        ),
        (3, 3, 3, Some(3), Some(0), 0, Some(1))
    );
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn nodes_joining_relabelled_tainted_and_leaving() {
    let mut c = Cluster::new().await;
    c.node("n1", json!({"role": "agent"})).await;
    c.node("n2", json!({})).await;
    c.start();
    let selector = json!({"template": {
        "metadata": {"labels": {"app": "agent"}},
        "spec": {"nodeSelector": {"role": "agent"}, "containers": [{"name": "c", "image": "agent:1"}]},
    }});
    c.ds.create(NS, &daemon_set(selector)).await.unwrap();
    c.wait_for_placement(&["n1"]).await;

    // A node joins with the label; another is relabelled into the selector.
    c.node("n3", json!({"role": "agent"})).await;
    c.nodes
        .patch(
            None,
            "n2",
            PatchType::Merge,
            json!({"metadata": {"labels": {"role": "agent"}}}),
        )
        .await
        .unwrap();
    c.wait_for_placement(&["n1", "n2", "n3"]).await;

    // Relabelled out: its pod goes. A NoExecute taint: its pod goes too.
    c.nodes
        .patch(
            None,
            "n1",
            PatchType::Merge,
            json!({"metadata": {"labels": {"role": null}}}),
        )
        .await
        .unwrap();
    let taint = json!({"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoExecute"}]}});
    c.nodes.patch(None, "n2", PatchType::Merge, taint).await.unwrap();
    c.wait_for_placement(&["n3"]).await;
    let status = c
        .eventually("desired 1", || async {
            let s = c.get_ds().await.status?;
            (s.desired_number_scheduled == 1 && s.current_number_scheduled == 1).then_some(s)
        })
        .await;
    assert_eq!(status.number_misscheduled, 0);

    // The node goes away: its unbound pod is deleted.
    c.nodes.delete(None, "n3").await.unwrap();
    c.wait_for_placement(&[]).await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn surge_update_replaces_one_node_at_a_time() {
    let mut c = Cluster::new().await;
    for n in ["n1", "n2"] {
        c.node(n, json!({})).await;
    }
    c.start();
    let surge = json!({"updateStrategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}});
    c.ds.create(NS, &daemon_set(surge)).await.unwrap();
    for p in c.wait_for_placement(&["n1", "n2"]).await {
        c.make_ready(&name(&p)).await;
    }
    c.eventually("2 available", || async {
        let s = c.get_ds().await.status?;
        (s.number_available == Some(2)).then_some(())
    })
    .await;
    let old_hash = hash_label(&c.revisions().await[0].metadata).to_owned();

    c.patch_ds(json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "agent:2"}]}}}}))
        .await;
    // One surge pod beside the old one, not more.
    let placement = c.wait_for_placement(&["n1", "n1", "n2"]).await;
    c.clock.sleep(Duration::from_secs(2)).await;
    assert_eq!(c.placement().await, ["n1", "n1", "n2"], "maxSurge 1");
    let new_hash = hash_label(&c.revisions().await[1].metadata).to_owned();
    let surged: Vec<&Pod> = placement
        .iter()
        .filter(|p| hash_label(&p.metadata) == new_hash)
        .collect();
    assert_eq!(surged.len(), 1);
    let status = c.get_ds().await.status.unwrap();
    assert_eq!(status.updated_number_scheduled, Some(0), "the oldest pod counts");

    // The new pod is ready: the old one on n1 goes, n2 gets its surge pod.
    c.make_ready(&name(surged[0])).await;
    let placement = c.wait_for_placement(&["n1", "n2", "n2"]).await;
    assert!(
        placement
            .iter()
            .all(|p| get_target_node_name(p) != Some("n1") || hash_label(&p.metadata) == new_hash)
    );
    for p in placement.iter().filter(|p| hash_label(&p.metadata) == new_hash) {
        c.make_ready(&name(p)).await;
    }
    c.wait_for_placement(&["n1", "n2"]).await;
    let status = c
        .eventually("2 updated and available", || async {
            let s = c.get_ds().await.status?;
            (s.updated_number_scheduled == Some(2) && s.number_available == Some(2)).then_some(s)
        })
        .await;
    assert_eq!(status.observed_generation, Some(2));
    let hashes: BTreeSet<String> = c
        .live_pods()
        .await
        .iter()
        .map(|p| hash_label(&p.metadata).to_owned())
        .collect();
    assert_eq!(hashes, BTreeSet::from([new_hash]));
    assert_ne!(old_hash, hash_label(&c.revisions().await[1].metadata));
    let deleted = c.event_messages("SuccessfulDelete").await;
    assert_eq!(deleted.len(), 2, "{deleted:?}");
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_pod_is_replaced_with_an_event() {
    let mut c = Cluster::new().await;
    c.node("n1", json!({})).await;
    c.start();
    c.ds.create(NS, &daemon_set(json!({}))).await.unwrap();
    let pods = c.wait_for_placement(&["n1"]).await;
    let victim = name(&pods[0]);
    c.set_status(&victim, json!({"phase": "Failed"})).await;
    let replaced = c
        .eventually("a replacement", || async {
            let pods = c.live_pods().await;
            (pods.len() == 1 && name(&pods[0]) != victim).then_some(pods)
        })
        .await;
    assert_eq!(get_target_node_name(&replaced[0]), Some("n1"));
    let warnings = c.event_messages("FailedDaemonPod").await;
    assert_eq!(
        warnings,
        [format!(
            "Found failed daemon pod default/{victim} on node n1, will try to kill it"
        )]
    );
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn on_delete_waits_and_history_is_trimmed() {
    let mut c = Cluster::new().await;
    c.node("n1", json!({})).await;
    c.start();
    let spec = json!({"updateStrategy": {"type": "OnDelete"}, "revisionHistoryLimit": 1});
    c.ds.create(NS, &daemon_set(spec)).await.unwrap();
    let first = c.wait_for_placement(&["n1"]).await;
    for image in ["agent:2", "agent:3"] {
        c.patch_ds(json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}))
            .await;
        c.eventually("observed", || async {
            let ds = c.get_ds().await;
            (ds.status?.observed_generation == ds.metadata.generation).then_some(())
        })
        .await;
    }
    // OnDelete: the old pod stays; the revision it names is kept beyond the limit.
    assert_eq!(names(&c.live_pods().await), names(&first));
    let revisions = c.revisions().await;
    let numbers: Vec<i64> = revisions.iter().map(|r| r.revision).collect();
    assert_eq!(numbers, [1, 3], "revision 2 trimmed, 1 still used by the pod");

    // Deleting the pod by hand brings one of the newest template.
    c.pods.delete(NS, &name(&first[0])).await.unwrap();
    let newest = hash_label(&revisions[1].metadata).to_owned();
    c.eventually("a pod of revision 3", || async {
        let pods = c.live_pods().await;
        (pods.len() == 1 && hash_label(&pods[0].metadata) == newest).then_some(())
    })
    .await;
    // The next template: now nothing uses revision 1, so it is the one trimmed.
    c.patch_ds(json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "agent:4"}]}}}}))
        .await;
    c.eventually("revisions 3 and 4", || async {
        let numbers: Vec<i64> = c.revisions().await.iter().map(|r| r.revision).collect();
        (numbers == [3, 4]).then_some(())
    })
    .await;
    c.stop().await;
}

fn names(pods: &[Pod]) -> Vec<String> {
    let mut n: Vec<String> = pods.iter().map(name).collect();
    n.sort();
    n
}

#[tokio::test(start_paused = true)]
async fn a_revision_name_collision_raises_collision_count() {
    let mut c = Cluster::new().await;
    c.node("n1", json!({})).await;
    c.ds.create(NS, &daemon_set(json!({}))).await.unwrap();
    // Someone else's revision already has the name the template hashes to.
    let ds = c.get_ds().await;
    let taken = format!("agent-{}", crate::daemon::history::template_hash(&ds));
    let squatter: ControllerRevision = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": taken, "namespace": "default", "labels": {"app": "other"}},
        "data": {"spec": {"template": {"$patch": "replace"}}},
        "revision": 1,
    }))
    .unwrap();
    c.revisions.create(NS, &squatter).await.unwrap();
    c.start();

    let pods = c.wait_for_placement(&["n1"]).await;
    let ds = c.get_ds().await;
    assert_eq!(ds.status.as_ref().and_then(|s| s.collision_count), Some(1));
    let ours: Vec<ControllerRevision> = c
        .revisions()
        .await
        .into_iter()
        .filter(|r| r.metadata.name.as_deref() != Some(taken.as_str()))
        .collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(hash_label(&ours[0].metadata), hash_label(&pods[0].metadata));
    assert_eq!(
        ours[0].metadata.name.as_deref(),
        Some(format!("agent-{}", crate::daemon::history::template_hash(&ds)).as_str())
    );
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn rolling_update_without_surge_replaces_max_unavailable_at_a_time() {
    let mut c = Cluster::new().await;
    for n in ["n1", "n2", "n3"] {
        c.node(n, json!({})).await;
    }
    c.start();
    // 50% of 3 nodes rounds up to 2.
    let strategy = json!({"updateStrategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "50%"}}});
    c.ds.create(NS, &daemon_set(strategy)).await.unwrap();
    for p in c.wait_for_placement(&["n1", "n2", "n3"]).await {
        c.make_ready(&name(&p)).await;
    }
    c.eventually("3 available", || async {
        let s = c.get_ds().await.status?;
        (s.number_available == Some(3)).then_some(())
    })
    .await;
    c.patch_ds(json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "agent:2"}]}}}}))
        .await;
    let new_hash = c
        .eventually("the second revision", || async {
            let r = c.revisions().await;
            (r.len() == 2).then(|| hash_label(&r[1].metadata).to_owned())
        })
        .await;
    // Two old pods go at once and are recreated; the third waits for them.
    let replaced = c
        .eventually("two new pods", || async {
            let pods = c.live_pods().await;
            let new: Vec<Pod> = pods
                .iter()
                .filter(|p| hash_label(&p.metadata) == new_hash)
                .cloned()
                .collect();
            (pods.len() == 3 && new.len() == 2).then_some(new)
        })
        .await;
    c.clock.sleep(Duration::from_secs(2)).await;
    let pods = c.live_pods().await;
    let new_count = pods
        .iter()
        .filter(|p| hash_label(&p.metadata) == new_hash)
        .count();
    assert_eq!(
        new_count, 2,
        "the last old pod waits while two nodes are unavailable"
    );
    for p in &replaced {
        c.make_ready(&name(p)).await;
    }
    let last = c
        .eventually("the last pod replaced", || async {
            let pods = c.live_pods().await;
            let all_new = pods.len() == 3 && pods.iter().all(|p| hash_label(&p.metadata) == new_hash);
            all_new.then_some(pods)
        })
        .await;
    assert_eq!(c.placement().await, ["n1", "n2", "n3"]);
    for p in last {
        c.make_ready(&name(&p)).await;
    }
    c.eventually("rolled out", || async {
        let s = c.get_ds().await.status?;
        (s.updated_number_scheduled == Some(3) && s.number_available == Some(3)).then_some(())
    })
    .await;
    c.stop().await;
}
