//! The structural schema: 422 with field paths, unknown fields, defaulting,
//! pruning, CEL rules.

use e2e::Cluster;
use serde_json::{Value, json};

use super::{WIDGETS, create, install, widget};

/// `kubectl create -f` of a widget with `spec`, which must fail; stderr.
async fn refused(c: &Cluster, name: &str, spec: &str) -> String {
    c.create_fails(&widget(name, spec)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_violations_are_invalid_with_their_field_paths() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    let cases = [
        (
            "  image: nginx\n  replicas: three",
            r#"The Widget "bad" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
        ),
        (
            "  image: nginx\n  replicas: 20",
            r#"The Widget "bad" is invalid: spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10"#,
        ),
        (
            "  image: nginx\n  replicas: -1",
            r#"The Widget "bad" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"#,
        ),
        (
            "  image: nginx\n  mode: Fast",
            r#"The Widget "bad" is invalid: spec.mode: Unsupported value: "Fast": supported values: "Simple", "HA""#,
        ),
        (
            "  image: Bad Image",
            r#"The Widget "bad" is invalid: spec.image: Invalid value: "Bad Image": spec.image in body should match '^[a-z0-9./:-]+$'"#,
        ),
        (
            "  replicas: 2",
            r#"The Widget "bad" is invalid: spec.image: Required value"#,
        ),
        (
            "  image: nginx\n  tags: [a, b, c, d]",
            r#"The Widget "bad" is invalid: spec.tags: Too many: 4: must have at most 3 items"#,
        ),
        (
            "  image: nginx\n  port: true",
            r#"The Widget "bad" is invalid: spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
        ),
        (
            "  image: nginx\n  ports:\n  - port: 80",
            r#"The Widget "bad" is invalid: spec.ports[0].name: Required value"#,
        ),
        (
            "  image: nginx\n  ports:\n  - {name: http, port: 80}\n  - {name: http, port: 81}",
            r#"The Widget "bad" is invalid: spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}"#,
        ),
    ];
    for (spec, want) in cases {
        let err = refused(&c, "bad", spec).await;
        assert!(err.contains(want), "spec:\n{spec}\nwant: {want}\ngot: {err}");
    }

    // Several errors at once: one line each, kubectl's list.
    let err = refused(&c, "multi", "  image: nginx\n  replicas: 20\n  mode: Fast").await;
    assert!(err.contains("The Widget \"multi\" is invalid: \n"), "{err}");
    assert!(
        err.contains(
            "\n* spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10\n"
        ),
        "{err}"
    );
    assert!(
        err.contains("\n* spec.mode: Unsupported value: \"Fast\": supported values: \"Simple\", \"HA\"\n"),
        "{err}"
    );

    // The Status itself: 422, reason Invalid, a cause per field.
    let body = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "raw"},
        "spec": {"image": "nginx", "replicas": 20, "mode": "Fast"}
    });
    let r = e2e::http(
        c.server(),
        "POST",
        "/apis/stable.example.com/v1/namespaces/default/widgets",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 422, "{}", String::from_utf8_lossy(&r.body));
    let status = r.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["code"], 422);
    assert_eq!(status["details"]["name"], "raw");
    assert_eq!(status["details"]["group"], "stable.example.com");
    assert_eq!(status["details"]["kind"], "Widget");
    let mut causes: Vec<(String, String)> = status["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|cause| {
            (
                cause["field"].as_str().unwrap_or_default().to_string(),
                cause["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    causes.sort();
    assert_eq!(
        causes,
        [
            ("spec.mode".to_string(), "FieldValueNotSupported".to_string()),
            ("spec.replicas".to_string(), "FieldValueInvalid".to_string())
        ],
        "{status:#}"
    );
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with(r#"Widget.stable.example.com "raw" is invalid: ["#),
        "{message}"
    );

    // Updates are validated too.
    create(&c, &widget("ok", "  image: nginx")).await;
    let err = c
        .fails(&[
            "patch",
            "widget",
            "ok",
            "--type=merge",
            "-p",
            r#"{"spec":{"replicas":11}}"#,
        ])
        .await;
    assert!(
        err.contains(r#"The Widget "ok" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"#),
        "{err}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_fields_are_refused_warned_or_pruned() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    let doc = "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: u\nextra: 1\nspec:\n  image: nginx\n  foo: bar\n  config:\n    anything:\n      nested: [1, 2]\n";

    // kubectl's default (--validate=strict): 400 with each unknown field.
    let r = c.run_with_yaml(&["create"], doc).await;
    assert!(!r.success, "strict create succeeded: {}", r.stdout);
    assert!(
        r.stderr.contains("Error from server (BadRequest)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("strict decoding error"), "{}", r.stderr);
    assert!(r.stderr.contains(r#"unknown field "spec.foo""#), "{}", r.stderr);
    assert!(r.stderr.contains(r#"unknown field "extra""#), "{}", r.stderr);
    // Inside preserve-unknown-fields nothing is unknown.
    assert!(!r.stderr.contains("anything"), "{}", r.stderr);

    // --validate=warn: created, with kubectl's warnings, the fields pruned.
    let r = c.run_with_yaml(&["create", "--validate=warn"], doc).await;
    assert!(r.success, "{}", r.stderr);
    assert!(
        r.stderr.contains(r#"Warning: unknown field "spec.foo""#),
        "{}",
        r.stderr
    );
    let u = c.json(&["get", "widget", "u"]).await;
    assert!(u["spec"].get("foo").is_none(), "pruned: {u:#}");
    assert!(u.get("extra").is_none(), "pruned: {u:#}");
    assert_eq!(u["spec"]["config"], json!({"anything": {"nested": [1, 2]}}));

    // --validate=false: created silently, pruned the same.
    let doc2 = doc.replace("name: u", "name: u2");
    let r = c.run_with_yaml(&["create", "--validate=false"], &doc2).await;
    assert!(r.success, "{}", r.stderr);
    assert!(!r.stderr.contains("Warning"), "{}", r.stderr);
    let u2 = c.json(&["get", "widget", "u2"]).await;
    assert!(
        u2["spec"].get("foo").is_none() && u2.get("extra").is_none(),
        "{u2:#}"
    );

    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_are_filled_in_and_shown_by_kubectl() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    create(&c, &widget("d", "  image: nginx")).await;
    let d = c.json(&["get", "widget", "d"]).await;
    assert_eq!(d["spec"]["replicas"], 1, "{d:#}");
    assert_eq!(d["spec"]["mode"], "Simple");
    // An object default, then the defaults inside it.
    assert_eq!(d["spec"]["settings"], json!({"timeout": "30s"}));
    let yaml = c.ok(&["get", "widget", "d", "-o", "yaml"]).await;
    assert!(yaml.contains("\n  mode: Simple\n"), "{yaml}");
    assert!(yaml.contains("\n  settings:\n    timeout: 30s\n"), "{yaml}");
    // A value given is kept; a default fills a field removed later.
    create(
        &c,
        &widget("e", "  image: nginx\n  replicas: 4\n  settings:\n    timeout: 5s"),
    )
    .await;
    let e = c.json(&["get", "widget", "e"]).await;
    assert_eq!(e["spec"]["replicas"], 4);
    assert_eq!(e["spec"]["settings"]["timeout"], "5s");
    c.ok(&[
        "patch",
        "widget",
        "e",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/mode"}]"#,
    ])
    .await;
    assert_eq!(c.json(&["get", "widget", "e"]).await["spec"]["mode"], "Simple");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cel_rules_refuse_with_their_message() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    let err = refused(&c, "cel", "  image: nginx\n  minReplicas: 5\n  maxReplicas: 2").await;
    assert!(
        err.contains(r#"The Widget "cel" is invalid: spec: Invalid value: "object": minReplicas must not exceed maxReplicas"#),
        "{err}"
    );
    create(
        &c,
        &widget("cel", "  image: nginx\n  minReplicas: 2\n  maxReplicas: 5"),
    )
    .await;
    // The rule holds on updates too.
    let err = c
        .fails(&[
            "patch",
            "widget",
            "cel",
            "--type=merge",
            "-p",
            r#"{"spec":{"minReplicas":9}}"#,
        ])
        .await;
    assert!(
        err.contains(r#"The Widget "cel" is invalid: spec: Invalid value: "object": minReplicas must not exceed maxReplicas"#),
        "{err}"
    );
    // A rule only reads what is there: without maxReplicas it holds.
    create(&c, &widget("half", "  image: nginx\n  minReplicas: 9")).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn int_or_string_and_preserved_fields_keep_what_was_written() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    create(&c, &widget("num", "  image: nginx\n  port: 8080")).await;
    create(&c, &widget("name", "  image: nginx\n  port: http")).await;
    assert_eq!(c.json(&["get", "widget", "num"]).await["spec"]["port"], 8080);
    assert_eq!(c.json(&["get", "widget", "name"]).await["spec"]["port"], "http");
    let config = json!({"a": {"b": [1, "two", {"c": null}]}, "flag": true, "n": 1.5});
    let doc: Value = json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "kept"},
        "spec": {"image": "nginx", "config": config}
    });
    let file = c.file("kept.json", &doc.to_string());
    c.ok(&["create", "-f", file.to_str().unwrap()]).await;
    assert_eq!(c.json(&["get", "widget", "kept"]).await["spec"]["config"], config);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedded_resource_needs_apiversion_and_kind() {
    let mut c = Cluster::start().await;
    install(&c, "sprockets.yaml", &["sprockets.stable.example.com"]).await;
    let sprocket = |name: &str, template: &str| {
        format!(
            "apiVersion: stable.example.com/v1\nkind: Sprocket\nmetadata:\n  name: {name}\nspec:\n  teeth: 3\n  template:\n{template}\n"
        )
    };
    create(
        &c,
        &sprocket(
            "ok",
            "    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: inner\n      labels: {a: b}\n    data: {k: v}",
        ),
    )
    .await;
    let ok = c.json(&["get", "sprocket", "ok"]).await;
    assert_eq!(ok["spec"]["template"]["kind"], "ConfigMap", "{ok:#}");
    assert_eq!(ok["spec"]["template"]["metadata"]["labels"]["a"], "b");
    assert_eq!(ok["spec"]["template"]["data"]["k"], "v");
    assert_eq!(ok["spec"]["teeth"], 3);

    // The embedded name is checked as a path segment (upstream's
    // ValidatePathSegmentName), not as a DNS name.
    create(
        &c,
        &sprocket(
            "mixed",
            "    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: Not_A_DNS_Name",
        ),
    )
    .await;
    // apiVersion and kind are required; metadata is not.
    let err = c
        .create_fails(&sprocket("bad", "    metadata:\n      name: inner"))
        .await;
    assert!(err.contains("The Sprocket \"bad\" is invalid: \n"), "{err}");
    assert!(
        err.contains("\n* spec.template.apiVersion: Required value"),
        "{err}"
    );
    assert!(err.contains("\n* spec.template.kind: Required value"), "{err}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_resource_errors_read_as_upstream() {
    let mut c = Cluster::start().await;
    install(&c, "sprockets.yaml", &["sprockets.stable.example.com"]).await;
    let sprocket = |name: &str, template: &str| {
        format!(
            "apiVersion: stable.example.com/v1\nkind: Sprocket\nmetadata:\n  name: {name}\nspec:\n  teeth: 3\n  template:\n{template}\n"
        )
    };
    let err = c
        .create_fails(&sprocket(
            "bad",
            "    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a/b",
        ))
        .await;
    assert!(
        err.contains(r#"The Sprocket "bad" is invalid: spec.template.metadata.name: Invalid value: "a/b": may not contain '/'"#),
        "{err}"
    );
    // apiVersion and kind are required; metadata is not.
    let err = c
        .create_fails(&sprocket("bad", "    metadata:\n      name: inner"))
        .await;
    assert!(err.contains("The Sprocket \"bad\" is invalid: \n"), "{err}");
    assert!(
        err.contains("\n* spec.template.apiVersion: Required value\n"),
        "{err}"
    );
    assert!(err.contains("\n* spec.template.kind: Required value\n"), "{err}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_patch_with_an_unknown_field_is_warned_about() {
    // `kubectl patch` sends no fieldValidation, and the server's default is
    // Warn (upstream `handlers/rest.go`, `fieldValidation`): the field is
    // pruned and the response carries a warning.
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    create(&c, &widget("u", "  image: nginx")).await;
    let r = c
        .run(&[
            "patch",
            "widget",
            "u",
            "--type=merge",
            "-p",
            r#"{"spec":{"bar":1}}"#,
        ])
        .await;
    assert!(r.success, "{}", r.stderr);
    assert!(
        r.stderr.contains(r#"Warning: unknown field "spec.bar""#),
        "{}",
        r.stderr
    );
    let w = c.json(&["get", "widget", "u"]).await;
    assert!(w["spec"].get("bar").is_none(), "{w}");
    c.stop().await;
}
