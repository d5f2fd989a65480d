//! The traffic loop against a real `apiserver::Api` with the Gateway API
//! CRDs installed, on paused tokio time: objects written through the API
//! reach the loop through its informers, counts reach the store every
//! scrape, PromQL reads them back; a rate change and a deleted endpoint pod
//! are followed, and the deleted pod's series are forgotten.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::Api;
use apiserver::api::WriteOptions;
use apiserver::testkit::{Tasks, TestApi};
use controllers::gateway::types::{Gateway, HTTPRoute};
use controllers::runtime::{Client, InProcessClient, Informer, PatchType, Typed};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kubelet_sim::traffic::run::Traffic;
use serde_json::{Value, json};
use sim_metrics::{Tsdb, promql};
use store::Clock;

const NS: &str = "default";
const CRDS: [&str; 2] = [
    include_str!("../../crds/gateway.networking.k8s.io_gateways.yaml"),
    include_str!("../../crds/gateway.networking.k8s.io_httproutes.yaml"),
];

fn object<K: serde::de::DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).expect("fixture")
}

/// Creates the CRDs and waits until each is Established.
async fn install_crds(api: &Api, clock: &Clock) {
    let resource = api
        .resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .expect("CRDs are served");
    for yaml in CRDS {
        let body: Value = serde_saphyr::from_str(yaml).expect("CRD YAML");
        let name = body["metadata"]["name"].as_str().expect("name").to_string();
        api.create(&resource, None, body, &WriteOptions::default())
            .await
            .expect("CRD created");
        for _ in 0..100 {
            let established = api.get(&resource, None, &name).ok().is_some_and(|crd| {
                crd.pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .is_some_and(|c| {
                        c.iter()
                            .any(|c| c["type"] == "Established" && c["status"] == "True")
                    })
            });
            if established {
                break;
            }
            clock.sleep(Duration::from_millis(100)).await;
        }
    }
}

fn slice(pods: &[&str]) -> EndpointSlice {
    let endpoints: Vec<Value> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({"addresses": [format!("10.1.0.{i}")], "conditions": {"ready": true},
                   "targetRef": {"kind": "Pod", "namespace": NS, "name": p}})
        })
        .collect();
    object(json!({
        "metadata": {"name": "web-x1", "namespace": NS, "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": endpoints,
    }))
}

/// One number from an instant query.
fn scalar(tsdb: &Tsdb, expr: &str, at: SystemTime) -> f64 {
    match promql::query(tsdb, expr, at) {
        Ok(promql::Value::Vector(v)) if v.len() == 1 => v[0].value,
        Ok(promql::Value::Scalar(x)) => x,
        other => panic!("{expr}: {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn the_loop_follows_the_objects() {
    let clock = Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000), 1.0);
    let api = TestApi::builder().clock(clock.clone()).build().await;
    let mut tasks = Tasks::new();
    tasks.push(tokio::spawn(api.clone().keep_custom_resources(tasks.shutdown())));
    install_crds(&api, &clock).await;
    let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));

    // A Gateway, a route at 20/s to Service web, two Running pods behind it.
    Typed::<Gateway>::new(client.clone())
        .create(
            Some(NS),
            &object(json!({"metadata": {"name": "gw"},
                           "spec": {"gatewayClassName": "miniplane",
                                    "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}})),
        )
        .await
        .expect("gateway");
    let routes = Typed::<HTTPRoute>::new(client.clone());
    routes
        .create(
            Some(NS),
            &object(json!({"metadata": {"name": "web", "annotations": {"sim.miniplane.dev/requests-per-second": "20"}},
                           "spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}})),
        )
        .await
        .expect("route");
    Typed::<Service>::new(client.clone())
        .create(
            Some(NS),
            &object(json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})),
        )
        .await
        .expect("service");
    let pods = Typed::<Pod>::new(client.clone());
    for (name, error_rate) in [("web-a", "0"), ("web-b", "0.5")] {
        let created = pods
            .create(
                Some(NS),
                &object(json!({"metadata": {"name": name, "annotations": {"sim.miniplane.dev/error-rate": error_rate}},
                               "spec": {"containers": [{"name": "app", "image": "nginx"}]}})),
            )
            .await
            .expect("pod");
        let mut running = created;
        running.status = Some(object(json!({"phase": "Running"})));
        pods.update_status(&running).await.expect("pod status");
    }
    let slices = Typed::<EndpointSlice>::new(client.clone());
    slices
        .create(Some(NS), &slice(&["web-a", "web-b"]))
        .await
        .expect("slice");

    // The loop, on its own informers.
    let tsdb = Tsdb::new();
    let (ri, gi, si) = (
        Informer::<HTTPRoute>::new(client.clone(), clock.clone(), None),
        Informer::<Gateway>::new(client.clone(), clock.clone(), None),
        Informer::<Service>::new(client.clone(), clock.clone(), None),
    );
    let (ei, pi) = (
        Informer::<EndpointSlice>::new(client.clone(), clock.clone(), None),
        Informer::<Pod>::new(client.clone(), clock.clone(), None),
    );
    let traffic = Traffic::new(clock.clone(), 7, tsdb.clone(), &ri, &gi, &si, &ei, &pi);
    tasks.spawn(|stop| traffic.run(stop));
    for handle in [
        ri.run(tasks.shutdown()),
        gi.run(tasks.shutdown()),
        si.run(tasks.shutdown()),
        ei.run(tasks.shutdown()),
        pi.run(tasks.shutdown()),
    ] {
        tasks.push(handle);
    }

    clock.sleep(Duration::from_secs(120)).await;
    let now = clock.now();
    let rate = scalar(
        &tsdb,
        r#"sum(rate(http_requests_total{route="default/web"}[1m]))"#,
        now,
    );
    assert!((rate - 20.0).abs() < 0.5, "rate {rate}");
    // web-b answers half of its half with 500.
    let errors = scalar(
        &tsdb,
        r#"sum(rate(http_requests_total{code="500"}[1m])) / sum(rate(http_requests_total[1m]))"#,
        now,
    );
    assert!((errors - 0.25).abs() < 0.05, "error share {errors}");
    let cores = scalar(
        &tsdb,
        r#"sum(rate(container_cpu_usage_seconds_total{pod="web-a"}[1m]))"#,
        now,
    );
    // 10 requests/s × 10 ms, give or take the endpoint draw.
    assert!((cores - 0.1).abs() < 0.02, "web-a cores {cores}");

    // Twice the rate; web-b leaves the endpoints and is deleted.
    routes
        .patch(
            Some(NS),
            "web",
            PatchType::Merge,
            json!({"metadata": {"annotations": {"sim.miniplane.dev/requests-per-second": "40"}}}),
        )
        .await
        .expect("patch route");
    let mut current = slices.get(Some(NS), "web-x1").await.expect("slice");
    current.endpoints = slice(&["web-a"]).endpoints;
    slices.update(&current).await.expect("slice update");
    pods.delete(Some(NS), "web-b").await.expect("delete pod");

    clock.sleep(Duration::from_secs(90)).await;
    let now = clock.now();
    let rate = scalar(&tsdb, r#"sum(rate(http_requests_total{pod="web-a"}[1m]))"#, now);
    assert!((rate - 40.0).abs() < 1.0, "web-a rate {rate}");
    let text = tsdb.exposition();
    assert!(!text.contains("web-b"), "web-b forgotten:\n{text}");
    assert!(text.contains("# TYPE http_requests_total counter"), "{text}");

    tasks
        .stop(Duration::from_secs(10))
        .await
        .expect("every task stops");
}
