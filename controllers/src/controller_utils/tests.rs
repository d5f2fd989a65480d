//! Table tests for the shared pod helpers; cases marked "upstream" are lifted from upstream's
//! `controller_utils_test.go` and `pod/util_test.go`.

use k8s_openapi::api::core::v1::{Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement, ObjectMeta};
use serde_json::Value;

use super::pods::*;
use super::ranking::*;
use super::selector::selector_of;
use super::slow_start::*;
use super::template::*;
use crate::replicaset::tests::fixtures::{names, now, pod, rs, t};
use crate::runtime::new_controller_ref;

// ----- availability (cases lifted from upstream TestIsPodAvailable) -----

#[test]
fn pod_availability_cases_from_upstream() {
    let cases: Vec<Value> =
        serde_json::from_str(include_str!("../../testdata/pod_availability.json")).expect("valid JSON");
    assert!(!cases.is_empty());
    for case in &cases {
        let input = &case["input"];
        let status = input["readyConditionStatus"].as_str().expect("status");
        let since = input["readyLastTransitionSecondsBeforeNow"]
            .as_i64()
            .map(|s| t(-s));
        let min_ready =
            i32::try_from(input["minReadySeconds"].as_i64().expect("minReadySeconds")).expect("i32");
        let mut builder = pod("p");
        builder = match (status, since) {
            ("True", Some(at)) => builder.ready_since(at),
            ("True", None) => builder.ready_no_time(),
            (_, at) => builder.not_ready_since(at.unwrap_or(now())),
        };
        let want = case["expected"]["available"]
            .as_bool()
            .expect("expected.available");
        assert_eq!(
            is_pod_available(&builder.build(), min_ready, now()),
            want,
            "{}",
            case["name"]
        );
    }
}

#[test]
fn availability_boundary_is_inclusive_and_zero_min_ready_needs_only_ready() {
    let ready_51s = pod("p").ready_since(t(-51)).build();
    assert!(is_pod_available(&ready_51s, 51, now()));
    assert!(!is_pod_available(&ready_51s, 52, now()));
    assert!(is_pod_available(&pod("p").ready_no_time().build(), 0, now()));
    assert!(
        !is_pod_available(&pod("p").build(), 0, now()),
        "no Ready condition at all"
    );
}

// ----- predicates -----

#[test]
fn active_and_terminating_follow_phase_and_deletion_timestamp() {
    let cases = [
        ("pending", pod("p").pending().build(), true, false),
        ("running", pod("p").running().build(), true, false),
        ("no phase", pod("p").build(), true, false),
        ("succeeded", pod("p").phase("Succeeded").build(), false, false),
        ("failed", pod("p").phase("Failed").build(), false, false),
        (
            "running, deleting",
            pod("p").running().deleting().build(),
            false,
            true,
        ),
        (
            "failed, deleting",
            pod("p").phase("Failed").deleting().build(),
            false,
            false,
        ),
    ];
    for (name, p, active, terminating) in cases {
        assert_eq!(is_pod_active(&p), active, "{name}: active");
        assert_eq!(is_pod_terminating(&p), terminating, "{name}: terminating");
    }
}

#[test]
fn ready_time_and_restarts() {
    assert_eq!(pod_ready_time(&pod("p").ready_since(t(-5)).build()), Some(t(-5)));
    assert_eq!(pod_ready_time(&pod("p").not_ready_since(t(-5)).build()), None);
    assert_eq!(max_container_restarts(&pod("p").restarts(&[1, 7, 3]).build()), 7);
    assert_eq!(max_container_restarts(&pod("p").build()), 0);
}

#[test]
fn deletion_cost_parsing() {
    let cases = [
        ("-5", -5),
        ("0", 0),
        ("100", 100),
        ("+10", 0),
        ("007", 0),
        ("abc", 0),
        ("", 0),
        ("2147483648", 0),
    ];
    for (value, want) in cases {
        assert_eq!(
            pod_deletion_cost(&pod("p").deletion_cost(value).build()),
            want,
            "{value:?}"
        );
    }
    assert_eq!(pod_deletion_cost(&pod("p").build()), 0);
}

// ----- deletion ranking -----

struct RankCase {
    name: &'static str,
    /// Pods with their ranks, listed in the expected deletion order.
    pods: Vec<(Pod, usize)>,
}

fn rank_case(name: &'static str, pods: Vec<(Pod, usize)>) -> RankCase {
    RankCase { name, pods }
}

