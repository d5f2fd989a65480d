//! Property tests of the StatefulSet planner ([`update_stateful_set`]) together with the
//! expectations that gate it in the sync, over random sequences of syncs, late informer
//! deliveries, kubelet transitions (Running, Ready, not Ready, Failed, a terminating pod finally
//! gone) and scaling, for both pod management policies, with and without a template change,
//! partition and `maxUnavailable`.
//!
//! The model: the pods in the API (names unique, as the API enforces), the informer cache that
//! lags behind it by a queue of undelivered changes, and the real
//! [`UidTrackingControllerExpectations`]. A sync runs the planner only when the expectations are
//! satisfied (as `sync_stateful_set` does), raises them for its creates and deletes, and applies the
//! steps to the API side; each delivery lowers them as the event handlers do.
//!
//! Properties:
//! 1. at every instant no two pods in the API share an ordinal (by name or by the
//!    `apps.kubernetes.io/pod-index` label) and at most `replicas` pods have an in-range ordinal;
//! 2. the planner only creates pods with an in-range ordinal, and never one whose name still exists
//!    in the API: the expectations keep it from acting on a cache that missed its own writes
//!    (after a restart the cache is fully synced before the first sync, which this covers too);
//! 3. OrderedReady creates at most one pod per sync, and pod `i` only while every pod before it is
//!    Running and Ready in the cache; it deletes at most one pod per sync without `maxUnavailable`;
//! 4. once the kubelet makes every pod Ready, repeated syncs converge on exactly `replicas` pods,
//!    all at the update revision when nothing is partitioned (RollingUpdate).

use std::collections::{BTreeMap, VecDeque};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;

use super::plan::{PlanInput, Step, update_stateful_set};
use super::tests::fixtures::{PodExt, SetExt, now, set};
use super::utils::{
    POD_INDEX_LABEL, apply_revision, get_ordinal, get_pod_revision, is_running_and_ready, is_terminating,
    new_revision,
};
use crate::runtime::{UidTrackingControllerExpectations, name_of};
use crate::testing::test_clock;

const KEY: &str = "default/web";

/// One random operation.
#[derive(Debug, Clone)]
enum Op {
    Sync,
    /// Deliver up to n pending changes to the cache.
    Deliver(usize),
    /// The kubelet makes the pod of this index (mod the number of pods) Running and Ready.
    Ready(usize),
    /// ... Running but not Ready.
    Unready(usize),
    /// ... Failed.
    Fail(usize),
    /// A terminating pod (by index) finally disappears.
    Remove(usize),
    /// The user scales to n.
    Scale(i32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Sync),
        3 => (1usize..4).prop_map(Op::Deliver),
        3 => any::<usize>().prop_map(Op::Ready),
        1 => any::<usize>().prop_map(Op::Unready),
        1 => any::<usize>().prop_map(Op::Fail),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => (0i32..6).prop_map(Op::Scale),
    ]
}

/// A change the informer has not delivered yet.
#[derive(Debug, Clone)]
enum Delivery {
    Upsert(Pod),
    Deleted(Pod),
}

struct World {
    set: StatefulSet,
    current: StatefulSet,
    api: BTreeMap<String, Pod>,
    cache: BTreeMap<String, Pod>,
    pending: VecDeque<Delivery>,
    expectations: UidTrackingControllerExpectations,
    uid: u64,
}

impl World {
    fn change(&mut self, d: Delivery) {
        self.pending.push_back(d);
    }

