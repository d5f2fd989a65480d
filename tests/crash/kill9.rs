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
