//! Table tests of the structural schema: compile errors, defaults, pruning,
//! kube-openapi messages, list types, embedded resources, CEL rules, the
//! custom-resource patch metadata under server-side apply, and every schema
//! of the prometheus-operator CRDs (copied into `tests/testdata/manifests`).
//!
//! Fragments marked "prometheus-operator" are copied from
//! `prometheus-operator-crds.yaml` (commit 6adcebc50).

use serde_json::{Value, json};

use super::Structural;

fn compile(schema: Value) -> Structural {
    match Structural::compile(&schema, "spec.versions[0].schema.openAPIV3Schema") {
        Ok(s) => s,
        Err(errs) => panic!("schema does not compile: {errs:?}"),
    }
}

fn messages(errs: &[crate::error::FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn compile_errors(schema: Value) -> Vec<String> {
    match Structural::compile(&schema, "spec.versions[0].schema.openAPIV3Schema") {
        Ok(_) => Vec::new(),
        Err(errs) => messages(&errs),
    }
}

fn root(spec: Value) -> Value {
    json!({"type": "object", "properties": {"spec": spec}})
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

fn validate(schema: Value, spec: Value) -> Vec<String> {
    messages(&compile(schema).validate(&obj(spec), None))
}

#[test]
fn value_checks_print_kube_openapi_messages() {
    let schema = root(json!({
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^a"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 1},
            "ratio": {"type": "number", "maximum": 1.5, "exclusiveMaximum": true},
            "step": {"type": "integer", "multipleOf": 5},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "level": {"type": "integer", "enum": [1, 2]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 1},
            "env": {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 1},
            "id": {"type": "string", "format": "uuid"},
            "when": {"type": "string", "format": "date-time"},
            "opt": {"type": "string", "nullable": true},
            "port": {"x-kubernetes-int-or-string": true},
            "items": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer", "maximum": 65535}}}}
        }
    }));
    let cases: &[(Value, &[&str])] = &[
        (json!({"name": "abc"}), &[]),
        (
            json!({"name": "abc", "replicas": "string"}),
            &[
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
            ],
        ),
        (
            json!({"name": "abc", "replicas": 11}),
            &["spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"],
        ),
        (
            json!({"name": "abc", "replicas": 0}),
            &["spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"],
        ),
        (json!({"name": "abc", "replicas": 2.0}), &[]),
        (
            json!({"name": "abc", "ratio": 1.5}),
            &["spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"],
        ),
        (
            json!({"name": "abc", "step": 7}),
            &["spec.step: Invalid value: 7: spec.step in body should be a multiple of 5"],
        ),
        (json!({}), &["spec.name: Required value"]),
        (
            json!({"name": "abcdef"}),
            &["spec.name: Too long: may not be more than 5 bytes"],
        ),
        (
            json!({"name": "ab"}),
            &[r#"spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long"#],
        ),
        (
            json!({"name": "bcd"}),
            &[r#"spec.name: Invalid value: "bcd": spec.name in body should match '^a'"#],
        ),
        (
            json!({"name": "abc", "mode": "x"}),
            &[r#"spec.mode: Unsupported value: "x": supported values: "a", "b""#],
        ),
        (
            json!({"name": "abc", "level": 3}),
            &[r#"spec.level: Unsupported value: 3: supported values: "1", "2""#],
        ),
        (
            json!({"name": "abc", "tags": []}),
            &["spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"],
        ),
        (
            json!({"name": "abc", "tags": ["a", "b", "c"]}),
            &["spec.tags: Too many: 3: must have at most 2 items"],
        ),
        (
            json!({"name": "abc", "tags": ["a", 1]}),
            &[
                r#"spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: "integer""#,
            ],
        ),
        (
            json!({"name": "abc", "labels": {"a": "1", "b": "2"}}),
            &["spec.labels: Too many: 2: must have at most 1 items"],
        ),
        (
            json!({"name": "abc", "labels": {"a": 1}}),
            &[
                r#"spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#,
            ],
        ),
        (
            json!({"name": "abc", "env": {}}),
            &["spec.env: Invalid value: 1: spec.env in body should have at least 1 properties"],
        ),
        (
            json!({"name": "abc", "id": "nope"}),
            &[r#"spec.id: Invalid value: "nope": spec.id in body must be of type uuid: "nope""#],
        ),
        (
            json!({"name": "abc", "id": "0b3f6c1e-4a5d-4c2e-9f1a-1234567890ab"}),
            &[],
        ),
        (json!({"name": "abc", "when": "2024-05-01T10:00:00Z"}), &[]),
        (
            json!({"name": "abc", "when": "yesterday"}),
            &[
                r#"spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday""#,
            ],
        ),
        (json!({"name": "abc", "opt": null}), &[]),
        (
            json!({"name": null}),
            &[r#"spec.name: Invalid value: "null": spec.name in body must be of type string: "null""#],
        ),
        (json!({"name": "abc", "port": 80}), &[]),
        (json!({"name": "abc", "port": "http"}), &[]),
        (
            json!({"name": "abc", "port": true}),
            &[
                r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
            ],
        ),
        (
            json!({"name": "abc", "items": [{"port": 1}, {"port": 66666}]}),
            &[
                "spec.items[1].port: Invalid value: 66666: spec.items[1].port in body should be less than or equal to 65535",
            ],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(validate(schema.clone(), spec.clone()), *want, "spec {spec}");
    }
}

#[test]
fn junctors_report_as_upstream_does() {
    // oneOf with required, as CRDs write mutually exclusive fields.
    let schema = root(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}]
    }));
    assert_eq!(validate(schema.clone(), json!({"a": "x"})), Vec::<String>::new());
    assert_eq!(
        validate(schema.clone(), json!({})),
        [
            r#"<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid"#,
            "spec.a: Required value",
        ]
    );
    assert_eq!(
        validate(schema, json!({"a": "x", "b": "y"})),
        [
            r#"<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
}

#[test]
fn list_types_report_duplicates() {
    let schema = root(json!({
        "type": "object",
        "properties": {
            "hosts": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "port"],
                "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}
            },
            "routes": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}
            }
        }
    }));
    let cases: &[(Value, &[&str])] = &[
        (
            json!({"hosts": ["a", "b"], "ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}),
            &[],
        ),
        (
            json!({"hosts": ["a", "b", "a"]}),
            &[r#"spec.hosts[2]: Duplicate value: "a""#],
        ),
        (
            json!({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 80}]}),
            &[r#"spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a", "port":80}"#],
        ),
        (
            json!({"routes": [{"name": "a"}, {"name": "a"}]}),
            &[r#"spec.routes[1]: Duplicate value: map[string]interface {}{"name":"a"}"#],
        ),
        (
            json!({"routes": [{}]}),
            &["spec.routes[0]: Required value: must not be empty for an array of list-type map"],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(validate(schema.clone(), spec.clone()), *want, "spec {spec}");
    }
}

#[test]
fn embedded_resources_need_api_version_and_kind() {
    let schema = root(json!({
        "type": "object",
        "properties": {"template": {
            "type": "object",
            "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true
        }}
    }));
    assert_eq!(
        validate(schema.clone(), json!({"template": {"metadata": {"name": "x"}}})),
        [
            "spec.template.apiVersion: Required value",
            "spec.template.kind: Required value"
        ]
    );
    assert_eq!(
        validate(
            schema.clone(),
            json!({"template": {"apiVersion": "v1", "kind": "Pod", "spec": {"x": 1}}})
        ),
        Vec::<String>::new()
    );
    // Pruning keeps the embedded object's unknown fields (preserved) and cuts
    // its metadata to ObjectMeta's fields.
    let s = compile(schema);
    let mut o = obj(
        json!({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "bogus": 1}, "spec": {"a": 1}}}),
    );
    assert_eq!(s.prune(&mut o), ["spec.template.metadata.bogus"]);
    assert_eq!(
        o["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": {"a": 1}})
    );
}

#[test]
fn pruning_names_the_removed_fields() {
    let s = compile(json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
                "gone": {"type": "string"},
                "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}
            }},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    }));
    let mut o = obj(json!({
        "gone": null,
        "foo": 1,
        "items": [{"name": "a", "bar": 2}],
        "labels": {"x": {"v": "1", "w": "2"}},
        "raw": {"anything": {"goes": true}, "known": {"a": "1", "b": "2"}}
    }));
    o["status"] = json!({"free": {"form": 1}});
    o["extra"] = json!(true);
    let pruned = s.prune(&mut o);
    assert_eq!(
        pruned,
        [
            "extra",
            "spec.foo",
            "spec.items[0].bar",
            "spec.labels.x.w",
            "spec.raw.known.b"
        ]
    );
    assert_eq!(
        o,
        json!({
            "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"items": [{"name": "a"}], "labels": {"x": {"v": "1"}}, "raw": {"anything": {"goes": true}, "known": {"a": "1"}}},
            "status": {"free": {"form": 1}}
        })
    );
}

