//! The wiring of the controller. SKELETON: replaced by the controller.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use store::Clock;
use tokio_util::sync::CancellationToken;

use crate::runtime::{Client, Informer, Recorder};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "taint-eviction";

/// Build it with [`TaintEvictionController::new`] before the informers run, then run it.
pub struct TaintEvictionController {}

impl TaintEvictionController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    #[allow(unused_variables, clippy::too_many_arguments, reason = "skeleton")]
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        nodes: &Informer<Node>,
        pods: &Informer<Pod>,
    ) -> Self {
        TaintEvictionController {}
    }

    /// Runs until `shutdown`.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let _ = workers;
        shutdown.cancelled().await;
    }
}
