//! What kubectl shows when a careless client writes what upstream refuses:
//! a value of the wrong type, a patch that would blow an object up, the
//! deletion of a system namespace, malformed query parameters. Each refusal
//! leaves the cluster working: the controllers still see the object and a
//! `kubectl describe` still reads it.

use e2e::{Cluster, http};

const JSON: (&str, &str) = ("Content-Type", "application/json");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_types_are_refused_and_the_controllers_keep_seeing_the_object() {
    let mut c = Cluster::start().await;
    let f = c.file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\ndata:\n  a: 5\n",
    );
    let err = c.fails(&["create", "-f", f.to_str().unwrap()]).await;
    assert!(
        err.contains("Error from server (BadRequest)")
            && err.contains("ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
        "{err}"
    );
    c.fails(&["get", "configmap", "typed"]).await;

    c.ok(&["create", "deployment", "web", "--image=nginx"]).await;
    let err = c
        .fails(&[
            "patch",
            "deploy",
            "web",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":"abc"}}"#,
        ])
        .await;
    assert!(
        err.contains("patch: Invalid value: ")
            && err.contains("json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
        "{err}"
    );
    let described = c.ok(&["describe", "deploy", "web"]).await;
    assert!(described.contains("Replicas:"), "{described}");
    // The Deployment controller still sees it: a scale reaches its ReplicaSet.
    c.ok(&["scale", "deploy", "web", "--replicas=2"]).await;
    c.ok(&["rollout", "status", "deploy/web", "--timeout=60s"]).await;
    let rs = c.json(&["get", "rs", "-l", "app=web", "-o", "json"]).await;
    assert_eq!(rs["items"][0]["spec"]["replicas"], 2, "{rs}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_storm_is_refused_and_the_system_namespaces_stay() {
    let mut c = Cluster::start().await;
    c.ok(&[
        "create",
        "configmap",
        "c",
        &format!("--from-literal=v={}", "x".repeat(1024)),
    ])
    .await;
    let ops: Vec<String> = (0..14)
        .map(|i| format!(r#"{{"op":"copy","from":"/data","path":"/data/c{i}"}}"#))
        .collect();
    let patch = format!("[{}]", ops.join(","));
    let err = c
        .fails(&["patch", "configmap", "c", "--type=json", "-p", &patch])
        .await;
    assert!(err.contains("accumulated size increase of copy"), "{err}");

    for ns in ["default", "kube-system", "kube-public"] {
        let err = c.fails(&["delete", "namespace", ns]).await;
        assert!(
            err.contains(&format!(
                "Error from server (Forbidden): namespaces \"{ns}\" is forbidden: this namespace may not be deleted"
            )),
            "{err}"
        );
    }
    c.ok(&["create", "configmap", "after", "-n", "default"]).await;
    c.ok(&["create", "configmap", "after", "-n", "kube-system"]).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_parameters_are_read_as_upstream_reads_them() {
    let mut c = Cluster::start().await;
    c.ok(&["create", "configmap", "seen"]).await;
    let s = c.server();
    let base = "/api/v1/namespaces/default/configmaps";
    // Any value but false/0 is true: this is a watch, which ends at its timeout.
    let r = http(
        s,
        "GET",
        &format!("{base}?watch=maybe&timeoutSeconds=1"),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        String::from_utf8_lossy(&r.body).contains("\"type\":\"ADDED\""),
        "{r:?}"
    );
    let r = http(s, "GET", &format!("{base}?watch=false"), &[], b"").await;
    assert_eq!(r.json()["kind"], "ConfigMapList");

    let r = http(s, "GET", &format!("{base}?resourceVersion=abc"), &[], b"").await;
    assert_eq!(r.status, 422, "{r:?}");
    assert_eq!(r.json()["details"]["causes"][0]["field"], "resourceVersion");
    let r = http(s, "GET", &format!("{base}?watch=1&resourceVersion=abc"), &[], b"").await;
    assert_eq!(r.status, 422, "{r:?}");
    let r = http(s, "GET", &format!("{base}?limit=abc"), &[], b"").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["message"],
        "strconv.ParseInt: parsing \"abc\": invalid syntax"
    );
    let r = http(s, "GET", &format!("{base}?watch=1&timeoutSeconds=soon"), &[], b"").await;
    assert_eq!(r.status, 400);
    let r = http(s, "GET", &format!("{base}?resourceVersionMatch=Exact"), &[], b"").await;
    assert_eq!(r.status, 422);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("resourceVersionMatch is forbidden unless resourceVersion is provided")
    );
    let r = http(
        s,
        "DELETE",
        &format!("{base}/missing?gracePeriodSeconds=x"),
        &[JSON],
        b"",
    )
    .await;
    assert_eq!(r.status, 400);
    c.stop().await;
}
