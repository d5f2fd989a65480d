//! One node's sync: its health, its conditions, its taints, its pods. The IO around the pure
//! [`super::health`], [`super::taints`] and [`super::pods`].
//!
//! Upstream: `pkg/controller/nodelifecycle/node_lifecycle_controller.go` — `monitorNodeHealth`
//! (here one node per sync instead of one pass over all nodes; the sync requeues itself every
//! monitor period), `processTaintBaseEviction`, `doNoScheduleTaintingPass`, `processPod`; and
//! `pkg/controller/util/node/controller_utils.go` (`MarkPodsNotReady`, `RecordNodeEvent`,
//! `RecordNodeStatusChange`).
//!
//! ```text
//! sync_node(name)
//!   not in cache      → RemovingNode event if it was known; forget it; Done
//!   first seen        → RegisteredNode event
//!   now               = clock_now
//!   update            = try_update_node_health(node, lease, saved health, now)
//!   update.status     → write node status (conditions Unknown); remember the transition
//!   Ready was True, is not → NodeNotReady event on the node
//!   taints            = reconcile_taints(node taints, wanted_taints(node)) → write spec.taints
//!   Ready not True    → every pod on the node with Ready True: Ready False + NodeNotReady Warning
//!   → RequeueAfter(monitor period)
//! ```
//!
//! Simplified against upstream: no zones and no disruption modes (see [`super::taints`]); the
//! node labels upstream still reconciles (beta OS/arch labels) are left alone; pods are marked not
//! ready on every sync while the node is not Ready (a pod already marked is not written again),
//! not only on the transition and for pods bound later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, NodeSpec, Pod};
use store::Clock;

use super::health::{NodeHealth, Periods, try_update_node_health};
use super::pods::{NODE_NOT_READY, NODE_NOT_READY_MESSAGE, mark_pod_not_ready};
use super::taints::{reconcile_taints, wanted_taints};
use crate::runtime::client::{Client, ClientError, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NODE_INDEX, Store};
use crate::runtime::{Action, ReconcileError, clock_now};

/// Namespace of the nodes' Leases (upstream `v1.NamespaceNodeLease`).
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// Event reason of a node first seen (upstream `RecordNodeEvent(..., "RegisteredNode", ...)`).
pub const REGISTERED_NODE: &str = "RegisteredNode";
/// Event reason of a node gone.
pub const REMOVING_NODE: &str = "RemovingNode";

/// Everything one sync reads and writes.
pub struct NodeLifecycleSync {
    nodes_api: Typed<Node>,
    pods_api: Typed<Pod>,
    nodes: Store<Node>,
    pods: Store<Pod>,
    leases: Store<Lease>,
    /// Events on nodes and pods.
    recorder: Recorder,
    clock: Clock,
    periods: Periods,
    /// Per node: what the controller last saw and when (upstream `nodeHealthMap`). A std mutex,
    /// held for one map operation, never across an `.await`; one worker syncs a node at a time.
    health: Mutex<HashMap<String, NodeHealth>>,
    /// The nodes seen, by name, with their uid (upstream `knownNodeSet`), for the
    /// RegisteredNode / RemovingNode events. Same locking as `health`.
    known: Mutex<HashMap<String, String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each holder leaves the map consistent, so a poisoned lock is usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The reference of a Node's Events (cluster-scoped: the recorder writes them to `default`).
fn node_ref(name: &str, uid: &str) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "Node".into(),
        namespace: None,
        name: name.into(),
        uid: uid.into(),
        field_path: None,
    }
}

