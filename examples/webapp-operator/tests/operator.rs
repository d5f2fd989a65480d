//! The operator end to end, against a whole miniplane in this test's
//! process: the CRD installed from `crd.yaml`, the built-in controllers
//! (Deployment, ReplicaSet, garbage collector), the scheduler and the
//! simulated kubelet that makes pods Ready.
//!
//! Time is paused (`start_paused`): the cluster's clock follows tokio time,
//! which jumps ahead whenever every task is waiting, so the kubelet's
//! simulated image pulls take no real time. Every wait is on a watch
//! (`await_condition`) bounded by a simulated deadline; none sleeps.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{Condition, await_condition, conditions};
use kube::{Api, Resource, ResourceExt};
use miniplane::Cluster;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use webapp_operator::{FINALIZER, Now, REGISTRY, WebApp, WebAppSpec};

/// How long (simulated) any one step may take.
const DEADLINE: Duration = Duration::from_secs(60);

/// Waits until `done` holds for object `name`; on timeout, fails with what
/// the object last looked like.
async fn until<K>(api: &Api<K>, name: &str, what: &str, done: impl Condition<K>) -> Option<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + serde::Serialize + Send + 'static,
{
    match tokio::time::timeout(DEADLINE, await_condition(api.clone(), name, done)).await {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => panic!("{what}: the watch failed: {e}"),
        Err(_) => {
            let last = api.get_opt(name).await;
            let last = last.map(|o| o.map(|o| serde_json::to_string_pretty(&o).unwrap_or_default()));
            panic!("{what}: not within {DEADLINE:?}; {name} is now {last:#?}")
        }
    }
}

/// Whether the WebApp's status says `replicas` ready, Ready=True, and
/// describes its current generation.
fn ready_with(replicas: i32) -> impl Fn(Option<&WebApp>) -> bool {
    move |app| {
        let Some(app) = app else { return false };
        let Some(status) = &app.status else { return false };
        let ready = status
            .conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        status.ready_replicas == replicas && ready && status.observed_generation == app.metadata.generation
    }
}

/// The cluster's clock as the operator's `now`.
fn cluster_now(cluster: &Cluster) -> Now {
    let clock = cluster.clock().clone();
    Arc::new(move || Timestamp::try_from(clock.now()).expect("the cluster's clock is after 1970"))
}

#[tokio::test(start_paused = true)]
async fn a_webapp_is_rolled_out_scaled_and_cleaned_up() {
    // The operator's failed reconciles show in the test's output
    // (`RUST_LOG=webapp_operator=debug` for every pass).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .try_init();
    let cluster = Cluster::builder()
        .crds(concat!(env!("CARGO_MANIFEST_DIR"), "/crd.yaml"))
        .start()
        .await;
    let client = cluster.client();
    let stop = CancellationToken::new();
    let operator = tokio::spawn(webapp_operator::run(
        client.clone(),
        cluster_now(&cluster),
        stop.clone().cancelled_owned(),
    ));

    let apps: Api<WebApp> = Api::default_namespaced(client.clone());
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let config_maps: Api<ConfigMap> = Api::default_namespaced(client.clone());

    // Create: the operator adds its finalizer and makes the child Deployment.
    let spec = WebAppSpec {
        image: "nginx:1.27".into(),
        replicas: 3,
        port: Some(8080),
    };
    let app = apps
        .create(&PostParams::default(), &WebApp::new("shop", spec))
        .await
        .unwrap();
    let uid = app.uid().unwrap();
    let deployment = until(
        &deployments,
        "shop",
        "the child Deployment",
        |d: Option<&Deployment>| d.is_some(),
    )
    .await
    .unwrap();
    let owner = &deployment.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
        ("WebApp", "shop", uid.as_str())
    );
    assert_eq!(owner.controller, Some(true));
    let template = deployment.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    assert_eq!(template.containers[0].image.as_deref(), Some("nginx:1.27"));
    let managers: Vec<_> = deployment
        .managed_fields()
        .iter()
        .filter_map(|m| m.manager.as_deref())
        .collect();
    assert!(managers.contains(&"webapp-operator"), "{managers:?}");

    // Rolled out: three Ready pods, and the status written back.
    let app = until(&apps, "shop", "WebApp status with 3 ready", ready_with(3))
        .await
        .unwrap();
    assert!(
        app.finalizers().contains(&FINALIZER.to_string()),
        "{:?}",
        app.finalizers()
    );
    let selector = ListParams::default().labels("app.kubernetes.io/name=shop");
    let running = pods.list(&selector).await.unwrap().items;
    let ready = running.iter().filter(|p| pod_is_ready(p)).count();
    assert_eq!((running.len(), ready), (3, 3));
    let registry = config_maps.get(REGISTRY).await.unwrap();
    assert_eq!(registry.data.unwrap()["shop"], "nginx:1.27");

    // Scale 3 → 5: the Deployment follows, then the status.
    let scale = Patch::Merge(json!({ "spec": { "replicas": 5 } }));
    apps.patch("shop", &PatchParams::default(), &scale).await.unwrap();
    let five = |d: Option<&Deployment>| d.and_then(|d| d.spec.as_ref()?.replicas) == Some(5);
    until(&deployments, "shop", "the Deployment scaled to 5", five).await;
    let app = until(&apps, "shop", "WebApp status with 5 ready", ready_with(5))
        .await
        .unwrap();
    assert_eq!(app.status.unwrap().observed_generation, Some(2));
    // The scale subresource (what `kubectl scale` reads) agrees.
    let scale = apps.get_scale("shop").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(5));
    assert_eq!(scale.status.unwrap().replicas, 5);

    // Delete: the finalizer's cleanup runs, then the WebApp goes, then the
    // garbage collector deletes the Deployment it owned.
    apps.delete("shop", &DeleteParams::default()).await.unwrap();
    until(&apps, "shop", "the WebApp deleted", conditions::is_deleted(&uid)).await;
    let registry = config_maps.get(REGISTRY).await.unwrap();
    assert!(
        !registry.data.unwrap_or_default().contains_key("shop"),
        "the registry entry is left"
    );
    let events: Api<Event> = Api::default_namespaced(client.clone());
    let events = events.list(&ListParams::default()).await.unwrap().items;
    let deregistered = events.iter().any(|e| {
        e.reason.as_deref() == Some("Deregistered")
            && e.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some(uid.as_str())
    });
    assert!(deregistered, "no Deregistered Event for the WebApp");
    let deployment_uid = deployment.uid().unwrap();
    until(
        &deployments,
        "shop",
        "the Deployment collected",
        conditions::is_deleted(&deployment_uid),
    )
    .await;

    stop.cancel();
    tokio::time::timeout(DEADLINE, operator)
        .await
        .expect("the operator stops")
        .unwrap();
    cluster.stop().await.unwrap();
}

fn pod_is_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}
