//! Field selector parsing and the per-kind selectable fields
//! (`fields/selector_test.go` cases and the conversion functions' tables).

use serde_json::json;

use super::*;
use crate::kinds::Kind;

#[test]
fn field_selector_parse_and_match() {
    let sel = FieldSelector::parse("status.phase=Running,spec.nodeName!=n1,metadata.name==x").unwrap();
    assert_eq!(
        sel.fields(),
        vec!["metadata.name", "spec.nodeName", "status.phase"]
    );
    assert_eq!(
        sel.to_string(),
        "metadata.name=x,spec.nodeName!=n1,status.phase=Running"
    );
    let get = |f: &str| match f {
        "metadata.name" => Some("x".to_string()),
        "status.phase" => Some("Running".to_string()),
        _ => None,
    };
    assert!(sel.matches(get));
    assert_eq!(sel.requires_exact_match("metadata.name"), Some("x"));
    assert!(FieldSelector::parse("").unwrap().is_empty());
    assert!(FieldSelector::parse(",,").unwrap().is_empty());
    assert!(FieldSelector::parse("a=").unwrap().matches(|_| None));
}

#[test]
fn field_selector_escaping() {
    let sel = FieldSelector::parse(r"a=x\,y\=z\\w,b!=c").unwrap();
    assert!(sel.matches(|f| (f == "a").then(|| r"x,y=z\w".to_string())));
    assert_eq!(sel.to_string(), r"a=x\,y\=z\\w,b!=c");
    assert_eq!(
        FieldSelector::parse("a").unwrap_err(),
        "invalid selector: 'a'; can't understand 'a'"
    );
    assert_eq!(
        FieldSelector::parse("a=b=c").unwrap_err(),
        "invalid field selector: unescaped character in value: 61"
    );
    assert_eq!(
        FieldSelector::parse(r"a=b\n").unwrap_err(),
        r"invalid field selector: invalid escape sequence: \n"
    );
    assert_eq!(
        FieldSelector::parse(r"a=b\").unwrap_err(),
        r"invalid field selector: invalid escape sequence: \"
    );
    // `!=` is found before `=`; `==` before `=`.
    let sel = FieldSelector::parse("a==b").unwrap();
    assert!(sel.matches(|_| Some("b".to_string())));
}

#[test]
fn field_values_per_kind() {
    let pod = json!({
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"nodeName": "n1", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                 "serviceAccountName": "default"},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.7"}]}
    });
    let f = |field: &str| field_value(Kind::Pod, &pod, field);
    assert_eq!(f("metadata.namespace"), Ok(Some("ns".into())));
    assert_eq!(f("spec.nodeName"), Ok(Some("n1".into())));
    assert_eq!(f("spec.host"), Ok(Some("n1".into())));
    assert_eq!(f("spec.hostNetwork"), Ok(Some("false".into())));
    assert_eq!(f("status.podIP"), Ok(Some("10.0.0.7".into())));
    assert_eq!(f("status.podIPs"), Ok(None));
    assert_eq!(
        f("spec.containers"),
        Err("field label not supported: spec.containers".into())
    );

    let node = json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true}});
    assert_eq!(
        field_value(Kind::Node, &node, "spec.unschedulable"),
        Ok(Some("true".into()))
    );
    assert!(field_value(Kind::Node, &node, "metadata.namespace").is_err());

    let ev = json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
                    "reportingComponent": "kubelet", "type": "Normal"});
    assert_eq!(
        field_value(Kind::Event, &ev, "involvedObject.kind"),
        Ok(Some("Pod".into()))
    );
    assert_eq!(
        field_value(Kind::Event, &ev, "source"),
        Ok(Some("kubelet".into()))
    );
    let ev2 = json!({"regarding": {"kind": "Pod"}, "reportingController": "c"});
    assert_eq!(
        field_value(Kind::EventV1, &ev2, "regarding.kind"),
        Ok(Some("Pod".into()))
    );
    assert_eq!(field_value(Kind::EventV1, &ev2, "source"), Ok(Some("c".into())));
    assert!(field_value(Kind::EventV1, &ev2, "involvedObject.kind").is_err());

    let job = json!({"status": {"succeeded": 3}});
    assert_eq!(
        field_value(Kind::Job, &job, "status.successful"),
        Ok(Some("3".into()))
    );
    let rs = json!({"status": {}});
    assert_eq!(
        field_value(Kind::ReplicaSet, &rs, "status.replicas"),
        Ok(Some("0".into()))
    );
    let secret = json!({"type": "Opaque", "metadata": {"namespace": "d"}});
    assert_eq!(
        field_value(Kind::Secret, &secret, "type"),
        Ok(Some("Opaque".into()))
    );
    assert_eq!(
        field_value(Kind::Secret, &secret, "metadata.namespace"),
        Ok(Some("d".into()))
    );
    let svc = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1"}});
    assert_eq!(
        field_value(Kind::Service, &svc, "spec.clusterIP"),
        Ok(Some("10.96.0.1".into()))
    );
    let ns = json!({"status": {"phase": "Active"}});
    assert_eq!(
        field_value(Kind::Namespace, &ns, "status.phase"),
        Ok(Some("Active".into()))
    );

    let cm = json!({"metadata": {"name": "c", "namespace": "d"}});
    assert_eq!(
        field_value(Kind::ConfigMap, &cm, "metadata.name"),
        Ok(Some("c".into()))
    );
    assert_eq!(
        field_value(Kind::Deployment, &cm, "spec.replicas"),
        Err(
            "\"spec.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                .into()
        )
    );
}

