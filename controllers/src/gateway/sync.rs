//! One sync of the simulated gateway: the thin async shell around the pure
//! [`super::status`] functions.
//!
//! ```text
//! sync(key)
//!   Class(name)    not in cache, or not ours → Done
//!                  class_status → merge-patch /status when it changed
//!   Gateway(key)   not in cache, or its class absent / not ours → Done
//!                  gateway_status (listeners, addresses, attachedRoutes from the route cache)
//!                  → merge-patch /status when it changed
//!   Route(key)     not in cache → Done
//!                  parents naming Gateways of ours → route_parents (others' entries kept)
//!                  → merge-patch /status when it changed
//! ensure_class()   at start: create GatewayClass `miniplane` when absent
//! ```
//!
//! Status patches carry the object's `resourceVersion`, so a write based on
//! a stale cache fails with a conflict and is retried (the route's
//! `status.parents` list is replaced whole, with the other controllers'
//! entries in it). `now` is read once per sync. Namespace labels, needed
//! only by listeners that select route namespaces by label, are read from
//! the API (there is no Namespace informer here): a change of those labels
//! alone does not re-evaluate the routes.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};
use store::Clock;

use super::status::{self, OurParent};
use super::types::{Gateway, GatewayClass, GatewayClassSpec, HTTPRoute, HTTPRouteStatus};
use super::{CLASS_DESCRIPTION, CLASS_NAME, CONTROLLER_NAME};
use crate::runtime::client::{Client, ClientResult, PatchType, Typed};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, clock_now, split_key};

/// What the queue holds: the object to sync, by kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// A GatewayClass, by name.
    Class(String),
    /// A Gateway, `namespace/name`.
    Gateway(String),
    /// An HTTPRoute, `namespace/name`.
    Route(String),
}

/// Everything one sync reads and writes.
pub struct GatewaySync {
    classes_api: Typed<GatewayClass>,
    gateways_api: Typed<Gateway>,
    routes_api: Typed<HTTPRoute>,
    namespaces_api: Typed<Namespace>,
    classes: Store<GatewayClass>,
    gateways: Store<Gateway>,
    routes: Store<HTTPRoute>,
    services: Store<Service>,
    clock: Clock,
}

impl GatewaySync {
    /// A sync over these caches, writing through `client`.
    pub fn new(
        client: std::sync::Arc<dyn Client>,
        clock: Clock,
        classes: Store<GatewayClass>,
        gateways: Store<Gateway>,
        routes: Store<HTTPRoute>,
        services: Store<Service>,
    ) -> Self {
        GatewaySync {
            classes_api: Typed::new(client.clone()),
            gateways_api: Typed::new(client.clone()),
            routes_api: Typed::new(client.clone()),
            namespaces_api: Typed::new(client),
            classes,
            gateways,
            routes,
            services,
            clock,
        }
    }

    /// Brings the status of the object named by `key` up to date.
    pub async fn sync(&self, key: &Key) -> Result<Action, ReconcileError> {
        match key {
            Key::Class(name) => self.sync_class(name).await,
            Key::Gateway(key) => self.sync_gateway(key).await,
            Key::Route(key) => self.sync_route(key).await,
        }
    }

