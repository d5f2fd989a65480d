//! The Canary controller's wiring: informer events → Canary keys → workers.
//!
//! Flagger: `pkg/controller/controller.go` (`NewController`, the Canary
//! informer's handlers, `Run`) and `scheduler.go` (`scheduleCanaries`: a
//! ticker per Canary). Here the ticker is the work queue: a sync that waits
//! for the next analysis step returns `RequeueAfter` on the injected clock.
//!
//! ```text
//! Canary informer ── any change ─────────────────▶ its key ──────────────┐
//! Deployment informer ── any change ─▶ the Canaries of the namespace      │
//!                           whose target or primary it is                 ├─▶ WorkQueue ─▶ workers ─▶ sync
//! Job informer ── any change ─▶ the controlling Canary (a hook's Job)    │
//! HTTPRoute informer ── any change ─▶ the controlling Canary ────────────┘
//! ```

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::objects::names;
use super::sync::CanarySync;
use super::types::{Canary, GROUP};
use crate::gateway::types::HTTPRoute;
use crate::runtime::informer::{Change, NAMESPACE_INDEX};
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Recorder, Store, TracingClient,
    WorkQueue, get_controller_of, key_of, object_key,
};

/// The controller's name (its client's field manager, the Events' source).
pub const NAME: &str = "canary-controller";

/// The Canary controller: build it with [`CanaryController::new`] before the
/// informers run, then [`CanaryController::run`] it.
pub struct CanaryController {
    sync: Arc<CanarySync>,
    feeds: Feeds<String>,
}

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
        let client = TracingClient::wrap(client, NAME);
        let sync = CanarySync::new(
            client,
            clock.clone(),
            recorder,
            canaries.store(),
            deployments.store(),
            jobs.store(),
            routes.store(),
            metrics,
        );
        let handlers = Arc::new(EventHandlers {
            canaries: canaries.store(),
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock, NAME));
        feeds.watch_keys(canaries, |c| vec![key_of(&changed(c).metadata)]);
        let h = handlers.clone();
        feeds.watch_keys(deployments, move |c| h.canaries_of_deployment(changed(c)));
        feeds.watch_keys(jobs, |c| controlling_canary(&changed(c).metadata));
        feeds.watch_keys(routes, |c| controlling_canary(&changed(c).metadata));
        CanaryController {
            sync: Arc::new(sync),
            feeds,
        }
    }

    /// Runs until `shutdown`: handles informer events at once, starts
    /// `workers` workers once every cache has synced, and returns after they stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        self.feeds.run(self.sync, workers, shutdown).await;
    }
}

impl Reconciler for CanarySync {
    type Key = String;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_canary(&key).await })
    }
}

/// The object a change is about (the new one for an update).
fn changed<K>(change: &Change<K>) -> &K {
    match change {
        Change::Added(o) | Change::Deleted(o) => o,
        Change::Updated { new, .. } => new,
    }
}

/// The key of the Canary controlling an object (a hook's Job, the route), if one does.
fn controlling_canary(meta: &ObjectMeta) -> Vec<String> {
    match get_controller_of(meta) {
        Some(owner) if owner.kind == "Canary" && owner.api_version.split('/').next() == Some(GROUP) => {
            vec![object_key(meta.namespace.as_deref(), &owner.name)]
        }
        _ => Vec::new(),
    }
}

/// The handlers that read the Canary cache.
struct EventHandlers {
    canaries: Store<Canary>,
}

impl EventHandlers {
    /// The Canaries of the Deployment's namespace that target it or made it
    /// (its primary): Flagger looks at both every tick.
    fn canaries_of_deployment(&self, d: &Deployment) -> Vec<String> {
        let ns = d.metadata.namespace.as_deref().unwrap_or("");
        let name = d.metadata.name.as_deref().unwrap_or("");
        self.canaries
            .by_index(NAMESPACE_INDEX, ns)
            .into_iter()
            .filter(|c| c.spec.target_ref.name == name || names(c).primary == name)
            .map(|c| key_of(&c.metadata))
            .collect()
    }
}
