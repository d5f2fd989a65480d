//! Unit tests of the CustomResourceDefinition strategy and validation.

use serde_json::{Value, json};

use super::*;

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]},
    })
}

fn fields(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(|e| e.to_string()).collect()
}

#[test]
fn defaults_fill_singular_list_kind_and_conversion() {
    let mut c = crd();
    default_crd(&mut c);
    assert_eq!(c["spec"]["names"]["singular"], "widget");
    assert_eq!(c["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(c["spec"]["conversion"], json!({"strategy": "None"}));
    assert!(validate_crd(&c).is_empty(), "{:?}", fields(&validate_crd(&c)));
}

#[test]
fn create_drops_status_but_the_storage_version() {
    let mut c = crd();
    c["status"] = json!({"conditions": [{"type": "Established", "status": "True"}]});
    prepare_create(&mut c);
    assert_eq!(c["status"], json!({"storedVersions": ["v1"]}));
    assert_eq!(c["metadata"]["generation"], 1);
}

#[test]
fn a_new_storage_version_is_added_to_stored_versions() {
    let mut c = crd();
    c["status"] = json!({"storedVersions": ["v1"]});
    c["spec"]["versions"] = json!([
        {"name": "v1", "served": true, "storage": false},
        {"name": "v2", "served": true, "storage": true}]);
    add_stored_version(&mut c);
    assert_eq!(c["status"]["storedVersions"], json!(["v1", "v2"]));
}

#[test]
fn upstream_messages_for_a_bad_definition() {
    let mut c = crd();
    default_crd(&mut c);
    c["metadata"]["name"] = json!("gadgets.example.com");
    c["spec"]["group"] = json!("example");
    c["spec"]["scope"] = json!("Global");
    c["spec"]["versions"] = json!([
        {"name": "V1", "served": true, "storage": false},
        {"name": "V1", "served": true, "storage": false}]);
    let errs = fields(&validate_crd(&c));
    for want in [
        "metadata.name: Invalid value: \"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group",
        "spec.group: Invalid value: \"example\": should be a domain with at least one dot",
        "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"",
        "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required",
    ] {
        assert!(errs.iter().any(|e| e == want), "{want} in {errs:#?}");
    }
    assert!(
        errs.iter()
            .any(|e| e.starts_with("spec.versions[0].name: Invalid value: \"V1\""))
    );
    assert!(
        errs.iter()
            .any(|e| e.ends_with("must contain unique version names"))
    );
    assert!(
        errs.iter()
            .any(|e| e.ends_with("must have exactly one version marked as storage version"))
    );
}

#[test]
fn scale_paths_and_printer_columns_are_checked() {
    let mut c = crd();
    default_crd(&mut c);
    c["spec"]["versions"][0]["subresources"] = json!({"scale": {"specReplicasPath": ".status.replicas"}});
    c["spec"]["versions"][0]["additionalPrinterColumns"] =
        json!([{"name": "Size", "type": "int", "jsonPath": ".spec.size"}]);
    let errs = fields(&validate_crd(&c));
    assert!(errs.contains(&"spec.versions[0].subresources.scale.specReplicasPath: Invalid value: \".status.replicas\": should be a json path under .spec".to_string()), "{errs:#?}");
    assert!(
        errs.contains(&"spec.versions[0].subresources.scale.statusReplicasPath: Required value".to_string()),
        "{errs:#?}"
    );
    assert!(errs.iter().any(|e| {
        e.starts_with("spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: \"int\"")
    }));
}

#[test]
fn an_update_keeps_names_and_stored_versions() {
    let mut old = crd();
    default_crd(&mut old);
    old["status"] =
        json!({"storedVersions": ["v1"], "conditions": [{"type": "Established", "status": "True"}]});
    let mut new = old.clone();
    new["spec"]["scope"] = json!("Cluster");
    new["status"]["storedVersions"] = json!(["v1", "v0"]);
    let errs = fields(&validate_crd_update(&new, &old));
    assert!(
        errs.contains(&"spec.scope: Invalid value: \"Cluster\": field is immutable".to_string()),
        "{errs:#?}"
    );
    assert!(errs.contains(
        &"status.storedVersions[1]: Invalid value: \"v0\": must appear in spec.versions".to_string()
    ));
}

#[test]
fn a_delete_adds_the_finalizer_and_terminating() {
    let mut c = crd();
    let mut finalizers = Vec::new();
    mark_terminating(&mut c, &mut finalizers, "2024-01-01T00:00:00Z");
    assert_eq!(finalizers, [CLEANUP_FINALIZER]);
    assert_eq!(c["status"]["conditions"][0]["reason"], "InstanceDeletionPending");
    assert!(condition_true(&c, "Terminating"));
}
