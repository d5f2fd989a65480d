//! The kubectl command matrix: every everyday command against a running
//! miniplane, with the kubectl the dispatcher picks (1.33) and, where they
//! are installed, the oldest and newest versioned binaries.

use e2e::{Cluster, versioned_kubectl};
use serde_json::Value;

const MANIFESTS: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: shop
  labels: {app: web}
data:
  greeting: hello
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox:1.36
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 80
"#;

/// apply, re-apply after an edit (client-side apply: a strategic merge patch),
/// and the read commands on what was applied.
async fn apply_and_get(c: &Cluster) {
    let file = c.file("app.yaml", MANIFESTS);
    let out = c.ok(&["apply", "-f", file.to_str().unwrap()]).await;
    for line in [
        "namespace/shop created",
        "configmap/web-config created",
        "deployment.apps/web created",
        "service/web created",
    ] {
        assert!(out.contains(line), "{out}");
    }
    // Edit: new image, a container removed, one replica more. The three-way
    // patch must delete the removed container (merge key `name`).
    let edited = MANIFESTS
        .replace("replicas: 2", "replicas: 3")
        .replace("nginx:1.25", "nginx:1.26")
        .replace("      - name: sidecar\n        image: busybox:1.36\n", "");
    let file = c.file("app.yaml", &edited);
    let out = c.ok(&["apply", "-f", file.to_str().unwrap()]).await;
    assert!(out.contains("deployment.apps/web configured"), "{out}");
    assert!(out.contains("configmap/web-config unchanged"), "{out}");
    let d = c.json(&["get", "deployment", "web", "-n", "shop"]).await;
    assert_eq!(d["spec"]["replicas"], 3);
    let containers = d["spec"]["template"]["spec"]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "{containers:?}");
    assert_eq!(containers[0]["image"], "nginx:1.26");
    assert_eq!(d["metadata"]["generation"], 2);
    // Defaults a real API server fills in.
    assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
    assert_eq!(containers[0]["terminationMessagePath"], "/dev/termination-log");

    // Tables: the columns of a real cluster.
    let table = c.ok(&["get", "deploy", "-n", "shop"]).await;
    assert!(
        table.starts_with("NAME   READY   UP-TO-DATE   AVAILABLE   AGE"),
        "{table}"
    );
    let wide = c.ok(&["get", "deploy", "-n", "shop", "-o", "wide"]).await;
    assert!(
        wide.contains("CONTAINERS") && wide.contains("nginx:1.26") && wide.contains("app=web"),
        "{wide}"
    );
    let svc = c.ok(&["get", "svc", "-n", "shop"]).await;
    assert!(
        svc.contains("TYPE") && svc.contains("ClusterIP") && svc.contains("80/TCP"),
        "{svc}"
    );
    let cm = c.ok(&["get", "cm", "-n", "shop"]).await;
    assert!(cm.contains("DATA") && cm.contains("web-config"), "{cm}");
    let yaml = c
        .ok(&["get", "cm", "web-config", "-n", "shop", "-o", "yaml"])
        .await;
    assert!(yaml.contains("greeting: hello"), "{yaml}");
    let all = c.ok(&["get", "all", "-n", "shop"]).await;
    assert!(
        all.contains("deployment.apps/web") && all.contains("service/web"),
        "{all}"
    );

    // Selectors.
    let by_label = c
        .ok(&["get", "cm", "-n", "shop", "-l", "app=web", "-o", "name"])
        .await;
    assert_eq!(by_label.trim(), "configmap/web-config");
    // `!=` also selects objects without the label: the namespace's
    // kube-root-ca.crt (published within a second of its creation).
    let others = c
        .ok(&["get", "cm", "-n", "shop", "-l", "app!=web", "-o", "name"])
        .await;
    assert_eq!(others.trim(), "configmap/kube-root-ca.crt");
    let by_field = c
        .ok(&[
            "get",
            "cm",
            "-n",
            "shop",
            "--field-selector",
            "metadata.name=web-config",
            "-o",
            "name",
        ])
        .await;
    assert_eq!(by_field.trim(), "configmap/web-config");
    let err = c
        .fails(&["get", "cm", "-n", "shop", "--field-selector", "spec.bogus=1"])
        .await;
    assert!(
        err.contains("BadRequest") && err.contains("\"spec.bogus\" is not a known field selector"),
        "{err}"
    );
}

