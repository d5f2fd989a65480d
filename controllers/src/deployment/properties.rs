//! Property tests of the Deployment planner ([`plan_rollout`]) against the RollingUpdate guarantees,
//! over random sequences of template changes, scaling, pod readiness, pod deletions and time.
//!
//! The world is a small pure model: one Deployment, its ReplicaSets and their pods (each pod ready or
//! not, and ready since when). One step of the world is one of:
//! * a Deployment sync: [`plan_rollout`] on the model, its [`Step`]s applied to it;
//! * a ReplicaSet-controller reconcile of one or all ReplicaSets: pods created (not ready) or deleted
//!   (not-ready ones first, then the most recently ready, the part of upstream's `ActivePods` ranking
//!   the model has fields for) until the count equals `spec.replicas`, then the ReplicaSet's status
//!   (`replicas`, `readyReplicas`, `availableReplicas`, `observedGeneration`) written;
//! * some pods of a ReplicaSet becoming ready; a pod becoming unready; a pod deleted;
//! * a template change (a new image, or back to an earlier one: a rollback);
//! * a scale (`spec.replicas` changes);
//! * simulated time advancing (pods become available `minReadySeconds` after they became ready).
//!
//! Two schedules are generated. In the free one the ReplicaSet controller runs only when the sequence
//! says so, so the Deployment planner often sees ReplicaSet statuses that lag their specs and pods. In
//! the "keeps up" one every step is followed by a reconcile of every ReplicaSet, so each sync sees
//! statuses that match the pods, the assumption under which upstream's availability guarantee is stated.
//!
//! Properties (exact statements are in the doc comments of the checks below):
//! 1. surge: after every sync, Σ spec.replicas over the ReplicaSets ≤ replicas + maxSurge;
//! 2. a sync that is not a scaling event never grows an old ReplicaSet, nor the new one past replicas;
//! 3. availability (keeps-up schedule): once replicas − maxUnavailable pods are available, they stay so,
//!    except across disruptions the controller does not cause (see [`World::check_availability`]);
//! 4. convergence: after the random sequence, with no more disruptions and pods becoming ready, a
//!    bounded number of syncs reaches a complete rollout — except in the one stall upstream has too
//!    ([`World::known_upstream_stall`], kubernetes/kubernetes#138036), which is counted instead.
//!
//! 256 cases of up to 40 steps by default, from a fixed seed; `PROPTEST_CASES=N` and
//! `MINIPLANE_PROPTEST_SEED=random` (or a number) explore further, and `--nocapture` prints what the
//! cases exercised. What the properties found is kept as named tests at the end of the file.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, ReplicaSet, ReplicaSetStatus, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;
use proptest::test_runner::{TestRng, TestRunner};

use super::plan::{CreateConflict, Step, on_create_conflict, plan_rollout};
use super::util::{
    DEPLOYMENT_PROGRESSING, NEW_RS_AVAILABLE_REASON, deployment_status, equal_ignore_hash,
    get_deployment_condition, get_desired_replicas_annotation, is_active, max_surge, max_unavailable,
    name_of, rs_replicas, spec_replicas,
};
use crate::testing::proptest_rng;

/// Syncs allowed for the rollout to complete once disruptions stop (each round: sync, reconcile, all
/// pods ready, time past `minReadySeconds`). The slowest rollout generated (10 replicas, one pod per
/// two rounds, a few old ReplicaSets) needs about 25.
const MAX_CONVERGENCE_ROUNDS: usize = 80;

fn t0() -> Timestamp {
    "2024-01-01T00:00:00Z".parse().expect("valid timestamp")
}

fn template(image: u8) -> PodTemplateSpec {
    serde_json::from_value(serde_json::json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": format!("web:{image}")}]}
    }))
    .expect("template")
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Config {
    replicas: i32,
    max_surge: IntOrString,
    max_unavailable: IntOrString,
    min_ready_seconds: i32,
    /// Every step is followed by a ReplicaSet-controller reconcile of every ReplicaSet.
    keeps_up: bool,
}

