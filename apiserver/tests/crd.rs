//! CustomResourceDefinitions through the in-process API: the lifecycle
//! (established, served, name conflicts, deletion, restart) and the
//! custom-resource write path (prune, defaults, validation, subresources,
//! versions, patch types).

use std::sync::Arc;
use std::time::Duration;

use apiserver::api::{
    DeleteOptions, FieldValidation, ListOptions, PatchType, WatchEvent, WatchOptions, WriteOptions,
};
use apiserver::error::Reason;
use apiserver::registry::ResourceInfo;
use apiserver::testkit::{TestApi, by};
use apiserver::{Api, Registry};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn opts() -> WriteOptions {
    by("test")
}

/// A namespaced `widgets.example.com` with v1 (storage) and a deprecated
/// v1beta1, status and scale subresources and a small schema.
fn widget_crd() -> Value {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "size": {"type": "integer", "minimum": 1, "default": 1},
            "color": {"type": "string"},
            "replicas": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}}}},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "selector": {"type": "string"}, "phase": {"type": "string"}}}}});
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
               "schema": {"openAPIV3Schema": schema.clone()},
               "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                   "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}})
    };
    let mut beta = version("v1beta1", false);
    beta["deprecated"] = json!(true);
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                           "shortNames": ["wd"], "categories": ["all"]},
                 "versions": [version("v1", true), beta]},
    })
}

fn widget(name: &str) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": name, "namespace": "default"},
           "spec": {"size": 2, "color": "blue"}})
}

/// An API with the CRD controller running.
struct Cluster {
    api: Api,
    shutdown: CancellationToken,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl Cluster {
    async fn start() -> Cluster {
        Cluster::on(TestApi::builder().build().await)
    }

    fn on(api: Api) -> Cluster {
        let shutdown = CancellationToken::new();
        tokio::spawn(api.clone().keep_custom_resources(shutdown.clone()));
        Cluster { api, shutdown }
    }

    fn crds(&self) -> Arc<ResourceInfo> {
        self.api
            .resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .unwrap()
    }

    /// Creates a CRD and waits (at most a second) until it is Established.
    async fn install(&self, crd: Value) -> Value {
        self.api
            .create(&self.crds(), None, crd.clone(), &opts())
            .await
            .unwrap();
        let name = crd["metadata"]["name"].as_str().unwrap().to_string();
        self.until(|api, crds| {
            let c = api.get(crds, None, &name).ok()?;
            condition(&c, "Established").filter(|s| s == "True").map(|_| c)
        })
        .await
    }

    /// Polls `f` on the server's clock until it answers, for at most a second.
    async fn until<T>(&self, f: impl Fn(&Api, &ResourceInfo) -> Option<T>) -> T {
        let crds = self.crds();
        let poll = async {
            loop {
                if let Some(t) = f(&self.api, &crds) {
                    return t;
                }
                self.api.clock().sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(1), poll)
            .await
            .expect("within a second")
    }

    fn widgets(&self, version: &str) -> Arc<ResourceInfo> {
        self.api.resource("example.com", version, "widgets").unwrap()
    }
}

fn condition(crd: &Value, kind: &str) -> Option<String> {
    crd["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .map(|c| c["status"].as_str().unwrap_or("").to_string())
}

fn find<'a>(list: &'a Value, key: &str, value: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|x| x[key] == value)
}

/// GET `path` through the HTTP router; the status, the `Warning` headers and the JSON body.
async fn http_get(api: &Api, path: &str, accept: &str) -> (u16, Vec<String>, Value) {
    use tower::ServiceExt;
    let state = apiserver::http::AppState::new(api.clone(), "127.0.0.1:1".into(), CancellationToken::new());
    let req = axum::http::Request::builder()
        .uri(path)
        .header("accept", accept)
        .body(axum::body::Body::empty())
        .unwrap();
    let resp = apiserver::http::router(state).oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 24).await.unwrap();
    (
        status,
        warnings,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

#[tokio::test]
async fn a_crd_becomes_established_and_appears_in_discovery() {
    let c = Cluster::start().await;
    let (_, _, builtin_before) = http_get(&c.api, "/apis", AGGREGATED).await;
    let crd = c.install(widget_crd()).await;
    let names_accepted = find(&crd["status"]["conditions"], "type", "NamesAccepted").unwrap();
    assert_eq!(names_accepted["reason"], "NoConflicts");
    assert_eq!(names_accepted["message"], "no conflicts found");
    let established = find(&crd["status"]["conditions"], "type", "Established").unwrap();
    assert_eq!(established["reason"], "InitialNamesAccepted", "{crd}");
    assert_eq!(established["message"], "the initial names have been accepted");
    assert_eq!(crd["status"]["acceptedNames"]["listKind"], "WidgetList");
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));

