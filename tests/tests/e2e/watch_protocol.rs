//! The watch protocol at the HTTP level, as client-go's reflector and
//! `kubectl get -w` rely on it: resourceVersion 0 and
//! unset, bookmarks only when asked, `timeoutSeconds`, selectors on events,
//! and 410 Expired inside the stream.

use e2e::{Cluster, Config, http};
use serde_json::Value;

/// The `{"type", "object"}` events of a finished watch response.
fn events(body: &[u8]) -> Vec<Value> {
    serde_json::Deserializer::from_slice(body)
        .into_iter::<Value>()
        .map(|e| e.expect("each event is JSON"))
        .collect()
}

fn types(evs: &[Value]) -> Vec<&str> {
    evs.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// Waits until the root CA publisher has put `kube-root-ca.crt` in
/// `default` (it does so within a second of the start), so that the
/// ConfigMaps a test counts include it every time.
async fn root_ca_published(c: &Cluster) {
    let path = format!("{CMS}/kube-root-ca.crt");
    let published = async { while http(c.server(), "GET", &path, &[], b"").await.status != 200 {} };
    tokio::time::timeout(std::time::Duration::from_secs(10), published)
        .await
        .expect("kube-root-ca.crt in default within 10 s");
}

async fn create(c: &Cluster, name: &str, labels: &str) -> u64 {
    let body = format!(r#"{{"metadata":{{"name":"{name}","labels":{labels}}}}}"#);
    let r = http(
        c.server(),
        "POST",
        CMS,
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_version_zero_starts_with_synthetic_added_events() {
    let mut c = Cluster::start_with(Config {
        clock: store::Clock::scaled(60.0),
        ..Config::ephemeral()
    })
    .await;
    root_ca_published(&c).await;
    create(&c, "a", "{}").await;
    create(&c, "b", "{}").await;
    // timeoutSeconds is real time, whatever the time scale.
    let r = http(
        c.server(),
        "GET",
        &format!("{CMS}?watch=true&resourceVersion=0&timeoutSeconds=1"),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    let evs = events(&r.body);
    // a, b and kube-root-ca.crt, in key order.
    assert_eq!(types(&evs), ["ADDED", "ADDED", "ADDED"]);
    assert_eq!(evs[0]["object"]["metadata"]["name"], "a");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarks_only_when_asked_and_selectors_turn_changes_into_added_or_deleted() {
    let mut c = Cluster::start_with(Config {
        clock: store::Clock::scaled(120.0),
        ..Config::ephemeral()
    })
    .await;
    let rv = create(&c, "x", r#"{"app":"web"}"#).await;
    let s = e2e::Target::from(c.server());
    let watch = |q: String| {
        let s = s.clone();
        async move {
            http(
                s,
                "GET",
                &format!("{CMS}?watch=true&resourceVersion={rv}&{q}"),
                &[],
                b"",
            )
            .await
        }
    };
    // Stop matching, match again, then a change of an object never matched.
    let patch = |labels: &'static str| {
        let s = s.clone();
        async move {
            let body = format!(r#"{{"metadata":{{"labels":{labels}}}}}"#);
            let r = http(
                &s,
                "PATCH",
                &format!("{CMS}/x"),
                &[("Content-Type", "application/merge-patch+json")],
                body.as_bytes(),
            )
            .await;
            assert_eq!(r.status, 200);
        }
    };
    let changes = async {
        patch(r#"{"app":"db"}"#).await;
        patch(r#"{"app":"web"}"#).await;
        create(&c, "other", r#"{"app":"db"}"#).await;
    };
    // Both watches start from `rv`, so they see the changes whenever they
    // connect. Real seconds: the bookmark comes two seconds before the deadline.
    let (with_bookmarks, selected, ()) = tokio::join!(
        watch("allowWatchBookmarks=true&timeoutSeconds=3".into()),
        watch("labelSelector=app%3Dweb&timeoutSeconds=3".into()),
        changes,
    );

    let all = events(&with_bookmarks.body);
    assert!(types(&all).contains(&"BOOKMARK"), "{all:?}");
    let bookmark = all.iter().find(|e| e["type"] == "BOOKMARK").unwrap();
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");
    assert!(
        bookmark["object"]["metadata"]["resourceVersion"]
            .as_str()
            .is_some()
    );
    let filtered = events(&selected.body);
    assert_eq!(types(&filtered), ["DELETED", "ADDED"], "{filtered:?}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_resource_version_ends_the_watch_with_410() {
    let mut c = Cluster::start_with(Config {
        history_max_events: 5,
        ..Config::ephemeral()
    })
    .await;
    root_ca_published(&c).await;
    let first = create(&c, "c0", "{}").await;
    for i in 1..20 {
        create(&c, &format!("c{i}"), "{}").await;
    }
    let r = http(
        c.server(),
        "GET",
        &format!("{CMS}?watch=true&resourceVersion={first}"),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    let evs = events(&r.body);
    assert_eq!(types(&evs), ["ERROR"]);
    assert_eq!(evs[0]["object"]["code"], 410);
    assert_eq!(evs[0]["object"]["reason"], "Expired");
    // kubectl get -w prints the Status and exits; an informer relists.
    let list = c.json(&["get", "cm"]).await;
    assert_eq!(
        list["items"].as_array().unwrap().len(),
        20 + 1,
        "and kube-root-ca.crt"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_page_with_limit_and_continue() {
    let mut c = Cluster::start().await;
    root_ca_published(&c).await;
    for i in 0..5 {
        create(&c, &format!("p{i}"), "{}").await;
    }
    let r = http(c.server(), "GET", &format!("{CMS}?limit=2"), &[], b"").await;
    let page = r.json();
    assert_eq!(page["kind"], "ConfigMapList");
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    // p0..p4 and kube-root-ca.crt.
    assert_eq!(page["metadata"]["remainingItemCount"], 4);
    let token = page["metadata"]["continue"].as_str().unwrap().to_string();
    let r = http(
        c.server(),
        "GET",
        &format!("{CMS}?limit=10&continue={token}"),
        &[],
        b"",
    )
    .await;
    let rest = r.json();
    assert_eq!(rest["items"].as_array().unwrap().len(), 4);
    assert!(rest["metadata"].get("continue").is_none());
    // kubectl pages the same way.
    let names = c.ok(&["get", "cm", "--chunk-size=2", "-o", "name"]).await;
    assert_eq!(names.lines().count(), 6, "{names}");
    let sorted = c
        .ok(&["get", "cm", "--sort-by=.metadata.name", "-o", "name"])
        .await;
    assert_eq!(
        sorted.lines().nth(1),
        Some("configmap/p0"),
        "after configmap/kube-root-ca.crt"
    );
    c.stop().await;
}
