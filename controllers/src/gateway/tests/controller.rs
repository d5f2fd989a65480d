//! The simulated gateway running for real against an in-process API server
//! with the Gateway API CRDs installed (from crds/ at the repository root),
//! on paused tokio time.

use std::sync::Arc;
use std::time::Duration;

use apiserver::Api;
use apiserver::api::WriteOptions;
use apiserver::testkit::{Tasks, TestApi};
use k8s_openapi::api::core::v1::Service;
use serde_json::{Value, json};
use store::Clock;

use crate::gateway::controller::GatewayController;
use crate::gateway::types::{Gateway, GatewayClass, HTTPRoute};
use crate::gateway::{CLASS_DESCRIPTION, CLASS_NAME, CONTROLLER_NAME};
use crate::runtime::{Client, InProcessClient, Informer, PatchType, Typed};
use crate::testing::{eventually, stop_tasks, test_clock};

/// The Gateway API CRDs miniplane installs at start.
const CRDS: [&str; 3] = [
    include_str!("../../../../crds/gateway.networking.k8s.io_gatewayclasses.yaml"),
    include_str!("../../../../crds/gateway.networking.k8s.io_gateways.yaml"),
    include_str!("../../../../crds/gateway.networking.k8s.io_httproutes.yaml"),
];

struct Cluster {
    clock: Clock,
    client: Arc<dyn Client>,
    classes: Typed<GatewayClass>,
    gateways: Typed<Gateway>,
    routes: Typed<HTTPRoute>,
    services: Typed<Service>,
    tasks: Tasks,
}

impl Cluster {
    /// An API server with the CRDs Established, nothing else running.
    async fn new() -> Self {
        let clock = test_clock();
        let api = TestApi::builder().clock(clock.clone()).build().await;
        let mut tasks = Tasks::new();
        tasks.push(tokio::spawn(api.clone().keep_custom_resources(tasks.shutdown())));
        install_crds(&api, &clock).await;
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "test"));
        Cluster {
            classes: Typed::new(client.clone()),
            gateways: Typed::new(client.clone()),
            routes: Typed::new(client.clone()),
            services: Typed::new(client.clone()),
            client,
            clock,
            tasks,
        }
    }

    /// Starts the four informers and the controller (2 workers).
    fn start(&mut self) {
        let c = || self.client.clone();
        let classes = Informer::<GatewayClass>::new(c(), self.clock.clone(), None);
        let gateways = Informer::<Gateway>::new(c(), self.clock.clone(), None);
        let routes = Informer::<HTTPRoute>::new(c(), self.clock.clone(), None);
        let services = Informer::<Service>::new(c(), self.clock.clone(), None);
        let controller =
            GatewayController::new(c(), self.clock.clone(), &classes, &gateways, &routes, &services);
        let stop = self.tasks.shutdown();
        self.tasks.push(classes.run(stop.clone()));
        self.tasks.push(gateways.run(stop.clone()));
        self.tasks.push(routes.run(stop.clone()));
        self.tasks.push(services.run(stop));
        self.tasks.spawn(|stop| controller.run(2, stop));
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    async fn create<K>(&self, api: &Typed<K>, obj: Value) -> K
    where
        K: k8s_openapi::Resource
            + serde::Serialize
            + serde::de::DeserializeOwned
            + Clone
            + Send
            + Sync
            + 'static,
    {
        let obj: K = serde_json::from_value(obj).unwrap();
        api.create(Some("default"), &obj).await.unwrap()
    }

    async fn service(&self, name: &str) {
        self.create(
            &self.services,
            json!({"metadata": {"name": name}, "spec": {"ports": [{"port": 80}]}}),
        )
        .await;
    }

    /// Waits until `check` holds of the object `name` of `api` (default namespace).
    async fn wait<K>(
        &self,
        api: &Typed<K>,
        ns: Option<&str>,
        name: &str,
        what: &str,
        check: impl Fn(&K) -> bool,
    ) -> K
    where
        K: k8s_openapi::Resource
            + serde::Serialize
            + serde::de::DeserializeOwned
            + Clone
            + Send
            + Sync
            + 'static,
    {
        eventually(&self.clock, what, || async {
            api.get(ns, name).await.ok().filter(|o| check(o))
        })
        .await
    }
}

