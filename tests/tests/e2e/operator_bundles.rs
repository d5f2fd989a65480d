//! Real operators' install bundles, applied unmodified with the real
//! `kubectl` to a miniplane with nodes: every object is created (`kubectl
//! get -f` lists each one) and every Deployment rolls out (`kubectl rollout
//! status`). The bundles are in `tests/testdata/manifests/` (see its
//! README for where each comes from).
//!
//! * ingress-nginx (kind provider): Namespace, RBAC, ConfigMap, Services,
//!   Deployment with probes and host ports, Jobs, IngressClass and a
//!   ValidatingWebhookConfiguration; server-side and client-side apply.
//! * kube-state-metrics: ServiceAccount, a ClusterRole over many resources,
//!   binding, Deployment with probes, headless Service.
//! * local-path-provisioner: Namespace, RBAC, Deployment, StorageClass,
//!   ConfigMap.
//!
//! The controllers of miniplane run what the bundles need for their
//! Deployments; nothing runs the Jobs (no Job controller yet), so the
//! ingress-nginx admission Jobs are created and stay pending, as they are
//! not part of the check.

use e2e::{Cluster, Config};
use serde_json::Value;
use store::Clock;

/// Simulated seconds per real second: the bundles' readiness probes wait
/// 10 simulated seconds.
const SCALE: f64 = 10.0;

/// The path of a bundle in `tests/testdata/manifests/`.
fn bundle(name: &str) -> String {
    format!("{}/testdata/manifests/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// How many objects a multi-document YAML file holds.
fn documents(path: &str) -> usize {
    let text = std::fs::read_to_string(path).expect("bundle readable");
    text.split("\n---")
        .filter(|doc| doc.lines().any(|l| l.starts_with("kind:")))
        .count()
}

async fn cluster() -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        ..Config::ephemeral()
    })
    .await
}

/// Applies `file` with `apply_args`, checks that every object exists, and
/// waits for every Deployment of the bundle to roll out.
async fn install(c: &Cluster, file: &str, apply_args: &[&str]) {
    let path = bundle(file);
    let out = c.ok(&[apply_args, &["-f", &path]].concat()).await;
    let wanted = documents(&path);
    assert_eq!(out.lines().count(), wanted, "one line per object:\n{out}");

    let listed: Value = c.json(&["get", "-f", &path]).await;
    let items = listed["items"].as_array().expect("a List");
    assert_eq!(items.len(), wanted, "every object of {file} exists");
    let deployments: Vec<(&str, &str)> = items
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .map(|d| {
            let meta = &d["metadata"];
            (
                meta["namespace"].as_str().unwrap(),
                meta["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(!deployments.is_empty(), "{file} has a Deployment");
    for (ns, name) in deployments {
        let out = c
            .ok(&[
                "rollout",
                "status",
                &format!("deployment/{name}"),
                "-n",
                ns,
                "--timeout=90s",
            ])
            .await;
        assert!(out.contains("successfully rolled out"), "{out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_nginx_installs_server_side() {
    let mut c = cluster().await;
    install(&c, "ingress-nginx-kind.yaml", &["apply", "--server-side"]).await;
    // Its Services have endpoints from the controller pod.
    let ep = c
        .json(&[
            "get",
            "endpoints",
            "ingress-nginx-controller",
            "-n",
            "ingress-nginx",
        ])
        .await;
    assert!(ep["subsets"][0]["addresses"][0]["ip"].is_string(), "{ep:#}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_nginx_installs_client_side() {
    let mut c = cluster().await;
    install(&c, "ingress-nginx-kind.yaml", &["apply"]).await;
    // Applied again: nothing new is created. (Some objects print
    // `configured`: kubectl's three-way patch resends `data: null` and the
    // webhook rules whose `scope` the server defaulted, as on any cluster.)
    let again = c.ok(&["apply", "-f", &bundle("ingress-nginx-kind.yaml")]).await;
    assert!(
        again
            .lines()
            .all(|l| l.ends_with(" unchanged") || l.ends_with(" configured")),
        "{again}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_state_metrics_installs_server_side() {
    let mut c = cluster().await;
    install(&c, "kube-state-metrics.yaml", &["apply", "--server-side"]).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_path_provisioner_installs_server_side() {
    let mut c = cluster().await;
    install(&c, "local-path-storage.yaml", &["apply", "--server-side"]).await;
    c.stop().await;
}
