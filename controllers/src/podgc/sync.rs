//! One garbage-collection pass: the thin async shell around [`super::plan`].
//!
//! Upstream: `pkg/controller/podgc/gc_controller.go` (`gc`, `discoverDeletedNodes`,
//! `checkIfNodeExists`, `markFailedAndDeletePodWithCondition`) and `pkg/util/pod`
//! (`PatchPodStatus`).
//!
//! ```text
//! gc()
//!   pods, nodes  = the caches; now = the clock, once
//!   1. gc_terminated (threshold > 0)       → mark Failed (if not terminal) + delete, grace 0
//!   2. gc_terminating                       → same
//!   3. orphaned_node_names → quarantine (40 s); quarantine.take_ready(now), still not cached
//!      → live GET: NotFound = deleted; gc_orphaned → Failed + DisruptionTarget, then delete
//!   4. gc_unscheduled_terminating           → same as 1
//!   → RequeueAfter(20 s), always
//! ```
//!
//! A failed write is logged and the pass goes on, as upstream: the next pass (20 s later) sees
//! what is still there and tries again. So a pass never fails: the periodic key must stay in
//! the queue.
//!
//! Simplified against upstream: the orphans of a pass are deleted concurrently (upstream one
//! after the other; the other steps are concurrent there too); no metrics; the quarantine is a
//! map of end times rather than a second delaying queue (same behaviour, see
//! [`super::quarantine`]).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::join_all;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod, PodCondition};

use super::plan;
use super::quarantine::{Quarantine, quarantine_end};
use crate::controller_utils::pods::node_name;
use crate::runtime::client::{Client, ClientError, DeleteParams, PatchType, Typed};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, clock_now, key_of};

/// How often a pass runs (upstream `gcCheckPeriod`).
pub const GC_CHECK_PERIOD: Duration = Duration::from_secs(20);

/// kube-controller-manager's `--terminated-pod-gc-threshold` default.
pub const DEFAULT_TERMINATED_POD_THRESHOLD: usize = 12500;

/// Everything a pass reads and writes.
pub struct PodGcSync {
    /// Pod calls: the status patch and the delete.
    pods_api: Typed<Pod>,
    /// The live GET of a node missing from the cache.
    nodes_api: Typed<Node>,
    pods: Store<Pod>,
    nodes: Store<Node>,
    /// The clock `now` is read from, once per pass.
    clock: store::Clock,
    /// Terminated pods kept before the oldest are deleted; 0 keeps all.
    terminated_pod_threshold: usize,
    /// Nodes missing from the cache, waiting for their live check. Only the pass touches it
    /// (one key, so one pass at a time); the lock is never held across an await.
    quarantine: Mutex<Quarantine>,
}

impl PodGcSync {
    /// A pass over the given caches, writing through `client`.
    pub fn new(client: Arc<dyn Client>, clock: store::Clock, pods: Store<Pod>, nodes: Store<Node>) -> Self {
        PodGcSync {
            pods_api: Typed::new(client.clone()),
            nodes_api: Typed::new(client),
            pods,
            nodes,
            clock,
            terminated_pod_threshold: DEFAULT_TERMINATED_POD_THRESHOLD,
            quarantine: Mutex::new(Quarantine::new()),
        }
    }

    /// Sets the terminated-pod threshold (0 turns `gc_terminated` off).
    pub fn set_terminated_pod_threshold(&mut self, threshold: usize) {
        self.terminated_pod_threshold = threshold;
    }

    /// The terminated-pod threshold in force.
    pub fn terminated_pod_threshold(&self) -> usize {
        self.terminated_pod_threshold
    }

