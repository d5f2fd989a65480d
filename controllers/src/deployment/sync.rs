//! One Deployment sync, with I/O: read the caches, claim ReplicaSets, plan, apply.
//!
//! Upstream: `pkg/controller/deployment/deployment_controller.go` (`syncDeployment`,
//! `getReplicaSetsForDeployment`, `getPodMapForDeployment`) and the write half of `sync.go`,
//! `rolling.go` and `recreate.go` (`scaleReplicaSet`, the creates in `getNewReplicaSet`, the status
//! updates). Claiming is [`crate::controller_ref_manager`]'s (`ClaimReplicaSets`).
//!
//! ```text
//! sync_deployment(key):
//!   d        ← deployment cache (gone: nothing to do)
//!   rs_list  ← claim the namespace's ReplicaSets (adopt matching orphans, release non-matching)
//!   pods     ← pods controlled by those ReplicaSets (all phases)
//!   plan     ← plan_rollout(d, rs_list, pods, clock.now())      pure, see plan.rs
//!   for step in plan: apply it through the API; the first failure ends the sync (retried)
//!   → RequeueAfter(progress deadline check) or Done
//! ```
//!
//! Every write is based on the newest copy this sync knows of the object (the cache copy, or what
//! an earlier write of the same sync returned) and carries its resourceVersion, so a sync planned on
//! stale state fails with a Conflict and is retried instead of overwriting newer state.
//!
//! Simplified: the revision annotation is written with a merge patch of `metadata` (upstream
//! folds it into a status update); adoption re-checks the Deployment with one GET per sync, like
//! upstream's `RecheckDeletionTimestamp`; "namespace is terminating" create errors are not
//! special-cased.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use apiserver::labels::Selector;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use store::Clock;

use super::controller::NAME;
use super::plan::{self, CreateConflict, Plan, on_create_conflict, on_create_failure, plan_rollout};
use super::util::REVISION_ANNOTATION;
use crate::controller_ref_manager::ControllerRefManager;
use crate::controller_utils::selector::selector_of;
use crate::runtime::decision;
use crate::runtime::informer::{NAMESPACE_INDEX, OWNER_INDEX};
use crate::runtime::{
    Action, Client, ClientError, EventType, ObjectRef, ReconcileError, Recorder, Store, Typed, clock_now,
    name_of,
};

/// Everything one sync needs: the client, the clock, the recorder and the three caches.
pub struct DeploymentSync {
    clock: Clock,
    recorder: Recorder,
    deployments_api: Typed<Deployment>,
    replicasets_api: Typed<ReplicaSet>,
    deployments: Store<Deployment>,
    replicasets: Store<ReplicaSet>,
    pods: Store<Pod>,
}

