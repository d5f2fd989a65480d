//! Table test over `testdata/ssa.json` (expected values from upstream's
//! structured-merge-diff and field manager) plus unit tests.

use serde_json::{Value, json};

use super::super::meta::Schema;
use super::fieldpath::FieldSet;
use super::{ApplyError, ApplyOptions, Conflict, apply, conflict_message, kinds, track_update};
use crate::kinds::kind_of;
use crate::registry::{Registry, ResourceInfo, Subresource};

const CASES: &str = include_str!("../../../testdata/ssa.json");
const NOW: &str = "2024-05-01T10:00:00Z";

/// The served resource of `apiVersion`/`kind`, or a custom resource
/// without subresources when the registry does not serve it.
fn resource(api_version: &str, kind: &str) -> ResourceInfo {
    let registry = Registry::new();
    if let Some(info) = registry.by_kind(api_version, kind) {
        return (*info).clone();
    }
    let mut info = (*registry.by_kind("v1", "ConfigMap").expect("configmaps")).clone();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    (info.group, info.version, info.kind) = (group.into(), version.into(), kind.into());
    info.subresources.clear();
    info
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// RFC 7386 JSON merge patch (what a merge-patch+json step sends).
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let Some(t) = target.as_object_mut() else {
        return;
    };
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// The managedFields of an object without `time` and `fieldsType`.
fn entries_of(obj: &Value) -> Value {
    let mut list = obj
        .pointer("/metadata/managedFields")
        .cloned()
        .unwrap_or(json!([]));
    for e in list.as_array_mut().into_iter().flatten() {
        if let Some(m) = e.as_object_mut() {
            m.remove("time");
            m.remove("fieldsType");
        }
    }
    list
}

fn without_managed(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(m) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    out
}

struct Case<'a> {
    raw: &'a Value,
    resource: ResourceInfo,
    schema: Option<Schema>,
}

/// A distinct time per step (upstream orders entries by time first).
fn step_time(i: usize) -> String {
    format!("2024-05-01T10:00:{:02}Z", i % 60)
}

fn run_step(case: &Case, live: &mut Option<Value>, step: &Value, now: &str) -> Result<(), String> {
    let text = |k: &str| step.get(k).and_then(Value::as_str).unwrap_or("");
    let (manager, subresource) = (text("manager"), step.get("subresource").and_then(Value::as_str));
    if text("operation") == "Apply" {
        let opts = ApplyOptions {
            manager,
            force: step["force"].as_bool().unwrap_or(false),
            resource: &case.resource,
            subresource,
            time: now,
        };
        let result = apply(case.schema.as_ref(), live.as_ref(), &step["object"], &opts);
        return check_apply(result, live, &step["expected_result"]);
    }
    let is_create = text("http").starts_with("POST");
    let mut new = match step.get("patch") {
        Some(patch) => {
            let mut doc = live.clone().unwrap_or(json!({}));
            merge_patch(&mut doc, patch);
            doc
        }
        None => step["object"].clone(),
    };
    if let (Some(old), false) = (live.as_ref(), is_create) {
        let paths = kinds::reset_paths(
            kind_of(&case.resource),
            case.resource.has(Subresource::Status),
            subresource,
        );
        kinds::restore_reset(&mut new, old, &paths);
    }
    let old = if is_create { None } else { live.as_ref() };
    let schema = case.schema.as_ref();
    track_update(schema, old, &mut new, manager, &case.resource, subresource, now);
    *live = Some(new);
    Ok(())
}

fn check_apply(
    result: Result<Value, ApplyError>,
    live: &mut Option<Value>,
    expected: &Value,
) -> Result<(), String> {
    match (result, expected.get("error")) {
        (Ok(obj), None) => {
            *live = Some(obj);
            Ok(())
        }
        (Ok(_), Some(err)) => Err(format!("expected error {err}, got success")),
        (Err(e), None) => Err(format!("unexpected error: {e}")),
        (Err(e), Some(err)) => check_error(&e, err.as_str().unwrap_or(""), expected),
    }
}

fn check_error(e: &ApplyError, message: &str, expected: &Value) -> Result<(), String> {
    if e.to_string() != message {
        return Err(format!("error message\n  got:  {e}\n  want: {message}"));
    }
    let want_reason = expected["reason"].as_str().unwrap_or("");
    let causes: Vec<Value> = match e {
        ApplyError::Conflicts(c) => c
            .iter()
            .map(|c| json!({"type": "FieldManagerConflict", "field": c.field, "message": c.message()}))
            .collect(),
        ApplyError::BadRequest(_) if want_reason == "BadRequest" => Vec::new(),
        other => return Err(format!("wrong error kind {other:?}, want {want_reason}")),
    };
    let want = expected.get("causes").cloned().unwrap_or(json!([]));
    if Value::Array(causes.clone()) != want {
        return Err(format!("causes\n  got:  {}\n  want: {want}", json!(causes)));
    }
    Ok(())
}