fn rank_cases() -> Vec<RankCase> {
    let ready = |name: &str, secs: i64| pod(name).on_node("n1").running().ready_since(t(-secs));
    vec![
        rank_case(
            "unassigned before assigned",
            vec![
                (pod("a").running().build(), 0),
                (pod("b").on_node("n1").pending().build(), 0),
            ],
        ),
        rank_case(
            "Pending < Unknown < Running",
            vec![
                (pod("a").on_node("n1").pending().build(), 0),
                (pod("b").on_node("n1").unknown().build(), 0),
                (pod("c").on_node("n1").running().build(), 0),
            ],
        ),
        rank_case(
            "no phase counts as Pending",
            vec![
                (pod("a").on_node("n1").build(), 0),
                (pod("b").on_node("n1").unknown().build(), 0),
            ],
        ),
        rank_case(
            "not ready before ready, whatever the deletion cost",
            vec![
                (pod("a").on_node("n1").running().deletion_cost("100").build(), 0),
                (ready("b", 60).deletion_cost("-100").build(), 0),
            ],
        ),
        rank_case(
            "lower deletion cost first, before rank",
            vec![
                (ready("a", 60).deletion_cost("-1").build(), 0),
                (ready("b", 60).build(), 5),
                (ready("c", 60).deletion_cost("10").build(), 9),
            ],
        ),
        rank_case(
            "invalid deletion cost counts as 0",
            vec![
                (ready("a", 60).deletion_cost("-1").build(), 0),
                (ready("b", 60).deletion_cost("+5").build(), 1),
                (ready("c", 60).build(), 0),
            ],
        ),
        rank_case(
            "doubled-up nodes first",
            vec![(ready("a", 60).build(), 3), (ready("b", 60).build(), 1)],
        ),
        rank_case(
            "more recently ready first across buckets",
            vec![
                (ready("a", 20).uid("uid-z").build(), 0),
                (ready("b", 60).uid("uid-a").build(), 0),
            ],
        ),
        rank_case(
            "same ready bucket: smaller UID first",
            vec![
                (ready("a", 60).uid("uid-a").build(), 0),
                (ready("b", 40).uid("uid-b").build(), 0),
            ],
        ),
        rank_case(
            "ready without a time first",
            vec![
                (pod("a").on_node("n1").running().ready_no_time().build(), 0),
                (ready("b", 1).build(), 0),
            ],
        ),
        rank_case(
            "equal ready time: more restarts first",
            vec![
                (ready("a", 60).restarts(&[0, 4]).build(), 0),
                (ready("b", 60).restarts(&[3]).build(), 0),
            ],
        ),
        rank_case(
            "newer first across creation buckets",
            vec![
                (ready("a", 60).created(t(-100)).uid("uid-z").build(), 0),
                (ready("b", 60).created(t(-1000)).uid("uid-a").build(), 0),
            ],
        ),
        rank_case(
            "same creation bucket: smaller UID first",
            vec![
                (ready("a", 60).created(t(-1000)).uid("uid-a").build(), 0),
                (ready("b", 60).created(t(-900)).uid("uid-b").build(), 0),
            ],
        ),
        rank_case(
            "no creation time first",
            vec![
                (ready("a", 60).build(), 0),
                (ready("b", 60).created(t(-5)).build(), 0),
            ],
        ),
        rank_case(
            "created in the future counts as bucket -1",
            vec![
                (ready("a", 60).created(t(5)).uid("uid-z").build(), 0),
                (ready("b", 60).created(t(-1)).uid("uid-a").build(), 0),
            ],
        ),
    ]
}

#[test]
fn pods_with_ranks_order_for_deletion() {
    for case in rank_cases() {
        let want: Vec<String> = names(case.pods.iter().map(|(p, _)| p));
        for reversed in [false, true] {
            let mut ranked: Vec<RankedPod<'_>> = case
                .pods
                .iter()
                .map(|(pod, rank)| RankedPod { pod, rank: *rank })
                .collect();
            if reversed {
                ranked.reverse();
            }
            sort_pods_with_ranks(&mut ranked, now());
            assert_eq!(
                names(ranked.iter().map(|r| r.pod)),
                want,
                "{} (reversed input: {reversed})",
                case.name
            );
        }
    }
}

