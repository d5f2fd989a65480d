//! One DaemonSet sync: the async shell around the pure files.
//!
//! Upstream: `pkg/controller/daemon/daemon_controller.go` (`syncDaemonSet`, `updateDaemonSet`,
//! `manage`, `syncNodes`, `getDaemonPods`, `updateDaemonSetStatus`, `storeDaemonSetStatus`) and
//! `update.go` (`rollingUpdate`, `constructHistory`, `snapshot`, `dedupCurHistories`,
//! `controlledHistories`, `cleanupHistory`); `RealPodControl` of `controller_utils.go` for the
//! events of a create or delete.
//!
//! ```text
//! sync_daemon_set(key)
//!   DaemonSet not in cache       → forget expectations, Done
//!   empty selector               → Warning SelectingAll, Done
//!   being deleted                → Done (its history may already be gone)
//!   construct_history            → current revision (created / deduplicated / renumbered), old ones
//!   claim pods                   → node → daemon pods
//!   expectations pending         → status only (observedGeneration not raised)
//!   manage                       → plan::manage → sync_nodes (create pinned pods, delete)
//!   expectations satisfied       → RollingUpdate: update::rolling_update → sync_nodes
//!   cleanup_history              → delete old revisions beyond revisionHistoryLimit
//!   status                       → written when a counter or observedGeneration changed
//! ```
//!
//! Simplified against upstream: the failed-pod backoff is garbage-collected at the start of each
//! sync rather than by a one-minute ticker; template errors fail the create step at once; the
//! `NamespaceTerminating` cause of a failed create is not special-cased.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::future::join_all;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;
use store::Clock;

