//! `miniplane node stop|start|list` against a served miniplane on accelerated time, checked
//! with the real `kubectl`: `stop` sets the `sim.miniplane.dev/heartbeat: stopped` annotation
//! and the node turns NotReady once the node lifecycle controller's grace period has passed;
//! `start` removes the annotation and the node is Ready again; an unknown node and an
//! unreachable server fail with kubectl's words; the kubeconfig is found through the flag,
//! `$KUBECONFIG` and the data dir. (A test of the `miniplane` package, so that Cargo builds the
//! binary it runs.)

use std::path::Path;
use std::time::Duration;

use miniplane::Cluster;
use serde_json::Value;

/// Simulated seconds per real second.
const SCALE: f64 = 20.0;
/// Real-time bound of every poll (the node lifecycle controller's grace period is at least
/// 8 real seconds).
const PATIENCE: Duration = Duration::from_secs(40);
const NODE: &str = "miniplane-worker-2";
const ANNOTATION: &str = "sim.miniplane.dev/heartbeat";

/// One run of a program.
struct Run {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `miniplane node <args>` with the environment `env` (and no `$KUBECONFIG` unless given).
async fn miniplane_node(args: &[&str], env: &[(&str, &Path)]) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_miniplane"));
    command.arg("node").args(args).env_remove("KUBECONFIG");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.kill_on_drop(true).output().await.expect("miniplane runs");
    Run {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `miniplane node <args> --kubeconfig K`, which must succeed; its stdout.
async fn node_ok(kubeconfig: &Path, args: &[&str]) -> String {
    let k = kubeconfig.to_str().expect("utf-8 path");
    let r = miniplane_node(&[args, &["--kubeconfig", k]].concat(), &[]).await;
    assert!(r.success, "miniplane node {args:?}: {}{}", r.stdout, r.stderr);
    r.stdout
}

/// `kubectl get node NAME -o json`.
async fn kubectl_node(kubeconfig: &Path, cache: &Path, name: &str) -> Value {
    let out = tokio::process::Command::new("kubectl")
        .args(["get", "node", name, "-o", "json"])
        .arg(format!("--cache-dir={}", cache.display()))
        .env("KUBECONFIG", kubeconfig)
        .kill_on_drop(true)
        .output()
        .await
        .expect("kubectl runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("kubectl prints JSON")
}

fn ready_status(node: &Value) -> String {
    let conditions = node["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ready = conditions.iter().find(|c| c["type"] == "Ready");
    ready.and_then(|c| c["status"].as_str()).unwrap_or("").to_string()
}

fn taint_keys(node: &Value) -> Vec<String> {
    let taints = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
    taints
        .iter()
        .filter_map(|t| t["key"].as_str().map(str::to_string))
        .collect()
}

/// Polls `kubectl get node` until `check` holds, for up to [`PATIENCE`] of real time (waiting
/// on the cluster's `clock` between polls).
async fn eventually_node(
    clock: &store::Clock,
    kubeconfig: &Path,
    cache: &Path,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> Value {
    let polled = tokio::time::timeout(PATIENCE, async {
        loop {
            let node = kubectl_node(kubeconfig, cache, NODE).await;
            if check(&node) {
                return node;
            }
            clock
                .sleep(Duration::from_millis(200).mul_f64(clock.scale()))
                .await;
        }
    });
    polled
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_makes_a_node_not_ready_and_start_brings_it_back() {
    let cluster = Cluster::builder().time_scale(SCALE).serve().start().await;
    let kubeconfig = cluster.kubeconfig().to_path_buf();
    let cache = tempfile::tempdir().unwrap();
    let ready = eventually_node(
        cluster.clock(),
        &kubeconfig,
        cache.path(),
        "the node Ready",
        |n| ready_status(n) == "True",
    )
    .await;
    assert!(ready["metadata"]["annotations"][ANNOTATION].is_null());

    let out = node_ok(&kubeconfig, &["stop", NODE]).await;
    assert!(
        out.starts_with("node/miniplane-worker-2 heartbeat stopped"),
        "{out}"
    );
    let stopped = kubectl_node(&kubeconfig, cache.path(), NODE).await;
    assert_eq!(stopped["metadata"]["annotations"][ANNOTATION], "stopped");
    let list = node_ok(&kubeconfig, &["list"]).await;
    let row = list
        .lines()
        .find(|l| l.starts_with(NODE))
        .unwrap_or_else(|| panic!("{list}"));
    assert!(row.ends_with("stopped"), "{list}");
    assert!(
        list.lines().filter(|l| l.ends_with("running")).count() == 2,
        "{list}"
    );

    // The Lease goes stale: the node lifecycle controller marks the node Unknown and taints it.
    let silent = eventually_node(
        cluster.clock(),
        &kubeconfig,
        cache.path(),
        "the node NotReady",
        |n| ready_status(n) == "Unknown",
    )
    .await;
    assert!(
        taint_keys(&silent).contains(&"node.kubernetes.io/unreachable".to_string()),
        "{:?}",
        taint_keys(&silent)
    );
    let list = node_ok(&kubeconfig, &["list"]).await;
    let row = list
        .lines()
        .find(|l| l.starts_with(NODE))
        .unwrap_or_else(|| panic!("{list}"));
    assert!(row.contains(" NotReady ") && row.ends_with("stopped"), "{list}");

    let out = node_ok(&kubeconfig, &["start", NODE]).await;
    assert_eq!(out, "node/miniplane-worker-2 heartbeat started\n");
    let back = eventually_node(
        cluster.clock(),
        &kubeconfig,
        cache.path(),
        "the node Ready again",
        |n| {
            ready_status(n) == "True"
                && !taint_keys(n).contains(&"node.kubernetes.io/unreachable".to_string())
        },
    )
    .await;
    assert!(
        back["metadata"]["annotations"][ANNOTATION].is_null(),
        "start removes the annotation"
    );
    cluster.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_read_as_kubectls_and_the_kubeconfig_is_found_as_documented() {
    let cluster = Cluster::builder().nodes(1).serve().start().await;
    let kubeconfig = cluster.kubeconfig().to_path_buf();
    let k = kubeconfig.to_str().unwrap();

    let r = miniplane_node(&["stop", "nope", "--kubeconfig", k], &[]).await;
    assert!(!r.success);
    assert_eq!(
        r.stderr,
        "Error from server (NotFound): nodes \"nope\" not found\n"
    );
    let r = miniplane_node(&["start", "nope", "--kubeconfig", k], &[]).await;
    assert_eq!(
        r.stderr,
        "Error from server (NotFound): nodes \"nope\" not found\n"
    );

    // $KUBECONFIG, when no flag is given.
    let r = miniplane_node(&["list"], &[("KUBECONFIG", &kubeconfig)]).await;
    assert!(
        r.success && r.stdout.contains("miniplane-worker-1"),
        "{}{}",
        r.stdout,
        r.stderr
    );

    // Else the kubeconfig `miniplane up` writes into its data dir.
    let data = tempfile::tempdir().unwrap();
    let xdg = data.path().join("xdg");
    std::fs::create_dir_all(xdg.join("miniplane")).unwrap();
    std::fs::copy(&kubeconfig, xdg.join("miniplane/kubeconfig")).unwrap();
    let r = miniplane_node(&["list"], &[("XDG_DATA_HOME", &xdg)]).await;
    assert!(
        r.success && r.stdout.contains("miniplane-worker-1"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let empty = data.path().join("empty");
    let r = miniplane_node(&["list", "--data-dir"], &[]).await;
    assert!(!r.success, "--data-dir takes a path");
    let r = miniplane_node(&["list", "--data-dir", empty.to_str().unwrap()], &[]).await;
    assert!(!r.success);
    assert!(
        r.stderr.contains(&format!(
            "no kubeconfig at {}",
            empty.join("kubeconfig").display()
        )) && r.stderr.contains("miniplane up"),
        "{}",
        r.stderr
    );

    // A server that is gone: the same kubeconfig, a port nobody listens on.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let url = cluster.url().unwrap();
    let dead = data.path().join("dead-kubeconfig");
    std::fs::write(&dead, text.replace(&url, &format!("https://127.0.0.1:{port}"))).unwrap();
    let r = miniplane_node(&["stop", NODE, "--kubeconfig", dead.to_str().unwrap()], &[]).await;
    assert!(!r.success);
    assert_eq!(
        r.stderr,
        format!(
            "The connection to the server 127.0.0.1:{port} was refused - did you specify the right host or port?\n"
        )
    );
    cluster.stop().await.unwrap();
}
