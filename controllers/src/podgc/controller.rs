//! The wiring of the controller. SKELETON: replaced by the controller.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use store::Clock;
use tokio_util::sync::CancellationToken;

use crate::runtime::{Client, Informer};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "podgc";

/// Build it with [`PodGcController::new`] before the informers run, then run it.
pub struct PodGcController {}

impl PodGcController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    #[allow(unused_variables, clippy::too_many_arguments, reason = "skeleton")]
    pub fn new(client: Arc<dyn Client>, clock: Clock, pods: &Informer<Pod>, nodes: &Informer<Node>) -> Self {
        PodGcController {}
    }

    /// Runs until `shutdown`.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let _ = workers;
        shutdown.cancelled().await;
    }
}
