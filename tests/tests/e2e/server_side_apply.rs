//! Server-side apply as users run it: `kubectl apply --server-side` again
//! and again while editing one file, and the same requests sent raw.
//!
//! Regression (issue 7 §1): the second apply by one manager used to leave
//! a `kubectl`/`Update` entry instead of `kubectl`/`Apply`, kept the field
//! the file no longer had, and the third apply failed with a conflict with
//! "kubectl" itself. Each step below checks the managedFields a real
//! cluster shows.

use e2e::{Cluster, http};
use serde_json::{Value, json};

fn configmap(data: &[(&str, &str)]) -> String {
    let mut yaml = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n");
    for (k, v) in data {
        yaml.push_str(&format!("  {k}: \"{v}\"\n"));
    }
    yaml
}

/// `(manager, operation, the data keys it owns)` of each managedFields entry.
fn owners(obj: &Value) -> Vec<(String, String, Vec<String>)> {
    let mut all: Vec<_> = obj["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|e| {
            let keys = e["fieldsV1"]["f:data"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            (
                e["manager"].as_str().unwrap_or("").to_string(),
                e["operation"].as_str().unwrap_or("").to_string(),
                keys,
            )
        })
        .collect();
    all.sort();
    all
}

fn owner(manager: &str, operation: &str, keys: &[&str]) -> (String, String, Vec<String>) {
    (
        manager.into(),
        operation.into(),
        keys.iter().map(|k| k.to_string()).collect(),
    )
}

async fn apply_file(c: &Cluster, data: &[(&str, &str)], extra: &[&str]) -> Result<String, String> {
    let file = c.file("cm.yaml", &configmap(data));
    let mut args = vec!["apply", "--server-side", "-f", file.to_str().unwrap()];
    args.extend(extra);
    let r = c.run(&args).await;
    if r.success { Ok(r.stdout) } else { Err(r.stderr) }
}

async fn live(c: &Cluster) -> Value {
    c.json(&["get", "cm", "cm", "--show-managed-fields"]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_one_file_again_and_again_while_it_is_edited() {
    let mut c = Cluster::start().await;
    apply_file(&c, &[("k", "1"), ("j", "1")], &[]).await.unwrap();
    assert_eq!(
        owners(&live(&c).await),
        vec![owner("kubectl", "Apply", &["f:j", "f:k"])]
    );

    let out = apply_file(&c, &[("k", "2")], &[]).await.unwrap();
    assert!(out.contains("configmap/cm serverside-applied"), "{out}");
    let obj = live(&c).await;
    assert_eq!(
        obj["data"],
        json!({"k": "2"}),
        "j is removed: no one else owns it"
    );
    assert_eq!(owners(&obj), vec![owner("kubectl", "Apply", &["f:k"])]);

    apply_file(&c, &[("k", "3")], &[]).await.unwrap();
    let obj = live(&c).await;
    assert_eq!(obj["data"], json!({"k": "3"}));
    assert_eq!(owners(&obj), vec![owner("kubectl", "Apply", &["f:k"])]);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_applies_over_create_and_over_another_managers_edit() {
    let mut c = Cluster::start().await;
    let file = c.file("created.yaml", &configmap(&[("k", "1"), ("j", "1")]));
    c.ok(&["create", "-f", file.to_str().unwrap()]).await;
    // Applying what is there shares the fields with kubectl-create.
    apply_file(&c, &[("k", "1"), ("j", "1")], &[]).await.unwrap();
    // A field only the apply adds is the applier's alone, edit after edit.
    apply_file(&c, &[("k", "1"), ("j", "1"), ("x", "1")], &[])
        .await
        .unwrap();
    apply_file(&c, &[("k", "1"), ("j", "1"), ("x", "2")], &[])
        .await
        .unwrap();
    assert_eq!(
        owners(&live(&c).await),
        vec![
            owner("kubectl", "Apply", &["f:j", "f:k", "f:x"]),
            owner("kubectl-create", "Update", &[".", "f:j", "f:k"]),
        ]
    );

    // Another manager edits k; applying the old value conflicts with it ...
    c.ok(&[
        "patch",
        "cm",
        "cm",
        "--type=merge",
        "-p",
        r#"{"data":{"k":"edited"}}"#,
    ])
    .await;
    let err = apply_file(&c, &[("k", "1"), ("j", "1"), ("x", "2")], &[])
        .await
        .unwrap_err();
    assert!(
        err.contains("Apply failed with 1 conflict: conflict with \"kubectl-patch\"")
            && err.contains(".data.k"),
        "{err}"
    );
    // ... until --force-conflicts takes it back.
    apply_file(&c, &[("k", "1"), ("j", "1"), ("x", "2")], &["--force-conflicts"])
        .await
        .unwrap();
    let obj = live(&c).await;
    assert_eq!(obj["data"], json!({"j": "1", "k": "1", "x": "2"}));
    assert_eq!(
        owners(&obj),
        vec![
            owner("kubectl", "Apply", &["f:j", "f:k", "f:x"]),
            owner("kubectl-create", "Update", &[".", "f:j"]),
        ]
    );
    // Dropping j from the file keeps it: kubectl-create still owns it.
    apply_file(&c, &[("k", "1"), ("x", "2")], &[]).await.unwrap();
    assert_eq!(live(&c).await["data"], json!({"j": "1", "k": "1", "x": "2"}));
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_apply_requests_by_one_manager() {
    let mut c = Cluster::start().await;
    let path = "/api/v1/namespaces/default/configmaps/cm?fieldManager=raw";
    let apply = |data: Value| {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": data});
        serde_json::to_vec(&body).unwrap()
    };
    let ct = ("Content-Type", "application/apply-patch+yaml");
    let first = http(
        c.server(),
        "PATCH",
        path,
        &[ct],
        &apply(json!({"k": "1", "j": "1"})),
    )
    .await;
    assert_eq!(first.status, 201, "apply creates: {first:?}");
    for value in ["2", "3"] {
        let r = http(c.server(), "PATCH", path, &[ct], &apply(json!({"k": value}))).await;
        assert_eq!(r.status, 200, "{r:?}");
        let obj = r.json();
        assert_eq!(obj["data"], json!({"k": value}));
        assert_eq!(owners(&obj), vec![owner("raw", "Apply", &["f:k"])]);
    }
    // Another manager without force: 409 naming the owner; with force: 200.
    let other = "/api/v1/namespaces/default/configmaps/cm?fieldManager=other";
    let r = http(c.server(), "PATCH", other, &[ct], &apply(json!({"k": "x"}))).await;
    assert_eq!(r.status, 409, "{r:?}");
    assert_eq!(
        r.json()["message"],
        "Apply failed with 1 conflict: conflict with \"raw\": .data.k"
    );
    let forced = format!("{other}&force=true");
    let r = http(c.server(), "PATCH", &forced, &[ct], &apply(json!({"k": "x"}))).await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(owners(&r.json()), vec![owner("other", "Apply", &["f:k"])]);
    c.stop().await;
}
