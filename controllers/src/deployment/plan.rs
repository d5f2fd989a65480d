//! One Deployment sync, as a list of steps.
//!
//! Upstream: `pkg/controller/deployment/deployment_controller.go` (`syncDeployment`, after ReplicaSet
//! adoption) and `sync.go` (`getAllReplicaSetsAndSyncRevision`, `getNewReplicaSet`, `sync`,
//! `syncStatusOnly`, `isScalingEvent`), dispatching to [`super::rolling`], [`super::recreate`],
//! [`super::scale`] and [`super::status`].
//!
//! [`plan_rollout`] reads the Deployment, the ReplicaSets it owns and their pods, and returns the
//! [`Step`]s upstream would perform, in the same order. The caller (`sync.rs`) applies them one by
//! one and **stops at the first failure** (returning a retryable error), exactly where upstream's sync
//! would have returned early.
//!
//! Simplified / different from upstream:
//! * The several status writes upstream may do in one sync (paused condition, revision/`FoundNewReplicaSet`,
//!   final status) are folded into one [`Step::UpdateStatus`] at the end, issued when the result
//!   differs from the stored status.
//! * Hash collisions need the API's answer, so they are resolved by [`on_create_conflict`] when
//!   [`Step::CreateNewReplicaSet`] fails with AlreadyExists; other create errors by
//!   [`on_create_failure`].
//! * The legacy `deprecated.deployment.rollback.to` rollback (extensions/v1beta1 only; modern
//!   `kubectl rollout undo` edits the template instead) is not implemented; such a Deployment is rolled
//!   out normally. The in-place update variants are not modelled.
//! * The ReplicaSets passed to status computation are the ones observed at the start of the sync (plus
//!   the new ReplicaSet as created/updated), like upstream, so `unavailableReplicas` lags one sync behind
//!   a scale.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};

use crate::runtime::EventType;

use super::decisions::{self, Decision};
use super::recreate::{
    old_pods_count, old_pods_running, scale_down_old_replica_sets_for_recreate,
    scale_up_new_replica_set_for_recreate,
};
use super::rolling::{OldScaleDown, ScaleChange, reconcile_new_replica_set, reconcile_old_replica_sets};
use super::scale::{cleanup_deployment, scale};
use super::status::{
    check_paused_conditions, normalize_status, status_changed, sync_deployment_status, sync_rollout_status,
};
use super::util::{
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, DEPLOYMENT_PROGRESSING, DEPRECATED_ROLLBACK_TO,
    FAILED_RS_CREATE_REASON, FOUND_NEW_RS_REASON, IntOrPercentError, MAX_REV_HISTORY_LENGTH_IN_CHARS,
    NEW_REPLICA_SET_REASON, REVISION_ANNOTATION, compute_hash, deployment_complete, deployment_status,
    equal_ignore_hash, find_new_replica_set, find_old_replica_sets, get_deployment_condition,
    get_desired_replicas_annotation, has_progress_deadline, is_active, is_rolling_update, max_revision,
    new_deployment_condition, new_rs_new_replicas, replicas_annotation_values,
    replicas_annotations_need_update, rs_replicas, set_deployment_condition, set_deployment_revision,
    set_new_replica_set_annotations, set_replicas_annotations, spec_replicas,
};
use crate::runtime::name_of;

/// One step of a sync. Apply in order; stop at the first failure.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// POST this ReplicaSet (name, namespace, controller owner reference, labels, selector, template
    /// with the `pod-template-hash` label, replicas and annotations all filled in). On AlreadyExists see
    /// [`on_create_conflict`]; on other errors [`on_create_failure`].
    CreateNewReplicaSet(Box<ReplicaSet>),
    /// Update an existing (new) ReplicaSet: replace its annotations and `spec.minReadySeconds`.
    UpdateReplicaSet {
        /// ReplicaSet name.
        name: String,
        /// The complete annotation map to store.
        annotations: BTreeMap<String, String>,
        /// `spec.minReadySeconds` to store.
        min_ready_seconds: Option<i32>,
    },
    /// Update a ReplicaSet's `spec.replicas` and annotations (the replicas annotations are refreshed).
    ScaleReplicaSet {
        /// ReplicaSet name.
        name: String,
        /// `spec.replicas` to store.
        replicas: i32,
        /// The complete annotation map to store.
        annotations: BTreeMap<String, String>,
    },
    /// Delete an old ReplicaSet (NotFound counts as success).
    DeleteReplicaSet {
        /// ReplicaSet name.
        name: String,
    },
    /// Set the Deployment's `deployment.kubernetes.io/revision` annotation (upstream sends it along with
    /// a status update; a metadata update or patch does the same).
    SetDeploymentRevision {
        /// The revision number, decimal.
        revision: String,
    },
    /// Write the Deployment's status subresource.
    UpdateStatus(DeploymentStatus),
    /// Record an event on the Deployment.
    Event {
        /// Normal or Warning.
        type_: EventType,
        /// Machine-readable reason, e.g. `ScalingReplicaSet`.
        reason: String,
        /// Human-readable message.
        message: String,
    },
    /// Sync this Deployment again after the given delay (progress-deadline check).
    RequeueAfter(Duration),
}

