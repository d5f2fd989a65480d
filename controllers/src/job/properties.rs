//! Property tests of one Job sync ([`plan`] and [`tracking`], orchestrated as
//! [`super::sync::JobSync::sync_job`] does) over random sequences of syncs, pods finishing, time
//! passing, failed finalizer removals and syncs that stop right after their first status write (a
//! controller crash).
//!
//! The model is the API's view: the Job and its pods; the cache is always up to date (so the
//! expectations are always satisfied), and a sync applies its writes to the model directly. A pod
//! that is being deleted and has lost its finalizer is gone.
//!
//! Properties, after every step:
//! 1. never more active pods (not terminal, not being deleted) than `parallelism`;
//! 2. `status.succeeded` never exceeds `completions`;
//! 3. no double counting: `succeeded` plus the uncounted succeeded uids never exceed the pods that
//!    really succeeded, and the same for failures (pods a failing Job deletes count as failed); no
//!    uid is listed twice;
//!
//! and at the end, once every pod finished and enough syncs ran without faults:
//! 4. nothing is lost: the Job finished, every pod lost its finalizer, and `succeeded` / `failed`
//!    equal the pods that succeeded / failed.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use proptest::prelude::*;

use super::backoff::BackoffRecord;
use super::plan::{self, ManagePlan, status_mut};
use super::tests::fixtures::{JobFixture, PodFixture, t0};
use super::tracking::{self, JOB_TRACKING_FINALIZER, clean_uncounted_pods_without_finalizers};
use super::util::{self, is_job_finished};
use crate::controller_utils::pods::{is_pod_active, pod_phase};

/// One step of the random history.
#[derive(Clone, Debug)]
enum Op {
    /// A sync; the first finalizer removal fails, or the sync stops after its first status write.
    Sync {
        fail_removal: bool,
        crash_after_flush: bool,
    },
    /// The `pick`-th running pod exits (0: succeeds, else fails).
    Finish { pick: usize, success: bool },
    /// Time passes.
    Advance(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), any::<bool>()).prop_map(|(a, b)| Op::Sync {
            fail_removal: a && b,
            crash_after_flush: !a && b,
        }),
        3 => (0..8usize, prop::bool::weighted(0.7)).prop_map(|(pick, success)| Op::Finish { pick, success }),
        1 => (1..60i64).prop_map(Op::Advance),
    ]
}

/// The API's state and what really happened to the pods.
struct World {
    job: Job,
    pods: BTreeMap<String, Pod>,
    now: Timestamp,
    backoff: Option<BackoffRecord>,
    created: usize,
    succeeded_pods: i32,
    failed_pods: i32,
    /// Active pods a failing Job deleted (they count as failed).
    deleted_active: i32,
}

impl World {
    fn new(job: Job) -> Self {
        World {
            job,
            pods: BTreeMap::new(),
            now: t0(),
            backoff: None,
            created: 0,
            succeeded_pods: 0,
            failed_pods: 0,
            deleted_active: 0,
        }
    }

    fn running(&self) -> Vec<String> {
        self.pods
            .iter()
            .filter(|(_, p)| is_pod_active(p))
            .map(|(uid, _)| uid.clone())
            .collect()
    }

    fn finish(&mut self, uid: &str, success: bool) {
        let Some(pod) = self.pods.get(uid) else { return };
        let name = pod.metadata.name.clone().unwrap_or_default();
        let mut finished = PodFixture::new(&name);
        finished = if success {
            self.succeeded_pods += 1;
            finished.succeeded(self.now)
        } else {
            self.failed_pods += 1;
            finished.failed(1, self.now)
        };
        let mut pod = pod.clone();
        pod.status = finished.0.status;
        self.pods.insert(uid.to_string(), pod);
    }

    /// Takes the finalizer off (a pod being deleted is then gone).
    fn remove_finalizer(&mut self, uid: &str) {
        let Some(pod) = self.pods.get_mut(uid) else { return };
        pod.metadata.finalizers = None;
        if pod.metadata.deletion_timestamp.is_some() {
            self.pods.remove(uid);
        }
    }

