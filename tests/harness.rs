//! The test harness (`miniplane::Cluster`) and `miniplane up --in-memory`:
//! clusters in one process are isolated, the kube client works in-process
//! and served (and kubectl with the served kubeconfig), controllers are
//! chosen by name, time can be paused and advanced, CRDs are installed, and
//! `--in-memory` writes no file but the kubeconfig it is asked for. (A test
//! of the `miniplane` package, so that Cargo builds the binary it runs.)

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use miniplane::Cluster;
use serde_json::json;

/// The `miniplane` binary built beside this test.
fn miniplane_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_miniplane"))
}

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": {"a": "1"}
    }))
    .unwrap()
}

/// Create, get, patch, list and delete a ConfigMap through `client`.
async fn crud(client: kube::Client) {
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    cms.create(&PostParams::default(), &config_map("crud"))
        .await
        .unwrap();
    let got = cms.get("crud").await.unwrap();
    assert_eq!(got.data.unwrap()["a"], "1");
    let patch = json!({"data": {"a": "2"}});
    let patched = cms
        .patch("crud", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(patched.data.unwrap()["a"], "2");
    let listed = cms.list(&ListParams::default()).await.unwrap();
    assert!(
        listed
            .items
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some("crud"))
    );
    cms.delete("crud", &DeleteParams::default()).await.unwrap();
    let gone = cms.get_opt("crud").await.unwrap();
    assert!(gone.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kube_client_works_in_process() {
    let cluster = Cluster::builder().start().await;
    crud(cluster.client()).await;
    // Authenticated as an admin: discovery and a cluster-scoped read.
    let version = cluster.client().apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(cluster.client());
    assert!(namespaces.get_opt("kube-system").await.unwrap().is_some());
    cluster.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kube_client_and_kubectl_work_served() {
    let cluster = Cluster::builder().serve().start().await;
    assert!(cluster.url().unwrap().starts_with("https://127.0.0.1:"));
    crud(cluster.client()).await;
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    cms.create(&PostParams::default(), &config_map("seen-by-kubectl"))
        .await
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new("kubectl")
        .args(["get", "configmap", "seen-by-kubectl", "-o", "jsonpath={.data.a}"])
        .arg(format!("--cache-dir={}", cache.path().display()))
        .env("KUBECONFIG", cluster.kubeconfig())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1");
    cluster.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clusters_in_one_process_are_isolated() {
    let (one, two) = tokio::join!(Cluster::builder().start(), Cluster::builder().serve().start());
    let in_one: Api<ConfigMap> = Api::default_namespaced(one.client());
    let in_two: Api<ConfigMap> = Api::default_namespaced(two.client());
    in_one
        .create(&PostParams::default(), &config_map("only-in-one"))
        .await
        .unwrap();
    in_two
        .create(&PostParams::default(), &config_map("only-in-two"))
        .await
        .unwrap();
    assert!(in_one.get_opt("only-in-two").await.unwrap().is_none());
    assert!(in_two.get_opt("only-in-one").await.unwrap().is_none());
    assert!(in_one.get_opt("only-in-one").await.unwrap().is_some());
    assert!(in_two.get_opt("only-in-two").await.unwrap().is_some());
    // Stopping one leaves the other serving.
    one.stop().await.unwrap();
    assert!(in_two.get_opt("only-in-two").await.unwrap().is_some());
    two.stop().await.unwrap();
}

/// The ReplicaSets of Deployment `web` after `wait` of simulated time.
async fn replicasets_after(cluster: &Cluster, wait: Duration) -> usize {
    let deployments: Api<Deployment> = Api::default_namespaced(cluster.client());
    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
    });
    deployments
        .create(&PostParams::default(), &serde_json::from_value(body).unwrap())
        .await
        .unwrap();
    cluster.clock().sleep(wait).await;
    let rs: Api<ReplicaSet> = Api::default_namespaced(cluster.client());
    rs.list(&ListParams::default()).await.unwrap().items.len()
}

#[tokio::test(start_paused = true)]
async fn without_the_deployment_controller_a_deployment_gets_no_replicaset() {
    let off = Cluster::builder()
        .controllers("*,-deployment-controller")
        .start()
        .await;
    assert_eq!(replicasets_after(&off, Duration::from_secs(30)).await, 0);
    off.stop().await.unwrap();

    let on = Cluster::builder().controllers("deployment").start().await;
    assert_eq!(replicasets_after(&on, Duration::from_secs(30)).await, 1);
    on.stop().await.unwrap();
}

#[tokio::test]
async fn unknown_controllers_fail_the_start_with_the_known_ones() {
    let err = Cluster::builder()
        .controllers("*,-bootstrap-signer-controller")
        .try_start()
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("controllers: \"bootstrap-signer-controller\" is not in the list of known controllers; the known controllers are replicaset-controller, deployment-controller,"),
        "{err}"
    );
}

/// The README's paused-time example: under `start_paused`, tokio time (and
/// so the cluster's clock) moves only when the test advances it, or when
/// every task waits.
#[tokio::test(start_paused = true)]
async fn paused_time_is_advanced_by_the_test() {
    let cluster = Cluster::builder().seed(7).start().await;
    let before = cluster.clock().now();
    let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    let body = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}
    });
    pods.create(&PostParams::default(), &serde_json::from_value(body).unwrap())
        .await
        .unwrap();
    // An hour passes at once.
    tokio::time::advance(Duration::from_secs(3600)).await;
    let took = cluster.clock().now().duration_since(before).unwrap();
    assert!(took >= Duration::from_secs(3600), "{took:?}");
    // Waiting on the clock costs no real time: the pod is scheduled, its
    // image pulled (simulated seconds) and started.
    let mut phase = None;
    for _ in 0..120 {
        phase = pods.get("p").await.unwrap().status.and_then(|s| s.phase);
        if phase.as_deref() == Some("Running") {
            break;
        }
        cluster.clock().sleep(Duration::from_secs(1)).await;
    }
    assert_eq!(phase.as_deref(), Some("Running"));
    cluster.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_from_a_folder_are_established_before_start_returns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("widgets.yaml"),
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
---
",
    )
    .unwrap();
    let cluster = Cluster::builder().crds(dir.path()).start().await;
    let gvk = kube::api::GroupVersionKind::gvk("example.com", "v1", "Widget");
    let resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, "widgets");
    let widgets: Api<kube::api::DynamicObject> = Api::namespaced_with(cluster.client(), "default", &resource);
    let widget: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": 3}
    }))
    .unwrap();
    widgets.create(&PostParams::default(), &widget).await.unwrap();
    assert_eq!(widgets.get("w").await.unwrap().data["spec"]["size"], 3);
    cluster.stop().await.unwrap();
}