#[derive(Debug, Clone)]
enum Op {
    /// One Deployment sync.
    Sync,
    /// The ReplicaSet controller reconciles the ReplicaSet at this index (modulo the count).
    Reconcile(usize),
    /// The ReplicaSet controller reconciles every ReplicaSet.
    ReconcileAll,
    /// Up to `n` not-ready pods of a ReplicaSet become ready.
    Ready { rs: usize, n: usize },
    /// Every pod becomes ready.
    AllReady,
    /// A ready pod becomes unready (a disruption).
    Unready { rs: usize, pod: usize },
    /// A pod is deleted (a disruption).
    DeletePod { rs: usize, pod: usize },
    /// The template's image changes (to an earlier one: a rollback).
    Template(u8),
    /// `spec.replicas` changes.
    Scale(i32),
    /// Simulated time advances by this many seconds.
    Advance(u8),
}

#[derive(Debug, Clone)]
struct ModelPod {
    ready_since: Option<Timestamp>,
}

#[derive(Debug, Clone)]
struct ModelRs {
    rs: ReplicaSet,
    pods: Vec<ModelPod>,
}

impl ModelRs {
    fn name(&self) -> &str {
        name_of(&self.rs.metadata)
    }

    fn min_ready(&self) -> i32 {
        self.rs
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0)
    }

    fn template(&self) -> PodTemplateSpec {
        self.rs
            .spec
            .as_ref()
            .and_then(|s| s.template.clone())
            .unwrap_or_default()
    }
}

/// What one sync did, for the per-sync properties.
struct SyncOutcome {
    scaling_event: bool,
    /// `spec.replicas` of each ReplicaSet before the sync.
    before: BTreeMap<String, i32>,
}

struct World {
    d: Deployment,
    rss: Vec<ModelRs>,
    now: Timestamp,
    next_uid: u64,
    /// Available pods have reached replicas − maxUnavailable since the last disruption.
    reached: bool,
    log: Vec<String>,
    /// Syncs run, scaling events among them, availability checks made with the threshold reached.
    syncs: usize,
    scaling_events: usize,
    availability_held: usize,
}

fn is_zero(v: &IntOrString) -> bool {
    matches!(v, IntOrString::Int(0)) || matches!(v, IntOrString::String(s) if s == "0%")
}

