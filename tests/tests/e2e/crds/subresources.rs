//! The status and scale subresources through kubectl.

use e2e::Cluster;
use serde_json::json;

use super::{WIDGETS, create, install, jsonpath};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_is_written_only_through_its_subresource() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    // A create cannot set status.
    create(
        &c,
        "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  image: nginx\n  replicas: 2\nstatus:\n  replicas: 9\n",
    )
    .await;
    let w = c.json(&["get", "widget", "w"]).await;
    assert!(w.get("status").is_none(), "status dropped on create: {w:#}");
    assert_eq!(w["metadata"]["generation"], 1);

    let out = c
        .ok(&[
            "patch",
            "widget",
            "w",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"replicas":2,"selector":"app=w","conditions":[{"type":"Ready","status":"True"}]}}"#,
        ])
        .await;
    assert_eq!(out.trim(), "widget.stable.example.com/w patched");
    let w = c.json(&["get", "widget", "w"]).await;
    assert_eq!(w["status"]["replicas"], 2, "{w:#}");
    assert_eq!(
        w["metadata"]["generation"], 1,
        "a status write keeps the generation"
    );
    let status = c.json(&["get", "widget", "w", "--subresource=status"]).await;
    assert_eq!(status["kind"], "Widget");
    assert_eq!(status["status"]["conditions"][0]["type"], "Ready");

    // The main resource ignores status...
    let out = c
        .ok(&[
            "patch",
            "widget",
            "w",
            "--type=merge",
            "-p",
            r#"{"status":{"replicas":7}}"#,
        ])
        .await;
    assert_eq!(out.trim(), "widget.stable.example.com/w patched (no change)");
    assert_eq!(
        jsonpath(&c, &["get", "widget", "w"], "{.status.replicas}").await,
        "2"
    );
    // ... and the status subresource ignores the rest.
    c.ok(&[
        "patch",
        "widget",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":7},"status":{"replicas":3}}"#,
    ])
    .await;
    let w = c.json(&["get", "widget", "w"]).await;
    assert_eq!(w["spec"]["replicas"], 2, "{w:#}");
    assert_eq!(w["status"]["replicas"], 3);
    // A spec change bumps the generation; status stays.
    c.ok(&[
        "patch",
        "widget",
        "w",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":4}}"#,
    ])
    .await;
    let w = c.json(&["get", "widget", "w"]).await;
    assert_eq!(w["metadata"]["generation"], 2);
    assert_eq!(w["status"]["replicas"], 3);
    // Status is validated against the schema too.
    let err = c
        .fails(&[
            "patch",
            "widget",
            "w",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"replicas":"many"}}"#,
        ])
        .await;
    assert!(
        err.contains(r#"status.replicas: Invalid value: "string": status.replicas in body must be of type integer: "string""#),
        "{err}"
    );
    // A replace of the whole object keeps the stored status.
    let mut w = c.json(&["get", "widget", "w"]).await;
    w["status"]["replicas"] = json!(99);
    w["spec"]["mode"] = json!("HA");
    let file = c.file("w.json", &w.to_string());
    c.ok(&["replace", "-f", file.to_str().unwrap()]).await;
    let w = c.json(&["get", "widget", "w"]).await;
    assert_eq!(w["spec"]["mode"], "HA");
    assert_eq!(w["status"]["replicas"], 3);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_scale_writes_the_spec_replicas_path() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    create(
        &c,
        "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  image: nginx\n  replicas: 2\n",
    )
    .await;
    c.ok(&[
        "patch",
        "widget",
        "w",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":2,"selector":"app=w"}}"#,
    ])
    .await;

    let out = c.ok(&["scale", "--replicas=5", "widgets/w"]).await;
    assert_eq!(out.trim(), "widget.stable.example.com/w scaled");
    assert_eq!(
        jsonpath(&c, &["get", "widget", "w"], "{.spec.replicas}").await,
        "5"
    );
    let scale = c.json(&["get", "widget", "w", "--subresource=scale"]).await;
    assert_eq!(scale["kind"], "Scale", "{scale:#}");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["metadata"]["name"], "w");
    assert_eq!(scale["spec"]["replicas"], 5);
    assert_eq!(scale["status"]["replicas"], 2);
    assert_eq!(scale["status"]["selector"], "app=w");
    // The table of the scale subresource.
    let out = c.ok(&["get", "widget", "w", "--subresource=scale"]).await;
    assert!(
        out.lines().next().unwrap_or_default().starts_with("NAME"),
        "{out}"
    );
    assert!(out.contains('w'), "{out}");

    // kubectl scale's precondition reads the scale subresource.
    let err = c
        .fails(&["scale", "--current-replicas=3", "--replicas=4", "widget/w"])
        .await;
    assert!(err.contains("Expected replicas to be 3, was 5"), "{err}");
    // Past the schema's maximum: the object's validation refuses it.
    let err = c.fails(&["scale", "--replicas=11", "widget/w"]).await;
    assert!(
        err.contains(
            "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
        ),
        "{err}"
    );
    assert_eq!(
        jsonpath(&c, &["get", "widget", "w"], "{.spec.replicas}").await,
        "5"
    );
    // A scale write leaves the generation rule as a spec write does.
    let w = c.json(&["get", "widget", "w"]).await;
    assert_eq!(w["metadata"]["generation"], 2, "{w:#}");
    c.stop().await;
}
