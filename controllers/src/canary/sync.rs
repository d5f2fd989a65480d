//! One Canary sync: read the caches, measure when a step is due, run the
//! pure transition ([`plan::advance`]), make its writes in order, then write
//! the status once.
//!
//! Flagger: `pkg/controller/scheduler.go` (`advanceCanary`: the IO between
//! its decisions), `pkg/canary/status.go` (`SyncStatus`, through the status
//! subresource).
//!
//! ```text
//! sync_canary(key)
//!   Canary not in cache / deleting    → Done (its objects are owned, the GC removes them)
//!   target                            = deployments cache; missing or no selector label → Warning event, requeue
//!   primary                           = deployments cache (Promoting: a fresh GET, the cache may trail our write)
//!   route weights, hook Job states    = routes and jobs caches
//!   now                               = clock_now, once
//!   analysis due                      → the Canary read fresh (the cache may trail our last status write),
//!                                       checks::run_checks against the metrics
//!   plan::advance                     → steps (primary, Services, route, scale, hook Jobs, events, annotations)
//!   status                            → written through /status when it changed
//! ```
//!
//! The first failed write stops the sync (retried with backoff); the
//! status is then left as it was, so the next sync decides again.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::Job;
use serde_json::{Value, json};
use store::Clock;

use super::checks::{Subjects, run_checks};
use super::controller::NAME;
use super::decisions;
use super::objects::hooks::hook_job_name;
use super::objects::{
    self, Names, Weights, hook_job, hook_state, is_deployment_ready, primary_deployment, route_weights,
    template_hash,
};
use super::plan::{self, Decision, Observed, Phase, PrimaryState, Split, Step, TargetState};
use super::types::{Canary, CanaryStatus};
use crate::gateway::types::HTTPRoute;
use crate::runtime::client::{Client, ClientError, DeleteParams, PatchType, ResourceRef, Typed};
use crate::runtime::events::{EventType, ObjectRef, Recorder};
use crate::runtime::informer::Store;
use crate::runtime::{Action, ReconcileError, clock_now, decision, split_key};

/// The reason of every Event the controller records (Flagger records all its events so).
pub const SYNCED: &str = "Synced";

/// Everything one sync reads and writes.
pub struct CanarySync {
    /// The API (the writes of [`objects::apply`] and [`objects::scale`]).
    client: Arc<dyn Client>,
    canaries_api: Typed<Canary>,
    deployments_api: Typed<Deployment>,
    hpas_api: Typed<HorizontalPodAutoscaler>,
    jobs_api: Typed<Job>,
    canaries: Store<Canary>,
    deployments: Store<Deployment>,
    jobs: Store<Job>,
    routes: Store<HTTPRoute>,
    /// Where the analysis reads its metrics.
    metrics: Arc<dyn sim_metrics::Query>,
    /// Events on the Canary.
    recorder: Recorder,
    /// The clock `now` is read from, once per sync.
    clock: Clock,
}

impl CanarySync {
    /// A syncer reading the given caches, writing through `client`, measuring with `metrics`.
    #[allow(clippy::too_many_arguments, reason = "one cache per kind it reads")]
    pub fn new(
        client: Arc<dyn Client>,
        clock: Clock,
        recorder: Recorder,
        canaries: Store<Canary>,
        deployments: Store<Deployment>,
        jobs: Store<Job>,
        routes: Store<HTTPRoute>,
        metrics: Arc<dyn sim_metrics::Query>,
    ) -> Self {
        CanarySync {
            canaries_api: Typed::new(client.clone()),
            deployments_api: Typed::new(client.clone()),
            hpas_api: Typed::new(client.clone()),
            jobs_api: Typed::new(client.clone()),
            client,
            canaries,
            deployments,
            jobs,
            routes,
            metrics,
            recorder,
            clock,
        }
    }

