//! The CSR signing controller's wiring: CSR changes → names → workers.
//!
//! Upstream: `pkg/controller/certificates/certificate_controller.go`
//! (`NewCertificateController`: every added or updated CSR is queued;
//! deletes need nothing).
//!
//! ```text
//! CSR informer ── add / update ──▶ its name ──▶ WorkQueue ──▶ workers ──▶ sync_csr
//! ```

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::sign::CertificateAuthority;
use super::sync::CsrSigningSync;
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, TracingClient, WorkQueue,
};

/// The controller's name: the queue's, the trace's and its client's.
pub const NAME: &str = "csrsigning-controller";

/// The CSR signing controller: build it with [`CsrSigningController::new`]
/// before the informer runs, then [`CsrSigningController::run`] it.
pub struct CsrSigningController {
    sync: Arc<CsrSigningSync>,
    feeds: Feeds<String>,
}

impl CsrSigningController {
    /// Wires the controller to the CSR informer (subscribing, so call this
    /// before it runs); certificates are issued by `ca`, valid at most `cert_ttl`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        ca: CertificateAuthority,
        cert_ttl: Duration,
        csrs: &Informer<CertificateSigningRequest>,
    ) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let sync = CsrSigningSync::new(client, clock.clone(), ca, cert_ttl, csrs.store());
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(csrs, csr_changed);
        CsrSigningController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: `workers` workers once the cache has synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for CsrSigningSync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_csr(&key).await })
    }
}

/// An added or updated CSR syncs (approval is an update).
fn csr_changed(change: &Change<CertificateSigningRequest>) -> Vec<String> {
    match change {
        Change::Added(csr) | Change::Updated { new: csr, .. } => csr.metadata.name.iter().cloned().collect(),
        Change::Deleted(_) => Vec::new(),
    }
}
