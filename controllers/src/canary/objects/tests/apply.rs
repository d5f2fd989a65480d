//! [`apply`] and [`scale`] against a real API server (temporary store, the
//! Gateway API CRDs installed): every object built here passes the server's
//! validation, a second apply writes nothing, a changed object is updated.

use std::sync::Arc;

use apiserver::testkit::TestApi;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Service;
use serde_json::{Value, json};

use super::fixtures::{ab_testing, blue_green, canary, hook, target, target_with};
use crate::canary::objects::{
    Weights, apply, hook_job, names, primary_autoscaler, primary_deployment, route, route_weights, scale,
    services, template_hash,
};
use crate::gateway::types::HTTPRoute;
use crate::runtime::{Client, InProcessClient, ResourceRef, Typed};

/// The HTTPRoute CRD of the repository, as the binary installs it (the
/// route's parentRefs need no Gateway to be valid; installing the one CRD
/// keeps these tests quick).
const HTTPROUTE_CRD: &str = include_str!("../../../../../crds/gateway.networking.k8s.io_httproutes.yaml");

/// A client of a fresh API server serving HTTPRoutes.
async fn client() -> Arc<dyn Client> {
    let api = TestApi::builder().build().await;
    let crds = api
        .resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    let body: Value = serde_saphyr::from_str(HTTPROUTE_CRD).unwrap();
    api.create(&crds, None, body, &apiserver::testkit::by("test"))
        .await
        .unwrap();
    api.sync_custom_resources().await.unwrap();
    Arc::new(InProcessClient::new(api, "canary-controller"))
}

/// A client of a fresh API server with the built-in kinds only.
async fn plain_client() -> Arc<dyn Client> {
    Arc::new(InProcessClient::new(
        TestApi::builder().build().await,
        "canary-controller",
    ))
}

/// The resourceVersion of `name` of kind `K` in `default`.
async fn rv<K: k8s_openapi::Resource>(client: &dyn Client, name: &str) -> String {
    let obj = client
        .get(&ResourceRef::of::<K>(), Some("default"), name)
        .await
        .unwrap();
    obj["metadata"]["resourceVersion"].as_str().unwrap().to_string()
}

/// The target as the server stores it (defaulted), created first.
async fn stored_target(client: &Arc<dyn Client>, t: &Deployment) -> Deployment {
    Typed::<Deployment>::new(client.clone())
        .create(Some("default"), t)
        .await
        .unwrap()
}

#[tokio::test]
async fn every_object_passes_validation_and_a_second_apply_writes_nothing() {
    let client = client().await;
    let c = canary();
    let t = stored_target(&client, &target()).await;
    let n = names(&c);

    let primary = primary_deployment(&c, &t, None);
    apply(&*client, &primary).await.unwrap();
    let svcs = services(&c, &t);
    for s in &svcs {
        apply(&*client, s).await.unwrap();
    }
    let r = route(&c, Weights::PRIMARY, false);
    apply(&*client, &r).await.unwrap();
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "podinfo", "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"},
            "minReplicas": 1, "maxReplicas": 4,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]
        }
    }))
    .unwrap();
    let primary_hpa = primary_autoscaler(&c, &hpa);
    apply(&*client, &primary_hpa).await.unwrap();
    let job = hook_job(&c, &hook("smoke-test", "pre-rollout", true), &template_hash(&t)).unwrap();
    apply(&*client, &job).await.unwrap();

    let before = [
        rv::<Deployment>(&*client, &n.primary).await,
        rv::<Service>(&*client, &n.apex_service).await,
        rv::<Service>(&*client, &n.primary_service).await,
        rv::<Service>(&*client, &n.canary_service).await,
        rv::<HTTPRoute>(&*client, &n.route).await,
        rv::<HorizontalPodAutoscaler>(&*client, "podinfo-primary").await,
        rv::<Job>(&*client, job.metadata.name.as_deref().unwrap()).await,
    ];
    // Built again, from the same inputs: nothing is written.
    apply(&*client, &primary_deployment(&c, &t, None)).await.unwrap();
    for s in services(&c, &t) {
        apply(&*client, &s).await.unwrap();
    }
    apply(&*client, &route(&c, Weights::PRIMARY, false))
        .await
        .unwrap();
    apply(&*client, &primary_autoscaler(&c, &hpa)).await.unwrap();
    apply(&*client, &job).await.unwrap();
    let after = [
        rv::<Deployment>(&*client, &n.primary).await,
        rv::<Service>(&*client, &n.apex_service).await,
        rv::<Service>(&*client, &n.primary_service).await,
        rv::<Service>(&*client, &n.canary_service).await,
        rv::<HTTPRoute>(&*client, &n.route).await,
        rv::<HorizontalPodAutoscaler>(&*client, "podinfo-primary").await,
        rv::<Job>(&*client, job.metadata.name.as_deref().unwrap()).await,
    ];
    assert_eq!(before, after, "the second apply writes nothing");

    // What the server stored reads back as built.
    let stored: HTTPRoute = Typed::<HTTPRoute>::new(client.clone())
        .get(Some("default"), "podinfo")
        .await
        .unwrap();
    assert_eq!(
        route_weights(&stored, &n),
        Some(Weights::PRIMARY),
        "the server's default match is a catch-all"
    );
    let stored_primary = Typed::<Deployment>::new(client.clone())
        .get(Some("default"), "podinfo-primary")
        .await
        .unwrap();
    assert_eq!(
        stored_primary.spec.unwrap().template.spec,
        t.spec.as_ref().unwrap().template.spec,
        "the primary runs the target's pod spec"
    );
}

