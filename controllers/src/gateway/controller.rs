//! The simulated gateway's wiring: informer events → keys → workers.
//!
//! ```text
//! GatewayClass ── any change ──▶ Class(name); spec / presence change: its Gateways ──┐
//! Gateway ── any change ──▶ Gateway(key); spec / presence change: routes naming it   │
//! HTTPRoute ── any change ──▶ Route(key); spec / presence change: the Gateways its   ├─▶ WorkQueue ─▶ workers ─▶ sync
//!                              parentRefs name, before and after (attachedRoutes)    │
//! Service ── added / deleted ──▶ routes with a backendRef to it (ResolvedRefs) ──────┘
//! ```
//!
//! Status-only updates wake only the object itself (whose sync then finds
//! nothing to write), so the controller's own writes do not ripple. Before
//! the workers start, [`GatewayController::run`] creates the GatewayClass
//! `miniplane` when absent.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use store::Clock;
use tokio_util::sync::CancellationToken;

use super::status;
use super::sync::{GatewaySync, Key};
use super::types::{Gateway, GatewayClass, HTTPRoute};
use crate::runtime::informer::Change;
use crate::runtime::{
    Action, BoxFuture, Client, Feeds, Informer, ReconcileError, Reconciler, Store, TracingClient, WorkQueue,
    key_of,
};

/// The component's name (its client's field manager).
pub const NAME: &str = "gateway-controller";

/// Attempts at creating the GatewayClass at start, a second apart.
const ENSURE_CLASS_ATTEMPTS: u32 = 30;

/// The simulated gateway implementation.
pub struct GatewayController {
    sync: Arc<GatewaySync>,
    feeds: Feeds<Key>,
    clock: Clock,
}

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
        let client = TracingClient::wrap(client, NAME);
        let sync = GatewaySync::new(
            client,
            clock.clone(),
            classes.store(),
            gateways.store(),
            routes.store(),
            services.store(),
        );
        let h = Arc::new(EventHandlers {
            gateways: gateways.store(),
            routes: routes.store(),
        });
        let mut feeds = Feeds::new(WorkQueue::named(clock.clone(), NAME));
        let (h1, h2, h3) = (h.clone(), h.clone(), h.clone());
        feeds.watch_keys(classes, move |c| h1.on_class(c));
        feeds.watch_keys(gateways, move |c| h2.on_gateway(c));
        feeds.watch_keys(routes, move |c| h3.on_route(c));
        feeds.watch_keys(services, move |c| h.on_service(c));
        GatewayController {
            sync: Arc::new(sync),
            feeds,
            clock,
        }
    }

    /// Runs until `shutdown`: creates the GatewayClass `miniplane` when
    /// absent, handles informer events, and starts `workers` workers once
    /// every cache has synced.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let sync = self.sync.clone();
        let clock = self.clock.clone();
        let stop = shutdown.clone();
        let ensure = tokio::spawn(async move {
            for attempt in 1..=ENSURE_CLASS_ATTEMPTS {
                match sync.ensure_class().await {
                    Ok(()) => return,
                    Err(e) if attempt == ENSURE_CLASS_ATTEMPTS => {
                        tracing::warn!(
                            controller = NAME,
                            "GatewayClass {} not created: {e}",
                            super::CLASS_NAME
                        );
                    }
                    Err(_) => {}
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = clock.sleep(Duration::from_secs(1)) => {}
                }
            }
        });
        self.feeds.run(self.sync, workers, shutdown).await;
        if let Err(e) = ensure.await {
            tracing::error!(controller = NAME, "GatewayClass task failed: {e}");
        }
    }
}

impl Reconciler for GatewaySync {
    type Key = Key;

    fn name(&self) -> &str {
        NAME
    }

    fn reconcile(&self, key: &Key) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync(&key).await })
    }
}

/// The informer event handlers: each maps a change to the keys to sync.
pub struct EventHandlers {
    gateways: Store<Gateway>,
    routes: Store<HTTPRoute>,
}

