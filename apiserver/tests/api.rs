//! The in-process API, without HTTP: the registry rules every write goes
//! through (generation, status subresource, dry run, generateName,
//! namespace lifecycle, finalizers and cascading deletion).

use apiserver::api::{DeleteOptions, DeleteOutcome, Propagation, WriteOptions};
use apiserver::error::Reason;
use apiserver::{Api, Registry};
use serde_json::{Value, json};

fn api() -> Api {
    let store = store::Store::open(store::Config::default()).expect("temporary store");
    Api::new(store, Registry::new(), store::Clock::system())
}

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
        },
    })
}

fn opts() -> WriteOptions {
    WriteOptions {
        field_manager: Some("test".into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn generation_moves_with_spec_and_status_goes_through_its_subresource() {
    let api = api();
    api.bootstrap().await.unwrap();
    let info = api.resource("apps", "v1", "deployments").unwrap();
    let created = api
        .create(&info, Some("default"), deployment("web"), &opts())
        .await
        .unwrap()
        .object;
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["status"], json!({}));

    // A label change is not a spec change.
    let mut labelled = created.clone();
    labelled["metadata"]["labels"] = json!({"x": "y"});
    let labelled = api
        .update(&info, Some("default"), "web", labelled, None, &opts())
        .await
        .unwrap()
        .object;
    assert_eq!(labelled["metadata"]["generation"], 1);

    // The main resource ignores status; the spec change bumps generation.
    let mut scaled = labelled.clone();
    scaled["spec"]["replicas"] = json!(3);
    scaled["status"] = json!({"replicas": 99});
    let scaled = api
        .update(&info, Some("default"), "web", scaled, None, &opts())
        .await
        .unwrap()
        .object;
    assert_eq!(scaled["metadata"]["generation"], 2);
    assert_eq!(scaled["status"], json!({}));

    // The status subresource writes status only.
    let mut status = scaled.clone();
    status["status"] = json!({"replicas": 3, "observedGeneration": 2});
    status["spec"]["replicas"] = json!(7);
    let status = api
        .update(
            &info,
            Some("default"),
            "web",
            status,
            Some(apiserver::registry::Subresource::Status),
            &opts(),
        )
        .await
        .unwrap()
        .object;
    assert_eq!(status["status"]["replicas"], 3);
    assert_eq!(status["spec"]["replicas"], 3);
    assert_eq!(status["metadata"]["generation"], 2);
}

#[tokio::test]
async fn dry_run_validates_but_does_not_store() {
    let api = api();
    api.bootstrap().await.unwrap();
    let info = api.resource("apps", "v1", "deployments").unwrap();
    let dry = WriteOptions {
        dry_run: true,
        ..opts()
    };
    let w = api
        .create(&info, Some("default"), deployment("dry"), &dry)
        .await
        .unwrap();
    assert_eq!(w.object["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        api.get(&info, Some("default"), "dry").unwrap_err().reason,
        Reason::NotFound
    );
    let mut bad = deployment("dry");
    bad["spec"]["replicas"] = json!(-1);
    assert_eq!(
        api.create(&info, Some("default"), bad, &dry)
            .await
            .unwrap_err()
            .reason,
        Reason::Invalid
    );
}

#[tokio::test]
async fn generate_name_and_namespace_lifecycle() {
    let api = api();
    api.bootstrap().await.unwrap();
    let cms = api.resource("", "v1", "configmaps").unwrap();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cfg-"}});
    let made = api
        .create(&cms, Some("default"), cm.clone(), &opts())
        .await
        .unwrap()
        .object;
    let name = made["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("cfg-") && name.len() == 9, "{name}");

    let err = api
        .create(&cms, Some("nowhere"), cm.clone(), &opts())
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::NotFound);
    assert_eq!(err.message, "namespaces \"nowhere\" not found");
}

#[tokio::test]
async fn foreground_deletion_keeps_the_owner_until_dependents_are_gone() {
    let api = api();
    api.bootstrap().await.unwrap();
    let deploys = api.resource("apps", "v1", "deployments").unwrap();
    let cms = api.resource("", "v1", "configmaps").unwrap();
    let owner = api
        .create(&deploys, Some("default"), deployment("owner"), &opts())
        .await
        .unwrap()
        .object;
    let dependent = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "dep", "finalizers": ["example.com/hold"], "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "Deployment", "name": "owner",
            "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]},
    });
    api.create(&cms, Some("default"), dependent, &opts())
        .await
        .unwrap();
    let fg = DeleteOptions {
        propagation: Some(Propagation::Foreground),
        ..Default::default()
    };
    let outcome = api.delete(&deploys, Some("default"), "owner", &fg).await.unwrap();
    let DeleteOutcome::Pending(marked) = outcome else {
        panic!("owner must wait for its dependents")
    };
    assert_eq!(marked["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    assert!(marked["metadata"]["deletionTimestamp"].is_string());

    // The dependent is being deleted but holds its own finalizer: the owner stays.
    let dep = wait_for(|| {
        api.get(&cms, Some("default"), "dep")
            .ok()
            .filter(|d| d["metadata"]["deletionTimestamp"].is_string())
    })
    .await;
    assert!(api.get(&deploys, Some("default"), "owner").is_ok());
    // Releasing it lets both go.
    let mut released = dep.clone();
    released["metadata"]["finalizers"] = json!([]);
    api.update(&cms, Some("default"), "dep", released, None, &opts())
        .await
        .unwrap();
    wait_for(|| api.get(&deploys, Some("default"), "owner").err()).await;
    assert_eq!(
        api.get(&cms, Some("default"), "dep").unwrap_err().reason,
        Reason::NotFound
    );
}

#[tokio::test]
async fn orphan_deletion_strips_owner_references() {
    let api = api();
    api.bootstrap().await.unwrap();
    let deploys = api.resource("apps", "v1", "deployments").unwrap();
    let cms = api.resource("", "v1", "configmaps").unwrap();
    let owner = api
        .create(&deploys, Some("default"), deployment("o"), &opts())
        .await
        .unwrap()
        .object;
    let dependent = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept", "ownerReferences": [{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "o", "uid": owner["metadata"]["uid"]}]}});
    api.create(&cms, Some("default"), dependent, &opts())
        .await
        .unwrap();
    let orphan = DeleteOptions {
        propagation: Some(Propagation::Orphan),
        ..Default::default()
    };
    api.delete(&deploys, Some("default"), "o", &orphan).await.unwrap();
    wait_for(|| api.get(&deploys, Some("default"), "o").err()).await;
    let kept = api.get(&cms, Some("default"), "kept").unwrap();
    assert!(kept["metadata"].get("ownerReferences").is_none(), "{kept}");
}

/// Polls `f` every 5 ms (the deletion tasks run meanwhile) until it returns Some,
/// for at most 10 s.
async fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let clock = store::Clock::system();
    for _ in 0..2_000 {
        if let Some(v) = f() {
            return v;
        }
        clock.sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("condition never met");
}