    fn check_api(&self) -> Result<(), TestCaseError> {
        let mut ordinals = BTreeMap::new();
        let mut indexes = BTreeMap::new();
        for pod in self.api.values() {
            prop_assert!(
                ordinals.insert(get_ordinal(pod), ()).is_none(),
                "two pods share an ordinal"
            );
            let index = pod
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(POD_INDEX_LABEL))
                .cloned();
            prop_assert!(indexes.insert(index, ()).is_none(), "two pods share a pod-index");
        }
        let replicas = self.set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let in_range = self.api.values().filter(|p| get_ordinal(p) < replicas).count();
        prop_assert!(
            in_range <= usize::try_from(replicas).unwrap_or(0),
            "{in_range} pods in range > {replicas}"
        );
        Ok(())
    }

    fn deliver(&mut self, n: usize) {
        for _ in 0..n {
            let Some(d) = self.pending.pop_front() else { return };
            match d {
                Delivery::Upsert(pod) => {
                    let name = name_of(&pod.metadata).to_owned();
                    let key = format!("default/{name}");
                    match self.cache.get(&name) {
                        None if !is_terminating(&pod) => self.expectations.creation_observed(KEY),
                        _ if is_terminating(&pod) => self.expectations.deletion_observed(KEY, &key),
                        _ => {}
                    }
                    self.cache.insert(name, pod);
                }
                Delivery::Deleted(pod) => {
                    let name = name_of(&pod.metadata).to_owned();
                    self.expectations
                        .deletion_observed(KEY, &format!("default/{name}"));
                    self.cache.remove(&name);
                }
            }
        }
    }

    /// The kubelet changes the pod at `index` (of the API's pods) with `f`.
    fn kubelet(&mut self, index: usize, f: impl Fn(Pod) -> Option<Pod>) {
        if self.api.is_empty() {
            return;
        }
        let name = self
            .api
            .keys()
            .nth(index % self.api.len())
            .cloned()
            .unwrap_or_default();
        let Some(pod) = self.api.get(&name).cloned() else {
            return;
        };
        match f(pod.clone()) {
            Some(changed) => {
                self.api.insert(name, changed.clone());
                self.change(Delivery::Upsert(changed));
            }
            None => {
                self.api.remove(&name);
                self.change(Delivery::Deleted(pod));
            }
        }
    }

    /// One sync: plan on the cache if the expectations allow, then apply to the API.
    fn sync(&mut self) -> Result<(), TestCaseError> {
        if !self.expectations.satisfied(KEY) {
            return Ok(());
        }
        let cur = new_revision(&self.current, 1, 0);
        let upd = new_revision(&self.set, 2, 0);
        let current_set = apply_revision(&self.set, &cur).map_err(TestCaseError::fail)?;
        let update_set = apply_revision(&self.set, &upd).map_err(TestCaseError::fail)?;
        let pods: Vec<&Pod> = self.cache.values().collect();
        let claims: BTreeMap<String, &PersistentVolumeClaim> = BTreeMap::new();
        let plan = update_stateful_set(&PlanInput {
            set: &self.set,
            current_set: &current_set,
            update_set: &update_set,
            current_revision: name_of(&cur.metadata),
            update_revision: name_of(&upd.metadata),
            collision_count: 0,
            pods: &pods,
            claims: &claims,
            now: now(),
        })
        .map_err(TestCaseError::fail)?;
        let replicas = self.set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let ordered = self
            .set
            .spec
            .as_ref()
            .and_then(|s| s.pod_management_policy.as_deref())
            != Some("Parallel");
        let creates: Vec<&Pod> = plan
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::CreatePod(p) => Some(p.as_ref()),
                _ => None,
            })
            .collect();
        let deletes: Vec<String> = plan
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::DeletePod { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        if ordered {
            prop_assert!(
                creates.len() + deletes.len() <= 1,
                "OrderedReady did {:?}",
                plan.steps
            );
            for pod in &creates {
                for before in 0..get_ordinal(pod) {
                    let ok = self
                        .cache
                        .get(&format!("web-{before}"))
                        .is_some_and(|p| is_running_and_ready(p) && !is_terminating(p));
                    prop_assert!(
                        ok,
                        "created {} before web-{before} was Ready",
                        name_of(&pod.metadata)
                    );
                }
            }
        }
        let keys: Vec<String> = deletes.iter().map(|n| format!("default/{n}")).collect();
        self.expectations.expect_deletions(KEY, &keys);
        self.expectations
            .counts()
            .raise_expectations(KEY, i64::try_from(creates.len()).unwrap_or(0), 0);
        for step in plan.steps {
            match step {
                Step::CreatePod(pod) => {
                    let name = name_of(&pod.metadata).to_owned();
                    prop_assert!(
                        (0..replicas).contains(&get_ordinal(&pod)),
                        "created out of range: {name}"
                    );
                    prop_assert!(
                        !self.api.contains_key(&name),
                        "{name} created while it exists (stale cache)"
                    );
                    let mut pod = *pod;
                    self.uid += 1;
                    pod.metadata.uid = Some(format!("uid-{}", self.uid));
                    self.api.insert(name, pod.clone());
                    self.change(Delivery::Upsert(pod));
                }
                Step::DeletePod { name, .. } => match self.api.get(&name).cloned() {
                    Some(pod) if !is_terminating(&pod) => {
                        let pod = pod.terminating();
                        self.api.insert(name, pod.clone());
                        self.change(Delivery::Upsert(pod));
                    }
                    _ => self
                        .expectations
                        .deletion_observed(KEY, &format!("default/{name}")),
                },
                _ => {}
            }
            self.check_api()?;
        }
        Ok(())
    }
}

