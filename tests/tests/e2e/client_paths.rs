//! What clients other than kubectl request: the deprecated `/watch/` paths
//! (Ruby's kubeclient watches only this way), discovery with a trailing
//! slash (the Python client), a `Status` 404 for every unknown path,
//! metadata-only responses (client-go's metadata client, controller-runtime,
//! kube-rs's `get_metadata` / `metadata_watcher`), and watch timeouts that
//! last the real seconds asked for at any `--time-scale`.

use e2e::{Cluster, Config, HttpResponse, http};
use serde_json::{Value, json};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const JSON: (&str, &str) = ("Content-Type", "application/json");
const META: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const META_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// The `{"type", "object"}` events of a finished watch response.
fn events(r: &HttpResponse) -> Vec<Value> {
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    serde_json::Deserializer::from_slice(&r.body)
        .into_iter::<Value>()
        .map(|e| e.expect("each event is JSON"))
        .collect()
}

/// `TYPE name` of each event.
fn summary(evs: &[Value]) -> Vec<String> {
    evs.iter()
        .map(|e| {
            let name = e["object"]["metadata"]["name"].as_str().unwrap_or("-");
            format!("{} {name}", e["type"].as_str().unwrap())
        })
        .collect()
}

async fn create(c: &Cluster, path: &str, body: Value) -> Value {
    let r = http(c.server(), "POST", path, &[JSON], body.to_string().as_bytes()).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

async fn configmap(c: &Cluster, ns: &str, name: &str) -> Value {
    let body = json!({"metadata": {"name": name, "labels": {"test": "paths"}}, "data": {"k": "v"}});
    create(c, &format!("/api/v1/namespaces/{ns}/configmaps"), body).await
}

async fn merge_patch(c: &Cluster, path: &str, body: Value) {
    let r = http(
        c.server(),
        "PATCH",
        path,
        &[("Content-Type", "application/merge-patch+json")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}

/// Real time for the watches started beside it to be open.
async fn after_watches_open() {
    #[allow(clippy::disallowed_methods)] // a real-time pause in a test, not simulated time
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
}

fn rv(obj: &Value) -> String {
    obj["metadata"]["resourceVersion"].as_str().unwrap().to_string()
}

/// A 404 exactly as upstream's go-restful renders it.
fn assert_not_found_status(r: &HttpResponse, path: &str) {
    assert_eq!(r.status, 404, "{path}");
    assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "the server could not find the requested resource",
               "reason": "NotFound", "details": {}, "code": 404}),
        "{path}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deprecated_watch_paths_watch_a_list_or_one_object() {
    let mut c = Cluster::start().await;
    let a = configmap(&c, "default", "a").await;
    configmap(&c, "default", "b").await;
    configmap(&c, "kube-system", "c").await;
    let lease = json!({"metadata": {"name": "l1"}, "spec": {"holderIdentity": "x"}});
    create(
        &c,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        lease.clone(),
    )
    .await;
    create(
        &c,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        json!({"metadata": {"name": "l2"}}),
    )
    .await;
    let s = c.server();
    let get = |path: String| async move { http(s, "GET", &path, &[], b"").await };
    let sel = "labelSelector=test%3Dpaths&timeoutSeconds=1";
    let (ns_list, all_list, one, one_from_rv, cluster_one, group_one, ()) = tokio::join!(
        get(format!("/api/v1/watch/namespaces/default/configmaps?{sel}")),
        get(format!("/api/v1/watch/configmaps?{sel}")),
        get(format!("/api/v1/watch/namespaces/default/configmaps/a?{sel}")),
        get(format!(
            "/api/v1/watch/namespaces/default/configmaps/a?resourceVersion={}&timeoutSeconds=2",
            rv(&a)
        )),
        get("/api/v1/watch/namespaces/default?timeoutSeconds=1".to_string()),
        get("/apis/coordination.k8s.io/v1/watch/namespaces/default/leases/l1?timeoutSeconds=1".to_string()),
        async {
            // Changes while the watches above are open: only `a`'s reach `one_from_rv`.
            after_watches_open().await;
            merge_patch(&c, &format!("{CMS}/b"), json!({"data": {"k": "b2"}})).await;
            merge_patch(&c, &format!("{CMS}/a"), json!({"data": {"k": "a2"}})).await;
        },
    );
    assert_eq!(
        summary(&events(&ns_list))[..2],
        ["ADDED a", "ADDED b"],
        "a watch of the namespace's list: {:?}",
        summary(&events(&ns_list))
    );
    let across = summary(&events(&all_list));
    assert!(across.contains(&"ADDED c".to_string()), "{across:?}");
    assert_eq!(summary(&events(&one)), ["ADDED a", "MODIFIED a"]);
    let changes = events(&one_from_rv);
    assert_eq!(summary(&changes), ["MODIFIED a"]);
    assert_eq!(changes[0]["object"]["data"]["k"], "a2");
    assert_eq!(summary(&events(&cluster_one)), ["ADDED default"]);
    let leases = events(&group_one);
    assert_eq!(summary(&leases), ["ADDED l1"]);
    assert_eq!(leases[0]["object"]["kind"], "Lease");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deprecated_watch_paths_take_every_watch_parameter() {
    let mut c = Cluster::start().await;
    configmap(&c, "default", "a").await;
    let s = c.server();
    let path = "/api/v1/watch/namespaces/default/configmaps";
    // A field selector naming the same object is kept; another name is 400.
    let r = http(
        s,
        "GET",
        &format!("{path}/a?fieldSelector=metadata.name%3Da&timeoutSeconds=1"),
        &[],
        b"",
    )
    .await;
    assert_eq!(summary(&events(&r)), ["ADDED a"]);
    let r = http(
        s,
        "GET",
        &format!("{path}/a?fieldSelector=metadata.name%3Db"),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["message"],
        "fieldSelector metadata.name doesn't match requested name"
    );
    let r = http(
        s,
        "GET",
        &format!("{path}?fieldSelector=metadata.name%3Da&timeoutSeconds=1"),
        &[],
        b"",
    )
    .await;
    assert_eq!(summary(&events(&r)), ["ADDED a"]);
    // Bookmarks: upstream sends one two seconds before the deadline.
    let r = http(
        s,
        "GET",
        &format!(
            "{path}?allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion={}",
            {
                let list = http(s, "GET", CMS, &[], b"").await.json();
                list["metadata"]["resourceVersion"].as_str().unwrap().to_string()
            }
        ),
        &[],
        b"",
    )
    .await;
    let evs = events(&r);
    assert_eq!(summary(&evs), ["BOOKMARK -"]);
    assert_eq!(evs[0]["object"]["kind"], "ConfigMap");
    // Only GET, no subresources, no name across namespaces.
    let r = http(s, "POST", path, &[JSON], b"{}").await;
    assert_eq!(
        (r.status, r.json()["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
    for bad in [
        "/api/v1/watch/namespaces/default/pods/p/status",
        "/api/v1/watch/configmaps/a",
        "/api/v1/watch/widgets",
        "/apis/apps/v1/watch/namespaces/default/deployments/web/scale",
    ] {
        assert_not_found_status(&http(s, "GET", bad, &[], b"").await, bad);
    }
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_with_or_without_a_trailing_slash() {
    let mut c = Cluster::start().await;
    let s = c.server();
    for path in [
        "/version",
        "/api",
        "/apis",
        "/apis/apps",
        "/api/v1",
        "/apis/apps/v1",
    ] {
        let plain = http(s, "GET", path, &[], b"").await;
        let slash = http(s, "GET", &format!("{path}/"), &[], b"").await;
        assert_eq!((plain.status, slash.status), (200, 200), "{path}/");
        assert_eq!(plain.json(), slash.json(), "{path}/");
    }
    assert_eq!(
        http(s, "GET", "/apis/", &[], b"").await.json()["kind"],
        "APIGroupList"
    );
    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let r = http(s, "GET", "/api/", &[("Accept", aggregated)], b"").await;
    assert_eq!(r.json()["kind"], "APIGroupDiscoveryList");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_paths_and_groups_are_a_404_status() {
    let mut c = Cluster::start().await;
    let s = c.server();
    for path in [
        "/nothing/here",
        "/apis/nope.example.com",
        "/apis/nope.example.com/",
        "/apis/nope.example.com/v1",
        "/apis/apps/v9",
        "/api/v2",
        "/api/v1/widgets",
        "/apis/apps/v1/namespaces/default/widgets",
        "/openapi/v3/apis/nope.example.com/v1",
    ] {
        assert_not_found_status(&http(s, "GET", path, &[], b"").await, path);
    }
    // Other methods than GET on discovery: a 405 Status.
    let r = http(s, "POST", "/apis/", &[JSON], b"{}").await;
    assert_eq!(
        (r.status, r.json()["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
    // A missing object keeps its own details.
    let r = http(s, "GET", &format!("{CMS}/missing"), &[], b"").await;
    assert_eq!(
        r.json()["details"],
        json!({"name": "missing", "group": "", "kind": "configmaps"})
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_only_gets_lists_and_writes() {
    let mut c = Cluster::start().await;
    let s = c.server();
    let body = json!({"metadata": {"name": "m1", "labels": {"test": "paths"}}, "data": {"secret": "x"}});
    let r = http(
        s,
        "POST",
        CMS,
        &[JSON, ("Accept", META)],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 201);
    assert_eq!(
        r.header("content-type"),
        Some("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
    );
    let created = r.json();
    assert_eq!(created["kind"], "PartialObjectMetadata");
    assert_eq!(created["apiVersion"], "meta.k8s.io/v1");
    assert!(created.get("data").is_none(), "{created}");
    configmap(&c, "default", "m2").await;

    // get: the whole metadata, nothing else; v1beta1 as well.
    let r = http(s, "GET", &format!("{CMS}/m1"), &[("Accept", META)], b"").await;
    let got = r.json();
    let full = http(s, "GET", &format!("{CMS}/m1"), &[], b"").await.json();
    assert_eq!(got["metadata"], full["metadata"]);
    assert!(got["metadata"]["managedFields"].is_array() && got["metadata"]["uid"].is_string());
    assert_eq!(got.as_object().unwrap().len(), 3, "{got}");
    let beta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1";
    let r = http(s, "GET", &format!("{CMS}/m1"), &[("Accept", beta)], b"").await;
    assert_eq!(r.json()["apiVersion"], "meta.k8s.io/v1beta1");

    // list: items' metadata, the list's resourceVersion and continue token.
    let accept = format!("{META_LIST},application/json");
    let r = http(
        s,
        "GET",
        &format!("{CMS}?labelSelector=test%3Dpaths&limit=1"),
        &[("Accept", accept.as_str())],
        b"",
    )
    .await;
    assert_eq!(
        r.header("content-type"),
        Some("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
    );
    let page = r.json();
    assert_eq!(page["kind"], "PartialObjectMetadataList");
    assert!(page["metadata"]["resourceVersion"].is_string());
    let token = page["metadata"]["continue"].as_str().expect("a continue token");
    assert_eq!(page["items"][0]["kind"], "PartialObjectMetadata");
    assert_eq!(page["items"][0]["metadata"]["name"], "m1");
    assert!(page["items"][0].get("data").is_none());
    let r = http(
        s,
        "GET",
        &format!("{CMS}?labelSelector=test%3Dpaths&limit=1&continue={token}"),
        &[("Accept", META_LIST)],
        b"",
    )
    .await;
    assert_eq!(r.json()["items"][0]["metadata"]["name"], "m2");

    // The single form on a list, the list form on an object: 406.
    let r = http(s, "GET", CMS, &[("Accept", META)], b"").await;
    assert_eq!(
        (r.status, r.json()["reason"].as_str()),
        (406, Some("NotAcceptable"))
    );
    let r = http(s, "GET", &format!("{CMS}/m1"), &[("Accept", META_LIST)], b"").await;
    assert_eq!(r.status, 406);
    let r = http(s, "GET", &format!("{CMS}/m1"), &[("Accept", "text/html")], b"").await;
    assert_eq!(r.status, 406);
    assert_eq!(
        r.json()["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    // A 406 is decided before the write: nothing is created.
    let body = json!({"metadata": {"name": "never"}});
    let r = http(
        s,
        "POST",
        CMS,
        &[JSON, ("Accept", "text/html")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 406);
    assert_eq!(
        http(s, "GET", &format!("{CMS}/never"), &[], b"").await.status,
        404
    );

    // patch, update, delete answer with metadata too; a Status stays a Status.
    let r = http(
        s,
        "PATCH",
        &format!("{CMS}/m1"),
        &[("Content-Type", "application/merge-patch+json"), ("Accept", META)],
        br#"{"metadata":{"labels":{"patched":"yes"}}}"#,
    )
    .await;
    let patched = r.json();
    assert_eq!(patched["kind"], "PartialObjectMetadata");
    assert_eq!(patched["metadata"]["labels"]["patched"], "yes");
    let mut replaced = full.clone();
    replaced["metadata"]["resourceVersion"] = patched["metadata"]["resourceVersion"].clone();
    replaced["data"] = json!({"secret": "y"});
    let r = http(
        s,
        "PUT",
        &format!("{CMS}/m1"),
        &[JSON, ("Accept", META)],
        replaced.to_string().as_bytes(),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["kind"].as_str()),
        (200, Some("PartialObjectMetadata"))
    );
    let r = http(s, "DELETE", &format!("{CMS}/m2"), &[("Accept", META)], b"").await;
    assert_eq!((r.status, r.json()["kind"].as_str()), (200, Some("Status")));

    // Tables keep working, by raw request and by kubectl.
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let r = http(s, "GET", CMS, &[("Accept", table)], b"").await;
    assert_eq!(r.json()["kind"], "Table");
    assert!(c.ok(&["get", "cm", "m1"]).await.contains("m1"));
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_only_watches_send_partial_object_metadata() {
    let mut c = Cluster::start().await;
    configmap(&c, "default", "w1").await;
    let s = c.server();
    let q = "labelSelector=test%3Dpaths&timeoutSeconds=1";
    let list_path = format!("{CMS}?watch=true&{q}");
    let object_path = format!("/api/v1/watch/namespaces/default/configmaps/w1?{q}");
    let (plain, deprecated, list_form, _) = tokio::join!(
        http(s, "GET", &list_path, &[("Accept", META)], b""),
        http(s, "GET", &object_path, &[("Accept", META)], b""),
        http(s, "GET", &list_path, &[("Accept", META_LIST)], b""),
        async {
            after_watches_open().await;
            merge_patch(&c, &format!("{CMS}/w1"), json!({"data": {"k": "2"}})).await;
        },
    );
    for r in [&plain, &deprecated] {
        assert_eq!(
            r.header("content-type"),
            Some("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
        );
        let evs = events(r);
        assert_eq!(summary(&evs), ["ADDED w1", "MODIFIED w1"]);
        for e in &evs {
            assert_eq!(e["object"]["kind"], "PartialObjectMetadata");
            assert_eq!(e["object"]["apiVersion"], "meta.k8s.io/v1");
            assert!(e["object"].get("data").is_none());
        }
    }
    // The list form names no form of one object: upstream sends the objects.
    assert_eq!(list_form.header("content-type"), Some("application/json"));
    assert_eq!(events(&list_form)[0]["object"]["kind"], "ConfigMap");
    c.stop().await;
}

/// `timeoutSeconds` is the client's real time: at `--time-scale 100` a 2 s
/// watch lasts 2 s, not 20 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_timeout_is_real_seconds_at_any_time_scale() {
    let mut c = Cluster::start_with(Config {
        clock: store::Clock::scaled(100.0),
        ..Config::ephemeral()
    })
    .await;
    let start = tokio::time::Instant::now();
    let r = http(
        c.server(),
        "GET",
        &format!("{CMS}?watch=true&timeoutSeconds=2"),
        &[],
        b"",
    )
    .await;
    let took = start.elapsed().as_secs_f64();
    assert_eq!(r.status, 200);
    assert!((1.5..4.0).contains(&took), "a 2 s watch took {took:.2} s");
    let start = tokio::time::Instant::now();
    let r = http(
        c.server(),
        "GET",
        "/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=2",
        &[],
        b"",
    )
    .await;
    let took = start.elapsed().as_secs_f64();
    assert_eq!(r.status, 200);
    assert!((1.5..4.0).contains(&took), "a 2 s watch took {took:.2} s");
    c.stop().await;
}
