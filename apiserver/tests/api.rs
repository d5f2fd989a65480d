//! The in-process API, without HTTP: the registry rules every write goes
//! through (generation, status subresource, dry run, generateName,
//! namespace lifecycle, finalizers and what a propagation policy sets).

use apiserver::api::{DeleteOptions, DeleteOutcome, ListOptions, Propagation, WriteOptions};
use apiserver::error::Reason;
use apiserver::testkit::{TestApi, by, deployment};
use apiserver::{Api, Registry};
use serde_json::{Value, json};

fn opts() -> WriteOptions {
    by("test")
}

#[tokio::test]
async fn generation_moves_with_spec_and_status_goes_through_its_subresource() {
    let api = TestApi::builder().build().await;
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
    let api = TestApi::builder().build().await;
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
    let api = TestApi::builder().build().await;
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

/// The name and uid of each of three ConfigMaps created with `generateName`
/// in a freshly bootstrapped `api`.
async fn generated_names_and_uids(api: &Api) -> Vec<(String, String)> {
    api.bootstrap().await.unwrap();
    let cms = api.resource("", "v1", "configmaps").unwrap();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cfg-"}});
    let mut made = Vec::new();
    for _ in 0..3 {
        let obj = api
            .create(&cms, Some("default"), cm.clone(), &opts())
            .await
            .unwrap()
            .object;
        let field = |f: &str| obj["metadata"][f].as_str().unwrap().to_string();
        made.push((field("name"), field("uid")));
    }
    made
}

fn seeded_api(store: store::Store, seed: u64) -> Api {
    Api::with_seed(store, Registry::new(), store::Clock::system(), seed)
}

#[tokio::test]
async fn the_seed_decides_generated_names_and_uids() {
    let first = generated_names_and_uids(&TestApi::builder().seed(7).open()).await;
    let replay = generated_names_and_uids(&TestApi::builder().seed(7).open()).await;
    let other = generated_names_and_uids(&TestApi::builder().seed(8).open()).await;
    assert_eq!(first, replay);
    for (a, b) in first.iter().zip(&other) {
        assert_ne!(a.0, b.0);
        assert_ne!(a.1, b.1);
    }
}

/// A restart on a kept store under the same seed must not hand out again the
/// uids of the objects already stored.
#[tokio::test]
async fn a_reopened_store_does_not_hand_out_stored_uids_again() {
    let dir = tempfile::tempdir().unwrap();
    let config = store::Config {
        path: Some(dir.path().join("store")),
        ..store::Config::default()
    };
    let store = store::Store::open(config.clone()).unwrap();
    generated_names_and_uids(&seeded_api(store.clone(), 7)).await;
    store.close().await.unwrap();
    drop(store);
    let api = seeded_api(store::Store::open(config).unwrap(), 7);
    // The first draw after the restart: on the old stream, the uid of `default`.
    let cms = api.resource("", "v1", "configmaps").unwrap();
    let named = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after-restart"}});
    api.create(&cms, Some("default"), named, &opts()).await.unwrap();
    generated_names_and_uids(&api).await;
    let mut uids = Vec::new();
    for plural in ["namespaces", "configmaps"] {
        let info = api.resource("", "v1", plural).unwrap();
        let list = api.list(&info, None, &ListOptions::default()).unwrap();
        uids.extend(
            list.items
                .iter()
                .map(|o| o["metadata"]["uid"].as_str().unwrap().to_string()),
        );
    }
    assert_eq!(uids.len(), 4 + 7);
    uids.sort();
    uids.dedup();
    assert_eq!(uids.len(), 4 + 7, "a uid was handed out twice");
}

/// A ConfigMap owned by `owner` (a Deployment), blocking its deletion.
fn dependent_of(owner: &Value, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "Deployment", "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}]},
    })
}

