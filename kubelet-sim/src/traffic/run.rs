//! The traffic loop (to be written).

use controllers::gateway::types::{Gateway, HTTPRoute};
use controllers::runtime::Informer;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use sim_metrics::Tsdb;
use store::Clock;
use tokio_util::sync::CancellationToken;

/// The traffic simulation: one tick per simulated second.
pub struct Traffic {}

impl Traffic {
    /// Subscribes to the informers it reads (call before they run).
    #[allow(clippy::too_many_arguments, reason = "one informer per kind it reads")]
    pub fn new(
        clock: Clock,
        seed: u64,
        metrics: Tsdb,
        routes: &Informer<HTTPRoute>,
        gateways: &Informer<Gateway>,
        services: &Informer<Service>,
        slices: &Informer<EndpointSlice>,
        pods: &Informer<Pod>,
    ) -> Self {
        let _ = (clock, seed, metrics, routes, gateways, services, slices, pods);
        Traffic {}
    }

    /// Runs until `shutdown`.
    pub async fn run(self, shutdown: CancellationToken) {
        shutdown.cancelled().await;
    }
}