    fn delete(&mut self, uid: &str) {
        let Some(pod) = self.pods.get_mut(uid) else { return };
        pod.metadata.deletion_timestamp = Some(Time(self.now));
        if pod.metadata.finalizers.is_none() {
            self.pods.remove(uid);
        }
    }

    fn create(&mut self, template: &Pod) {
        self.created += 1;
        let name = format!("pi-{}", self.created);
        let mut pod = template.clone();
        pod.metadata.name = Some(name.clone());
        pod.metadata.uid = Some(format!("uid-{name}"));
        pod.metadata.creation_timestamp = Some(Time(self.now));
        pod.status = PodFixture::new(&name).0.status;
        self.pods.insert(format!("uid-{name}"), pod);
    }

    /// One sync, as `sync_job` orchestrates it, with the writes applied to the world.
    fn sync(&mut self, fail_removal: bool, crash_after_flush: bool) {
        if is_job_finished(&self.job) {
            return;
        }
        let now = self.now;
        let pods: Vec<Arc<Pod>> = self.pods.values().cloned().map(Arc::new).collect();
        let mut ctx = plan::new_sync_ctx(&self.job, pods, HashSet::new(), self.backoff, now);
        plan::evaluate_finish(&mut ctx, now);
        let mut suspend_changed = false;
        if ctx.finished_condition.is_some() {
            let active: Vec<String> = ctx
                .active_pods
                .iter()
                .filter_map(|p| p.metadata.uid.clone())
                .collect();
            let as_failure = !super::success_policy::is_success_criteria_met(ctx.finished_condition.as_ref());
            for uid in &active {
                self.delete(uid);
                if as_failure {
                    self.deleted_active += 1;
                }
            }
            let n = active.len() as i32;
            ctx.active -= n;
            ctx.terminating += n;
        } else {
            match plan::manage_job(&ctx, now).expect("valid template") {
                ManagePlan::Nothing => {}
                ManagePlan::Backoff(_) => ctx.active = 0,
                ManagePlan::Delete(pods) => {
                    for pod in &pods {
                        let uid = pod.metadata.uid.clone().unwrap_or_default();
                        self.remove_finalizer(&uid);
                        self.delete(&uid);
                    }
                    ctx.active -= pods.len() as i32;
                    ctx.terminating += pods.len() as i32;
                }
                ManagePlan::Create(pods) => {
                    for pod in &pods {
                        self.create(pod);
                    }
                    ctx.active += pods.len() as i32;
                }
            }
            suspend_changed = plan::check_completion(&mut ctx, true, now).suspend_changed;
        }
        let old = self.job.status.clone().unwrap_or_default();
        let needs = suspend_changed
            || ctx.active != old.active.unwrap_or(0)
            || Some(ctx.ready) != old.ready
            || Some(ctx.terminating) != old.terminating;
        let (active, ready, terminating) = (ctx.active, ctx.ready, ctx.terminating);
        let status = status_mut(&mut ctx.job);
        status.active = (active != 0).then_some(active);
        status.ready = Some(ready);
        status.terminating = Some(terminating);

        let mut plan = tracking::plan_tracking(&mut ctx, needs, now);
        if plan.needs_flush {
            self.job = ctx.job.clone();
            self.backoff = Some(ctx.new_backoff_record);
            plan.needs_flush = false;
            if crash_after_flush {
                return;
            }
        }
        let mut removal_failed = false;
        for (i, pod) in plan.pods_to_remove_finalizer.iter().enumerate() {
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            if fail_removal && i == 0 {
                removal_failed = true;
                continue;
            }
            self.remove_finalizer(&uid);
            plan.uids_with_finalizer.remove(&uid);
        }
        if clean_uncounted_pods_without_finalizers(status_mut(&mut ctx.job), &plan.uids_with_finalizer) {
            plan.needs_flush = true;
        }
        if removal_failed {
            if plan.needs_flush {
                self.job = ctx.job.clone();
            }
            return;
        }
        let finished = !plan.reached_max_uncounted_pods && tracking::enact_job_finished(&mut ctx, now);
        if finished || plan.needs_flush {
            self.job = ctx.job.clone();
        }
    }