impl World {
    fn new(cfg: &Config) -> Self {
        let d = Deployment {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                uid: Some("uid-web".into()),
                generation: Some(1),
                ..Default::default()
            },
            spec: Some(DeploymentSpec {
                replicas: Some(cfg.replicas),
                selector: LabelSelector {
                    match_labels: Some([("app".to_string(), "web".to_string())].into()),
                    ..Default::default()
                },
                template: template(0),
                strategy: Some(DeploymentStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(RollingUpdateDeployment {
                        max_surge: Some(cfg.max_surge.clone()),
                        max_unavailable: Some(cfg.max_unavailable.clone()),
                    }),
                }),
                min_ready_seconds: Some(cfg.min_ready_seconds),
                revision_history_limit: Some(2),
                progress_deadline_seconds: Some(600),
                paused: None,
            }),
            status: None,
        };
        World {
            d,
            rss: Vec::new(),
            now: t0(),
            next_uid: 0,
            reached: false,
            log: Vec::new(),
            syncs: 0,
            scaling_events: 0,
            availability_held: 0,
        }
    }

    fn replicas(&self) -> i32 {
        spec_replicas(&self.d)
    }

    fn min_available(&self) -> i32 {
        self.replicas() - max_unavailable(&self.d)
    }

    fn d_template(&self) -> PodTemplateSpec {
        self.d
            .spec
            .as_ref()
            .map(|s| s.template.clone())
            .unwrap_or_default()
    }

    fn bump_generation(&mut self) {
        let g = self.d.metadata.generation.unwrap_or(0);
        self.d.metadata.generation = Some(g + 1);
    }

    fn spec_sum(&self) -> i32 {
        self.rss.iter().map(|m| rs_replicas(&m.rs)).sum()
    }

    fn is_available(&self, pod: &ModelPod, min_ready: i32) -> bool {
        let delay = SignedDuration::from_secs(i64::from(min_ready));
        pod.ready_since.is_some_and(|t| t + delay <= self.now)
    }

    /// Available pods as they really are (not as the ReplicaSet statuses report them).
    fn available_pods(&self) -> i32 {
        let min_ready = self
            .d
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        let n = self
            .rss
            .iter()
            .flat_map(|m| &m.pods)
            .filter(|p| self.is_available(p, min_ready))
            .count();
        i32::try_from(n).unwrap_or(i32::MAX)
    }

    // --- the ReplicaSet controller --------------------------------------------------------------

    fn reconcile(&mut self, i: usize) {
        let now = self.now;
        let m = &mut self.rss[i];
        let want = usize::try_from(rs_replicas(&m.rs)).unwrap_or(0);
        if m.pods.len() < want {
            m.pods.resize(want, ModelPod { ready_since: None });
        } else if m.pods.len() > want {
            // Not ready first, then the most recently ready: the deletion order of upstream's
            // ActivePods restricted to readiness.
            m.pods
                .sort_by_key(|p| std::cmp::Reverse(p.ready_since.unwrap_or(Timestamp::MAX)));
            m.pods.drain(..m.pods.len() - want);
        }
        let min_ready = SignedDuration::from_secs(i64::from(m.min_ready()));
        let count = |f: &dyn Fn(&ModelPod) -> bool| {
            i32::try_from(m.pods.iter().filter(|p| f(p)).count()).unwrap_or(i32::MAX)
        };
        let ready = count(&|p| p.ready_since.is_some());
        let available = count(&|p| p.ready_since.is_some_and(|t| t + min_ready <= now));
        m.rs.status = Some(ReplicaSetStatus {
            replicas: i32::try_from(m.pods.len()).unwrap_or(i32::MAX),
            fully_labeled_replicas: Some(i32::try_from(m.pods.len()).unwrap_or(i32::MAX)),
            ready_replicas: Some(ready),
            available_replicas: Some(available),
            observed_generation: m.rs.metadata.generation,
            ..Default::default()
        });
    }

    fn reconcile_all(&mut self) {
        for i in 0..self.rss.len() {
            self.reconcile(i);
        }
    }

    fn make_all_ready(&mut self) {
        let now = self.now;
        for p in self.rss.iter_mut().flat_map(|m| &mut m.pods) {
            p.ready_since.get_or_insert(now);
        }
    }

    // --- the Deployment controller -------------------------------------------------------------

    /// Upstream `isScalingEvent`, on the model before the sync: an active ReplicaSet was last scaled
    /// for a different `spec.replicas`.
    fn is_scaling_event(&self) -> bool {
        let replicas = self.replicas();
        self.rss
            .iter()
            .filter(|m| is_active(&m.rs))
            .any(|m| get_desired_replicas_annotation(&m.rs).is_some_and(|d| d != replicas))
    }

    fn sync(&mut self) -> Result<SyncOutcome, String> {
        let outcome = SyncOutcome {
            scaling_event: self.is_scaling_event(),
            before: self
                .rss
                .iter()
                .map(|m| (m.name().to_string(), rs_replicas(&m.rs)))
                .collect(),
        };
        self.syncs += 1;
        self.scaling_events += usize::from(outcome.scaling_event);
        let rs_list: Vec<ReplicaSet> = self.rss.iter().map(|m| m.rs.clone()).collect();
        let plan = plan_rollout(&self.d, &rs_list, &[], self.now).map_err(|e| format!("plan: {e}"))?;
        for step in plan.steps {
            if !self.apply(step) {
                break;
            }
        }
        Ok(outcome)
    }

    /// Applies one step as the API would; false when it failed (the sync stops there).
    fn apply(&mut self, step: Step) -> bool {
        match step {
            Step::CreateNewReplicaSet(rs) => {
                let mut rs = *rs;
                if let Some(existing) = self.rss.iter().find(|m| m.name() == name_of(&rs.metadata)) {
                    if let CreateConflict::Collision(status) = on_create_conflict(&self.d, &existing.rs) {
                        self.d.status = Some(status);
                    }
                    return false;
                }
                self.next_uid += 1;
                rs.metadata.uid = Some(format!("uid-rs-{}", self.next_uid));
                rs.metadata.creation_timestamp = Some(Time(self.now));
                rs.metadata.generation = Some(1);
                self.rss.push(ModelRs { rs, pods: Vec::new() });
            }
            Step::UpdateReplicaSet {
                name,
                annotations,
                min_ready_seconds,
            } => {
                let Some(m) = self.rss.iter_mut().find(|m| m.name() == name) else {
                    return false;
                };
                m.rs.metadata.annotations = Some(annotations);
                let spec = m.rs.spec.get_or_insert_with(Default::default);
                if spec.min_ready_seconds != min_ready_seconds {
                    spec.min_ready_seconds = min_ready_seconds;
                    m.rs.metadata.generation = Some(m.rs.metadata.generation.unwrap_or(0) + 1);
                }
            }
            Step::ScaleReplicaSet {
                name,
                replicas,
                annotations,
            } => {
                let Some(m) = self.rss.iter_mut().find(|m| m.name() == name) else {
                    return false;
                };
                m.rs.metadata.annotations = Some(annotations);
                if rs_replicas(&m.rs) != replicas {
                    m.rs.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
                    m.rs.metadata.generation = Some(m.rs.metadata.generation.unwrap_or(0) + 1);
                }
            }
            Step::DeleteReplicaSet { name } => {
                // The garbage collector takes its pods with it.
                self.rss.retain(|m| m.name() != name);
            }
            Step::SetDeploymentRevision { revision } => {
                let annotations = self.d.metadata.annotations.get_or_insert_with(BTreeMap::new);
                annotations.insert(super::util::REVISION_ANNOTATION.to_string(), revision);
            }
            Step::UpdateStatus(status) => self.d.status = Some(status),
            Step::Event { .. } | Step::RequeueAfter(_) => {}
        }
        true
    }

    // --- one step --------------------------------------------------------------------------------

    fn step(&mut self, op: &Op, cfg: &Config) -> Result<(), String> {
        self.log.push(format!("{op:?}"));
        let mut disruption = false;
        let mut sync = None;
        match op {
            Op::Sync => sync = Some(self.sync()?),
            Op::Reconcile(i) if !self.rss.is_empty() => {
                let i = i % self.rss.len();
                self.reconcile(i);
            }
            Op::Reconcile(_) => {}
            Op::ReconcileAll => self.reconcile_all(),
            Op::Ready { rs, n } if !self.rss.is_empty() => {
                let now = self.now;
                let len = self.rss.len();
                let not_ready = self.rss[rs % len]
                    .pods
                    .iter_mut()
                    .filter(|p| p.ready_since.is_none());
                for p in not_ready.take(*n) {
                    p.ready_since = Some(now);
                }
            }
            Op::AllReady => self.make_all_ready(),
            Op::Unready { rs, pod } if !self.rss.is_empty() => {
                let len = self.rss.len();
                let pods = &mut self.rss[rs % len].pods;
                if !pods.is_empty() {
                    let n = pods.len();
                    pods[pod % n].ready_since = None;
                    disruption = true;
                }
            }
            Op::DeletePod { rs, pod } if !self.rss.is_empty() => {
                let len = self.rss.len();
                let pods = &mut self.rss[rs % len].pods;
                if !pods.is_empty() {
                    let n = pods.len();
                    pods.remove(pod % n);
                    disruption = true;
                }
            }
            Op::Ready { .. } | Op::Unready { .. } | Op::DeletePod { .. } => {}
            Op::Template(image) => {
                if let Some(spec) = self.d.spec.as_mut() {
                    spec.template = template(*image);
                }
                self.bump_generation();
            }
            Op::Scale(replicas) => {
                if let Some(spec) = self.d.spec.as_mut() {
                    spec.replicas = Some(*replicas);
                }
                self.bump_generation();
                // minAvailable moves with spec.replicas.
                disruption = true;
            }
            Op::Advance(secs) => self.now += SignedDuration::from_secs(i64::from(*secs)),
        }
        if cfg.keeps_up {
            self.reconcile_all();
        }
        if let Some(outcome) = &sync {
            self.check_surge()?;
            self.check_no_growth(outcome)?;
        }
        if cfg.keeps_up {
            // A scaling event's proportional resize ignores maxUnavailable (upstream `scale`), so like a
            // disruption it re-baselines the availability check.
            let scaling_event = sync.as_ref().is_some_and(|o| o.scaling_event);
            self.check_availability(disruption || scaling_event)?;
        }
        Ok(())
    }

    /// Property 1. After every sync, Σ spec.replicas ≤ spec.replicas + maxSurge (maxSurge resolved for
    /// the current spec.replicas, rounded up).
    ///
    /// Why after every sync and not only after rolling steps: a rolling step only grows the new
    /// ReplicaSet up to that bound (`NewRSNewReplicas`) and only shrinks old ones; a scaling event
    /// (spec.replicas changed since the ReplicaSets were last scaled) resizes the active ReplicaSets
    /// proportionally so that their sum is exactly replicas + maxSurge (upstream `scale`), or gives the
    /// only active one spec.replicas. Between a `Scale` op and the next sync the bound may be exceeded
    /// (nothing has reacted yet), which is why it is checked after syncs only.
    fn check_surge(&self) -> Result<(), String> {
        let bound = self.replicas() + max_surge(&self.d);
        if self.spec_sum() > bound {
            return Err(format!(
                "Σ spec.replicas = {} > replicas {} + maxSurge {}",
                self.spec_sum(),
                self.replicas(),
                max_surge(&self.d)
            ));
        }
        Ok(())
    }

    /// Property 2. A sync that is not a scaling event never increases an old ReplicaSet's
    /// spec.replicas (upstream `cleanupUnhealthyReplicas` and `scaleDownOldReplicaSetsForRollingUpdate`
    /// refuse a "scale down" that would grow a ReplicaSet), and never leaves the new ReplicaSet above
    /// spec.replicas.
    fn check_no_growth(&self, outcome: &SyncOutcome) -> Result<(), String> {
        let template = self.d_template();
        for m in &self.rss {
            let now = rs_replicas(&m.rs);
            if equal_ignore_hash(&m.template(), &template) {
                if !outcome.scaling_event && now > self.replicas().max(outcome.before_of(m.name())) {
                    return Err(format!(
                        "new ReplicaSet {} at {now} > replicas {}",
                        m.name(),
                        self.replicas()
                    ));
                }
                continue;
            }
            let before = outcome.before_of(m.name());
            if !outcome.scaling_event && now > before {
                return Err(format!(
                    "rolling sync grew old ReplicaSet {} from {before} to {now}",
                    m.name()
                ));
            }
        }
        Ok(())
    }

    /// Property 3 (keeps-up schedule). Once the really available pods (ready for minReadySeconds) reach
    /// replicas − maxUnavailable, they never drop below it again — until a disruption the controller
    /// does not cause: the test deleting or unreadying a pod, or changing spec.replicas (which moves
    /// the threshold), or a scaling-event sync (proportional scaling, see property 1). After those the
    /// check starts again from "not reached".
    fn check_availability(&mut self, rebaseline: bool) -> Result<(), String> {
        let available = self.available_pods();
        let min = self.min_available();
        if rebaseline {
            self.reached = available >= min;
            return Ok(());
        }
        if self.reached && available < min {
            return Err(format!(
                "available pods dropped to {available} < replicas {} − maxUnavailable {}",
                self.replicas(),
                max_unavailable(&self.d)
            ));
        }
        self.availability_held += usize::from(self.reached);
        self.reached |= available >= min;
        Ok(())
    }

    /// Property 4. The rollout is complete: one ReplicaSet has the Deployment's template, spec.replicas
    /// = replicas and that many pods, all available; every other ReplicaSet is at 0 with no pods; the
    /// Deployment's status says replicas = updatedReplicas = availableReplicas = spec.replicas for the
    /// current generation, with `Progressing` reason `NewReplicaSetAvailable`.
    fn complete(&self) -> bool {
        let template = self.d_template();
        let replicas = self.replicas();
        let (new, old): (Vec<&ModelRs>, Vec<&ModelRs>) = self
            .rss
            .iter()
            .partition(|m| equal_ignore_hash(&m.template(), &template));
        let min_ready = self
            .d
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        let new_ok = new.len() == 1
            && rs_replicas(&new[0].rs) == replicas
            && new[0].pods.len() == usize::try_from(replicas).unwrap_or(0)
            && new[0].pods.iter().all(|p| self.is_available(p, min_ready));
        let old_ok = old.iter().all(|m| rs_replicas(&m.rs) == 0 && m.pods.is_empty());
        let status = deployment_status(&self.d);
        let n = |v: Option<i32>| v.unwrap_or(0);
        let status_ok = n(status.replicas) == replicas
            && n(status.updated_replicas) == replicas
            && n(status.available_replicas) == replicas
            && status.observed_generation.unwrap_or(0) >= self.d.metadata.generation.unwrap_or(0)
            && get_deployment_condition(&status, DEPLOYMENT_PROGRESSING)
                .is_some_and(|c| c.reason.as_deref() == Some(NEW_RS_AVAILABLE_REASON));
        new_ok && old_ok && status_ok
    }

    /// The stall upstream has too (kubernetes/kubernetes#138036, open): the only active ReplicaSet
    /// already has spec.replicas = replicas but its `desired-replicas` annotation is stale. Every sync
    /// is then a scaling event (`isScalingEvent`), and `scale` returns early because the size is right,
    /// without refreshing the annotation, so the rollout never resumes. It arises when the Deployment
    /// is scaled to exactly the size a rolling step left the old ReplicaSet at.
    fn known_upstream_stall(&self) -> bool {
        let replicas = self.replicas();
        let active: Vec<&ModelRs> = self.rss.iter().filter(|m| is_active(&m.rs)).collect();
        active.len() == 1
            && rs_replicas(&active[0].rs) == replicas
            && get_desired_replicas_annotation(&active[0].rs).is_some_and(|d| d != replicas)
    }

    /// Drives the world to a complete rollout with no more disruptions.
    fn converge(&mut self) -> Result<Converged, String> {
        let min_ready = self
            .d
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        for round in 0..MAX_CONVERGENCE_ROUNDS {
            let outcome = self.sync()?;
            self.check_surge()?;
            self.check_no_growth(&outcome)?;
            if self.complete() {
                return Ok(Converged::Complete { syncs: round + 1 });
            }
            if outcome.scaling_event && self.known_upstream_stall() {
                return Ok(Converged::KnownUpstreamStall);
            }
            self.reconcile_all();
            self.make_all_ready();
            self.now += SignedDuration::from_secs(i64::from(min_ready) + 1);
            self.reconcile_all();
        }
        Err(format!(
            "no complete rollout after {MAX_CONVERGENCE_ROUNDS} syncs: {}",
            self.describe()
        ))
    }

    fn describe(&self) -> String {
        let rss: Vec<String> = self
            .rss
            .iter()
            .map(|m| {
                let ready = m.pods.iter().filter(|p| p.ready_since.is_some()).count();
                format!(
                    "{} spec {} pods {} ready {} status {:?}",
                    m.name(),
                    rs_replicas(&m.rs),
                    m.pods.len(),
                    ready,
                    m.rs.status.as_ref().map(|s| (s.replicas, s.available_replicas))
                )
            })
            .collect();
        format!(
            "replicas {} surge {} unavailable {}; {rss:?}; status {:?}",
            self.replicas(),
            max_surge(&self.d),
            max_unavailable(&self.d),
            self.d.status
        )
    }
}

