//! One ReplicaSet sync: the thin async shell around the pure planner.
//!
//! Upstream: `pkg/controller/replicaset/replica_set.go` (`syncReplicaSet`,
//! `manageReplicas`, `claimPods`, `slowStartBatch`, `updateReplicaSetStatus`
//! in `replica_set_utils.go`) and `RealPodControl` of
//! `pkg/controller/controller_utils.go` (the events of a create or delete).
//!
//! ```text
//! sync_replica_set(key)
//!   RS not in cache        → forget its expectations, Done
//!   needs_sync             = expectations satisfied
//!   pods                   = active pods of the namespace (cache), claimed:
//!                            keep ours, adopt matching orphans, release non-matching
//!   needs_sync && !deleting → manage_replicas: plan_replicas → create (slow start) | delete
//!   status                 = calculate_status; written only when it changed
//!   manage failed          → Err (retried with backoff)
//!   all ready, not yet all available → RequeueAfter(minReadySeconds)
//! ```
//!
//! Simplified against upstream:
//! * Pods are read from the informer's namespace index, not a lister.
//! * Claiming stops at the first failed adoption or release and fails the
//!   sync, where upstream tries every pod and returns the aggregate error.
//! * The `NamespaceTerminating` status cause of a failed create is not
//!   special-cased: such a create counts as a failure and gets an event.
//! * Template errors (no labels, bad controllerRef) fail the whole create step
//!   at once instead of once per pod.
//! * A failed status write is retried once after a fresh GET, as upstream
//!   (`statusUpdateRetries = 1`), but only on a conflict.

use std::sync::Arc;

use futures::future::join_all;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use store::Clock;

use super::plan::{self, PodRef, ReplicasPlan};
use super::pod_util::{self, ClaimDecision, SLOW_START_INITIAL_BATCH_SIZE};
use super::status;
use crate::runtime::client::{BoxFuture, ClientError, PatchType, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{Action, ReconcileError, Reconciler, UidTrackingControllerExpectations};

/// Event reason of a created pod (upstream `SuccessfulCreatePodReason`).
pub const SUCCESSFUL_CREATE: &str = "SuccessfulCreate";
/// Event reason of a failed create (upstream `FailedCreatePodReason`).
pub const FAILED_CREATE: &str = "FailedCreate";
/// Event reason of a deleted pod (upstream `SuccessfulDeletePodReason`).
pub const SUCCESSFUL_DELETE: &str = "SuccessfulDelete";
/// Event reason of a failed delete (upstream `FailedDeletePodReason`).
pub const FAILED_DELETE: &str = "FailedDelete";

/// Everything one sync reads and writes: the caches, the API, the
/// expectations shared with the event handlers, and the event recorder.
pub struct ReplicaSetSync {
    /// ReplicaSet calls (status writes, the pre-adoption GET).
    pub replicasets_api: Typed<ReplicaSet>,
    /// Pod calls (create, patch, delete).
    pub pods_api: Typed<Pod>,
    /// The ReplicaSet cache.
    pub replicasets: Store<ReplicaSet>,
    /// The pod cache.
    pub pods: Store<Pod>,
    /// Creations and deletions not yet seen in the pod cache, per RS key.
    pub expectations: UidTrackingControllerExpectations,
    /// Events on the ReplicaSet (`SuccessfulCreate`, ...).
    pub recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    pub clock: Clock,
    /// At most this many creations or deletions per sync (upstream `burstReplicas`).
    pub burst_replicas: usize,
}

impl Reconciler for ReplicaSetSync {
    type Key = String;

    fn name(&self) -> &str {
        "replicaset"
    }

    fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let key = key.clone();
        Box::pin(async move { sync_replica_set(self, &key).await })
    }
}