#[test]
fn field_selector_against_object() {
    let pod = json!({"metadata": {"name": "p"}, "status": {"phase": "Running"}});
    let sel = FieldSelector::parse("status.phase=Running,metadata.name!=q").unwrap();
    for f in sel.fields() {
        assert!(field_value(Kind::Pod, &pod, f).is_ok());
    }
    assert!(sel.matches(|f| field_value(Kind::Pod, &pod, f).ok().flatten()));
}

#[test]
fn event_fields_in_both_versions() {
    let core = json!({"metadata": {"name": "e", "namespace": "d"},
        "involvedObject": {"kind": "Pod", "name": "p", "uid": "u", "fieldPath": "spec"},
        "reason": "Started", "type": "Normal", "reportingComponent": "kubelet",
        "source": {"component": "old"}});
    let v1 = json!({"metadata": {"name": "e", "namespace": "d"},
        "regarding": {"kind": "Pod", "name": "p", "uid": "u", "fieldPath": "spec"},
        "reason": "Started", "type": "Normal", "reportingController": "kubelet"});
    // (core label, events.k8s.io label, value on both)
    let cases = [
        ("metadata.namespace", "metadata.namespace", "d"),
        ("involvedObject.kind", "regarding.kind", "Pod"),
        ("involvedObject.uid", "regarding.uid", "u"),
        ("involvedObject.fieldPath", "regarding.fieldPath", "spec"),
        ("involvedObject.apiVersion", "regarding.apiVersion", ""),
        ("reason", "reason", "Started"),
        ("type", "type", "Normal"),
        ("reportingComponent", "reportingController", "kubelet"),
    ];
    for (core_label, v1_label, want) in cases {
        assert_eq!(field_value(Kind::Event, &core, core_label), Ok(Some(want.into())));
        assert_eq!(field_value(Kind::EventV1, &v1, v1_label), Ok(Some(want.into())));
    }
    // `source` prefers the deprecated source component, then the reporter.
    assert_eq!(field_value(Kind::Event, &core, "source"), Ok(Some("old".into())));
    assert_eq!(
        field_value(Kind::EventV1, &v1, "source"),
        Ok(Some("kubelet".into()))
    );
    for (kind, bad) in [
        (Kind::Event, "reportingController"),
        (Kind::Event, "involvedObject.labels"),
        (Kind::EventV1, "reportingComponent"),
        (Kind::EventV1, "regarding"),
    ] {
        let err = format!("field label not supported: {bad}");
        assert_eq!(field_value(kind, &core, bad), Err(err));
    }
}
