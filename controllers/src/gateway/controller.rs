//! The simulated gateway's wiring (to be written).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::types::{Gateway, GatewayClass, HTTPRoute};
use crate::runtime::{Client, Informer};

/// The component's name (its client's field manager).
pub const NAME: &str = "gateway-controller";

/// The simulated gateway implementation.
pub struct GatewayController {}

impl GatewayController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        classes: &Informer<GatewayClass>,
        gateways: &Informer<Gateway>,
        routes: &Informer<HTTPRoute>,
        services: &Informer<Service>,
    ) -> Self {
        let _ = (client, clock, classes, gateways, routes, services);
        GatewayController {}
    }

    /// Runs until `shutdown`.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let _ = workers;
        shutdown.cancelled().await;
    }
}
