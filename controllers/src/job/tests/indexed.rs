//! Interval strings, pending indexes, duplicate removal and pod names of Indexed Jobs (cases after
//! upstream's `indexed_job_utils_test.go`).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::fixtures::{JobFixture, PodFixture, at};
use crate::job::indexed::{
    Interval, OrderedIntervals, calculate_succeeded_indexes, duplicated_index_pods_for_removal,
    first_pending_indexes, new_index_failure_counts, parse_indexes_from_string, pod_generate_name_with_index,
};

fn iv(pairs: &[(i64, i64)]) -> OrderedIntervals {
    OrderedIntervals(
        pairs
            .iter()
            .map(|&(first, last)| Interval { first, last })
            .collect(),
    )
}

#[test]
fn parsing_and_formatting_interval_strings() {
    /// (input, completions, intervals, formatted again)
    type Case<'a> = (&'a str, i64, &'a [(i64, i64)], &'a str);
    let cases: &[Case] = &[
        ("", 10, &[], ""),
        ("1", 10, &[(1, 1)], "1"),
        ("1,3,5,7", 10, &[(1, 1), (3, 3), (5, 5), (7, 7)], "1,3,5,7"),
        ("0-3", 10, &[(0, 3)], "0-3"),
        ("0,1", 10, &[(0, 1)], "0,1"),
        ("1-2,3", 10, &[(1, 3)], "1-3"),
        ("1-3,5-7", 10, &[(1, 3), (5, 7)], "1-3,5-7"),
        // Cut at completions: an interval past it is shortened, one starting there ends the list.
        ("1-5,7-9", 8, &[(1, 5), (7, 7)], "1-5,7"),
        ("3,9,11", 9, &[(3, 3)], "3"),
        // Corrupted parts are skipped.
        ("1,a,3,4-x", 10, &[(1, 1), (3, 3)], "1,3"),
        ("-1,2", 10, &[(2, 2)], "2"),
    ];
    for (input, completions, want, formatted) in cases {
        let got = parse_indexes_from_string(input, *completions);
        assert_eq!(got, iv(want), "parse {input:?}");
        assert_eq!(got.to_string(), *formatted, "format {input:?}");
    }
}

#[test]
fn merging_totals_and_membership() {
    let a = iv(&[(0, 2), (7, 9)]);
    assert_eq!(a.with_ordered_indexes(&[3, 5, 6]).to_string(), "0-3,5-9");
    assert_eq!(a.merge(&iv(&[(1, 8)])).to_string(), "0-9");
    assert_eq!(iv(&[]).with_ordered_indexes(&[4, 4, 5]).to_string(), "4,5");
    assert_eq!(a.total(), 6);
    let members: Vec<i64> = (0..11).filter(|i| a.has(*i)).collect();
    assert_eq!(members, [0, 1, 2, 7, 8, 9]);
    assert!(!iv(&[]).has(0));
}

fn pods(list: Vec<PodFixture>) -> Vec<Arc<Pod>> {
    list.into_iter().map(PodFixture::arc).collect()
}

#[test]
fn first_pending_indexes_skip_active_succeeded_and_failed_ones() {
    let active = pods(vec![PodFixture::new("a").index(1), PodFixture::new("b").index(4)]);
    let succeeded = iv(&[(0, 0), (2, 3)]);
    let failed = iv(&[(6, 6)]);
    let got = first_pending_indexes(&active, None, &succeeded, Some(&failed), 3, 10);
    assert_eq!(got, [5, 7, 8]);
    assert_eq!(
        first_pending_indexes(&active, None, &succeeded, None, 10, 7),
        [5, 6]
    );
    assert!(first_pending_indexes(&active, None, &succeeded, None, 0, 7).is_empty());
    let terminating = pods(vec![PodFixture::new("c").index(5)]);
    let got = first_pending_indexes(&active, Some(&terminating), &succeeded, None, 2, 10);
    assert_eq!(
        got,
        [6, 7],
        "a terminating pod's index waits when only failed pods are replaced"
    );
}

#[test]
fn duplicated_missing_and_out_of_range_indexes_are_removed_first() {
    let list = pods(vec![
        PodFixture::new("dup-old").index(1).ready(),
        PodFixture::new("dup-new").index(1).pending(),
        PodFixture::new("none"),
        PodFixture::new("far").index(9),
        PodFixture::new("ok").index(2),
    ]);
    let (rm, left) = duplicated_index_pods_for_removal(&list, 5);
    let mut rm: Vec<&str> = rm.iter().map(|p| p.metadata.name.as_deref().unwrap()).collect();
    rm.sort();
    assert_eq!(
        rm,
        ["dup-new", "far", "none"],
        "the pending duplicate goes, the ready one stays"
    );
    let mut left: Vec<&str> = left.iter().map(|p| p.metadata.name.as_deref().unwrap()).collect();
    left.sort();
    assert_eq!(left, ["dup-old", "ok"]);
}

#[test]
fn succeeded_indexes_count_only_pods_not_yet_counted() {
    let job = JobFixture::new(Some(6), 2)
        .indexed()
        .status(serde_json::json!({"completedIndexes": "0,1"}))
        .build();
    let list = pods(vec![
        PodFixture::new("a").index(3).succeeded(at(1)),
        PodFixture::new("b").index(4).succeeded(at(1)).counted(),
        PodFixture::new("c").index(9).succeeded(at(1)),
        PodFixture::new("d").index(5).failed(1, at(1)),
    ]);
    let (prev, now) = calculate_succeeded_indexes(&job, &list);
    assert_eq!(prev.to_string(), "0,1");
    assert_eq!(now.to_string(), "0,1,3");
}

#[test]
fn generate_names_keep_the_index_within_58_characters() {
    assert_eq!(pod_generate_name_with_index("pi", 3), "pi-3-");
    let long = "a".repeat(70);
    let got = pod_generate_name_with_index(&long, 12);
    assert_eq!(got.len(), 58);
    assert!(got.ends_with("a-12-"), "{got}");
    let exact = "b".repeat(54);
    assert_eq!(pod_generate_name_with_index(&exact, 7), format!("{exact}-7-"));
}

#[test]
fn a_replacement_inherits_the_failure_count_plus_one() {
    let job = JobFixture::new(Some(3), 1)
        .indexed()
        .backoff_limit_per_index(2)
        .build();
    assert_eq!(new_index_failure_counts(&job, None), (0, 0));
    let failed = PodFixture::new("a")
        .index(0)
        .annotation("batch.kubernetes.io/job-index-failure-count", "1")
        .failed(1, at(0))
        .build();
    assert_eq!(new_index_failure_counts(&job, Some(&failed)), (2, 0));
    let ignoring = JobFixture::new(Some(3), 1)
        .indexed()
        .backoff_limit_per_index(2)
        .pod_failure_policy(serde_json::json!({"rules": [
            {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}]}))
        .build();
    assert_eq!(new_index_failure_counts(&ignoring, Some(&failed)), (1, 1));
}