    /// Properties 1–3 (see the module doc).
    fn check(&self) -> Result<(), String> {
        let parallelism = util::parallelism(&self.job) as usize;
        let active = self.pods.values().filter(|p| is_pod_active(p)).count();
        if active > parallelism {
            return Err(format!("{active} active pods, parallelism {parallelism}"));
        }
        let status = self.job.status.clone().unwrap_or_default();
        let succeeded = status.succeeded.unwrap_or(0);
        let completions = util::completions(&self.job).unwrap_or(i32::MAX);
        if succeeded > completions {
            return Err(format!("succeeded {succeeded} > completions {completions}"));
        }
        let uncounted = status.uncounted_terminated_pods.unwrap_or_default();
        let (us, uf) = (
            uncounted.succeeded.unwrap_or_default(),
            uncounted.failed.unwrap_or_default(),
        );
        let distinct: HashSet<&String> = us.iter().chain(&uf).collect();
        if distinct.len() != us.len() + uf.len() {
            return Err(format!("a uid listed twice: {us:?} {uf:?}"));
        }
        if succeeded + us.len() as i32 > self.succeeded_pods {
            return Err(format!(
                "succeeded {succeeded} + uncounted {} > {} pods succeeded",
                us.len(),
                self.succeeded_pods
            ));
        }
        let failed = status.failed.unwrap_or(0);
        if failed + uf.len() as i32 > self.failed_pods + self.deleted_active {
            return Err(format!(
                "failed {failed} + uncounted {} > {} pods failed + {} deleted",
                uf.len(),
                self.failed_pods,
                self.deleted_active
            ));
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn jobs_respect_parallelism_and_count_every_pod_exactly_once(
        completions in 1..7i32,
        parallelism in 1..4i32,
        backoff_limit in 0..8i32,
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let job = JobFixture::new(Some(completions), parallelism).backoff_limit(backoff_limit).build();
        let mut world = World::new(job);
        for op in ops {
            match op {
                Op::Sync { fail_removal, crash_after_flush } => world.sync(fail_removal, crash_after_flush),
                Op::Finish { pick, success } => {
                    let running = world.running();
                    if !running.is_empty() {
                        world.finish(&running[pick % running.len()], success);
                    }
                }
                Op::Advance(s) => world.now += jiff::SignedDuration::from_secs(s),
            }
            prop_assert!(world.check().is_ok(), "{:?}", world.check());
        }
        // Drain: every pod succeeds, syncs run without faults, backoffs pass.
        for _ in 0..40 {
            if is_job_finished(&world.job) {
                break;
            }
            world.sync(false, false);
            for uid in world.running() {
                world.finish(&uid, true);
            }
            world.sync(false, false);
            world.now += jiff::SignedDuration::from_secs(700);
            prop_assert!(world.check().is_ok(), "{:?}", world.check());
        }
        prop_assert!(is_job_finished(&world.job), "finished: {:?}", world.job.status);
        let leftover: Vec<&Pod> = world
            .pods
            .values()
            .filter(|p| p.metadata.finalizers.iter().flatten().any(|f| f == JOB_TRACKING_FINALIZER))
            .collect();
        prop_assert!(leftover.is_empty(), "finalizers left: {}", leftover.len());
        let status = world.job.status.clone().unwrap_or_default();
        prop_assert_eq!(status.succeeded.unwrap_or(0), world.succeeded_pods, "no success lost");
        prop_assert_eq!(
            status.failed.unwrap_or(0),
            world.failed_pods + world.deleted_active,
            "no failure lost"
        );
        let phases: Vec<&str> = world.pods.values().map(pod_phase).collect();
        prop_assert!(phases.iter().all(|p| *p == "Succeeded" || *p == "Failed"), "{:?}", phases);
    }
}