/// Server-side apply: create on apply, a conflict between two managers,
/// and `--force-conflicts`.
async fn server_side_apply(c: &Cluster) {
    let cm =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: default\ndata:\n  a: \"1\"\n";
    let file = c.file("ssa.yaml", cm);
    let out = c
        .ok(&["apply", "--server-side", "-f", file.to_str().unwrap()])
        .await;
    assert!(out.contains("configmap/ssa serverside-applied"), "{out}");
    let other = c.file("ssa2.yaml", &cm.replace("a: \"1\"", "a: \"2\""));
    let err = c
        .fails(&[
            "apply",
            "--server-side",
            "--field-manager",
            "other",
            "-f",
            other.to_str().unwrap(),
        ])
        .await;
    assert!(
        err.contains("Apply failed with 1 conflict") && err.contains(".data.a"),
        "{err}"
    );
    c.ok(&[
        "apply",
        "--server-side",
        "--field-manager",
        "other",
        "--force-conflicts",
        "-f",
        other.to_str().unwrap(),
    ])
    .await;
    let live = c.json(&["get", "cm", "ssa", "--show-managed-fields"]).await;
    assert_eq!(live["data"]["a"], "2");
    let managers: Vec<&str> = live["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap())
        .collect();
    assert!(managers.contains(&"other"), "{managers:?}");
}

/// Imperative commands: create (protobuf bodies on 1.32+), scale, replace,
/// patch of every type, label, annotate.
async fn imperative(c: &Cluster) {
    let out = c
        .ok(&[
            "create",
            "deployment",
            "api",
            "--image",
            "nginx:1.25",
            "--replicas",
            "3",
        ])
        .await;
    assert!(out.contains("deployment.apps/api created"), "{out}");
    let d = c.json(&["get", "deploy", "api"]).await;
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.25"
    );
    c.ok(&["create", "configmap", "settings", "--from-literal=mode=fast"])
        .await;
    assert_eq!(c.json(&["get", "cm", "settings"]).await["data"]["mode"], "fast");

    c.ok(&["scale", "deployment", "api", "--replicas", "5"]).await;
    assert_eq!(c.json(&["get", "deploy", "api"]).await["spec"]["replicas"], 5);
    c.ok(&[
        "scale",
        "deployment",
        "api",
        "--current-replicas",
        "5",
        "--replicas",
        "4",
    ])
    .await;
    assert_eq!(c.json(&["get", "deploy", "api"]).await["spec"]["replicas"], 4);

    c.ok(&[
        "patch",
        "deployment",
        "api",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"minReadySeconds":5}}"#,
    ])
    .await;
    c.ok(&[
        "patch",
        "deployment",
        "api",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#,
    ])
    .await;
    c.ok(&[
        "patch",
        "deployment",
        "api",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}"#,
    ])
    .await;
    // Until the rollout is done the controller keeps writing status, and a
    // replace from an older read would conflict.
    c.ok(&["rollout", "status", "deployment/api", "--timeout=60s"])
        .await;
    let d = c.json(&["get", "deploy", "api"]).await;
    assert_eq!(d["spec"]["minReadySeconds"], 5);
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );

    let mut replaced = d.clone();
    replaced["spec"]["replicas"] = Value::from(7);
    let file = c.file("replace.json", &replaced.to_string());
    c.ok(&["replace", "-f", file.to_str().unwrap()]).await;
    assert_eq!(c.json(&["get", "deploy", "api"]).await["spec"]["replicas"], 7);
    // The same file again carries a stale resourceVersion now.
    let err = c.fails(&["replace", "-f", file.to_str().unwrap()]).await;
    assert!(
        err.contains("Conflict") && err.contains("the object has been modified"),
        "{err}"
    );

    c.ok(&["label", "deploy", "api", "tier=backend"]).await;
    c.ok(&["annotate", "deploy", "api", "owner=team-a"]).await;
    let d = c.json(&["get", "deploy", "api"]).await;
    assert_eq!(d["metadata"]["labels"]["tier"], "backend");
    assert_eq!(d["metadata"]["annotations"]["owner"], "team-a");
}