/// Creates the CRDs and waits until each is Established.
async fn install_crds(api: &Api, clock: &Clock) {
    let resource = api
        .resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    for yaml in CRDS {
        let body: Value = serde_saphyr::from_str(yaml).unwrap();
        let name = body["metadata"]["name"].as_str().unwrap().to_string();
        api.create(&resource, None, body, &WriteOptions::default())
            .await
            .unwrap();
        eventually(clock, &format!("{name} Established"), || async {
            let crd = api.get(&resource, None, &name).ok()?;
            let conditions = crd.pointer("/status/conditions")?.as_array()?.clone();
            conditions
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
                .then_some(())
        })
        .await;
    }
}

/// `(status, reason)` of condition `type_` in `conditions`.
fn condition(
    conditions: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition],
    type_: &str,
) -> Option<(String, String)> {
    conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone()))
}

fn yes(reason: &str) -> Option<(String, String)> {
    Some(("True".to_string(), reason.to_string()))
}

fn no(reason: &str) -> Option<(String, String)> {
    Some(("False".to_string(), reason.to_string()))
}

/// Our parent entry's `(type → (status, reason))` for Accepted and ResolvedRefs.
fn our_parent(route: &HTTPRoute) -> Option<[Option<(String, String)>; 2]> {
    let p = route
        .status
        .as_ref()?
        .parents
        .iter()
        .find(|p| p.controller_name == CONTROLLER_NAME)?;
    Some([
        condition(&p.conditions, "Accepted"),
        condition(&p.conditions, "ResolvedRefs"),
    ])
}

fn gateway_json(name: &str, class: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {"gatewayClassName": class, "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}
    })
}

fn route_json(name: &str, gateway: &str, services: &[&str]) -> Value {
    let backends: Vec<Value> = services.iter().map(|s| json!({"name": s, "port": 80})).collect();
    json!({
        "metadata": {"name": name},
        "spec": {"parentRefs": [{"name": gateway}], "rules": [{"backendRefs": backends}]}
    })
}

