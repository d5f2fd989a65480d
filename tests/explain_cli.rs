//! `kubectl miniplane explain` through kubectl's plugin mechanism: the `kubectl-miniplane`
//! binary on kubectl's `PATH`, the kubeconfig passed on as `$KUBECONFIG`. (A test of the
//! `miniplane` package, so that Cargo builds the binary it runs.)

use std::path::Path;
use std::time::Duration;

use miniplane::Cluster;

/// Runs the real kubectl with `args`, the plugin's directory first on `PATH`.
async fn kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> (bool, String, String) {
    let plugin = Path::new(env!("CARGO_BIN_EXE_kubectl-miniplane"));
    let dir = plugin.parent().expect("the binary's directory");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let out = tokio::process::Command::new("kubectl")
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        // kubectl's discovery cache under a home of the test's own (a `--cache-dir` flag would
        // be passed on to the plugin, which does not take it).
        .env("HOME", cache)
        .env("PATH", std::env::join_paths(dirs).expect("a PATH"))
        .kill_on_drop(true)
        .output()
        .await
        .expect("kubectl runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_runs_miniplane_explain_as_a_plugin() {
    let cluster = Cluster::builder().time_scale(10.0).serve().start().await;
    let kubeconfig = cluster.kubeconfig().to_path_buf();
    let cache = tempfile::tempdir().expect("a temp dir");
    let (ok, _, err) = kubectl(
        &kubeconfig,
        cache.path(),
        &["create", "deployment", "web", "--image=nginx:1.25"],
    )
    .await;
    assert!(ok, "{err}");
    let mut last = String::new();
    for _ in 0..100 {
        let (ok, out, err) =
            kubectl(&kubeconfig, cache.path(), &["miniplane", "explain", "deploy/web"]).await;
        last = format!("{out}{err}");
        if ok && out.contains("getNewReplicaSet") {
            assert!(
                out.contains("you (kubectl-create) created deployment default/web"),
                "{out}"
            );
            let (ok, _, err) =
                kubectl(&kubeconfig, cache.path(), &["miniplane", "explain", "widgets/x"]).await;
            assert!(!ok);
            assert!(
                err.contains("the server doesn't have a resource type \"widgets\""),
                "{err}"
            );
            return;
        }
        let clock = cluster.clock();
        clock
            .sleep(Duration::from_millis(200).mul_f64(clock.scale()))
            .await;
    }
    panic!("kubectl miniplane explain never told the story: {last}");
}