/// The steps for one sync.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// In application order.
    pub steps: Vec<Step>,
    /// Why: the plan's decisions with their numbers, for the causal journal (the sync records
    /// them; they change nothing).
    pub decisions: Vec<Decision>,
}

/// Why no plan could be made (upstream: the sync returns an error and is retried).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// `maxSurge`/`maxUnavailable` could not be resolved.
    InvalidFencepost(IntOrPercentError),
    /// `spec.strategy.type` is neither `RollingUpdate` nor `Recreate`.
    UnknownStrategy(String),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::InvalidFencepost(e) => write!(f, "{e}"),
            PlanError::UnknownStrategy(t) => write!(f, "unexpected deployment strategy type: {t}"),
        }
    }
}

impl std::error::Error for PlanError {}

impl From<IntOrPercentError> for PlanError {
    fn from(e: IntOrPercentError) -> Self {
        PlanError::InvalidFencepost(e)
    }
}

/// Plans one sync of `d` (upstream `syncDeployment` after adoption).
///
/// * `rs_list`: every ReplicaSet this Deployment controls (after adopt/release).
/// * `pods`: every pod controlled by one of those ReplicaSets, including finished ones (only the
///   Recreate strategy looks at them).
/// * `now`: the injected clock's current time.
pub fn plan_rollout(
    d: &Deployment,
    rs_list: &[ReplicaSet],
    pods: &[Arc<Pod>],
    now: Timestamp,
) -> Result<Plan, PlanError> {
    if selects_everything(d) {
        return Ok(selecting_all(d));
    }
    let mut planner = Planner::new(d, rs_list, pods, now);
    planner.run()?;
    Ok(Plan {
        steps: planner.steps,
        decisions: planner.decisions,
    })
}

fn selects_everything(d: &Deployment) -> bool {
    let Some(spec) = d.spec.as_ref() else { return false };
    let sel = &spec.selector;
    sel.match_labels.as_ref().is_none_or(BTreeMap::is_empty)
        && sel.match_expressions.as_ref().is_none_or(Vec::is_empty)
}

fn selecting_all(d: &Deployment) -> Plan {
    let mut steps = vec![Step::Event {
        type_: EventType::Warning,
        reason: "SelectingAll".to_string(),
        message: "This deployment is selecting all pods. A non-empty selector is required.".to_string(),
    }];
    let mut status = deployment_status(d);
    let generation = d.metadata.generation.unwrap_or(0);
    if status.observed_generation.unwrap_or(0) < generation {
        status.observed_generation = Some(generation);
        steps.push(Step::UpdateStatus(normalize_status(&status)));
    }
    Plan {
        steps,
        decisions: Vec::new(),
    }
}

/// What to do when [`Step::CreateNewReplicaSet`] failed because the name is taken.
#[derive(Debug, Clone, PartialEq)]
pub enum CreateConflict {
    /// The existing ReplicaSet is this Deployment's and has its template: it is the new ReplicaSet.
    /// Requeue; the next plan finds it.
    Adopt,
    /// A different ReplicaSet has the name (hash collision): write this status (collisionCount + 1) and
    /// return an error so the sync is retried with a new hash.
    Collision(DeploymentStatus),
}

