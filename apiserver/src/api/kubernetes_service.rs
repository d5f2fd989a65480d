//! The `default/kubernetes` Service, with its Endpoints and EndpointSlice:
//! how clients inside a cluster find the API server, present on every
//! cluster from its first start.
//!
//! Upstream: `pkg/controlplane/controller/kubernetesservice/controller.go`
//! (the Service, created when missing, its ports and type corrected) and
//! `pkg/controlplane/reconcilers/` (the lease reconciler writing, through
//! `endpointsadapter.go`, the Endpoints with the `skip-mirror` label and the
//! EndpointSlice).
//!
//! ```text
//! Server::start: bootstrap (namespaces) → bind → reconcile(listen address)
//!                → every 10 s (wall clock) reconcile again, until shutdown
//! reconcile (the three at once):
//!                Service   create, or correct ports and type (targetPort = our port)
//!                Endpoints create, or correct subsets and labels
//!                EndpointSlice  create, or correct endpoints, ports and labels;
//!                          replace it when its addressType changed; delete
//!                          other slices labelled for the Service
//! ```
//!
//! Guarantees: after a start on any port, the three objects name that port
//! and the listen IP; a user who deletes or edits them sees them restored
//! within one period. Only changes are written: an idle cluster does no
//! writes for them.
//!
//! Simplified: one API server, so the endpoints are its listen address
//! (upstream: the advertise address of every API server holding a master
//! lease). That address is loopback, which upstream never advertises and
//! its Endpoints/EndpointSlice validation rejects; miniplane listens on
//! loopback only, so its validation accepts loopback addresses (see
//! `kinds/discovery.rs`). One EndpointSlice, of the listen address's family.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::read::wall;
use super::{Api, DeleteOptions, ListOptions, WriteOptions, obj};
use crate::error::{ApiResult, Reason};
use crate::kinds::core::KUBERNETES_SERVICE_IP;
use crate::kinds::sem_eq;
use crate::registry::ResourceInfo;

/// Who the API server's own writes are recorded as in managedFields.
pub const FIELD_MANAGER: &str = "kube-apiserver";
/// How often the objects are checked (upstream `EndpointInterval`), on the
/// wall clock whatever `--time-scale`.
pub const RECONCILE_PERIOD: Duration = Duration::from_secs(10);

const NAMESPACE: &str = "default";
const NAME: &str = "kubernetes";
/// The Service's port; clients connect to the ClusterIP on it.
const SERVICE_PORT: u16 = 443;
const PORT_NAME: &str = "https";
/// Keeps the EndpointSlice mirroring controller off the Endpoints.
const SKIP_MIRROR_LABEL: &str = "endpointslice.kubernetes.io/skip-mirror";
/// Ties an EndpointSlice to its Service.
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

impl Api {
    /// Creates or corrects the `default/kubernetes` Service, Endpoints and
    /// EndpointSlice so that they point at `addr`, the address this server
    /// listens on. Call it after binding, and again whenever (see
    /// [`Api::keep_kubernetes_service`]).
    pub async fn reconcile_kubernetes_service(&self, addr: SocketAddr) -> ApiResult<()> {
        // Three independent objects: written together, they share flushes.
        futures::try_join!(
            self.reconcile_service(addr.port()),
            self.reconcile_endpoints(addr),
            self.reconcile_endpoint_slice(addr),
        )?;
        Ok(())
    }