/// Upstream `syncReplicaSet`: brings the ReplicaSet named by `key`
/// (`namespace/name`) to its desired number of pods and reports its status.
pub async fn sync_replica_set(ctx: &ReplicaSetSync, key: &str) -> Result<Action, ReconcileError> {
    let (ns, name) = split_key(key)?;
    let Some(rs) = ctx.replicasets.get(Some(ns), name) else {
        ctx.expectations.delete_expectations(key);
        return Ok(Action::Done);
    };
    let needs_sync = ctx.expectations.satisfied(key);
    let Some(selector) = rs.spec.as_ref().map(|s| &s.selector) else {
        return Err(ReconcileError::terminal(format!("replicaset {key} has no spec")));
    };
    let active: Vec<Arc<Pod>> = ctx
        .pods
        .by_index(NAMESPACE_INDEX, ns)
        .into_iter()
        .filter(|p| pod_util::is_pod_active(p))
        .collect();
    let owned = claim_pods(ctx, &rs, selector, &active).await?;
    let now = now(&ctx.clock);
    let manage = if needs_sync && rs.metadata.deletion_timestamp.is_none() {
        manage_replicas(ctx, &rs, key, &owned, now).await
    } else {
        Ok(())
    };
    let manage_err = manage.as_ref().err().map(ToString::to_string);
    let new_status = status::calculate_status(&rs, &owned, manage_err.as_deref(), now);
    let written = update_status(ctx, &rs, new_status).await?;
    manage?;
    Ok(match status::availability_requeue_after(&rs, &written, true) {
        Some(after) => Action::RequeueAfter(after),
        None => Action::Done,
    })
}

/// `namespace/name` → (`namespace`, `name`).
fn split_key(key: &str) -> Result<(&str, &str), ReconcileError> {
    key.split_once('/')
        .ok_or_else(|| ReconcileError::terminal(format!("invalid replicaset key {key:?}")))
}

/// The clock's now as a `jiff` timestamp (what the planner takes).
fn now(clock: &Clock) -> Timestamp {
    Timestamp::try_from(clock.now()).unwrap_or(Timestamp::UNIX_EPOCH)
}

// ---------------------------------------------------------------------------
// Claiming (controller_ref_manager.go ClaimPods)
// ---------------------------------------------------------------------------

/// Upstream `claimPods`: the active pods this ReplicaSet owns after adopting
/// matching orphans and releasing owned pods that stopped matching. Each
/// pod's fate is [`pod_util::claim_decision`]; only the patches happen here.
async fn claim_pods(
    ctx: &ReplicaSetSync,
    rs: &ReplicaSet,
    selector: &LabelSelector,
    active: &[Arc<Pod>],
) -> Result<Vec<Arc<Pod>>, ReconcileError> {
    let (mut owned, mut adopt, mut release) = (Vec::new(), Vec::new(), Vec::new());
    for pod in active {
        let matches = pod_util::selector_matches(selector, pod.metadata.labels.as_ref());
        match pod_util::claim_decision(&rs.metadata, pod, matches) {
            ClaimDecision::Keep => owned.push(pod.clone()),
            ClaimDecision::Adopt => adopt.push(pod),
            ClaimDecision::Release => release.push(pod),
            ClaimDecision::Ignore => {}
        }
    }
    if !adopt.is_empty() {
        recheck_not_deleting(ctx, rs).await?;
    }
    for pod in adopt {
        if let Some(adopted) = adopt_pod(ctx, rs, pod).await? {
            owned.push(Arc::new(adopted));
        }
    }
    for pod in release {
        release_pod(ctx, rs, pod).await?;
    }
    Ok(owned)
}

/// Upstream `RecheckDeletionTimestamp`: a live GET, so that a ReplicaSet
/// being deleted (or replaced by a namesake) adopts nothing.
async fn recheck_not_deleting(ctx: &ReplicaSetSync, rs: &ReplicaSet) -> Result<(), ReconcileError> {
    let meta = &rs.metadata;
    let fresh = ctx
        .replicasets_api
        .get(meta.namespace.as_deref(), meta.name.as_deref().unwrap_or(""))
        .await?;
    if fresh.metadata.uid != meta.uid {
        return Err(ReconcileError::retryable(format!(
            "original ReplicaSet {} is gone: got uid {:?}, wanted {:?}",
            meta.name.as_deref().unwrap_or(""),
            fresh.metadata.uid,
            meta.uid
        )));
    }
    if fresh.metadata.deletion_timestamp.is_some() {
        return Err(ReconcileError::retryable(format!(
            "ReplicaSet {} has just been deleted",
            meta.name.as_deref().unwrap_or("")
        )));
    }
    Ok(())
}

