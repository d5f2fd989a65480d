use super::*;
use crate::registry::Registry;
use std::sync::LazyLock;

static API: LazyLock<OpenApi> = LazyLock::new(|| OpenApi::new(&Registry::new()));

fn document(gv: &str) -> Value {
    let (bytes, _) = API.v3_document(gv).expect("document served");
    serde_json::from_slice(bytes).expect("valid JSON")
}

#[test]
fn index_lists_every_group_version_with_its_hash() {
    let registry = Registry::new();
    let paths = API.v3_index()["paths"].as_object().expect("paths");
    for (group, version) in registry.group_versions() {
        let key = index_key(&group, &version);
        let url = paths[&key]["serverRelativeURL"].as_str().expect("url");
        let (_, hash) = API.v3_document(&key).expect("document");
        assert_eq!(url, format!("/openapi/v3/{key}?hash={hash}"));
    }
    assert_eq!(paths.len(), registry.group_versions().len());
    assert!(paths.contains_key("api/v1") && paths.contains_key("apis/apps/v1"));
}

#[test]
fn hashes_are_stable_across_builds() {
    let again = OpenApi::new(&Registry::new());
    assert_eq!(&again.built().index, API.v3_index());
    let (a, ha) = again.v3_document("apis/apps/v1").expect("doc");
    let (b, hb) = API.v3_document("/apis/apps/v1").expect("doc");
    assert_eq!((a, ha), (b, hb));
    assert_eq!(ha.len(), 16);
    assert!(ha.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
}

#[test]
fn unknown_group_versions_have_no_document() {
    assert!(API.v3_document("apis/example.com/v1").is_none());
    assert!(API.v2_protobuf().is_empty());
}

#[test]
fn deployment_patch_declares_field_validation_and_its_gvk() {
    let doc = document("apis/apps/v1");
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": "apps", "version": "v1", "kind": "Deployment"})
    );
    let params: Vec<&str> = patch["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for wanted in ["fieldValidation", "dryRun", "fieldManager", "force"] {
        assert!(params.contains(&wanted), "{wanted} missing from {params:?}");
    }
    let content = patch["requestBody"]["content"].as_object().expect("content");
    for ty in [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/apply-patch+yaml",
    ] {
        assert!(content.contains_key(ty), "{ty}");
    }
    let smp = content.contains_key("application/strategic-merge-patch+json");
    assert_eq!(smp, patchmeta::knows_kind("apps", "Deployment"));
}

#[test]
fn every_resource_has_collection_and_item_paths() {
    let registry = Registry::new();
    for info in registry.all() {
        let key = index_key(&info.group, &info.version);
        let doc = document(&key);
        let base = format!("/{key}");
        let ns = if info.namespaced {
            "/namespaces/{namespace}"
        } else {
            ""
        };
        let collection = format!("{base}{ns}/{}", info.plural);
        let paths = &doc["paths"];
        for verb in ["get", "post", "delete"] {
            assert!(paths[&collection][verb].is_object(), "{collection} {verb}");
        }
        for verb in ["get", "put", "patch", "delete"] {
            let op = &paths[format!("{collection}/{{name}}")][verb];
            assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], info.kind.as_str());
        }
    }
}

#[test]
fn scale_subresource_speaks_autoscaling_scale() {
    let doc = document("apis/apps/v1");
    let scale = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"];
    assert_eq!(scale["x-kubernetes-group-version-kind"]["kind"], "Scale");
    assert!(doc["components"]["schemas"]["io.k8s.api.autoscaling.v1.Scale"].is_object());
}

#[test]
fn no_json_schema_defs_remain() {
    for key in API.built().documents.keys() {
        let text = std::str::from_utf8(API.v3_document(key).expect("doc").0).expect("utf-8");
        assert!(!text.contains("$defs"), "{key}");
        assert!(!text.contains("\"$schema\""), "{key}");
    }
}

#[test]
fn every_reference_resolves() {
    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r);
                }
                m.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    for key in API.built().documents.keys() {
        let doc = document(key);
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(!found.is_empty());
        for r in found {
            let name = r.strip_prefix(kinds::REF_PREFIX).expect("components ref");
            assert!(doc["components"]["schemas"][name].is_object(), "{key}: {r}");
        }
    }
}

#[test]
fn kinds_carry_their_gvk_list_and_docs() {
    let doc = document("apis/apps/v1");
    let schemas = &doc["components"]["schemas"];
    let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
    );
    assert!(deployment.get("required").is_none());
    let list = &schemas["io.k8s.api.apps.v1.DeploymentList"];
    assert_eq!(
        list["x-kubernetes-group-version-kind"][0]["kind"],
        "DeploymentList"
    );
    let strategy = &schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"];
    assert_eq!(
        ref_target(strategy),
        Some("io.k8s.api.apps.v1.DeploymentStrategy")
    );
    let rolling = &schemas["io.k8s.api.apps.v1.DeploymentStrategy"]["properties"]["rollingUpdate"];
    assert!(
        rolling["description"]
            .as_str()
            .expect("docs")
            .contains("Rolling update")
    );
    assert!(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object());
    assert!(
        schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]["x-kubernetes-group-version-kind"]
            .is_array()
    );
}

#[test]
fn int_or_string_looks_like_upstream() {
    let doc = document("apis/apps/v1");
    let ios = &doc["components"]["schemas"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"];
    assert!(
        ios.get("type").is_none(),
        "explain shows <IntOrString> only without a type"
    );
    assert_eq!(ios["format"], "int-or-string");
    assert_eq!(ios["oneOf"], json!([{"type": "integer"}, {"type": "string"}]));
    assert_eq!(ios["x-kubernetes-int-or-string"], true);
    let quantity = &doc["components"]["schemas"]["io.k8s.apimachinery.pkg.api.resource.Quantity"];
    assert_eq!(quantity["oneOf"], json!([{"type": "string"}, {"type": "number"}]));
    assert!(quantity.get("x-kubernetes-int-or-string").is_none());
    let time = &doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.Time"];
    assert_eq!(time["format"], "date-time");
}

#[test]
fn patch_extensions_follow_patch_meta() {
    let doc = document("api/v1");
    let containers = &doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    if patchmeta::knows_kind("", "Pod") {
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(containers["x-kubernetes-list-type"], "map");
    } else {
        assert!(containers.get("x-kubernetes-patch-strategy").is_none());
    }
}