#[test]
fn defaults_fill_absent_and_non_nullable_null_fields() {
    let s = compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "mode": {"type": "string", "default": "a"},
            "opt": {"type": "string", "nullable": true, "default": "x"},
            "config": {"type": "object", "default": {"level": "info"}, "properties": {
                "level": {"type": "string"},
                "format": {"type": "string", "default": "json"}
            }},
            "ports": {"type": "array", "items": {"type": "object", "properties": {
                "protocol": {"type": "string", "default": "TCP"},
                "port": {"type": "integer"}
            }}},
            "env": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                "value": {"type": "string", "default": "unset"}
            }}}
        }}}
    }));
    let mut o = obj(json!({"mode": null, "opt": null, "ports": [{"port": 80}], "env": {"A": {}}}));
    s.apply_defaults(&mut o);
    assert_eq!(
        o["spec"],
        json!({
            "replicas": 1, "mode": "a", "opt": null,
            "config": {"level": "info", "format": "json"},
            "ports": [{"port": 80, "protocol": "TCP"}],
            "env": {"A": {"value": "unset"}}
        })
    );
    // An absent spec takes its default, then the defaults inside it.
    let mut bare = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    s.apply_defaults(&mut bare);
    assert_eq!(bare["spec"]["replicas"], 1);
    assert_eq!(bare["spec"]["config"], json!({"level": "info", "format": "json"}));
    assert_eq!(bare["metadata"], json!({"name": "w"}));
}

