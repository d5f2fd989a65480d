//! One TTL sync: the async shell around [`super::plan::process_ttl`].
//!
//! Upstream: `pkg/controller/ttlafterfinished/ttlafterfinished_controller.go` (`processJob`).
//!
//! ```text
//! process_job(key)
//!   Job not in cache            → Done
//!   cached Job: not expired     → RequeueAfter(left) or Done
//!   fresh GET (gone → Done), expired by the fresh Job's TTL still?
//!   DELETE, propagationPolicy=Foreground, preconditions.uid = the fresh Job's uid
//! ```
//!
//! The fresh GET guards against a TTL changed since the cache saw the Job; the uid precondition
//! against a namesake created since. Simplified: no metrics.

use std::sync::Arc;

use k8s_openapi::api::batch::v1::Job;
use store::Clock;

use super::plan::{Ttl, process_ttl};
use crate::runtime::client::{Client, DeleteParams, Typed};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, clock_now, name_of, split_key};

/// Everything one sync reads and writes.
pub struct TtlAfterFinishedSync {
    jobs_api: Typed<Job>,
    jobs: Store<Job>,
    /// The clock `now` is read from.
    clock: Clock,
}

impl TtlAfterFinishedSync {
    /// A syncer reading the Job cache and deleting through `client`.
    pub fn new(client: Arc<dyn Client>, clock: Clock, jobs: Store<Job>) -> Self {
        TtlAfterFinishedSync {
            jobs_api: Typed::new(client),
            jobs,
            clock,
        }
    }

    /// Upstream `processJob`: deletes the Job named by `key` if its TTL has expired.
    pub async fn process_job(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(job) = self.jobs.get(ns, name) else {
            return Ok(Action::Done);
        };
        if let Some(done) = self.check(&job)? {
            return Ok(done);
        }
        let fresh = match self.jobs_api.get(ns, name).await {
            Err(e) if e.is_not_found() => return Ok(Action::Done),
            other => other?,
        };
        if let Some(done) = self.check(&fresh)? {
            return Ok(done);
        }
        let params = DeleteParams {
            propagation_policy: Some("Foreground".to_string()),
            uid: fresh.metadata.uid.clone(),
            ..Default::default()
        };
        tracing::debug!(job = name_of(&fresh.metadata), "cleaning up Job");
        let namespace = fresh.metadata.namespace.as_deref();
        self.jobs_api
            .client()
            .delete(
                self.jobs_api.resource(),
                namespace,
                name_of(&fresh.metadata),
                &params,
            )
            .await?;
        Ok(Action::Done)
    }

    /// `processTTL` on one copy of the Job: `Some(action)` when the sync ends here, `None`
    /// when the TTL has expired.
    fn check(&self, job: &Job) -> Result<Option<Action>, ReconcileError> {
        let now = clock_now(&self.clock)?;
        match process_ttl(job, now).map_err(ReconcileError::retryable)? {
            Ttl::NotApplicable => Ok(Some(Action::Done)),
            Ttl::Later(after) => Ok(Some(Action::RequeueAfter(after))),
            Ttl::Expired(_) => Ok(None),
        }
    }
}
