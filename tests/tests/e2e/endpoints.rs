//! The fixed endpoints: /version, health, /metrics, discovery content types
//! and OpenAPI caching, as kubectl 1.27–1.33 request and cache them.

use e2e::{Cluster, http};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_health_and_discovery() {
    let mut c = Cluster::start().await;
    let s = c.server();
    let v = http(s, "GET", "/version?timeout=32s", &[], b"").await.json();
    assert_eq!(
        (v["major"].as_str(), v["minor"].as_str()),
        (Some("1"), Some("33"))
    );
    for path in ["/healthz", "/livez", "/readyz"] {
        let r = http(s, "GET", path, &[], b"").await;
        assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]), "{path}");
    }
    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let r = http(s, "GET", "/apis", &[("Accept", aggregated)], b"").await;
    assert_eq!(
        r.header("content-type"),
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );
    let r = http(s, "GET", "/apis", &[("Accept", "application/json")], b"").await;
    assert_eq!(r.json()["kind"], "APIGroupList");
    let r = http(s, "GET", "/apis/apps/v1", &[], b"").await;
    assert_eq!(r.json()["kind"], "APIResourceList");
    let r = http(s, "GET", "/nothing/here", &[], b"").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let status = r.json();
    assert_eq!(
        (status["kind"].as_str(), status["reason"].as_str()),
        (Some("Status"), Some("NotFound"))
    );
    assert_eq!(
        status["message"],
        "the server could not find the requested resource"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_documents_are_cached_by_etag() {
    let mut c = Cluster::start().await;
    let s = c.server();
    let index = http(s, "GET", "/openapi/v3", &[], b"").await.json();
    let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = http(s, "GET", &url, &[], b"").await;
    assert_eq!(doc.status, 200);
    let etag = doc.header("etag").unwrap().to_string();
    let again = http(s, "GET", &url, &[("If-None-Match", &etag)], b"").await;
    assert_eq!(again.status, 304);
    let v2 = http(s, "GET", "/openapi/v2", &[], b"").await;
    assert_eq!(
        v2.header("content-type"),
        Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_and_show_the_store() {
    let mut c = Cluster::start().await;
    c.ok(&["create", "configmap", "m1"]).await;
    c.fails(&["get", "configmap", "nope"]).await;
    let text = String::from_utf8(http(c.server(), "GET", "/metrics", &[], b"").await.body).unwrap();
    let line = |prefix: &str| text.lines().find(|l| l.starts_with(prefix)).map(str::to_string);
    let created = line("apiserver_request_total{verb=\"create\",resource=\"configmaps\",code=\"201\"}");
    assert!(created.is_some_and(|l| l.ends_with(" 1")), "{text}");
    assert!(
        line("apiserver_request_total{verb=\"get\",resource=\"configmaps\",code=\"404\"}").is_some(),
        "{text}"
    );
    assert!(
        line("apiserver_request_duration_seconds_bucket{").is_some(),
        "{text}"
    );
    let revision: u64 = line("miniplane_store_revision ")
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(revision, c.server().api().store().revision());
    assert!(line("apiserver_longrunning_requests ").is_some(), "{text}");
    c.stop().await;
}