fn check_state(live: &Option<Value>, step: &Value) -> Result<(), String> {
    let obj = live.clone().unwrap_or(Value::Null);
    let want_obj = &step["expected_object_after"];
    if without_managed(&obj) != *want_obj {
        return Err(format!(
            "object\n  got:  {}\n  want: {want_obj}",
            without_managed(&obj)
        ));
    }
    let want_mf = &step["expected_managedFields_after"];
    if entries_of(&obj) != *want_mf {
        return Err(format!(
            "managedFields\n  got:  {}\n  want: {want_mf}",
            entries_of(&obj)
        ));
    }
    Ok(())
}

fn run_case(raw: &Value) -> Result<(), String> {
    let (api_version, kind) = (
        raw["apiVersion"].as_str().unwrap_or(""),
        raw["kind"].as_str().unwrap_or(""),
    );
    let case = Case {
        raw,
        resource: resource(api_version, kind),
        schema: Schema::for_kind(group_of(api_version), kind),
    };
    let mut live = Some(case.raw["original"].clone()).filter(|v| !v.is_null());
    for (i, step) in raw["patch"].as_array().into_iter().flatten().enumerate() {
        run_step(&case, &mut live, step, &step_time(i))
            .and_then(|()| check_state(&live, step))
            .map_err(|e| format!("step {i} ({}): {e}", step["manager"]))?;
    }
    Ok(())
}

#[test]
fn ssa_cases() {
    let cases: Vec<Value> = serde_json::from_str(CASES).expect("ssa.json parses");
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = run_case(case) {
            failures.push(format!("{}: {e}", case["name"]));
        }
    }
    let passed = cases.len() - failures.len();
    println!("ssa cases: {passed}/{} passed", cases.len());
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n\n"));
}

#[test]
fn fields_v1_round_trip() {
    let raw = json!({
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}, "f:finalizers": {"v:\"a/b\"": {}}},
        "f:spec": {
            "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}}},
            "f:list": {"i:0": {}},
            "f:replicas": {}
        }
    });
    let set = FieldSet::from_fields_v1(&raw).expect("decodes");
    assert_eq!(set.to_fields_v1(), raw);
    let paths: Vec<String> = set.paths().iter().map(|p| super::path_string(p)).collect();
    assert!(paths.contains(&".spec.ports[port=80,protocol=\"TCP\"].port".to_string()));
    assert!(paths.contains(&".metadata.finalizers[=\"a/b\"]".to_string()));
    assert!(paths.contains(&".spec.list[0]".to_string()));
    assert!(FieldSet::from_fields_v1(&json!({"x:unknown": {}})).is_ok());
    assert!(FieldSet::from_fields_v1(&json!({"f:a": 1})).is_err());
}

#[test]
fn key_order_is_numeric() {
    let raw = json!({"k:{\"port\":100}": {}, "k:{\"port\":80}": {}});
    let set = FieldSet::from_fields_v1(&raw).expect("decodes");
    let first = set.paths()[0].clone();
    assert_eq!(super::path_string(&first), "[port=80]");
}

fn conflict(manager: &str, api_version: Option<&str>, field: &str) -> Conflict {
    Conflict {
        manager: manager.into(),
        api_version: api_version.map(Into::into),
        subresource: None,
        field: field.into(),
    }
}

#[test]
fn conflict_messages() {
    let one = [conflict(
        "kubectl-client-side-apply",
        Some("apps/v1"),
        ".spec.replicas",
    )];
    assert_eq!(
        conflict_message(&one),
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas"
    );
    assert_eq!(
        one[0].message(),
        "conflict with \"kubectl-client-side-apply\" using apps/v1"
    );
    let many = [
        conflict("b", None, ".spec.replicas"),
        conflict("a", Some("v1"), ".data.x"),
        conflict("b", None, ".spec.paused"),
    ];
    assert_eq!(
        conflict_message(&many),
        "Apply failed with 3 conflicts: conflicts with \"a\" using v1:\n- .data.x\nconflicts with \"b\":\n- .spec.replicas\n- .spec.paused"
    );
    let mut sub = conflict("c", None, ".status.x");
    sub.subresource = Some("status".into());
    assert_eq!(sub.message(), "conflict with \"c\" with subresource \"status\"");
}