#[tokio::test]
async fn a_crd_file_with_other_kinds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mixed.yaml");
    std::fs::write(&file, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n").unwrap();
    let err = Cluster::builder().crds(&file).try_start().await.err().unwrap();
    assert!(
        err.to_string()
            .ends_with("document 1 is \"ConfigMap\" (v1), not a CustomResourceDefinition: .crds() installs CRDs only; create other objects with the client once the cluster runs"),
        "{err}"
    );
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.push(path.clone());
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Waits until `path` exists (the kubeconfig is written once the server answers).
async fn appears(path: &Path) {
    let wait = async {
        while !path.is_file() {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the kubeconfig appears");
}

async fn client_from(kubeconfig: &Path) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// SIGTERM, then the exit status.
async fn terminate(mut child: tokio::process::Child) -> std::process::ExitStatus {
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("miniplane exits on SIGTERM")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_writes_no_file_but_the_kubeconfig() {
    let (home, tmp, cwd, out) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let kubeconfig = out.path().join("kubeconfig");
    let child = tokio::process::Command::new(miniplane_binary())
        .args(["up", "--in-memory", "--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(&kubeconfig)
        .env("HOME", home.path())
        .env("TMPDIR", tmp.path())
        .env_remove("XDG_DATA_HOME")
        .current_dir(cwd.path())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    appears(&kubeconfig).await;
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    assert!(text.contains("server: https://127.0.0.1:"), "{text}");
    assert!(
        !text.contains("127.0.0.1:0\n"),
        "the chosen port is written: {text}"
    );
    crud(client_from(&kubeconfig).await).await;
    assert!(terminate(child).await.success());
    for dir in [home.path(), tmp.path(), cwd.path()] {
        assert_eq!(files_under(dir), Vec::<PathBuf>::new(), "{}", dir.display());
    }
    assert_eq!(files_under(out.path()), vec![kubeconfig]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_without_a_path_prints_the_kubeconfig() {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(miniplane_binary())
        .args(["up", "--in-memory", "--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut yaml = String::new();
    let read = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            yaml.push_str(&line);
            yaml.push('\n');
            if line.trim_start().starts_with("client-key-data:") {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read).await.unwrap();
    assert!(
        yaml.starts_with("# miniplane is serving the Kubernetes API at https://127.0.0.1:"),
        "{yaml}"
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, &yaml).unwrap();
    crud(client_from(&kubeconfig).await).await;
    assert!(terminate(child).await.success());
}

/// The README's pytest fixture, run as a plain script: it starts
/// `miniplane up --in-memory`, waits for the kubeconfig, uses the official
/// Python client and terminates the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_fixture_works() {
    let has_client = std::process::Command::new("python3")
        .args(["-c", "import kubernetes"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_client {
        eprintln!("skipped: python3 with the kubernetes package is not installed");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness_fixture.py");
    let out = tokio::process::Command::new("python3")
        .arg(script)
        .env("MINIPLANE", miniplane_binary())
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("fixture ok"));
}