    /// Brings the Canary named by `key` one transition further.
    pub async fn sync_canary(&self, key: &str) -> Result<Action, ReconcileError> {
        let (ns, name) = split_key(key)?;
        let Some(mut canary) = self.canaries.get(ns, name) else {
            return Ok(Action::Done);
        };
        let now = clock_now(&self.clock)?;
        if plan::analysis_due(&canary, now) {
            // A step is decided on the latest status, not on a cache that may
            // trail our own last write (which would take the step twice).
            match self.canaries_api.get(ns, name).await {
                Ok(fresh) => canary = Arc::new(fresh),
                Err(e) if e.is_not_found() => return Ok(Action::Done),
                Err(e) => return Err(e.into()),
            }
        }
        if canary.metadata.deletion_timestamp.is_some() {
            return Ok(Action::Done);
        }
        let ns = ns.unwrap_or("");
        let names = objects::names(&canary);
        let target = self.deployments.get(Some(ns), &canary.spec.target_ref.name);
        if let Some(problem) = self.target_problem(&canary, target.as_deref()) {
            self.record(&canary, EventType::Warning, &problem);
            return Ok(Action::RequeueAfter(plan::interval(&canary)));
        }
        let revision = target.as_deref().map(template_hash);
        let primary = self.primary(&canary, ns, &names).await?;
        let hooks = self.hook_states(&canary, ns, revision.as_deref());
        let checks = plan::analysis_due(&canary, now).then(|| {
            let subjects = subjects(&canary, &names);
            run_checks(&canary, &subjects, self.metrics.as_ref(), SystemTime::from(now))
        });
        let observed = Observed {
            canary: &canary,
            target: target.as_deref().map(|t| TargetState {
                revision: template_hash(t),
                replicas: t.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
                ready: is_deployment_ready(t),
            }),
            primary: primary.as_ref().map(|p| PrimaryState {
                replicas: p.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
                ready: is_deployment_ready(p),
                revision: objects::primary::primary_template_hash(p).map(str::to_string),
            }),
            route: self
                .routes
                .get(Some(ns), &names.route)
                .and_then(|r| route_weights(&r, &names))
                .map(|w| Split {
                    primary: w.primary,
                    canary: w.canary,
                }),
            hooks,
            checks,
        };
        let transition = plan::advance(&observed, now);
        decision::record(&self.clock, NAME, &*canary, || {
            decisions::transition(&observed, &transition)
        });
        let Decision {
            steps,
            status,
            requeue_after,
        } = transition;
        for step in steps {
            self.apply_step(&canary, target.as_deref(), revision.as_deref(), step)
                .await?;
        }
        self.update_status(&canary, status).await?;
        Ok(requeue_after.map_or(Action::Done, Action::RequeueAfter))
    }

    /// Why the target cannot be rolled out (Flagger's messages), if it cannot.
    fn target_problem(&self, canary: &Canary, target: Option<&Deployment>) -> Option<String> {
        let ns = canary.metadata.namespace.as_deref().unwrap_or("");
        let t = &canary.spec.target_ref;
        if !t.kind.is_empty() && t.kind != "Deployment" {
            return Some(format!(
                "{} kind {} is not supported (only Deployment)",
                t.name, t.kind
            ));
        }
        let Some(target) = target else {
            return Some(format!("deployment {}.{ns} get query error: not found", t.name));
        };
        objects::selector_error(target)
    }