/// The API server's part of a deletion: Foreground and Orphan set their
/// finalizer and keep the owner; Background removes it. The dependents are
/// the garbage collector's work (controllers/tests/garbage_collector.rs):
/// without it, nothing cascades.
#[tokio::test]
async fn propagation_policies_set_finalizers_and_nothing_cascades_without_the_garbage_collector() {
    let api = TestApi::builder().build().await;
    let deploys = api.resource("apps", "v1", "deployments").unwrap();
    let cms = api.resource("", "v1", "configmaps").unwrap();
    let cases = [
        ("fg", Some(Propagation::Foreground), Some("foregroundDeletion")),
        ("orphan", Some(Propagation::Orphan), Some("orphan")),
        ("bg", Some(Propagation::Background), None),
        ("default", None, None),
    ];
    for (name, propagation, finalizer) in cases {
        let owner = api
            .create(&deploys, Some("default"), deployment(name), &opts())
            .await
            .unwrap()
            .object;
        let dep_name = format!("{name}-dep");
        api.create(&cms, Some("default"), dependent_of(&owner, &dep_name), &opts())
            .await
            .unwrap();
        let delete = DeleteOptions {
            propagation,
            ..Default::default()
        };
        let outcome = api
            .delete(&deploys, Some("default"), name, &delete)
            .await
            .unwrap();
        match (outcome, finalizer) {
            (DeleteOutcome::Pending(marked), Some(f)) => {
                assert_eq!(marked["metadata"]["finalizers"], json!([f]), "{name}");
                assert!(marked["metadata"]["deletionTimestamp"].is_string(), "{name}");
                assert!(api.get(&deploys, Some("default"), name).is_ok(), "{name}");
            }
            (DeleteOutcome::Deleted(_), None) => {
                let gone = api.get(&deploys, Some("default"), name).unwrap_err();
                assert_eq!(gone.reason, Reason::NotFound, "{name}");
            }
            (outcome, _) => panic!("{name}: unexpected {outcome:?}"),
        }
        // Give a (wrongly) spawned cascade time to act, then check the dependent.
        store::Clock::system()
            .sleep(std::time::Duration::from_millis(50))
            .await;
        let dep = api.get(&cms, Some("default"), &dep_name).unwrap();
        assert!(
            dep["metadata"].get("deletionTimestamp").is_none(),
            "{name}: {dep}"
        );
        assert_eq!(
            dep["metadata"]["ownerReferences"][0]["uid"],
            owner["metadata"]["uid"]
        );
    }
}

#[tokio::test]
async fn removing_the_last_finalizer_of_a_deleting_object_removes_it() {
    let api = TestApi::builder().build().await;
    let deploys = api.resource("apps", "v1", "deployments").unwrap();
    api.create(&deploys, Some("default"), deployment("o"), &opts())
        .await
        .unwrap();
    let orphan = DeleteOptions {
        propagation: Some(Propagation::Orphan),
        ..Default::default()
    };
    let DeleteOutcome::Pending(mut marked) =
        api.delete(&deploys, Some("default"), "o", &orphan).await.unwrap()
    else {
        panic!("the orphan finalizer keeps the owner")
    };
    let rv: u64 = marked["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let watch_opts = apiserver::api::WatchOptions {
        resource_version: Some(rv),
        ..Default::default()
    };
    let mut events = api.watch(&deploys, Some("default"), &watch_opts).unwrap();
    marked["metadata"]["finalizers"] = json!([]);
    api.update(&deploys, Some("default"), "o", marked, None, &opts())
        .await
        .unwrap();
    assert_eq!(
        api.get(&deploys, Some("default"), "o").unwrap_err().reason,
        Reason::NotFound
    );
    // Regression: the update used to be stored before the delete, so a
    // watcher saw a deleting object without the finalizer it waited on.
    // Upstream turns the update into the deletion: DELETED alone.
    match events.recv().await {
        Some(apiserver::api::WatchEvent::Deleted(last)) => {
            assert_eq!(
                last["metadata"]["finalizers"],
                json!(["orphan"]),
                "the last stored state"
            );
        }
        other => panic!("expected DELETED, got {other:?}"),
    }
}

/// Upstream `RetryGenerateName`: a generated name that is already taken is
/// generated again instead of failing the create with 409.
#[tokio::test]
async fn a_taken_generated_name_is_generated_again() {
    // Two servers on one store and one seed draw the same names.
    let first = TestApi::builder().seed(3).open();
    let second = seeded_api(first.store().clone(), 3);
    let namespaces = first.resource("", "v1", "namespaces").unwrap();
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "web-"}});
    let a = first
        .create(&namespaces, None, body.clone(), &opts())
        .await
        .unwrap();
    let b = second.create(&namespaces, None, body, &opts()).await.unwrap();
    let name = |w: &apiserver::api::Written| w.object["metadata"]["name"].as_str().unwrap().to_string();
    assert!(name(&a).starts_with("web-") && name(&b).starts_with("web-"));
    assert_ne!(name(&a), name(&b));
}

// Regression: the list path put "unable to parse requirement: " before the parser's error, which
// already starts with it for a bad requirement, so kubectl printed the prefix twice.
#[tokio::test]
async fn a_bad_label_selector_is_a_400_in_labels_parse_words() {
    let api = TestApi::builder().build().await;
    let info = api.resource("", "v1", "configmaps").unwrap();
    let list = |selector: &str| {
        let opts = ListOptions {
            label_selector: Some(selector.to_string()),
            ..Default::default()
        };
        api.list(&info, Some("default"), &opts)
    };
    let e = list("a@b=c").unwrap_err();
    assert_eq!(e.reason, Reason::BadRequest);
    // The requirement error is prefixed once, as kube-apiserver answers.
    assert!(
        e.message.starts_with("unable to parse requirement: ")
            && e.message.matches("unable to parse requirement").count() == 1,
        "{}",
        e.message
    );
    // An error outside a requirement has no prefix at all.
    let e = list("a=b,,").unwrap_err();
    assert_eq!(e.reason, Reason::BadRequest);
    assert!(
        !e.message.contains("unable to parse requirement"),
        "{}",
        e.message
    );
    assert!(list("a=b,c notin (d)").is_ok());
}