#[test]
fn compile_reports_structural_violations() {
    let prefix = "spec.versions[0].schema.openAPIV3Schema";
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            root(json!({"properties": {"a": {"type": "string"}}})),
            vec![format!(
                "{prefix}.properties[spec].type: Required value: must not be empty for specified object fields"
            )],
        ),
        (
            root(json!({"type": "array"})),
            vec![format!(
                "{prefix}.properties[spec].items: Required value: must be specified"
            )],
        ),
        (
            root(
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
            ),
            vec![format!(
                "{prefix}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
            )],
        ),
        (
            root(json!({"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true})),
            vec![format!(
                "{prefix}.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            )],
        ),
        (
            root(
                json!({"type": "string", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
            ),
            vec![format!(
                "{prefix}.properties[spec].type: Invalid value: \"string\": must be object if x-kubernetes-embedded-resource is true"
            )],
        ),
        (
            root(json!({"type": "object", "x-kubernetes-embedded-resource": true})),
            vec![format!(
                "{prefix}.properties[spec].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
            )],
        ),
        (
            root(
                json!({"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}, "x-kubernetes-list-type": "map"}),
            ),
            vec![format!(
                "{prefix}.properties[spec].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
            )],
        ),
        (
            root(
                json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["name"]}),
            ),
            vec![format!(
                "{prefix}.properties[spec].x-kubernetes-list-map-keys: Forbidden: must be empty if x-kubernetes-list-type is not map"
            )],
        ),
        (
            root(json!({"type": "object", "properties": {"a": {"type": "integer", "default": "one"}}})),
            vec![format!(
                "{prefix}.properties[spec].properties[a].default: Invalid value: \"string\":  in body must be of type integer: \"string\""
            )],
        ),
        (
            root(
                json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"x": {"type": "string"}}, "default": {"x": "1", "y": 2}}}}),
            ),
            vec![format!(
                "{prefix}.properties[spec].properties[a].default: Invalid value: {{\"x\":\"1\",\"y\":2}}: must not have unknown fields"
            )],
        ),
        (
            root(json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.x >"}]})),
            vec!["CEL".to_string()],
        ),
        (
            json!({"type": "string"}),
            vec![format!(
                "{prefix}.type: Invalid value: \"string\": must be object at the root"
            )],
        ),
        (
            json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
            vec![format!(
                "{prefix}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            )],
        ),
        (
            root(json!({"type": "object", "anyOf": [{"type": "object", "description": "x"}]})),
            vec![
                format!(
                    "{prefix}.properties[spec].anyOf[0].description: Forbidden: must be empty to be structural"
                ),
                format!("{prefix}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural"),
            ],
        ),
        // A default may rely on the defaults nested in it.
        (
            root(
                json!({"type": "object", "default": {}, "required": ["a"], "properties": {"a": {"type": "string", "default": "x"}}}),
            ),
            vec![],
        ),
        // The int-or-string patterns are structural.
        (
            root(
                json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}),
            ),
            vec![],
        ),
    ];
    for (schema, want) in cases {
        let got = compile_errors(schema.clone());
        if want == ["CEL"] {
            assert_eq!(got.len(), 1, "{got:?}");
            let want_start = format!(
                "{prefix}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.x >\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:"
            );
            assert!(got[0].starts_with(&want_start), "{}", got[0]);
            continue;
        }
        assert_eq!(got, want, "schema {schema}");
    }
}

/// prometheus-operator: `PrometheusAgent` `spec` rules (two of them).
fn agent_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["StatefulSet", "DaemonSet"]},
                "replicas": {"type": "integer", "format": "int32"},
                "shards": {"type": "integer", "format": "int32"}
            },
            "x-kubernetes-validations": [
                {"message": "replicas cannot be set when mode is DaemonSet",
                 "rule": "!(has(self.mode) && self.mode == 'DaemonSet' && has(self.replicas))"},
                {"message": "shards cannot be greater than 1 when mode is DaemonSet",
                 "rule": "!(has(self.mode) && self.mode == 'DaemonSet' && has(self.shards)\n  && self.shards > 1)"}
            ]
        }}
    })
}

