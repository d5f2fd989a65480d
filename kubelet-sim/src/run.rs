//! The simulated kubelet's run loop: register the nodes, keep them alive,
//! and drive every pod bound to them through [`crate::lifecycle::next`].
//!
//! Upstream: `pkg/kubelet/kubelet_node_status.go` (`registerWithAPIServer`,
//! `updateNodeStatus`), `pkg/kubelet/nodestatus/setters.go` (the condition
//! heartbeat), `pkg/kubelet/nodelease` and
//! `staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go`
//! (the Lease renewal), `pkg/kubelet/kubelet.go` (`syncPod`, `HandlePodAdditions`)
//! and `pkg/kubelet/status/status_manager.go` (`syncPod`: status writes and
//! the final delete with grace period 0).
//!
//! ```text
//! start:        for each node: create Node (or refresh it after a restart), create/renew Lease,
//!               record the Node's start Events (in `default`, as for every cluster-scoped object)
//! every 10 s:   for each node: Node status heartbeat, Lease renewTime
//! pod informer ── pod bound to one of our nodes ──▶ queue (key namespace/name)
//! node informer ── our node's `sim.miniplane.dev/heartbeat` turned `stopped` ──▶ node stopped
//!               ── annotation gone (or another value) on a stopped node ──▶ heartbeat now,
//!                  queue every pod bound to the node
//! stopped node: no heartbeat, no Lease renewal, its pods' syncs do nothing
//! worker: not started and a PersistentVolumeClaim not bound yet → look again in 1 s
//!         step = lifecycle::next(pod, Behaviour::for_pod(pod, seed), now)
//!         write step.status (status subresource), record step.events,
//!         delete with grace 0 when step.delete_after is due,
//!         look again after step.requeue_after
//! ```
//!
//! One `Kubelet` serves several nodes, as if each had its own kubelet, and
//! adopts the Nodes users create with the annotation [`crate::node::SIMULATED`]
//! (with [`Kubelet::with_node_informer`]). Each
//! node's kubelet can be stopped and started again with the Node annotation
//! [`crate::node::HEARTBEAT`] (see [`crate::node`]); without the node informer
//! ([`Kubelet::with_node_informer`]) the annotation is still read on every
//! heartbeat's GET of the Node, one heartbeat period late.
//!
//! Simplified: the node status is written on every heartbeat (upstream
//! skips unchanged statuses until `nodeStatusReportFrequency`); a Node
//! deleted while the kubelet runs is not registered again; the delete
//! carries no UID precondition; no pod admission (every bound pod is
//! started), no volumes mounted (a pod only waits until its claims are
//! bound, each read with a GET, not an informer), no probes beyond what [`crate::lifecycle`]
//! simulates; `kubectl logs` is answered by the API server itself, not
//! through the kubelet.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use controllers::runtime::informer::{Delivered, NODE_INDEX};
use controllers::runtime::{
    Action, BoxFuture, Change, Client, ClientError, ClientResult, DeleteParams, Informer, ObjectRef,
    ReconcileError, Reconciler, Recorder, ResourceRef, Store, Typed, WorkQueue, clock_now, run_workers,
};
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use store::Clock;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::behaviour::Behaviour;
use crate::lifecycle::{self, SimEvent};
use crate::node::{
    Capacity, NODE_LEASE_NAMESPACE, adoptable, heartbeat, heartbeat_stopped, lease_object, node_object,
    renew_lease, start_events, status_change_events,
};
use crate::status_cache::WrittenStatuses;

/// The component name of the kubelet's Events.
pub const COMPONENT: &str = "kubelet";
/// How often the node status and the Lease are refreshed (kubelet
/// `nodeStatusUpdateFrequency`, and a quarter of the Lease duration).
pub const HEARTBEAT_PERIOD: Duration = Duration::from_secs(10);

