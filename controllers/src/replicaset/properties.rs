//! Property tests of the ReplicaSet planner ([`plan_replicas`], upstream `manageReplicas`) and of the
//! expectations that gate it, over random sequences of syncs, informer deliveries, scaling and pod
//! deletions.
//!
//! The model: the pods that exist in the API, the pods the informer cache has delivered so far, and the
//! creations and deletions the API has done that the cache has not yet seen. A sync runs only when the
//! real [`UidTrackingControllerExpectations`] say so (as `sync_replica_set` does), plans with
//! [`plan_replicas`] on the cache, records expectations like `create_pods` / `delete_pods` (including a
//! partly failed slow-start create that lowers the expectations of the skipped pods), and applies the
//! writes to the API side only.
//!
//! Properties (upstream `manageReplicas` with `burstReplicas`):
//! 1. every plan creates `min(replicas − have, burst)` pods when `have < replicas`, deletes
//!    `min(have − replicas, burst)` distinct pods out of the ones it was given when `have > replicas`,
//!    and does nothing otherwise;
//! 2. creations in flight (done in the API, not yet seen by the cache) never exceed `burst`, and neither
//!    do deletions in flight;
//! 3. a sync never creates a pod that takes the live pods (API pods not being deleted) above
//!    `spec.replicas`: creates only happen when the cache has caught up;
//! 4. once the cache catches up, `ceil(|replicas − pods| / burst) + 1` syncs bring the pods to
//!    `spec.replicas`.
//!
//! Expectations expire after five real minutes (upstream `ExpectationsTimeout`), after which a sync may
//! act on a stale cache and property 2 may see up to twice the burst in flight; the test runs in well
//! under that and does not model the expiry.

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use proptest::prelude::*;

use super::plan::{BURST_REPLICAS, ReplicasPlan, plan_replicas};
use crate::runtime::UidTrackingControllerExpectations;
use crate::testing::test_clock;

const KEY: &str = "default/web";

fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("valid timestamp")
}

fn replica_set(replicas: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            uid: Some("uid-web".into()),
            ..Default::default()
        },
        spec: Some(ReplicaSetSpec {
            replicas: Some(replicas),
            ..Default::default()
        }),
        status: None,
    }
}

fn pod(n: u64) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("web-{n}")),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{n}")),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn key_of(p: &Pod) -> String {
    format!("default/{}", p.metadata.name.as_deref().unwrap_or(""))
}

#[derive(Debug, Clone)]
enum Op {
    /// One sync; `fail_after` (if below the planned count) makes the create fail after that many.
    Sync { fail_after: usize },
    /// The informer delivers up to `n` pending creations.
    DeliverCreates(usize),
    /// The informer delivers up to `n` pending deletions.
    DeliverDeletes(usize),
    /// Someone else deletes a pod (its delete event is delivered at once).
    DeletePod(usize),
    /// `spec.replicas` changes.
    Scale(i32),
}

struct World {
    replicas: i32,
    burst: usize,
    /// Pods in the informer cache.
    cache: Vec<Pod>,
    /// Created in the API, not yet in the cache.
    pending_creates: Vec<Pod>,
    /// Deleted in the API, still in the cache (keys).
    pending_deletes: BTreeSet<String>,
    expectations: UidTrackingControllerExpectations,
    next: u64,
}

impl World {
    fn new(replicas: i32, burst: usize) -> Self {
        let clock = test_clock();
        World {
            replicas,
            burst,
            cache: Vec::new(),
            pending_creates: Vec::new(),
            pending_deletes: BTreeSet::new(),
            expectations: UidTrackingControllerExpectations::new(clock),
            next: 0,
        }
    }

    fn want(&self) -> usize {
        usize::try_from(self.replicas).unwrap_or(0)
    }

    /// Pods that exist in the API and are not being deleted.
    fn live(&self) -> usize {
        self.cache.len() - self.pending_deletes.len() + self.pending_creates.len()
    }

    fn sync(&mut self, fail_after: usize) -> Result<(), String> {
        if !self.expectations.satisfied(KEY) {
            return Ok(());
        }
        let rs = replica_set(self.replicas);
        let have = self.cache.len();
        let plan = plan_replicas(&rs, &self.cache, &self.cache, now(), self.burst);
        check_plan(&plan, have, self.want(), self.burst, &self.cache)?;
        match plan {
            ReplicasPlan::Nothing => {}
            ReplicasPlan::Create { count } => {
                self.expectations.expect_creations(KEY, count as i64);
                let created = count.min(fail_after);
                if created < count {
                    self.expectations
                        .lower_expectations(KEY, (count - created) as i64, 0);
                }
                for _ in 0..created {
                    self.next += 1;
                    self.pending_creates.push(pod(self.next));
                }
                if self.live() > self.want() {
                    return Err(format!(
                        "created {created}: {} live pods > replicas {}",
                        self.live(),
                        self.replicas
                    ));
                }
            }
            ReplicasPlan::Delete { pods } => {
                let keys: Vec<String> = pods.iter().map(|p| p.key()).collect();
                self.expectations.expect_deletions(KEY, &keys);
                self.pending_deletes.extend(keys);
            }
        }
        Ok(())
    }

