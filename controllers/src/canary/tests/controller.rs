//! The Canary controller running for real against an in-process API server
//! (the Gateway API and Canary CRDs installed) on paused tokio time, reading
//! a real [`Tsdb`] through real PromQL.
//!
//! Two stand-ins replace what the e2e tests run for real: a loop that marks
//! every Deployment rolled out (the Deployment controller, scheduler and
//! kubelet), and a loop that writes the request counters of the `-primary`
//! and `-canary` Services and scrapes every 5 s (the traffic simulation),
//! with the canary's error rate set by the test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use apiserver::testkit::Tasks;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use serde_json::{Value, json};
use sim_metrics::Tsdb;
use sim_metrics::names::{DURATION_BUCKETS, HTTP_REQUEST_DURATION_SECONDS, HTTP_REQUESTS_TOTAL};
use store::Clock;

use crate::canary::controller::CanaryController;
use crate::canary::types::Canary;
use crate::gateway::types::HTTPRoute;
use crate::runtime::{Client, InProcessClient, Informer, ListParams, PatchType, Recorder, Typed};
use crate::testing::{poll, stop_tasks, test_clock};

/// The CRDs the controller reads and writes.
const CRDS: [&str; 2] = [
    include_str!("../../../../crds/gateway.networking.k8s.io_httproutes.yaml"),
    include_str!("../../../../crds/rollouts.miniplane.dev_canaries.yaml"),
];

/// Requests per simulated second to each of the primary and the canary.
const RPS: f64 = 20.0;

struct Cluster {
    clock: Clock,
    client: Arc<dyn Client>,
    canaries: Typed<Canary>,
    deployments: Typed<Deployment>,
    routes: Typed<HTTPRoute>,
    /// The share of the canary's requests that fail.
    canary_errors: Arc<Mutex<f64>>,
    tasks: Tasks,
}

impl Cluster {
    async fn start() -> Cluster {
        let clock = test_clock();
        let api = apiserver::testkit::TestApi::builder()
            .clock(clock.clone())
            .build()
            .await;
        let crds = api
            .resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .unwrap();
        for yaml in CRDS {
            let body: Value = serde_saphyr::from_str(yaml).unwrap();
            api.create(&crds, None, body, &apiserver::testkit::by("test"))
                .await
                .unwrap();
        }
        api.sync_custom_resources().await.unwrap();
        let client: Arc<dyn Client> = Arc::new(InProcessClient::new(api, "canary-controller"));
        let mut cluster = Cluster {
            canaries: Typed::new(client.clone()),
            deployments: Typed::new(client.clone()),
            routes: Typed::new(client.clone()),
            canary_errors: Arc::new(Mutex::new(0.0)),
            client,
            clock,
            tasks: Tasks::new(),
        };
        let metrics = Tsdb::new();
        cluster.run_controller(metrics.clone());
        cluster.run_rollouts();
        cluster.run_traffic(metrics);
        cluster
    }

    fn run_controller(&mut self, metrics: Tsdb) {
        let client = self.client.clone();
        let clock = self.clock.clone();
        let canaries = Informer::<Canary>::new(client.clone(), clock.clone(), None);
        let deployments = Informer::<Deployment>::new(client.clone(), clock.clone(), None);
        let jobs = Informer::<Job>::new(client.clone(), clock.clone(), None);
        let routes = Informer::<HTTPRoute>::new(client.clone(), clock.clone(), None);
        let recorder = Recorder::new(client.clone(), clock.clone(), "canary-controller", None);
        let controller = CanaryController::new(
            client,
            clock,
            recorder,
            &canaries,
            &deployments,
            &jobs,
            &routes,
            Arc::new(metrics),
        );
        self.tasks.push(canaries.run(self.tasks.shutdown()));
        self.tasks.push(deployments.run(self.tasks.shutdown()));
        self.tasks.push(jobs.run(self.tasks.shutdown()));
        self.tasks.push(routes.run(self.tasks.shutdown()));
        self.tasks.spawn(|stop| controller.run(1, stop));
    }