/// How the convergence phase ended (anything else is a failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Converged {
    /// A complete rollout after this many syncs.
    Complete { syncs: usize },
    /// [`World::known_upstream_stall`]; counted, not failed.
    KnownUpstreamStall,
}

impl SyncOutcome {
    fn before_of(&self, name: &str) -> i32 {
        self.before.get(name).copied().unwrap_or(0)
    }
}

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

fn fencepost() -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        (0..=3).prop_map(IntOrString::Int),
        prop::sample::select(vec!["0%", "25%", "50%", "100%"]).prop_map(|s| IntOrString::String(s.into())),
    ]
}

fn config_strategy() -> impl Strategy<Value = Config> {
    (
        0..=10i32,
        fencepost(),
        fencepost(),
        prop::sample::select(vec![0, 5]),
        any::<bool>(),
    )
        // Validation rejects maxSurge and maxUnavailable both written as zero.
        .prop_filter("maxSurge and maxUnavailable both 0", |(_, s, u, _, _)| {
            !(is_zero(s) && is_zero(u))
        })
        .prop_map(
            |(replicas, max_surge, max_unavailable, min_ready_seconds, keeps_up)| Config {
                replicas,
                max_surge,
                max_unavailable,
                min_ready_seconds,
                keeps_up,
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::Sync),
        4 => any::<usize>().prop_map(Op::Reconcile),
        2 => Just(Op::ReconcileAll),
        3 => (any::<usize>(), 1..4usize).prop_map(|(rs, n)| Op::Ready { rs, n }),
        1 => Just(Op::AllReady),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(rs, pod)| Op::Unready { rs, pod }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(rs, pod)| Op::DeletePod { rs, pod }),
        2 => (0..4u8).prop_map(Op::Template),
        1 => (0..=10i32).prop_map(Op::Scale),
        2 => (1..=10u8).prop_map(Op::Advance),
    ]
}

