//! `plan`, case by case (upstream `publisher_test.go` `TestConfigMapCreation`:
//! missing, correct, wrong data, missing annotation).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;

use crate::rootcacertpublisher::plan::{
    CA_CERT_KEY, DESCRIPTION, DESCRIPTION_ANNOTATION, Plan, ROOT_CA_CONFIG_MAP, plan,
};

const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn created() -> ConfigMap {
    match plan("ns", None, CA) {
        Plan::Create(cm) => cm,
        other => panic!("expected a create, got {other:?}"),
    }
}

#[test]
fn a_missing_config_map_is_created_with_the_ca_and_the_description() {
    let cm = created();
    assert_eq!(cm.metadata.name.as_deref(), Some(ROOT_CA_CONFIG_MAP));
    assert_eq!(cm.metadata.namespace.as_deref(), Some("ns"));
    assert_eq!(cm.data.unwrap()[CA_CERT_KEY], CA);
    assert_eq!(
        cm.metadata.annotations.unwrap()[DESCRIPTION_ANNOTATION],
        DESCRIPTION
    );
}

#[test]
fn a_correct_config_map_is_left_alone() {
    assert_eq!(plan("ns", Some(&created()), CA), Plan::Nothing);
}

#[test]
fn edited_data_is_replaced_whole_and_other_annotations_kept() {
    let mut live = created();
    live.data = Some(BTreeMap::from([
        (CA_CERT_KEY.to_string(), "tampered".to_string()),
        ("extra".to_string(), "x".to_string()),
    ]));
    let annotations = live.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert("mine".into(), "kept".into());
    let Plan::Update(fixed) = plan("ns", Some(&live), CA) else {
        panic!("expected an update");
    };
    assert_eq!(
        fixed.data,
        Some(BTreeMap::from([(CA_CERT_KEY.to_string(), CA.to_string())]))
    );
    assert_eq!(fixed.metadata.annotations.unwrap()["mine"], "kept");
}

#[test]
fn a_removed_or_emptied_description_is_put_back() {
    for description in [None, Some("")] {
        let mut live = created();
        let annotations = live.metadata.annotations.as_mut().unwrap();
        annotations.remove(DESCRIPTION_ANNOTATION);
        if let Some(d) = description {
            annotations.insert(DESCRIPTION_ANNOTATION.into(), d.into());
        }
        let Plan::Update(fixed) = plan("ns", Some(&live), CA) else {
            panic!("expected an update for {description:?}");
        };
        assert_eq!(
            fixed.metadata.annotations.unwrap()[DESCRIPTION_ANNOTATION],
            DESCRIPTION
        );
    }
}
