//! The HPA controller's wiring (to be written).

use std::sync::Arc;

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Pod;
use store::Clock;
use tokio_util::sync::CancellationToken;

use crate::runtime::{Client, Informer, Recorder};

/// The controller's name (its client's field manager, the Events' source).
pub const NAME: &str = "horizontal-pod-autoscaler";

/// The HorizontalPodAutoscaler controller.
pub struct HorizontalController {}

impl HorizontalController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        hpas: &Informer<HorizontalPodAutoscaler>,
        pods: &Informer<Pod>,
        metrics: Arc<dyn sim_metrics::Query>,
    ) -> Self {
        let _ = (client, clock, recorder, hpas, pods, metrics);
        HorizontalController {}
    }

    /// Runs until `shutdown`.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let _ = workers;
        shutdown.cancelled().await;
    }
}