fn run(cfg: &Config, ops: &[Op], stats: &mut Stats) -> Result<Converged, String> {
    let mut world = World::new(cfg);
    for op in ops {
        world
            .step(op, cfg)
            .map_err(|e| format!("{e}\nafter {:?}\nworld: {}", world.log, world.describe()))?;
    }
    let converged = world.converge();
    stats.syncs += world.syncs;
    stats.scaling_events += world.scaling_events;
    stats.availability_held += world.availability_held;
    converged
}

/// What the cases exercised, printed at the end (`--nocapture`) so a change that makes the
/// generator miss a whole branch shows.
#[derive(Debug, Default)]
struct Stats {
    cases: usize,
    keeps_up: usize,
    complete: usize,
    max_convergence_syncs: usize,
    known_upstream_stalls: usize,
    syncs: usize,
    scaling_events: usize,
    /// Steps after which property 3 was checked with the threshold already reached.
    availability_held: usize,
}

/// Cases to run: `PROPTEST_CASES` if set, else 256.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

/// The generator's seed: `MINIPLANE_PROPTEST_SEED` (a u64; `random` for a fresh one) if set, else a
/// fixed one, so that `cargo test` is repeatable. Random seeds found
/// [`rolling_step_does_not_grow_an_old_replica_set_whose_status_lags`] (about one case in 9,000), since
/// fixed. Explore with e.g. `MINIPLANE_PROPTEST_SEED=random PROPTEST_CASES=20000`.
fn rng() -> (u64, TestRng) {
    proptest_rng(0x6d69_6e69_706c_616e)
}