    fn step(&mut self, op: &Op) -> Result<(), String> {
        match op {
            Op::Sync { fail_after } => self.sync(*fail_after)?,
            Op::DeliverCreates(n) => {
                let n = (*n).min(self.pending_creates.len());
                for p in self.pending_creates.drain(..n) {
                    self.cache.push(p);
                    self.expectations.creation_observed(KEY);
                }
            }
            Op::DeliverDeletes(n) => {
                let keys: Vec<String> = self.pending_deletes.iter().take(*n).cloned().collect();
                for key in keys {
                    self.pending_deletes.remove(&key);
                    self.cache.retain(|p| key_of(p) != key);
                    self.expectations.deletion_observed(KEY, &key);
                }
            }
            Op::DeletePod(i) if !self.cache.is_empty() => {
                let p = self.cache.remove(i % self.cache.len());
                let key = key_of(&p);
                self.pending_deletes.remove(&key);
                self.expectations.deletion_observed(KEY, &key);
            }
            Op::DeletePod(_) => {}
            Op::Scale(r) => self.replicas = *r,
        }
        if self.pending_creates.len() > self.burst {
            return Err(format!(
                "{} creations in flight > burst {}",
                self.pending_creates.len(),
                self.burst
            ));
        }
        if self.pending_deletes.len() > self.burst {
            return Err(format!(
                "{} deletions in flight > burst {}",
                self.pending_deletes.len(),
                self.burst
            ));
        }
        Ok(())
    }

    /// Property 4.
    fn converge(&mut self) -> Result<(), String> {
        self.step(&Op::DeliverCreates(usize::MAX))?;
        self.step(&Op::DeliverDeletes(usize::MAX))?;
        let diff = self.cache.len().abs_diff(self.want());
        let rounds = diff.div_ceil(self.burst) + 1;
        for _ in 0..rounds {
            self.sync(usize::MAX)?;
            self.step(&Op::DeliverCreates(usize::MAX))?;
            self.step(&Op::DeliverDeletes(usize::MAX))?;
        }
        if self.cache.len() != self.want() {
            return Err(format!(
                "{} pods after {rounds} syncs, want {}",
                self.cache.len(),
                self.replicas
            ));
        }
        Ok(())
    }
}

/// Property 1.
fn check_plan(
    plan: &ReplicasPlan,
    have: usize,
    want: usize,
    burst: usize,
    given: &[Pod],
) -> Result<(), String> {
    let ok = match plan {
        ReplicasPlan::Nothing => have == want,
        ReplicasPlan::Create { count } => have < want && *count == (want - have).min(burst),
        ReplicasPlan::Delete { pods } => {
            let distinct: BTreeSet<&str> = pods.iter().map(|p| p.name.as_str()).collect();
            let from_given = pods.iter().all(|p| {
                given
                    .iter()
                    .any(|g| g.metadata.name.as_deref() == Some(p.name.as_str()))
            });
            have > want
                && pods.len() == (have - want).min(burst)
                && distinct.len() == pods.len()
                && from_given
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "have {have}, want {want}, burst {burst}: planned {plan:?}"
        ))
    }
}

fn op(max_replicas: i32) -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..12usize).prop_map(|fail_after| Op::Sync { fail_after: if fail_after >= 8 { usize::MAX } else { fail_after } }),
        3 => (1..6usize).prop_map(Op::DeliverCreates),
        3 => (1..6usize).prop_map(Op::DeliverDeletes),
        1 => any::<usize>().prop_map(Op::DeletePod),
        1 => (0..=max_replicas).prop_map(Op::Scale),
    ]
}

fn run(replicas: i32, burst: usize, ops: &[Op]) -> Result<(), String> {
    let mut world = World::new(replicas, burst);
    for (i, op) in ops.iter().enumerate() {
        world.step(op).map_err(|e| format!("step {i} {op:?}: {e}"))?;
    }
    world.converge()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Properties 1–4 with small bursts, so the cap is hit often.
    #[test]
    fn replica_set_creates_and_deletes_within_the_burst(
        replicas in 0..=30i32,
        burst in 1..=8usize,
        ops in prop::collection::vec(op(30), 0..=40),
    ) {
        if let Err(e) = run(replicas, burst, &ops) {
            prop_assert!(false, "{}", e);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// The same with the real burst (500) and up to 1,200 replicas.
    #[test]
    fn replica_set_respects_the_upstream_burst(
        replicas in 0..=1200i32,
        ops in prop::collection::vec(op(1200), 0..=20),
    ) {
        if let Err(e) = run(replicas, BURST_REPLICAS, &ops) {
            prop_assert!(false, "{}", e);
        }
    }
}