#[test]
fn active_pods_order_uses_exact_times_without_buckets() {
    let ready = |name: &str, secs: i64| pod(name).on_node("n1").running().ready_since(t(-secs));
    let cases: Vec<(&str, Vec<Pod>)> = vec![
        (
            "unassigned, pending, not ready, ready",
            vec![
                pod("a").pending().build(),
                pod("b").on_node("n1").pending().build(),
                pod("c").on_node("n1").running().build(),
                ready("d", 5).build(),
            ],
        ),
        (
            "ready later first even inside one log bucket",
            vec![
                ready("a", 40).uid("uid-z").build(),
                ready("b", 60).uid("uid-a").build(),
            ],
        ),
        (
            "restarts, then newer creation first",
            vec![
                ready("a", 60).restarts(&[2]).created(t(-1000)).build(),
                ready("b", 60).created(t(-900)).build(),
                ready("c", 60).created(t(-1000)).build(),
            ],
        ),
        (
            "deletion cost is ignored",
            vec![
                ready("a", 10).deletion_cost("100").build(),
                ready("b", 20).deletion_cost("-100").build(),
            ],
        ),
    ];
    for (name, pods) in cases {
        let mut order: Vec<&Pod> = pods.iter().rev().collect();
        sort_active_pods(&mut order);
        assert_eq!(names(order), names(&pods), "{name}");
    }
}

#[test]
fn rank_counts_active_related_pods_per_node() {
    let related = [
        pod("r1").on_node("n1").running().build(),
        pod("r2").on_node("n1").running().build(),
        pod("r3").on_node("n1").phase("Failed").build(),
        pod("r4").on_node("n2").running().build(),
        pod("r5").on_node("n1").running().deleting().build(),
    ];
    let to_rank = [
        pod("a").on_node("n1").build(),
        pod("b").on_node("n2").build(),
        pod("c").on_node("n3").build(),
    ];
    let ranks: Vec<usize> = rank_by_related_pods_on_same_node(&to_rank, &related)
        .iter()
        .map(|r| r.rank)
        .collect();
    assert_eq!(ranks, [2, 1, 0]);
}

#[test]
fn logarithmic_rank_buckets() {
    assert_eq!(logarithmic_rank(now(), now()), -1);
    assert_eq!(logarithmic_rank(t(10), now()), -1);
    assert_eq!(
        logarithmic_rank(now() - jiff::SignedDuration::from_nanos(1), now()),
        0
    );
    assert_eq!(
        logarithmic_rank(now() - jiff::SignedDuration::from_nanos(1024), now()),
        10
    );
    assert_eq!(logarithmic_rank(t(-60), now()), 35);
}

#[test]
fn non_transitive_comparisons_do_not_panic() {
    // a and b share a ready time (decided later by creation), c sits in the same bucket (decided by UID):
    // upstream's ordering has a cycle here. Sorting must still terminate with every pod present.
    let ready = |name: &str, uid: &str, secs: i64, created: i64| {
        pod(name)
            .on_node("n1")
            .running()
            .ready_since(t(-secs))
            .uid(uid)
            .created(t(-created))
            .build()
    };
    let mut pods = Vec::new();
    for i in 0..40 {
        pods.push(ready(&format!("a{i}"), &format!("uid-3-{i}"), 50, 100 + i));
        pods.push(ready(&format!("b{i}"), &format!("uid-1-{i}"), 50, 2000 + i));
        pods.push(ready(&format!("c{i}"), &format!("uid-2-{i}"), 49, 500 + i));
    }
    let mut ranked: Vec<RankedPod<'_>> = pods.iter().map(|pod| RankedPod { pod, rank: 0 }).collect();
    sort_pods_with_ranks(&mut ranked, now());
    assert_eq!(ranked.len(), 120);
}

// ----- slow start -----

#[test]
fn slow_start_batches_double_and_cap_at_remaining() {
    let cases: [(usize, &[usize]); 7] = [
        (0, &[]),
        (1, &[1]),
        (2, &[1, 1]),
        (3, &[1, 2]),
        (7, &[1, 2, 4]),
        (10, &[1, 2, 4, 3]),
        (20, &[1, 2, 4, 8, 5]),
    ];
    for (count, want) in cases {
        assert_eq!(
            slow_start_batches(count, SLOW_START_INITIAL_BATCH_SIZE),
            want,
            "count {count}"
        );
    }
    let burst = slow_start_batches(500, SLOW_START_INITIAL_BATCH_SIZE);
    assert_eq!(burst.iter().sum::<usize>(), 500);
    assert_eq!(burst, [1, 2, 4, 8, 16, 32, 64, 128, 245]);
}

// ----- selectors -----

fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    let values = (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect());
    LabelSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values,
    }
}

