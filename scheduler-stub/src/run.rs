//! The scheduler's run loop: watch pods and nodes, decide with
//! [`crate::schedule`], and write the result.
//!
//! Upstream: `pkg/scheduler/schedule_one.go` (`ScheduleOne`,
//! `handleSchedulingFailure`, `bind`), `pkg/scheduler/internal/queue/scheduling_queue.go`
//! (the active and unschedulable queues, `MoveAllToActiveOrBackoffQueue`),
//! `pkg/scheduler/internal/cache/cache.go` (`AssumePod`) and
//! `pkg/scheduler/eventhandlers.go`.
//!
//! ```text
//! pod informer ── pending pod added / spec changed ──────────────▶ queue
//! node informer ─ node added / schedulable-relevant change ─┐       │
//! pod informer ── bound pod deleted or finished ─────────────┴─▶ every unschedulable pod
//!                                                                   ▼
//! one worker: schedule(pod, nodes, bound + assumed pods)
//!   Bind(node)        → POST pods/NAME/binding, assume the pod, event Scheduled
//!   Unschedulable(m)  → status PodScheduled=False/Unschedulable(m), event
//!                       FailedScheduling(m), look again in 10 s
//! ```
//!
//! Simplified: one worker, so pods are scheduled one at a time, as upstream;
//! no backoff queue (an unschedulable pod is retried on a relevant cluster
//! change or every [`UNSCHEDULABLE_RETRY`]); no per-event "queueing hints"
//! beyond ignoring node heartbeats and pod status writes; no
//! `nominatedNodeName`, preemption or scheduling gates; assumed pods never
//! expire (the informer confirms or the pod goes away).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use controllers::runtime::informer::{Delivered, NODE_INDEX};
use controllers::runtime::{
    Action, BoxFuture, Change, Client, EventType, Informer, ObjectRef, ReconcileError, Reconciler, Recorder,
    ResourceRef, Store, Typed, WorkQueue, clock_now, key_of, run_workers,
};
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod, PodCondition};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;
use store::Clock;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::decide::{Decision, prefilter_rejected, schedule};
use crate::resources::is_terminal;
use crate::volumes::{ANN_SELECTED_NODE, VolumeCheck, check_claims};

/// The scheduler name this scheduler serves (`spec.schedulerName`).
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";
/// How often an unschedulable pod is tried again without any cluster change.
pub const UNSCHEDULABLE_RETRY: Duration = Duration::from_secs(10);

/// The scheduler: build it from the pod and node informers (before they
/// run), then [`Scheduler::run`] it.
pub struct Scheduler {
    core: Arc<Core>,
    pod_changes: UnboundedReceiver<Delivered<Pod>>,
    node_changes: UnboundedReceiver<Delivered<Node>>,
    /// Claim changes, once [`Scheduler::with_volumes`] was called.
    claim_changes: Option<UnboundedReceiver<Change<PersistentVolumeClaim>>>,
}

/// What the worker and the event handlers share.
struct Core {
    pods: Typed<Pod>,
    clock: Clock,
    recorder: Recorder,
    pod_store: Store<Pod>,
    node_store: Store<Node>,
    queue: WorkQueue<String>,
    state: Mutex<State>,
    /// The claim and class caches of the VolumeBinding check; unset, pods'
    /// claims are not looked at.
    volumes: std::sync::OnceLock<(Store<PersistentVolumeClaim>, Store<StorageClass>)>,
}

/// The scheduler's own memory.
#[derive(Default)]
struct State {
    /// Pods bound by this scheduler that the informer has not shown bound
    /// yet, by key, with `spec.nodeName` set (upstream's assumed pods).
    assumed: HashMap<String, Arc<Pod>>,
    /// Keys of pods whose last attempt found no node.
    unschedulable: HashSet<String>,
}

