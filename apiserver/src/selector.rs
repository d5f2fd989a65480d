//! Field selectors, as the Kubernetes API server parses and applies them; the
//! label selector lives in [`crate::labels`] (re-exported here for old callers).
//!
//! Behaviour follows these upstream files (k8s.io/apimachinery, v1.33):
//! * `staging/src/k8s.io/apimachinery/pkg/fields/selector.go`: field selector
//!   parsing with `\` escaping;
//! * `pkg/apis/*/v1/conversion.go` (`AddFieldLabelConversionFunc`) and
//!   `pkg/registry/*/strategy.go` (`ToSelectableFields` / `GetAttrs`): which field
//!   labels each kind accepts and what value they take ([`field_value`]).
//!
//! Simplifications: objects are `serde_json::Value`s in their v1 JSON form, so the
//! v1->internal conversions that matter for selection (pod IP, events.k8s.io field
//! names) are re-done by hand; the `Transform` hook is not provided.

pub use crate::labels::{format_label_selector, format_labels, label_selector_string};
use serde_json::Value;
use std::fmt;

// ---------------------------------------------------------------------------
// Field selector
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    value: String,
    negated: bool,
}

/// A parsed field selector: a conjunction of `field=value` / `field!=value` terms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query syntax (`fields.ParseSelector`).
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut parts = split_terms(s);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let Some((field, op, raw)) = split_term(part) else {
                return Err(format!("invalid selector: '{s}'; can't understand '{part}'"));
            };
            let value = unescape_field_value(raw)?;
            terms.push(FieldTerm {
                field: field.to_string(),
                value,
                negated: op == "!=",
            });
        }
        Ok(Self { terms })
    }

    /// Whether every term holds; `get` returns a field's value (absent means "").
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|t| {
            let actual = get(&t.field).unwrap_or_default();
            (actual == t.value) != t.negated
        })
    }

    /// The field names the selector uses, in selector order.
    pub fn fields(&self) -> Vec<&str> {
        self.terms.iter().map(|t| t.field.as_str()).collect()
    }

    /// True when the selector has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value a term requires with `=`/`==` (`RequiresExactMatch`), if any.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.field == field && !t.negated)
            .map(|t| t.value.as_str())
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if t.negated { "!=" } else { "=" };
            write!(f, "{}{op}{}", t.field, escape_field_value(&t.value))?;
        }
        Ok(())
    }
}

/// Splits on commas not preceded by a backslash escape (escapes are kept).
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// Splits at the first operator (`!=`, `==`, then `=`) found scanning left to right.
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], op, value));
            }
        }
    }
    None
}

/// `fields.UnescapeValue`.
fn unescape_field_value(s: &str) -> Result<String, String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!("invalid field selector: invalid escape sequence: \\{c}"));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ));
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// `fields.EscapeValue`.
fn escape_field_value(s: &str) -> String {
    s.replace('\\', "\\\\").replace(',', "\\,").replace('=', "\\=")
}

// ---------------------------------------------------------------------------
// Selectable fields per kind
// ---------------------------------------------------------------------------

