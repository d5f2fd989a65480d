//! The Endpoints and EndpointSlice controllers running side by side against
//! an in-process API on paused tokio time; pods get their IPs and readiness
//! from the test (there is no kubelet).

use std::sync::Arc;
use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::core::v1::{Endpoints, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::{Value, json};
use store::Clock;

use crate::endpoint::controller::EndpointsController;
use crate::endpointslice::controller::EndpointSliceController;
use crate::runtime::{Client, Informer, ListParams, PatchType, Typed};
use crate::testing::{poll, stop_tasks, test_client, test_clock};

/// The API, typed clients, and what runs.
pub(crate) struct World {
    pub clock: Clock,
    pub client: Arc<dyn Client>,
    pub tasks: Tasks,
}

impl World {
    /// Both controllers and their informers, started.
    pub async fn start() -> World {
        let clock = test_clock();
        let client = test_client(&clock).await;
        let mut tasks = Tasks::new();
        let services = Informer::<Service>::new(client.clone(), clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let endpoints = Informer::<Endpoints>::new(client.clone(), clock.clone(), None);
        let slices = Informer::<EndpointSlice>::new(client.clone(), clock.clone(), None);
        let ep = EndpointsController::new(client.clone(), clock.clone(), &services, &pods, &endpoints);
        let eps = EndpointSliceController::new(client.clone(), clock.clone(), &services, &pods, &slices);
        tasks.push(services.run(tasks.shutdown()));
        tasks.push(pods.run(tasks.shutdown()));
        tasks.push(endpoints.run(tasks.shutdown()));
        tasks.push(slices.run(tasks.shutdown()));
        tasks.spawn(|stop| ep.run(2, stop));
        tasks.spawn(|stop| eps.run(2, stop));
        World { clock, client, tasks }
    }

    pub async fn create<K>(&self, obj: Value) -> K
    where
        K: k8s_openapi::Resource
            + serde::de::DeserializeOwned
            + serde::Serialize
            + Clone
            + Send
            + Sync
            + 'static,
    {
        let typed = Typed::<K>::new(self.client.clone());
        let obj: K = serde_json::from_value(obj).unwrap();
        typed.create(Some("default"), &obj).await.unwrap()
    }

    /// Gives pod `name` the IP `ip` and readiness `ready` (as a kubelet would).
    pub async fn set_status(&self, name: &str, ip: &str, ready: bool) {
        let pods = Typed::<Pod>::new(self.client.clone());
        let status = json!({"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" },
                            "lastTransitionTime": "2023-11-14T22:13:20Z"}]}});
        pods.patch_status(Some("default"), name, PatchType::Merge, status)
            .await
            .unwrap();
    }

    /// Polls every simulated 10 ms, up to a simulated minute, until `check` holds.
    pub async fn eventually<T>(&self, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
        poll(
            &self.clock,
            what,
            Duration::from_secs(60),
            Duration::from_millis(10),
            check,
        )
        .await
    }

    pub async fn slices(&self) -> Vec<EndpointSlice> {
        let typed = Typed::<EndpointSlice>::new(self.client.clone());
        let all = typed.list(Some("default"), &ListParams::default()).await.unwrap();
        all.into_iter()
            .filter(|s| s.metadata.name.as_deref() != Some("kubernetes"))
            .collect()
    }

    pub async fn endpoints(&self, name: &str) -> Option<Endpoints> {
        Typed::<Endpoints>::new(self.client.clone())
            .get(Some("default"), name)
            .await
            .ok()
    }
}

pub(crate) fn pod(name: &str, app: &str, ports: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "labels": {"app": app}},
           "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx", "ports": ports}]}})
}

/// `(pod name, ready)` of every endpoint in the slices, sorted.
fn endpoints_of(slices: &[EndpointSlice]) -> Vec<(String, bool)> {
    let mut all: Vec<(String, bool)> = slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .map(|e| {
            let name = e
                .target_ref
                .as_ref()
                .and_then(|r| r.name.clone())
                .unwrap_or_default();
            (name, e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
        })
        .collect();
    all.sort();
    all
}

#[tokio::test(start_paused = true)]
async fn slices_and_endpoints_follow_pods_by_port_set() {
    let w = World::start().await;
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [
            {"name": "http", "port": 80, "targetPort": "http"}, {"name": "metrics", "port": 9090}]}});
    w.create::<Service>(svc).await;
    // No pods yet: one empty placeholder slice.
    let placeholder = w
        .eventually("a placeholder slice", async || {
            let s = w.slices().await;
            (s.len() == 1).then_some(s)
        })
        .await;
    assert!(placeholder[0].endpoints.is_empty() && placeholder[0].ports.is_none());

    let http = json!([{"name": "http", "containerPort": 8080}]);
    for (name, ports) in [("a", http.clone()), ("b", json!([])), ("c", http)] {
        w.create::<Pod>(pod(name, "web", ports)).await;
    }
    w.set_status("b", "10.0.0.2", true).await;
    w.set_status("c", "10.0.0.3", false).await;
    w.set_status("a", "10.0.0.1", true).await;
    let slices = w
        .eventually("three endpoints in two slices", async || {
            let s = w.slices().await;
            (endpoints_of(&s).len() == 3 && s.len() == 2).then_some(s)
        })
        .await;
    let want = [
        ("a".to_string(), true),
        ("b".to_string(), true),
        ("c".to_string(), false),
    ];
    assert_eq!(endpoints_of(&slices), want);

    // Readiness flips: both kinds follow.
    w.set_status("c", "10.0.0.3", true).await;
    w.eventually("c ready in its slice", async || {
        let s = w.slices().await;
        endpoints_of(&s).iter().all(|(_, ready)| *ready).then_some(())
    })
    .await;
    let ep = w
        .eventually("c ready in the Endpoints", async || {
            let ep = w.endpoints("web").await?;
            let subsets = ep.subsets.clone()?;
            subsets
                .iter()
                .all(|s| s.not_ready_addresses.is_none())
                .then_some(ep)
        })
        .await;
    assert_eq!(
        ep.subsets.unwrap().len(),
        2,
        "{{a, c}} on http, {{a, b, c}} on metrics"
    );
    // Being deleted (a finalizer holds it): out of the Endpoints, but in
    // its slice as terminating, serving and not ready.
    let pods = Typed::<Pod>::new(w.client.clone());
    let hold = json!({"metadata": {"finalizers": ["example.com/hold"]}});
    pods.patch(Some("default"), "a", PatchType::Merge, hold)
        .await
        .unwrap();
    let params = crate::runtime::DeleteParams::default();
    w.client
        .delete(pods.resource(), Some("default"), "a", &params)
        .await
        .unwrap();
    let e = w
        .eventually("a terminating", async || {
            let s = w.slices().await;
            let a = s
                .iter()
                .flat_map(|s| &s.endpoints)
                .find(|e| e.target_ref.as_ref().and_then(|r| r.name.as_deref()) == Some("a"));
            a.filter(|e| e.conditions.as_ref().and_then(|c| c.terminating) == Some(true))
                .cloned()
        })
        .await;
    let conditions = e.conditions.unwrap();
    assert_eq!((conditions.ready, conditions.serving), (Some(false), Some(true)));
    w.eventually("a out of the Endpoints", async || {
        let ep = w.endpoints("web").await?;
        (!serde_json::to_string(&ep).ok()?.contains("\"a\"")).then_some(())
    })
    .await;
    stop_tasks(w.tasks).await;
}