/// The heartbeat period in simulated time: [`HEARTBEAT_PERIOD`], but never
/// more often than once per real second. At `--time-scale 1000` ten
/// simulated seconds are 10 ms, and every node writing its status and Lease
/// a hundred times a second would crowd out everything else. The node
/// lifecycle controller, which reads the Lease's and the status's age, widens
/// its grace period at high time scales to match (at least five real seconds,
/// five of these heartbeats; `controllers::nodelifecycle`).
pub fn heartbeat_period(clock: &Clock) -> Duration {
    HEARTBEAT_PERIOD.max(Duration::from_secs(1).mul_f64(clock.scale()))
}
/// First wait before retrying a failed registration.
const REGISTER_RETRY: Duration = Duration::from_secs(1);
/// How often the registration of an adopted Node is tried before only the heartbeats go on.
const ADOPT_ATTEMPTS: u32 = 5;
/// Pods synced at the same time.
const WORKERS: usize = 4;
/// How often a pod whose claims are not bound yet is looked at again.
const VOLUME_RETRY: Duration = Duration::from_secs(1);

/// The simulated kubelet of a set of nodes: build it from the pod informer
/// (before it runs), then [`Kubelet::run`] it.
pub struct Kubelet {
    core: Arc<Core>,
    pod_changes: UnboundedReceiver<Delivered<Pod>>,
    /// Changes of the Nodes, when built [`Kubelet::with_node_informer`].
    node_changes: Option<UnboundedReceiver<Change<Node>>>,
}

/// What the worker, the heartbeat and the event handler share.
struct Core {
    client: Arc<dyn Client>,
    pods: Typed<Pod>,
    nodes: Typed<Node>,
    leases: Typed<Lease>,
    clock: Clock,
    /// The simulation's seed, for [`Behaviour::for_pod`].
    seed: u64,
    capacity: Capacity,
    /// The nodes this kubelet runs: the configured ones, plus the Nodes it adopted
    /// ([`crate::node::SIMULATED`]). A std mutex, held for one set operation, never across an
    /// `.await`.
    node_names: Mutex<BTreeSet<String>>,
    /// One recorder per node (`source.host` is the node). Locked as `node_names`.
    recorders: Mutex<HashMap<String, Recorder>>,
    pod_store: Store<Pod>,
    /// Statuses written that the informer has not shown yet.
    written: WrittenStatuses,
    queue: WorkQueue<String>,
    /// The nodes whose kubelet is stopped (annotation [`crate::node::HEARTBEAT`]). A std mutex:
    /// held for one set operation, never across an `.await`; written by the heartbeats, the
    /// registration and the node handler, read by the pod syncs.
    stopped: Mutex<BTreeSet<String>>,
}

impl Kubelet {
    /// A kubelet for the nodes `nodes`, each offering `capacity`, writing
    /// (and recording Events) through `client`, its pods' random choices
    /// drawn under `seed`. Subscribes to `pods`, which must not be running yet.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        seed: u64,
        nodes: Vec<String>,
        capacity: Capacity,
        pods: &Informer<Pod>,
    ) -> Self {
        let recorders = nodes
            .iter()
            .map(|n| {
                let recorder = Recorder::new(client.clone(), clock.clone(), COMPONENT, Some(n));
                (n.clone(), recorder)
            })
            .collect();
        let core = Core {
            pods: Typed::new(client.clone()),
            nodes: Typed::new(client.clone()),
            leases: Typed::new(client.clone()),
            client,
            queue: WorkQueue::named(clock.clone(), COMPONENT),
            clock,
            seed,
            capacity,
            node_names: Mutex::new(nodes.into_iter().collect()),
            recorders: Mutex::new(recorders),
            pod_store: pods.store(),
            written: WrittenStatuses::default(),
            stopped: Mutex::new(BTreeSet::new()),
        };
        Kubelet {
            core: Arc::new(core),
            pod_changes: pods.subscribe_caused(),
            node_changes: None,
        }
    }

    /// Also watches the Nodes (subscribing to `nodes`, which must not be running yet), so that a
    /// change of a node's [`crate::node::HEARTBEAT`] annotation stops or resumes its kubelet at
    /// once rather than at the next heartbeat, and so that Nodes created with the annotation
    /// [`crate::node::SIMULATED`] are adopted.
    pub fn with_node_informer(mut self, nodes: &Informer<Node>) -> Self {
        self.node_changes = Some(nodes.subscribe());
        self
    }

    /// Registers the nodes, then heartbeats and syncs pods until `shutdown`.
    pub async fn run(self, shutdown: CancellationToken) {
        let Kubelet {
            core,
            pod_changes,
            node_changes,
        } = self;
        let handler = tokio::spawn(handle_pod_changes(core.clone(), pod_changes, shutdown.clone()));
        tokio::select! {
            _ = shutdown.cancelled() => {}
            _ = core.register_all(&shutdown) => {
                let nodes = node_changes.map(|changes| {
                    tokio::spawn(handle_node_changes(core.clone(), changes, shutdown.clone()))
                });
                let heartbeats = tokio::spawn(core.clone().heartbeat_loop(shutdown.clone()));
                core.pod_store.wait_synced().await;
                run_workers(core.queue.clone(), core.clone(), WORKERS, shutdown.clone()).await;
                let _ = heartbeats.await;
                if let Some(nodes) = nodes {
                    let _ = nodes.await;
                }
            }
        }
        let _ = handler.await;
    }
}

