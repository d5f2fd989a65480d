//! A definition's life: established, discovered, served, refused when its
//! names collide, deleted with its objects.

use e2e::Cluster;
use serde_json::Value;

use super::{
    WIDGETS, condition, create, established, headers, install, item_names, jsonpath, row, table, testdata,
    user_crd_names, widget,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definition_is_established_discovered_served_and_deleted() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    install(&c, "sprockets.yaml", &["sprockets.stable.example.com"]).await;

    // The definition's status: accepted names, both conditions, stored versions.
    let crd = c.json(&["get", "crd", WIDGETS]).await;
    let names = &crd["status"]["acceptedNames"];
    assert_eq!(names["plural"], "widgets", "{crd:#}");
    assert_eq!(names["singular"], "widget");
    assert_eq!(names["kind"], "Widget");
    assert_eq!(names["listKind"], "WidgetList");
    assert_eq!(names["shortNames"], serde_json::json!(["wd", "wdg"]));
    assert_eq!(names["categories"], serde_json::json!(["examples"]));
    let accepted = condition(&crd, "NamesAccepted").expect("NamesAccepted");
    assert_eq!(accepted["status"], "True");
    assert_eq!(accepted["reason"], "NoConflicts");
    let est = condition(&crd, "Established").expect("Established");
    assert_eq!(est["status"], "True");
    assert_eq!(est["reason"], "InitialNamesAccepted");
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));
    // Defaulted as upstream's v1 defaults: listKind, conversion None.
    assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(crd["spec"]["conversion"]["strategy"], "None");

    // `kubectl get crd` prints NAME and CREATED AT.
    let out = c.ok(&["get", "crd"]).await;
    assert_eq!(headers(&out), ["NAME", "CREATED AT"], "{out}");
    let rows = table(&out);
    assert!(row(&rows, WIDGETS)["CREATED AT"].ends_with('Z'), "{out}");

    // Discovery, as kubectl api-resources shows it.
    let out = c
        .ok(&["api-resources", "--api-group=stable.example.com", "-o", "wide"])
        .await;
    let rows = table(&out);
    let w = row(&rows, "widgets");
    assert_eq!(w["SHORTNAMES"], "wd,wdg", "{out}");
    assert_eq!(w["APIVERSION"], "stable.example.com/v1");
    assert_eq!(w["NAMESPACED"], "true");
    assert_eq!(w["KIND"], "Widget");
    assert_eq!(w["CATEGORIES"], "examples");
    for verb in [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ] {
        assert!(w["VERBS"].contains(verb), "{verb} missing: {out}");
    }
    let s = row(&rows, "sprockets");
    assert_eq!(s["NAMESPACED"], "false", "{out}");
    assert_eq!(s["KIND"], "Sprocket");
    let by_category = c
        .ok(&["api-resources", "--categories=examples", "-o", "name"])
        .await;
    assert_eq!(
        by_category.lines().collect::<Vec<_>>(),
        ["sprockets.stable.example.com", "widgets.stable.example.com"],
        "{by_category}"
    );

    // The legacy discovery documents: group, preferred version, subresources.
    let groups: Value = serde_json::from_str(&c.ok(&["get", "--raw", "/apis"]).await).unwrap();
    let group = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "stable.example.com")
        .unwrap_or_else(|| panic!("no group stable.example.com in {groups:#}"));
    assert_eq!(group["preferredVersion"]["groupVersion"], "stable.example.com/v1");
    let list: Value =
        serde_json::from_str(&c.ok(&["get", "--raw", "/apis/stable.example.com/v1"]).await).unwrap();
    assert_eq!(list["kind"], "APIResourceList");
    let resources = list["resources"].as_array().unwrap();
    let named = |n: &str| resources.iter().find(|r| r["name"] == n).cloned();
    let widgets = named("widgets").unwrap_or_else(|| panic!("{list:#}"));
    assert_eq!(widgets["singularName"], "widget");
    assert_eq!(widgets["namespaced"], true);
    assert_eq!(widgets["categories"], serde_json::json!(["examples"]));
    let status = named("widgets/status").unwrap_or_else(|| panic!("no widgets/status: {list:#}"));
    assert_eq!(status["kind"], "Widget");
    let scale = named("widgets/scale").unwrap_or_else(|| panic!("no widgets/scale: {list:#}"));
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["group"], "autoscaling");
    assert_eq!(scale["version"], "v1");
    // OpenAPI v3 lists the group-version.
    let index: Value = serde_json::from_str(&c.ok(&["get", "--raw", "/openapi/v3"]).await).unwrap();
    assert!(
        index["paths"]["apis/stable.example.com/v1"].is_object(),
        "no apis/stable.example.com/v1 in the OpenAPI v3 index: {:?}",
        index["paths"].as_object().map(|p| p.keys().collect::<Vec<_>>())
    );

    // Served by plural, singular, short name, qualified name and category.
    create(&c, &widget("w1", "  image: nginx\n  replicas: 2")).await;
    create(
        &c,
        "apiVersion: stable.example.com/v1\nkind: Sprocket\nmetadata:\n  name: s1\nspec:\n  teeth: 12\n",
    )
    .await;
    for what in [
        "widgets",
        "widget",
        "wd",
        "wdg",
        "widgets.stable.example.com",
        "widgets.v1.stable.example.com",
    ] {
        let out = c.ok(&["get", what, "-o", "name"]).await;
        assert_eq!(out.trim(), "widget.stable.example.com/w1", "kubectl get {what}");
    }
    let out = c.ok(&["get", "examples", "-o", "name"]).await;
    let mut got: Vec<&str> = out.lines().collect();
    got.sort_unstable();
    assert_eq!(
        got,
        ["sprocket.stable.example.com/s1", "widget.stable.example.com/w1"],
        "{out}"
    );
    let s1 = c.json(&["get", "sprocket", "s1"]).await;
    assert!(s1["metadata"]["namespace"].is_null(), "cluster-scoped: {s1:#}");
    assert_eq!(s1["spec"]["teeth"], 12);

    // Deleting the definition removes the resource and its objects.
    let out = c.ok(&["delete", "crd", WIDGETS]).await;
    assert_eq!(
        out.trim(),
        format!("customresourcedefinition.apiextensions.k8s.io \"{WIDGETS}\" deleted")
    );
    let out = c.ok(&["api-resources", "--api-group=stable.example.com"]).await;
    assert!(!out.contains("widgets"), "{out}");
    assert!(out.contains("sprockets"), "{out}");
    let err = c
        .fails(&[
            "get",
            "--raw",
            "/apis/stable.example.com/v1/namespaces/default/widgets",
        ])
        .await;
    assert!(err.contains("NotFound") || err.contains("not find"), "{err}");
    let err = c.fails(&["get", "widgets"]).await;
    assert!(
        err.contains(r#"the server doesn't have a resource type "widgets""#),
        "{err}"
    );
    // Installed again, it starts empty: the old objects went with it.
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    let list = c.json(&["get", "widgets"]).await;
    assert_eq!(item_names(&list), Vec::<String>::new(), "{list:#}");
    assert_eq!(
        c.json(&["get", "sprockets"]).await["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plural_already_in_use_is_not_accepted_until_it_is_freed() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    // `widget` is the first definition's singular: the second's plural collides.
    c.ok(&["apply", "-f", &testdata("crds/widget-conflict.yaml")])
        .await;
    let clash = "widget.stable.example.com";
    let crd = c
        .eventually_json(&["get", "crd", clash], "NamesAccepted False", |v| {
            condition(v, "NamesAccepted").is_some_and(|cond| cond["status"] == "False")
        })
        .await;
    let accepted = condition(&crd, "NamesAccepted").unwrap();
    assert_eq!(accepted["reason"], "PluralConflict", "{crd:#}");
    assert_eq!(accepted["message"], r#""widget" is already in use"#);
    let est = condition(&crd, "Established").expect("an Established condition");
    assert_eq!(est["status"], "False", "{crd:#}");
    assert_eq!(est["reason"], "NotAccepted");
    assert_eq!(est["message"], "not all names are accepted");
    // The names that do not collide are accepted; the plural is not.
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "WidgetClone");
    assert!(
        crd["status"]["acceptedNames"]["plural"]
            .as_str()
            .unwrap_or("")
            .is_empty(),
        "{crd:#}"
    );
    // The same, read as the brief's users do.
    let reason = jsonpath(
        &c,
        &["get", "crd", clash],
        r#"{.status.conditions[?(@.type=="NamesAccepted")].reason}"#,
    )
    .await;
    assert_eq!(reason, "PluralConflict");

    // Not served: not in discovery, and its path is not found.
    let out = c.ok(&["api-resources", "--api-group=stable.example.com"]).await;
    assert!(!out.contains("WidgetClone"), "{out}");
    let err = c
        .fails(&[
            "get",
            "--raw",
            "/apis/stable.example.com/v1/namespaces/default/widget",
        ])
        .await;
    assert!(err.contains("NotFound") || err.contains("not find"), "{err}");
    // The first definition still serves `widget` as its singular.
    create(&c, &widget("w1", "  image: nginx")).await;
    assert_eq!(
        c.ok(&["get", "widget", "-o", "name"]).await.trim(),
        "widget.stable.example.com/w1"
    );

    // When the first definition goes, the second one's names are accepted.
    c.ok(&["delete", "crd", WIDGETS]).await;
    let crd = c
        .eventually_json(&["get", "crd", clash], "NamesAccepted True", |v| {
            condition(v, "NamesAccepted").is_some_and(|cond| cond["status"] == "True")
        })
        .await;
    assert_eq!(crd["status"]["acceptedNames"]["plural"], "widget", "{crd:#}");
    established(&c, clash).await;
    let list: Value = serde_json::from_str(
        &c.ok(&[
            "get",
            "--raw",
            "/apis/stable.example.com/v1/namespaces/default/widget",
        ])
        .await,
    )
    .unwrap();
    assert_eq!(list["kind"], "WidgetCloneList", "{list:#}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_definition_waits_for_the_finalizers_of_its_objects() {
    let mut c = Cluster::start().await;
    install(&c, "widgets.yaml", &[WIDGETS]).await;
    create(
        &c,
        "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\nspec:\n  image: nginx\n",
    )
    .await;
    create(&c, &widget("free", "  image: nginx")).await;

    let out = c.ok(&["delete", "crd", WIDGETS, "--wait=false"]).await;
    assert!(out.contains("deleted"), "{out}");
    // The definition is Terminating while an object remains; the object
    // without a finalizer goes, the one with it waits, marked for deletion.
    let crd = c
        .eventually_json(&["get", "crd", WIDGETS], "the CRD to be terminating", |v| {
            condition(v, "Terminating").is_some_and(|t| t["status"] == "True")
        })
        .await;
    assert!(crd["metadata"]["deletionTimestamp"].is_string(), "{crd:#}");
    assert!(
        crd["metadata"]["finalizers"].as_array().is_some_and(|f| f
            .iter()
            .any(|f| f == "customresourcecleanup.apiextensions.k8s.io")),
        "{crd:#}"
    );
    let held = c
        .eventually_json(&["get", "widgets"], "only the held widget left", |v| {
            item_names(v) == ["held"]
        })
        .await;
    assert!(
        held["items"][0]["metadata"]["deletionTimestamp"].is_string(),
        "{held:#}"
    );
    // No new objects while the definition is terminating.
    let r = c
        .run_with_yaml(&["create"], &widget("late", "  image: nginx"))
        .await;
    assert!(!r.success, "created while terminating: {}", r.stdout);
    assert!(
        r.stderr
            .contains("create not allowed while custom resource definition is terminating"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("MethodNotAllowed"), "{}", r.stderr);

    // Removing the finalizer lets both go.
    let out = c
        .ok(&[
            "patch",
            "widget",
            "held",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ])
        .await;
    assert_eq!(out.trim(), "widget.stable.example.com/held patched");
    c.ok(&["wait", "--for=delete", &format!("crd/{WIDGETS}"), "--timeout=60s"])
        .await;
    let out = c.ok(&["api-resources", "--api-group=stable.example.com"]).await;
    assert!(!out.contains("widgets"), "{out}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definitions_upstream_refuses_are_refused_with_its_messages() {
    let mut c = Cluster::start().await;
    let definition = |name: &str, versions: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\nspec:\n  group: stable.example.com\n  scope: Namespaced\n  names: {{plural: things, kind: Thing}}\n  versions:\n{versions}\n"
        )
    };
    let schema = "    schema:\n      openAPIV3Schema:\n        type: object\n";
    let one = format!("  - name: v1\n    served: true\n    storage: true\n{schema}");

    // The name must be <plural>.<group>.
    let err = c
        .create_fails(&definition("wrong.stable.example.com", &one))
        .await;
    assert!(
        err.contains(r#"The CustomResourceDefinition "wrong.stable.example.com" is invalid: metadata.name: Invalid value: "wrong.stable.example.com": must be spec.names.plural+"."+spec.group"#),
        "{err}"
    );
    // Exactly one storage version.
    let two = format!(
        "  - name: v1\n    served: true\n    storage: true\n{schema}  - name: v2\n    served: true\n    storage: true\n{schema}"
    );
    let err = c
        .create_fails(&definition("things.stable.example.com", &two))
        .await;
    assert!(
        err.contains("must have exactly one version marked as storage version"),
        "{err}"
    );
    // A structural schema: every property has a type.
    let untyped = "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            properties:\n              size: {type: integer}\n";
    let err = c
        .create_fails(&definition("things.stable.example.com", untyped))
        .await;
    assert!(
        err.contains("spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"),
        "{err}"
    );
    // A default that its own schema refuses.
    let bad_default = "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              size: {type: integer, default: big}\n";
    let err = c
        .create_fails(&definition("things.stable.example.com", bad_default))
        .await;
    assert!(
        err.contains("spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: \"string\""),
        "{err}"
    );
    // None of them was stored.
    let list = c.json(&["get", "crd"]).await;
    assert_eq!(user_crd_names(&list), Vec::<String>::new());
    c.stop().await;
}
