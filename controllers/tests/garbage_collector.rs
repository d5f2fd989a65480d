//! The garbage collector running for real against an in-process API server
//! (temporary buffered store, paused tokio time), with ConfigMaps and
//! Secrets as owners and dependents so that no other controller is needed.
//!
//! Covered: Background (dependents deleted; a dependent with a second,
//! solid owner stays and loses the dangling reference), Orphan (references
//! stripped, owner gone, dependents stay), Foreground (the owner waits for
//! its blocking dependents only), a three-level Foreground chain, and
//! dangling references made at creation (an absent uid; the right name with
//! another uid).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::testkit::{Tasks, TestApi};
use controllers::garbagecollector::controller::{FIELD_MANAGER, GarbageCollector, deletable_resources};
use controllers::runtime::{Client, ClientResult, DeleteParams, InProcessClient, PatchType, ResourceRef};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use serde_json::{Value, json};
use store::Clock;
use tokio::time::timeout;

const NS: &str = "default";
/// A finalizer of the test's own, to hold a dependent while it is being deleted.
const HOLD: &str = "example.com/hold";

/// An API server with a garbage collector running, and a client for the test.
struct Cluster {
    client: Arc<dyn Client>,
    clock: Clock,
    tasks: Tasks,
}

impl Cluster {
    async fn start() -> Self {
        let clock = Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000), 1.0);
        let api = TestApi::builder().clock(clock.clone()).build().await;
        let gc_client: Arc<dyn Client> = Arc::new(InProcessClient::new(api.clone(), FIELD_MANAGER));
        let gc = GarbageCollector::new(gc_client, clock.clone(), deletable_resources(api.registry()));
        let mut tasks = Tasks::new();
        tasks.spawn(|stop| gc.run(2, stop));
        Cluster {
            client: Arc::new(InProcessClient::new(api, "test")),
            clock,
            tasks,
        }
    }

    async fn stop(self) {
        let stopped = self.tasks.stop(Duration::from_secs(10)).await;
        stopped.expect("stops within 10 s, without panicking");
    }

    /// Creates a ConfigMap (or a Secret, for `kind = "Secret"`) with these
    /// ownerReferences and finalizers; returns it.
    async fn create(&self, kind: &str, name: &str, owners: &[Value], finalizers: &[&str]) -> Value {
        let obj = json!({
            "apiVersion": "v1", "kind": kind,
            "metadata": {"name": name, "ownerReferences": owners, "finalizers": finalizers},
        });
        self.client.create(&resource(kind), Some(NS), obj).await.unwrap()
    }

    async fn get(&self, kind: &str, name: &str) -> ClientResult<Value> {
        self.client.get(&resource(kind), Some(NS), name).await
    }

    async fn delete(&self, kind: &str, name: &str, propagation: &str) {
        self.client
            .delete(
                &resource(kind),
                Some(NS),
                name,
                &DeleteParams::propagation(propagation),
            )
            .await
            .unwrap();
    }

    /// Removes the test's finalizer, letting a deleting object go.
    async fn release(&self, kind: &str, name: &str) {
        let patch = json!({"metadata": {"finalizers": null}});
        self.client
            .patch(&resource(kind), Some(NS), name, PatchType::Merge, patch, None)
            .await
            .unwrap();
    }

    /// Polls (on the clock) until `check` holds, for up to 60 s of simulated time.
    async fn eventually<F, Fut>(&self, what: &str, mut check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let polled = timeout(Duration::from_secs(60), async {
            while !check().await {
                self.clock.sleep(Duration::from_millis(20)).await;
            }
        });
        polled
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
    }

    async fn gone(&self, kind: &str, name: &str) -> bool {
        matches!(self.get(kind, name).await, Err(e) if e.is_not_found())
    }

    async fn deleting(&self, kind: &str, name: &str) -> bool {
        self.get(kind, name)
            .await
            .is_ok_and(|o| o["metadata"]["deletionTimestamp"].is_string())
    }

    async fn wait_gone(&self, kind: &str, name: &str) {
        self.eventually(&format!("{kind} {name} gone"), || self.gone(kind, name))
            .await;
    }

    async fn wait_deleting(&self, kind: &str, name: &str) {
        self.eventually(&format!("{kind} {name} being deleted"), || {
            self.deleting(kind, name)
        })
        .await;
    }

    /// Lets the garbage collector run for a simulated second.
    async fn settle(&self) {
        self.clock.sleep(Duration::from_secs(1)).await;
    }
}

fn resource(kind: &str) -> ResourceRef {
    match kind {
        "Secret" => ResourceRef::of::<Secret>(),
        _ => ResourceRef::of::<ConfigMap>(),
    }
}

/// An ownerReference to `owner`.
fn owner_ref(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": "v1", "kind": owner["kind"], "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block,
    })
}