/// Properties 1–4 over random sequences of up to 40 steps.
#[test]
fn rolling_update_keeps_its_guarantees() {
    let (seed, rng) = rng();
    let config = ProptestConfig {
        cases: cases(),
        // The failing input is printed; the runner has no source file to persist it next to.
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(config, rng);
    let stats = std::cell::RefCell::new(Stats::default());
    let strategy = (config_strategy(), prop::collection::vec(op(), 0..=40));
    let result = runner.run(&strategy, |(cfg, ops)| {
        let mut stats = stats.borrow_mut();
        let outcome = run(&cfg, &ops, &mut stats);
        let converged = outcome.map_err(|e| TestCaseError::fail(format!("{cfg:?}\n{e}")))?;
        stats.cases += 1;
        stats.keeps_up += usize::from(cfg.keeps_up);
        match converged {
            Converged::Complete { syncs } => {
                stats.complete += 1;
                stats.max_convergence_syncs = stats.max_convergence_syncs.max(syncs);
            }
            Converged::KnownUpstreamStall => stats.known_upstream_stalls += 1,
        }
        Ok(())
    });
    println!("seed {seed}: {:?}", stats.borrow());
    if let Err(e) = result {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Minimal cases of what the properties found (the one upstream also has stays ignored)
// ---------------------------------------------------------------------------------------------

/// Found by property 2 (minimal case: replicas 4, maxSurge 0, maxUnavailable 3; sync, pods ready,
/// template change, two syncs, scale to 5, another template change, sync, then a sync of the
/// convergence phase).
///
/// Postmortem: upstream `cleanupUnhealthyReplicas` computes
/// `scaledDownCount = min(maxCleanupCount - total, spec - status.availableReplicas)`, which is
/// negative when the ReplicaSet's status still counts pods its spec no longer wants (the ReplicaSet
/// controller has not caught up with the last scale-down); upstream then refuses with "got invalid
/// request to scale down" and `reconcileOldReplicaSets` scales nothing more this sync. The port had
/// no such check: it grew that ReplicaSet, and the negative count also enlarged what the remaining
/// ReplicaSets could lose. It now refuses as upstream does (`rolling::InvalidScaleDown`).
#[test]
fn rolling_step_does_not_grow_an_old_replica_set_whose_status_lags() {
    let cfg = Config {
        replicas: 6,
        max_surge: IntOrString::Int(1),
        max_unavailable: IntOrString::Int(1),
        min_ready_seconds: 0,
        keeps_up: false,
    };
    let d = World::new(&cfg).d;
    let rs = |name: &str, spec: i32, available: i32, created: i64| ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            creation_timestamp: Some(Time(Timestamp::from_second(created).expect("valid"))),
            ..Default::default()
        },
        spec: Some(k8s_openapi::api::apps::v1::ReplicaSetSpec {
            replicas: Some(spec),
            ..Default::default()
        }),
        status: Some(ReplicaSetStatus {
            replicas: spec.max(available),
            available_replicas: Some(available),
            ..Default::default()
        }),
    };
    // old2 was just scaled 2 → 1; its status still reports both pods available.
    let mut olds = vec![rs("old1", 5, 5, 1), rs("old2", 1, 2, 2)];
    let new_rs = rs("new", 1, 1, 3);
    let outcome = super::rolling::reconcile_old_replica_sets(&d, &mut olds, &new_rs);
    assert!(
        outcome.changes.iter().all(|c| c.to <= c.from),
        "a rolling step grew an old ReplicaSet: {outcome:?}"
    );
    assert!(
        !outcome.scaled,
        "upstream counts a refused cleanup as not scaled: {outcome:?}"
    );
}

/// Found by property 4 (minimal case below). Upstream has the same stall:
/// kubernetes/kubernetes#138036 (open at the time of writing) — `scale` returns early when the only
/// active ReplicaSet already has `spec.replicas`, leaving its stale `desired-replicas` annotation, so
/// every later sync is a scaling event and the rollout never resumes. Matching upstream, the
/// property test counts this state instead of failing on it ([`World::known_upstream_stall`]).
#[test]
#[ignore = "upstream stall kubernetes/kubernetes#138036, reproduced faithfully by the planner"]
fn scaling_to_the_size_a_rolling_step_left_resumes_the_rollout() {
    let cfg = Config {
        replicas: 9,
        max_surge: IntOrString::String("0%".into()),
        max_unavailable: IntOrString::String("50%".into()),
        min_ready_seconds: 0,
        keeps_up: false,
    };
    let mut world = World::new(&cfg);
    for op in [Op::Sync, Op::Template(1), Op::Sync, Op::Scale(5)] {
        world.step(&op, &cfg).expect("step");
    }
    assert!(matches!(world.converge(), Ok(Converged::Complete { .. })));
}