    // Legacy discovery: the group, its versions, the resource and its subresources.
    let (_, _, groups) = http_get(&c.api, "/apis", "application/json").await;
    let group = find(&groups["groups"], "name", "example.com").expect("example.com in /apis");
    assert_eq!(group["preferredVersion"]["version"], "v1");
    let (status, _, list) = http_get(&c.api, "/apis/example.com/v1", "application/json").await;
    assert_eq!(status, 200);
    let widgets = find(&list["resources"], "name", "widgets").unwrap();
    assert_eq!(widgets["kind"], "Widget");
    assert_eq!(widgets["shortNames"], json!(["wd"]));
    assert_eq!(widgets["categories"], json!(["all"]));
    assert!(find(&list["resources"], "name", "widgets/status").is_some());
    assert!(find(&list["resources"], "name", "widgets/scale").is_some());

    // Aggregated discovery has it; the built-in groups are as they were.
    let (_, _, after) = http_get(&c.api, "/apis", AGGREGATED).await;
    let items = after["items"].as_array().unwrap();
    let custom = items
        .iter()
        .find(|g| g["metadata"]["name"] == "example.com")
        .unwrap();
    assert_eq!(
        custom["versions"][0]["resources"][0]["singularResource"],
        "widget"
    );
    let without: Vec<&Value> = items
        .iter()
        .filter(|g| g["metadata"]["name"] != "example.com")
        .collect();
    let before: Vec<&Value> = builtin_before["items"].as_array().unwrap().iter().collect();
    assert_eq!(without, before);

    // A deprecated version warns on every request.
    let (status, warnings, _) = http_get(
        &c.api,
        "/apis/example.com/v1beta1/namespaces/default/widgets",
        "application/json",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        warnings,
        ["299 - \"example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget\""]
    );
    let (status, _, _) = http_get(&c.api, "/apis/example.com/v1alpha1/widgets", "application/json").await;
    assert_eq!(status, 404, "a version that is not served");
}

