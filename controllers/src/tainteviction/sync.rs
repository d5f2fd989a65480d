//! One pod's sync: schedule, cancel or carry out its eviction. The IO around [`super::plan`].
//!
//! Upstream: `pkg/controller/tainteviction/taint_eviction.go` (`handlePodUpdate`,
//! `handleNodeUpdate`, `processPodOnNode`, `deletePodHandler`, `addConditionAndDeletePod`, the
//! two events) and `timed_workers.go` (the scheduled evictions).
//!
//! ```text
//! sync_pod(key)
//!   pod gone, or not bound           → cancel (event "Cancelling deletion of Pod ns/name" if pending); Done
//!   node gone                        → a pending eviction still fires (as upstream); else Done
//!   decision = process_pod_on_node(node's NoExecute taints, pod's tolerations, scheduled, now)
//!     Cancel                         → cancel (event if pending); Done
//!     Keep                           → Done
//!     EvictNow                       → cancel (event if pending); evict
//!     EvictAt { fire_at ≤ now }      → evict
//!     EvictAt { fire_at > now }      → remember it; RequeueAfter(fire_at − now)
//!   evict: event TaintManagerEviction "Marking for deletion Pod ns/name",
//!          GET the pod, add DisruptionTarget=True (DeletionByTaintManager) to its status,
//!          DELETE it (its own grace period); remember it as fired
//! ```
//!
//! Simplified against upstream: the scheduled evictions are a map read by the pod's own sync and
//! timed by the work queue's `RequeueAfter`, not a timer per pod; pods are keyed by
//! `namespace/name`, not sharded over eight workers by node; a failed eviction is retried with the
//! queue's backoff (upstream retries five times 10 ms apart, then waits for the next event); a pod
//! already evicted is not deleted again when a new untolerated taint arrives.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod, PodCondition};
use store::Clock;

use super::plan::{Decision, Scheduled, no_execute_taints, process_pod_on_node};
use crate::nodelifecycle::pods::update_pod_condition;
use crate::runtime::client::{Client, ClientError, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, clock_now, split_key};

/// Event reason of a scheduled or cancelled eviction (upstream `TaintManagerEviction`).
pub const TAINT_MANAGER_EVICTION: &str = "TaintManagerEviction";
/// Pod condition type set before the deletion (upstream `v1.DisruptionTarget`).
pub const DISRUPTION_TARGET: &str = "DisruptionTarget";
/// Reason of that condition.
pub const DELETION_BY_TAINT_MANAGER: &str = "DeletionByTaintManager";
/// Message of that condition.
pub const DELETION_BY_TAINT_MANAGER_MESSAGE: &str = "Taint manager: deleting due to NoExecute taint";

/// Everything one sync reads and writes.
pub struct TaintEvictionSync {
    pods_api: Typed<Pod>,
    nodes: Store<Node>,
    pods: Store<Pod>,
    recorder: Recorder,
    clock: Clock,
    /// The evictions scheduled or done, by pod key (upstream `taintEvictionQueue`). A std mutex,
    /// held for one map operation, never across an `.await`; one worker syncs a pod at a time.
    scheduled: Mutex<HashMap<String, Scheduled>>,
}

impl TaintEvictionSync {
    /// A syncer over the given caches, writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        nodes: Store<Node>,
        pods: Store<Pod>,
    ) -> Self {
        TaintEvictionSync {
            pods_api: Typed::new(client),
            nodes,
            pods,
            recorder,
            clock,
            scheduled: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Scheduled>> {
        // Each holder leaves the map consistent, so a poisoned lock is usable.
        self.scheduled.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The eviction scheduled for the pod `key`, if any.
    pub fn scheduled(&self, key: &str) -> Option<Scheduled> {
        self.lock().get(key).copied()
    }

    /// Upstream `handlePodUpdate` + the timed worker: brings the pod `key`'s eviction in line with
    /// its node's taints.
    pub async fn sync_pod(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let scheduled = self.scheduled(key);
        let Some(pod) = self.pods.get_by_key(key) else {
            self.cancel(key, ns, name);
            return Ok(Action::Done);
        };
        let Some(node_name) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) else {
            self.cancel(key, ns, name);
            return Ok(Action::Done);
        };
        let now = clock_now(&self.clock)?;
        let decision = match self.nodes.get(None, node_name) {
            Some(node) => {
                let tolerations = pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.tolerations.as_deref())
                    .unwrap_or_default();
                process_pod_on_node(&no_execute_taints(&node), tolerations, scheduled, now)
            }
            // Upstream forgets the node's taints but not the evictions already scheduled.
            None => match scheduled {
                Some(Scheduled::Pending { created_at, fire_at }) => Decision::EvictAt { created_at, fire_at },
                _ => Decision::Keep,
            },
        };
        match decision {
            Decision::Cancel => self.cancel(key, ns, name),
            Decision::Keep => {}
            Decision::EvictNow => {
                self.cancel(key, ns, name);
                self.evict(key, ns, name).await?;
            }
            Decision::EvictAt { fire_at, .. } if fire_at <= now => self.evict(key, ns, name).await?,
            Decision::EvictAt { created_at, fire_at } => {
                self.lock()
                    .insert(key.to_owned(), Scheduled::Pending { created_at, fire_at });
                let wait = Duration::try_from(fire_at.duration_since(now)).unwrap_or_default();
                return Ok(Action::RequeueAfter(wait));
            }
        }
        Ok(Action::Done)
    }

    /// Upstream `cancelWorkWithEvent`: forgets the pod's eviction; a pending one is reported.
    fn cancel(&self, key: &str, ns: Option<&str>, name: &str) {
        if let Some(Scheduled::Pending { .. }) = self.lock().remove(key) {
            let message = format!("Cancelling deletion of Pod {key}");
            self.recorder.record(
                &pod_ref(ns, name),
                EventType::Normal,
                TAINT_MANAGER_EVICTION,
                &message,
            );
        }
    }

    /// Upstream `deletePodHandler` / `addConditionAndDeletePod`.
    async fn evict(&self, key: &str, ns: Option<&str>, name: &str) -> Result<(), ClientError> {
        let message = format!("Marking for deletion Pod {key}");
        self.recorder.record(
            &pod_ref(ns, name),
            EventType::Normal,
            TAINT_MANAGER_EVICTION,
            &message,
        );
        let now = clock_now(&self.clock).map_err(|e| ClientError::transport(e.to_string()))?;
        let mut pod = match self.pods_api.get(ns, name).await {
            Ok(pod) => pod,
            Err(e) if e.is_not_found() => {
                self.lock().insert(key.to_owned(), Scheduled::Fired);
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let target = PodCondition {
            type_: DISRUPTION_TARGET.into(),
            status: "True".into(),
            reason: Some(DELETION_BY_TAINT_MANAGER.into()),
            message: Some(DELETION_BY_TAINT_MANAGER_MESSAGE.into()),
            ..PodCondition::default()
        };
        let status = pod.status.get_or_insert_with(Default::default);
        if update_pod_condition(status, target, now) {
            self.pods_api.update_status(&pod).await?;
        }
        match self.pods_api.delete(ns, name).await {
            Err(e) if !e.is_not_found() => return Err(e),
            _ => {}
        }
        self.lock().insert(key.to_owned(), Scheduled::Fired);
        Ok(())
    }
}

/// The reference of a pod's Events (upstream leaves the uid out).
fn pod_ref(ns: Option<&str>, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "Pod".into(),
        namespace: ns.map(str::to_owned),
        name: name.into(),
        uid: String::new(),
        field_path: None,
    }
}