/// Deletion with --wait and the three cascade modes, on a Deployment whose
/// controller made a ReplicaSet and pods.
async fn deletion(c: &Cluster) {
    for (owner, cascade) in [("keep", "orphan"), ("fg", "foreground"), ("bg", "background")] {
        c.ok(&[
            "create",
            "deployment",
            owner,
            "--image",
            "nginx",
            "--replicas",
            "2",
        ])
        .await;
        c.ok(&[
            "rollout",
            "status",
            &format!("deployment/{owner}"),
            "--timeout=60s",
        ])
        .await;
        let selector = format!("app={owner}");
        let rs_name = c
            .ok(&["get", "rs", "-l", &selector, "-o", "name"])
            .await
            .trim()
            .to_string();
        assert!(rs_name.starts_with("replicaset.apps/"), "{rs_name}");
        let out = c
            .ok(&[
                "delete",
                "deployment",
                owner,
                &format!("--cascade={cascade}"),
                "--wait",
                "--timeout=30s",
            ])
            .await;
        assert!(
            out.contains(&format!("deployment.apps \"{owner}\" deleted")),
            "{out}"
        );
        assert!(c.fails(&["get", "deploy", owner]).await.contains("NotFound"));
        if cascade == "orphan" {
            let kept = c.json(&["get", &rs_name]).await;
            assert!(kept["metadata"].get("ownerReferences").is_none(), "{kept}");
            let pods = c.ok(&["get", "pods", "-l", &selector, "-o", "name"]).await;
            assert_eq!(pods.lines().count(), 2, "{pods}");
        } else {
            c.ok(&["wait", "--for=delete", &rs_name, "--timeout=30s"]).await;
            c.ok(&["wait", "--for=delete", "pods", "-l", &selector, "--timeout=60s"])
                .await;
            let left = c.ok(&["get", "pods", "-l", &selector, "-o", "name"]).await;
            assert_eq!(left.trim(), "", "{left}");
        }
    }
}

async fn discovery_and_explain(c: &Cluster) {
    let res = c.ok(&["api-resources"]).await;
    for row in [
        "deployments",
        "deploy",
        "apps/v1",
        "pods",
        "po",
        "statefulsets",
        "sts",
        "cronjobs",
        "cj",
        "leases",
    ] {
        assert!(res.contains(row), "{row} missing from:\n{res}");
    }
    let explain = c.ok(&["explain", "deployment.spec.strategy"]).await;
    assert!(
        explain.contains("rollingUpdate") && explain.contains("DESCRIPTION"),
        "{explain}"
    );
}

async fn matrix(c: &Cluster) {
    apply_and_get(c).await;
    server_side_apply(c).await;
    imperative(c).await;
    deletion(c).await;
    discovery_and_explain(c).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_matrix_default() {
    let mut c = Cluster::start().await;
    matrix(&c).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_matrix_1_27() {
    let Some(k) = versioned_kubectl(27) else {
        eprintln!("kubectl.1.27 is not installed; skipping");
        return;
    };
    let mut c = Cluster::start().await.with_kubectl(k);
    matrix(&c).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_matrix_1_33() {
    let Some(k) = versioned_kubectl(33) else {
        eprintln!("kubectl.1.33 is not installed; skipping");
        return;
    };
    let mut c = Cluster::start().await.with_kubectl(k);
    matrix(&c).await;
    c.stop().await;
}