#[tokio::test(start_paused = true)]
async fn creates_and_accepts_its_gateway_class() {
    let mut c = Cluster::new().await;
    c.start();
    let class = c
        .wait(
            &c.classes,
            None,
            CLASS_NAME,
            "GatewayClass miniplane Accepted",
            |g| {
                g.status
                    .as_ref()
                    .is_some_and(|s| condition(&s.conditions, "Accepted") == yes("Accepted"))
            },
        )
        .await;
    assert_eq!(class.spec.controller_name, CONTROLLER_NAME);
    assert_eq!(class.spec.description.as_deref(), Some(CLASS_DESCRIPTION));
    let status = class.status.unwrap();
    assert_eq!(
        condition(&status.conditions, "SupportedVersion"),
        yes("SupportedVersion")
    );
    assert!(status.conditions.iter().all(|c| c.observed_generation == Some(1)));
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn gateway_and_route_statuses_follow_their_services() {
    let mut c = Cluster::new().await;
    c.service("web").await;
    c.create(&c.gateways, gateway_json("gw", CLASS_NAME)).await;
    c.create(&c.routes, route_json("r", "gw", &["web", "web-canary"]))
        .await;
    c.start();

    let gw = c
        .wait(&c.gateways, Some("default"), "gw", "Gateway Programmed", |g| {
            g.status.as_ref().is_some_and(|s| {
                condition(&s.conditions, "Programmed") == yes("Programmed")
                    && s.listeners.first().is_some_and(|l| l.attached_routes == 1)
            })
        })
        .await;
    let status = gw.status.unwrap();
    assert_eq!(condition(&status.conditions, "Accepted"), yes("Accepted"));
    let address = status.addresses[0]["value"].as_str().unwrap().to_string();
    assert!(address.starts_with("10.200."), "{address}");

    // web-canary does not exist: the route is accepted, its refs do not resolve.
    let want = [yes("Accepted"), no("BackendNotFound")];
    c.wait(&c.routes, Some("default"), "r", "route BackendNotFound", |r| {
        our_parent(r).as_ref() == Some(&want)
    })
    .await;
    c.service("web-canary").await;
    let want = [yes("Accepted"), yes("ResolvedRefs")];
    c.wait(&c.routes, Some("default"), "r", "route ResolvedRefs", |r| {
        our_parent(r).as_ref() == Some(&want)
    })
    .await;
    c.services.delete(Some("default"), "web-canary").await.unwrap();
    let want = [yes("Accepted"), no("BackendNotFound")];
    let route = c
        .wait(
            &c.routes,
            Some("default"),
            "r",
            "route BackendNotFound again",
            |r| our_parent(r).as_ref() == Some(&want),
        )
        .await;

    // Settled: nothing is written again while nothing changes.
    let gw_rv = c
        .gateways
        .get(Some("default"), "gw")
        .await
        .unwrap()
        .metadata
        .resource_version;
    c.clock.sleep(Duration::from_secs(30)).await;
    let after = c.gateways.get(Some("default"), "gw").await.unwrap();
    assert_eq!(after.metadata.resource_version, gw_rv);
    let route_after = c.routes.get(Some("default"), "r").await.unwrap();
    assert_eq!(
        route_after.metadata.resource_version,
        route.metadata.resource_version
    );
    assert_eq!(after.status.unwrap().addresses[0]["value"], address.as_str());
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn other_classes_and_other_controllers_entries_are_left_alone() {
    let mut c = Cluster::new().await;
    c.create(
        &c.classes,
        json!({"metadata": {"name": "other"}, "spec": {"controllerName": "example.net/gateway"}}),
    )
    .await;
    c.create(&c.gateways, gateway_json("theirs", "other")).await;
    c.create(&c.gateways, gateway_json("gw", CLASS_NAME)).await;
    c.service("web").await;
    c.create::<HTTPRoute>(
        &c.routes,
        json!({"metadata": {"name": "r"}, "spec": {
            "parentRefs": [{"name": "theirs"}, {"name": "gw"}],
            "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]
        }}),
    )
    .await;
    // The other implementation's entry, written before ours.
    let theirs = json!({
        "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "theirs"},
        "controllerName": "example.net/gateway",
        "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "theirs",
            "lastTransitionTime": "2023-11-14T22:13:20Z"}]
    });
    c.routes
        .patch_status(
            Some("default"),
            "r",
            PatchType::Merge,
            json!({"status": {"parents": [theirs]}}),
        )
        .await
        .unwrap();
    c.start();
    let route = c
        .wait(&c.routes, Some("default"), "r", "our parent entry", |r| {
            our_parent(r).is_some_and(|p| p[0] == yes("Accepted"))
        })
        .await;
    let parents = route.status.unwrap().parents;
    assert_eq!(parents.len(), 2);
    assert_eq!(parents[0].controller_name, "example.net/gateway");
    assert_eq!(parents[0].conditions[0].message, "theirs");
    assert_eq!(parents[1].parent_ref.name, "gw");
    // The other class's Gateway keeps the API's pending status.
    let theirs = c.gateways.get(Some("default"), "theirs").await.unwrap();
    let pending = theirs.status.unwrap();
    assert_eq!(
        condition(&pending.conditions, "Accepted"),
        Some(("Unknown".to_string(), "Pending".to_string()))
    );
    assert!(pending.addresses.is_empty());
    let class = c.classes.get(None, "other").await.unwrap();
    assert_eq!(
        condition(&class.status.unwrap().conditions, "Accepted"),
        Some(("Unknown".to_string(), "Pending".to_string()))
    );
    c.stop().await;
}