#[tokio::test]
async fn custom_resources_have_the_verbs_of_built_in_ones() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    let ns = Some("default");
    let created = api.create(&info, ns, widget("a"), &opts()).await.unwrap().object;
    assert_eq!(created["metadata"]["generation"], 1);
    let mut labelled = widget("b");
    labelled["metadata"]["labels"] = json!({"app": "web"});
    api.create(&info, ns, labelled, &opts()).await.unwrap();

    // dry run stores nothing
    let dry = WriteOptions {
        dry_run: true,
        ..opts()
    };
    api.create(&info, ns, widget("c"), &dry).await.unwrap();
    assert_eq!(api.get(&info, ns, "c").unwrap_err().reason, Reason::NotFound);

    // selectors
    let by_label = ListOptions {
        label_selector: Some("app=web".into()),
        ..Default::default()
    };
    assert_eq!(api.list(&info, ns, &by_label).unwrap().items.len(), 1);
    let by_name = ListOptions {
        field_selector: Some("metadata.name=a".into()),
        ..Default::default()
    };
    assert_eq!(
        api.list(&info, None, &by_name).unwrap().items[0]["metadata"]["name"],
        "a"
    );

    // merge, JSON and apply patches; strategic merge is 415
    let merged = api
        .patch(
            &info,
            ns,
            "a",
            PatchType::Merge,
            &json!({"spec": {"color": "red"}}),
            None,
            &opts(),
        )
        .await
        .unwrap()
        .object;
    assert_eq!(
        (
            merged["spec"]["color"].as_str(),
            merged["metadata"]["generation"].as_i64()
        ),
        (Some("red"), Some(2))
    );
    let ops = json!([{"op": "replace", "path": "/spec/size", "value": 5}]);
    let patched = api
        .patch(&info, ns, "a", PatchType::Json, &ops, None, &opts())
        .await
        .unwrap();
    assert_eq!(patched.object["spec"]["size"], 5);
    let applied = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "d", "namespace": "default"}, "spec": {"tags": ["x"]}});
    let apply = api
        .patch(&info, ns, "d", PatchType::Apply, &applied, None, &by("kubectl"))
        .await
        .unwrap();
    assert!(apply.created);
    let smp = api
        .patch(
            &info,
            ns,
            "a",
            PatchType::Strategic,
            &json!({"spec": {}}),
            None,
            &opts(),
        )
        .await
        .unwrap_err();
    assert_eq!(smp.reason, Reason::UnsupportedMediaType);
    assert_eq!(
        smp.message,
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );

    // finalizers hold a delete; deletecollection takes the rest
    let mut held = api.get(&info, ns, "b").unwrap();
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    api.update(&info, ns, "b", held, None, &opts()).await.unwrap();
    api.delete(&info, ns, "b", &DeleteOptions::default())
        .await
        .unwrap();
    assert!(api.get(&info, ns, "b").unwrap()["metadata"]["deletionTimestamp"].is_string());
    api.delete_collection(&info, ns, &ListOptions::default(), &DeleteOptions::default())
        .await
        .unwrap();
    let left = api.list(&info, ns, &ListOptions::default()).unwrap().items;
    assert_eq!(left.len(), 1, "only the held one");
}

#[tokio::test]
async fn status_goes_through_its_subresource_and_generation_counts_the_rest() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    let ns = Some("default");
    let mut w = widget("a");
    w["status"] = json!({"phase": "Ready"});
    let created = api.create(&info, ns, w, &opts()).await.unwrap().object;
    assert!(
        created.get("status").is_none(),
        "status dropped on create: {created}"
    );

    let mut with_status = created.clone();
    with_status["status"] = json!({"phase": "Ready", "replicas": 2, "selector": "app=a"});
    let written = api
        .update(
            &info,
            ns,
            "a",
            with_status.clone(),
            Some(apiserver::registry::Subresource::Status),
            &opts(),
        )
        .await
        .unwrap()
        .object;
    assert_eq!(written["status"]["phase"], "Ready");
    assert_eq!(written["metadata"]["generation"], 1, "status is not counted");

    // The main resource keeps the stored status.
    let mut main = written.clone();
    main["status"] = json!({"phase": "Lost"});
    main["spec"]["replicas"] = json!(3);
    let updated = api
        .update(&info, ns, "a", main, None, &opts())
        .await
        .unwrap()
        .object;
    assert_eq!(updated["status"]["phase"], "Ready");
    assert_eq!(updated["metadata"]["generation"], 2);

    // Scale: read from and written to the declared paths.
    let scale = api.get_scale(&info, ns, "a").unwrap();
    assert_eq!(scale["spec"]["replicas"], 3);
    assert_eq!(scale["status"], json!({"replicas": 2, "selector": "app=a"}));
    let mut wanted = scale.clone();
    wanted["spec"]["replicas"] = json!(7);
    let scaled = api.update_scale(&info, ns, "a", &wanted, &opts()).await.unwrap();
    assert_eq!(scaled["spec"]["replicas"], 7);
    assert_eq!(api.get(&info, ns, "a").unwrap()["spec"]["replicas"], 7);
}

#[tokio::test]
async fn without_a_status_subresource_status_is_an_ordinary_field() {
    let c = Cluster::start().await;
    let mut crd = widget_crd();
    crd["spec"]["versions"] = json!([crd["spec"]["versions"][0].clone()]);
    crd["spec"]["versions"][0]["subresources"] = Value::Null;
    c.install(crd).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    assert!(!info.has(apiserver::registry::Subresource::Status));
    let mut w = widget("a");
    w["status"] = json!({"phase": "New"});
    let created = api
        .create(&info, Some("default"), w, &opts())
        .await
        .unwrap()
        .object;
    assert_eq!(created["status"]["phase"], "New");
    let mut changed = created.clone();
    changed["status"]["phase"] = json!("Old");
    let updated = api
        .update(&info, Some("default"), "a", changed, None, &opts())
        .await
        .unwrap()
        .object;
    assert_eq!(updated["status"]["phase"], "Old");
    assert_eq!(updated["metadata"]["generation"], 2);
}