fn the_set() -> impl Strategy<Value = (StatefulSet, StatefulSet)> {
    (
        1i32..6,
        any::<bool>(),
        any::<bool>(),
        0i32..3,
        prop::option::of(1i32..3),
        any::<bool>(),
    )
        .prop_map(
            |(replicas, parallel, changed, partition, max_unavailable, on_delete)| {
                let mut s = set(replicas).partition(partition);
                if parallel {
                    s = s.parallel();
                }
                if let Some(m) = max_unavailable {
                    s = s.max_unavailable(IntOrString::Int(m));
                }
                if on_delete {
                    s = s.on_delete();
                }
                let current = s.clone();
                if changed {
                    s = s.image("nginx:2");
                }
                (s, current)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn one_pod_per_ordinal_never_more_than_replicas_and_convergence(
        (set, current) in the_set(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let clock = test_clock();
        let mut w = World {
            set,
            current,
            api: BTreeMap::new(),
            cache: BTreeMap::new(),
            pending: VecDeque::new(),
            expectations: UidTrackingControllerExpectations::new(clock),
            uid: 0,
        };
        for op in ops {
            match op {
                Op::Sync => w.sync()?,
                Op::Deliver(n) => w.deliver(n),
                Op::Ready(i) => w.kubelet(i, |p| Some(if is_terminating(&p) { p } else { p.ready() })),
                Op::Unready(i) => w.kubelet(i, |p| Some(if is_terminating(&p) { p } else { p.running() })),
                Op::Fail(i) => w.kubelet(i, |p| Some(p.failed())),
                Op::Remove(i) => w.kubelet(i, |p| if is_terminating(&p) { None } else { Some(p) }),
                Op::Scale(n) => {
                    if let Some(s) = w.set.spec.as_mut() {
                        s.replicas = Some(n);
                    }
                }
            }
            w.check_api()?;
        }
        // Convergence: the kubelet makes everything Ready and finishes every deletion.
        for _ in 0..60 {
            w.deliver(usize::MAX);
            w.sync()?;
            w.deliver(usize::MAX);
            let names: Vec<String> = w.api.keys().cloned().collect();
            for (i, _) in names.iter().enumerate() {
                w.kubelet(i, |p| if is_terminating(&p) { None } else { Some(p.ready()) });
            }
        }
        w.deliver(usize::MAX);
        let replicas = w.set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        prop_assert_eq!(w.api.len(), usize::try_from(replicas).unwrap_or(0), "{:?}", w.api.keys());
        let spec = w.set.spec.clone().unwrap_or_default();
        let partitioned = spec.update_strategy.as_ref().and_then(|u| u.rolling_update.as_ref()).and_then(|r| r.partition).unwrap_or(0) > 0;
        let on_delete = spec.update_strategy.as_ref().and_then(|u| u.type_.as_deref()) == Some("OnDelete");
        if !partitioned && !on_delete {
            let update = new_revision(&w.set, 2, 0);
            for pod in w.api.values() {
                prop_assert_eq!(get_pod_revision(pod), name_of(&update.metadata));
            }
        }
    }
}