impl Scheduler {
    /// A scheduler writing through `client` and recording with `recorder`
    /// (component `default-scheduler`). Subscribes to both informers, which
    /// must not be running yet.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        pods: &Informer<Pod>,
        nodes: &Informer<Node>,
    ) -> Self {
        let core = Core {
            pods: Typed::new(client),
            queue: WorkQueue::named(clock.clone(), DEFAULT_SCHEDULER),
            clock,
            recorder,
            pod_store: pods.store(),
            node_store: nodes.store(),
            state: Mutex::new(State::default()),
            volumes: std::sync::OnceLock::new(),
        };
        Scheduler {
            core: Arc::new(core),
            pod_changes: pods.subscribe_caused(),
            node_changes: nodes.subscribe_caused(),
            claim_changes: None,
        }
    }

    /// Also checks the pods' PersistentVolumeClaims ([`crate::volumes`]):
    /// subscribes to the claim informer (a claim change retries the
    /// unschedulable pods) and reads the classes.
    pub fn with_volumes(
        mut self,
        claims: &Informer<PersistentVolumeClaim>,
        classes: &Informer<StorageClass>,
    ) -> Self {
        let _ = self.core.volumes.set((claims.store(), classes.store()));
        self.claim_changes = Some(claims.subscribe());
        self
    }

    /// Schedules pods until `shutdown` is cancelled.
    pub async fn run(self, shutdown: CancellationToken) {
        let Scheduler {
            core,
            pod_changes,
            node_changes,
            claim_changes,
        } = self;
        let handler = tokio::spawn(handle_changes(
            core.clone(),
            pod_changes,
            node_changes,
            shutdown.clone(),
        ));
        let claims =
            claim_changes.map(|c| tokio::spawn(handle_claim_changes(core.clone(), c, shutdown.clone())));
        let synced = async {
            core.pod_store.wait_synced().await;
            core.node_store.wait_synced().await;
            if let Some((claims, classes)) = core.volumes.get() {
                claims.wait_synced().await;
                classes.wait_synced().await;
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => {}
            _ = synced => run_workers(core.queue.clone(), core.clone(), 1, shutdown.clone()).await,
        }
        // The handlers stop on the same token.
        let _ = handler.await;
        if let Some(claims) = claims {
            let _ = claims.await;
        }
    }
}

/// A claim added or changed (bound, say) may let an unschedulable pod in.
async fn handle_claim_changes(
    core: Arc<Core>,
    mut claims: UnboundedReceiver<Change<PersistentVolumeClaim>>,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            change = claims.recv() => match change {
                Some(Change::Added(_) | Change::Updated { .. }) => core.retry_unschedulable(),
                Some(Change::Deleted(_)) => {}
                None => return,
            },
        }
    }
}

/// The event handlers (upstream `eventhandlers.go`): turn informer changes
/// into queue adds until shutdown or until the informers stop.
async fn handle_changes(
    core: Arc<Core>,
    mut pods: UnboundedReceiver<Delivered<Pod>>,
    mut nodes: UnboundedReceiver<Delivered<Node>>,
    shutdown: CancellationToken,
) {
    // Each change's journal entry is the cause of the keys it adds.
    use store::journal::caused_by_sync;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            Some(d) = pods.recv() => caused_by_sync(d.event, || core.on_pod(d.change)),
            Some(d) = nodes.recv() => caused_by_sync(d.event, || core.on_node(d.change)),
            else => return,
        }
    }
}

fn node_name(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .filter(|n| !n.is_empty())
}

/// Whether this scheduler should place `pod`: unbound, ours, alive.
pub fn is_pending(pod: &Pod) -> bool {
    let ours = pod
        .spec
        .as_ref()
        .and_then(|s| s.scheduler_name.as_deref())
        .is_none_or(|n| n == DEFAULT_SCHEDULER);
    ours && node_name(pod).is_none() && pod.metadata.deletion_timestamp.is_none() && !is_terminal(pod)
}

/// Whether a node change could make an unschedulable pod fit: anything
/// but a heartbeat (upstream `nodeSchedulingPropertiesChange`).
fn node_changed_for_scheduling(old: &Node, new: &Node) -> bool {
    let conditions = |n: &Node| -> Vec<(String, String)> {
        let list = n.status.as_ref().and_then(|s| s.conditions.as_ref());
        list.into_iter()
            .flatten()
            .map(|c| (c.type_.clone(), c.status.clone()))
            .collect()
    };
    let allocatable = |n: &Node| n.status.as_ref().and_then(|s| s.allocatable.clone());
    old.spec != new.spec
        || old.metadata.labels != new.metadata.labels
        || allocatable(old) != allocatable(new)
        || conditions(old) != conditions(new)
}

impl Core {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn on_pod(&self, change: Change<Pod>) {
        match change {
            Change::Added(pod) => self.on_pod_seen(&pod, None),
            Change::Updated { old, new } => self.on_pod_seen(&new, Some(&old)),
            Change::Deleted(pod) => {
                let key = key_of(&pod.metadata);
                let mut state = self.lock();
                state.assumed.remove(&key);
                state.unschedulable.remove(&key);
                drop(state);
                if node_name(&pod).is_some() {
                    self.retry_unschedulable();
                }
            }
        }
    }