    /// The primary: from the cache, except while Promoting, when the
    /// readiness that ends the phase must be of the template just copied.
    async fn primary(
        &self,
        canary: &Canary,
        ns: &str,
        names: &Names,
    ) -> Result<Option<Arc<Deployment>>, ClientError> {
        let status = canary.status.clone().unwrap_or_default();
        if Phase::of(&status) != Phase::Promoting {
            return Ok(self.deployments.get(Some(ns), &names.primary));
        }
        match self.deployments_api.get(Some(ns), &names.primary).await {
            Ok(d) => Ok(Some(Arc::new(d))),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Each hook's Job state for `revision`, by hook name.
    fn hook_states(
        &self,
        canary: &Canary,
        ns: &str,
        revision: Option<&str>,
    ) -> BTreeMap<String, objects::HookState> {
        let Some(revision) = revision else {
            return BTreeMap::new();
        };
        canary
            .spec
            .analysis
            .hooks
            .iter()
            .map(|h| {
                let job = self.jobs.get(Some(ns), &hook_job_name(canary, h, revision));
                let owned = job.filter(|j| {
                    canary.metadata.uid.is_none()
                        || crate::runtime::controller_uid(&j.metadata) == canary.metadata.uid.as_deref()
                });
                (h.name.clone(), hook_state(owned.as_deref()))
            })
            .collect()
    }

    /// One write of the plan.
    async fn apply_step(
        &self,
        canary: &Canary,
        target: Option<&Deployment>,
        revision: Option<&str>,
        step: Step,
    ) -> Result<(), ClientError> {
        let ns = canary.metadata.namespace.as_deref().unwrap_or("");
        let client = self.client.as_ref();
        match step {
            Step::Event(type_, message) => {
                self.record(canary, type_, &message);
                Ok(())
            }
            Step::ApplyPrimary { replicas } => match target {
                Some(t) => objects::apply(client, &primary_deployment(canary, t, replicas)).await,
                None => Ok(()),
            },
            Step::ApplyServices => {
                let Some(t) = target else { return Ok(()) };
                for service in objects::services(canary, t) {
                    objects::apply(client, &service).await?;
                }
                Ok(())
            }
            Step::ApplyPrimaryAutoscaler => self.apply_primary_autoscaler(canary, ns).await,
            Step::SetRoute { split, ab_testing } => {
                let weights = Weights {
                    primary: split.primary,
                    canary: split.canary,
                };
                objects::apply(client, &objects::route(canary, weights, ab_testing)).await
            }
            Step::ScaleTarget(replicas) => {
                objects::scale(client, ns, &canary.spec.target_ref.name, replicas).await
            }
            Step::RunHook(name) => self.run_hook(canary, ns, revision, &name).await,
            Step::DeleteHookJobs => self.delete_hook_jobs(canary, ns, revision).await,
            Step::RemoveAnnotation(key) => {
                let patch = json!({"metadata": {"annotations": {key: Value::Null}}});
                let name = canary.metadata.name.as_deref().unwrap_or("");
                match self
                    .canaries_api
                    .patch(Some(ns), name, PatchType::Merge, patch)
                    .await
                {
                    Ok(_) => Ok(()),
                    Err(e) if e.is_not_found() => Ok(()),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Copies `spec.autoscalerRef` for the primary; a missing one is reported, not retried.
    async fn apply_primary_autoscaler(&self, canary: &Canary, ns: &str) -> Result<(), ClientError> {
        let Some(r) = &canary.spec.autoscaler_ref else {
            return Ok(());
        };
        match self.hpas_api.get(Some(ns), &r.name).await {
            Ok(hpa) => objects::apply(self.client.as_ref(), &objects::primary_autoscaler(canary, &hpa)).await,
            Err(e) if e.is_not_found() => {
                let message = format!("HorizontalPodAutoscaler {}.{ns} not found", r.name);
                self.record(canary, EventType::Warning, &message);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Creates the Job of hook `name` for `revision` (already there: nothing).
    async fn run_hook(
        &self,
        canary: &Canary,
        ns: &str,
        revision: Option<&str>,
        name: &str,
    ) -> Result<(), ClientError> {
        let Some(revision) = revision else { return Ok(()) };
        let Some(hook) = canary.spec.analysis.hooks.iter().find(|h| h.name == name) else {
            return Ok(());
        };
        let Some(job) = hook_job(canary, hook, revision) else {
            return Ok(());
        };
        match self.jobs_api.create(Some(ns), &job).await {
            Ok(_) => {
                let job_name = job.metadata.name.as_deref().unwrap_or("");
                let message = format!("Started {} hook {name}: job {job_name}", hook.type_);
                self.record(canary, EventType::Normal, &message);
                Ok(())
            }
            Err(e) if e.is_already_exists() => Ok(()),
            Err(e) => {
                let message = format!("Starting hook {name} failed: {}", e.message);
                self.record(canary, EventType::Warning, &message);
                Err(e)
            }
        }
    }

    /// Deletes the hook Jobs of `revision` (and their pods, in the background).
    async fn delete_hook_jobs(
        &self,
        canary: &Canary,
        ns: &str,
        revision: Option<&str>,
    ) -> Result<(), ClientError> {
        let Some(revision) = revision else { return Ok(()) };
        let r = ResourceRef::of::<Job>();
        for hook in &canary.spec.analysis.hooks {
            let name = hook_job_name(canary, hook, revision);
            match self
                .client
                .delete(&r, Some(ns), &name, &DeleteParams::propagation("Background"))
                .await
            {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn record(&self, canary: &Canary, type_: EventType, message: &str) {
        self.recorder
            .record(&ObjectRef::of(canary), type_, SYNCED, message);
    }

    /// Writes `status` through `/status` unless it is the Canary's already;
    /// a conflict is retried once on a fresh copy.
    async fn update_status(&self, canary: &Canary, status: CanaryStatus) -> Result<(), ClientError> {
        if canary.status.as_ref() == Some(&status) {
            return Ok(());
        }
        let mut next = canary.clone();
        next.status = Some(status.clone());
        match self.canaries_api.update_status(&next).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_conflict() => {
                let m = &canary.metadata;
                let name = m.name.as_deref().unwrap_or("");
                let mut fresh = self.canaries_api.get(m.namespace.as_deref(), name).await?;
                fresh.status = Some(status);
                self.canaries_api.update_status(&fresh).await.map(|_| ())
            }
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// The names the metric checks substitute.
pub fn subjects(canary: &Canary, names: &Names) -> Subjects {
    let ns = canary.metadata.namespace.clone().unwrap_or_default();
    Subjects {
        id: format!("{}.{ns}", canary.metadata.name.as_deref().unwrap_or("")),
        target: canary.spec.target_ref.name.clone(),
        primary: names.primary.clone(),
        canary_service: names.canary_service.clone(),
        primary_service: names.primary_service.clone(),
        namespace: ns,
    }
}