    /// Every 500 ms: each Deployment not yet reported rolled out is (all its replicas updated and available).
    fn run_rollouts(&mut self) {
        let deployments = self.deployments.clone();
        let clock = self.clock.clone();
        self.tasks.spawn(|stop| async move {
            while !stop.is_cancelled() {
                for d in deployments
                    .list(Some("default"), &ListParams::default())
                    .await
                    .unwrap_or_default()
                {
                    let generation = d.metadata.generation.unwrap_or(0);
                    let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                    let status = d.status.clone().unwrap_or_default();
                    if status.observed_generation == Some(generation) && status.replicas == Some(replicas) {
                        continue;
                    }
                    let patch = json!({"status": {"observedGeneration": generation, "replicas": replicas,
                        "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}});
                    let name = d.metadata.name.clone().unwrap_or_default();
                    let _ = deployments
                        .patch_status(Some("default"), &name, PatchType::Merge, patch)
                        .await;
                }
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = clock.sleep(Duration::from_millis(500)) => {}
                }
            }
        });
    }

    /// Every 5 s: 5 s of requests to each Service, then a scrape.
    fn run_traffic(&mut self, db: Tsdb) {
        let clock = self.clock.clone();
        let errors = self.canary_errors.clone();
        self.tasks.spawn(|stop| async move {
            while !stop.is_cancelled() {
                let canary_errors = *errors.lock().unwrap();
                for (service, error_rate) in [("podinfo-primary", 0.0), ("podinfo-canary", canary_errors)] {
                    let n = RPS * 5.0;
                    let labels = |code| vec![("namespace", "default"), ("service", service), ("code", code)];
                    db.counter_add(HTTP_REQUESTS_TOTAL, &labels("200"), n * (1.0 - error_rate));
                    db.counter_add(HTTP_REQUESTS_TOTAL, &labels("500"), n * error_rate);
                    let labels = [("namespace", "default"), ("service", service)];
                    db.histogram_observe(
                        HTTP_REQUEST_DURATION_SECONDS,
                        &labels,
                        &DURATION_BUCKETS,
                        0.02,
                        100,
                    );
                }
                db.scrape(clock.now());
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = clock.sleep(Duration::from_secs(5)) => {}
                }
            }
        });
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// Polls every simulated second, for up to 10 simulated minutes.
    async fn eventually<T>(&self, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
        poll(
            &self.clock,
            what,
            Duration::from_secs(600),
            Duration::from_secs(1),
            check,
        )
        .await
    }

    async fn canary(&self) -> Canary {
        self.canaries.get(Some("default"), "podinfo").await.unwrap()
    }

    async fn phase(&self) -> String {
        let c = self.canary().await;
        c.status.and_then(|s| s.phase).unwrap_or_default()
    }

    async fn wait_phase(&self, phase: &str) -> Canary {
        self.eventually(&format!("phase {phase}"), async || {
            let c = self.canary().await;
            (c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some(phase)).then_some(c)
        })
        .await
    }

    async fn deployment(&self, name: &str) -> Deployment {
        self.deployments.get(Some("default"), name).await.unwrap()
    }

    /// The route's canary weight (`None`: no route yet).
    async fn canary_weight(&self) -> Option<i32> {
        let route = self.routes.get(Some("default"), "podinfo").await.ok()?;
        let rule = route.spec.rules.last()?;
        rule.backend_refs
            .iter()
            .find(|b| b.name == "podinfo-canary")
            .and_then(|b| b.weight)
    }

    async fn create(&self) {
        let target: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "podinfo", "namespace": "default"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "podinfo"}},
                "template": {
                    "metadata": {"labels": {"app": "podinfo"}},
                    "spec": {"containers": [{"name": "podinfo", "image": "podinfo:6.0.0"}]},
                },
            },
        }))
        .unwrap();
        self.deployments.create(Some("default"), &target).await.unwrap();
        let canary: Canary = serde_json::from_value(json!({
            "apiVersion": "rollouts.miniplane.dev/v1beta1", "kind": "Canary",
            "metadata": {"name": "podinfo", "namespace": "default"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"},
                "service": {"port": 80},
                "analysis": {
                    "interval": "10s", "threshold": 2, "stepWeight": 10, "maxWeight": 30,
                    "metrics": [{"name": "request-success-rate", "thresholdRange": {"min": 99}, "interval": "30s"}],
                },
            },
        }))
        .unwrap();
        self.canaries.create(Some("default"), &canary).await.unwrap();
    }

    async fn set_image(&self, image: &str) {
        let patch =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "podinfo", "image": image}]}}}});
        self.deployments
            .patch(Some("default"), "podinfo", PatchType::Strategic, patch)
            .await
            .unwrap();
    }

    /// Polls the route's canary weight every simulated second until the
    /// phase is `phase`; the weights seen, consecutive repeats merged.
    async fn weights_until(&self, phase: &str) -> Vec<i32> {
        let mut seen: Vec<i32> = Vec::new();
        self.eventually(&format!("phase {phase}"), async || {
            if let Some(w) = self.canary_weight().await
                && seen.last() != Some(&w)
            {
                seen.push(w);
            }
            (self.phase().await == phase).then_some(())
        })
        .await;
        seen
    }
}