/// Upstream's AlreadyExists branch of `getNewReplicaSet`.
pub fn on_create_conflict(d: &Deployment, existing: &ReplicaSet) -> CreateConflict {
    let controlled = existing
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && d.metadata.uid.as_deref().is_some_and(|uid| uid == r.uid));
    let template = d.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
    let rs_template = existing
        .spec
        .as_ref()
        .and_then(|s| s.template.clone())
        .unwrap_or_default();
    if controlled && equal_ignore_hash(&template, &rs_template) {
        return CreateConflict::Adopt;
    }
    let mut status = deployment_status(d);
    status.collision_count = Some(status.collision_count.unwrap_or(0).saturating_add(1));
    CreateConflict::Collision(normalize_status(&status))
}

/// Upstream's generic create-error branch of `getNewReplicaSet`: a `ReplicaSetCreateError` warning event
/// and, with a progress deadline, a status with `Progressing=False/ReplicaSetCreateError` to write.
pub fn on_create_failure(
    d: &Deployment,
    rs_name: &str,
    error: &str,
    now: Timestamp,
) -> (Step, Option<DeploymentStatus>) {
    let msg = format!("Failed to create new replica set {rs_name:?}: {error}");
    let event = Step::Event {
        type_: EventType::Warning,
        reason: FAILED_RS_CREATE_REASON.to_string(),
        message: msg.clone(),
    };
    if !has_progress_deadline(d) {
        return (event, None);
    }
    let mut status = deployment_status(d);
    let cond = new_deployment_condition(DEPLOYMENT_PROGRESSING, "False", FAILED_RS_CREATE_REASON, msg, now);
    set_deployment_condition(&mut status, cond);
    (event, Some(normalize_status(&status)))
}

/// Working state of one sync.
struct Planner<'a> {
    /// The Deployment as read; its status decides whether a status write is needed.
    original: &'a Deployment,
    /// Working copy: annotations and status change as the sync goes.
    d: Deployment,
    rs_list: &'a [ReplicaSet],
    pods: &'a [Arc<Pod>],
    now: Timestamp,
    /// All old ReplicaSets as observed (upstream's `oldRSs`; used for status and cleanup).
    observed_old: Vec<ReplicaSet>,
    /// Working copies of the old ReplicaSets (sizes change as scaling is planned).
    old_rss: Vec<ReplicaSet>,
    /// The new ReplicaSet as found/created/updated (upstream's `newRS`; used for status).
    observed_new: Option<ReplicaSet>,
    /// Working copy of the new ReplicaSet.
    new_rs: Option<ReplicaSet>,
    resolved: bool,
    steps: Vec<Step>,
    decisions: Vec<Decision>,
}

impl<'a> Planner<'a> {
    fn new(d: &'a Deployment, rs_list: &'a [ReplicaSet], pods: &'a [Arc<Pod>], now: Timestamp) -> Self {
        Planner {
            original: d,
            d: d.clone(),
            rs_list,
            pods,
            now,
            observed_old: Vec::new(),
            old_rss: Vec::new(),
            observed_new: None,
            new_rs: None,
            resolved: false,
            steps: Vec::new(),
            decisions: Vec::new(),
        }
    }

    fn run(&mut self) -> Result<(), PlanError> {
        if self.d.metadata.deletion_timestamp.is_some() {
            return self.sync_status_only();
        }
        let mut status = deployment_status(&self.d);
        if check_paused_conditions(&self.d, &mut status, self.now) {
            self.d.status = Some(status);
        }
        if self.is_paused() || self.is_scaling_event()? {
            return self.sync();
        }
        let strategy = self
            .d
            .spec
            .as_ref()
            .and_then(|s| s.strategy.as_ref())
            .and_then(|s| s.type_.clone());
        match strategy.as_deref() {
            Some("Recreate") => self.rollout_recreate(),
            _ if is_rolling_update(&self.d) => self.rollout_rolling(),
            other => Err(PlanError::UnknownStrategy(other.unwrap_or_default().to_string())),
        }
    }

