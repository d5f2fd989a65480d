use super::*;
use crate::registry::Registry;
use std::sync::LazyLock;

static API: LazyLock<OpenApi> = LazyLock::new(|| OpenApi::new(&Registry::new()));

fn document(gv: &str) -> Value {
    let (bytes, _) = API.v3_document(gv).expect("document served");
    serde_json::from_slice(&bytes).expect("valid JSON")
}

#[test]
fn index_lists_every_group_version_with_its_hash() {
    let registry = Registry::new();
    let index = API.v3_index();
    let paths = index["paths"].as_object().expect("paths");
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
    assert_eq!(again.v3_index(), API.v3_index());
    let (a, ha) = again.v3_document("apis/apps/v1").expect("doc");
    let (b, hb) = API.v3_document("/apis/apps/v1").expect("doc");
    assert_eq!((&a, &ha), (&b, &hb));
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
        let (bytes, _) = API.v3_document(key).expect("doc");
        let text = std::str::from_utf8(&bytes).expect("utf-8");
        assert!(!text.contains("$defs"), "{key}");
        // A `$schema` key of a definition itself (JSONSchemaProps has a
        // property of that name, which is fine).
        let doc: Value = serde_json::from_slice(&bytes).expect("JSON");
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        for (name, def) in schemas {
            assert!(def.get("$schema").is_none(), "{key}: {name}");
        }
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

// ---------------------------------------------------------------------------
// Custom resources
// ---------------------------------------------------------------------------

mod custom_resources {
    use super::*;
    use crate::crd::CustomVersion;
    use crate::registry::builtin;

    /// A version of a prometheus-operator-like CRD: a schema with an
    /// int-or-string field and an embedded resource, status and scale.
    const WIDGET_V1: &str = r#"
name: v1
served: true
storage: true
schema:
  openAPIV3Schema:
    description: Widget runs widgets.
    type: object
    properties:
      apiVersion: {type: string, description: written by the CRD}
      kind: {type: string}
      metadata: {type: object}
      spec:
        description: Spec of the widget.
        type: object
        required: [version]
        properties:
          version: {type: string, description: The version to run.}
          replicas: {type: integer, format: int32, minimum: 0}
          maxUnavailable: {x-kubernetes-int-or-string: true}
          template:
            type: object
            x-kubernetes-embedded-resource: true
            x-kubernetes-preserve-unknown-fields: true
          ports:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name]
            items:
              type: object
              required: [name]
              properties:
                name: {type: string}
                port: {type: integer}
      status:
        type: object
        properties:
          availableReplicas: {type: integer}
subresources:
  status: {}
  scale:
    specReplicasPath: .spec.replicas
    statusReplicasPath: .status.availableReplicas
"#;

    fn widget_row(version_yaml: &str) -> ResourceInfo {
        let version = serde_saphyr::from_str(version_yaml).expect("a CRD version");
        let mut info = builtin().into_iter().next().expect("a row");
        (info.group, info.version, info.kind, info.plural, info.singular) = (
            "example.com".into(),
            "v1".into(),
            "Widget".into(),
            "widgets".into(),
            "widget".into(),
        );
        info.namespaced = true;
        info.subresources = vec![Subresource::Status, Subresource::Scale];
        info.storage_name = "widgets".into();
        info.storage_version = "v1".into();
        info.custom = Some(Arc::new(CustomVersion {
            crd: "widgets.example.com".into(),
            version,
            structural: None,
        }));
        info
    }

    fn doc(api: &OpenApi, gv: &str) -> Value {
        let (bytes, _) = api.v3_document(gv).expect("document served");
        serde_json::from_slice(&bytes).expect("valid JSON")
    }

    #[test]
    fn a_new_custom_resource_appears_in_the_index_and_only_its_document_is_built() {
        let registry = Registry::new();
        let api = OpenApi::new(&registry);
        let before = api.v3_index();
        assert!(before["paths"].get("apis/example.com/v1").is_none());
        let apps = api.v3_document("apis/apps/v1").expect("apps");

        registry.insert(widget_row(WIDGET_V1));
        let after = api.v3_index();
        let url = after["paths"]["apis/example.com/v1"]["serverRelativeURL"]
            .as_str()
            .expect("listed");
        let (_, hash) = api.v3_document("apis/example.com/v1").expect("document");
        assert_eq!(url, format!("/openapi/v3/apis/example.com/v1?hash={hash}"));
        // The built-in documents are the very same bytes, not rebuilt.
        let apps_again = api.v3_document("apis/apps/v1").expect("apps");
        assert_eq!(apps_again, apps);
        assert_eq!(apps_again.0.as_ptr(), apps.0.as_ptr());
        let mut without = after["paths"].as_object().expect("paths").clone();
        without.remove("apis/example.com/v1");
        assert_eq!(Value::Object(without), before["paths"]);
    }

    #[test]
    fn a_changed_crd_changes_the_hash_and_a_removed_one_leaves() {
        let registry = Registry::new();
        let api = OpenApi::new(&registry);
        registry.insert(widget_row(WIDGET_V1));
        let (_, first) = api.v3_document("apis/example.com/v1").expect("document");
        let (_, same) = api.v3_document("apis/example.com/v1").expect("document");
        assert_eq!(first, same);
        registry.insert(widget_row(
            &WIDGET_V1.replace("The version to run.", "What to run."),
        ));
        let (bytes, second) = api.v3_document("apis/example.com/v1").expect("document");
        assert_ne!(first, second);
        assert!(
            std::str::from_utf8(&bytes)
                .expect("utf-8")
                .contains("What to run.")
        );
        assert!(
            api.v3_index()["paths"]["apis/example.com/v1"]["serverRelativeURL"]
                .as_str()
                .expect("url")
                .ends_with(&second)
        );
        registry.remove("example.com", "v1", "widgets");
        assert!(api.v3_document("apis/example.com/v1").is_none());
        assert!(api.v3_index()["paths"].get("apis/example.com/v1").is_none());
    }

    #[test]
    fn the_kind_definition_is_the_schema_as_a_kubernetes_kind() {
        let registry = Registry::new();
        registry.insert(widget_row(WIDGET_V1));
        let api = OpenApi::new(&registry);
        let doc = doc(&api, "apis/example.com/v1");
        let schemas = &doc["components"]["schemas"];
        let widget = &schemas["com.example.v1.Widget"];
        assert_eq!(
            widget["x-kubernetes-group-version-kind"],
            json!([{"group": "example.com", "version": "v1", "kind": "Widget"}])
        );
        assert_eq!(widget["description"], "Widget runs widgets.");
        let props = &widget["properties"];
        assert_eq!(
            ref_target(&props["metadata"]),
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        );
        assert!(
            props["metadata"]["description"]
                .as_str()
                .expect("doc")
                .starts_with("Standard object's metadata.")
        );
        assert!(
            props["apiVersion"]["description"]
                .as_str()
                .expect("doc")
                .starts_with("APIVersion defines")
        );
        assert!(
            props["kind"]["description"]
                .as_str()
                .expect("doc")
                .starts_with("Kind is a string value")
        );
        let spec = &props["spec"];
        assert_eq!(spec["required"], json!(["version"]));
        assert_eq!(
            spec["properties"]["replicas"],
            json!({"type": "integer", "format": "int32", "minimum": 0.0})
        );
        assert_eq!(
            spec["properties"]["maxUnavailable"]["anyOf"],
            json!([{"type": "integer"}, {"type": "string"}])
        );
        let template = &spec["properties"]["template"];
        assert_eq!(template["required"], json!(["kind", "apiVersion"]));
        assert!(ref_target(&template["properties"]["metadata"]).is_some());
        assert_eq!(
            spec["properties"]["ports"]["x-kubernetes-list-map-keys"],
            json!(["name"])
        );

        let list = &schemas["com.example.v1.WidgetList"];
        assert_eq!(list["x-kubernetes-group-version-kind"][0]["kind"], "WidgetList");
        assert_eq!(list["required"], json!(["items"]));
        assert_eq!(
            ref_target(&list["properties"]["items"]["items"]),
            Some("com.example.v1.Widget")
        );
        assert_eq!(
            ref_target(&list["properties"]["metadata"]),
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
        );
        assert!(
            schemas["io.k8s.api.autoscaling.v1.Scale"].is_object(),
            "the scale subresource's kind"
        );
    }

    #[test]
    fn paths_serve_every_verb_without_strategic_merge_patch() {
        let registry = Registry::new();
        registry.insert(widget_row(WIDGET_V1));
        let api = OpenApi::new(&registry);
        let doc = doc(&api, "apis/example.com/v1");
        let paths = &doc["paths"];
        let collection = "/apis/example.com/v1/namespaces/{namespace}/widgets";
        let item = format!("{collection}/{{name}}");
        for (path, verbs) in [
            (collection.to_string(), &["get", "post", "delete"][..]),
            (item.clone(), &["get", "put", "patch", "delete"][..]),
            ("/apis/example.com/v1/widgets".to_string(), &["get"][..]),
            (format!("{item}/status"), &["get", "put", "patch"][..]),
            (format!("{item}/scale"), &["get", "put", "patch"][..]),
        ] {
            for verb in verbs {
                assert!(paths[&path][verb].is_object(), "{path} {verb}");
            }
        }
        let patch = &paths[&item]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({"group": "example.com", "version": "v1", "kind": "Widget"})
        );
        let params: Vec<&str> = patch["parameters"]
            .as_array()
            .expect("parameters")
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(params.contains(&"fieldValidation"), "kubectl's validation check");
        let content = patch["requestBody"]["content"].as_object().expect("content");
        let mut types: Vec<&str> = content.keys().map(String::as_str).collect();
        types.sort_unstable();
        assert_eq!(
            types,
            [
                "application/apply-patch+yaml",
                "application/json-patch+json",
                "application/merge-patch+json"
            ]
        );
        assert_eq!(
            ref_target(&paths[&item]["get"]["responses"]["200"]["content"]["application/json"]["schema"]),
            Some("com.example.v1.Widget")
        );
        assert_eq!(
            paths[format!("{item}/scale")]["get"]["x-kubernetes-group-version-kind"]["kind"],
            "Scale"
        );
    }

    #[test]
    fn a_version_without_a_schema_is_an_object_and_every_reference_resolves() {
        let registry = Registry::new();
        registry.insert(widget_row("name: v1\nserved: true\nstorage: true\n"));
        let api = OpenApi::new(&registry);
        let bare = doc(&api, "apis/example.com/v1");
        let widget = &bare["components"]["schemas"]["com.example.v1.Widget"];
        assert_eq!(
            widget,
            &json!({"type": "object", "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}]})
        );
        registry.insert(widget_row(WIDGET_V1));
        let doc = doc(&api, "apis/example.com/v1");
        let text = doc.to_string();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("\"$ref\":\"") {
            rest = &rest[at + 8..];
            let target = &rest[..rest.find('"').expect("closing quote")];
            let name = target.strip_prefix(kinds::REF_PREFIX).expect("components ref");
            assert!(doc["components"]["schemas"][name].is_object(), "{target}");
        }
    }
}