#[tokio::test]
async fn two_versions_share_one_stored_object() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let (api, v1, beta) = (&c.api, c.widgets("v1"), c.widgets("v1beta1"));
    let mut w = widget("a");
    w["apiVersion"] = json!("example.com/v1beta1");
    let watch = WatchOptions {
        resource_version: Some(api.store().revision()),
        ..Default::default()
    };
    let mut events = api.watch(&beta, Some("default"), &watch).unwrap();
    let written = api.create(&beta, Some("default"), w, &opts()).await.unwrap();
    assert_eq!(written.object["apiVersion"], "example.com/v1beta1");
    assert_eq!(
        written.warnings,
        ["example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"]
    );
    let raw = api.store().get(&v1.key(Some("default"), "a")).unwrap().unwrap();
    let stored: Value = serde_json::from_slice(&raw.value).unwrap();
    assert_eq!(stored["apiVersion"], "example.com/v1");
    assert_eq!(
        api.get(&v1, Some("default"), "a").unwrap()["spec"]["color"],
        "blue"
    );
    api.patch(
        &v1,
        Some("default"),
        "a",
        PatchType::Merge,
        &json!({"spec": {"color": "red"}}),
        None,
        &opts(),
    )
    .await
    .unwrap();
    let Some(WatchEvent::Added(_)) = events.recv().await else {
        panic!("added")
    };
    let Some(WatchEvent::Modified(seen)) = events.recv().await else {
        panic!("modified")
    };
    assert_eq!(
        (seen["apiVersion"].as_str(), seen["spec"]["color"].as_str()),
        (Some("example.com/v1beta1"), Some("red"))
    );
}

#[tokio::test]
async fn a_name_another_crd_holds_is_not_accepted_and_not_served() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let mut second = widget_crd();
    second["metadata"]["name"] = json!("widget.example.com");
    second["spec"]["names"] = json!({"plural": "widget", "singular": "gadget", "kind": "Gadget"});
    c.api.create(&c.crds(), None, second, &opts()).await.unwrap();
    let crd = c
        .until(|api, crds| {
            let crd = api.get(crds, None, "widget.example.com").ok()?;
            condition(&crd, "NamesAccepted")
                .filter(|s| s == "False")
                .map(|_| crd)
        })
        .await;
    let accepted = find(&crd["status"]["conditions"], "type", "NamesAccepted").unwrap();
    assert_eq!(accepted["reason"], "PluralConflict");
    assert_eq!(accepted["message"], "\"widget\" is already in use");
    let established = find(&crd["status"]["conditions"], "type", "Established").unwrap();
    assert_eq!(
        (established["status"].as_str(), established["reason"].as_str()),
        (Some("False"), Some("NotAccepted"))
    );
    assert!(c.api.resource("example.com", "v1", "widget").is_err());
}