    /// Upstream `gc`: one pass of the four collections, then the next pass in
    /// [`GC_CHECK_PERIOD`].
    pub async fn gc(&self) -> Result<Action, ReconcileError> {
        let pods = self.pods.list();
        let nodes = self.nodes.list();
        let now = match clock_now(&self.clock) {
            Ok(now) => now,
            Err(e) => {
                tracing::warn!("pod GC pass skipped: {e}");
                return Ok(Action::RequeueAfter(GC_CHECK_PERIOD));
            }
        };
        let terminated = plan::gc_terminated(&pods, self.terminated_pod_threshold);
        if !terminated.is_empty() {
            tracing::info!(count = terminated.len(), "garbage collecting terminated pods");
        }
        self.mark_failed_and_delete_all(&terminated, None, now).await;
        self.mark_failed_and_delete_all(&plan::gc_terminating(&pods, &nodes), None, now)
            .await;
        self.gc_orphaned(&pods, &nodes, now).await;
        self.mark_failed_and_delete_all(&plan::gc_unscheduled_terminating(&pods), None, now)
            .await;
        Ok(Action::RequeueAfter(GC_CHECK_PERIOD))
    }

    /// Upstream `gcOrphaned`: quarantine the unknown nodes, check the ones whose quarantine is
    /// over, and fail and delete the pods of those the API server does not have either.
    async fn gc_orphaned(&self, pods: &[Arc<Pod>], nodes: &[Arc<Node>], now: Timestamp) {
        let to_check = {
            // Not held across an await: the block ends before the GETs.
            let mut quarantine = self.quarantine.lock().unwrap_or_else(|p| p.into_inner());
            for name in plan::orphaned_node_names(pods, nodes) {
                quarantine.add_after(&name, quarantine_end(now));
            }
            quarantine.take_ready(now)
        };
        let deleted = self.discover_deleted_nodes(to_check, nodes).await;
        if deleted.is_empty() {
            return;
        }
        let orphans = plan::gc_orphaned(pods, &deleted);
        for pod in &orphans {
            let node = node_name(pod);
            tracing::info!(
                pod = key_of(&pod.metadata),
                node,
                "found orphaned pod assigned to the node, deleting"
            );
        }
        let condition = plan::orphaned_condition();
        self.mark_failed_and_delete_all(&orphans, Some(&condition), now)
            .await;
    }

    /// Upstream `discoverDeletedNodes`: of the nodes out of quarantine, those still not cached
    /// and not found by a live GET. A failed GET is logged; the node is quarantined again by a
    /// later pass if pods still name it.
    async fn discover_deleted_nodes(&self, names: Vec<String>, nodes: &[Arc<Node>]) -> BTreeSet<String> {
        let existing = plan::existing_node_names(nodes);
        let mut deleted = BTreeSet::new();
        for name in names.into_iter().filter(|n| !existing.contains(n.as_str())) {
            match self.nodes_api.get(None, &name).await {
                Ok(_) => {}
                Err(e) if e.is_not_found() => {
                    deleted.insert(name);
                }
                Err(e) => tracing::warn!(node = name, "error while getting node: {e}"),
            }
        }
        deleted
    }

    /// Marks and deletes `pods` concurrently; failures are logged (the next pass retries).
    async fn mark_failed_and_delete_all(
        &self,
        pods: &[Arc<Pod>],
        condition: Option<&PodCondition>,
        now: Timestamp,
    ) {
        let results = join_all(
            pods.iter()
                .map(|p| self.mark_failed_and_delete_pod(p, condition, now)),
        )
        .await;
        for (pod, result) in pods.iter().zip(results) {
            match result {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => tracing::warn!(
                    pod = key_of(&pod.metadata),
                    "pod GC could not delete the pod: {e}"
                ),
            }
        }
    }

    /// Upstream `markFailedAndDeletePodWithCondition`: a pod not yet terminal is patched to
    /// Failed (with `condition`) through the status subresource, then deleted with grace
    /// period 0.
    async fn mark_failed_and_delete_pod(
        &self,
        pod: &Pod,
        condition: Option<&PodCondition>,
        now: Timestamp,
    ) -> Result<(), ClientError> {
        let ns = pod.metadata.namespace.as_deref();
        let name = pod.metadata.name.as_deref().unwrap_or("");
        tracing::info!(pod = key_of(&pod.metadata), "PodGC is force deleting Pod");
        if let Some(patch) = plan::mark_failed_patch(pod, condition, now) {
            self.pods_api
                .patch_status(ns, name, PatchType::Strategic, patch)
                .await?;
        }
        let r = self.pods_api.resource();
        self.pods_api
            .client()
            .delete(r, ns, name, &DeleteParams::grace(0))
            .await
    }
}
