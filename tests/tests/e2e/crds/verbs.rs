//! Every verb on a custom resource, as kubectl drives it.

use e2e::Cluster;
use serde_json::{Value, json};

use super::{WIDGETS, create, install, item_names, jsonpath, run_env, widget};

/// Three labelled widgets.
const THREE: &str = "apiVersion: stable.example.com/v1
kind: Widget
metadata:
  name: w1
  labels: {app: web, tier: front}
spec:
  image: nginx
  replicas: 3
---
apiVersion: stable.example.com/v1
kind: Widget
metadata:
  name: w2
  labels: {app: db}
spec:
  image: postgres
---
apiVersion: stable.example.com/v1
kind: Widget
metadata:
  name: w3
  labels: {app: web, tier: back}
spec:
  image: nginx
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_get_list_select_replace_patch_and_delete() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    let out = create(&c, THREE).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "widget.stable.example.com/w1 created",
            "widget.stable.example.com/w2 created",
            "widget.stable.example.com/w3 created"
        ]
    );
    let w1 = c.json(&["get", "widget", "w1"]).await;
    assert_eq!(w1["apiVersion"], "stable.example.com/v1");
    assert_eq!(w1["kind"], "Widget");
    assert_eq!(w1["metadata"]["namespace"], "default");
    assert_eq!(w1["metadata"]["generation"], 1);
    assert!(w1["metadata"]["uid"].is_string() && w1["metadata"]["resourceVersion"].is_string());
    assert!(w1["metadata"]["creationTimestamp"].is_string());
    assert_eq!(w1["spec"]["replicas"], 3);

    // A list: kubectl's List, and the server's WidgetList.
    let list = c.json(&["get", "widgets"]).await;
    assert_eq!(item_names(&list), ["w1", "w2", "w3"]);
    let raw: Value = serde_json::from_str(
        &c.ok(&[
            "get",
            "--raw",
            "/apis/stable.example.com/v1/namespaces/default/widgets",
        ])
        .await,
    )
    .unwrap();
    assert_eq!(raw["kind"], "WidgetList");
    assert_eq!(raw["apiVersion"], "stable.example.com/v1");
    assert!(raw["metadata"]["resourceVersion"].is_string(), "{raw:#}");
    assert_eq!(item_names(&raw), ["w1", "w2", "w3"]);

    // Label selectors.
    for (selector, want) in [
        ("app=web", &["w1", "w3"][..]),
        ("app in (db)", &["w2"][..]),
        ("!tier", &["w2"][..]),
        ("app=web,tier!=front", &["w3"][..]),
    ] {
        let list = c.json(&["get", "widgets", "-l", selector]).await;
        assert_eq!(item_names(&list), want, "-l {selector}");
    }
    // Field selectors: metadata.name and metadata.namespace, nothing else.
    let list = c
        .json(&["get", "widgets", "--field-selector", "metadata.name=w2"])
        .await;
    assert_eq!(item_names(&list), ["w2"]);
    let list = c
        .json(&[
            "get",
            "widgets",
            "--field-selector",
            "metadata.namespace=default,metadata.name!=w2",
        ])
        .await;
    assert_eq!(item_names(&list), ["w1", "w3"]);
    // Across namespaces.
    c.ok(&["create", "namespace", "other"]).await;
    c.ok(&[
        "create",
        "-n",
        "other",
        "-f",
        &c.file("w.yaml", &widget("w1", "  image: busybox"))
            .to_string_lossy(),
    ])
    .await;
    let out = c
        .ok(&[
            "get",
            "widgets",
            "-A",
            "-o",
            "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}",
        ])
        .await;
    assert_eq!(out.trim(), "default/w1 default/w2 default/w3 other/w1");

    // Replace: the read object, changed; generation follows the spec.
    let mut w1 = c.json(&["get", "widget", "w1"]).await;
    let stale = w1.clone();
    w1["spec"]["replicas"] = json!(4);
    let file = c.file("w1.json", &w1.to_string());
    let out = c.ok(&["replace", "-f", file.to_str().unwrap()]).await;
    assert_eq!(out.trim(), "widget.stable.example.com/w1 replaced");
    let w1 = c.json(&["get", "widget", "w1"]).await;
    assert_eq!(w1["spec"]["replicas"], 4);
    assert_eq!(w1["metadata"]["generation"], 2);
    // With the old resourceVersion: a conflict, upstream's text.
    let mut old = stale;
    old["spec"]["replicas"] = json!(5);
    let file = c.file("stale.json", &old.to_string());
    let err = c.fails(&["replace", "-f", file.to_str().unwrap()]).await;
    assert!(
        err.contains(r#"Operation cannot be fulfilled on widgets.stable.example.com "w1": the object has been modified; please apply your changes to the latest version and try again"#),
        "{err}"
    );

    // Merge patch and JSON patch.
    let out = c
        .ok(&[
            "patch",
            "widget",
            "w1",
            "--type=merge",
            "-p",
            r#"{"spec":{"mode":"HA"}}"#,
        ])
        .await;
    assert_eq!(out.trim(), "widget.stable.example.com/w1 patched");
    let out = c
        .ok(&[
            "patch",
            "widget",
            "w1",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/replicas","value":6},{"op":"add","path":"/spec/tags","value":["blue"]}]"#,
        ])
        .await;
    assert_eq!(out.trim(), "widget.stable.example.com/w1 patched");
    let w1 = c.json(&["get", "widget", "w1"]).await;
    assert_eq!(w1["spec"]["mode"], "HA");
    assert_eq!(w1["spec"]["replicas"], 6);
    assert_eq!(w1["spec"]["tags"], json!(["blue"]));
    // A strategic merge patch (kubectl's default) is not for custom resources:
    // the server's 415, which kubectl prefixes with the patch type and kind.
    let err = c
        .fails(&["patch", "widget", "w1", "-p", r#"{"spec":{"replicas":2}}"#])
        .await;
    assert!(
        err.contains("error: application/strategic-merge-patch+json is not supported by stable.example.com/v1, Kind=Widget: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"),
        "{err}"
    );
    let r = e2e::http(
        c.server(),
        "PATCH",
        "/apis/stable.example.com/v1/namespaces/default/widgets/w1",
        &[("Content-Type", "application/strategic-merge-patch+json")],
        br#"{"spec":{"replicas":2}}"#,
    )
    .await;
    assert_eq!(r.status, 415, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["reason"], "UnsupportedMediaType");

    // Delete one, then by label.
    let out = c.ok(&["delete", "widget", "w3"]).await;
    assert_eq!(out.trim(), r#"widget.stable.example.com "w3" deleted"#);
    let err = c.fails(&["get", "widget", "w3"]).await;
    assert!(
        err.contains(r#"Error from server (NotFound): widgets.stable.example.com "w3" not found"#),
        "{err}"
    );
    let out = c.ok(&["delete", "widgets", "-l", "app=db"]).await;
    assert_eq!(out.trim(), r#"widget.stable.example.com "w2" deleted"#);
    // A collection delete (DELETE on the list) as client-go's DeleteCollection does.
    let r = e2e::http(
        c.server(),
        "DELETE",
        "/apis/stable.example.com/v1/namespaces/other/widgets",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["kind"], "WidgetList");
    let list = c.json(&["get", "widgets", "-n", "other"]).await;
    assert_eq!(item_names(&list), Vec::<String>::new());
    assert_eq!(item_names(&c.json(&["get", "widgets"]).await), ["w1"]);

    // A field selector other than metadata.name / metadata.namespace (and
    // the CRD's selectableFields), upstream's text:
    let err = c
        .fails(&["get", "widgets", "--field-selector", "spec.mode=HA"])
        .await;
    assert!(err.contains("field label not supported: spec.mode"), "{err}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_side_and_server_side_apply_with_conflicts_and_list_maps() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    let first = widget("a1", "  image: nginx\n  replicas: 2");
    let out = c.run_with_yaml(&["apply"], &first).await;
    assert_eq!(
        out.stdout.trim(),
        "widget.stable.example.com/a1 created",
        "{}",
        out.stderr
    );
    let out = c.run_with_yaml(&["apply"], &first).await;
    assert_eq!(
        out.stdout.trim(),
        "widget.stable.example.com/a1 unchanged",
        "{}",
        out.stderr
    );
    let out = c
        .run_with_yaml(&["apply"], &widget("a1", "  image: nginx\n  replicas: 4"))
        .await;
    assert_eq!(
        out.stdout.trim(),
        "widget.stable.example.com/a1 configured",
        "{}",
        out.stderr
    );
    let a1 = c.json(&["get", "widget", "a1"]).await;
    assert_eq!(a1["spec"]["replicas"], 4);
    let last = a1["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .expect("kubectl's last-applied annotation");
    assert!(last.contains(r#""replicas":4"#), "{last}");
    // A field dropped from the applied file is removed (three-way merge).
    let out = c.run_with_yaml(&["apply"], &widget("a1", "  image: nginx")).await;
    assert!(out.success, "{}", out.stderr);
    let a1 = c.json(&["get", "widget", "a1"]).await;
    // replicas has a default, so the server puts 1 back.
    assert_eq!(a1["spec"]["replicas"], 1, "{a1:#}");

    // Server-side: a second manager conflicts, then forces.
    let alice = widget("s1", "  image: nginx\n  replicas: 2");
    let out = c
        .run_with_yaml(&["apply", "--server-side", "--field-manager=alice"], &alice)
        .await;
    assert_eq!(
        out.stdout.trim(),
        "widget.stable.example.com/s1 serverside-applied",
        "{}",
        out.stderr
    );
    let bob = widget("s1", "  replicas: 3");
    let out = c
        .run_with_yaml(&["apply", "--server-side", "--field-manager=bob"], &bob)
        .await;
    assert!(!out.success, "bob's apply should conflict: {}", out.stdout);
    assert!(
        out.stderr
            .contains(r#"Apply failed with 1 conflict: conflict with "alice": .spec.replicas"#),
        "{}",
        out.stderr
    );
    let out = c
        .run_with_yaml(
            &[
                "apply",
                "--server-side",
                "--field-manager=bob",
                "--force-conflicts",
            ],
            &bob,
        )
        .await;
    assert!(out.success, "{}", out.stderr);
    let s1 = c.json(&["get", "widget", "s1", "--show-managed-fields"]).await;
    assert_eq!(s1["spec"]["replicas"], 3);
    let managers: Vec<(String, String)> = s1["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().unwrap().to_string(),
                m["fieldsV1"].to_string(),
            )
        })
        .collect();
    let owns = |who: &str, field: &str| managers.iter().any(|(m, f)| m == who && f.contains(field));
    assert!(owns("bob", "f:replicas"), "{managers:?}");
    assert!(!owns("alice", "f:replicas"), "alice lost replicas: {managers:?}");
    assert!(owns("alice", "f:image"), "{managers:?}");

    // A list-type map: two managers own an entry each, merged by key.
    let alice = widget(
        "s1",
        "  image: nginx\n  replicas: 2\n  ports:\n  - name: http\n    port: 80",
    );
    let out = c
        .run_with_yaml(
            &[
                "apply",
                "--server-side",
                "--field-manager=alice",
                "--force-conflicts",
            ],
            &alice,
        )
        .await;
    assert!(out.success, "{}", out.stderr);
    let carol = widget("s1", "  ports:\n  - name: metrics\n    port: 9090");
    let out = c
        .run_with_yaml(&["apply", "--server-side", "--field-manager=carol"], &carol)
        .await;
    assert!(out.success, "{}", out.stderr);
    let ports = c.json(&["get", "widget", "s1"]).await["spec"]["ports"].clone();
    assert_eq!(
        ports,
        json!([{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}]),
        "both entries, in order"
    );
    // Alice stops applying her entry: only hers goes.
    let alice = widget("s1", "  image: nginx\n  replicas: 2");
    let out = c
        .run_with_yaml(&["apply", "--server-side", "--field-manager=alice"], &alice)
        .await;
    assert!(out.success, "{}", out.stderr);
    let ports = c.json(&["get", "widget", "s1"]).await["spec"]["ports"].clone();
    assert_eq!(ports, json!([{"name": "metrics", "port": 9090}]));
    // Carol changing an entry's port owned by nobody else: no conflict.
    let carol = widget("s1", "  ports:\n  - name: metrics\n    port: 9100");
    let out = c
        .run_with_yaml(&["apply", "--server-side", "--field-manager=carol"], &carol)
        .await;
    assert!(out.success, "{}", out.stderr);
    assert_eq!(
        c.json(&["get", "widget", "s1"]).await["spec"]["ports"],
        json!([{"name": "metrics", "port": 9100}])
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_watch_and_edit() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;

    // --dry-run=server: defaulted and validated, not stored.
    let r = c
        .run_with_yaml(
            &["create", "--dry-run=server", "-o", "json"],
            &widget("dry", "  image: nginx"),
        )
        .await;
    assert!(r.success, "{}", r.stderr);
    let dry: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(dry["spec"]["mode"], "Simple", "defaulted: {dry:#}");
    assert_eq!(dry["spec"]["replicas"], 1);
    let err = c.fails(&["get", "widget", "dry"]).await;
    assert!(err.contains("NotFound"), "{err}");
    let r = c
        .run_with_yaml(&["create", "--dry-run=server"], &widget("dry", "  image: nginx"))
        .await;
    assert_eq!(
        r.stdout.trim(),
        "widget.stable.example.com/dry created (server dry run)"
    );
    let r = c
        .run_with_yaml(
            &["apply", "--dry-run=server"],
            &widget("dry", "  image: nginx\n  replicas: 20"),
        )
        .await;
    assert!(!r.success, "an invalid dry run fails too");
    assert!(r.stderr.contains("spec.replicas"), "{}", r.stderr);

    // kubectl get -w: ADDED, MODIFIED, DELETED.
    create(&c, &widget("w0", "  image: nginx")).await;
    let seen = c
        .watch_while(
            &["widgets"],
            &["ADDED w0"],
            &["ADDED w1", "MODIFIED w1", "DELETED w1"],
            async || {
                create(&c, &widget("w1", "  image: nginx")).await;
                c.ok(&[
                    "patch",
                    "widget",
                    "w1",
                    "--type=merge",
                    "-p",
                    r#"{"spec":{"replicas":2}}"#,
                ])
                .await;
                c.ok(&["delete", "widget", "w1"]).await;
            },
        )
        .await;
    assert!(
        seen[0].starts_with("EVENT"),
        "a table with the event column: {seen:#?}"
    );
    assert!(seen[0].contains("REPLICAS"), "{seen:#?}");

    // kubectl edit with an editor that changes the file.
    let editor = c.file(
        "editor.sh",
        "#!/bin/sh\nsed -i 's/^  replicas: 1$/  replicas: 7/' \"$1\"\n",
    );
    let editor = editor.to_str().unwrap().to_string();
    std::process::Command::new("chmod")
        .args(["+x", &editor])
        .status()
        .expect("chmod");
    let r = run_env(&c, &[("KUBE_EDITOR", &editor)], &["edit", "widget", "w0"]).await;
    assert!(r.success, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "widget.stable.example.com/w0 edited");
    assert_eq!(
        jsonpath(&c, &["get", "widget", "w0"], "{.spec.replicas}").await,
        "7"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizers_owner_references_and_garbage_collection() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;

    // A finalizer holds a deleted widget until it is removed.
    create(
        &c,
        "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: fin\n  finalizers: [example.com/hold]\nspec:\n  image: nginx\n",
    )
    .await;
    let out = c.ok(&["delete", "widget", "fin", "--wait=false"]).await;
    assert_eq!(out.trim(), r#"widget.stable.example.com "fin" deleted"#);
    let fin = c.json(&["get", "widget", "fin"]).await;
    assert!(fin["metadata"]["deletionTimestamp"].is_string(), "{fin:#}");
    assert_eq!(fin["metadata"]["finalizers"], json!(["example.com/hold"]));
    // Removing the finalizer completes the deletion.
    c.ok(&[
        "patch",
        "widget",
        "fin",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ])
    .await;
    c.ok(&["wait", "--for=delete", "widget/fin", "--timeout=60s"])
        .await;

    // A ConfigMap owned by a widget goes with it.
    create(&c, &widget("owner", "  image: nginx")).await;
    let uid = jsonpath(&c, &["get", "widget", "owner"], "{.metadata.uid}").await;
    create(
        &c,
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n  ownerReferences:\n  - apiVersion: stable.example.com/v1\n    kind: Widget\n    name: owner\n    uid: {uid}\ndata:\n  k: v\n"
        ),
    )
    .await;
    c.ok(&["delete", "widget", "owner"]).await;
    c.ok(&["wait", "--for=delete", "configmap/owned", "--timeout=60s"])
        .await;

    // A widget owned by a ConfigMap goes with it.
    c.ok(&["create", "configmap", "parent", "--from-literal=k=v"])
        .await;
    let uid = jsonpath(&c, &["get", "configmap", "parent"], "{.metadata.uid}").await;
    create(
        &c,
        &format!(
            "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: child\n  ownerReferences:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: parent\n    uid: {uid}\n    blockOwnerDeletion: true\nspec:\n  image: nginx\n"
        ),
    )
    .await;
    // Foreground: the owner waits for its dependent widget.
    c.ok(&[
        "delete",
        "configmap",
        "parent",
        "--cascade=foreground",
        "--wait=false",
    ])
    .await;
    c.ok(&["wait", "--for=delete", "widget/child", "--timeout=60s"])
        .await;
    c.ok(&["wait", "--for=delete", "configmap/parent", "--timeout=60s"])
        .await;

    // Orphaning: the dependent stays, without its ownerReference.
    create(&c, &widget("owner2", "  image: nginx")).await;
    let uid = jsonpath(&c, &["get", "widget", "owner2"], "{.metadata.uid}").await;
    create(
        &c,
        &format!(
            "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: orphan\n  ownerReferences:\n  - apiVersion: stable.example.com/v1\n    kind: Widget\n    name: owner2\n    uid: {uid}\nspec:\n  image: nginx\n"
        ),
    )
    .await;
    c.ok(&["delete", "widget", "owner2", "--cascade=orphan"]).await;
    c.eventually_json(
        &["get", "widget", "orphan"],
        "the orphan's ownerReferences to go",
        |v| v["metadata"]["ownerReferences"].is_null(),
    )
    .await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_patch_whose_test_fails_reads_as_upstream() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    create(&c, &widget("w1", "  image: nginx\n  replicas: 3")).await;
    let err = c
        .fails(&[
            "patch",
            "widget",
            "w1",
            "--type=json",
            "-p",
            r#"[{"op":"test","path":"/spec/replicas","value":1}]"#,
        ])
        .await;
    assert!(
        err.contains("testing value /spec/replicas failed: test failed"),
        "{err}"
    );
    c.stop().await;
}
