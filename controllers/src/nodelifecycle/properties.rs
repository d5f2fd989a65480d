//! Property tests of the node lifecycle's taints ([`reconcile_taints`] over [`wanted_taints`]) and of
//! the health decision ([`try_update_node_health`]), over random node conditions, existing taints and
//! heartbeat histories.
//!
//! Properties:
//! 1. after the swap the controller's taints are exactly the ones the conditions call for, every
//!    other taint is kept in its order, and `not-ready:NoExecute` and `unreachable:NoExecute` are
//!    never both there;
//! 2. the swap is idempotent: applied to its own result it changes nothing;
//! 3. a node whose Lease is renewed at least once per grace period is never marked `Unknown`,
//!    whatever its status heartbeat does; one whose signals stop is marked `Unknown` exactly when
//!    the grace period after the last one it saw has passed.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Taint};
use proptest::prelude::*;
use serde_json::json;

use super::health::{NodeHealth, Periods, try_update_node_health};
use super::taints::{
    TAINT_NOT_READY, TAINT_UNREACHABLE, is_controller_taint, reconcile_taints, wanted_taints,
};

fn t0() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("valid timestamp")
}

const KEYS: [&str; 6] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/unschedulable",
    "example.com/dedicated",
    "example.com/other",
];
const EFFECTS: [&str; 3] = ["NoSchedule", "NoExecute", "PreferNoSchedule"];
const STATUSES: [&str; 3] = ["True", "False", "Unknown"];

fn taint_strategy() -> impl Strategy<Value = Taint> {
    (0..KEYS.len(), 0..EFFECTS.len()).prop_map(|(k, e)| Taint {
        key: KEYS[k].into(),
        effect: EFFECTS[e].into(),
        value: None,
        time_added: None,
    })
}

/// A node with random Ready / MemoryPressure / DiskPressure conditions (or none), cordoned or not,
/// and random existing taints (no key/effect twice, as the API server requires).
fn node_strategy() -> impl Strategy<Value = Node> {
    (
        proptest::option::of(0..STATUSES.len()),
        0..STATUSES.len(),
        0..STATUSES.len(),
        any::<bool>(),
        proptest::collection::vec(taint_strategy(), 0..6),
    )
        .prop_map(|(ready, memory, disk, cordoned, taints)| {
            let mut conditions = vec![
                json!({"type": "MemoryPressure", "status": STATUSES[memory]}),
                json!({"type": "DiskPressure", "status": STATUSES[disk]}),
            ];
            if let Some(r) = ready {
                conditions.push(json!({"type": "Ready", "status": STATUSES[r]}));
            }
            let mut unique: Vec<Taint> = Vec::new();
            for t in taints {
                if !unique.iter().any(|u| u.key == t.key && u.effect == t.effect) {
                    unique.push(t);
                }
            }
            serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                "spec": {"unschedulable": cordoned, "taints": unique},
                "status": {"conditions": conditions},
            }))
            .expect("a node")
        })
}

fn key(t: &Taint) -> (String, String) {
    (t.key.clone(), t.effect.clone())
}

proptest! {
    #[test]
    fn the_swap_leaves_exactly_the_wanted_controller_taints_and_keeps_the_rest(node in node_strategy()) {
        let existing = node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
        let wanted = wanted_taints(&node);
        let after = reconcile_taints(&existing, &wanted, t0()).unwrap_or_else(|| existing.clone());

        // 1. The controller's taints are the wanted ones; the others are kept, in order.
        let mut ours: Vec<_> = after.iter().filter(|t| is_controller_taint(t)).map(key).collect();
        let mut want: Vec<_> = wanted.iter().map(key).collect();
        ours.sort();
        want.sort();
        want.dedup();
        prop_assert_eq!(ours, want);
        let others = |ts: &[Taint]| ts.iter().filter(|t| !is_controller_taint(t)).map(key).collect::<Vec<_>>();
        prop_assert_eq!(others(&after), others(&existing));
        let no_execute = |k: &str| after.iter().any(|t| t.key == k && t.effect == "NoExecute");
        prop_assert!(!(no_execute(TAINT_NOT_READY) && no_execute(TAINT_UNREACHABLE)));

        // 2. Idempotent.
        prop_assert_eq!(reconcile_taints(&after, &wanted, t0()), None);
    }

    #[test]
    fn only_a_node_silent_for_the_grace_period_is_marked_unknown(
        // Seconds between the controller's looks (a monitor period of 1..=10 s).
        looks in proptest::collection::vec(1i64..=10, 1..80),
        // After how many looks the kubelet stops (None: never).
        stop in proptest::option::of(0usize..80),
        // Lease renewal period (the status heartbeat never changes).
        renew_every in 1i64..=50,
    ) {
        let periods = Periods::default();
        let grace = SignedDuration::try_from(periods.grace).expect("small");
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                "lastHeartbeatTime": t0().to_string(), "lastTransitionTime": t0().to_string()}]},
        }))
        .expect("a node");
        let mut saved: Option<NodeHealth> = None;
        let mut now = t0();
        let mut last_sign: Option<Timestamp> = None;
        for (i, step) in looks.iter().enumerate() {
            now += SignedDuration::from_secs(*step);
            // The last renewal at or before now, unless the kubelet stopped.
            let alive_until = stop.filter(|s| *s <= i).map(|s| {
                t0() + SignedDuration::from_secs(looks[..s].iter().sum::<i64>())
            });
            let horizon = alive_until.map_or(now, |a| a.min(now));
            let elapsed = t0().duration_until(horizon).as_secs();
            let renewed = t0() + SignedDuration::from_secs(elapsed - elapsed % renew_every);
            let lease: Lease = serde_json::from_value(json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "n", "namespace": "kube-node-lease"},
                "spec": {"renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()},
            }))
            .expect("a lease");
            let update = try_update_node_health(&node, Some(&lease), saved.as_ref(), &periods, now);
            // The controller's own time of its last sign of life.
            if saved.is_none() || saved.as_ref().and_then(|h| h.lease_renew_time) < Some(renewed) {
                last_sign = Some(now);
            }
            let expect_unknown = last_sign.is_some_and(|s| now > s + grace);
            prop_assert_eq!(update.status.is_some(), expect_unknown, "look {} at {}", i, now);
            if stop.is_none() && renew_every <= 40 {
                // Renewed at least every 40 s, looked at at most every 10 s: never Unknown.
                prop_assert!(update.status.is_none());
            }
            saved = Some(update.health);
        }
    }
}
