//! Named regression tests for defects found and fixed in the controllers and their runtime, each
//! with a short postmortem. Time is tokio's paused clock: nothing here depends on how fast the
//! machine is.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use apiserver::testkit::{Tasks, TestApi};
use controllers::garbagecollector::controller::{FIELD_MANAGER, GarbageCollector, deletable_resources};
use controllers::runtime::{
    BoxFuture, Call, Client, ClientResult, ControllerExpectations, DeleteParams, InProcessClient, ListParams,
    ResourceRef, Verb, WrapClient,
};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use serde_json::json;
use store::Clock;
use tokio::time::timeout;

fn clock(scale: f64) -> Clock {
    Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000), scale)
}

// ---------------------------------------------------------------------------------------------
// Expectations in simulated time
// ---------------------------------------------------------------------------------------------

/// Postmortem: expectations (the ReplicaSet controller's "I created 500 pods, wait until the
/// informer shows them") count as satisfied after five minutes, in case an event was missed. The
/// five minutes were measured on the simulated clock. At `--time-scale 1000` they passed in 0.3 s
/// of real time, while the informer legitimately needed longer than that to deliver a burst of
/// creations under load; the controller then synced on a stale cache and created pods again before
/// it had seen the last ones. Fix: the timeout is five
/// minutes of real time whatever the time scale, i.e. five minutes × scale on the simulated clock.
#[tokio::test(start_paused = true)]
async fn expectations_wait_five_real_minutes_at_time_scale_1000() {
    let e = ControllerExpectations::new(clock(1000.0));
    e.expect_creations("default/web", 500);
    // One real second is 1,000 simulated seconds, three times the 5 simulated minutes of old.
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(!e.satisfied("default/web"), "still waiting after 1 real second");
    tokio::time::advance(Duration::from_secs(4 * 60 + 58)).await;
    assert!(
        !e.satisfied("default/web"),
        "still waiting at 4 min 59 s of real time"
    );
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(e.satisfied("default/web"), "given up after 5 real minutes");
    // Observed creations still satisfy them at once, at any scale.
    e.expect_creations("default/other", 1);
    e.creation_observed("default/other");
    assert!(e.satisfied("default/other"));
}

// ---------------------------------------------------------------------------------------------
// Cascading deletion without a namespace scan per deleted owner
// ---------------------------------------------------------------------------------------------

const NS: &str = "default";

/// Counts the reads a component makes.
struct CountingClient {
    inner: Arc<dyn Client>,
    lists: AtomicUsize,
    gets: AtomicUsize,
}

impl CountingClient {
    fn reads(&self) -> (usize, usize) {
        (
            self.lists.load(Ordering::SeqCst),
            self.gets.load(Ordering::SeqCst),
        )
    }
}

impl WrapClient for CountingClient {
    fn inner(&self) -> &dyn Client {
        &*self.inner
    }

    fn around_read<'a, T: Send + 'a>(
        &'a self,
        call: &Call<'_>,
        next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
    ) -> BoxFuture<'a, ClientResult<T>> {
        match call.verb {
            Verb::Get => self.gets.fetch_add(1, Ordering::SeqCst),
            Verb::List => self.lists.fetch_add(1, Ordering::SeqCst),
            _ => 0,
        };
        next()
    }
}

/// Runs one cascade: `owners` ConfigMaps with `per_owner` Secret dependents each, next to
/// `bystanders` unrelated ConfigMaps in the same namespace; deletes every owner (Background) and
/// waits for all dependents to go. Returns the garbage collector's (lists, gets) during the cascade.
async fn cascade_reads(bystanders: usize, owners: usize, per_owner: usize) -> (usize, usize) {
    let clock = clock(1.0);
    let api = TestApi::builder().clock(clock.clone()).build().await;
    let counting = Arc::new(CountingClient {
        inner: Arc::new(InProcessClient::new(api.clone(), FIELD_MANAGER)),
        lists: AtomicUsize::new(0),
        gets: AtomicUsize::new(0),
    });
    let gc_client: Arc<dyn Client> = counting.clone();
    let gc = GarbageCollector::new(gc_client, clock.clone(), deletable_resources(api.registry()));
    let mut tasks = Tasks::new();
    tasks.spawn(|stop| gc.run(2, stop));
    let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
    let (configmaps, secrets) = (ResourceRef::of::<ConfigMap>(), ResourceRef::of::<Secret>());

    for i in 0..bystanders {
        let obj =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("bystander-{i}")}});
        client.create(&configmaps, Some(NS), obj).await.expect("create");
    }
    let mut owner_names = Vec::new();
    for o in 0..owners {
        let name = format!("owner-{o}");
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        let owner = client.create(&configmaps, Some(NS), obj).await.expect("create");
        let reference = json!({
            "apiVersion": "v1", "kind": "ConfigMap", "name": name,
            "uid": owner["metadata"]["uid"], "blockOwnerDeletion": true,
        });
        for d in 0..per_owner {
            let obj = json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": format!("{name}-dep-{d}"), "ownerReferences": [reference]},
            });
            client.create(&secrets, Some(NS), obj).await.expect("create");
        }
        owner_names.push(name);
    }
    // Let the collector list, watch and build its graph.
    clock.sleep(Duration::from_secs(2)).await;
    let before = counting.reads();

    for name in &owner_names {
        let params = DeleteParams::propagation("Background");
        client
            .delete(&configmaps, Some(NS), name, &params)
            .await
            .expect("delete");
    }
    let all_gone = async {
        loop {
            let (left, _) = client
                .list(&secrets, Some(NS), &ListParams::default())
                .await
                .expect("list");
            if left.is_empty() {
                break;
            }
            clock.sleep(Duration::from_millis(20)).await;
        }
    };
    timeout(Duration::from_secs(60), all_gone)
        .await
        .expect("every dependent collected within 60 s");
    let after = counting.reads();
    tasks
        .stop(Duration::from_secs(10))
        .await
        .expect("the collector stops");
    (after.0 - before.0, after.1 - before.1)
}

/// Postmortem: cascading deletion used to run inside the API server, which found a deleted
/// owner's dependents by listing and decoding every object of every deletable resource in the
/// namespace. A rollout deletes many pods, each one a cascade, so the work grew with the square of
/// the number of pods. The first fix decoded
/// only records whose bytes mention the owner's uid; cascading deletion has since moved to the
/// garbage collector controller, which keeps an owner graph fed by watches and finds dependents by
/// uid in memory. This test pins that the collector's work per deleted owner does not depend on how
/// many unrelated objects share the namespace: no list at all during the cascade, and the same
/// number of reads with or without 400 bystanders.
#[tokio::test(start_paused = true)]
async fn cascading_deletion_does_not_scan_the_namespace_per_deleted_owner() {
    let (lists_alone, gets_alone) = cascade_reads(0, 5, 10).await;
    let (lists_crowded, gets_crowded) = cascade_reads(400, 5, 10).await;
    println!(
        "reads during the cascade: alone {lists_alone} lists, {gets_alone} gets; crowded {lists_crowded} lists, {gets_crowded} gets"
    );
    assert_eq!(
        (lists_alone, lists_crowded),
        (0, 0),
        "the collector listed during the cascade"
    );
    // A few reads of slack for a retried item; a namespace scan would be hundreds.
    assert!(
        gets_crowded <= gets_alone + 5,
        "reads grew with unrelated objects: {gets_alone} alone, {gets_crowded} next to 400 bystanders"
    );
}