/// The value of field label `field` on `obj` (a v1 JSON object of `group`/`kind`).
///
/// `Err` carries upstream's text for an unsupported label: "field label not supported: X"
/// for kinds with their own conversion function, the default metav1 message otherwise.
/// `Ok(None)` is a supported label absent from the selectable set (it compares as "").
pub fn field_value(group: &str, kind: &str, obj: &Value, field: &str) -> Result<Option<String>, String> {
    let unsupported = || Err(format!("field label not supported: {field}"));
    let value = match (group, kind) {
        ("", "Pod") => match pod_field(obj, field) {
            Some(v) => v,
            None => return unsupported(),
        },
        ("", "Node") => match field {
            "metadata.name" => meta_str(obj, "name"),
            "spec.unschedulable" => Some(bool_at(obj, &["spec", "unschedulable"]).to_string()),
            _ => return unsupported(),
        },
        ("", "Namespace") => match field {
            "metadata.name" => meta_str(obj, "name"),
            "status.phase" => Some(str_at(obj, &["status", "phase"])),
            _ => return unsupported(),
        },
        ("", "Event") => match core_event_field(obj, field) {
            Some(v) => v,
            None => return unsupported(),
        },
        ("events.k8s.io", "Event") => match events_event_field(obj, field) {
            Some(v) => v,
            None => return unsupported(),
        },
        ("", "Secret") => match field {
            "type" => Some(str_at(obj, &["type"])),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("", "Service") => match field {
            "spec.clusterIP" => Some(str_at(obj, &["spec", "clusterIP"])),
            "spec.type" => Some(str_at(obj, &["spec", "type"])),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("", "ReplicationController") | ("apps", "ReplicaSet") => match field {
            "status.replicas" => Some(int_at(obj, &["status", "replicas"]).to_string()),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("batch", "Job") => match field {
            "status.successful" => Some(int_at(obj, &["status", "succeeded"]).to_string()),
            _ => return meta_field_or(obj, field, unsupported),
        },
        ("certificates.k8s.io", "CertificateSigningRequest") => match field {
            "metadata.name" => meta_str(obj, "name"),
            "spec.signerName" => Some(str_at(obj, &["spec", "signerName"])),
            _ => return unsupported(),
        },
        _ => {
            return meta_field_or(obj, field, || {
                Err(format!(
                    "\"{field}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                ))
            });
        }
    };
    Ok(value)
}

fn meta_field_or(
    obj: &Value,
    field: &str,
    otherwise: impl FnOnce() -> Result<Option<String>, String>,
) -> Result<Option<String>, String> {
    match field {
        "metadata.name" => Ok(meta_str(obj, "name")),
        "metadata.namespace" => Ok(meta_str(obj, "namespace")),
        _ => otherwise(),
    }
}

/// Pod field labels; the outer `None` means "not supported".
fn pod_field(obj: &Value, field: &str) -> Option<Option<String>> {
    let spec = |k: &str| Some(str_at(obj, &["spec", k]));
    Some(match field {
        "metadata.name" => meta_str(obj, "name"),
        "metadata.namespace" => meta_str(obj, "namespace"),
        "spec.nodeName" | "spec.host" => spec("nodeName"),
        "spec.restartPolicy" => spec("restartPolicy"),
        "spec.schedulerName" => spec("schedulerName"),
        "spec.serviceAccountName" => spec("serviceAccountName"),
        "spec.hostNetwork" => Some(bool_at(obj, &["spec", "hostNetwork"]).to_string()),
        "status.phase" => Some(str_at(obj, &["status", "phase"])),
        "status.podIP" => Some(pod_ip(obj)),
        "status.nominatedNodeName" => Some(str_at(obj, &["status", "nominatedNodeName"])),
        // Accepted by the conversion function but absent from the selectable set.
        "status.podIPs" => None,
        _ => return None,
    })
}

/// The pod's primary IP as the internal type sees it: `status.podIP` wins over `podIPs[0]`.
pub(crate) fn pod_ip(obj: &Value) -> String {
    let ip = str_at(obj, &["status", "podIP"]);
    if !ip.is_empty() {
        return ip;
    }
    obj.pointer("/status/podIPs/0/ip")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn core_event_field(obj: &Value, field: &str) -> Option<Option<String>> {
    let involved = |k: &str| Some(str_at(obj, &["involvedObject", k]));
    Some(match field {
        "metadata.name" => meta_str(obj, "name"),
        "metadata.namespace" => meta_str(obj, "namespace"),
        "involvedObject.kind" => involved("kind"),
        "involvedObject.namespace" => involved("namespace"),
        "involvedObject.name" => involved("name"),
        "involvedObject.uid" => involved("uid"),
        "involvedObject.apiVersion" => involved("apiVersion"),
        "involvedObject.resourceVersion" => involved("resourceVersion"),
        "involvedObject.fieldPath" => involved("fieldPath"),
        "reason" => Some(str_at(obj, &["reason"])),
        "reportingComponent" => Some(str_at(obj, &["reportingComponent"])),
        "type" => Some(str_at(obj, &["type"])),
        "source" => Some(first_non_empty(
            str_at(obj, &["source", "component"]),
            str_at(obj, &["reportingComponent"]),
        )),
        _ => return None,
    })
}

/// events.k8s.io/v1 labels are mapped onto the core field set, read from the v1 names.
fn events_event_field(obj: &Value, field: &str) -> Option<Option<String>> {
    let regarding = |k: &str| Some(str_at(obj, &["regarding", k]));
    Some(match field {
        "metadata.name" => meta_str(obj, "name"),
        "metadata.namespace" => meta_str(obj, "namespace"),
        "regarding.kind" => regarding("kind"),
        "regarding.namespace" => regarding("namespace"),
        "regarding.name" => regarding("name"),
        "regarding.uid" => regarding("uid"),
        "regarding.apiVersion" => regarding("apiVersion"),
        "regarding.resourceVersion" => regarding("resourceVersion"),
        "regarding.fieldPath" => regarding("fieldPath"),
        "reason" => Some(str_at(obj, &["reason"])),
        "reportingController" => Some(str_at(obj, &["reportingController"])),
        "type" => Some(str_at(obj, &["type"])),
        "source" => Some(first_non_empty(
            str_at(obj, &["deprecatedSource", "component"]),
            str_at(obj, &["reportingController"]),
        )),
        _ => return None,
    })
}

fn first_non_empty(a: String, b: String) -> String {
    if a.is_empty() { b } else { a }
}

fn meta_str(obj: &Value, key: &str) -> Option<String> {
    Some(str_at(obj, &["metadata", key]))
}

fn at<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, k| v.get(k))
}

fn str_at(obj: &Value, path: &[&str]) -> String {
    at(obj, path)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn bool_at(obj: &Value, path: &[&str]) -> bool {
    at(obj, path).and_then(Value::as_bool).unwrap_or(false)
}

fn int_at(obj: &Value, path: &[&str]) -> i64 {
    at(obj, path).and_then(Value::as_i64).unwrap_or(0)
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let f = |field: &str| field_value("", "Pod", &pod, field);
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
            field_value("", "Node", &node, "spec.unschedulable"),
            Ok(Some("true".into()))
        );
        assert!(field_value("", "Node", &node, "metadata.namespace").is_err());

        let ev = json!({"metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
                        "reportingComponent": "kubelet", "type": "Normal"});
        assert_eq!(
            field_value("", "Event", &ev, "involvedObject.kind"),
            Ok(Some("Pod".into()))
        );
        assert_eq!(
            field_value("", "Event", &ev, "source"),
            Ok(Some("kubelet".into()))
        );
        let ev2 = json!({"regarding": {"kind": "Pod"}, "reportingController": "c"});
        assert_eq!(
            field_value("events.k8s.io", "Event", &ev2, "regarding.kind"),
            Ok(Some("Pod".into()))
        );
        assert_eq!(
            field_value("events.k8s.io", "Event", &ev2, "source"),
            Ok(Some("c".into()))
        );
        assert!(field_value("events.k8s.io", "Event", &ev2, "involvedObject.kind").is_err());

        let job = json!({"status": {"succeeded": 3}});
        assert_eq!(
            field_value("batch", "Job", &job, "status.successful"),
            Ok(Some("3".into()))
        );
        let rs = json!({"status": {}});
        assert_eq!(
            field_value("apps", "ReplicaSet", &rs, "status.replicas"),
            Ok(Some("0".into()))
        );
        let secret = json!({"type": "Opaque", "metadata": {"namespace": "d"}});
        assert_eq!(
            field_value("", "Secret", &secret, "type"),
            Ok(Some("Opaque".into()))
        );
        assert_eq!(
            field_value("", "Secret", &secret, "metadata.namespace"),
            Ok(Some("d".into()))
        );
        let svc = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1"}});
        assert_eq!(
            field_value("", "Service", &svc, "spec.clusterIP"),
            Ok(Some("10.96.0.1".into()))
        );
        let ns = json!({"status": {"phase": "Active"}});
        assert_eq!(
            field_value("", "Namespace", &ns, "status.phase"),
            Ok(Some("Active".into()))
        );

        let cm = json!({"metadata": {"name": "c", "namespace": "d"}});
        assert_eq!(
            field_value("", "ConfigMap", &cm, "metadata.name"),
            Ok(Some("c".into()))
        );
        assert_eq!(
            field_value("apps", "Deployment", &cm, "spec.replicas"),
            Err("\"spec.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"".into())
        );
    }

    #[test]
    fn field_selector_against_object() {
        let pod = json!({"metadata": {"name": "p"}, "status": {"phase": "Running"}});
        let sel = FieldSelector::parse("status.phase=Running,metadata.name!=q").unwrap();
        for f in sel.fields() {
            assert!(field_value("", "Pod", &pod, f).is_ok());
        }
        assert!(sel.matches(|f| field_value("", "Pod", &pod, f).ok().flatten()));
    }
}
