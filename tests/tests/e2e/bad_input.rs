//! Bad input gets a 4xx Status a person can act on, and the server keeps
//! serving. Some requests go through kubectl (to check what it prints),
//! others are sent raw (kubectl would refuse to send them).

use e2e::{Cluster, http};

const JSON: (&str, &str) = ("Content-Type", "application/json");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_bodies_are_400() {
    let mut c = Cluster::start().await;
    let s = c.server();
    let path = "/api/v1/namespaces/default/configmaps";
    let r = http(s, "POST", path, &[JSON], b"{\"apiVersion\": \"v1\", ").await;
    assert_eq!(r.status, 400, "{r:?}");
    assert_eq!(r.json()["reason"], "BadRequest");
    let r = http(
        s,
        "POST",
        path,
        &[("Content-Type", "application/yaml")],
        b"a: [unclosed",
    )
    .await;
    assert_eq!(r.status, 400);
    let r = http(s, "POST", path, &[("Content-Type", "text/csv")], b"a,b").await;
    assert_eq!(r.status, 415);
    assert_eq!(r.json()["reason"], "UnsupportedMediaType");
    let r = http(
        s,
        "PATCH",
        &format!("{path}/x"),
        &[("Content-Type", "application/xml")],
        b"<a/>",
    )
    .await;
    assert_eq!(r.status, 415);
    let r = http(s, "PUT", path, &[JSON], b"{}").await;
    assert_eq!(r.status, 405);
    assert_eq!(r.json()["reason"], "MethodNotAllowed");
    // Still serving.
    c.ok(&["get", "configmaps"]).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_body_is_413() {
    let mut c = Cluster::start().await;
    let big = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"big"}},"data":{{"x":"{}"}}}}"#,
        "a".repeat(3 * 1024 * 1024 + 10)
    );
    let r = http(
        c.server(),
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[JSON],
        big.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 413, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["reason"], "RequestEntityTooLarge");
    c.ok(&["get", "configmaps"]).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_kind_and_resource() {
    let mut c = Cluster::start().await;
    let f = c.file(
        "w.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
    );
    let err = c.fails(&["apply", "-f", f.to_str().unwrap()]).await;
    assert!(err.contains("no matches for kind \"Widget\""), "{err}");
    let err = c.fails(&["get", "widgets"]).await;
    assert!(
        err.contains("the server doesn't have a resource type \"widgets\""),
        "{err}"
    );
    let r = http(
        c.server(),
        "GET",
        "/apis/apps/v1/namespaces/default/widgets",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 404);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_objects_are_422_with_field_causes() {
    let mut c = Cluster::start().await;
    let f = c.file(
        "bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n",
    );
    let err = c.fails(&["create", "-f", f.to_str().unwrap()]).await;
    assert!(
        err.contains("The ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\""),
        "{err}"
    );
    let d = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: neg\nspec:\n  replicas: -1\n  selector:\n    matchLabels: {app: x}\n  template:\n    metadata:\n      labels: {app: x}\n    spec:\n      containers:\n      - name: c\n        image: busybox\n";
    let f = c.file("neg.yaml", d);
    let err = c.fails(&["apply", "-f", f.to_str().unwrap()]).await;
    assert!(
        err.contains("spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        "{err}"
    );
    let r = http(
        c.server(),
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[JSON],
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#,
    )
    .await;
    assert_eq!(r.status, 422);
    let s = r.json();
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueRequired");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_fields_follow_field_validation() {
    let mut c = Cluster::start().await;
    let f = c.file(
        "u.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: u\nbogus: 1\ndata:\n  a: b\n",
    );
    let err = c.fails(&["apply", "-f", f.to_str().unwrap()]).await;
    assert!(
        err.contains("strict decoding error: unknown field \"bogus\""),
        "{err}"
    );
    let r = c
        .run(&["apply", "--validate=warn", "-f", f.to_str().unwrap()])
        .await;
    assert!(r.success, "{r:?}");
    assert!(r.stderr.contains("Warning: unknown field \"bogus\""), "{r:?}");
    let live = c.json(&["get", "cm", "u"]).await;
    assert!(live.get("bogus").is_none());
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_resource_version_and_immutable_fields() {
    let mut c = Cluster::start().await;
    c.ok(&["create", "deployment", "web", "--image", "nginx"]).await;
    let mut d = c.json(&["get", "deploy", "web"]).await;
    d["metadata"]["resourceVersion"] = "1".into();
    let f = c.file("stale.json", &d.to_string());
    let err = c.fails(&["replace", "-f", f.to_str().unwrap()]).await;
    assert!(err.contains("Error from server (Conflict)"), "{err}");
    let err = c
        .fails(&[
            "patch",
            "deploy",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"selector":{"matchLabels":{"app":"other"}}}}"#,
        ])
        .await;
    assert!(err.contains("field is immutable"), "{err}");
    let err = c.fails(&["get", "deploy", "nope"]).await;
    assert!(
        err.contains("Error from server (NotFound): deployments.apps \"nope\" not found"),
        "{err}"
    );
    let err = c
        .fails(&["create", "deployment", "web", "--image", "nginx"])
        .await;
    assert!(err.contains("deployments.apps \"web\" already exists"), "{err}");
    c.stop().await;
}