fn owner_uids(obj: &Value) -> Vec<&str> {
    obj["metadata"]["ownerReferences"]
        .as_array()
        .map(|refs| refs.iter().filter_map(|r| r["uid"].as_str()).collect())
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn background_deletion_collects_dependents_and_keeps_those_with_another_owner() {
    let c = Cluster::start().await;
    let owner = c.create("ConfigMap", "owner", &[], &[]).await;
    let other = c.create("Secret", "other", &[], &[]).await;
    c.create("ConfigMap", "only-child", &[owner_ref(&owner, false)], &[])
        .await;
    let refs = [owner_ref(&owner, true), owner_ref(&other, false)];
    c.create("ConfigMap", "shared-child", &refs, &[]).await;
    c.settle().await;
    assert!(
        c.get("ConfigMap", "only-child").await.is_ok(),
        "a solid owner keeps it"
    );

    c.delete("ConfigMap", "owner", "Background").await;
    c.wait_gone("ConfigMap", "only-child").await;
    c.eventually("the dangling reference dropped", || async {
        let shared = c.get("ConfigMap", "shared-child").await.unwrap();
        owner_uids(&shared) == [other["metadata"]["uid"].as_str().unwrap()]
    })
    .await;
    assert!(!c.deleting("ConfigMap", "shared-child").await);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn orphan_deletion_strips_references_and_keeps_dependents() {
    let c = Cluster::start().await;
    let owner = c.create("ConfigMap", "owner", &[], &[]).await;
    for name in ["a", "b"] {
        c.create("Secret", name, &[owner_ref(&owner, true)], &[]).await;
    }
    c.settle().await;
    c.delete("ConfigMap", "owner", "Orphan").await;
    c.wait_gone("ConfigMap", "owner").await;
    for name in ["a", "b"] {
        let kept = c.get("Secret", name).await.unwrap();
        assert!(kept["metadata"].get("ownerReferences").is_none(), "{kept}");
        assert!(kept["metadata"].get("deletionTimestamp").is_none(), "{kept}");
    }
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn foreground_deletion_waits_for_blocking_dependents_only() {
    let c = Cluster::start().await;
    let owner = c.create("ConfigMap", "owner", &[], &[]).await;
    c.create("Secret", "blocking", &[owner_ref(&owner, true)], &[HOLD])
        .await;
    c.create("Secret", "not-blocking", &[owner_ref(&owner, false)], &[HOLD])
        .await;
    c.settle().await;

    c.delete("ConfigMap", "owner", "Foreground").await;
    c.wait_deleting("Secret", "blocking").await;
    c.wait_deleting("Secret", "not-blocking").await;
    c.settle().await;
    let waiting = c.get("ConfigMap", "owner").await.unwrap();
    assert_eq!(waiting["metadata"]["finalizers"], json!(["foregroundDeletion"]));

    c.release("Secret", "blocking").await;
    c.wait_gone("ConfigMap", "owner").await;
    assert!(
        c.deleting("Secret", "not-blocking").await,
        "still held by its own finalizer"
    );
    c.release("Secret", "not-blocking").await;
    c.wait_gone("Secret", "not-blocking").await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn foreground_deletion_goes_down_a_chain_and_back_up() {
    let c = Cluster::start().await;
    // Deployment-like → ReplicaSet-like → pod-like, every reference blocking.
    let top = c.create("ConfigMap", "top", &[], &[]).await;
    let middle = c
        .create("ConfigMap", "middle", &[owner_ref(&top, true)], &[])
        .await;
    c.create("Secret", "leaf", &[owner_ref(&middle, true)], &[HOLD])
        .await;
    c.settle().await;

    c.delete("ConfigMap", "top", "Foreground").await;
    c.wait_deleting("Secret", "leaf").await;
    let middle = c.get("ConfigMap", "middle").await.unwrap();
    assert_eq!(
        middle["metadata"]["finalizers"],
        json!(["foregroundDeletion"]),
        "the middle has dependents: deleted in the foreground"
    );
    c.settle().await;
    assert!(c.deleting("ConfigMap", "top").await && c.deleting("ConfigMap", "middle").await);

    c.release("Secret", "leaf").await;
    c.wait_gone("ConfigMap", "top").await;
    assert!(c.gone("ConfigMap", "middle").await && c.gone("Secret", "leaf").await);
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_reference_to_an_absent_uid_is_dangling() {
    let c = Cluster::start().await;
    let ghost = json!({
        "apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "00000000-0000-0000-0000-000000000000",
    });
    c.create("Secret", "orphaned", &[ghost], &[]).await;
    c.wait_gone("Secret", "orphaned").await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_right_name_with_another_uid_is_dangling() {
    let c = Cluster::start().await;
    let namesake = c.create("ConfigMap", "web", &[], &[]).await;
    let mut stale = owner_ref(&namesake, true);
    stale["uid"] = json!("11111111-1111-1111-1111-111111111111");
    c.create("Secret", "child", &[stale], &[]).await;
    c.wait_gone("Secret", "child").await;
    c.settle().await;
    assert!(c.get("ConfigMap", "web").await.is_ok(), "the namesake stays");
    c.stop().await;
}
