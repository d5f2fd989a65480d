//! The Canary controller's wiring (to be written).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::types::Canary;
use crate::gateway::types::HTTPRoute;
use crate::runtime::{Client, Informer, Recorder};

/// The controller's name (its client's field manager, the Events' source).
pub const NAME: &str = "canary-controller";

/// The Canary controller.
pub struct CanaryController {}

impl CanaryController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    #[allow(clippy::too_many_arguments, reason = "one informer per kind it reads")]
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        canaries: &Informer<Canary>,
        deployments: &Informer<Deployment>,
        jobs: &Informer<Job>,
        routes: &Informer<HTTPRoute>,
        metrics: Arc<dyn sim_metrics::Query>,
    ) -> Self {
        let _ = (
            client,
            clock,
            recorder,
            canaries,
            deployments,
            jobs,
            routes,
            metrics,
        );
        CanaryController {}
    }

    /// Runs until `shutdown`.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let _ = workers;
        shutdown.cancelled().await;
    }
}
