//! Nothing lost: acknowledged writes and the revision counter survive a
//! clean stop and a kill -9, and a watch resumes from the last
//! resourceVersion it saw.

use std::path::PathBuf;
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
    let rv_before: u64 = c.json(&["get", "configmaps"]).await["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
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

/// The `miniplane` binary built beside this test.
fn miniplane_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bin = dir.join("miniplane");
    assert!(
        bin.is_file(),
        "{} not built; run the tests with `cargo test --workspace`",
        bin.display()
    );
    bin
}

async fn spawn_up(data: &std::path::Path) -> (tokio::process::Child, PathBuf) {
    let kubeconfig = data.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let child = tokio::process::Command::new(miniplane_binary())
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .kill_on_drop(true)
        .spawn()
        .expect("miniplane up starts");
    // The kubeconfig is written only once the server answers.
    let wait = async {
        while !kubeconfig.is_file() {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("kubeconfig appears");
    (child, kubeconfig)
}

async fn kubectl(kubeconfig: &std::path::Path, cache: &std::path::Path, args: &[&str]) -> String {
    let out = tokio::process::Command::new("kubectl")
        .args(args)
        .arg(format!("--cache-dir={}", cache.display()))
        .env("KUBECONFIG", kubeconfig)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_loses_no_acknowledged_write() {
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (mut child, kc) = spawn_up(data.path()).await;
    for i in 0..20 {
        kubectl(
            &kc,
            cache.path(),
            &["create", "configmap", &format!("cm-{i}"), "--from-literal=i=x"],
        )
        .await;
    }
    let rv = kubectl(
        &kc,
        cache.path(),
        &["get", "cm", "cm-19", "-o", "jsonpath={.metadata.resourceVersion}"],
    )
    .await;
    child.start_kill().unwrap(); // SIGKILL
    child.wait().await.unwrap();

    let (mut child, kc) = spawn_up(data.path()).await;
    let names = kubectl(&kc, cache.path(), &["get", "cm", "-o", "name"]).await;
    for i in 0..20 {
        assert!(
            names.contains(&format!("configmap/cm-{i}")),
            "cm-{i} lost after kill -9:\n{names}"
        );
    }
    let rv_after = kubectl(
        &kc,
        cache.path(),
        &["get", "cm", "cm-19", "-o", "jsonpath={.metadata.resourceVersion}"],
    )
    .await;
    assert_eq!(rv, rv_after);
    kubectl(&kc, cache.path(), &["create", "configmap", "after"]).await;
    let rv_new: u64 = kubectl(
        &kc,
        cache.path(),
        &["get", "cm", "after", "-o", "jsonpath={.metadata.resourceVersion}"],
    )
    .await
    .parse()
    .unwrap();
    assert!(rv_new > rv.parse::<u64>().unwrap());

    // SIGTERM: a clean exit with status 0, quickly.
    let pid = child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .expect("exits within 2 s")
        .unwrap();
    assert!(status.success(), "{status:?}");
}
