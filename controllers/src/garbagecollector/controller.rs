//! The garbage collector's workers: what they do with a uid taken from
//! attemptToDelete or attemptToOrphan.
//!
//! Upstream: `garbagecollector.go` (`Run`, `attemptToDeleteWorker`,
//! `attemptToDeleteItem`, `isDangling`, `classifyReferences`,
//! `processDeletingDependentsItem`, `attemptToOrphanWorker`,
//! `orphanDependents`, `GetDeletableResources`).
//!
//! ```text
//! attemptToDelete(uid):
//!   being deleted, not deleting dependents → nothing (its deletion event comes)
//!   live GET: gone, or another uid → virtual delete event (graph forgets it) → done
//!   deleting dependents → no blocking dependent left? remove `foregroundDeletion`
//!                         else queue the blocking dependents
//!   live object being deleted, no `foregroundDeletion` → nothing, as above
//!   else each ownerReference → live GET of the owner → dangling / waiting / solid
//!        → plan::attempt_to_delete_item → keep | drop refs | delete (policy)
//!   not observed yet → again, with backoff
//! attemptToOrphan(uid):
//!   drop the reference to uid from every dependent, then remove `orphan`
//! ```
//!
//! Failures go back to their queue with backoff, for as long as it takes
//! (upstream never drops a garbage collector item).
//!
//! Simplified: dependents are orphaned one after the other (upstream: in
//! parallel); no events, no metrics. Stricter: upstream skips an item being
//! deleted only as its graph node shows it; here the live object is looked
//! at too, so that a sync that runs before the graph saw the deletion does
//! not send a second DELETE (which for a pod in a terminal phase would
//! remove it at once, ahead of its kubelet).

use std::sync::Arc;
use std::time::Duration;

use store::Clock;
use tokio_util::sync::CancellationToken;

use super::graph::{
    FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN, Identity, ItemView, Observed, OwnerRef, Uid,
};
use super::graph_builder::{ATTEMPT_TO_DELETE, ATTEMPT_TO_ORPHAN, GraphBuilder};
use super::monitors::Monitors;
use super::operations::Operations;
use super::plan::{self, Decision, DeletingDependents, DeletionPropagation, OwnerState};
use crate::runtime::client::{Client, ResourceRef, json_uid};
use crate::runtime::{Action, BoxFuture, ReconcileError, Reconciler, TracingClient, run_workers};

/// The controller's name, for the trace.
pub const NAME: &str = "garbagecollector";
/// The client name (and fieldManager) of its writes, as upstream's.
pub const FIELD_MANAGER: &str = "generic-garbage-collector";
/// How long the workers wait for every monitor's first list before they
/// start anyway (kube-controller-manager: 30 s).
const INITIAL_SYNC_TIMEOUT: Duration = Duration::from_secs(30);
/// Resources the garbage collector does not watch (upstream
/// `DefaultIgnoredResources`): (group, plural).
const IGNORED_RESOURCES: [(&str, &str); 2] = [("", "events"), ("events.k8s.io", "events")];

/// Every resource the API serves (upstream `GetDeletableResources`, which
/// asks discovery for the resources with delete, list and watch).
pub fn deletable_resources(registry: &apiserver::Registry) -> Vec<ResourceRef> {
    registry
        .all()
        .iter()
        .map(|info| ResourceRef {
            group: info.group.clone(),
            version: info.version.clone(),
            plural: info.plural.clone(),
            kind: info.kind.clone(),
            namespaced: info.namespaced,
        })
        .collect()
}

/// Whether the garbage collector watches `r` (all but upstream's ignored resources).
fn is_monitored(r: &ResourceRef) -> bool {
    !IGNORED_RESOURCES.contains(&(r.group.as_str(), r.plural.as_str()))
}

/// The garbage collector: build it with [`GarbageCollector::new`], then
/// [`GarbageCollector::run`] it.
pub struct GarbageCollector {
    client: Arc<dyn Client>,
    clock: Clock,
    /// The resources with a monitor: every deletable one but the ignored.
    monitored: Vec<ResourceRef>,
    builder: Arc<GraphBuilder>,
    ops: Operations,
    /// When set, the monitors follow its rows (see [`GarbageCollector::following`]).
    registry: Option<apiserver::Registry>,
}

/// What processing an item led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Processed {
    /// The item was looked at (and acted on, if needed).
    Item,
    /// The item does not exist: the graph forgot it; nothing to retry.
    VirtualDeleteEnqueued,
}