impl DeploymentSync {
    /// A syncer reading the given caches and writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        deployments: Store<Deployment>,
        replicasets: Store<ReplicaSet>,
        pods: Store<Pod>,
    ) -> Self {
        DeploymentSync {
            clock,
            recorder,
            deployments_api: Typed::new(client.clone()),
            replicasets_api: Typed::new(client),
            deployments,
            replicasets,
            pods,
        }
    }

    /// Upstream `syncDeployment` for `namespace/name`.
    pub async fn sync_deployment(&self, key: &str) -> Result<Action, ReconcileError> {
        let Some(cached) = self.deployments.get_by_key(key) else {
            // Deleted: its ReplicaSets are the garbage collector's business.
            return Ok(Action::Done);
        };
        let d = Deployment::clone(&cached);
        // An empty selector would claim every ReplicaSet of the namespace: the planner only
        // reports it, so nothing is claimed.
        let selector = d
            .spec
            .as_ref()
            .map_or_else(Selector::everything, |s| selector_of(&s.selector));
        let rs_list = if d.spec.is_some() && selector.is_empty() {
            Vec::new()
        } else {
            self.claim_replica_sets(&d, &selector).await?
        };
        let pods = self.pods_of(&rs_list);
        let now = clock_now(&self.clock)?;
        let plan = plan_rollout(&d, &rs_list, &pods, now)
            .map_err(|e| ReconcileError::terminal(format!("deployment {key}: {e}")))?;
        self.record_decisions(&d, &plan);
        Applier::new(self, d, rs_list, now).apply(plan).await
    }

    /// Every pod controlled by one of `rs_list`, including finished ones
    /// (upstream `getPodMapForDeployment`, flattened).
    fn pods_of(&self, rs_list: &[ReplicaSet]) -> Vec<Arc<Pod>> {
        rs_list
            .iter()
            .filter_map(|rs| rs.metadata.uid.as_deref())
            .flat_map(|uid| self.pods.by_index(OWNER_INDEX, uid))
            .collect()
    }

    /// Puts the plan's decisions into the causal journal, caused by this sync.
    fn record_decisions(&self, d: &Deployment, plan: &Plan) {
        decision::record(&self.clock, NAME, d, || plan.decisions.iter().cloned());
    }

    fn event(&self, d: &Deployment, type_: EventType, reason: &str, message: &str) {
        self.recorder.record(&ObjectRef::of(d), type_, reason, message);
    }

    /// Upstream `getReplicaSetsForDeployment`: the ReplicaSets of `d`'s namespace that `d` controls
    /// after adopting matching orphans and releasing controlled ones that stopped matching.
    async fn claim_replica_sets(
        &self,
        d: &Deployment,
        selector: &Selector,
    ) -> Result<Vec<ReplicaSet>, ReconcileError> {
        let namespace = d.metadata.namespace.as_deref().unwrap_or("");
        let candidates = self.replicasets.by_index(NAMESPACE_INDEX, namespace);
        let claimed = ControllerRefManager::new(d, selector, &self.deployments_api, &self.replicasets_api)
            .journal(&self.clock)
            .claim(&candidates)
            .await?;
        Ok(claimed.iter().map(|rs| ReplicaSet::clone(rs)).collect())
    }
}

// --- applying a plan ---------------------------------------------------------------------------------

/// Applies one plan's steps in order, keeping the newest copy of every object it writes.
struct Applier<'a> {
    sync: &'a DeploymentSync,
    /// The Deployment as last read or written.
    d: Deployment,
    /// The claimed ReplicaSets by name, as last read or written.
    rss: HashMap<String, ReplicaSet>,
    now: Timestamp,
    requeue_after: Option<Duration>,
}

impl<'a> Applier<'a> {
    fn new(sync: &'a DeploymentSync, d: Deployment, rs_list: Vec<ReplicaSet>, now: Timestamp) -> Self {
        let rss = rs_list
            .into_iter()
            .map(|rs| (name_of(&rs.metadata).to_string(), rs))
            .collect();
        Applier {
            sync,
            d,
            rss,
            now,
            requeue_after: None,
        }
    }

    /// Applies every step; the first failure ends the sync as an error (retried).
    async fn apply(mut self, plan: Plan) -> Result<Action, ReconcileError> {
        for step in plan.steps {
            self.apply_one(step).await?;
        }
        Ok(match self.requeue_after {
            Some(after) => Action::RequeueAfter(after),
            None => Action::Done,
        })
    }

    async fn apply_one(&mut self, step: plan::Step) -> Result<(), ReconcileError> {
        match step {
            plan::Step::CreateNewReplicaSet(rs) => self.create_replica_set(*rs).await,
            plan::Step::UpdateReplicaSet {
                name,
                annotations,
                min_ready_seconds,
            } => {
                self.write_replica_set(&name, |rs| {
                    rs.metadata.annotations = Some(annotations);
                    rs.spec.get_or_insert_with(Default::default).min_ready_seconds = min_ready_seconds;
                })
                .await
            }
            plan::Step::ScaleReplicaSet {
                name,
                replicas,
                annotations,
            } => {
                self.write_replica_set(&name, |rs| {
                    rs.metadata.annotations = Some(annotations);
                    rs.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
                })
                .await
            }
            plan::Step::DeleteReplicaSet { name } => self.delete_replica_set(&name).await,
            plan::Step::SetDeploymentRevision { revision } => self.set_revision(&revision).await,
            plan::Step::UpdateStatus(status) => self.update_status(status).await,
            plan::Step::Event {
                type_,
                reason,
                message,
            } => {
                self.sync.event(&self.d, type_, &reason, &message);
                Ok(())
            }
            plan::Step::RequeueAfter(after) => {
                self.requeue_after = Some(self.requeue_after.map_or(after, |a| a.min(after)));
                Ok(())
            }
        }
    }

