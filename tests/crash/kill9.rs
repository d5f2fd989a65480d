//! kill -9 of the real binary loses no acknowledged write, and SIGTERM
//! exits cleanly within 2 s. (A test of the `miniplane` package, so that
//! Cargo builds the binary it runs.)

use std::path::PathBuf;
use std::time::Duration;

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

/// `miniplane up` on `data` with `--time-scale <scale>`.
async fn spawn_up_scaled(data: &std::path::Path, scale: &str) -> (tokio::process::Child, PathBuf) {
    let kubeconfig = data.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let child = tokio::process::Command::new(miniplane_binary())
        .args([
            "up",
            "--listen",
            "127.0.0.1:0",
            "--time-scale",
            scale,
            "--data-dir",
        ])
        .arg(data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("miniplane up starts");
    let clock = store::Clock::system();
    let wait = async {
        while !kubeconfig.is_file() {
            clock.sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("kubeconfig appears");
    (child, kubeconfig)
}

/// `kubectl get <what> -l app=web -o json`, its items.
async fn web_items(kc: &std::path::Path, cache: &std::path::Path, what: &str) -> Vec<serde_json::Value> {
    let out = kubectl(kc, cache, &["get", what, "-l", "app=web", "-o", "json"]).await;
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    list["items"].as_array().cloned().unwrap_or_default()
}

fn image_of(template_owner: &serde_json::Value) -> &str {
    template_owner["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or("")
}

fn revision_of(o: &serde_json::Value) -> &str {
    o["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        .as_str()
        .unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_rollout_completes_after_restart() {
    let test = async {
        let data = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let clock = store::Clock::system();
        let (mut child, kc) = spawn_up_scaled(data.path(), "10").await;
        let k = |args: &'static [&'static str]| kubectl(&kc, cache.path(), args);
        k(&["create", "deployment", "web", "--image=nginx:1.0", "--replicas=6"]).await;
        k(&["rollout", "status", "deployment/web", "--timeout=60s"]).await;
        k(&["set", "image", "deployment/web", "nginx=nginx:2.0"]).await;

        // Kill -9 once the new ReplicaSet has some available pods but the
        // rollout is not yet done (old pods left, or new ones not available).
        let mut killed_mid_rollout = false;
        for _ in 0..400 {
            let rss = web_items(&kc, cache.path(), "rs").await;
            let new = rss.iter().find(|rs| image_of(rs) == "nginx:2.0");
            let old_left = rss
                .iter()
                .filter(|rs| image_of(rs) == "nginx:1.0")
                .any(|rs| rs["status"]["replicas"].as_i64().unwrap_or(0) > 0);
            if let Some(new) = new {
                let available = new["status"]["availableReplicas"].as_i64().unwrap_or(0);
                if available >= 1 && (available < 6 || old_left) {
                    eprintln!(
                        "kill -9 with the new ReplicaSet at {available}/6 available, old pods left: {old_left}"
                    );
                    killed_mid_rollout = true;
                    break;
                }
                if available >= 6 && !old_left {
                    break; // already complete: too late to kill mid-rollout
                }
            }
            clock.sleep(Duration::from_millis(5)).await;
        }
        child.start_kill().unwrap(); // SIGKILL
        child.wait().await.unwrap();
        assert!(
            killed_mid_rollout,
            "the rollout finished before it could be interrupted"
        );

        let (mut child, kc) = spawn_up_scaled(data.path(), "10").await;
        let k = |args: &'static [&'static str]| kubectl(&kc, cache.path(), args);
        k(&["rollout", "status", "deployment/web", "--timeout=60s"]).await;

        // Old pods may still be terminating right after the rollout reports
        // done; wait (bounded) until only the 6 new ones are left.
        let mut pods = Vec::new();
        for _ in 0..300 {
            pods = web_items(&kc, cache.path(), "pods").await;
            if pods.len() == 6 {
                break;
            }
            clock.sleep(Duration::from_millis(100)).await;
        }
        let rss = web_items(&kc, cache.path(), "rs").await;
        let summary: Vec<_> = rss
            .iter()
            .map(|rs| {
                format!(
                    "{} image={} spec={} status={} rev={}",
                    rs["metadata"]["name"],
                    image_of(rs),
                    rs["spec"]["replicas"],
                    rs["status"]["replicas"],
                    revision_of(rs)
                )
            })
            .collect();
        assert_eq!(rss.len(), 2, "ReplicaSets: {summary:#?}");
        let old = rss.iter().find(|rs| image_of(rs) == "nginx:1.0").expect("old RS");
        let new = rss.iter().find(|rs| image_of(rs) == "nginx:2.0").expect("new RS");
        assert_eq!(old["spec"]["replicas"], 0, "{summary:#?}");
        assert_eq!(old["status"]["replicas"].as_i64().unwrap_or(0), 0, "{summary:#?}");
        assert_eq!(new["spec"]["replicas"], 6, "{summary:#?}");
        assert_eq!(new["status"]["replicas"], 6, "{summary:#?}");
        assert_eq!(new["status"]["availableReplicas"], 6, "{summary:#?}");
        assert_eq!(revision_of(old), "1", "{summary:#?}");
        assert_eq!(revision_of(new), "2", "{summary:#?}");

        let new_uid = new["metadata"]["uid"].as_str().unwrap();
        let pod_summary: Vec<_> = pods
            .iter()
            .map(|p| {
                format!(
                    "{} image={} phase={} owner={} deleting={}",
                    p["metadata"]["name"],
                    p["spec"]["containers"][0]["image"],
                    p["status"]["phase"],
                    p["metadata"]["ownerReferences"][0]["name"],
                    p["metadata"]["deletionTimestamp"].is_string()
                )
            })
            .collect();
        assert_eq!(pods.len(), 6, "pods: {pod_summary:#?}");
        let mut names: Vec<_> = pods
            .iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 6, "pods: {pod_summary:#?}");
        for p in &pods {
            assert_eq!(
                p["spec"]["containers"][0]["image"], "nginx:2.0",
                "{pod_summary:#?}"
            );
            assert_eq!(
                p["metadata"]["ownerReferences"][0]["uid"], new_uid,
                "{pod_summary:#?}"
            );
            assert!(p["metadata"]["deletionTimestamp"].is_null(), "{pod_summary:#?}");
        }

        let d: serde_json::Value =
            serde_json::from_str(&k(&["get", "deployment", "web", "-o", "json"]).await).unwrap();
        assert_eq!(revision_of(&d), "2");
        assert_eq!(d["status"]["replicas"], 6, "{}", d["status"]);
        assert_eq!(d["status"]["updatedReplicas"], 6, "{}", d["status"]);
        assert_eq!(d["status"]["availableReplicas"], 6, "{}", d["status"]);
        assert_eq!(d["status"]["observedGeneration"], d["metadata"]["generation"]);

        child.start_kill().unwrap();
        child.wait().await.unwrap();
    };
    tokio::time::timeout(Duration::from_secs(240), test)
        .await
        .expect("the whole test finishes within 240 s");
}

/// A second `up` on a data dir in use is refused at once, in one line that
/// names the holder, with no backtrace even when one is asked for; after a
/// kill -9 of the holder the dir is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_dir_in_use_is_refused_in_one_line() {
    let data = tempfile::tempdir().unwrap();
    let (mut first, _kubeconfig) = spawn_up(data.path()).await;
    let second = tokio::process::Command::new(miniplane_binary())
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .env("RUST_BACKTRACE", "1")
        .output();
    let second = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("the second up exits at once")
        .unwrap();
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| !l.contains(" INFO ")).collect();
    let pid = first.id().unwrap();
    assert_eq!(
        errors,
        [format!(
            "error: starting miniplane: the data dir {} is in use by another miniplane (pid {pid}); stop that one, or pass another --data-dir",
            data.path().display()
        )],
        "{stderr}"
    );
    first.kill().await.unwrap();
    let (mut again, _) = spawn_up(data.path()).await;
    again.kill().await.unwrap();
}