/// The keys of the routes with a parent reference naming `gateway`.
fn routes_naming<'a>(routes: &'a [Arc<HTTPRoute>], gateway: &'a Gateway) -> impl Iterator<Item = Key> + 'a {
    routes
        .iter()
        .filter(|r| {
            r.spec
                .parent_refs
                .iter()
                .any(|p| status::refers_to(r, p, gateway))
        })
        .map(|r| Key::Route(key_of(&r.metadata)))
}

/// The object of a change, and whether the change is more than a status
/// update (a new object, a deletion, or a changed spec or generation).
fn changed<K>(change: &Change<K>, spec_eq: impl Fn(&K, &K) -> bool) -> (&Arc<K>, Option<&Arc<K>>, bool) {
    match change {
        Change::Added(o) | Change::Deleted(o) => (o, None, true),
        Change::Updated { old, new } => (new, Some(old), !spec_eq(old, new)),
    }
}

impl EventHandlers {
    /// A GatewayClass change: the class; on a spec change, its Gateways and
    /// the routes naming them.
    pub fn on_class(&self, change: &Change<GatewayClass>) -> Vec<Key> {
        let (class, _, spec_changed) = changed(change, |a, b| a.spec == b.spec);
        let name = class.metadata.name.clone().unwrap_or_default();
        let mut keys = vec![Key::Class(name.clone())];
        if spec_changed {
            let routes = self.routes.list();
            for g in self
                .gateways
                .list()
                .iter()
                .filter(|g| g.spec.gateway_class_name == name)
            {
                keys.push(Key::Gateway(key_of(&g.metadata)));
                keys.extend(routes_naming(&routes, g));
            }
        }
        keys
    }

    /// A Gateway change: the Gateway; on a spec change, the routes naming it.
    pub fn on_gateway(&self, change: &Change<Gateway>) -> Vec<Key> {
        let (gateway, _, spec_changed) = changed(change, |a, b| a.spec == b.spec);
        let mut keys = vec![Key::Gateway(key_of(&gateway.metadata))];
        if spec_changed {
            keys.extend(routes_naming(&self.routes.list(), gateway));
        }
        keys
    }

    /// An HTTPRoute change: the route; on a spec change, the Gateways its
    /// parent references name, before and after.
    pub fn on_route(&self, change: &Change<HTTPRoute>) -> Vec<Key> {
        let (route, old, spec_changed) = changed(change, |a, b| a.spec == b.spec);
        let mut keys = vec![Key::Route(key_of(&route.metadata))];
        if spec_changed {
            for r in std::iter::once(route).chain(old) {
                for p in &r.spec.parent_refs {
                    if let Some((ns, name)) = status::parent_gateway(r, p) {
                        keys.push(Key::Gateway(format!("{ns}/{name}")));
                    }
                }
            }
        }
        keys
    }

    /// A Service added or deleted: the routes with a backend naming it.
    pub fn on_service(&self, change: &Change<Service>) -> Vec<Key> {
        let svc = match change {
            Change::Added(s) | Change::Deleted(s) => s,
            Change::Updated { old, new } if old.metadata.uid != new.metadata.uid => new,
            Change::Updated { .. } => return Vec::new(),
        };
        let (Some(svc_ns), Some(svc_name)) =
            (svc.metadata.namespace.as_deref(), svc.metadata.name.as_deref())
        else {
            return Vec::new();
        };
        self.routes
            .list()
            .iter()
            .filter(|r| {
                let route_ns = r.metadata.namespace.as_deref().unwrap_or("");
                r.spec
                    .rules
                    .iter()
                    .flat_map(|rule| &rule.backend_refs)
                    .any(|b| b.name == svc_name && b.namespace.as_deref().unwrap_or(route_ns) == svc_ns)
            })
            .map(|r| Key::Route(key_of(&r.metadata)))
            .collect()
    }
}