    fn on_pod_seen(&self, pod: &Pod, old: Option<&Pod>) {
        let key = key_of(&pod.metadata);
        if node_name(pod).is_some() {
            // The informer confirms the bind: the cache counts it now.
            self.lock().assumed.remove(&key);
            let finished = is_terminal(pod) && !old.is_some_and(is_terminal);
            if finished {
                self.retry_unschedulable();
            }
            return;
        }
        if !is_pending(pod) {
            return;
        }
        // A status write (ours, for PodScheduled) is no reason to try again.
        let spec_changed = old.is_none_or(|o| o.spec != pod.spec || o.metadata.labels != pod.metadata.labels);
        let known_unschedulable = self.lock().unschedulable.contains(&key);
        if spec_changed || !known_unschedulable {
            self.queue.add(key);
        }
    }

    fn on_node(&self, change: Change<Node>) {
        let relevant = match &change {
            Change::Added(_) => true,
            Change::Updated { old, new } => node_changed_for_scheduling(old, new),
            Change::Deleted(_) => false,
        };
        if relevant {
            self.retry_unschedulable();
        }
    }

    /// Upstream `MoveAllToActiveOrBackoffQueue`, without the backoff.
    fn retry_unschedulable(&self) {
        let keys: Vec<String> = self.lock().unschedulable.iter().cloned().collect();
        for key in keys {
            self.queue.add(key);
        }
    }

    /// One scheduling attempt for `key` (upstream `ScheduleOne`).
    async fn schedule_one(&self, key: &str) -> Result<Action, ReconcileError> {
        let Some(pod) = self.pod_store.get_by_key(key) else {
            self.forget(key);
            return Ok(Action::Done);
        };
        if !is_pending(&pod) || self.lock().assumed.contains_key(key) {
            self.lock().unschedulable.remove(key);
            return Ok(Action::Done);
        }
        let nodes = self.node_store.list();
        let bound = self.bound_pods(&nodes);
        let node_refs: Vec<&Node> = nodes.iter().map(Arc::as_ref).collect();
        let pods_by_node: BTreeMap<String, Vec<&Pod>> = bound
            .iter()
            .map(|(node, pods)| (node.clone(), pods.iter().map(Arc::as_ref).collect()))
            .collect();
        let to_annotate = match self.check_volumes(&pod) {
            VolumeCheck::Rejected(reason) if !node_refs.is_empty() => {
                let message = prefilter_rejected(&pod, node_refs.len(), &reason);
                return self.unschedulable(key, &pod, &message).await;
            }
            VolumeCheck::Rejected(_) => Vec::new(),
            VolumeCheck::Fits { to_annotate } => to_annotate,
        };
        match schedule(&pod, &node_refs, &pods_by_node) {
            Decision::Bind(node) => {
                self.select_node(&pod, &to_annotate, &node).await?;
                self.bind(key, &pod, &node).await
            }
            Decision::Unschedulable { message } => self.unschedulable(key, &pod, &message).await,
        }
    }

    /// The VolumeBinding PreFilter over the claim and class caches.
    fn check_volumes(&self, pod: &Pod) -> VolumeCheck {
        let Some((claims, classes)) = self.volumes.get() else {
            return VolumeCheck::Fits {
                to_annotate: Vec::new(),
            };
        };
        let ns = pod.metadata.namespace.as_deref();
        check_claims(
            pod,
            |name| claims.get(ns, name).map(|c| c.as_ref().clone()),
            |name| classes.get(None, name).map(|c| c.as_ref().clone()),
        )
    }

    /// Tells each waiting claim where its pod goes (upstream's
    /// `volume.kubernetes.io/selected-node`), so that its volume is
    /// provisioned there.
    async fn select_node(&self, pod: &Pod, claims: &[String], node: &str) -> Result<(), ReconcileError> {
        let Some(client) = claims.first().map(|_| self.pods.client().clone()) else {
            return Ok(());
        };
        let api: Typed<PersistentVolumeClaim> = Typed::new(client);
        let ns = pod.metadata.namespace.as_deref();
        for name in claims {
            let patch = json!({"metadata": {"annotations": {ANN_SELECTED_NODE: node}}});
            api.patch(ns, name, controllers::runtime::PatchType::Merge, patch)
                .await?;
        }
        Ok(())
    }

    fn forget(&self, key: &str) {
        let mut state = self.lock();
        state.assumed.remove(key);
        state.unschedulable.remove(key);
    }