    /// POSTs the new ReplicaSet; a name clash or another failure is resolved as upstream's
    /// `getNewReplicaSet` does, and ends the sync.
    async fn create_replica_set(&mut self, rs: ReplicaSet) -> Result<(), ReconcileError> {
        let ns = rs.metadata.namespace.clone();
        let name = name_of(&rs.metadata).to_string();
        match self.sync.replicasets_api.create(ns.as_deref(), &rs).await {
            Ok(created) => {
                self.rss.insert(name, created);
                Ok(())
            }
            Err(e) if e.is_already_exists() => self.on_name_taken(&name).await,
            Err(e) => self.on_create_error(&name, e).await,
        }
    }

    /// AlreadyExists: either the ReplicaSet is ours and the cache has not shown it yet, or a
    /// different template hashed to the same name (bump `collisionCount` so the next sync rehashes).
    async fn on_name_taken(&mut self, name: &str) -> Result<(), ReconcileError> {
        let ns = self.d.metadata.namespace.clone();
        let existing = self.sync.replicasets_api.get(ns.as_deref(), name).await?;
        match on_create_conflict(&self.d, &existing) {
            CreateConflict::Adopt => Err(ReconcileError::retryable(format!(
                "replica set {name} already exists; waiting for the cache to show it"
            ))),
            CreateConflict::Collision(status) => {
                self.update_status(status).await?;
                Err(ReconcileError::retryable(format!(
                    "hash collision on replica set {name}; retrying with collisionCount {}",
                    self.collision_count()
                )))
            }
        }
    }

    fn collision_count(&self) -> i32 {
        self.d
            .status
            .as_ref()
            .and_then(|s| s.collision_count)
            .unwrap_or(0)
    }

    /// Any other create error: a warning event, maybe `Progressing=False`, and a retry.
    async fn on_create_error(&mut self, name: &str, e: ClientError) -> Result<(), ReconcileError> {
        let (event, status) = on_create_failure(&self.d, name, &e.message, self.now);
        if let plan::Step::Event {
            type_,
            reason,
            message,
        } = event
        {
            self.sync.event(&self.d, type_, &reason, &message);
        }
        if let Some(status) = status {
            self.update_status(status).await?;
        }
        Err(e.into())
    }

    /// PUTs the newest copy of ReplicaSet `name` after `change` (upstream `scaleReplicaSet` and the
    /// annotation update of `getNewReplicaSet`).
    async fn write_replica_set(
        &mut self,
        name: &str,
        change: impl FnOnce(&mut ReplicaSet),
    ) -> Result<(), ReconcileError> {
        let Some(mut rs) = self.rss.get(name).cloned() else {
            return Err(ReconcileError::retryable(format!(
                "replica set {name} is not among the claimed ones"
            )));
        };
        change(&mut rs);
        let written = self.sync.replicasets_api.update(&rs).await?;
        self.rss.insert(name.to_string(), written);
        Ok(())
    }

    /// Deletes an old ReplicaSet (history cleanup); already gone counts as done.
    async fn delete_replica_set(&mut self, name: &str) -> Result<(), ReconcileError> {
        let ns = self.d.metadata.namespace.clone();
        match self.sync.replicasets_api.delete(ns.as_deref(), name).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        self.rss.remove(name);
        Ok(())
    }

    /// Writes `deployment.kubernetes.io/revision` (with the resourceVersion the
    /// plan was made from as precondition).
    async fn set_revision(&mut self, revision: &str) -> Result<(), ReconcileError> {
        // Through the status subresource, as upstream does: it keeps
        // annotation changes but, unlike the main resource, does not count
        // them as a new generation.
        let mut d = self.d.clone();
        d.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(REVISION_ANNOTATION.to_string(), revision.to_string());
        self.d = self.sync.deployments_api.update_status(&d).await?;
        Ok(())
    }

    /// PUTs the status subresource (upstream `UpdateStatus`).
    async fn update_status(&mut self, status: DeploymentStatus) -> Result<(), ReconcileError> {
        let mut d = self.d.clone();
        d.status = Some(status);
        self.d = self.sync.deployments_api.update_status(&d).await?;
        Ok(())
    }
}