#[test]
fn selector_matching() {
    let labels = pod("p")
        .labels(&[("app", "web"), ("tier", "fe")])
        .build()
        .metadata
        .labels;
    let by_expr = |r| LabelSelector {
        match_expressions: Some(vec![r]),
        ..LabelSelector::default()
    };
    let cases = [
        ("empty selector", LabelSelector::default(), true),
        ("In hit", by_expr(requirement("tier", "In", &["fe", "be"])), true),
        ("In miss", by_expr(requirement("tier", "In", &["be"])), false),
        ("In absent key", by_expr(requirement("zone", "In", &["a"])), false),
        ("NotIn hit", by_expr(requirement("tier", "NotIn", &["fe"])), false),
        (
            "NotIn absent key",
            by_expr(requirement("zone", "NotIn", &["a"])),
            true,
        ),
        ("Exists", by_expr(requirement("tier", "Exists", &[])), true),
        (
            "DoesNotExist",
            by_expr(requirement("tier", "DoesNotExist", &[])),
            false,
        ),
        (
            "unknown operator",
            by_expr(requirement("tier", "Like", &["fe"])),
            false,
        ),
        (
            "In without values",
            by_expr(requirement("tier", "In", &[])),
            false,
        ),
    ];
    for (name, selector, want) in cases {
        assert_eq!(selector_of(&selector).matches(&labels.as_ref()), want, "{name}");
    }
    let selector = rs("r")
        .selector(&[("app", "web"), ("tier", "be")])
        .build()
        .spec
        .expect("spec")
        .selector;
    assert!(
        !selector_of(&selector).matches(&labels.as_ref()),
        "every matchLabels entry must match"
    );
}

// ----- pods from templates -----

fn template() -> PodTemplateSpec {
    let mut meta = pod("ignored")
        .labels(&[("app", "web")])
        .deletion_cost("3")
        .build()
        .metadata;
    meta.finalizers = Some(vec!["example.com/keep".into()]);
    let spec = PodSpec {
        node_name: Some("n9".into()),
        ..PodSpec::default()
    };
    PodTemplateSpec {
        metadata: Some(meta),
        spec: Some(spec),
    }
}

#[test]
fn pod_from_template_copies_template_and_adds_controller_ref() {
    let web = rs("web").build();
    let reference = new_controller_ref(&web.metadata, "apps/v1", "ReplicaSet");
    let p = pod_from_template(&template(), &web.metadata, reference.clone()).expect("valid template");
    let tpl = template();
    let tpl_meta = tpl.metadata.expect("metadata");
    assert_eq!(p.metadata.generate_name.as_deref(), Some("web-"));
    assert_eq!(p.metadata.name, None);
    assert_eq!(p.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(p.metadata.labels, tpl_meta.labels);
    assert_eq!(p.metadata.annotations, tpl_meta.annotations);
    assert_eq!(p.metadata.finalizers, tpl_meta.finalizers);
    assert_eq!(p.metadata.owner_references, Some(vec![reference]));
    assert_eq!(p.spec, tpl.spec);
    assert_eq!(
        p.metadata.uid, None,
        "identity fields of the template are not copied"
    );
}

#[test]
fn pod_from_template_refusals() {
    let web = rs("web").build();
    let good = new_controller_ref(&web.metadata, "apps/v1", "ReplicaSet");
    let mut unlabelled = template();
    unlabelled.metadata.as_mut().expect("metadata").labels = None;
    assert_eq!(
        pod_from_template(&unlabelled, &web.metadata, good.clone()),
        Err(PodTemplateError::NoLabels)
    );
    let not_controller = k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        controller: Some(false),
        ..good.clone()
    };
    let no_block = k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        block_owner_deletion: None,
        ..good.clone()
    };
    let no_kind = k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
        kind: String::new(),
        ..good
    };
    for bad in [not_controller, no_block, no_kind] {
        let err = pod_from_template(&template(), &web.metadata, bad).expect_err("refused");
        assert!(matches!(err, PodTemplateError::InvalidControllerRef(_)), "{err}");
    }
}

#[test]
fn generate_name_prefix() {
    assert_eq!(pods_prefix("web"), "web-");
    assert_eq!(pods_prefix("a.b"), "a.b-");
    assert_eq!(pods_prefix(&"x".repeat(253)), format!("{}-", "x".repeat(253)));
    assert_eq!(
        pods_prefix("Web"),
        "Web",
        "invalid names fall back to the bare name"
    );
    let meta = ObjectMeta {
        name: Some("web".into()),
        ..ObjectMeta::default()
    };
    assert_eq!(new_controller_ref(&meta, "apps/v1", "ReplicaSet").name, "web");
}
