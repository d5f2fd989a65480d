//! `accounts_to_create`, case by case (upstream `serviceaccounts_controller_test.go`
//! `TestServiceAccountCreation`: new active namespace, existing account,
//! terminating namespace).

use k8s_openapi::api::core::v1::{Namespace, NamespaceStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::serviceaccount::plan::accounts_to_create;

fn namespace(phase: Option<&str>) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some("ns".into()),
            ..Default::default()
        },
        status: phase.map(|p| NamespaceStatus {
            phase: Some(p.into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn an_active_namespace_without_default_gets_it() {
    let created = accounts_to_create(&namespace(Some("Active")), |_| false);
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].metadata.name.as_deref(), Some("default"));
    assert_eq!(created[0].metadata.namespace.as_deref(), Some("ns"));
}

#[test]
fn a_namespace_without_a_phase_yet_counts_as_active() {
    assert_eq!(accounts_to_create(&namespace(None), |_| false).len(), 1);
}

#[test]
fn an_existing_default_is_left_alone() {
    assert!(accounts_to_create(&namespace(Some("Active")), |name| name == "default").is_empty());
}

#[test]
fn a_terminating_namespace_gets_nothing() {
    assert!(accounts_to_create(&namespace(Some("Terminating")), |_| false).is_empty());
}