fn image(d: &Deployment) -> String {
    d.spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0]
        .image
        .clone()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_good_canary_is_initialized_stepped_and_promoted() {
    let c = Cluster::start().await;
    c.create().await;
    let initialized = c.wait_phase("Initialized").await;
    let status = initialized.status.unwrap();
    assert_eq!(status.last_applied_spec, status.last_promoted_spec);
    assert_eq!(c.deployment("podinfo").await.spec.unwrap().replicas, Some(0));
    assert_eq!(image(&c.deployment("podinfo-primary").await), "podinfo:6.0.0");
    assert_eq!(c.canary_weight().await, Some(0));

    c.set_image("podinfo:6.1.0").await;
    let weights = c.weights_until("Succeeded").await;
    assert_eq!(weights, [0, 10, 20, 30, 0]);
    assert_eq!(image(&c.deployment("podinfo-primary").await), "podinfo:6.1.0");
    assert_eq!(c.deployment("podinfo").await.spec.unwrap().replicas, Some(0));
    let status = c.canary().await.status.unwrap();
    assert_eq!(status.failed_checks, 0);
    assert_eq!(status.last_applied_spec, status.last_promoted_spec);
    assert_eq!(status.conditions[0].reason.as_deref(), Some("Succeeded"));
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn failing_checks_roll_back_at_the_threshold_and_leave_the_primary_alone() {
    let c = Cluster::start().await;
    c.create().await;
    c.wait_phase("Initialized").await;
    *c.canary_errors.lock().unwrap() = 0.2;
    c.set_image("podinfo:6.1.0").await;
    let failed = c.wait_phase("Failed").await;
    let status = failed.status.unwrap();
    assert_eq!((status.failed_checks, status.canary_weight), (2, 0));
    assert_eq!(image(&c.deployment("podinfo-primary").await), "podinfo:6.0.0");
    assert_eq!(c.deployment("podinfo").await.spec.unwrap().replicas, Some(0));
    assert_eq!(c.canary_weight().await, Some(0));

    // Retry with a fixed canary: the same revision is analysed again and promoted.
    *c.canary_errors.lock().unwrap() = 0.0;
    let patch = json!({"metadata": {"annotations": {"rollouts.miniplane.dev/retry": "true"}}});
    c.canaries
        .patch(Some("default"), "podinfo", PatchType::Merge, patch)
        .await
        .unwrap();
    c.wait_phase("Succeeded").await;
    assert_eq!(image(&c.deployment("podinfo-primary").await), "podinfo:6.1.0");
    let annotations = c.canary().await.metadata.annotations.unwrap_or_default();
    assert!(!annotations.contains_key("rollouts.miniplane.dev/retry"));
    c.stop().await;
}