    fn is_paused(&self) -> bool {
        self.d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false)
    }

    // --- getAllReplicaSetsAndSyncRevision / getNewReplicaSet -----------------------------------

    /// Upstream `getAllReplicaSetsAndSyncRevision`: classify the ReplicaSets once, sync the new
    /// ReplicaSet's annotations and the Deployment's revision, and (when `create`) create the new
    /// ReplicaSet if there is none.
    fn sync_revision(&mut self, create: bool) -> Result<(), PlanError> {
        if !self.resolved {
            self.resolved = true;
            let (_, all_old) = find_old_replica_sets(&self.d, self.rs_list);
            self.observed_old = all_old.into_iter().cloned().collect();
            self.old_rss = self.observed_old.clone();
            if let Some(existing) = find_new_replica_set(&self.d, self.rs_list) {
                self.sync_existing_new_rs(existing.clone());
            }
        }
        if create && self.new_rs.is_none() {
            self.create_new_replica_set()?;
        }
        Ok(())
    }

    fn new_revision(&self) -> String {
        (max_revision(&self.observed_old) + 1).to_string()
    }

    fn sync_existing_new_rs(&mut self, mut rs: ReplicaSet) {
        let revision = self.new_revision();
        let annotations_updated = set_new_replica_set_annotations(
            &self.d,
            &mut rs,
            &revision,
            true,
            MAX_REV_HISTORY_LENGTH_IN_CHARS,
        );
        let wanted_min_ready = self.d.spec.as_ref().and_then(|s| s.min_ready_seconds);
        let spec = rs.spec.get_or_insert_with(Default::default);
        if annotations_updated || spec.min_ready_seconds.unwrap_or(0) != wanted_min_ready.unwrap_or(0) {
            spec.min_ready_seconds = wanted_min_ready;
            self.steps.push(Step::UpdateReplicaSet {
                name: name_of(&rs.metadata).to_string(),
                annotations: rs.metadata.annotations.clone().unwrap_or_default(),
                min_ready_seconds: wanted_min_ready,
            });
        } else {
            let rs_revision = rs
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(REVISION_ANNOTATION))
                .cloned();
            self.set_revision(&rs_revision.unwrap_or_default());
            self.note_found_new_rs(&rs);
        }
        self.observed_new = Some(rs.clone());
        self.new_rs = Some(rs);
    }

    fn set_revision(&mut self, revision: &str) {
        let annotations = self.d.metadata.annotations.get_or_insert_with(BTreeMap::new);
        if set_deployment_revision(annotations, revision) {
            self.steps.push(Step::SetDeploymentRevision {
                revision: revision.to_string(),
            });
        }
    }

    /// A deadline but no Progressing condition yet: start the clock at "found the new ReplicaSet".
    fn note_found_new_rs(&mut self, rs: &ReplicaSet) {
        let mut status = deployment_status(&self.d);
        if !has_progress_deadline(&self.d)
            || get_deployment_condition(&status, DEPLOYMENT_PROGRESSING).is_some()
        {
            return;
        }
        let msg = format!("Found new replica set {:?}", name_of(&rs.metadata));
        let cond =
            new_deployment_condition(DEPLOYMENT_PROGRESSING, "True", FOUND_NEW_RS_REASON, msg, self.now);
        set_deployment_condition(&mut status, cond);
        self.d.status = Some(status);
    }

    fn create_new_replica_set(&mut self) -> Result<(), PlanError> {
        let revision = self.new_revision();
        let mut rs = new_replica_set_object(&self.d);
        let replicas = new_rs_new_replicas(&self.d, self.old_rss.iter().chain(std::iter::once(&rs)), &rs)?;
        rs.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
        set_new_replica_set_annotations(
            &self.d,
            &mut rs,
            &revision,
            false,
            MAX_REV_HISTORY_LENGTH_IN_CHARS,
        );
        let name = name_of(&rs.metadata).to_string();
        self.decisions
            .push(decisions::new_replica_set_created(&self.d, &self.old_rss, &rs));
        self.steps.push(Step::CreateNewReplicaSet(Box::new(rs.clone())));
        if replicas > 0 {
            self.scaling_event(format!("Scaled up replica set {name} from 0 to {replicas}"));
        }
        self.set_revision(&revision);
        self.note_created_new_rs(&name);
        self.observed_new = Some(rs.clone());
        self.new_rs = Some(rs);
        Ok(())
    }

    /// With a deadline, (re)start the clock at "created the new ReplicaSet".
    fn note_created_new_rs(&mut self, name: &str) {
        if !has_progress_deadline(&self.d) {
            return;
        }
        let mut status = deployment_status(&self.d);
        let msg = format!("Created new replica set {name:?}");
        let cond = new_deployment_condition(
            DEPLOYMENT_PROGRESSING,
            "True",
            NEW_REPLICA_SET_REASON,
            msg,
            self.now,
        );
        set_deployment_condition(&mut status, cond);
        self.d.status = Some(status);
    }

    // --- dispatch targets ---------------------------------------------------------------------

    /// Upstream `syncStatusOnly`.
    fn sync_status_only(&mut self) -> Result<(), PlanError> {
        self.sync_revision(false)?;
        self.finish_plain_status();
        Ok(())
    }

    /// Upstream `isScalingEvent`: an active ReplicaSet was last scaled for a different `spec.replicas`.
    fn is_scaling_event(&mut self) -> Result<bool, PlanError> {
        self.sync_revision(false)?;
        let replicas = spec_replicas(&self.d);
        let mut all = self
            .old_rss
            .iter()
            .chain(self.new_rs.as_ref())
            .filter(|rs| is_active(rs));
        Ok(all.any(|rs| get_desired_replicas_annotation(rs).is_some_and(|desired| desired != replicas)))
    }

    /// Upstream `sync`: proportional scaling, cleanup when paused, plain status.
    fn sync(&mut self) -> Result<(), PlanError> {
        self.sync_revision(false)?;
        let changes = scale(&self.d, self.new_rs.as_mut(), &mut self.old_rss);
        if !changes.is_empty() {
            self.decisions.push(decisions::scale(&self.d, &changes));
        }
        self.apply_scales(changes);
        let rollback_pending = self
            .d
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(DEPRECATED_ROLLBACK_TO));
        if self.is_paused() && !rollback_pending {
            self.cleanup();
        }
        self.finish_plain_status();
        Ok(())
    }

    /// Upstream `rolloutRolling`.
    fn rollout_rolling(&mut self) -> Result<(), PlanError> {
        self.sync_revision(true)?;
        let Some(mut new_rs) = self.new_rs.take() else {
            self.finish_rollout_status();
            return Ok(());
        };
        let before = new_rs.clone();
        let scaled_up = reconcile_new_replica_set(&self.d, &self.old_rss, &mut new_rs)?;
        self.decisions.push(decisions::reconcile_new_replica_set(
            &self.d,
            &self.old_rss,
            &before,
            scaled_up.as_ref(),
        ));
        let scaled_down = match scaled_up {
            Some(_) => OldScaleDown::default(),
            None => {
                let old_before = self.old_rss.clone();
                let result = reconcile_old_replica_sets(&self.d, &mut self.old_rss, &new_rs);
                let why = decisions::reconcile_old_replica_sets(&self.d, &old_before, &new_rs, &result);
                self.decisions.push(why);
                result
            }
        };
        self.new_rs = Some(new_rs);
        let scaled = scaled_up.is_some() || scaled_down.scaled;
        self.apply_scales(scaled_up.into_iter().chain(scaled_down.changes).collect());
        if !scaled && self.previous_status_complete() {
            self.cleanup();
        }
        self.finish_rollout_status();
        Ok(())
    }

    /// Upstream `rolloutRecreate`.
    fn rollout_recreate(&mut self) -> Result<(), PlanError> {
        self.sync_revision(false)?;
        let scaled_down = scale_down_old_replica_sets_for_recreate(&mut self.old_rss);
        if !scaled_down.is_empty() {
            self.decisions.push(decisions::recreate_scale_down(&scaled_down));
            self.apply_scales(scaled_down);
            self.finish_rollout_status();
            return Ok(());
        }
        if old_pods_running(self.new_rs.as_ref(), &self.observed_old, self.pods) {
            let running = old_pods_count(self.new_rs.as_ref(), &self.observed_old, self.pods);
            self.decisions.push(decisions::recreate_waiting(running));
            self.finish_rollout_status();
            return Ok(());
        }
        self.sync_revision(true)?;
        if let Some(new_rs) = self.new_rs.as_mut() {
            let change = scale_up_new_replica_set_for_recreate(&self.d, new_rs);
            let why = decisions::recreate_scale_up(&self.d, new_rs, change.as_ref());
            self.decisions.push(why);
            self.apply_scales(change.into_iter().collect());
        }
        if self.previous_status_complete() {
            self.cleanup();
        }
        self.finish_rollout_status();
        Ok(())
    }

    // --- shared steps -------------------------------------------------------------------------

    /// `DeploymentComplete(d, &d.Status)`: the status stored before this sync says complete.
    fn previous_status_complete(&self) -> bool {
        deployment_complete(&self.d, &deployment_status(&self.d))
    }

    fn cleanup(&mut self) {
        let names = cleanup_deployment(&self.d, &self.observed_old);
        if !names.is_empty() {
            let why = decisions::cleanup(&self.d, self.observed_old.len(), &names);
            self.decisions.push(why);
        }
        for name in names {
            self.steps.push(Step::DeleteReplicaSet { name });
        }
    }

    /// Upstream `scaleReplicaSet` for each change: write when the size or the replicas annotations
    /// differ; an event when the size changed.
    fn apply_scales(&mut self, changes: Vec<ScaleChange>) {
        let (desired, max) = replicas_annotation_values(&self.d);
        for change in changes {
            let Some(rs) = self.working_rs_mut(&change.name) else {
                continue;
            };
            if change.from == change.to && !replicas_annotations_need_update(rs, desired, max) {
                continue;
            }
            set_replicas_annotations(rs, desired, max);
            let action = Step::ScaleReplicaSet {
                name: change.name.clone(),
                replicas: rs_replicas(rs),
                annotations: rs.metadata.annotations.clone().unwrap_or_default(),
            };
            self.steps.push(action);
            if change.from != change.to {
                let direction = if change.to > change.from { "up" } else { "down" };
                let (name, from, to) = (&change.name, change.from, change.to);
                self.scaling_event(format!(
                    "Scaled {direction} replica set {name} from {from} to {to}"
                ));
            }
        }
    }

    fn working_rs_mut(&mut self, name: &str) -> Option<&mut ReplicaSet> {
        let is_named = |rs: &&mut ReplicaSet| name_of(&rs.metadata) == name;
        self.old_rss.iter_mut().chain(self.new_rs.as_mut()).find(is_named)
    }

    fn scaling_event(&mut self, message: String) {
        let reason = "ScalingReplicaSet".to_string();
        self.steps.push(Step::Event {
            type_: EventType::Normal,
            reason,
            message,
        });
    }

    fn observed_all(&self) -> Vec<&ReplicaSet> {
        self.observed_old
            .iter()
            .chain(self.observed_new.as_ref())
            .collect()
    }

    /// Upstream `syncDeploymentStatus`.
    fn finish_plain_status(&mut self) {
        let status = sync_deployment_status(
            &self.observed_all(),
            self.observed_new.as_ref(),
            &self.d,
            self.now,
        );
        self.finish(status, None);
    }

    /// Upstream `syncRolloutStatus`.
    fn finish_rollout_status(&mut self) {
        let result = sync_rollout_status(
            &self.observed_all(),
            self.observed_new.as_ref(),
            &self.d,
            self.now,
        );
        if status_changed(&deployment_status(self.original), &result.status) {
            self.decisions
                .push(decisions::rollout_status(&self.d, &result.status));
        }
        self.finish(result.status, result.requeue_after);
    }

    fn finish(&mut self, status: DeploymentStatus, requeue_after: Option<Duration>) {
        if status_changed(&deployment_status(self.original), &status) {
            self.steps.push(Step::UpdateStatus(normalize_status(&status)));
        }
        if let Some(after) = requeue_after {
            self.steps.push(Step::RequeueAfter(after));
        }
    }
}

/// The new ReplicaSet upstream `getNewReplicaSet` builds (replicas and annotations still to be set).
fn new_replica_set_object(d: &Deployment) -> ReplicaSet {
    let spec = d.spec.clone().unwrap_or_default();
    let collision_count = d.status.as_ref().and_then(|s| s.collision_count);
    let hash = compute_hash(&spec.template, collision_count);
    let mut template = spec.template.clone();
    let labels = template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(BTreeMap::new);
    labels.insert(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string(), hash.clone());
    let labels = labels.clone();
    let mut selector: LabelSelector = spec.selector.clone();
    let match_labels = selector.match_labels.get_or_insert_with(BTreeMap::new);
    match_labels.insert(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string(), hash.clone());
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(format!("{}-{hash}", name_of(&d.metadata))),
            namespace: d.metadata.namespace.clone(),
            owner_references: Some(vec![controller_ref(d)]),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(ReplicaSetSpec {
            replicas: Some(0),
            min_ready_seconds: spec.min_ready_seconds,
            selector,
            template: Some(template),
        }),
        status: None,
    }
}

fn controller_ref(d: &Deployment) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".to_string(),
        kind: "Deployment".to_string(),
        name: name_of(&d.metadata).to_string(),
        uid: d.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}