#[tokio::test]
async fn deleting_a_crd_deletes_its_resources_then_itself() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    api.create(&info, Some("default"), widget("free"), &opts())
        .await
        .unwrap();
    let mut held = widget("held");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    api.create(&info, Some("default"), held, &opts()).await.unwrap();
    api.delete(&c.crds(), None, "widgets.example.com", &DeleteOptions::default())
        .await
        .unwrap();

    // The CRD waits for the held instance; creates stop.
    let crd = c
        .until(|api, crds| {
            let crd = api.get(crds, None, "widgets.example.com").ok()?;
            let t = find(&crd["status"]["conditions"], "type", "Terminating")?.clone();
            let free_gone = api.get(&info, Some("default"), "free").is_err();
            (t["reason"] == "InstanceDeletionInProgress" && free_gone).then_some(crd)
        })
        .await;
    assert_eq!(
        crd["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let refused = api
        .create(&info, Some("default"), widget("late"), &opts())
        .await
        .unwrap_err();
    assert_eq!(refused.reason, Reason::MethodNotAllowed);
    let held = api.get(&info, Some("default"), "held").unwrap();
    assert!(held["metadata"]["deletionTimestamp"].is_string());

    // Its finalizer removed, the instance goes, then the CRD and its rows.
    let patch = json!({"metadata": {"finalizers": null}});
    api.patch(
        &info,
        Some("default"),
        "held",
        PatchType::Merge,
        &patch,
        None,
        &opts(),
    )
    .await
    .unwrap();
    c.until(|api, crds| api.get(crds, None, "widgets.example.com").is_err().then_some(()))
        .await;
    c.until(|api, _| {
        api.resource("example.com", "v1", "widgets")
            .is_err()
            .then_some(())
    })
    .await;
    let (status, _, _) = http_get(api, "/apis/example.com", "application/json").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_restarted_server_serves_its_crds_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let config = store::Config {
            path: Some(dir.path().to_path_buf()),
            durability: store::Durability::Buffered,
            ..Default::default()
        };
        Api::new(
            store::Store::open(config).unwrap(),
            Registry::new(),
            store::Clock::system(),
        )
    };
    {
        let api = open();
        api.bootstrap().await.unwrap();
        let c = Cluster::on(api);
        c.install(widget_crd()).await;
        c.api
            .create(&c.widgets("v1"), Some("default"), widget("a"), &opts())
            .await
            .unwrap();
        c.shutdown.cancel();
        c.api.store().close().await.unwrap();
    }
    let api = open();
    api.bootstrap().await.unwrap();
    let info = api
        .resource("example.com", "v1", "widgets")
        .expect("served after a restart");
    assert_eq!(
        api.get(&info, Some("default"), "a").unwrap()["spec"]["color"],
        "blue"
    );
}

#[tokio::test]
async fn unknown_fields_are_pruned_as_field_validation_says() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    let with_unknown = |name: &str| {
        let mut w = widget(name);
        w["spec"]["bogus"] = json!(1);
        w
    };
    let strict = WriteOptions {
        field_validation: FieldValidation::Strict,
        ..opts()
    };
    let e = api
        .create(&info, Some("default"), with_unknown("s"), &strict)
        .await
        .unwrap_err();
    assert_eq!(
        (e.reason, e.message.as_str()),
        (
            Reason::BadRequest,
            "strict decoding error: unknown field \"spec.bogus\""
        )
    );
    let warn = api
        .create(&info, Some("default"), with_unknown("w"), &opts())
        .await
        .unwrap();
    assert_eq!(warn.warnings, ["unknown field \"spec.bogus\""]);
    assert!(warn.object["spec"].get("bogus").is_none());
    let ignore = WriteOptions {
        field_validation: FieldValidation::Ignore,
        ..opts()
    };
    let quiet = api
        .create(&info, Some("default"), with_unknown("i"), &ignore)
        .await
        .unwrap();
    assert!(quiet.warnings.is_empty() && quiet.object["spec"].get("bogus").is_none());
}

