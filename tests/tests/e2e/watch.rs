//! `kubectl get -w` and `kubectl wait` see changes as they happen.

use std::process::Stdio;
use std::time::Duration;

use e2e::Cluster;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Reads lines from a child's stdout until one contains `needle`.
async fn read_until(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    needle: &str,
    seen: &mut Vec<String>,
) {
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            let hit = line.contains(needle);
            seen.push(line);
            if hit {
                return true;
            }
        }
        false
    })
    .await;
    assert!(matches!(found, Ok(true)), "never saw {needle:?}; saw {seen:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_watch_sees_added_modified_deleted() {
    let mut c = Cluster::start().await;
    let cache = c.dir.path().join("kube-cache");
    let mut watcher = tokio::process::Command::new(&c.kubectl)
        .args(["get", "configmaps", "--watch", "--output-watch-events"])
        .arg(format!("--cache-dir={}", cache.display()))
        .env("KUBECONFIG", c.server().kubeconfig())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl get -w starts");
    let mut lines = BufReader::new(watcher.stdout.take().expect("piped")).lines();
    let mut seen = Vec::new();
    // Let the watch start: an empty list prints nothing, so create first and
    // wait for that object to show up.
    c.ok(&["create", "configmap", "w1", "--from-literal=a=1"]).await;
    read_until(&mut lines, "ADDED", &mut seen).await;
    c.ok(&["label", "configmap", "w1", "x=y"]).await;
    read_until(&mut lines, "MODIFIED", &mut seen).await;
    c.ok(&["delete", "configmap", "w1"]).await;
    read_until(&mut lines, "DELETED", &mut seen).await;
    assert!(seen.iter().all(|l| !l.contains("<unknown>")), "{seen:#?}");
    // The table columns of a ConfigMap watch.
    assert!(seen[0].contains("EVENT") && seen[0].contains("DATA"), "{seen:#?}");
    watcher.kill().await.ok();
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_delete_returns_when_the_object_goes() {
    let mut c = Cluster::start().await;
    c.ok(&["create", "configmap", "bye"]).await;
    let api = c.server().api().clone();
    let info = api.resource("", "v1", "configmaps").unwrap();
    let server = e2e::Target::from(c.server());
    // Delete once kubectl watches (the only HTTP watch: the components
    // watch in-process). A fixed delay raced kubectl's start, slower over
    // TLS: deleted before its first GET, kubectl found nothing to wait for.
    let deleter = tokio::spawn(async move {
        for _ in 0..400 {
            let metrics = e2e::http(&server, "GET", "/metrics", &[], b"").await;
            let text = String::from_utf8_lossy(&metrics.body).into_owned();
            let open = text
                .lines()
                .find_map(|l| l.strip_prefix("apiserver_longrunning_requests "))
                .and_then(|v| v.trim().parse::<i64>().ok())
                .unwrap_or(0);
            if open > 0 {
                break;
            }
            api.clock().sleep(Duration::from_millis(50)).await;
        }
        api.delete(&info, Some("default"), "bye", &Default::default())
            .await
            .map(|_| ())
    });
    let out = c
        .ok(&["wait", "--for=delete", "configmap/bye", "--timeout=20s"])
        .await;
    assert!(out.contains("condition met"), "{out}");
    deleter.await.unwrap().unwrap();
    c.stop().await;
}