#[test]
fn cel_rules_pass_and_fail_with_upstream_messages() {
    assert_eq!(
        validate(agent_schema(), json!({"mode": "StatefulSet", "replicas": 2})),
        Vec::<String>::new()
    );
    assert_eq!(
        validate(
            agent_schema(),
            json!({"mode": "DaemonSet", "replicas": 2, "shards": 3})
        ),
        [
            r#"spec: Invalid value: "object": replicas cannot be set when mode is DaemonSet"#,
            r#"spec: Invalid value: "object": shards cannot be greater than 1 when mode is DaemonSet"#,
        ]
    );
    let schema = root(json!({
        "type": "object",
        "properties": {
            "minReplicas": {"type": "integer"},
            "maxReplicas": {"type": "integer"},
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('web-') && !self.endsWith('-') && self.matches('^[a-z-]+$')"}]},
            "containers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "image": {"type": "string"}}},
                "x-kubernetes-validations": [
                    {"rule": "self.all(c, has(c.image))", "message": "every container needs an image"},
                    {"rule": "self.map(c, c.name).filter(n, n == 'main').size() <= 1", "messageExpression": "'main appears ' + string(self.filter(c, c.name == 'main').size()) + ' times'"},
                    {"rule": "self.exists(c, c.name.contains('a'))", "fieldPath": ".name", "reason": "FieldValueRequired"}
                ]}
        },
        "x-kubernetes-validations": [{"rule": "self.minReplicas <= self.maxReplicas"}]
    }));
    let cases: &[(Value, &[&str])] = &[
        (json!({"minReplicas": 1, "maxReplicas": 3, "name": "web-a"}), &[]),
        (
            json!({"minReplicas": 5, "maxReplicas": 3}),
            &[r#"spec: Invalid value: "object": failed rule: self.minReplicas <= self.maxReplicas"#],
        ),
        (
            json!({"minReplicas": 1, "maxReplicas": 3, "name": "api-"}),
            &[
                r#"spec.name: Invalid value: "string": failed rule: self.startsWith('web-') && !self.endsWith('-') && self.matches('^[a-z-]+$')"#,
            ],
        ),
        (
            json!({"minReplicas": 1, "maxReplicas": 3, "containers": [{"name": "main", "image": "x"}, {"name": "main"}]}),
            &[
                r#"spec.containers: Invalid value: "array": every container needs an image"#,
                r#"spec.containers: Invalid value: "array": main appears 2 times"#,
            ],
        ),
        (
            json!({"minReplicas": 1, "maxReplicas": 3, "containers": [{"name": "x", "image": "y"}]}),
            &["spec.containers.name: Required value: failed rule: self.exists(c, c.name.contains('a'))"],
        ),
        (
            json!({"maxReplicas": 3}),
            &[
                r#"spec: Invalid value: "object": no such key: minReplicas evaluating rule: self.minReplicas <= self.maxReplicas"#,
            ],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(validate(schema.clone(), spec.clone()), *want, "spec {spec}");
    }
}

#[test]
fn transition_rules_run_only_on_update() {
    let s = compile(root(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "name is immutable"}]},
            "ports": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer",
                    "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "port may only grow"}]}}}
            }
        }
    })));
    let old = obj(json!({"name": "a", "ports": [{"name": "http", "port": 80}]}));
    assert!(
        s.validate(&obj(json!({"name": "b"})), None).is_empty(),
        "no oldSelf on create"
    );
    let new = obj(json!({"name": "b", "ports": [{"name": "new", "port": 1}, {"name": "http", "port": 70}]}));
    assert_eq!(
        messages(&s.validate(&new, Some(&old))),
        [
            r#"spec.name: Invalid value: "string": name is immutable"#,
            r#"spec.ports[1].port: Invalid value: "integer": port may only grow"#,
        ]
    );
}