#[tokio::test]
async fn a_changed_object_is_updated_keeping_what_others_set() {
    let client = client().await;
    let c = ab_testing();
    let n = names(&c);
    let routes = Typed::<HTTPRoute>::new(client.clone());

    apply(&*client, &route(&c, Weights::PRIMARY, false))
        .await
        .unwrap();
    for w in [Weights::canary(10), Weights::canary(20)] {
        let before = rv::<HTTPRoute>(&*client, &n.route).await;
        apply(&*client, &route(&c, w, false)).await.unwrap();
        assert_ne!(rv::<HTTPRoute>(&*client, &n.route).await, before);
        let stored = routes.get(Some("default"), &n.route).await.unwrap();
        assert_eq!(route_weights(&stored, &n), Some(w));
    }
    // A/B: the header rule comes first, the default rule keeps its weights.
    apply(&*client, &route(&c, Weights::PRIMARY, true)).await.unwrap();
    let stored = routes.get(Some("default"), &n.route).await.unwrap();
    assert_eq!(stored.spec.rules.len(), 2);
    assert_eq!(stored.spec.rules[0].backend_refs[1].weight, Some(100));
    assert_eq!(route_weights(&stored, &n), Some(Weights::PRIMARY));
    let before = rv::<HTTPRoute>(&*client, &n.route).await;
    apply(&*client, &route(&c, Weights::PRIMARY, true)).await.unwrap();
    assert_eq!(
        rv::<HTTPRoute>(&*client, &n.route).await,
        before,
        "defaulted header matches are no change"
    );

    let t = stored_target(&client, &target()).await;
    // Blue/green: the -canary Service carries the request rate; the A/B
    // route the header share.
    for s in services(&blue_green(), &t) {
        apply(&*client, &s).await.unwrap();
    }
    let svc = client
        .get(&ResourceRef::of::<Service>(), Some("default"), "podinfo-canary")
        .await
        .unwrap();
    assert_eq!(
        svc["metadata"]["annotations"]["sim.miniplane.dev/requests-per-second"],
        "10"
    );
    let mut c = c.clone();
    c.metadata.annotations = Some(super::fixtures::map(&[("sim.miniplane.dev/header-share", "0.3")]));
    apply(&*client, &route(&c, Weights::PRIMARY, true)).await.unwrap();
    let r = client
        .get(&ResourceRef::of::<HTTPRoute>(), Some("default"), "podinfo")
        .await
        .unwrap();
    assert_eq!(
        r["metadata"]["annotations"]["sim.miniplane.dev/header-share"],
        "0.3"
    );
    assert_eq!(
        r["spec"]["rules"][0]["matches"][0]["headers"][0]["name"],
        "x-canary"
    );

    // A Service: a label someone else set and the allocated clusterIP stay.
    let canary_svc = services(&c, &t).pop().unwrap();
    apply(&*client, &canary_svc).await.unwrap();
    let svc_ref = ResourceRef::of::<Service>();
    let patch = json!({"metadata": {"labels": {"owner": "someone-else"}}});
    client
        .patch(
            &svc_ref,
            Some("default"),
            &n.canary_service,
            crate::runtime::PatchType::Merge,
            patch,
            None,
        )
        .await
        .unwrap();
    let ip = client
        .get(&svc_ref, Some("default"), &n.canary_service)
        .await
        .unwrap()["spec"]["clusterIP"]
        .clone();
    let mut c2 = c.clone();
    c2.spec.service.port = 8080;
    apply(&*client, &services(&c2, &t).pop().unwrap()).await.unwrap();
    let svc = client
        .get(&svc_ref, Some("default"), &n.canary_service)
        .await
        .unwrap();
    assert_eq!(svc["spec"]["ports"][0]["port"], 8080);
    assert_eq!(svc["spec"]["clusterIP"], ip);
    assert_eq!(svc["metadata"]["labels"]["owner"], "someone-else");

    // The primary takes a new template (promotion).
    apply(&*client, &primary_deployment(&c, &t, None)).await.unwrap();
    let next = stored_target(
        &client,
        &target_with(&[("app", "podinfo")], "6.0.1")
            .clone()
            .renamed("podinfo-v2"),
    )
    .await;
    let promoted = primary_deployment(&c, &next, Some(3));
    apply(&*client, &promoted).await.unwrap();
    let stored = Typed::<Deployment>::new(client.clone())
        .get(Some("default"), "podinfo-primary")
        .await
        .unwrap();
    let spec = stored.spec.unwrap();
    assert_eq!(spec.replicas, Some(3));
    assert_eq!(
        spec.template.spec.unwrap().containers[0].image.as_deref(),
        Some("ghcr.io/stefanprodan/podinfo:6.0.1")
    );
    assert_eq!(
        stored.metadata.annotations.unwrap()[crate::canary::objects::primary::TEMPLATE_HASH_ANNOTATION],
        template_hash(&next)
    );

    // A template that only lost a pod annotation: a new revision, and the
    // primary loses the annotation too.
    let mut bare = target_with(&[("app", "podinfo")], "6.0.1").renamed("podinfo-v3");
    bare.spec
        .as_mut()
        .unwrap()
        .template
        .metadata
        .as_mut()
        .unwrap()
        .annotations = None;
    let bare = stored_target(&client, &bare).await;
    assert_ne!(template_hash(&bare), template_hash(&next));
    apply(&*client, &primary_deployment(&c, &bare, Some(3)))
        .await
        .unwrap();
    let stored = Typed::<Deployment>::new(client.clone())
        .get(Some("default"), "podinfo-primary")
        .await
        .unwrap();
    assert_eq!(stored.spec.unwrap().template.metadata.unwrap().annotations, None);
}

