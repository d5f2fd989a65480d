//! Property test: a surge update (`maxSurge > 0`, `maxUnavailable: 0`) never leaves a node without
//! an available daemon pod, whatever the order and timing in which the new pods become ready; and
//! once they all do, the update completes with exactly one new pod per node.
//!
//! The world is a small pure model: N nodes, each with its daemon pods (revision old or new, ready
//! since when, or not ready). Every node starts with one old pod, available; the template has just
//! changed. One step is one of:
//! * a controller sync, as [`super::sync`] runs it: [`manage`] and its creations and deletions
//!   applied; when it changed nothing (expectations satisfied), [`rolling_update`] and its
//!   creations and deletions applied. Deleted pods vanish at once;
//! * one not-ready new pod becoming ready (a random one: readiness comes in any order);
//! * time advancing (pods become available `minReadySeconds` after they became ready).
//!
//! Properties, checked after every step:
//! 1. availability: every node has an available pod;
//! 2. at most two pods on a node, and at most `maxSurge` nodes with a new pod not yet available;
//! 3. convergence: after the random steps, syncing with every pod made ready and time advanced
//!    completes the update within a bounded number of rounds.
//!
//! 256 cases (or `PROPTEST_CASES`) of up to 60 steps from a fixed seed; `MINIPLANE_PROPTEST_SEED=random`
//! (or a number) explores further.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;
use proptest::test_runner::{TestRng, TestRunner};

use super::backoff::Backoff;
use super::plan::{get_nodes_to_daemon_pods, manage};
use super::tests::fixtures::{ds, node, pod, t};
use super::update::{rolling_update, surge_count};
use crate::controller_utils::pods::is_pod_available;
use crate::testing::proptest_rng;

#[derive(Clone, Debug)]
struct ModelPod {
    node: String,
    new: bool,
    created: i64,
    ready_since: Option<i64>,
}

#[derive(Clone, Debug)]
enum Op {
    Sync,
    Ready(usize),
    Advance(u8),
}

struct World {
    ds: DaemonSet,
    nodes: Vec<Node>,
    pods: BTreeMap<String, ModelPod>,
    next_id: usize,
    now: i64,
    min_ready: i32,
    max_surge: i32,
}

impl World {
    fn new(nodes: usize, surge: IntOrString, min_ready: i32) -> Self {
        let ds = ds("agent")
            .surge(surge)
            .unavailable(IntOrString::Int(0))
            .min_ready_seconds(min_ready)
            .build();
        let max_surge = surge_count(&ds, nodes as i32).expect("valid surge");
        let nodes: Vec<Node> = (1..=nodes).map(|i| node(&format!("n{i}")).build()).collect();
        let mut w = World {
            ds,
            nodes,
            pods: BTreeMap::new(),
            next_id: 0,
            now: 0,
            min_ready,
            max_surge,
        };
        for i in 1..=w.nodes.len() {
            w.add(&format!("n{i}"), false, Some(-1000));
        }
        w
    }

    fn add(&mut self, node: &str, new: bool, ready_since: Option<i64>) {
        self.next_id += 1;
        self.pods.insert(
            format!("p{:04}", self.next_id),
            ModelPod {
                node: node.to_owned(),
                new,
                created: self.now,
                ready_since,
            },
        );
    }

    fn objects(&self) -> Vec<Pod> {
        self.pods
            .iter()
            .map(|(name, p)| {
                let b = pod(name)
                    .on(&p.node)
                    .hash(if p.new { "new" } else { "old" })
                    .created(t(p.created))
                    .phase("Running");
                match p.ready_since {
                    Some(s) => b.ready_since(t(s)).build(),
                    None => b.build(),
                }
            })
            .collect()
    }

    fn now(&self) -> Timestamp {
        t(self.now)
    }

    /// Applies creations (new-revision pods, not ready) and deletions; true if anything changed.
    fn apply(&mut self, create: &[String], delete: &[String]) -> bool {
        for n in create {
            self.add(n, true, None);
        }
        for name in delete {
            self.pods.remove(name);
        }
        !create.is_empty() || !delete.is_empty()
    }

    fn sync(&mut self) {
        let objects = self.objects();
        let nodes: Vec<&Node> = self.nodes.iter().collect();
        let by_node = get_nodes_to_daemon_pods(objects.iter(), false);
        let plan = manage(
            &self.ds,
            &nodes,
            &by_node,
            "new",
            self.now(),
            &mut Backoff::default(),
        );
        let rolling = rolling_update(&self.ds, &nodes, &by_node, "new", self.now()).expect("valid limits");
        if self.apply(&plan.nodes_needing_daemon_pods, &plan.pods_to_delete) {
            return; // expectations pending: the rolling update waits for the next sync
        }
        self.apply(&rolling.nodes_to_create, &rolling.pods_to_delete);
    }

