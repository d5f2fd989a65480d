//! One PodDisruptionBudget sync: read the caches, plan the status, write it.
//!
//! Upstream: `pkg/controller/disruption/disruption.go` (`sync`, `trySync`, `getPodsForPdb`,
//! `writePdbStatus`, `failSafe`).
//!
//! ```text
//! sync_pdb(key)
//!   PDB not in cache → Done
//!   pods     = the namespace's pods its selector matches (none: a NoPods event)
//!   expected = get_expected_pod_count (the controllers' scale from the caches)
//!     failed → CalculateExpectedPodCountFailed event, fail_safe status, Done
//!   disrupted, healthy → update_pdb_status → write /status when it changed
//!   an evicted pod's entry will expire → RequeueAfter(until then)   (upstream's recheck queue)
//! ```
//!
//! Simplified: events go to the budget only (upstream's `NotDeleted` event names the pod);
//! a conflict on the status write is retried by the queue with backoff, as upstream.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use store::Clock;

use super::finders::Controllers;
use super::plan;
use crate::controller_utils::selector::selector_of;
use crate::runtime::client::{Client, ClientError, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::{NAMESPACE_INDEX, Store};
use crate::runtime::{Action, ReconcileError, clock_now, split_key};

/// Everything one sync reads and writes.
pub struct DisruptionSync {
    /// Status writes.
    pdbs_api: Typed<PodDisruptionBudget>,
    pdbs: Store<PodDisruptionBudget>,
    pods: Store<Pod>,
    /// The workloads whose scale a percentage or maxUnavailable budget counts.
    controllers: Controllers,
    /// Events on the budget (`NoPods`, `CalculateExpectedPodCountFailed`, ...).
    recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    clock: Clock,
}

impl DisruptionSync {
    /// A syncer over the given caches, writing through `client`.
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        pdbs: Store<PodDisruptionBudget>,
        pods: Store<Pod>,
        controllers: Controllers,
    ) -> Self {
        DisruptionSync {
            pdbs_api: Typed::new(client),
            pdbs,
            pods,
            controllers,
            recorder,
            clock,
        }
    }

    /// Upstream `sync` + `trySync`: brings the status of the budget named by `key` up to date.
    pub async fn sync_pdb(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(pdb) = self.pdbs.get(ns, name) else {
            return Ok(Action::Done);
        };
        let object = ObjectRef::of(pdb.as_ref());
        let pods = self.pods_for_pdb(&pdb);
        if pods.is_empty() {
            self.recorder
                .record(&object, EventType::Normal, "NoPods", "No matching pods found");
        }
        let now = clock_now(&self.clock)?;
        let scale = self.controllers.expected_scale(&pods);
        let expected = match plan::get_expected_pod_count(&pdb, pods.len(), &scale) {
            Ok(expected) => expected,
            Err(e) => return self.fail(&pdb, &object, &e, now).await,
        };
        if !expected.unmanaged.is_empty() {
            self.record_unmanaged(&pdb, &object);
        }
        let disrupted = plan::build_disrupted_pod_map(&pods, &pdb, now);
        for pod in &disrupted.not_deleted {
            let message = format!(
                "Pod was expected by PDB {}/{} to be deleted but it wasn't ({pod})",
                ns.unwrap_or(""),
                name
            );
            self.recorder
                .record(&object, EventType::Warning, "NotDeleted", &message);
        }
        let healthy = plan::count_healthy_pods(&pods, &disrupted.kept, now);
        if let Some(status) = plan::update_pdb_status(&pdb, healthy, &expected, disrupted.kept, now) {
            self.write_status(&pdb, status).await?;
        }
        Ok(match disrupted.recheck {
            Some(at) => Action::RequeueAfter(until(now, at)),
            None => Action::Done,
        })
    }

    /// Upstream `getPodsForPdb`: the namespace's pods the selector matches (a budget without a
    /// selector matches none; `{}` matches all).
    fn pods_for_pdb(&self, pdb: &PodDisruptionBudget) -> Vec<Arc<Pod>> {
        let Some(selector) = pdb.spec.as_ref().and_then(|s| s.selector.as_ref()) else {
            return Vec::new();
        };
        let selector = selector_of(selector);
        let ns = pdb.metadata.namespace.as_deref().unwrap_or("");
        self.pods
            .by_index(NAMESPACE_INDEX, ns)
            .into_iter()
            .filter(|p| selector.matches(&p.metadata.labels.as_ref()))
            .collect()
    }

    /// The expected count could not be computed: say so, and allow no disruption
    /// (upstream `failSafe`).
    async fn fail(
        &self,
        pdb: &PodDisruptionBudget,
        object: &ObjectRef,
        error: &str,
        now: Timestamp,
    ) -> Result<Action, ReconcileError> {
        let message = format!("Failed to calculate the number of expected pods: {error}");
        self.recorder.record(
            object,
            EventType::Warning,
            "CalculateExpectedPodCountFailed",
            &message,
        );
        self.write_status(pdb, plan::fail_safe(pdb, error, now)).await?;
        Ok(Action::Done)
    }

    fn record_unmanaged(&self, pdb: &PodDisruptionBudget, object: &ObjectRef) {
        let selector = pdb
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .map(|s| selector_of(s).to_string())
            .unwrap_or_default();
        let message = format!(
            "Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value."
        );
        self.recorder
            .record(object, EventType::Warning, "UnmanagedPods", &message);
    }

    /// Upstream `writePdbStatus`: one UpdateStatus, not retried here.
    async fn write_status(
        &self,
        pdb: &PodDisruptionBudget,
        status: PodDisruptionBudgetStatus,
    ) -> Result<(), ClientError> {
        let mut next = pdb.clone();
        next.status = Some(status);
        self.pdbs_api.update_status(&next).await.map(|_| ())
    }
}

/// The time from `now` until `at` (zero if it has passed).
fn until(now: Timestamp, at: Timestamp) -> std::time::Duration {
    let d = at.duration_since(now);
    std::time::Duration::try_from(d).unwrap_or_default()
}