    /// Creates the GatewayClass [`CLASS_NAME`] unless it exists, as an
    /// implementation's install manifest would.
    pub async fn ensure_class(&self) -> ClientResult<()> {
        match self.classes_api.get(None, CLASS_NAME).await {
            Ok(_) => return Ok(()),
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
        let class = GatewayClass {
            metadata: ObjectMeta {
                name: Some(CLASS_NAME.to_string()),
                ..Default::default()
            },
            spec: GatewayClassSpec {
                controller_name: CONTROLLER_NAME.to_string(),
                description: Some(CLASS_DESCRIPTION.to_string()),
            },
            status: None,
        };
        match self.classes_api.create(None, &class).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_already_exists() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Whether the GatewayClass `name` exists and is ours.
    fn class_is_ours(&self, name: &str) -> bool {
        self.classes.get(None, name).is_some_and(|c| status::is_ours(&c))
    }

    async fn sync_class(&self, name: &str) -> Result<Action, ReconcileError> {
        let Some(class) = self.classes.get(None, name) else {
            return Ok(Action::Done);
        };
        if !status::is_ours(&class) {
            return Ok(Action::Done);
        }
        let now = clock_now(&self.clock)?;
        let new = status::class_status(&class, now);
        if class.status.as_ref().map(|s| &s.conditions) == Some(&new.conditions) {
            return Ok(Action::Done);
        }
        let patch = json!({
            "metadata": {"resourceVersion": class.metadata.resource_version},
            "status": {"conditions": new.conditions},
        });
        self.classes_api
            .patch_status(None, name, PatchType::Merge, patch)
            .await?;
        Ok(Action::Done)
    }

    async fn sync_gateway(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(gateway) = self.gateways.get(ns, name) else {
            return Ok(Action::Done);
        };
        if !self.class_is_ours(&gateway.spec.gateway_class_name) {
            return Ok(Action::Done);
        }
        let all_routes = self.routes.list();
        let routes: Vec<&HTTPRoute> = all_routes
            .iter()
            .map(|r| &**r)
            .filter(|r| {
                r.spec
                    .parent_refs
                    .iter()
                    .any(|p| status::refers_to(r, p, &gateway))
            })
            .collect();
        let ns_labels = match uses_selector(&gateway) {
            true => {
                let namespaces = routes
                    .iter()
                    .filter_map(|r| r.metadata.namespace.clone())
                    .collect();
                self.namespace_labels(namespaces).await?
            }
            false => BTreeMap::new(),
        };
        let now = clock_now(&self.clock)?;
        let new = status::gateway_status(&gateway, &routes, &ns_labels, now);
        if gateway.status.as_ref() == Some(&new) {
            return Ok(Action::Done);
        }
        let addresses = match new.addresses.is_empty() {
            true => Value::Null,
            false => json!(new.addresses),
        };
        let patch = json!({
            "metadata": {"resourceVersion": gateway.metadata.resource_version},
            "status": {
                "addresses": addresses,
                "conditions": new.conditions,
                "listeners": new.listeners,
            },
        });
        self.gateways_api
            .patch_status(ns, name, PatchType::Merge, patch)
            .await?;
        Ok(Action::Done)
    }

    async fn sync_route(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(route) = self.routes.get(ns, name) else {
            return Ok(Action::Done);
        };
        let gateways: Vec<_> = route
            .spec
            .parent_refs
            .iter()
            .filter_map(|p| {
                let (gw_ns, gw_name) = status::parent_gateway(&route, p)?;
                let gateway = self.gateways.get(Some(gw_ns), gw_name)?;
                self.class_is_ours(&gateway.spec.gateway_class_name)
                    .then_some((p, gateway))
            })
            .collect();
        let ours: Vec<OurParent<'_>> = gateways
            .iter()
            .map(|(p, g)| OurParent {
                parent_ref: p,
                gateway: g,
            })
            .collect();
        let labels = match gateways.iter().any(|(_, g)| uses_selector(g)) {
            true => {
                let namespaces = route.metadata.namespace.iter().cloned().collect();
                self.namespace_labels(namespaces).await?
            }
            false => BTreeMap::new(),
        };
        let route_labels = labels.get(ns.unwrap_or(""));
        let services = &self.services;
        let exists = |svc_ns: &str, svc: &str| services.get(Some(svc_ns), svc).is_some();
        let now = clock_now(&self.clock)?;
        let parents = status::route_parents(&route, &ours, route_labels, &exists, now);
        let old = route.status.as_ref().map_or(&[][..], |s| &s.parents);
        if old == parents.as_slice() {
            return Ok(Action::Done);
        }
        let status = HTTPRouteStatus { parents };
        let patch = json!({
            "metadata": {"resourceVersion": route.metadata.resource_version},
            "status": status,
        });
        self.routes_api
            .patch_status(ns, name, PatchType::Merge, patch)
            .await?;
        Ok(Action::Done)
    }

    /// The labels of each of `namespaces` that exists.
    async fn namespace_labels(
        &self,
        namespaces: BTreeSet<String>,
    ) -> Result<BTreeMap<String, BTreeMap<String, String>>, ReconcileError> {
        let mut labels = BTreeMap::new();
        for ns in namespaces {
            match self.namespaces_api.get(None, &ns).await {
                Ok(n) => {
                    labels.insert(ns, n.metadata.labels.unwrap_or_default());
                }
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(labels)
    }
}

/// Whether a listener of `gateway` selects route namespaces by label.
fn uses_selector(gateway: &Gateway) -> bool {
    gateway.spec.listeners.iter().any(|l| {
        l.allowed_routes
            .as_ref()
            .and_then(|a| a.pointer("/namespaces/from"))
            .and_then(Value::as_str)
            == Some("Selector")
    })
}
