//! `miniplane rollout promote|abort|retry` against a served miniplane: each sets its
//! annotation (`rollouts.miniplane.dev/promote|abort|retry: "true"`) on the Canary, in the
//! namespace `-n` names, and says so; an unknown Canary fails with the server's words. The
//! Canary controller is off here, so the annotation stays for the test to read (the controller
//! removes it once it has acted; the demo's scenarios show it acting). (A test of the
//! `miniplane` package, so that Cargo builds the binary it runs.)

use std::path::Path;

use controllers::canary::types::Canary;
use kube::api::{Api, PostParams};
use miniplane::Cluster;

/// One run of `miniplane rollout`.
struct Run {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `miniplane rollout <args>` with `$KUBECONFIG` set to `kubeconfig` when given.
async fn rollout(args: &[&str], kubeconfig_env: Option<&Path>) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_miniplane"));
    command.arg("rollout").args(args).env_remove("KUBECONFIG");
    if let Some(k) = kubeconfig_env {
        command.env("KUBECONFIG", k);
    }
    let out = command.kill_on_drop(true).output().await.expect("miniplane runs");
    Run {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A Canary `name` in `namespace` targeting a Deployment `name`.
async fn create_canary(client: &kube::Client, namespace: &str, name: &str) {
    let canary: Canary = serde_json::from_value(serde_json::json!({
        "apiVersion": "rollouts.miniplane.dev/v1beta1",
        "kind": "Canary",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "service": {"port": 80},
            "analysis": {"interval": "30s", "stepWeight": 10, "maxWeight": 50},
        },
    }))
    .unwrap();
    let api: Api<Canary> = Api::namespaced(client.clone(), namespace);
    api.create(&PostParams::default(), &canary).await.unwrap();
}

/// The Canary's annotations, as (key, value) pairs.
async fn annotations(client: &kube::Client, namespace: &str, name: &str) -> Vec<(String, String)> {
    let api: Api<Canary> = Api::namespaced(client.clone(), namespace);
    let canary = api.get(name).await.unwrap();
    canary
        .metadata
        .annotations
        .unwrap_or_default()
        .into_iter()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_command_sets_its_annotation_on_the_canary() {
    let cluster = Cluster::builder()
        .nodes(0)
        .controllers("*,-canary-controller")
        .serve()
        .start()
        .await;
    let client = cluster.client();
    let kubeconfig = cluster.kubeconfig().to_path_buf();
    let k = kubeconfig.to_str().unwrap();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let team: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "team"}})).unwrap();
    namespaces.create(&PostParams::default(), &team).await.unwrap();
    create_canary(&client, "default", "podinfo").await;
    create_canary(&client, "team", "web").await;

    let r = rollout(&["promote", "podinfo", "--kubeconfig", k], None).await;
    assert!(r.success, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "canary.rollouts.miniplane.dev/podinfo promote requested\n"
    );
    assert_eq!(
        annotations(&client, "default", "podinfo").await,
        [("rollouts.miniplane.dev/promote".to_string(), "true".to_string())]
    );

    // -n names the namespace; $KUBECONFIG is read without --kubeconfig.
    let r = rollout(&["abort", "web", "-n", "team"], Some(&kubeconfig)).await;
    assert!(r.success, "{}", r.stderr);
    assert_eq!(r.stdout, "canary.rollouts.miniplane.dev/web abort requested\n");
    let r = rollout(&["-n", "team", "retry", "web", "--kubeconfig", k], None).await;
    assert!(r.success, "{}", r.stderr);
    assert_eq!(r.stdout, "canary.rollouts.miniplane.dev/web retry requested\n");
    assert_eq!(
        annotations(&client, "team", "web").await,
        [
            ("rollouts.miniplane.dev/abort".to_string(), "true".to_string()),
            ("rollouts.miniplane.dev/retry".to_string(), "true".to_string()),
        ]
    );
    // Nothing leaked to the other namespace's Canary.
    assert_eq!(annotations(&client, "default", "podinfo").await.len(), 1);
    cluster.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_canary_fails_with_the_servers_message() {
    let cluster = Cluster::builder().nodes(0).serve().start().await;
    let k = cluster.kubeconfig().to_str().unwrap().to_string();
    let r = rollout(&["promote", "nope", "--kubeconfig", &k], None).await;
    assert!(!r.success);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "Error from server (NotFound): canaries.rollouts.miniplane.dev \"nope\" not found\n"
    );
    let r = rollout(&["promote"], None).await;
    assert!(!r.success, "a name is required");
    cluster.stop().await.unwrap();
}