#[test]
fn server_side_apply_merges_custom_map_lists_per_key() {
    use crate::patch::apply::{ApplyOptions, apply};
    use crate::patch::meta::{ListType, Schema, Shape};
    use crate::registry::Registry;

    // prometheus-operator: `AlertmanagerConfig` `spec.receivers`, cut down.
    let s = compile(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "receivers": {
                "type": "array",
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "webhookConfigs": {"type": "array", "items": {"type": "object", "properties": {"url": {"type": "string"}}}}
                }},
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-list-type": "map"
            },
            "hosts": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}}
        }}}
    }));
    let schema = Schema::for_custom(s.root.clone());
    let receivers = schema
        .field("spec")
        .and_then(|s| s.field("receivers"))
        .expect("receivers");
    assert_eq!(receivers.shape(), Shape::List);
    assert_eq!(receivers.list_type(), ListType::Map(&["name"]));
    let spec = schema.field("spec").expect("spec");
    assert_eq!(spec.field("hosts").map(|h| h.list_type()), Some(ListType::Set));
    assert!(
        spec.field("selector")
            .is_some_and(|s| s.map_atomic() && s.shape() == Shape::Map)
    );
    assert!(
        schema
            .field("metadata")
            .and_then(|m| m.field("finalizers"))
            .is_some()
    );

    let mut info = (*Registry::new().by_kind("v1", "ConfigMap").expect("configmaps")).clone();
    (info.group, info.version, info.kind) = (
        "monitoring.coreos.com".into(),
        "v1alpha1".into(),
        "AlertmanagerConfig".into(),
    );
    info.subresources.clear();
    let opts = |manager| ApplyOptions {
        manager,
        force: false,
        resource: &info,
        subresource: None,
        time: "2024-05-01T10:00:00Z",
    };
    let config = |receiver: &str, url: &str| {
        json!({"apiVersion": "monitoring.coreos.com/v1alpha1", "kind": "AlertmanagerConfig",
               "metadata": {"name": "c", "namespace": "default"},
               "spec": {"receivers": [{"name": receiver, "webhookConfigs": [{"url": url}]}]}})
    };
    let first =
        apply(Some(&schema), None, &config("team-a", "http://a"), &opts("alice")).expect("alice applies");
    let second = apply(
        Some(&schema),
        Some(&first),
        &config("team-b", "http://b"),
        &opts("bob"),
    )
    .expect("bob applies");
    let names: Vec<&str> = second["spec"]["receivers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["team-a", "team-b"], "both managers' receivers kept");
    // Alice re-applies without her receiver: only hers goes away.
    let mut empty = config("x", "y");
    empty["spec"] = json!({});
    let third = apply(Some(&schema), Some(&second), &empty, &opts("alice")).expect("alice re-applies");
    assert_eq!(
        third["spec"]["receivers"],
        json!([{"name": "team-b", "webhookConfigs": [{"url": "http://b"}]}])
    );
}

