//! Named regression tests for defects found and fixed in the API server, each with a short
//! postmortem. Time is tokio's paused clock: nothing here depends on how fast the machine is.

use std::time::Duration;

use apiserver::Registry;
use apiserver::event_ttl::{event_prefixes, run};
use apiserver::testkit::{Tasks, TestApi};
use store::Clock;

/// Postmortem: Event expiry follows the store's writes to the Event collections and, in the same
/// `select!`, waits one simulated second before looking for expired Events. The wait was a new
/// `sleep` made on every turn of the loop, so every watch event restarted it; in a busy cluster
/// Events are written more often than once a second, the wait never completed, and no Event
/// expired while the stream lasted. Fix: one timer that lives across loop
/// turns and is re-armed only when it fires.
#[tokio::test(start_paused = true)]
async fn event_ttl_fires_while_events_are_written_more_than_once_a_second() {
    let clock = Clock::system();
    let store = TestApi::builder().clock(clock.clone()).store();
    let prefix = event_prefixes(&Registry::new())[0].clone();
    let ttl = Duration::from_secs(60);
    let mut tasks = Tasks::new();
    let (expiring, expiry_clock, expiry_prefix) = (store.clone(), clock.clone(), prefix.clone());
    tasks.spawn(move |stop| run(expiring, expiry_clock, expiry_prefix, ttl, stop));
    let old = format!("{prefix}default/old");
    store.create(&old, b"{}".to_vec()).await.expect("create");
    // Another Event every 400 ms, for 80 s: the expiry check is never "idle" for a whole second.
    for i in 0..200 {
        let busy = format!("{prefix}default/busy-{i}");
        store.create(&busy, b"{}".to_vec()).await.expect("create");
        clock.sleep(Duration::from_millis(400)).await;
    }
    assert!(
        store.get(&old).expect("get").is_none(),
        "80 s after its only write, with a 60 s TTL"
    );
    let first_busy = format!("{prefix}default/busy-0");
    assert!(
        store.get(&first_busy).expect("get").is_none(),
        "the busy writes expire too"
    );
    let last_busy = format!("{prefix}default/busy-199");
    assert!(store.get(&last_busy).expect("get").is_some(), "written 0.4 s ago");
    let stopped = tasks.stop(Duration::from_secs(10)).await;
    stopped.expect("the expiry loop stops");
}

/// Postmortem: kube-rs's `finalizer` helper adds an object's first finalizer with the JSON patch
/// `[{"op":"test","path":"/metadata/finalizers","value":null}, {"op":"add",...}]`. The json-patch
/// crate fails a `test` whose path is missing; upstream's json-patch counts a missing member of an
/// existing object as null, so the test passes. Every kube-rs operator with a finalizer got 422
/// and never reconciled (found by the example operator's test). Fix: `patch/json.rs` lets a null
/// test on a missing member of an existing object pass, and words failures as upstream does.
#[tokio::test]
async fn kube_rs_adds_a_first_finalizer_behind_a_null_test() {
    use apiserver::api::{PatchType, WriteOptions};
    use serde_json::json;
    let api = TestApi::builder().build().await;
    let maps = api
        .resource("", "v1", "configmaps")
        .expect("configmaps are served");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let opts = WriteOptions::default();
    api.create(&maps, Some("default"), cm, &opts)
        .await
        .expect("create");
    let patch = json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
        {"op": "add", "path": "/metadata/finalizers", "value": ["example.com/cleanup"]},
    ]);
    let written = api
        .patch(&maps, Some("default"), "c", PatchType::Json, &patch, None, &opts)
        .await
        .expect("the null test passes");
    assert_eq!(
        written.object["metadata"]["finalizers"],
        json!(["example.com/cleanup"])
    );
    // Now that the member exists, the same test fails, as upstream's does.
    let err = api
        .patch(&maps, Some("default"), "c", PatchType::Json, &patch, None, &opts)
        .await
        .unwrap_err();
    assert!(
        err.message
            .ends_with("testing value /metadata/finalizers failed: test failed"),
        "{}",
        err.message
    );
}