    fn step(&mut self, op: &Op) {
        match op {
            Op::Sync => self.sync(),
            Op::Ready(i) => {
                let waiting: Vec<String> = self
                    .pods
                    .iter()
                    .filter(|(_, p)| p.ready_since.is_none())
                    .map(|(n, _)| n.clone())
                    .collect();
                if !waiting.is_empty() {
                    let name = &waiting[i % waiting.len()];
                    let now = self.now;
                    if let Some(p) = self.pods.get_mut(name) {
                        p.ready_since = Some(now);
                    }
                }
            }
            Op::Advance(s) => self.now += i64::from(*s),
        }
    }

    fn available(&self, p: &ModelPod, name: &str) -> bool {
        let obj = match p.ready_since {
            Some(s) => pod(name).ready_since(t(s)).build(),
            None => pod(name).build(),
        };
        is_pod_available(&obj, self.min_ready, self.now())
    }

    fn check(&self) -> Result<(), String> {
        let mut surging = 0;
        for n in &self.nodes {
            let name = n.metadata.name.as_deref().unwrap_or("");
            let here: Vec<(&String, &ModelPod)> = self.pods.iter().filter(|(_, p)| p.node == name).collect();
            if !here.iter().any(|(k, p)| self.available(p, k)) {
                return Err(format!("{name} has no available pod at t={}: {here:?}", self.now));
            }
            if here.len() > 2 {
                return Err(format!("{name} has {} pods: {here:?}", here.len()));
            }
            if here.iter().any(|(_, p)| !p.new) && here.iter().any(|(k, p)| p.new && !self.available(p, k)) {
                surging += 1;
            }
        }
        if surging > self.max_surge {
            return Err(format!("{surging} nodes surging, maxSurge {}", self.max_surge));
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.nodes.iter().all(|n| {
            let name = n.metadata.name.as_deref().unwrap_or("");
            let here: Vec<&ModelPod> = self.pods.values().filter(|p| p.node == name).collect();
            here.len() == 1 && here[0].new
        })
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Sync),
        3 => any::<usize>().prop_map(Op::Ready),
        2 => (0u8..8).prop_map(Op::Advance),
    ]
}

fn surge() -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        (1i32..4).prop_map(IntOrString::Int),
        prop_oneof![Just("1%"), Just("34%"), Just("50%"), Just("100%")]
            .prop_map(|s| IntOrString::String(s.to_owned())),
    ]
}

/// The generator's seed: `MINIPLANE_PROPTEST_SEED` (a u64; `random` for a fresh one) if set, else a
/// fixed one, so that `cargo test` is repeatable (as the Deployment's property tests).
fn rng() -> (u64, TestRng) {
    proptest_rng(0x6461_656d_6f6e_7365)
}

/// Runs one case: the random steps with the checks, then convergence.
fn run_case(nodes: usize, surge: IntOrString, min_ready: i32, ops: &[Op]) -> Result<(), String> {
    let mut w = World::new(nodes, surge, min_ready);
    w.check()?;
    for op in ops {
        w.step(op);
        w.check().map_err(|e| format!("after {op:?}: {e}"))?;
    }
    let mut rounds = 0;
    while !w.done() {
        rounds += 1;
        if rounds > 4 * nodes + 8 {
            return Err(format!("no convergence: {:?}", w.pods));
        }
        w.sync();
        let names: Vec<String> = w.pods.keys().cloned().collect();
        for (i, _) in names.iter().enumerate() {
            w.step(&Op::Ready(i));
        }
        w.step(&Op::Advance(4));
        w.check().map_err(|e| format!("while converging: {e}"))?;
    }
    Ok(())
}

#[test]
fn surge_update_never_leaves_a_node_without_an_available_pod() {
    let (seed, rng) = rng();
    let config = ProptestConfig {
        cases: ProptestConfig::default().cases.max(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new_with_rng(config, rng);
    let strategy = (1usize..6, surge(), 0i32..4, prop::collection::vec(op(), 0..60));
    let result = runner.run(&strategy, |(nodes, surge, min_ready, ops)| {
        run_case(nodes, surge.clone(), min_ready, &ops).map_err(|e| {
            TestCaseError::fail(format!(
                "{nodes} nodes, maxSurge {surge:?}, minReady {min_ready}: {e}"
            ))
        })
    });
    if let Err(e) = result {
        panic!("seed {seed}: {e}");
    }
}