const PROMETHEUS_CRDS: &str = "../tests/testdata/manifests/prometheus-operator-crds.yaml";

/// Every version's schema of the prometheus-operator CRDs, with its name.
fn prometheus_schemas() -> Vec<(String, Value)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PROMETHEUS_CRDS);
    let text = std::fs::read_to_string(&path).expect("prometheus-operator CRDs");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("YAML parses");
    let mut out = Vec::new();
    for crd in docs {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default().to_string();
        for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
            let version = v["name"].as_str().unwrap_or_default();
            out.push((
                format!("{name}/{version}"),
                v["schema"]["openAPIV3Schema"].clone(),
            ));
        }
    }
    out
}

#[test]
fn every_prometheus_operator_schema_compiles() {
    let schemas = prometheus_schemas();
    assert!(schemas.len() >= 10, "{} schemas", schemas.len());
    for (name, raw) in &schemas {
        let errs = compile_errors(raw.clone());
        assert!(errs.is_empty(), "{name}: {errs:#?}");
    }
}

#[test]
#[allow(
    clippy::disallowed_methods,
    reason = "a test's own duration, not the server's time"
)]
fn validating_a_big_object_against_a_big_schema_is_linear() {
    let (_, raw) = prometheus_schemas()
        .into_iter()
        .find(|(n, _)| n.starts_with("prometheuses."))
        .expect("the Prometheus CRD");
    let s = compile(raw);
    // A Prometheus with many containers, each with many env entries.
    let env: Vec<Value> = (0..200)
        .map(|i| json!({"name": format!("E{i}"), "value": "x"}))
        .collect();
    let containers: Vec<Value> = (0..50)
        .map(|i| json!({"name": format!("c{i}"), "image": "img", "env": env, "args": ["--a", "--b"]}))
        .collect();
    let mut o = json!({"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
        "metadata": {"name": "p"}, "spec": {"replicas": 1, "containers": containers, "unknownField": 1}});
    assert_eq!(s.prune(&mut o), ["spec.unknownField"]);
    s.apply_defaults(&mut o);
    let steps = std::time::Instant::now();
    let errs = s.validate(&o, Some(&o));
    assert!(errs.is_empty(), "{:#?}", messages(&errs));
    // 10,000 env entries: well under a second even unoptimised, were the
    // work quadratic it would take minutes.
    assert!(steps.elapsed().as_secs() < 10, "took {:?}", steps.elapsed());
}

#[test]
fn a_compiled_schema_is_shared_across_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Structural>();
}