use super::backoff::Backoff;
use super::controller::NAME;
use super::decisions;
use super::history::{self, Histories};
use super::placement::{
    DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, create_pod_template, get_template_generation, hash_label,
    replace_daemon_set_pod_node_name_node_affinity,
};
use super::plan::{self, BURST_REPLICAS, ManagePlan, NodeToDaemonPods, SELECTING_ALL_REASON};
use super::status;
use super::update;
use crate::controller_ref_manager::ControllerRefManager;
use crate::controller_utils::selector::selector_of;
use crate::controller_utils::slow_start::{SLOW_START_INITIAL_BATCH_SIZE, slow_start_batches};
use crate::controller_utils::template::pod_from_template;
use crate::runtime::client::{Client, ClientError, PatchType, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{
    Action, ControllerExpectations, ReconcileError, clock_now, decision, new_controller_ref, split_key,
};

/// Event reason of a created pod (upstream `SuccessfulCreatePodReason`).
pub const SUCCESSFUL_CREATE: &str = "SuccessfulCreate";
/// Event reason of a failed create (upstream `FailedCreatePodReason`).
pub const FAILED_CREATE: &str = "FailedCreate";
/// Event reason of a deleted pod (upstream `SuccessfulDeletePodReason`).
pub const SUCCESSFUL_DELETE: &str = "SuccessfulDelete";
/// Event reason of a failed delete (upstream `FailedDeletePodReason`).
pub const FAILED_DELETE: &str = "FailedDelete";

/// Everything one sync reads and writes.
pub struct DaemonSetsSync {
    daemonsets_api: Typed<DaemonSet>,
    pods_api: Typed<Pod>,
    revisions_api: Typed<ControllerRevision>,
    daemonsets: Store<DaemonSet>,
    pods: Store<Pod>,
    nodes: Store<Node>,
    revisions: Store<ControllerRevision>,
    /// Creations and deletions not yet seen in the pod cache, per DaemonSet key (upstream uses
    /// the counting variant here, not the UID-tracking one).
    expectations: ControllerExpectations,
    /// Events on the DaemonSet.
    recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    clock: Clock,
    /// Failed-pod deletions per `<uid>/<generation>/<node>`. A std mutex: held for one plan or
    /// lookup, never across an `.await`.
    backoff: Mutex<Backoff>,
    /// At most this many creations, and deletions, per pass (upstream `burstReplicas`).
    burst_replicas: usize,
}

impl DaemonSetsSync {
    /// A syncer over the given caches, writing through `client`.
    #[allow(clippy::too_many_arguments, reason = "one cache per watched kind")]
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        expectations: ControllerExpectations,
        daemonsets: Store<DaemonSet>,
        pods: Store<Pod>,
        nodes: Store<Node>,
        revisions: Store<ControllerRevision>,
    ) -> Self {
        DaemonSetsSync {
            daemonsets_api: Typed::new(client.clone()),
            pods_api: Typed::new(client.clone()),
            revisions_api: Typed::new(client),
            daemonsets,
            pods,
            nodes,
            revisions,
            expectations,
            recorder,
            clock,
            backoff: Mutex::new(Backoff::default()),
            burst_replicas: BURST_REPLICAS,
        }
    }

    /// The expectations this sync raises and the event handlers lower.
    pub fn expectations(&self) -> &ControllerExpectations {
        &self.expectations
    }

    fn backoff(&self) -> MutexGuard<'_, Backoff> {
        // Every operation leaves the map consistent, so a poisoned lock is usable.
        self.backoff.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Upstream `syncDaemonSet`.
    pub async fn sync_daemon_set(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(ds) = self.daemonsets.get(ns, name) else {
            self.expectations.delete_expectations(key);
            return Ok(Action::Done);
        };
        let mut nodes = self.nodes.list();
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let nodes: Vec<&Node> = nodes.iter().map(AsRef::as_ref).collect();

        let Some(spec) = ds.spec.as_ref() else {
            return Err(ReconcileError::terminal(format!("daemonset {key} has no spec")));
        };
        let selects_all = spec.selector.match_labels.as_ref().is_none_or(|m| m.is_empty())
            && spec
                .selector
                .match_expressions
                .as_ref()
                .is_none_or(|e| e.is_empty());
        if selects_all {
            self.recorder.record(
                &ObjectRef::of(ds.as_ref()),
                EventType::Warning,
                SELECTING_ALL_REASON,
                "This daemon set is selecting all pods. A non-empty selector is required.",
            );
            return Ok(Action::Done);
        }
        if ds.metadata.deletion_timestamp.is_some() {
            return Ok(Action::Done);
        }

        let (cur, old) = self.construct_history(&ds).await?;
        let hash = hash_label(&cur.metadata).to_owned();
        let claimed = self.get_daemon_pods(&ds).await?;
        let now = clock_now(&self.clock)?;

        if !self.expectations.satisfied(key) {
            let by_node = plan::get_nodes_to_daemon_pods(claimed.iter().map(AsRef::as_ref), false);
            let counts = status::calculate_counts(&ds, &nodes, &by_node, &hash, now);
            self.store_status(&ds, &counts, false).await?;
            return Ok(requeue(status::availability_requeue_after(&ds, &counts)));
        }

        let updated = self
            .update_daemon_set(&ds, key, &nodes, &claimed, &hash, &old, now)
            .await;
        let by_node = plan::get_nodes_to_daemon_pods(claimed.iter().map(AsRef::as_ref), false);
        let counts = status::calculate_counts(&ds, &nodes, &by_node, &hash, now);
        let stored = self.store_status(&ds, &counts, true).await;
        let manage_requeue = updated?;
        stored?;
        let after = [manage_requeue, status::availability_requeue_after(&ds, &counts)]
            .into_iter()
            .flatten()
            .min();
        Ok(requeue(after))
    }

    /// Upstream `updateDaemonSet`: manage, then (expectations permitting) the rolling update, then
    /// the history cleanup. Returns when to look again for a failed pod in backoff.
    #[allow(clippy::too_many_arguments, reason = "the sync's state, passed down once")]
    async fn update_daemon_set(
        &self,
        ds: &DaemonSet,
        key: &str,
        nodes: &[&Node],
        claimed: &[Arc<Pod>],
        hash: &str,
        old: &[ControllerRevision],
        now: Timestamp,
    ) -> Result<Option<Duration>, ReconcileError> {
        let by_node = plan::get_nodes_to_daemon_pods(claimed.iter().map(AsRef::as_ref), false);
        let manage = {
            let mut backoff = self.backoff();
            backoff.gc(now);
            plan::manage(ds, nodes, &by_node, hash, now, &mut backoff)
        };
        let requeue_after = manage.requeue_after;
        self.record_planned(ds, &manage);
        decision::record(&self.clock, NAME, ds, || {
            decisions::manage(ds, nodes, &by_node, hash, &manage)
        });
        self.sync_nodes(
            ds,
            key,
            &manage.pods_to_delete,
            &manage.nodes_needing_daemon_pods,
            hash,
        )
        .await?;

        if self.expectations.satisfied(key) && update::is_rolling_update(ds) {
            let rolling = update::rolling_update(ds, nodes, &by_node, hash, now)
                .map_err(|e| ReconcileError::terminal(format!("couldn't get unavailable numbers: {e}")))?;
            decision::record(&self.clock, NAME, ds, || {
                let counts = decisions::rolling_counts(ds, nodes, &by_node, hash, now);
                counts.and_then(|c| decisions::rolling_update(&c, &rolling))
            });
            self.sync_nodes(ds, key, &rolling.pods_to_delete, &rolling.nodes_to_create, hash)
                .await?;
        }

        self.cleanup_history(ds, claimed, old).await.map_err(|e| {
            ReconcileError::retryable(format!("failed to clean up revisions of DaemonSet: {e}"))
        })?;
        Ok(requeue_after)
    }

    fn record_planned(&self, ds: &DaemonSet, manage: &ManagePlan) {
        let object = ObjectRef::of(ds);
        for e in &manage.events {
            let type_ = if e.warning {
                EventType::Warning
            } else {
                EventType::Normal
            };
            self.recorder.record(&object, type_, e.reason, &e.message);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Pods
    // ---------------------------------------------------------------------------------------------

    /// Upstream `getDaemonPods`: every pod of the namespace, claimed (adopt matching orphans,
    /// release owned pods that stopped matching).
    async fn get_daemon_pods(&self, ds: &DaemonSet) -> Result<Vec<Arc<Pod>>, ReconcileError> {
        let Some(spec) = ds.spec.as_ref() else {
            return Ok(Vec::new());
        };
        let selector = selector_of(&spec.selector);
        let ns = ds.metadata.namespace.as_deref().unwrap_or("");
        let candidates = self.pods.by_index(NAMESPACE_INDEX, ns);
        ControllerRefManager::new(ds, &selector, &self.daemonsets_api, &self.pods_api)
            .claim(&candidates)
            .await
    }

    /// Upstream `syncNodes`: sets the expectations, creates pods pinned to `nodes` in slow-start
    /// batches, deletes `pods_to_delete` concurrently; returns the first error.
    async fn sync_nodes(
        &self,
        ds: &DaemonSet,
        key: &str,
        pods_to_delete: &[String],
        nodes: &[String],
        hash: &str,
    ) -> Result<(), ClientError> {
        let nodes = &nodes[..nodes.len().min(self.burst_replicas)];
        let pods_to_delete = &pods_to_delete[..pods_to_delete.len().min(self.burst_replicas)];
        self.expectations
            .set_expectations(key, nodes.len() as i64, pods_to_delete.len() as i64);

        let mut first_error = None;
        if !nodes.is_empty()
            && let Err(e) = self.create_pods(ds, key, nodes, hash).await
        {
            first_error = Some(e);
        }
        let results = join_all(pods_to_delete.iter().map(|p| self.delete_pod(ds, p))).await;
        for result in results {
            if let Err(e) = result {
                self.expectations.deletion_observed(key);
                if !e.is_not_found() && first_error.is_none() {
                    first_error = Some(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The creating half of `syncNodes`: batches of 1, 2, 4, ...; after a batch with a failure the
    /// rest are skipped and no longer expected.
    async fn create_pods(
        &self,
        ds: &DaemonSet,
        key: &str,
        nodes: &[String],
        hash: &str,
    ) -> Result<(), ClientError> {
        let template = ds
            .spec
            .as_ref()
            .map(|s| create_pod_template(&s.template, get_template_generation(ds), hash))
            .unwrap_or_default();
        let controller_ref = new_controller_ref(&ds.metadata, "apps/v1", "DaemonSet");
        let base = pod_from_template(&template, &ds.metadata, controller_ref).map_err(|e| {
            self.expectations.lower_expectations(key, nodes.len() as i64, 0);
            ClientError::new(422, "Invalid", e.to_string())
        })?;
        let mut pos = 0;
        for batch in slow_start_batches(nodes.len(), SLOW_START_INITIAL_BATCH_SIZE) {
            let chunk = &nodes[pos..pos + batch];
            pos += batch;
            let results = join_all(chunk.iter().map(|node| {
                let mut pod = base.clone();
                if let Some(spec) = pod.spec.as_mut() {
                    spec.affinity = Some(replace_daemon_set_pod_node_name_node_affinity(
                        spec.affinity.take(),
                        node,
                    ));
                }
                async move { self.create_pod(ds, &pod).await }
            }))
            .await;
            let mut error = None;
            for r in results {
                if let Err(e) = r {
                    self.expectations.creation_observed(key);
                    error.get_or_insert(e);
                }
            }
            if let Some(e) = error {
                let skipped = nodes.len() - pos;
                if skipped > 0 {
                    self.expectations.lower_expectations(key, skipped as i64, 0);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Upstream `RealPodControl.CreatePods`: one create, with its event.
    async fn create_pod(&self, ds: &DaemonSet, pod: &Pod) -> Result<(), ClientError> {
        let object = ObjectRef::of(ds);
        match self.pods_api.create(ds.metadata.namespace.as_deref(), pod).await {
            Ok(created) => {
                let name = created.metadata.name.as_deref().unwrap_or("");
                self.recorder.record(
                    &object,
                    EventType::Normal,
                    SUCCESSFUL_CREATE,
                    &format!("Created pod: {name}"),
                );
                Ok(())
            }
            Err(e) => {
                let message = format!("Error creating: {}", e.message);
                self.recorder
                    .record(&object, EventType::Warning, FAILED_CREATE, &message);
                Err(e)
            }
        }
    }

    /// Upstream `RealPodControl.DeletePod`: one delete, with its event (none if already gone).
    async fn delete_pod(&self, ds: &DaemonSet, name: &str) -> Result<(), ClientError> {
        let object = ObjectRef::of(ds);
        match self.pods_api.delete(ds.metadata.namespace.as_deref(), name).await {
            Ok(()) => {
                self.recorder.record(
                    &object,
                    EventType::Normal,
                    SUCCESSFUL_DELETE,
                    &format!("Deleted pod: {name}"),
                );
                Ok(())
            }
            Err(e) if e.is_not_found() => Err(e),
            Err(e) => {
                let message = format!("Error deleting: {}", e.message);
                self.recorder
                    .record(&object, EventType::Warning, FAILED_DELETE, &message);
                Err(e)
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // History
    // ---------------------------------------------------------------------------------------------

    /// Upstream `controlledHistories`: the namespace's revisions, claimed.
    async fn controlled_histories(
        &self,
        ds: &DaemonSet,
    ) -> Result<Vec<Arc<ControllerRevision>>, ReconcileError> {
        let Some(spec) = ds.spec.as_ref() else {
            return Ok(Vec::new());
        };
        let selector = selector_of(&spec.selector);
        let ns = ds.metadata.namespace.as_deref().unwrap_or("");
        let candidates = self.revisions.by_index(NAMESPACE_INDEX, ns);
        ControllerRefManager::new(ds, &selector, &self.daemonsets_api, &self.revisions_api)
            .claim(&candidates)
            .await
    }

    /// Upstream `constructHistory`: the current revision (created, deduplicated or renumbered as
    /// needed) and the old ones.
    async fn construct_history(
        &self,
        ds: &DaemonSet,
    ) -> Result<(ControllerRevision, Vec<ControllerRevision>), ReconcileError> {
        let mut histories: Vec<ControllerRevision> = Vec::new();
        for h in self.controlled_histories(ds).await? {
            if h.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY))
            {
                histories.push(h.as_ref().clone());
                continue;
            }
            // Revisions from before the label: label them with their name.
            let mut labelled = h.as_ref().clone();
            let name = labelled.metadata.name.clone().unwrap_or_default();
            labelled
                .metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY.to_owned(), name);
            histories.push(self.revisions_api.update(&labelled).await?);
        }
        let refs: Vec<&ControllerRevision> = histories.iter().collect();
        let Histories { current, old } = history::split_histories(ds, &refs);
        let curr_revision = history::current_revision_number(&old);
        let old: Vec<ControllerRevision> = old.into_iter().cloned().collect();
        let cur = match history::keep_current(&current) {
            None => self.snapshot(ds, curr_revision).await?,
            Some(keep) => {
                let keep = keep.clone();
                if current.len() > 1 {
                    self.dedup_cur_histories(ds, &keep, &current).await?;
                }
                if keep.revision < curr_revision {
                    let mut renumbered = keep;
                    renumbered.revision = curr_revision;
                    self.revisions_api.update(&renumbered).await?
                } else {
                    keep
                }
            }
        };
        Ok((cur, old))
    }

    /// Upstream `dedupCurHistories`: relabel the pods to the kept revision's hash, delete the other
    /// current revisions.
    async fn dedup_cur_histories(
        &self,
        ds: &DaemonSet,
        keep: &ControllerRevision,
        current: &[&ControllerRevision],
    ) -> Result<(), ReconcileError> {
        let keep_hash = hash_label(&keep.metadata).to_owned();
        for pod in self.get_daemon_pods(ds).await? {
            if hash_label(&pod.metadata) == keep_hash {
                continue;
            }
            let patch = json!({"metadata": {"labels": {DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY: keep_hash}}});
            let name = pod.metadata.name.as_deref().unwrap_or("");
            self.pods_api
                .patch(pod.metadata.namespace.as_deref(), name, PatchType::Merge, patch)
                .await?;
        }
        for h in current {
            if h.metadata.name == keep.metadata.name {
                continue;
            }
            let name = h.metadata.name.as_deref().unwrap_or("");
            match self
                .revisions_api
                .delete(h.metadata.namespace.as_deref(), name)
                .await
            {
                Err(e) if !e.is_not_found() => return Err(e.into()),
                _ => {}
            }
        }
        Ok(())
    }

    /// Upstream `snapshot`: creates the current revision; a namesake with other data is a hash
    /// collision: raise `status.collisionCount` and fail, so the retry hashes anew.
    async fn snapshot(&self, ds: &DaemonSet, revision: i64) -> Result<ControllerRevision, ReconcileError> {
        let wanted = history::snapshot(ds, revision);
        let ns = ds.metadata.namespace.as_deref();
        let outer = match self.revisions_api.create(ns, &wanted).await {
            Ok(created) => return Ok(created),
            Err(e) if e.is_already_exists() => e,
            Err(e) => return Err(e.into()),
        };
        let name = wanted.metadata.name.as_deref().unwrap_or("");
        let existing = self.revisions_api.get(ns, name).await?;
        if history::matches(ds, &existing) {
            return Ok(existing);
        }
        let ds_name = ds.metadata.name.as_deref().unwrap_or("");
        let mut current = self.daemonsets_api.get(ns, ds_name).await?;
        let ours = ds.status.as_ref().and_then(|s| s.collision_count);
        let theirs = current.status.as_ref().and_then(|s| s.collision_count);
        if ours != theirs {
            return Err(ReconcileError::retryable(format!(
                "found a stale collision count ({ours:?}, expected {theirs:?}) of DaemonSet {ds_name:?} while processing; will retry until it is updated"
            )));
        }
        let status = current.status.get_or_insert_with(Default::default);
        status.collision_count = Some(theirs.unwrap_or(0) + 1);
        self.daemonsets_api.update_status(&current).await?;
        tracing::debug!(daemonset = ds_name, "hash collision: bumped collisionCount");
        Err(outer.into())
    }

    /// Upstream `cleanupHistory`: delete old revisions beyond `revisionHistoryLimit` that no pod
    /// (terminal ones included) still names.
    async fn cleanup_history(
        &self,
        ds: &DaemonSet,
        claimed: &[Arc<Pod>],
        old: &[ControllerRevision],
    ) -> Result<(), ClientError> {
        let limit = ds
            .spec
            .as_ref()
            .and_then(|s| s.revision_history_limit)
            .unwrap_or(10);
        let by_node: NodeToDaemonPods<'_> =
            plan::get_nodes_to_daemon_pods(claimed.iter().map(AsRef::as_ref), true);
        let live: BTreeSet<&str> = by_node
            .values()
            .flatten()
            .map(|p| hash_label(&p.metadata))
            .filter(|h| !h.is_empty())
            .collect();
        let old: Vec<&ControllerRevision> = old.iter().collect();
        for h in history::cleanup_history(&old, limit, &live) {
            let name = h.metadata.name.as_deref().unwrap_or("");
            match self
                .revisions_api
                .delete(h.metadata.namespace.as_deref(), name)
                .await
            {
                Err(e) if !e.is_not_found() => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------------------
    // Status
    // ---------------------------------------------------------------------------------------------

    /// Upstream `storeDaemonSetStatus`: writes the counters (and observedGeneration) unless nothing
    /// changed; one retry on a fresh copy after a failure.
    async fn store_status(
        &self,
        ds: &DaemonSet,
        counts: &status::Counts,
        update_observed_gen: bool,
    ) -> Result<(), ClientError> {
        if status::status_up_to_date(ds, counts) {
            return Ok(());
        }
        let generation = ds.metadata.generation;
        let mut next = ds.clone();
        next.status = Some(status::apply_counts(
            ds.status.as_ref(),
            counts,
            generation,
            update_observed_gen,
        ));
        match self.daemonsets_api.update_status(&next).await {
            Ok(_) => Ok(()),
            Err(_) => {
                let name = ds.metadata.name.as_deref().unwrap_or("");
                let mut fresh = self
                    .daemonsets_api
                    .get(ds.metadata.namespace.as_deref(), name)
                    .await?;
                fresh.status = Some(status::apply_counts(
                    fresh.status.as_ref(),
                    counts,
                    generation,
                    update_observed_gen,
                ));
                self.daemonsets_api.update_status(&fresh).await.map(|_| ())
            }
        }
    }
}

fn requeue(after: Option<Duration>) -> Action {
    after.map_or(Action::Done, Action::RequeueAfter)
}
