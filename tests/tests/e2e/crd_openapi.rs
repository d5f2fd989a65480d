//! OpenAPI v3 of custom resources through kubectl: a CRD's group-version
//! document appears with the CRD, follows its changes (a new hash, a new
//! `kubectl explain` text) and leaves with it, while the built-in
//! documents keep their hashes.

use e2e::Cluster;
use serde_json::Value;

const GV: &str = "apis/stable.example.com/v1";

fn widgets_yaml() -> String {
    let path = format!("{}/testdata/crds/widgets.yaml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("tests/testdata/crds/widgets.yaml")
}

/// The `serverRelativeURL` of every group-version in `/openapi/v3`.
async fn index(c: &Cluster) -> Value {
    let raw = c.ok(&["get", "--raw", "/openapi/v3"]).await;
    serde_json::from_str::<Value>(&raw).expect("index JSON")["paths"].clone()
}

fn url(index: &Value, gv: &str) -> Option<String> {
    index[gv]["serverRelativeURL"].as_str().map(str::to_string)
}

/// Polls the index (the CRD controller updates the registry after the
/// write returns) until `done` holds; returns that index.
async fn index_until(c: &Cluster, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..100 {
        let now = index(c).await;
        if done(&now) {
            return now;
        }
        c.sleep_real(std::time::Duration::from_millis(100)).await;
    }
    panic!("the OpenAPI v3 index never showed {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crds_document_follows_the_crd() {
    let mut c = Cluster::start().await;
    let before = index(&c).await;
    assert!(url(&before, GV).is_none());
    let apps = url(&before, "apis/apps/v1").expect("apps/v1 listed");

    let crd = c.file("widgets.yaml", &widgets_yaml());
    c.ok(&["apply", "-f", crd.to_str().expect("utf-8")]).await;
    c.ok(&[
        "wait",
        "--for",
        "condition=established",
        "crd/widgets.stable.example.com",
        "--timeout=60s",
    ])
    .await;
    let listed = index_until(&c, GV, |i| url(i, GV).is_some()).await;
    let first = url(&listed, GV).expect("listed");
    assert!(first.starts_with(&format!("/openapi/v3/{GV}?hash=")), "{first}");
    assert_eq!(url(&listed, "apis/apps/v1").as_deref(), Some(apps.as_str()));

    // The document: the kind under its reversed-group name, its list, and a
    // PATCH that kubectl's validation check and client-side apply read.
    let doc: Value = serde_json::from_str(&c.ok(&["get", "--raw", &first]).await).expect("document");
    let widget = &doc["components"]["schemas"]["com.example.stable.v1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"][0]["kind"], "Widget",
        "{widget:#}"
    );
    assert!(doc["components"]["schemas"]["com.example.stable.v1.WidgetList"].is_object());
    let patch = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
    let content = patch["requestBody"]["content"].as_object().expect("patch body");
    assert!(content.contains_key("application/merge-patch+json"));
    assert!(!content.contains_key("application/strategic-merge-patch+json"));

    let out = c.ok(&["explain", "widgets.spec.image"]).await;
    assert!(out.contains("The image the widget runs."), "{out}");
    let out = c.ok(&["explain", "widgets"]).await;
    assert!(out.contains("KIND:") && out.contains("Widget"), "{out}");
    assert!(out.contains("A Widget is a small thing the tests make."), "{out}");

    // A changed CRD: a new hash, and explain reads the new text.
    let changed = widgets_yaml().replace("The image the widget runs.", "The container image to run.");
    let crd = c.file("widgets-changed.yaml", &changed);
    c.ok(&["apply", "-f", crd.to_str().expect("utf-8")]).await;
    let after = index_until(&c, "a new hash", |i| url(i, GV).is_some_and(|u| u != first)).await;
    assert_eq!(url(&after, "apis/apps/v1").as_deref(), Some(apps.as_str()));
    let out = c.ok(&["explain", "widgets.spec.image"]).await;
    assert!(out.contains("The container image to run."), "{out}");

    // Deleted: the group-version leaves the index.
    c.ok(&["delete", "crd", "widgets.stable.example.com"]).await;
    let gone = index_until(&c, "no widgets", |i| url(i, GV).is_none()).await;
    assert_eq!(url(&gone, "apis/apps/v1").as_deref(), Some(apps.as_str()));
    c.stop().await;
}