impl NodeLifecycleSync {
    /// A syncer over the given caches, writing through `client`.
    #[allow(
        clippy::too_many_arguments,
        reason = "the caches, the client and the periods, each named"
    )]
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        periods: Periods,
        nodes: Store<Node>,
        pods: Store<Pod>,
        leases: Store<Lease>,
    ) -> Self {
        NodeLifecycleSync {
            nodes_api: Typed::new(client.clone()),
            pods_api: Typed::new(client),
            nodes,
            pods,
            leases,
            recorder,
            clock,
            periods,
            health: Mutex::new(HashMap::new()),
            known: Mutex::new(HashMap::new()),
        }
    }

    /// The periods this controller monitors with.
    pub fn periods(&self) -> &Periods {
        &self.periods
    }

    /// Upstream `monitorNodeHealth` (and `doNoScheduleTaintingPass`) for the node `name`.
    pub async fn sync_node(&self, name: &str) -> Result<Action, ReconcileError> {
        let Some(cached) = self.nodes.get(None, name) else {
            self.forget(name);
            return Ok(Action::Done);
        };
        self.observe(&cached);
        let now = clock_now(&self.clock)?;
        let lease = self.leases.get(Some(NODE_LEASE_NAMESPACE), name);
        let saved = lock(&self.health).get(name).cloned();
        let update = try_update_node_health(&cached, lease.as_deref(), saved.as_ref(), &self.periods, now);
        lock(&self.health).insert(name.to_owned(), update.health.clone());

        let mut node = Node::clone(&cached);
        if let Some(status) = &update.status {
            node.status = Some(status.clone());
            node = self.nodes_api.update_status(&node).await?;
            lock(&self.health).insert(name.to_owned(), update.written(now));
        }
        let ready = update.current_ready.as_ref().map(|c| c.status.as_str());
        if ready.is_some_and(|s| s != "True") && update.observed_ready.status == "True" {
            // Upstream `RecordNodeStatusChange`, once, on the transition.
            let uid = node.metadata.uid.as_deref().unwrap_or_default();
            let message = format!("Node {name} status is now: {NODE_NOT_READY}");
            self.recorder
                .record(&node_ref(name, uid), EventType::Normal, NODE_NOT_READY, &message);
        }
        self.reconcile_taints(node, now).await?;
        if ready.is_some_and(|s| s != "True") {
            self.mark_pods_not_ready(name, now).await?;
        }
        Ok(Action::RequeueAfter(self.periods.monitor))
    }

    /// Upstream `markNodeAsReachable` / `SwapNodeControllerTaint`: one write of `spec.taints`
    /// when the controller's taints differ from what the node's conditions call for.
    async fn reconcile_taints(&self, mut node: Node, now: Timestamp) -> Result<(), ClientError> {
        let existing = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.clone())
            .unwrap_or_default();
        let Some(taints) = reconcile_taints(&existing, &wanted_taints(&node), now) else {
            return Ok(());
        };
        node.spec.get_or_insert_with(NodeSpec::default).taints = (!taints.is_empty()).then_some(taints);
        self.nodes_api.update(&node).await?;
        Ok(())
    }

    /// Upstream `MarkPodsNotReady` for the pods bound to the node: each with Ready True gets
    /// Ready False and a `NodeNotReady` Warning. Every pod is tried; the first failure is returned.
    async fn mark_pods_not_ready(&self, name: &str, now: Timestamp) -> Result<(), ClientError> {
        let mut first_error = None;
        for pod in self.pods.by_index(NODE_INDEX, name) {
            let Some(status) = mark_pod_not_ready(&pod, now) else {
                continue;
            };
            let mut updated = Pod::clone(&pod);
            updated.status = Some(status);
            match self.pods_api.update_status(&updated).await {
                Ok(_) => self.recorder.record(
                    &ObjectRef::of(&*pod),
                    EventType::Warning,
                    NODE_NOT_READY,
                    NODE_NOT_READY_MESSAGE,
                ),
                Err(e) if e.is_not_found() => {}
                Err(e) => {
                    tracing::info!(pod = %crate::runtime::key_of(&pod.metadata), "marking the pod not ready failed: {e}");
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// A node seen for the first time (or again under a new uid): upstream's `RegisteredNode`.
    fn observe(&self, node: &Node) {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        let uid = node.metadata.uid.clone().unwrap_or_default();
        let before = lock(&self.known).insert(name.to_owned(), uid.clone());
        if before.as_ref() != Some(&uid) {
            if let Some(old_uid) = before {
                lock(&self.health).remove(name);
                self.record_node_event(name, &old_uid, REMOVING_NODE, "Removing");
            }
            self.record_node_event(name, &uid, REGISTERED_NODE, "Registered");
        }
    }

    /// A node gone: upstream's `RemovingNode`, and its health forgotten.
    fn forget(&self, name: &str) {
        lock(&self.health).remove(name);
        if let Some(uid) = lock(&self.known).remove(name) {
            self.record_node_event(name, &uid, REMOVING_NODE, "Removing");
        }
    }

    /// Upstream `RecordNodeEvent`: `Node <name> event: <Registered|Removing> Node <name> in|from Controller`.
    fn record_node_event(&self, name: &str, uid: &str, reason: &str, verb: &str) {
        let preposition = if verb == "Registered" { "in" } else { "from" };
        let message = format!("Node {name} event: {verb} Node {name} {preposition} Controller");
        self.recorder
            .record(&node_ref(name, uid), EventType::Normal, reason, &message);
    }
}
