//! One Deployment sync, with I/O: read the caches, claim ReplicaSets, plan, apply.
//!
//! Upstream: `pkg/controller/deployment/deployment_controller.go` (`syncDeployment`,
//! `getReplicaSetsForDeployment`, `getPodMapForDeployment`) and the write half of `sync.go`,
//! `rolling.go` and `recreate.go` (`scaleReplicaSet`, the creates in `getNewReplicaSet`, the status
//! updates), plus `controller_ref_manager.go` (`ClaimReplicaSets`, `RecheckDeletionTimestamp`).
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

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use store::Clock;

use super::plan::{self, CreateConflict, Plan, on_create_conflict, on_create_failure, plan_rollout};
use super::util::REVISION_ANNOTATION;
use crate::replicaset::pod_util::{
    adopt_patch, get_controller_of, new_controller_ref, release_patch, selector_matches,
};
use crate::runtime::informer::{NAMESPACE_INDEX, OWNER_INDEX, key_of};
use crate::runtime::{
    Action, Client, ClientError, EventType, ObjectRef, PatchType, ReconcileError, Recorder, Store, Typed,
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
        let rs_list = if selects_everything(&d) {
            Vec::new()
        } else {
            self.claim_replica_sets(&d).await?
        };
        let pods = self.pods_of(&rs_list);
        let now = self.now()?;
        let plan = plan_rollout(&d, &rs_list, &pods, now)
            .map_err(|e| ReconcileError::terminal(format!("deployment {key}: {e}")))?;
        Applier::new(self, d, rs_list, now).apply(plan).await
    }

    /// The clock's time, read once per sync.
    fn now(&self) -> Result<Timestamp, ReconcileError> {
        Timestamp::try_from(self.clock.now()).map_err(|e| ReconcileError::retryable(e.to_string()))
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

    fn event(&self, d: &Deployment, type_: EventType, reason: &str, message: &str) {
        self.recorder.record(&ObjectRef::of(d), type_, reason, message);
    }

    // --- claiming (ClaimReplicaSets) ----------------------------------------------------------------

    /// Upstream `getReplicaSetsForDeployment`: the ReplicaSets of `d`'s namespace that `d` controls
    /// after adopting matching orphans and releasing controlled ones that stopped matching.
    async fn claim_replica_sets(&self, d: &Deployment) -> Result<Vec<ReplicaSet>, ReconcileError> {
        let namespace = d.metadata.namespace.as_deref().unwrap_or("");
        let selector = d.spec.as_ref().map(|s| s.selector.clone()).unwrap_or_default();
        let mut recheck = Recheck::NotYet;
        let mut claimed = Vec::new();
        for rs in self.replicasets.by_index(NAMESPACE_INDEX, namespace) {
            match claim_decision(&d.metadata, &rs.metadata, &selector) {
                Claim::Keep => claimed.push(ReplicaSet::clone(&rs)),
                Claim::Adopt => {
                    self.recheck_can_adopt(d, &mut recheck).await?;
                    claimed.extend(self.adopt(d, &rs).await?);
                }
                Claim::Release => self.release(d, &rs).await?,
                Claim::Ignore => {}
            }
        }
        Ok(claimed)
    }

    /// Upstream `RecheckDeletionTimestamp`: before the first adoption, make sure (with a live GET,
    /// not the cache) that `d` is still the same object and is not being deleted.
    async fn recheck_can_adopt(&self, d: &Deployment, recheck: &mut Recheck) -> Result<(), ReconcileError> {
        if *recheck == Recheck::Done {
            return Ok(());
        }
        let (ns, name) = (d.metadata.namespace.as_deref(), name_of(&d.metadata));
        let fresh = self.deployments_api.get(ns, name).await?;
        if fresh.metadata.uid != d.metadata.uid {
            let msg = format!(
                "original Deployment {} is gone: its uid changed",
                key_of(&d.metadata)
            );
            return Err(ReconcileError::retryable(msg));
        }
        if fresh.metadata.deletion_timestamp.is_some() {
            let msg = format!("{} is being deleted; not adopting", key_of(&d.metadata));
            return Err(ReconcileError::retryable(msg));
        }
        *recheck = Recheck::Done;
        Ok(())
    }

    /// Patches `d`'s controller reference into the orphan `rs`; the adopted ReplicaSet, or `None`
    /// when it is gone.
    async fn adopt(&self, d: &Deployment, rs: &ReplicaSet) -> Result<Option<ReplicaSet>, ReconcileError> {
        let owner = new_controller_ref(&d.metadata, "apps/v1", "Deployment");
        let patch = adopt_patch(&owner, rs.metadata.uid.as_deref().unwrap_or(""));
        let ns = rs.metadata.namespace.as_deref();
        let result = self
            .replicasets_api
            .patch(ns, name_of(&rs.metadata), PatchType::Strategic, patch)
            .await;
        match result {
            Ok(adopted) => Ok(Some(adopted)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes `d`'s controller reference from `rs`, which no longer matches the selector.
    async fn release(&self, d: &Deployment, rs: &ReplicaSet) -> Result<(), ReconcileError> {
        let owner_uid = d.metadata.uid.as_deref().unwrap_or("");
        let patch = release_patch(owner_uid, rs.metadata.uid.as_deref().unwrap_or(""));
        let ns = rs.metadata.namespace.as_deref();
        let result = self
            .replicasets_api
            .patch(ns, name_of(&rs.metadata), PatchType::Strategic, patch)
            .await;
        match result {
            Ok(_) => Ok(()),
            // Gone, or already changed beyond recognition: nothing left to release.
            Err(e) if e.is_not_found() || e.reason == "Invalid" => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Whether the one-GET adoption re-check has happened in this sync.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Recheck {
    NotYet,
    Done,
}

/// What a Deployment does with one ReplicaSet of its namespace (upstream `ClaimObject`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Controlled by the Deployment and matching.
    Keep,
    /// A matching orphan: adopt it.
    Adopt,
    /// Controlled by the Deployment but no longer matching: release it.
    Release,
    /// Someone else's, or not a candidate.
    Ignore,
}

/// Upstream `ClaimObject`'s decision for a ReplicaSet, by controller reference and selector
/// (the same rules as [`crate::replicaset::pod_util::claim_decision`] for pods).
pub fn claim_decision(owner: &ObjectMeta, rs: &ObjectMeta, selector: &LabelSelector) -> Claim {
    let owner_uid = owner.uid.as_deref().unwrap_or("");
    let owner_deleting = owner.deletion_timestamp.is_some();
    let matches = selector_matches(selector, rs.labels.as_ref());
    match get_controller_of(rs) {
        Some(r) if r.uid != owner_uid => Claim::Ignore,
        Some(_) if matches => Claim::Keep,
        Some(_) if owner_deleting => Claim::Ignore,
        Some(_) => Claim::Release,
        None if owner_deleting || !matches || rs.deletion_timestamp.is_some() => Claim::Ignore,
        None if owner.namespace != rs.namespace => Claim::Ignore,
        None => Claim::Adopt,
    }
}

/// `spec.selector` is `{}` (upstream compares it with an empty `LabelSelector`).
fn selects_everything(d: &Deployment) -> bool {
    let Some(spec) = d.spec.as_ref() else {
        return false;
    };
    let sel = &spec.selector;
    sel.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && sel.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

fn name_of(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn meta(ns: &str, uid: &str, labels: &[(&str, &str)], owner: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            namespace: Some(ns.to_string()),
            uid: Some(uid.to_string()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            owner_references: owner.map(|uid| {
                vec![OwnerReference {
                    uid: uid.to_string(),
                    controller: Some(true),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        }
    }

    fn app_web() -> LabelSelector {
        LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            ..Default::default()
        }
    }

    #[test]
    fn claim_keeps_adopts_releases_and_ignores() {
        let d = meta("default", "d1", &[], None);
        let web = [("app", "web")];
        let db = [("app", "db")];
        let sel = app_web();
        assert_eq!(
            claim_decision(&d, &meta("default", "r", &web, Some("d1")), &sel),
            Claim::Keep
        );
        assert_eq!(
            claim_decision(&d, &meta("default", "r", &web, None), &sel),
            Claim::Adopt
        );
        assert_eq!(
            claim_decision(&d, &meta("default", "r", &db, Some("d1")), &sel),
            Claim::Release
        );
        assert_eq!(
            claim_decision(&d, &meta("default", "r", &web, Some("x")), &sel),
            Claim::Ignore
        );
        assert_eq!(
            claim_decision(&d, &meta("default", "r", &db, None), &sel),
            Claim::Ignore
        );
        assert_eq!(
            claim_decision(&d, &meta("other", "r", &web, None), &sel),
            Claim::Ignore
        );
    }

    #[test]
    fn a_deleting_deployment_neither_adopts_nor_releases() {
        let mut d = meta("default", "d1", &[], None);
        d.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            Timestamp::UNIX_EPOCH,
        ));
        let sel = app_web();
        assert_eq!(
            claim_decision(&d, &meta("default", "r", &[("app", "web")], None), &sel),
            Claim::Ignore
        );
        assert_eq!(
            claim_decision(&d, &meta("default", "r", &[("app", "db")], Some("d1")), &sel),
            Claim::Ignore
        );
    }
}
