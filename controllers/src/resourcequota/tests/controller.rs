//! The ResourceQuota controller running against an in-process API server
//! (whose quota admission charges creates) on paused tokio time.

use apiserver::testkit::Tasks;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, ResourceQuota};
use serde_json::{Value, json};
use store::Clock;

use crate::resourcequota::controller::ResourceQuotaController;
use crate::runtime::{Informer, PatchType, ResourceRef, Typed};
use crate::testing::{eventually, stop_tasks, test_client, test_clock};

/// A running controller and typed clients for the test.
struct Cluster {
    clock: Clock,
    quotas: Typed<ResourceQuota>,
    pods: Typed<Pod>,
    configmaps: Typed<ConfigMap>,
    tasks: Tasks,
}

impl Cluster {
    async fn start() -> Self {
        let clock = test_clock();
        let client = test_client(&clock).await;
        let quotas = Informer::<ResourceQuota>::new(client.clone(), clock.clone(), None);
        let pods = Informer::<Pod>::new(client.clone(), clock.clone(), None);
        let resources = vec![ResourceRef::of::<ConfigMap>()];
        let controller =
            ResourceQuotaController::new(client.clone(), clock.clone(), &quotas, &pods, resources);
        let mut tasks = Tasks::new();
        tasks.push(quotas.run(tasks.shutdown()));
        tasks.push(pods.run(tasks.shutdown()));
        tasks.spawn(|stop| controller.run(1, stop));
        Cluster {
            clock,
            quotas: Typed::new(client.clone()),
            pods: Typed::new(client.clone()),
            configmaps: Typed::new(client),
            tasks,
        }
    }

    async fn stop(self) {
        stop_tasks(self.tasks).await;
    }

    /// The quota's `status.used` once it equals `want` (60 s of simulated time at most).
    async fn used_becomes(&self, want: Value) {
        eventually(
            &self.clock,
            &format!("status.used to become {want}"),
            async || {
                let q = self.quotas.get(Some("default"), "q").await.unwrap();
                let used = serde_json::to_value(q.status.and_then(|s| s.used)).unwrap();
                (used == want).then_some(())
            },
        )
        .await;
    }

    async fn create_quota(&self, hard: Value) {
        let q = json!({"metadata": {"name": "q", "namespace": "default"}, "spec": {"hard": hard}});
        self.quotas
            .create(Some("default"), &serde_json::from_value(q).unwrap())
            .await
            .unwrap();
    }

    async fn create_pod(&self, name: &str, cpu: &str) -> Result<Pod, crate::runtime::ClientError> {
        let pod = json!({"metadata": {"name": name, "namespace": "default"}, "spec": {"containers": [
            {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}});
        self.pods
            .create(Some("default"), &serde_json::from_value(pod).unwrap())
            .await
    }
}

#[tokio::test(start_paused = true)]
async fn usage_follows_creates_deletes_and_finished_pods() {
    let c = Cluster::start().await;
    c.create_quota(json!({"pods": "2", "requests.cpu": "1", "count/configmaps": "3"}))
        .await;
    c.used_becomes(json!({"count/configmaps": "0", "pods": "0", "requests.cpu": "0"}))
        .await;

    c.create_pod("a", "250m").await.unwrap();
    c.create_pod("b", "500m").await.unwrap();
    c.used_becomes(json!({"count/configmaps": "0", "pods": "2", "requests.cpu": "750m"}))
        .await;
    let refused = c.create_pod("c", "100m").await.unwrap_err();
    assert_eq!(refused.code, 403);
    assert_eq!(
        refused.message,
        "pods \"c\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"
    );

    c.pods.delete(Some("default"), "a").await.unwrap();
    c.used_becomes(json!({"count/configmaps": "0", "pods": "1", "requests.cpu": "500m"}))
        .await;
    c.pods
        .patch_status(
            Some("default"),
            "b",
            PatchType::Merge,
            json!({"status": {"phase": "Succeeded"}}),
        )
        .await
        .unwrap();
    c.used_becomes(json!({"count/configmaps": "0", "pods": "0", "requests.cpu": "0"}))
        .await;
    let cm = json!({"metadata": {"name": "cm", "namespace": "default"}});
    c.configmaps
        .create(Some("default"), &serde_json::from_value(cm).unwrap())
        .await
        .unwrap();
    c.used_becomes(json!({"count/configmaps": "1", "pods": "0", "requests.cpu": "0"}))
        .await;
    c.stop().await;
}

#[tokio::test(start_paused = true)]
async fn concurrent_creates_cannot_both_take_the_last_unit() {
    let c = Cluster::start().await;
    c.create_quota(json!({"pods": "1", "requests.cpu": "2"})).await;
    c.used_becomes(json!({"pods": "0", "requests.cpu": "0"})).await;
    let (a, b) = tokio::join!(c.create_pod("a", "100m"), c.create_pod("b", "100m"));
    assert_eq!(
        [a.is_ok(), b.is_ok()].iter().filter(|ok| **ok).count(),
        1,
        "exactly one of two racing creates is admitted: {a:?} {b:?}"
    );
    c.used_becomes(json!({"pods": "1", "requests.cpu": "100m"})).await;
    c.stop().await;
}