/// Patches our controllerRef into an orphan. A pod that is gone is skipped.
async fn adopt_pod(ctx: &ReplicaSetSync, rs: &ReplicaSet, pod: &Pod) -> Result<Option<Pod>, ClientError> {
    let controller_ref = controller_ref(rs);
    let patch = pod_util::adopt_patch(&controller_ref, pod.metadata.uid.as_deref().unwrap_or(""));
    let meta = &pod.metadata;
    let name = meta.name.as_deref().unwrap_or("");
    match ctx
        .pods_api
        .patch(meta.namespace.as_deref(), name, PatchType::Strategic, patch)
        .await
    {
        Ok(adopted) => Ok(Some(adopted)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Patches our controllerRef out of a pod that no longer matches. A pod that
/// is gone, or was replaced by a namesake (Invalid), needs no release.
async fn release_pod(ctx: &ReplicaSetSync, rs: &ReplicaSet, pod: &Pod) -> Result<(), ClientError> {
    let owner_uid = rs.metadata.uid.as_deref().unwrap_or("");
    let patch = pod_util::release_patch(owner_uid, pod.metadata.uid.as_deref().unwrap_or(""));
    let meta = &pod.metadata;
    let name = meta.name.as_deref().unwrap_or("");
    match ctx
        .pods_api
        .patch(meta.namespace.as_deref(), name, PatchType::Strategic, patch)
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() || e.reason == "Invalid" => Ok(()),
        Err(e) => Err(e),
    }
}

/// Upstream `metav1.NewControllerRef(rs, apps/v1 ReplicaSet)`.
fn controller_ref(rs: &ReplicaSet) -> OwnerReference {
    pod_util::new_controller_ref(&rs.metadata, "apps/v1", "ReplicaSet")
}

// ---------------------------------------------------------------------------
// manageReplicas
// ---------------------------------------------------------------------------

/// Upstream `manageReplicas`: plan, then create or delete.
async fn manage_replicas(
    ctx: &ReplicaSetSync,
    rs: &ReplicaSet,
    key: &str,
    owned: &[Arc<Pod>],
    now: Timestamp,
) -> Result<(), ClientError> {
    let related = related_pods(ctx, rs, owned.len());
    match plan::plan_replicas(rs, owned, &related, now, ctx.burst_replicas) {
        ReplicasPlan::Nothing => Ok(()),
        ReplicasPlan::Create { count } => create_pods(ctx, rs, key, count).await,
        ReplicasPlan::Delete { pods } => delete_pods(ctx, rs, key, &pods).await,
    }
}

/// The pods of the sibling ReplicaSets, for ranking a scale-down; empty when
/// nothing will be deleted.
fn related_pods(ctx: &ReplicaSetSync, rs: &ReplicaSet, owned: usize) -> Vec<Pod> {
    if owned <= plan::desired_replicas(rs) {
        return Vec::new();
    }
    let ns = rs.metadata.namespace.as_deref().unwrap_or("");
    let siblings = ctx.replicasets.by_index(NAMESPACE_INDEX, ns);
    let pods = ctx.pods.by_index(NAMESPACE_INDEX, ns);
    plan::indirectly_related_pods(rs, &siblings, &pods)
        .into_iter()
        .cloned()
        .collect()
}

/// Creates `count` pods in slow-start batches (1, 2, 4, ...). The
/// expectations are raised for all of them first; every creation that did
/// not succeed (failed, or skipped after a failed batch) is taken off again,
/// since no informer event will ever report it.
async fn create_pods(
    ctx: &ReplicaSetSync,
    rs: &ReplicaSet,
    key: &str,
    count: usize,
) -> Result<(), ClientError> {
    ctx.expectations.expect_creations(key, count as i64);
    let result = create_in_batches(ctx, rs, count).await;
    let created = match &result {
        Ok(()) => count,
        Err((created, _)) => *created,
    };
    let skipped = count - created;
    if skipped > 0 {
        tracing::debug!(key, skipped, "slow-start failure; lowering creation expectations");
        ctx.expectations.lower_expectations(key, skipped as i64, 0);
    }
    result.map_err(|(_, e)| e)
}

/// Upstream `slowStartBatch`: issues the batches one after another, each
/// batch concurrently, and stops after the first batch with a failure.
/// On failure returns how many pods were created, and the first error.
async fn create_in_batches(
    ctx: &ReplicaSetSync,
    rs: &ReplicaSet,
    count: usize,
) -> Result<(), (usize, ClientError)> {
    let template = rs.spec.as_ref().and_then(|s| s.template.as_ref());
    let pod = template
        .ok_or_else(|| "replicaset has no pod template".to_string())
        .and_then(|t| {
            pod_util::pod_from_template(t, &rs.metadata, controller_ref(rs)).map_err(|e| e.to_string())
        })
        .map_err(|message| (0, ClientError::new(422, "Invalid", message)))?;
    let mut created = 0;
    for batch in pod_util::slow_start_batches(count, SLOW_START_INITIAL_BATCH_SIZE) {
        let results = join_all((0..batch).map(|_| create_pod(ctx, rs, &pod))).await;
        created += results.iter().filter(|r| r.is_ok()).count();
        if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
            return Err((created, e));
        }
    }
    Ok(())
}

/// Upstream `RealPodControl.CreatePods`: one create, with its event.
async fn create_pod(ctx: &ReplicaSetSync, rs: &ReplicaSet, pod: &Pod) -> Result<(), ClientError> {
    let object = ObjectRef::of(rs);
    match ctx.pods_api.create(rs.metadata.namespace.as_deref(), pod).await {
        Ok(created) => {
            let name = created.metadata.name.as_deref().unwrap_or("");
            let message = format!("Created pod: {name}");
            ctx.recorder
                .record(&object, EventType::Normal, SUCCESSFUL_CREATE, &message);
            Ok(())
        }
        Err(e) => {
            let message = format!("Error creating: {}", e.message);
            ctx.recorder
                .record(&object, EventType::Warning, FAILED_CREATE, &message);
            Err(e)
        }
    }
}

/// Deletes `pods` concurrently, expecting each to disappear first. A failed
/// delete lowers the expectations; NotFound is not a failure. Returns the
/// first real error.
async fn delete_pods(
    ctx: &ReplicaSetSync,
    rs: &ReplicaSet,
    key: &str,
    pods: &[PodRef],
) -> Result<(), ClientError> {
    let keys: Vec<String> = pods.iter().map(PodRef::key).collect();
    ctx.expectations.expect_deletions(key, &keys);
    let results = join_all(pods.iter().map(|p| delete_pod(ctx, rs, p))).await;
    let mut first_error = None;
    for (pod, result) in pods.iter().zip(results) {
        if let Err(e) = result {
            ctx.expectations.deletion_observed(key, &pod.key());
            if !e.is_not_found() && first_error.is_none() {
                first_error = Some(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Upstream `RealPodControl.DeletePod`: one delete, with its event (none when
/// the pod was already gone).
async fn delete_pod(ctx: &ReplicaSetSync, rs: &ReplicaSet, pod: &PodRef) -> Result<(), ClientError> {
    let object = ObjectRef::of(rs);
    match ctx.pods_api.delete(Some(&pod.namespace), &pod.name).await {
        Ok(()) => {
            let message = format!("Deleted pod: {}", pod.name);
            ctx.recorder
                .record(&object, EventType::Normal, SUCCESSFUL_DELETE, &message);
            Ok(())
        }
        Err(e) if e.is_not_found() => Err(e),
        Err(e) => {
            let message = format!("Error deleting: {}", e.message);
            ctx.recorder
                .record(&object, EventType::Warning, FAILED_DELETE, &message);
            Err(e)
        }
    }
}

// ---------------------------------------------------------------------------
// Status (replica_set_utils.go updateReplicaSetStatus)
// ---------------------------------------------------------------------------

/// Writes `new_status` unless nothing changed; returns the status the
/// ReplicaSet now has. A conflict is retried once on a fresh copy.
async fn update_status(
    ctx: &ReplicaSetSync,
    rs: &ReplicaSet,
    new_status: ReplicaSetStatus,
) -> Result<ReplicaSetStatus, ClientError> {
    if !status::status_needs_update(rs, &new_status) {
        return Ok(new_status);
    }
    let mut next = rs.clone();
    next.status = Some(new_status.clone());
    match ctx.replicasets_api.update_status(&next).await {
        Err(e) if e.is_conflict() => {
            let meta = &rs.metadata;
            let name = meta.name.as_deref().unwrap_or("");
            let mut fresh = ctx.replicasets_api.get(meta.namespace.as_deref(), name).await?;
            fresh.status = Some(new_status);
            let written = ctx.replicasets_api.update_status(&fresh).await?;
            Ok(written.status.unwrap_or_default())
        }
        other => Ok(other?.status.unwrap_or_default()),
    }
}
