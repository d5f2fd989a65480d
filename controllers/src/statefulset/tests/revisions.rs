//! Tests of [`crate::statefulset::revisions`]: reuse, rollback renumbering, creation, and
//! history truncation (after upstream `TestStatefulSetControlRollback`, `TestTruncateHistory`).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSetStatus};

use super::fixtures::{SetExt, pod, set};
use crate::runtime::name_of;
use crate::statefulset::revisions::{
    UpdateRevision, choose_update_revision, current_revision, truncate_history,
};
use crate::statefulset::utils::new_revision;

fn stored(r: ControllerRevision) -> Arc<ControllerRevision> {
    Arc::new(r)
}

#[test]
fn no_history_creates_revision_one() {
    match choose_update_revision(&set(3), &[], 0) {
        UpdateRevision::Create(r) => assert_eq!(r.revision, 1),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unchanged_template_reuses_the_newest_revision() {
    let s = set(3);
    let revs = vec![stored(new_revision(&s, 1, 0))];
    assert_eq!(
        choose_update_revision(&s, &revs, 0),
        UpdateRevision::Latest(revs[0].clone())
    );
}

#[test]
fn a_new_template_creates_the_next_revision_and_a_rollback_renumbers() {
    let v1 = set(3);
    let v2 = set(3).image("nginx:2");
    let revs = vec![stored(new_revision(&v1, 1, 0))];
    let created = match choose_update_revision(&v2, &revs, 0) {
        UpdateRevision::Create(r) => *r,
        other => panic!("{other:?}"),
    };
    assert_eq!(created.revision, 2);
    assert_ne!(created.metadata.name, revs[0].metadata.name);
    let revs = vec![revs[0].clone(), stored(created)];
    match choose_update_revision(&v1, &revs, 0) {
        UpdateRevision::Rollback { existing, revision } => {
            assert_eq!(existing.metadata.name, revs[0].metadata.name);
            assert_eq!(revision, 3);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_current_revision_is_the_one_status_names() {
    let v1 = set(3);
    let v2 = set(3).image("nginx:2");
    let r1 = stored(new_revision(&v1, 1, 0));
    let r2 = stored(new_revision(&v2, 2, 0));
    let mut s = v2.clone();
    assert_eq!(
        current_revision(&s, &[r1.clone(), r2.clone()], &r2),
        r2,
        "no status: the update revision"
    );
    s.status = Some(StatefulSetStatus {
        current_revision: r1.metadata.name.clone(),
        ..Default::default()
    });
    assert_eq!(current_revision(&s, &[r1.clone(), r2.clone()], &r2), r1);
}

#[test]
fn truncation_keeps_live_revisions_and_the_limit() {
    let mut s = set(1);
    s.spec.as_mut().expect("spec").revision_history_limit = Some(2);
    let revs: Vec<Arc<ControllerRevision>> = (1..=6)
        .map(|i| stored(new_revision(&set(1).image(&format!("img:{i}")), i, 0)))
        .collect();
    let names: Vec<String> = revs.iter().map(|r| name_of(&r.metadata).to_owned()).collect();
    // Live: current (6), update (6), and revision 2 referenced by a pod.
    let p = pod(&s, 0, &names[1]);
    let deleted = truncate_history(&s, [&p], &revs, &names[5], &names[5]);
    // Non-live: 1, 3, 4, 5 → keep 2 of them (4, 5), delete 1 and 3.
    assert_eq!(deleted, [names[0].clone(), names[2].clone()]);
    s.spec.as_mut().expect("spec").revision_history_limit = Some(-1);
    assert!(truncate_history(&s, [&p], &revs, &names[5], &names[5]).is_empty());
}