#[test]
fn unstructured_apply_and_prune() {
    let res = resource("example.com/v1", "Widget");
    let opts = ApplyOptions {
        manager: "m",
        force: false,
        resource: &res,
        subresource: None,
        time: NOW,
    };
    let cfg = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                     "metadata": {"name": "w"}, "spec": {"a": 1, "b": [1, 2]}});
    let obj = apply(None, None, &cfg, &opts).expect("applies");
    assert_eq!(obj["spec"], json!({"a": 1, "b": [1, 2]}));
    let mf = &obj["metadata"]["managedFields"][0];
    assert_eq!(mf["fieldsV1"], json!({"f:spec": {".": {}, "f:a": {}, "f:b": {}}}));
    assert_eq!(mf["time"], json!(NOW));
    let cfg2 = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                      "metadata": {"name": "w"}, "spec": {"a": 2}});
    let obj2 = apply(None, Some(&obj), &cfg2, &opts).expect("applies");
    assert_eq!(obj2["spec"], json!({"a": 2}));
    let other = ApplyOptions { manager: "n", ..opts };
    let err = apply(None, Some(&obj2), &cfg, &other).expect_err("conflicts");
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"m\": .spec.a"
    );
}

#[test]
fn bad_requests() {
    let res = resource("v1", "ConfigMap");
    let opts = ApplyOptions {
        manager: "m",
        force: false,
        resource: &res,
        subresource: None,
        time: NOW,
    };
    let wrong = json!({"apiVersion": "apps/v1", "kind": "Deployment"});
    let err = apply(None, None, &wrong, &opts).expect_err("rejected");
    assert_eq!(err.to_string(), "invalid object type: apps/v1, Kind=Deployment");
    let with_mf = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"managedFields": []}});
    let err = apply(None, None, &with_mf, &opts).expect_err("rejected");
    assert_eq!(err.to_string(), "metadata.managedFields must be nil");
}

#[test]
fn update_without_managed_fields_is_not_tracked_and_reset_works() {
    let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    let mut new =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "2"}});
    track_update(
        None,
        Some(&old),
        &mut new,
        "u",
        &resource("v1", "ConfigMap"),
        None,
        NOW,
    );
    assert!(new["metadata"].get("managedFields").is_none());
    let mut created = old.clone();
    track_update(
        None,
        None,
        &mut created,
        "u",
        &resource("v1", "ConfigMap"),
        None,
        NOW,
    );
    assert_eq!(
        created["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}}})
    );
    let mut reset = created.clone();
    reset["metadata"]["managedFields"] = json!([]);
    reset["data"]["a"] = json!("3");
    track_update(
        None,
        Some(&created),
        &mut reset,
        "u",
        &resource("v1", "ConfigMap"),
        None,
        NOW,
    );
    assert!(reset["metadata"].get("managedFields").is_none());
}

#[test]
fn before_first_apply_records_existing_fields() {
    let live =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    let cfg = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"b": "2"}});
    let res = resource("v1", "ConfigMap");
    let opts = ApplyOptions {
        manager: "m",
        force: false,
        resource: &res,
        subresource: None,
        time: NOW,
    };
    let obj = apply(None, Some(&live), &cfg, &opts).expect("applies");
    let mf = obj["metadata"]["managedFields"].as_array().expect("entries");
    assert_eq!(mf.len(), 2);
    assert_eq!(mf[1]["manager"], json!("before-first-apply"));
    assert_eq!(mf[1]["fieldsV1"], json!({"f:data": {".": {}, "f:a": {}}}));
}

#[test]
fn invalid_bodies_name_the_path() {
    let res = resource("v1", "Pod");
    let opts = ApplyOptions {
        manager: "m",
        force: false,
        resource: &res,
        subresource: None,
        time: NOW,
    };
    let schema = Schema::for_kind("", "Pod");
    let cfg = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
        "spec": {"containers": [{"name": "c", "env": [{"name": "A"}, {"name": "A"}]}]}});
    let err = apply(schema.as_ref(), None, &cfg, &opts).expect_err("duplicates");
    assert!(matches!(err, ApplyError::Invalid(_)));
    assert_eq!(
        err.to_string(),
        "failed to create typed patch object (d/p; /v1, Kind=Pod): .spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]"
    );
}

#[test]
fn many_updaters_are_capped_into_ancient_changes() {
    let res = resource("v1", "ConfigMap");
    let opts = ApplyOptions {
        manager: "apply",
        force: false,
        resource: &res,
        subresource: None,
        time: &step_time(0),
    };
    let cfg = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}});
    let schema = Schema::for_kind("", "ConfigMap");
    let mut obj = apply(schema.as_ref(), None, &cfg, &opts).expect("applies");
    for i in 1..=20 {
        let mut new = obj.clone();
        if new["metadata"].get("annotations").is_none() {
            new["metadata"]["annotations"] = json!({});
        }
        new["metadata"]["annotations"][format!("a{i}")] = json!("x");
        let name = format!("updater-{i}");
        track_update(
            schema.as_ref(),
            Some(&obj),
            &mut new,
            &name,
            &resource("v1", "ConfigMap"),
            None,
            &step_time(i),
        );
        obj = new;
    }
    let mf = obj["metadata"]["managedFields"].as_array().expect("entries");
    assert_eq!(mf.len(), 11);
    assert_eq!(mf[0]["manager"], json!("apply"));
    assert_eq!(mf[1]["manager"], json!("ancient-changes"));
}