    /// Reconciles every [`RECONCILE_PERIOD`] until `shutdown`; failures are
    /// logged and tried again at the next period.
    pub async fn keep_kubernetes_service(self, addr: SocketAddr, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = wall::sleep_until(wall::after(RECONCILE_PERIOD)) => {}
            }
            if let Err(e) = self.reconcile_kubernetes_service(addr).await {
                tracing::warn!("could not update the kubernetes Service: {e}");
            }
        }
    }

    async fn reconcile_service(&self, port: u16) -> ApiResult<()> {
        let info = self.resource("", "v1", "services")?;
        let ports = json!([{
            "name": PORT_NAME, "port": SERVICE_PORT, "protocol": "TCP", "targetPort": port,
        }]);
        let Some(mut live) = self.found(&info, NAME)? else {
            let svc = json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {
                    "name": NAME, "namespace": NAMESPACE,
                    "labels": {"component": "apiserver", "provider": "kubernetes"},
                },
                "spec": {
                    "type": "ClusterIP",
                    "clusterIP": KUBERNETES_SERVICE_IP,
                    "ipFamilyPolicy": "SingleStack",
                    "sessionAffinity": "None",
                    "ports": ports,
                },
            });
            return self.create_own(&info, svc).await;
        };
        // Upstream `checkServiceFormat`: the type and the ports, nothing else.
        let spec = &live["spec"];
        if spec["type"] == "ClusterIP" && spec["ports"] == ports {
            return Ok(());
        }
        live["spec"]["type"] = json!("ClusterIP");
        live["spec"]["ports"] = ports;
        self.update_own(&info, live).await
    }

    async fn reconcile_endpoints(&self, addr: SocketAddr) -> ApiResult<()> {
        let info = self.resource("", "v1", "endpoints")?;
        let subsets = json!([{
            "addresses": [{"ip": addr.ip().to_string()}],
            "ports": [{"name": PORT_NAME, "port": addr.port(), "protocol": "TCP"}],
        }]);
        let labels = json!({SKIP_MIRROR_LABEL: "true"});
        let Some(mut live) = self.found(&info, NAME)? else {
            let endpoints = json!({
                "apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
                "subsets": subsets,
            });
            return self.create_own(&info, endpoints).await;
        };
        if sem_eq(live.get("subsets"), Some(&subsets))
            && sem_eq(live.pointer("/metadata/labels"), Some(&labels))
        {
            return Ok(());
        }
        obj::meta_mut(&mut live).insert("labels".into(), labels);
        live["subsets"] = subsets;
        self.update_own(&info, live).await
    }

    async fn reconcile_endpoint_slice(&self, addr: SocketAddr) -> ApiResult<()> {
        let info = self.resource("discovery.k8s.io", "v1", "endpointslices")?;
        let address_type = if addr.is_ipv4() { "IPv4" } else { "IPv6" };
        let endpoints = json!([{
            "addresses": [addr.ip().to_string()],
            "conditions": {"ready": true},
        }]);
        let ports = json!([{"name": PORT_NAME, "port": addr.port(), "protocol": "TCP"}]);
        let labels = json!({SERVICE_NAME_LABEL: NAME});
        // Slices labelled for the Service that are not ours go, as upstream's
        // adapter deletes them.
        let list_opts = ListOptions {
            label_selector: Some(format!("{SERVICE_NAME_LABEL}={NAME}")),
            ..ListOptions::default()
        };
        for other in self.list(&info, Some(NAMESPACE), &list_opts)?.items {
            let name = obj::name(&other);
            if name != NAME {
                self.delete_own(&info, name).await?;
            }
        }
        let live = match self.found(&info, NAME)? {
            // addressType is immutable: a slice of the other family is replaced.
            Some(live) if live["addressType"] != address_type => {
                self.delete_own(&info, NAME).await?;
                None
            }
            live => live,
        };
        let Some(mut live) = live else {
            let slice = json!({
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
                "addressType": address_type,
                "endpoints": endpoints,
                "ports": ports,
            });
            return self.create_own(&info, slice).await;
        };
        if sem_eq(live.get("endpoints"), Some(&endpoints))
            && sem_eq(live.get("ports"), Some(&ports))
            && sem_eq(live.pointer("/metadata/labels"), Some(&labels))
        {
            return Ok(());
        }
        obj::meta_mut(&mut live).insert("labels".into(), labels);
        live["endpoints"] = endpoints;
        live["ports"] = ports;
        self.update_own(&info, live).await
    }

    /// The object `default/<name>`, or `None` when there is none.
    fn found(&self, info: &ResourceInfo, name: &str) -> ApiResult<Option<Value>> {
        match self.get(info, Some(NAMESPACE), name) {
            Ok(o) => Ok(Some(o)),
            Err(e) if e.reason == Reason::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates; one created meanwhile by someone else is left for the next
    /// round to check.
    async fn create_own(&self, info: &ResourceInfo, body: Value) -> ApiResult<()> {
        match self.create(info, Some(NAMESPACE), body, &own_writes()).await {
            Err(e) if e.reason != Reason::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// Replaces the object read, with its resourceVersion as the
    /// precondition; a conflict is left for the next round.
    async fn update_own(&self, info: &ResourceInfo, body: Value) -> ApiResult<()> {
        let name = obj::name(&body).to_string();
        tracing::info!(resource = %info.plural, "resetting default/{name} of the kubernetes Service");
        match self
            .update(info, Some(NAMESPACE), &name, body, None, &own_writes())
            .await
        {
            Err(e) if e.reason != Reason::Conflict => Err(e),
            _ => Ok(()),
        }
    }

    async fn delete_own(&self, info: &ResourceInfo, name: &str) -> ApiResult<()> {
        match self
            .delete(info, Some(NAMESPACE), name, &DeleteOptions::default())
            .await
        {
            Err(e) if e.reason != Reason::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

fn own_writes() -> WriteOptions {
    WriteOptions {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..WriteOptions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn api() -> Api {
        crate::testkit::TestApi::builder().build().await
    }

    fn get(api: &Api, plural: &str) -> Value {
        let group = if plural == "endpointslices" {
            "discovery.k8s.io"
        } else {
            ""
        };
        let info = api.resource(group, "v1", plural).unwrap();
        api.get(&info, Some(NAMESPACE), NAME).unwrap()
    }

    fn rv(o: &Value) -> &str {
        o["metadata"]["resourceVersion"].as_str().unwrap()
    }

    #[tokio::test]
    async fn a_fresh_cluster_gets_the_service_endpoints_and_slice() {
        let api = api().await;
        api.reconcile_kubernetes_service("127.0.0.1:6443".parse().unwrap())
            .await
            .unwrap();
        let svc = get(&api, "services");
        assert_eq!(
            svc["metadata"]["labels"],
            json!({"component": "apiserver", "provider": "kubernetes"})
        );
        assert_eq!(svc["spec"]["clusterIP"], KUBERNETES_SERVICE_IP);
        assert_eq!(svc["spec"]["clusterIPs"], json!([KUBERNETES_SERVICE_IP]));
        assert_eq!(
            svc["spec"]["ports"],
            json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}])
        );
        assert_eq!(
            (&svc["spec"]["type"], &svc["spec"]["sessionAffinity"]),
            (&json!("ClusterIP"), &json!("None"))
        );
        assert_eq!(svc["spec"]["ipFamilyPolicy"], "SingleStack");
        assert_eq!(svc["metadata"]["managedFields"][0]["manager"], FIELD_MANAGER);
        assert!(svc["spec"].get("selector").is_none());

        let ep = get(&api, "endpoints");
        assert_eq!(
            ep["metadata"]["labels"],
            json!({"endpointslice.kubernetes.io/skip-mirror": "true"})
        );
        assert_eq!(
            ep["subsets"],
            json!([{"addresses": [{"ip": "127.0.0.1"}],
                    "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}])
        );

        let slice = get(&api, "endpointslices");
        assert_eq!(
            slice["metadata"]["labels"],
            json!({"kubernetes.io/service-name": "kubernetes"})
        );
        assert_eq!(slice["addressType"], "IPv4");
        assert_eq!(
            slice["endpoints"],
            json!([{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}])
        );
        assert_eq!(
            slice["ports"],
            json!([{"name": "https", "port": 6443, "protocol": "TCP"}])
        );
    }

    #[tokio::test]
    async fn an_unchanged_address_writes_nothing_and_a_new_one_is_followed() {
        let api = api().await;
        let first: SocketAddr = "127.0.0.1:6443".parse().unwrap();
        api.reconcile_kubernetes_service(first).await.unwrap();
        let revision = api.store().revision();
        api.reconcile_kubernetes_service(first).await.unwrap();
        assert_eq!(api.store().revision(), revision, "an idle round wrote");

        let (svc, ep) = (get(&api, "services"), get(&api, "endpoints"));
        api.reconcile_kubernetes_service("127.0.0.1:7000".parse().unwrap())
            .await
            .unwrap();
        let moved = get(&api, "services");
        assert_eq!(moved["spec"]["ports"][0]["targetPort"], 7000);
        assert_eq!(moved["metadata"]["uid"], svc["metadata"]["uid"]);
        assert_ne!(rv(&moved), rv(&svc));
        assert_eq!(get(&api, "endpoints")["subsets"][0]["ports"][0]["port"], 7000);
        assert_eq!(get(&api, "endpoints")["metadata"]["uid"], ep["metadata"]["uid"]);
        assert_eq!(get(&api, "endpointslices")["ports"][0]["port"], 7000);

        // Another family: the slice is replaced, its addressType being immutable.
        api.reconcile_kubernetes_service("[::1]:7000".parse().unwrap())
            .await
            .unwrap();
        let slice = get(&api, "endpointslices");
        assert_eq!(slice["addressType"], "IPv6");
        assert_eq!(slice["endpoints"][0]["addresses"], json!(["::1"]));
        assert_eq!(get(&api, "endpoints")["subsets"][0]["addresses"][0]["ip"], "::1");
    }

    #[tokio::test]
    async fn deleted_or_edited_objects_are_restored() {
        let api = api().await;
        let addr: SocketAddr = "127.0.0.1:6443".parse().unwrap();
        api.reconcile_kubernetes_service(addr).await.unwrap();
        let svcs = api.resource("", "v1", "services").unwrap();
        let eps = api.resource("", "v1", "endpoints").unwrap();
        let slices = api.resource("discovery.k8s.io", "v1", "endpointslices").unwrap();
        let opts = WriteOptions::default();
        let mut svc = get(&api, "services");
        svc["spec"]["ports"][0]["port"] = json!(8443);
        api.update(&svcs, Some(NAMESPACE), NAME, svc, None, &opts)
            .await
            .unwrap();
        api.delete(&eps, Some(NAMESPACE), NAME, &DeleteOptions::default())
            .await
            .unwrap();
        let stray = json!({
            "metadata": {"name": "kubernetes-extra", "labels": {SERVICE_NAME_LABEL: NAME}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.9"]}],
        });
        api.create(&slices, Some(NAMESPACE), stray, &opts).await.unwrap();

        api.reconcile_kubernetes_service(addr).await.unwrap();
        assert_eq!(get(&api, "services")["spec"]["ports"][0]["port"], 443);
        assert_eq!(get(&api, "endpoints")["subsets"][0]["ports"][0]["port"], 6443);
        let left = api
            .list(&slices, Some(NAMESPACE), &ListOptions::default())
            .unwrap()
            .items;
        let names: Vec<&str> = left.iter().map(obj::name).collect();
        assert_eq!(names, ["kubernetes"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_deleted_service_comes_back_within_a_period() {
        let api = api().await;
        let addr: SocketAddr = "127.0.0.1:6443".parse().unwrap();
        api.reconcile_kubernetes_service(addr).await.unwrap();
        let shutdown = CancellationToken::new();
        let keeper = tokio::spawn(api.clone().keep_kubernetes_service(addr, shutdown.clone()));
        let svcs = api.resource("", "v1", "services").unwrap();
        api.delete(&svcs, Some(NAMESPACE), NAME, &DeleteOptions::default())
            .await
            .unwrap();
        api.clock().sleep(RECONCILE_PERIOD / 2).await;
        assert!(api.found(&svcs, NAME).unwrap().is_none());
        // The next round (paused time skips ahead to it) creates it again.
        let mut back = None;
        for _ in 0..100 {
            back = api.found(&svcs, NAME).unwrap();
            if back.is_some() {
                break;
            }
            api.clock().sleep(Duration::from_millis(100)).await;
        }
        let back = back.expect("the Service is created again");
        assert_eq!(back["spec"]["clusterIP"], KUBERNETES_SERVICE_IP);
        shutdown.cancel();
        keeper.await.unwrap();
    }

    #[tokio::test]
    async fn no_other_service_may_take_the_kubernetes_ip() {
        let api = api().await;
        api.reconcile_kubernetes_service("127.0.0.1:6443".parse().unwrap())
            .await
            .unwrap();
        let svcs = api.resource("", "v1", "services").unwrap();
        let body = json!({
            "metadata": {"name": "web"},
            "spec": {"clusterIP": KUBERNETES_SERVICE_IP, "ports": [{"port": 80}]},
        });
        let err = api
            .create(&svcs, Some(NAMESPACE), body, &WriteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.reason, Reason::Invalid);
        assert_eq!(
            err.message,
            r#"Service "web" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated"#
        );
    }
}