    /// The pods on each node: those the cache shows bound, plus the assumed
    /// ones the cache has not caught up with.
    fn bound_pods(&self, nodes: &[Arc<Node>]) -> BTreeMap<String, Vec<Arc<Pod>>> {
        let mut by_node: BTreeMap<String, Vec<Arc<Pod>>> = BTreeMap::new();
        for node in nodes {
            let name = node.metadata.name.clone().unwrap_or_default();
            let pods = self.pod_store.by_index(NODE_INDEX, &name);
            by_node.insert(name, pods);
        }
        // Assumed pods the cache now shows bound (or gone) are forgotten, so
        // the assumed set stays as small as the informer's lag.
        self.lock()
            .assumed
            .retain(|key, assumed| match self.pod_store.get_by_key(key) {
                Some(cached) if node_name(&cached).is_none() => {
                    if let Some(node) = node_name(assumed) {
                        by_node.entry(node.to_string()).or_default().push(assumed.clone());
                    }
                    true
                }
                _ => false,
            });
        by_node
    }

    /// POST the Binding; on success assume the pod and record Scheduled
    /// (upstream `bind` + `finishBinding`).
    async fn bind(&self, key: &str, pod: &Pod, node: &str) -> Result<Action, ReconcileError> {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let binding = json!({
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": name, "namespace": ns, "uid": pod.metadata.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        });
        let resource = ResourceRef::of::<Pod>();
        let client = self.pods.client();
        match client
            .create_subresource(&resource, Some(ns), name, "binding", binding)
            .await
        {
            Ok(_) => {}
            // Gone, or bound meanwhile (by another scheduler or by hand).
            Err(e) if e.is_not_found() || e.is_conflict() => return Ok(Action::Done),
            Err(e) => return Err(e.into()),
        }
        let mut assumed = pod.clone();
        assumed.spec.get_or_insert_with(Default::default).node_name = Some(node.to_string());
        let mut state = self.lock();
        state.assumed.insert(key.to_string(), Arc::new(assumed));
        state.unschedulable.remove(key);
        drop(state);
        let message = format!("Successfully assigned {ns}/{name} to {node}");
        self.recorder
            .record(&ObjectRef::of(pod), EventType::Normal, "Scheduled", &message);
        Ok(Action::Done)
    }

    /// No node fits: say so on the pod and in an Event, and look again
    /// later (upstream `handleSchedulingFailure`).
    async fn unschedulable(&self, key: &str, pod: &Pod, message: &str) -> Result<Action, ReconcileError> {
        self.lock().unschedulable.insert(key.to_string());
        self.recorder.record(
            &ObjectRef::of(pod),
            EventType::Warning,
            "FailedScheduling",
            message,
        );
        let now = clock_now(&self.clock)?;
        if let Some(updated) = with_unschedulable_condition(pod, message, now) {
            match self.pods.update_status(&updated).await {
                Ok(_) => {}
                Err(e) if e.is_not_found() => return Ok(Action::Done),
                Err(e) => return Err(ReconcileError::Client(e)),
            }
        }
        Ok(Action::RequeueAfter(UNSCHEDULABLE_RETRY))
    }
}

/// `pod` with `PodScheduled=False`, reason `Unschedulable`, `message`; `None`
/// when the pod already says exactly that.
pub fn with_unschedulable_condition(pod: &Pod, message: &str, now: jiff::Timestamp) -> Option<Pod> {
    let mut pod = pod.clone();
    let status = pod.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let existing = conditions.iter_mut().find(|c| c.type_ == "PodScheduled");
    let same = |c: &PodCondition| {
        c.status == "False"
            && c.reason.as_deref() == Some("Unschedulable")
            && c.message.as_deref() == Some(message)
    };
    if existing.as_deref().is_some_and(same) {
        return None;
    }
    let now = Time(now);
    let transition = match &existing {
        Some(c) if c.status == "False" => c.last_transition_time.clone(),
        _ => Some(now),
    };
    let condition = PodCondition {
        type_: "PodScheduled".into(),
        status: "False".into(),
        reason: Some("Unschedulable".into()),
        message: Some(message.to_string()),
        last_transition_time: transition,
        last_probe_time: None,
        ..Default::default()
    };
    match existing {
        Some(c) => *c = condition,
        None => conditions.push(condition),
    }
    Some(pod)
}

impl Reconciler for Core {
    type Key = String;

    fn name(&self) -> &str {
        DEFAULT_SCHEDULER
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { self.schedule_one(&key).await })
    }
}