impl GarbageCollector {
    /// A garbage collector writing through `client`, for objects of
    /// `resources` (see [`deletable_resources`]).
    pub fn new(client: Arc<dyn Client>, clock: Clock, resources: Vec<ResourceRef>) -> Self {
        let client = TracingClient::wrap(client, NAME);
        let monitored = resources.iter().filter(|r| is_monitored(r)).cloned().collect();
        GarbageCollector {
            builder: Arc::new(GraphBuilder::new(&clock)),
            ops: Operations::new(client.clone(), resources),
            client,
            clock,
            monitored,
            registry: None,
        }
    }

    /// Keeps the monitors and the kind mapping in step with `registry`
    /// (resources of CustomResourceDefinitions come and go), as upstream's
    /// periodic resync with discovery does.
    pub fn following(mut self, registry: apiserver::Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Runs until `shutdown`: starts the monitors, waits (at most 30 s) for
    /// their first lists, runs `workers` workers on each queue, and returns
    /// once the workers and monitors have stopped.
    pub async fn run(self, workers: usize, shutdown: CancellationToken) {
        let gc = Arc::new(self);
        let mut monitors = Monitors::new(gc.client.clone(), gc.clock.clone(), gc.builder.clone());
        let mut synced = monitors.sync(&gc.monitored, &shutdown);
        let all_synced = async {
            for s in &mut synced {
                // Err: the monitor stopped; nothing to wait for.
                let _ = s.wait_for(|done| *done).await;
            }
        };
        let ready = async {
            tokio::select! {
                () = all_synced => {}
                () = gc.clock.sleep(INITIAL_SYNC_TIMEOUT) => {
                    tracing::info!("garbage collector: not all monitors synced, proceeding anyway");
                }
            }
        };
        let (deletes, orphans) = (&gc.builder.attempt_to_delete, &gc.builder.attempt_to_orphan);
        let follow = async {
            if let Some(registry) = gc.registry.clone() {
                let mapping = gc.ops.mapping();
                monitors
                    .follow(registry, is_monitored, mapping, shutdown.clone())
                    .await;
            }
        };
        let work = async {
            tokio::select! {
                () = shutdown.cancelled() => {
                    deletes.shut_down();
                    orphans.shut_down();
                }
                () = ready => {
                    let delete_workers = Arc::new(AttemptToDelete(gc.clone()));
                    let orphan_workers = Arc::new(AttemptToOrphan(gc.clone()));
                    tokio::join!(
                        run_workers(deletes.clone(), delete_workers, workers, shutdown.clone()),
                        run_workers(orphans.clone(), orphan_workers, workers, shutdown.clone()),
                    );
                }
            }
        };
        tokio::join!(work, follow);
        monitors.join().await;
    }

    /// Upstream `attemptToDeleteWorker`.
    async fn attempt_to_delete_worker(&self, uid: &Uid) -> Result<Action, ReconcileError> {
        let Some(item) = self.builder.graph().item(uid) else {
            // Gone from the graph meanwhile (observed deleted, or verified absent).
            return Ok(Action::Done);
        };
        if self.attempt_to_delete_item(&item).await? == Processed::VirtualDeleteEnqueued {
            return Ok(Action::Done);
        }
        let still_virtual = self.builder.graph().node(uid).is_some_and(|n| !n.observed);
        if still_virtual {
            // It exists but no watch has shown it yet: look again (issue 56121).
            return Err(ReconcileError::retryable(format!(
                "{} has not been observed yet",
                item.identity
            )));
        }
        Ok(Action::Done)
    }

    /// Upstream `attemptToDeleteItem`: deletes the item if and only if it
    /// still exists with its uid, is not waiting for its own dependents, and
    /// no owner of it is solid.
    async fn attempt_to_delete_item(&self, item: &ItemView) -> Result<Processed, ReconcileError> {
        let id = &item.identity;
        if item.being_deleted && !item.deleting_dependents {
            // A one-way trip: its deletion event will queue its dependents.
            return Ok(Processed::Item);
        }
        let latest = match self.ops.get_object(id).await {
            Err(e) if e.is_not_found() => return Ok(self.virtual_delete(id)),
            other => other?,
        };
        if json_uid(&latest) != &*id.uid {
            return Ok(self.virtual_delete(id));
        }
        if item.deleting_dependents {
            self.process_deleting_dependents_item(id).await?;
            return Ok(Processed::Item);
        }
        let Some(latest) = Observed::from_object(&id.api_version, &id.kind, &latest) else {
            return Ok(Processed::Item);
        };
        if latest.being_deleted && !latest.delete_dependents_finalizer {
            // The same one-way trip, seen on the live object before the
            // graph caught up (a sync queued while the deletion was being
            // written): deleting again could only cut its grace short.
            return Ok(Processed::Item);
        }
        let owners = self.classify_references(id, &latest.owners).await?;
        let facts = plan::Item {
            has_dependents: item.has_dependents,
            a_dependent_deletes_dependents: item.a_dependent_deletes_dependents,
            orphan_finalizer: latest.orphan_finalizer,
            delete_dependents_finalizer: latest.delete_dependents_finalizer,
        };
        let decision = plan::attempt_to_delete_item(&facts, &owners);
        self.decide_item(id, &latest.owners, &owners, &decision);
        match decision {
            Decision::Keep => Ok(Processed::Item),
            Decision::RemoveOwnerRefs(uids) => {
                let patch = |o: &serde_json::Value| plan::remove_owner_refs_patch(o, &uids);
                self.ops.patch_object(id, patch).await?;
                Ok(Processed::Item)
            }
            Decision::DeleteForeground { unblock_first } => {
                if unblock_first {
                    self.ops.patch_object(id, plan::unblock_owner_refs_patch).await?;
                }
                self.delete_item(id, DeletionPropagation::Foreground).await
            }
            Decision::Delete(policy) => self.delete_item(id, policy).await,
        }
    }

    /// Records `decision` about `id` in the causal journal (a kept item changes nothing and is
    /// not recorded).
    fn decide_item(
        &self,
        id: &Identity,
        refs: &[OwnerRef],
        states: &[(Uid, OwnerState)],
        decision: &Decision,
    ) {
        let owners: Vec<(String, OwnerState)> = refs
            .iter()
            .zip(states)
            .map(|(r, (_, state))| (format!("{} {}", r.kind.to_ascii_lowercase(), r.name), *state))
            .collect();
        let item = item_words(id);
        let Some(message) = plan::decision_sentence(&item, &owners, decision) else {
            return;
        };
        self.clock
            .decide(NAME, "attemptToDeleteItem", Some(journal_ref(id)), || message);
    }

    /// Deletes with a uid precondition; NotFound means the graph is behind.
    async fn delete_item(
        &self,
        id: &Identity,
        policy: DeletionPropagation,
    ) -> Result<Processed, ReconcileError> {
        match self.ops.delete_object(id, policy).await {
            Err(e) if e.is_not_found() => Ok(self.virtual_delete(id)),
            Err(e) => Err(e.into()),
            Ok(()) => Ok(Processed::Item),
        }
    }

    fn virtual_delete(&self, id: &Identity) -> Processed {
        self.builder.enqueue_virtual_delete_event(id);
        Processed::VirtualDeleteEnqueued
    }

    /// Upstream `classifyReferences`: the state of each owner, from a live GET.
    async fn classify_references(
        &self,
        item: &Identity,
        refs: &[OwnerRef],
    ) -> Result<Vec<(Uid, OwnerState)>, ReconcileError> {
        let mut states = Vec::with_capacity(refs.len());
        for owner in refs {
            states.push((owner.uid.clone(), self.owner_state(item, owner).await?));
        }
        Ok(states)
    }

    /// Upstream `isDangling`, plus the waiting check of `classifyReferences`.
    async fn owner_state(&self, item: &Identity, owner: &OwnerRef) -> Result<OwnerState, ReconcileError> {
        let resource = self.ops.resource_for(&owner.api_version, &owner.kind)?;
        if item.namespace.is_empty() && resource.namespaced {
            // Retrying cannot fix this reference (upstream drops the item too).
            return Err(ReconcileError::terminal(format!(
                "{item}: cluster-scoped objects cannot refer to namespaced owners"
            )));
        }
        let live = self
            .ops
            .get(&owner.api_version, &owner.kind, &item.namespace, &owner.name)
            .await;
        let live = match live {
            Err(e) if e.is_not_found() => return Ok(OwnerState::Dangling),
            other => other?,
        };
        let Some(live) = Observed::from_object(&owner.api_version, &owner.kind, &live) else {
            return Ok(OwnerState::Dangling);
        };
        Ok(if live.identity.uid != owner.uid {
            OwnerState::Dangling
        } else if live.being_deleted && live.delete_dependents_finalizer {
            OwnerState::WaitingForDependentsDeletion
        } else {
            OwnerState::Solid
        })
    }

    /// Upstream `processDeletingDependentsItem`.
    async fn process_deleting_dependents_item(&self, id: &Identity) -> Result<(), ReconcileError> {
        let (blocking, names) = {
            let graph = self.builder.graph();
            let blocking = graph.blocking_dependents(&id.uid);
            let names: Vec<String> = blocking
                .iter()
                .filter_map(|b| graph.node(&b.uid).map(|n| item_words(&n.identity)))
                .collect();
            (blocking, names)
        };
        self.clock.decide(
            NAME,
            "processDeletingDependentsItem",
            Some(journal_ref(id)),
            || plan::deleting_dependents_sentence(&item_words(id), &names),
        );
        match plan::process_deleting_dependents_item(&blocking) {
            DeletingDependents::RemoveFinalizer => {
                let patch =
                    |o: &serde_json::Value| plan::remove_finalizer_patch(o, FINALIZER_DELETE_DEPENDENTS);
                self.ops.patch_object(id, patch).await?;
            }
            DeletingDependents::AttemptToDelete(uids) => {
                for uid in uids {
                    self.builder.attempt_to_delete.add(uid);
                }
            }
        }
        Ok(())
    }

    /// Upstream `attemptToOrphanWorker` + `orphanDependents`.
    async fn attempt_to_orphan_worker(&self, uid: &Uid) -> Result<Action, ReconcileError> {
        let (owner, dependents) = {
            let graph = self.builder.graph();
            let Some(node) = graph.node(uid) else {
                return Ok(Action::Done);
            };
            (node.identity.clone(), graph.dependents(uid))
        };
        let owner_uid = std::slice::from_ref(uid);
        self.clock
            .decide(NAME, "orphanDependents", Some(journal_ref(&owner)), || {
                let names: Vec<String> = dependents.iter().map(item_words).collect();
                format!(
                    "{} is deleted with propagationPolicy Orphan: removing its reference from {} dependents ({}), then the orphan finalizer",
                    item_words(&owner),
                    names.len(),
                    names.join(", ")
                )
            });
        for dependent in &dependents {
            let patch = |o: &serde_json::Value| plan::remove_owner_refs_patch(o, owner_uid);
            self.ops.patch_object(dependent, patch).await?;
        }
        let patch = |o: &serde_json::Value| plan::remove_finalizer_patch(o, FINALIZER_ORPHAN);
        self.ops.patch_object(&owner, patch).await?;
        Ok(Action::Done)
    }
}

/// `replicaset default/web-6d4f`: an object as the journal's sentences name it.
fn item_words(id: &Identity) -> String {
    let kind = id.kind.to_ascii_lowercase();
    match &*id.namespace {
        "" => format!("{kind} {}", id.name),
        ns => format!("{kind} {ns}/{}", id.name),
    }
}

/// The object as the causal journal names it.
fn journal_ref(id: &Identity) -> store::journal::ObjectRef {
    store::journal::ObjectRef::new(&id.kind, &id.namespace, &id.name)
}

/// The attemptToDelete workers' sync.
struct AttemptToDelete(Arc<GarbageCollector>);

impl Reconciler for AttemptToDelete {
    type Key = Uid;

    fn name(&self) -> &str {
        ATTEMPT_TO_DELETE
    }

    fn reconcile(&self, uid: &Uid) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let uid = uid.clone();
        Box::pin(async move { self.0.attempt_to_delete_worker(&uid).await })
    }

    fn max_retries(&self) -> u32 {
        u32::MAX
    }
}

/// The attemptToOrphan workers' sync.
struct AttemptToOrphan(Arc<GarbageCollector>);

impl Reconciler for AttemptToOrphan {
    type Key = Uid;

    fn name(&self) -> &str {
        ATTEMPT_TO_ORPHAN
    }

    fn reconcile(&self, uid: &Uid) -> BoxFuture<'_, Result<Action, ReconcileError>> {
        let uid = uid.clone();
        Box::pin(async move { self.0.attempt_to_orphan_worker(&uid).await })
    }

    fn max_retries(&self) -> u32 {
        u32::MAX
    }
}
