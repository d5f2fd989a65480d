//! What every cluster has from its first start: the `default/kubernetes`
//! Service, with Endpoints and an EndpointSlice pointing at the API server
//! (and following it to another port after a restart); and Events about
//! cluster-scoped objects, such as the simulated kubelet's about its Nodes,
//! in the `default` namespace.

use std::time::Duration;

use e2e::{Cluster, Config};

/// How long to wait for what components write in the background.
const PATIENCE: Duration = Duration::from_secs(20);

/// Runs `kubectl args` until its output contains every one of `wanted`
/// (for at most [`PATIENCE`] of real time).
async fn eventually(c: &Cluster, args: &[&str], wanted: &[&str]) -> String {
    let clock = c.server().api().clock().clone();
    let mut last = String::new();
    let found = tokio::time::timeout(PATIENCE, async {
        loop {
            last = c.ok(args).await;
            if wanted.iter().all(|w| last.contains(w)) {
                return last.clone();
            }
            clock.sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("kubectl {args:?} never showed {wanted:?}; last:\n{last}"))
}

/// Checks the three objects against the server's listen port.
async fn assert_points_at(c: &Cluster, port: u16) {
    let svc = c.json(&["get", "svc", "kubernetes"]).await;
    assert_eq!(svc["spec"]["clusterIP"], "10.96.0.1");
    assert_eq!(
        svc["spec"]["ports"],
        serde_json::json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}])
    );
    let ep = c.json(&["get", "endpoints", "kubernetes"]).await;
    assert_eq!(
        ep["subsets"],
        serde_json::json!([{"addresses": [{"ip": "127.0.0.1"}],
                            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}])
    );
    let table = c.ok(&["get", "endpoints", "kubernetes"]).await;
    assert!(table.contains(&format!("127.0.0.1:{port}")), "{table}");
    let slices = c.ok(&["get", "endpointslices"]).await;
    let row = slices
        .lines()
        .find(|l| l.starts_with("kubernetes "))
        .unwrap_or_else(|| panic!("no kubernetes slice:\n{slices}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[..4],
        ["kubernetes", "IPv4", &port.to_string(), "127.0.0.1"],
        "{slices}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubernetes_service_and_its_endpoints_point_at_the_api_server() {
    let mut c = Cluster::start().await;
    let port = c.server().addr().port();
    let table = c.ok(&["get", "svc"]).await;
    let row = table
        .lines()
        .find(|l| l.starts_with("kubernetes "))
        .unwrap_or_else(|| panic!("no kubernetes Service:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[..5],
        ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    );
    assert_points_at(&c, port).await;

    let svc = c.json(&["get", "svc", "kubernetes"]).await;
    assert_eq!(
        svc["metadata"]["labels"],
        serde_json::json!({"component": "apiserver", "provider": "kubernetes"})
    );
    assert_eq!(
        (&svc["spec"]["type"], &svc["spec"]["sessionAffinity"]),
        (&serde_json::json!("ClusterIP"), &serde_json::json!("None"))
    );
    let ep = c.json(&["get", "endpoints", "kubernetes"]).await;
    assert_eq!(
        ep["metadata"]["labels"]["endpointslice.kubernetes.io/skip-mirror"],
        "true"
    );
    let slice = c.json(&["get", "endpointslice", "kubernetes"]).await;
    assert_eq!(slice["apiVersion"], "discovery.k8s.io/v1");
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        "kubernetes"
    );
    assert_eq!(
        slice["endpoints"],
        serde_json::json!([{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}])
    );
    // kubectl finds the slices of a Service by their label.
    let described = c.ok(&["describe", "svc", "kubernetes"]).await;
    assert!(described.contains(&format!("127.0.0.1:{port}")), "{described}");
    let resources = c
        .ok(&["api-resources", "--api-group=discovery.k8s.io", "--no-headers"])
        .await;
    let cells: Vec<&str> = resources.split_whitespace().collect();
    assert_eq!(
        cells,
        ["endpointslices", "discovery.k8s.io/v1", "true", "EndpointSlice"],
        "{resources}"
    );

    let explained = c.ok(&["explain", "endpointslice.addressType"]).await;
    assert!(explained.contains("GROUP:      discovery.k8s.io"), "{explained}");

    // The first address of the range is taken: no other Service gets it.
    let err = c
        .fails(&[
            "create",
            "service",
            "clusterip",
            "mine",
            "--tcp=80:8080",
            "--clusterip=10.96.0.1",
        ])
        .await;
    assert!(
        err.contains("failed to allocate IP 10.96.0.1: provided IP is already allocated"),
        "{err}"
    );
    for i in 0..5 {
        let name = format!("web-{i}");
        c.ok(&["create", "service", "clusterip", &name, "--tcp=80:8080"])
            .await;
        let svc = c.json(&["get", "svc", &name]).await;
        let ip = svc["spec"]["clusterIP"].as_str().unwrap();
        assert!(ip.starts_with("10.") && ip != "10.96.0.1", "{ip}");
    }
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restart_on_another_port_they_follow() {
    let data = tempfile::tempdir().unwrap();
    let config = || Config {
        data_dir: Some(data.path().to_path_buf()),
        sim: None,
        ..Config::ephemeral()
    };
    let mut c = Cluster::start_with(config()).await;
    let first = c.server().addr().port();
    assert_points_at(&c, first).await;
    let uid = c.json(&["get", "svc", "kubernetes"]).await["metadata"]["uid"].clone();
    c.stop().await;

    // Hold the old port so that the restart gets another one.
    let _old = std::net::TcpListener::bind(("127.0.0.1", first)).unwrap();
    let mut c = Cluster::start_with(config()).await;
    let second = c.server().addr().port();
    assert_ne!(first, second);
    assert_points_at(&c, second).await;
    let svc = c.json(&["get", "svc", "kubernetes"]).await;
    assert_eq!(svc["metadata"]["uid"], uid, "the same Service, corrected");
    let slices = c.json(&["get", "endpointslices"]).await;
    assert_eq!(slices["items"].as_array().unwrap().len(), 1, "{slices}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_about_nodes_are_in_the_default_namespace() {
    let mut c = Cluster::start().await;
    let node = "miniplane-worker-1";
    let listed = eventually(
        &c,
        &["get", "events", "-n", "default"],
        &[
            "node/miniplane-worker-1",
            "Starting kubelet.",
            "NodeHasSufficientMemory",
        ],
    )
    .await;
    assert!(listed.contains("NodeAllocatableEnforced"), "{listed}");
    // kubectl describe node looks for them by the node's name as uid, in
    // every namespace, with an empty involvedObject.namespace.
    let described = c.ok(&["describe", "node", node]).await;
    for text in [
        "Starting kubelet.",
        &format!("Node {node} status is now: NodeHasSufficientPID"),
    ] {
        assert!(described.contains(text), "{text:?} missing from:\n{described}");
    }

    // The API accepts an Event about a cluster-scoped object in default
    // only (upstream's rule); one in its object's namespace elsewhere.
    let event = |ns: &str, involved_ns: &str| {
        format!(
            "apiVersion: v1\nkind: Event\nmetadata:\n  name: mine.{ns}\n  namespace: {ns}\n\
             involvedObject:\n  apiVersion: v1\n  kind: Node\n  name: {node}\n  namespace: \"{involved_ns}\"\n\
             reason: Checked\nmessage: checked by hand\ntype: Normal\nsource:\n  component: tester\n"
        )
    };
    let ok = c.file("ok.yaml", &event("default", ""));
    c.ok(&["create", "-f", ok.to_str().unwrap()]).await;
    let wrong = c.file("wrong.yaml", &event("kube-system", ""));
    let err = c.fails(&["create", "-f", wrong.to_str().unwrap()]).await;
    assert!(
        err.contains("involvedObject.namespace: Invalid value: \"\": does not match event.namespace"),
        "{err}"
    );
    let elsewhere = c.file("elsewhere.yaml", &event("kube-system", "kube-public"));
    let err = c.fails(&["create", "-f", elsewhere.to_str().unwrap()]).await;
    assert!(err.contains("does not match event.namespace"), "{err}");
    c.stop().await;
}