#[tokio::test]
async fn scale_sets_the_replicas_once() {
    let client = plain_client().await;
    stored_target(&client, &target()).await;
    scale(&*client, "default", "podinfo", 0).await.unwrap();
    let d = client
        .get(&ResourceRef::of::<Deployment>(), Some("default"), "podinfo")
        .await
        .unwrap();
    assert_eq!(d["spec"]["replicas"], 0);
    let before = rv::<Deployment>(&*client, "podinfo").await;
    scale(&*client, "default", "podinfo", 0).await.unwrap();
    assert_eq!(
        rv::<Deployment>(&*client, "podinfo").await,
        before,
        "no write when already scaled"
    );
    let missing = scale(&*client, "default", "nothing", 1).await.unwrap_err();
    assert!(missing.is_not_found());
}

/// Renaming a fixture Deployment.
trait Renamed {
    fn renamed(self, name: &str) -> Self;
}

impl Renamed for Deployment {
    fn renamed(mut self, name: &str) -> Self {
        self.metadata.name = Some(name.into());
        self
    }
}

/// A client whose first update meets a concurrent write: just before it
/// reaches the server, someone else labels the object (a real 409).
struct ConcurrentWriter {
    inner: Arc<dyn Client>,
    updates: std::sync::atomic::AtomicUsize,
}

impl crate::runtime::WrapClient for ConcurrentWriter {
    fn inner(&self) -> &dyn Client {
        &*self.inner
    }

    fn around_write<'a, T: crate::runtime::Written + 'a>(
        &'a self,
        call: &crate::runtime::Call<'_>,
        next: impl FnOnce() -> crate::runtime::BoxFuture<'a, crate::runtime::ClientResult<T>>,
    ) -> crate::runtime::BoxFuture<'a, crate::runtime::ClientResult<T>> {
        if call.verb != crate::runtime::Verb::Update {
            return next();
        }
        let first = self.updates.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
        let (r, ns, name) = (
            call.resource.clone(),
            call.ns.map(str::to_string),
            call.name.to_string(),
        );
        let update = next();
        Box::pin(async move {
            if first {
                let patch = json!({"metadata": {"labels": {"someone": "else"}}});
                self.inner
                    .patch(
                        &r,
                        ns.as_deref(),
                        &name,
                        crate::runtime::PatchType::Merge,
                        patch,
                        None,
                    )
                    .await
                    .expect("the concurrent write succeeds");
            }
            update.await
        })
    }
}

#[tokio::test]
async fn a_conflicting_update_is_retried_once_on_a_fresh_read() {
    let client = plain_client().await;
    let c = canary();
    let t = stored_target(&client, &target()).await;
    apply(&*client, &primary_deployment(&c, &t, None)).await.unwrap();
    let racing = ConcurrentWriter {
        inner: client.clone(),
        updates: std::sync::atomic::AtomicUsize::new(0),
    };
    apply(&racing, &primary_deployment(&c, &t, Some(5)))
        .await
        .unwrap();
    assert_eq!(
        racing.updates.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "one conflict, one retry"
    );
    let stored = Typed::<Deployment>::new(client.clone())
        .get(Some("default"), "podinfo-primary")
        .await
        .unwrap();
    assert_eq!(stored.spec.unwrap().replicas, Some(5));
    assert_eq!(
        stored.metadata.labels.unwrap()["someone"],
        "else",
        "the other write is kept"
    );
}
