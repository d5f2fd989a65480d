//! Printer columns, `kubectl explain`, and several served versions.

use e2e::Cluster;
use serde_json::Value;

use super::{WIDGETS, create, headers, install, is_age, jsonpath, row, table, widget};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_prints_the_declared_columns() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    create(
        &c,
        &widget("w1", "  image: nginx:1.27\n  replicas: 3\n  mode: HA"),
    )
    .await;
    create(&c, &widget("w2", "  image: busybox")).await;
    c.ok(&[
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Progressing","status":"False"},{"type":"Ready","status":"True"}]}}"#,
    ])
    .await;

    let out = c.ok(&["get", "widgets"]).await;
    assert_eq!(
        headers(&out),
        ["NAME", "REPLICAS", "MODE", "READY", "AGE"],
        "{out}"
    );
    let rows = table(&out);
    let w1 = row(&rows, "w1");
    assert_eq!(w1["REPLICAS"], "3", "{out}");
    assert_eq!(w1["MODE"], "HA");
    assert_eq!(w1["READY"], "True", "the filter picks the Ready condition: {out}");
    assert!(is_age(&w1["AGE"]), "a date column prints as an age: {out}");
    let w2 = row(&rows, "w2");
    assert_eq!(w2["REPLICAS"], "1", "{out}");
    assert_eq!(w2["MODE"], "Simple");
    assert_eq!(w2["READY"], "", "a missing value prints empty: {out}");

    // Priority 1 only with -o wide.
    let out = c.ok(&["get", "widgets", "-o", "wide"]).await;
    assert_eq!(
        headers(&out),
        ["NAME", "REPLICAS", "MODE", "READY", "AGE", "IMAGE"],
        "{out}"
    );
    assert_eq!(row(&table(&out), "w1")["IMAGE"], "nginx:1.27");
    // One object, by short name; across namespaces; with labels.
    let out = c.ok(&["get", "wd", "w1"]).await;
    assert_eq!(table(&out).len(), 1, "{out}");
    let out = c.ok(&["get", "widgets", "-A"]).await;
    assert_eq!(headers(&out)[..2], ["NAMESPACE", "NAME"], "{out}");
    let out = c.ok(&["get", "widgets", "--show-labels"]).await;
    assert_eq!(headers(&out).last().map(String::as_str), Some("LABELS"), "{out}");

    // The server's Table: column definitions as declared.
    let r = e2e::http(
        c.server(),
        "GET",
        "/apis/stable.example.com/v1/namespaces/default/widgets",
        &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    let t = r.json();
    assert_eq!(t["kind"], "Table", "{t:#}");
    let columns: Vec<(String, String, String, i64)> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|col| {
            (
                col["name"].as_str().unwrap_or_default().to_string(),
                col["type"].as_str().unwrap_or_default().to_string(),
                col["format"].as_str().unwrap_or_default().to_string(),
                col["priority"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String, i64)> = [
        ("Name", "string", "name", 0),
        ("Replicas", "integer", "", 0),
        ("Mode", "string", "", 0),
        ("Ready", "string", "", 0),
        ("Age", "date", "", 0),
        ("Image", "string", "", 1),
    ]
    .iter()
    .map(|(a, b, f, p)| (a.to_string(), b.to_string(), f.to_string(), *p))
    .collect();
    assert_eq!(columns, expected);
    let describe = |name: &str| {
        t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|col| col["name"] == name)
            .map(|col| col["description"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(describe("Replicas"), "How many copies of the widget run.");
    assert_eq!(
        describe("Mode"),
        "Custom resource definition column (in JSONPath format): .spec.mode"
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[0], "w1", "{t:#}");
    assert_eq!(cells[1], 3);
    assert_eq!(cells[3], "True");
    assert!(
        t["rows"][1]["cells"][3].is_null(),
        "a missing value is null: {t:#}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_reads_the_schema() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    let out = c.ok(&["explain", "widgets.spec.replicas"]).await;
    assert!(out.contains("GROUP:      stable.example.com"), "{out}");
    assert!(out.contains("KIND:       Widget"), "{out}");
    assert!(out.contains("VERSION:    v1"), "{out}");
    assert!(out.contains("FIELD: replicas <integer>"), "{out}");
    assert!(out.contains("How many copies of the widget run."), "{out}");
    let out = c.ok(&["explain", "widget.spec"]).await;
    let field = |name: &str| {
        out.lines()
            .map(str::trim_start)
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(field("image").contains("<string> -required-"), "{out}");
    assert!(field("mode").contains("<string>"), "{out}");
    assert!(field("ports").contains("<[]Object>"), "{out}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_versions_share_one_stored_object() {
    let mut c = Cluster::start().await;
    install(&c, "gadgets.yaml", &["gadgets.stable.example.com"]).await;

    // Written as v1beta1: kubectl prints the default deprecation warning.
    let r = c
        .run_with_yaml(
            &["create"],
            "apiVersion: stable.example.com/v1beta1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  size: 3\n  color: red\n",
        )
        .await;
    assert!(r.success, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "gadget.stable.example.com/g1 created");
    assert!(
        r.stderr
            .contains("Warning: stable.example.com/v1beta1 Gadget is deprecated"),
        "{}",
        r.stderr
    );
    let beta_warning = r.stderr.clone();
    // v1alpha1 has its own warning.
    let r = c
        .run_with_yaml(
            &["create"],
            "apiVersion: stable.example.com/v1alpha1\nkind: Gadget\nmetadata:\n  name: g2\nspec:\n  size: 1\n",
        )
        .await;
    assert!(r.success, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("Warning: v1alpha1 gadgets are going away: use stable.example.com/v1"),
        "{}",
        r.stderr
    );

    // Read as v1 (the preferred version): apiVersion rewritten, fields kept.
    for what in ["gadgets", "gadgets.v1.stable.example.com"] {
        let g = c.json(&["get", what, "g1"]).await;
        assert_eq!(g["apiVersion"], "stable.example.com/v1", "{what}: {g:#}");
        assert_eq!(g["spec"]["size"], 3);
        assert_eq!(g["spec"]["color"], "red");
    }
    let r = c
        .run(&["get", "gadgets.v1beta1.stable.example.com", "g1", "-o", "json"])
        .await;
    assert!(r.success, "{}", r.stderr);
    let g: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(g["apiVersion"], "stable.example.com/v1beta1");
    assert_eq!(g["spec"]["size"], 3);
    assert!(
        r.stderr
            .contains("Warning: stable.example.com/v1beta1 Gadget is deprecated"),
        "{}",
        r.stderr
    );
    // The same object in every version: one uid, one resourceVersion.
    let v1 = c.json(&["get", "gadgets.v1.stable.example.com", "g1"]).await;
    assert_eq!(v1["metadata"]["uid"], g["metadata"]["uid"]);
    assert_eq!(
        v1["metadata"]["resourceVersion"],
        g["metadata"]["resourceVersion"]
    );
    // A list in the old version holds both objects, in that version.
    let list: Value = serde_json::from_str(
        &c.ok(&[
            "get",
            "--raw",
            "/apis/stable.example.com/v1alpha1/namespaces/default/gadgets",
        ])
        .await,
    )
    .unwrap();
    assert_eq!(list["kind"], "GadgetList");
    assert_eq!(list["apiVersion"], "stable.example.com/v1alpha1");
    for item in list["items"].as_array().unwrap() {
        assert_eq!(item["apiVersion"], "stable.example.com/v1alpha1", "{list:#}");
    }
    // Patched through v1beta1, read through v1.
    c.ok(&[
        "patch",
        "gadgets.v1beta1.stable.example.com",
        "g1",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":4}}"#,
    ])
    .await;
    assert_eq!(
        jsonpath(
            &c,
            &["get", "gadgets.v1.stable.example.com", "g1"],
            "{.spec.size}"
        )
        .await,
        "4"
    );

    // Stored as v1 only; a version not served is not found.
    assert_eq!(
        jsonpath(
            &c,
            &["get", "crd", "gadgets.stable.example.com"],
            "{.status.storedVersions}"
        )
        .await,
        r#"["v1"]"#
    );
    let err = c
        .fails(&[
            "get",
            "--raw",
            "/apis/stable.example.com/v2alpha1/namespaces/default/gadgets",
        ])
        .await;
    assert!(err.contains("NotFound") || err.contains("not find"), "{err}");
    let group: Value =
        serde_json::from_str(&c.ok(&["get", "--raw", "/apis/stable.example.com"]).await).unwrap();
    let versions: Vec<&str> = group["versions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["version"].as_str())
        .collect();
    assert_eq!(group["preferredVersion"]["version"], "v1");

    // No printer columns: NAME and the implicit AGE.
    let out = c.ok(&["get", "gadgets"]).await;
    assert_eq!(headers(&out), ["NAME", "AGE"], "{out}");
    assert!(is_age(&row(&table(&out), "g1")["AGE"]), "{out}");

    // Upstream's exact texts, checked last. The default warning names the
    // newest served version that is not deprecated:
    assert!(
        beta_warning.contains(
            "Warning: stable.example.com/v1beta1 Gadget is deprecated; use stable.example.com/v1 Gadget"
        ),
        "{beta_warning}"
    );
    // The group's versions, by Kubernetes version priority:
    assert_eq!(versions, ["v1", "v1beta1", "v1alpha1"], "{group:#}");
    c.stop().await;
}
