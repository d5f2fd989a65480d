//! Nothing lost: acknowledged writes and the revision counter survive a
//! clean stop (kill -9: `tests/crash/kill9.rs`), and a watch resumes from the last
//! resourceVersion it saw.

use std::time::Duration;

use e2e::{Cluster, Config};

fn config(dir: &std::path::Path) -> Config {
    Config {
        data_dir: Some(dir.to_path_buf()),
        ..Config::ephemeral()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clean_restart_keeps_objects_revision_and_watch_history() {
    let data = tempfile::tempdir().unwrap();
    let mut c = Cluster::start_with(config(data.path())).await;
    c.ok(&[
        "create",
        "deployment",
        "web",
        "--image",
        "nginx",
        "--replicas",
        "2",
    ])
    .await;
    c.ok(&["create", "configmap", "one", "--from-literal=a=1"]).await;
    let rv_before = c.server().api().store().revision();
    c.stop().await;

    let mut c = Cluster::start_with(config(data.path())).await;
    assert_eq!(c.json(&["get", "deploy", "web"]).await["spec"]["replicas"], 2);
    assert_eq!(c.json(&["get", "cm", "one"]).await["data"]["a"], "1");
    // The revision counter continues: the next write is newer than any before.
    c.ok(&["create", "configmap", "two"]).await;
    let rv_two: u64 = c.json(&["get", "cm", "two"]).await["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv_two > rv_before, "{rv_two} <= {rv_before}");
    // A watch from the pre-restart resourceVersion replays what came after.
    let api = c.server().api();
    let info = api.resource("", "v1", "configmaps").unwrap();
    let opts = apiserver::api::WatchOptions {
        resource_version: Some(rv_before),
        ..Default::default()
    };
    let mut events = api.watch(&info, Some("default"), &opts).unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .unwrap()
        .unwrap();
    match first {
        apiserver::api::WatchEvent::Added(o) => assert_eq!(o["metadata"]["name"], "two"),
        other => panic!("expected ADDED two, got {other:?}"),
    }
    c.stop().await;
}