#[tokio::test]
async fn the_schema_defaults_and_validates() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    let mut w = widget("a");
    w["spec"] = json!({"color": "green"});
    let created = api
        .create(&info, Some("default"), w, &opts())
        .await
        .unwrap()
        .object;
    assert_eq!(created["spec"]["size"], 1, "defaulted: {created}");
    let mut bad = widget("b");
    bad["spec"]["size"] = json!(0);
    let e = api
        .create(&info, Some("default"), bad, &opts())
        .await
        .unwrap_err();
    assert_eq!(e.reason, Reason::Invalid);
    assert!(
        e.message
            .starts_with("Widget.example.com \"b\" is invalid: spec.size: Invalid value: 0"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn crds_take_server_side_apply_and_strategic_merge_patches() {
    let c = Cluster::start().await;
    let crds = c.crds();
    let apply = |crd: &Value| {
        let (api, crds, crd) = (c.api.clone(), crds.clone(), crd.clone());
        async move {
            let name = crd["metadata"]["name"].as_str().unwrap().to_string();
            api.patch(&crds, None, &name, PatchType::Apply, &crd, None, &by("kubectl"))
                .await
        }
    };
    let first = apply(&widget_crd()).await.unwrap();
    assert!(first.created);
    let mut more = widget_crd();
    more["spec"]["names"]["shortNames"] = json!(["wd", "wdg"]);
    let second = apply(&more).await.unwrap().object;
    assert_eq!(second["spec"]["names"]["shortNames"], json!(["wd", "wdg"]));
    assert_eq!(second["metadata"]["generation"], 2);
    let smp = json!({"metadata": {"labels": {"team": "a"}}, "spec": {"versions": [more["spec"]["versions"][0].clone()]}});
    let patched = c
        .api
        .patch(
            &crds,
            None,
            "widgets.example.com",
            PatchType::Strategic,
            &smp,
            None,
            &opts(),
        )
        .await
        .unwrap()
        .object;
    assert_eq!(patched["metadata"]["labels"]["team"], "a");
    assert_eq!(
        patched["spec"]["versions"].as_array().unwrap().len(),
        1,
        "versions is atomic"
    );
    let established = c
        .until(|api, crds| {
            let crd = api.get(crds, None, "widgets.example.com").ok()?;
            (crd["status"]["acceptedNames"]["shortNames"] == json!(["wd", "wdg"])).then_some(crd)
        })
        .await;
    assert_eq!(condition(&established, "Established").as_deref(), Some("True"));
    assert!(
        c.api.resource("example.com", "v1beta1", "widgets").is_err(),
        "v1beta1 is gone"
    );
}

#[tokio::test]
async fn a_deleted_namespace_takes_its_custom_resources() {
    let c = Cluster::start().await;
    c.install(widget_crd()).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    let namespaces = api.resource("", "v1", "namespaces").unwrap();
    let team = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}});
    api.create(&namespaces, None, team, &opts()).await.unwrap();
    let mut w = widget("a");
    w["metadata"]["namespace"] = json!("team");
    api.create(&info, Some("team"), w, &opts()).await.unwrap();
    api.delete(&namespaces, None, "team", &DeleteOptions::default())
        .await
        .unwrap();
    c.until(|api, _| {
        let gone = api.get(&namespaces, None, "team").is_err() && api.get(&info, Some("team"), "a").is_err();
        gone.then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_crd_is_decoded_and_validated_as_upstream() {
    let c = Cluster::start().await;
    let mut wrong_type = widget_crd();
    wrong_type["spec"]["versions"] = json!("v1");
    let e = c
        .api
        .create(&c.crds(), None, wrong_type, &opts())
        .await
        .unwrap_err();
    assert_eq!(e.reason, Reason::BadRequest);
    assert!(
        e.message.starts_with(
            "CustomResourceDefinition in version \"v1\" cannot be handled as a CustomResourceDefinition:"
        ),
        "{}",
        e.message
    );
    let mut misnamed = widget_crd();
    misnamed["metadata"]["name"] = json!("gadgets.example.com");
    let e = c
        .api
        .create(&c.crds(), None, misnamed, &opts())
        .await
        .unwrap_err();
    assert_eq!(
        e.message,
        "CustomResourceDefinition.apiextensions.k8s.io \"gadgets.example.com\" is invalid: metadata.name: Invalid value: \"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group"
    );
}

#[tokio::test]
async fn selectable_fields_select() {
    let c = Cluster::start().await;
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.color"}]);
    c.install(crd).await;
    let (api, info) = (&c.api, c.widgets("v1"));
    api.create(&info, Some("default"), widget("blue"), &opts())
        .await
        .unwrap();
    let mut red = widget("red");
    red["spec"]["color"] = json!("red");
    api.create(&info, Some("default"), red, &opts()).await.unwrap();
    let by_color = ListOptions {
        field_selector: Some("spec.color=red".into()),
        ..Default::default()
    };
    let items = api.list(&info, None, &by_color).unwrap().items;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"]["name"], "red");
    let unknown = ListOptions {
        field_selector: Some("spec.size=2".into()),
        ..Default::default()
    };
    assert_eq!(
        api.list(&info, None, &unknown).unwrap_err().reason,
        Reason::BadRequest
    );
}
