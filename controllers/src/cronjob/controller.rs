//! The wiring of the controller. SKELETON: replaced by the controller.

use std::sync::Arc;

use k8s_openapi::api::batch::v1::{CronJob, Job};
use store::Clock;
use tokio_util::sync::CancellationToken;

use crate::runtime::{Client, Informer, Recorder};

/// The controller's name: the queue's and the trace's label.
pub const NAME: &str = "cronjob";

/// Build it with [`CronJobController::new`] before the informers run, then run it.
pub struct CronJobController {}

impl CronJobController {
    /// Wires the controller to its informers (subscribing, so call this before they run).
    #[allow(unused_variables, clippy::too_many_arguments, reason = "skeleton")]
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        cronjobs: &Informer<CronJob>,
        jobs: &Informer<Job>,
    ) -> Self {
        CronJobController {}
    }

    /// Runs until `shutdown`.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let _ = workers;
        shutdown.cancelled().await;
    }
}