#[test]
fn formats_accept_and_reject_as_strfmt() {
    use super::formats::valid;
    let cases: &[(&str, &str, bool)] = &[
        ("uuid", "0b3f6c1e-4a5d-4c2e-9f1a-1234567890ab", true),
        ("uuid", "0b3f6c1e", false),
        ("uuid4", "0b3f6c1e-4a5d-3c2e-9f1a-1234567890ab", false),
        ("date-time", "2024-05-01T10:00:00+02:00", true),
        ("date-time", "2024-05-01", false),
        ("date", "2024-05-01", true),
        ("date", "2024-13-01", false),
        ("byte", "aGVsbG8=", true),
        ("byte", "not base64!", false),
        ("ipv4", "10.0.0.1", true),
        ("ipv4", "10.0.0.256", false),
        ("ipv6", "fd00::1", true),
        ("cidr", "10.0.0.0/8", true),
        ("cidr", "10.0.0.0/33", false),
        ("mac", "00:1a:2b:3c:4d:5e", true),
        ("hostname", "example.com", true),
        ("hostname", "-bad-", false),
        ("email", "a@example.com", true),
        ("email", "nope", false),
        ("uri", "https://example.com/x", true),
        ("uri", "not a uri", false),
        ("duration", "1h30m", true),
        ("duration", "soon", false),
        ("int32", "anything", true),
        ("isbn", "anything", true),
    ];
    for (format, s, want) in cases {
        assert_eq!(valid(format, s), *want, "{format} {s:?}");
    }
}

/// A declared property named by a CEL reserved word (`namespace`) or with
/// characters outside CEL identifiers is reached by its escaped name, as the
/// Gateway API's parentRefs rules do (`p.__namespace__`); map keys stay raw.
#[test]
fn cel_rules_reach_escaped_property_names() {
    let schema = root(json!({
        "type": "object",
        "properties": {
            "refs": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "namespace": {"type": "string"}, "a-b": {"type": "string"}
            }},
            "x-kubernetes-validations": [
                {"rule": "self.all(p1, self.exists_one(p2, p1.name == p2.name && (has(p1.__namespace__) ? (has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__) : !has(p2.__namespace__))))", "message": "refs must be unique"},
                {"rule": "self.all(p, !has(p.a__dash__b) || p.a__dash__b != 'x')", "message": "a-b must not be x"}
            ]},
            "labels": {"type": "object", "additionalProperties": {"type": "string"},
                "x-kubernetes-validations": [{"rule": "self.all(k, k != 'namespace')", "message": "no namespace key"}]}
        }
    }));
    let cases: &[(Value, &[&str])] = &[
        (
            json!({"refs": [{"name": "gw", "namespace": "a"}, {"name": "gw", "namespace": "b"}]}),
            &[],
        ),
        (
            json!({"refs": [{"name": "gw", "namespace": "a"}, {"name": "gw", "namespace": "a"}]}),
            &[r#"spec.refs: Invalid value: "array": refs must be unique"#],
        ),
        (
            json!({"refs": [{"name": "gw", "a-b": "x"}]}),
            &[r#"spec.refs: Invalid value: "array": a-b must not be x"#],
        ),
        (
            json!({"labels": {"namespace": "v"}}),
            &[r#"spec.labels: Invalid value: "object": no namespace key"#],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(validate(schema.clone(), spec.clone()), *want, "{spec}");
    }
}

/// A `pattern` is checked for its syntax when the CRD is created, and
/// compiled only when a value first meets it.
#[test]
fn patterns_are_checked_at_creation_and_matched_on_use() {
    let errs = compile_errors(root(json!({"type": "string", "pattern": "(a"})));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with(
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].pattern: Invalid value: \"(a\": must be a valid regular expression, but isn't: "
        ),
        "{}",
        errs[0]
    );
    assert!(errs[0].contains("unclosed group"), "{}", errs[0]);

    let schema =
        root(json!({"type": "object", "properties": {"host": {"type": "string", "pattern": "^[a-z]+$"}}}));
    let s = compile(schema);
    let host = &s.root.properties["spec"].properties["host"];
    let pattern = host.checks.pattern.as_ref().expect("a pattern");
    assert_eq!(pattern.is_match("web"), Some(true));
    let refused = messages(&s.validate(&obj(json!({"host": "Web"})), None));
    assert_eq!(
        refused,
        [r#"spec.host: Invalid value: "Web": spec.host in body should match '^[a-z]+$'"#]
    );
    assert!(s.validate(&obj(json!({"host": "web"})), None).is_empty());
}