/// Enqueues every pod bound to one of our nodes, on any change (the change's journal entry
/// the cause of the enqueue).
async fn handle_pod_changes(
    core: Arc<Core>,
    mut pods: UnboundedReceiver<Delivered<Pod>>,
    shutdown: CancellationToken,
) {
    loop {
        let delivered = tokio::select! {
            _ = shutdown.cancelled() => return,
            delivered = pods.recv() => delivered,
        };
        let Some(Delivered { change, event }) = delivered else {
            return;
        };
        match change {
            Change::Added(pod) | Change::Updated { new: pod, .. } => {
                store::journal::caused_by_sync(event, || core.on_pod(&pod))
            }
            // The final delete was ours, or someone force-deleted the pod.
            Change::Deleted(_) => {}
        }
    }
}

/// Stops or resumes a node's kubelet when its [`crate::node::HEARTBEAT`] annotation changes.
/// Started once the nodes are registered, so the first changes it reads (the informer's initial
/// list) find the stopped set already filled by the registration.
async fn handle_node_changes(
    core: Arc<Core>,
    mut nodes: UnboundedReceiver<Change<Node>>,
    shutdown: CancellationToken,
) {
    loop {
        let change = tokio::select! {
            _ = shutdown.cancelled() => return,
            change = nodes.recv() => change,
        };
        match change {
            Some(Change::Added(node)) | Some(Change::Updated { new: node, .. }) => {
                let name = node.metadata.name.as_deref().unwrap_or_default();
                if !core.is_ours(name) {
                    if adoptable(&node) {
                        core.adopt(&node).await;
                    }
                    continue;
                }
                if heartbeat_stopped(&node) {
                    core.set_stopped(name, true);
                } else if core.is_stopped(name)
                    && let Err(e) = core.heartbeat(name).await
                {
                    tracing::warn!(node = %name, "resuming the node's heartbeat failed: {e}");
                }
            }
            Some(Change::Deleted(node)) => {
                if adoptable(&node) {
                    core.release(node.metadata.name.as_deref().unwrap_or_default());
                }
            }
            None => return,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each holder leaves the data consistent, so a poisoned lock is usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn node_name(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref()?.node_name.as_deref()
}

/// The clock's time as a `jiff` timestamp, for the node loops (registration, heartbeats), which
/// have no sync to fail: a time `jiff` cannot represent reads as the epoch. A pod sync uses
/// [`clock_now`] and retries instead.
fn now(clock: &Clock) -> Timestamp {
    clock_now(clock).unwrap_or_default()
}

/// `Ok(None)` for 404, so that callers can create instead.
fn found<T>(result: ClientResult<T>) -> ClientResult<Option<T>> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

impl Core {
    fn stopped(&self) -> MutexGuard<'_, BTreeSet<String>> {
        lock(&self.stopped)
    }

    /// Whether the kubelet of node `name` is stopped.
    fn is_stopped(&self, name: &str) -> bool {
        self.stopped().contains(name)
    }

    /// Marks node `name`'s kubelet stopped or running; returns whether it was stopped before.
    fn set_stopped(&self, name: &str, stopped: bool) -> bool {
        let mut set = self.stopped();
        let was = set.contains(name);
        if stopped && !was {
            tracing::info!(node = %name, "the node's kubelet stops (annotation sim.miniplane.dev/heartbeat)");
            set.insert(name.to_owned());
        } else if !stopped && was {
            tracing::info!(node = %name, "the node's kubelet resumes");
            set.remove(name);
        }
        was
    }

    /// Queues every pod bound to node `name` (a resumed kubelet syncs them all).
    fn enqueue_pods_of(&self, name: &str) {
        for pod in self.pod_store.by_index(NODE_INDEX, name) {
            self.queue.add(controllers::runtime::key_of(&pod.metadata));
        }
    }

    /// Whether node `name` is one of this kubelet's.
    fn is_ours(&self, name: &str) -> bool {
        lock(&self.node_names).contains(name)
    }

    /// This kubelet's nodes, in name order.
    fn names(&self) -> Vec<String> {
        lock(&self.node_names).iter().cloned().collect()
    }

    /// The Event recorder of node `name`.
    fn recorder(&self, name: &str) -> Option<Recorder> {
        lock(&self.recorders).get(name).cloned()
    }

    /// Adopts a Node a user created with [`crate::node::SIMULATED`]: from now on it is one of
    /// this kubelet's, registered as a kubelet registers its node (our labels added, a full
    /// status posted, keeping the capacity the user gave; the Lease; the start Events), its pods
    /// synced.
    async fn adopt(&self, node: &Node) {
        let Some(name) = node.metadata.name.clone() else {
            return;
        };
        if !lock(&self.node_names).insert(name.clone()) {
            return;
        }
        tracing::info!(node = %name, "adopting the Node (annotation sim.miniplane.dev/node)");
        let recorder = Recorder::new(self.client.clone(), self.clock.clone(), COMPONENT, Some(&name));
        lock(&self.recorders).insert(name.clone(), recorder);
        let mut fresh = node_object(&name, &self.capacity, now(&self.clock));
        if let (Some(theirs), Some(ours)) = (node.status.as_ref(), fresh.status.as_mut())
            && theirs.capacity.is_some()
        {
            ours.capacity = theirs.capacity.clone();
            ours.allocatable = theirs.allocatable.clone().or_else(|| theirs.capacity.clone());
        }
        let mut delay = REGISTER_RETRY;
        for attempt in 1..=ADOPT_ATTEMPTS {
            let registered = match self.refresh_node(&fresh).await {
                Ok(live) if heartbeat_stopped(&live) => {
                    self.set_stopped(&name, true);
                    Ok(())
                }
                Ok(live) => self.renew_lease(&name, live.metadata.uid.as_deref()).await,
                Err(e) => Err(e),
            };
            match registered {
                Ok(()) => break,
                Err(e) if e.is_not_found() => {
                    self.release(&name);
                    return;
                }
                Err(e) => {
                    tracing::warn!(node = %name, attempt, "registering the adopted Node failed: {e}");
                    self.clock.sleep(delay).await;
                    delay = (delay * 2).min(HEARTBEAT_PERIOD);
                }
            }
        }
        self.record_node(&name, &start_events(&name, now(&self.clock)));
        self.enqueue_pods_of(&name);
    }

    /// An adopted Node was deleted: no longer one of this kubelet's.
    fn release(&self, name: &str) {
        if lock(&self.node_names).remove(name) {
            lock(&self.recorders).remove(name);
            self.set_stopped(name, false);
        }
    }

    fn on_pod(&self, pod: &Pod) {
        if node_name(pod).is_some_and(|n| self.is_ours(n)) {
            self.queue.add(controllers::runtime::key_of(&pod.metadata));
        }
    }

    // -- nodes and leases ---------------------------------------------------

    /// Registers every node and its Lease, retrying until it works or
    /// `shutdown` (upstream `registerWithAPIServer` retries forever too),
    /// and records each node's start Events.
    async fn register_all(&self, shutdown: &CancellationToken) {
        for name in &self.names() {
            let mut delay = REGISTER_RETRY;
            while let Err(e) = self.register(name).await {
                tracing::warn!(node = %name, "registering the node failed: {e}; retrying in {delay:?}");
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = self.clock.sleep(delay) => {}
                }
                delay = (delay * 2).min(HEARTBEAT_PERIOD);
            }
            self.record_node(name, &start_events(name, now(&self.clock)));
        }
    }

    /// Records Events about the Node `name`. As upstream's kubelet, the
    /// reference's uid is the node's name, and with no namespace the
    /// recorder writes them to `default`.
    fn record_node(&self, name: &str, events: &[SimEvent]) {
        let Some(recorder) = self.recorder(name) else {
            return;
        };
        let node = ObjectRef {
            api_version: "v1".into(),
            kind: "Node".into(),
            namespace: None,
            name: name.into(),
            uid: name.into(),
            field_path: None,
        };
        for event in events {
            recorder.record(&node, event_type(event.type_), &event.reason, &event.message);
        }
    }

    /// Creates the Node, or brings an existing one (a restart) up to date,
    /// then creates or renews its Lease.
    async fn register(&self, name: &str) -> ClientResult<()> {
        let fresh = node_object(name, &self.capacity, now(&self.clock));
        let node = match self.nodes.create(None, &fresh).await {
            Ok(node) => node,
            Err(e) if e.is_already_exists() => self.refresh_node(&fresh).await?,
            Err(e) => return Err(e),
        };
        if heartbeat_stopped(&node) {
            self.set_stopped(name, true);
            return Ok(());
        }
        self.renew_lease(name, node.metadata.uid.as_deref()).await
    }

    /// A restart: keep the live Node (its spec may carry taints or
    /// `unschedulable`), add our labels, and post a fresh status, unless the
    /// node's kubelet is stopped ([`crate::node::HEARTBEAT`]).
    async fn refresh_node(&self, fresh: &Node) -> ClientResult<Node> {
        let name = fresh.metadata.name.as_deref().unwrap_or_default();
        let mut live = self.nodes.get(None, name).await?;
        let mut labels = live.metadata.labels.clone().unwrap_or_default();
        labels.extend(fresh.metadata.labels.clone().unwrap_or_default());
        if live.metadata.labels.as_ref() != Some(&labels) {
            live.metadata.labels = Some(labels);
            live = self.nodes.update(&live).await?;
        }
        if heartbeat_stopped(&live) {
            return Ok(live);
        }
        live.status = fresh.status.clone();
        self.nodes.update_status(&live).await
    }

    /// Renews the node's Lease, creating it when missing.
    async fn renew_lease(&self, name: &str, node_uid: Option<&str>) -> ClientResult<()> {
        let now = now(&self.clock);
        match found(self.leases.get(Some(NODE_LEASE_NAMESPACE), name).await)? {
            Some(lease) => {
                self.leases.update(&renew_lease(&lease, now)).await?;
            }
            None => {
                let lease = lease_object(name, node_uid, now);
                self.leases.create(Some(NODE_LEASE_NAMESPACE), &lease).await?;
            }
        }
        Ok(())
    }

    /// Every [`HEARTBEAT_PERIOD`]: each node's status heartbeat and Lease.
    async fn heartbeat_loop(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = self.clock.sleep(heartbeat_period(&self.clock)) => {}
            }
            for name in &self.names() {
                if let Err(e) = self.heartbeat(name).await {
                    tracing::warn!(node = %name, "node heartbeat failed: {e}");
                }
            }
        }
    }

    /// One heartbeat of one node (upstream `tryUpdateNodeStatus` + lease renew): nothing when
    /// the node's kubelet is stopped; the first after a stop also records the Events of the
    /// conditions that became healthy again and queues the node's pods.
    async fn heartbeat(&self, name: &str) -> ClientResult<()> {
        let Some(mut node) = found(self.nodes.get(None, name).await)? else {
            tracing::warn!(node = %name, "the Node is gone; not registering it again");
            return Ok(());
        };
        if heartbeat_stopped(&node) {
            self.set_stopped(name, true);
            return Ok(());
        }
        let now = now(&self.clock);
        let status = heartbeat(&node, now);
        let events = status_change_events(name, &node, &status, now);
        node.status = Some(status);
        let node = self.nodes.update_status(&node).await?;
        self.record_node(name, &events);
        self.renew_lease(name, node.metadata.uid.as_deref()).await?;
        if self.set_stopped(name, false) {
            self.enqueue_pods_of(name);
        }
        Ok(())
    }

    // -- pods -----------------------------------------------------------------

    /// One sync of one pod (upstream `syncPod` + the status manager).
    async fn sync_pod(&self, key: &str) -> Result<Action, ReconcileError> {
        let Some(cached) = self.pod_store.get_by_key(key) else {
            self.written.forget(key);
            return Ok(Action::Done);
        };
        let pod = self.written.latest(key, cached);
        let Some(node) = node_name(&pod).filter(|n| self.is_ours(n)) else {
            return Ok(Action::Done);
        };
        if self.is_stopped(node) {
            // A dead kubelet does nothing for its pods; a resumed one queues them all again.
            return Ok(Action::Done);
        }
        let started = pod.status.as_ref().is_some_and(|s| s.start_time.is_some());
        if !started && pod.metadata.deletion_timestamp.is_none() && !self.claims_bound(&pod).await? {
            // The volume manager waits until every claim of the pod is bound
            // (upstream `WaitForAttachAndMount`) before the pod starts.
            return Ok(Action::RequeueAfter(VOLUME_RETRY));
        }
        let step = lifecycle::next(
            &pod,
            &Behaviour::for_pod(&pod, self.seed),
            clock_now(&self.clock)?,
        );
        if let Some(status) = step.status {
            self.decide_backoffs(&pod, &status);
            let mut updated = (*pod).clone();
            updated.status = Some(status);
            // The kubelet owns a bound pod's status: write it without a
            // resourceVersion precondition, as upstream's status manager
            // patches it, rather than conflicting with every other write
            // (labels, the scheduler's condition) that raced the cache.
            updated.metadata.resource_version = None;
            match self.pods.update_status(&updated).await {
                Ok(written) => self.written.record(key, written),
                Err(e) if e.is_not_found() => return Ok(Action::Done),
                Err(e) => return Err(e.into()),
            }
        }
        self.record(node, &pod, &step.events);
        if step.delete_after.is_some_and(|d| d.is_zero()) {
            self.final_delete(&pod).await?;
            return Ok(Action::Done);
        }
        let wait = [step.requeue_after, step.delete_after]
            .into_iter()
            .flatten()
            .min();
        Ok(wait.map_or(Action::Done, Action::RequeueAfter))
    }

    /// Records the restart back-offs the new status starts in the causal journal.
    fn decide_backoffs(&self, pod: &Pod, status: &k8s_openapi::api::core::v1::PodStatus) {
        let old = pod.status.clone().unwrap_or_default();
        let meta = &pod.metadata;
        for message in lifecycle::backoff_decisions(&old, status) {
            let object = store::journal::ObjectRef::new(
                "Pod",
                meta.namespace.as_deref().unwrap_or(""),
                meta.name.as_deref().unwrap_or(""),
            );
            self.clock
                .decide(COMPONENT, "doBackOff", Some(object), || message);
        }
    }

    /// Whether every PersistentVolumeClaim the pod's volumes name exists and
    /// is bound to a volume.
    async fn claims_bound(&self, pod: &Pod) -> Result<bool, ClientError> {
        let volumes = pod.spec.as_ref().and_then(|s| s.volumes.as_ref());
        let claims = volumes
            .into_iter()
            .flatten()
            .filter_map(|v| v.persistent_volume_claim.as_ref());
        let api: Typed<PersistentVolumeClaim> = Typed::new(self.client.clone());
        for claim in claims {
            let bound = match found(
                api.get(pod.metadata.namespace.as_deref(), &claim.claim_name)
                    .await,
            )? {
                Some(c) => c.status.and_then(|s| s.phase).as_deref() == Some("Bound"),
                None => false,
            };
            if !bound {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn record(&self, node: &str, pod: &Pod, events: &[SimEvent]) {
        let Some(recorder) = self.recorder(node) else {
            return;
        };
        for event in events {
            let mut object = ObjectRef::of(pod);
            if let Some(path) = &event.field_path {
                object = object.with_field_path(path.clone());
            }
            recorder.record(&object, event_type(event.type_), &event.reason, &event.message);
        }
    }

    /// The status manager's last word: delete with grace period 0, which
    /// removes the pod from the API.
    async fn final_delete(&self, pod: &Pod) -> Result<(), ClientError> {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let ns = pod.metadata.namespace.as_deref();
        let resource = ResourceRef::of::<Pod>();
        match self
            .client
            .delete(&resource, ns, name, &DeleteParams::grace(0))
            .await
        {
            Err(e) if !e.is_not_found() => Err(e),
            _ => Ok(()),
        }
    }
}

fn event_type(t: lifecycle::EventType) -> controllers::runtime::EventType {
    match t {
        lifecycle::EventType::Normal => controllers::runtime::EventType::Normal,
        lifecycle::EventType::Warning => controllers::runtime::EventType::Warning,
    }
}

impl Reconciler for Core {
    type Key = String;

    fn name(&self) -> &str {
        COMPONENT
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.sync_pod(&key).await })
    }
}

#[cfg(test)]
mod stop_start_tests;
