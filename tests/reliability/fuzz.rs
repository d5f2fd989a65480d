//! A request fuzzer over every endpoint the discovery documents list:
//! every verb, every patch type (JSON patch, merge patch, strategic merge
//! patch, server-side apply), random and malformed bodies (wrong types,
//! huge numbers, deep nesting, invalid JSON, YAML, protobuf garbage) and
//! the query parameters clients send, with valid and malformed values.
//!
//! What must hold, over the whole run against one real `miniplane up`:
//!
//! - **no 5xx**: a malformed request is the client's fault (4xx);
//! - **no dropped connection**: every request gets a full HTTP response
//!   (a streaming one, a watch or a followed log, at least its head);
//! - **bounded memory**: the server's peak RSS (`VmHWM` in
//!   `/proc/<pid>/status`) stays under [`RSS_BOUND_MIB`];
//! - the server still answers `/readyz` at the end.
//!
//! Every request comes from a generator seeded by the suite's seed and the
//! worker's number; a failure prints the seed and the request itself.
//!
//! The fuzzer exercises namespace deletion only on its own namespaces
//! (`fuzz-a`, `fuzz-b`, `fuzz-c`), and writes to namespaces only there, so
//! that the system namespaces and the objects in them stay usable; a
//! collection delete of a cluster-scoped resource carries a label selector
//! that only the fuzzer's own objects match. Random JSON patches carry at
//! most one `copy`, from a scalar field. What the server must refuse is
//! probed on purpose at the end ([`invalid_writes`]): wrong types, a bad
//! name, deleting each system namespace (403), and a patch of 30 copies
//! that would double an object 30 times (refused before it grows: the
//! peak RSS check would catch it).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use rand::RngExt;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use serde_json::{Value, json};

use crate::harness::{Failure, Http, Miniplane, Mode, Report, Request, memory_kib, rng, sleep, thousands};

/// Peak RSS the server may reach during the fuzzing.
const RSS_BOUND_MIB: u64 = 512;

/// The fuzzer's own namespaces: the only ones it deletes or writes to.
const OWN_NAMESPACES: [&str; 3] = ["fuzz-a", "fuzz-b", "fuzz-c"];

/// The label that marks the fuzzer's own objects for collection deletes
/// of cluster-scoped resources (the generators never write it otherwise).
const OWNER_LABEL: &str = "reliability.miniplane.dev/fuzz";

/// One resource (or subresource) of the discovery documents.
#[derive(Clone, Debug)]
struct Target {
    /// `/api/v1` or `/apis/<group>/<version>`.
    prefix: String,
    /// `apps/v1` or `v1`.
    api_version: String,
    /// e.g. `deployments`.
    plural: String,
    /// e.g. `status`, for `deployments/status`.
    sub: Option<String>,
    namespaced: bool,
    kind: String,
    verbs: Vec<String>,
}

/// Reads the discovery documents: every group-version and its resources.
async fn discover(http: &mut Http) -> Vec<Target> {
    let mut prefixes = vec![("/api/v1".to_string(), "v1".to_string())];
    let groups = http
        .send(&Request::new("GET", "/apis"))
        .await
        .expect("GET /apis")
        .json();
    for g in groups["groups"].as_array().into_iter().flatten() {
        for v in g["versions"].as_array().into_iter().flatten() {
            if let Some(gv) = v["groupVersion"].as_str() {
                prefixes.push((format!("/apis/{gv}"), gv.to_string()));
            }
        }
    }
    let mut targets = Vec::new();
    for (prefix, api_version) in prefixes {
        let doc = http
            .send(&Request::new("GET", prefix.clone()))
            .await
            .expect("a discovery document")
            .json();
        for r in doc["resources"].as_array().into_iter().flatten() {
            let name = r["name"].as_str().unwrap_or_default();
            let (plural, sub) = match name.split_once('/') {
                Some((p, s)) => (p.to_string(), Some(s.to_string())),
                None => (name.to_string(), None),
            };
            targets.push(Target {
                prefix: prefix.clone(),
                api_version: api_version.clone(),
                plural,
                sub,
                namespaced: r["namespaced"].as_bool().unwrap_or(false),
                kind: r["kind"].as_str().unwrap_or_default().to_string(),
                verbs: r["verbs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            });
        }
    }
    targets
}

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

/// Text spliced into a serialized body where a placeholder string stands:
/// what `serde_json::Value` cannot hold (numbers beyond f64, NaN, ...).
const RAW_NUMBERS: &[&str] = &[
    "1e999",
    "-1e999",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890",
    "0.000000000000000000000000000001",
    "1.5e308",
    "-0",
    "NaN",
    "Infinity",
    "0x10",
    "01",
];

/// One of `xs`.
fn one<T: Copy>(rng: &mut StdRng, xs: &[T]) -> T {
    *xs.choose(rng).expect("a non-empty choice")
}

/// A random scalar or small container, often of the wrong type.
fn value(rng: &mut StdRng, depth: u32) -> Value {
    match rng.random_range(0..14) {
        0 => Value::Null,
        1 => json!(rng.random_bool(0.5)),
        2 => json!(rng.random_range(-5i64..100)),
        3 => json!(one(rng, &[i64::MAX, i64::MIN, u32::MAX as i64, -1, 0])),
        4 => json!(u64::MAX),
        5 => json!(one(rng, &[1.5f64, -0.0, 1e300, f64::MIN_POSITIVE, 2.5e-300])),
        6 => json!(string(rng)),
        7 => json!(""),
        8 if depth < 3 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| value(rng, depth + 1))
                .collect(),
        ),
        9 if depth < 3 => {
            let mut m = serde_json::Map::new();
            for _ in 0..rng.random_range(0..4) {
                m.insert(key(rng), value(rng, depth + 1));
            }
            Value::Object(m)
        }
        10 => json!(format!("__RAW{}__", rng.random_range(0..RAW_NUMBERS.len()))),
        11 => json!(one(
            rng,
            &["100m", "1Gi", "2h", "Always", "TCP", "true", "1.5", "-1"]
        )),
        _ => json!("x"),
    }
}

/// A random string: mostly short words, now and then long, odd or unicode.
fn string(rng: &mut StdRng) -> String {
    match rng.random_range(0..12) {
        0 => "a".repeat(rng.random_range(64..70_000)),
        1 => "ünïcødé-名前-🙂".into(),
        2 => "\u{0}\u{1}\t\n\r\"\\".into(),
        3 => "-leading-dash".into(),
        4 => "UPPER_case.with.dots".into(),
        5 => "a/b/c".into(),
        6 => "%2F..%00".into(),
        7 => " ".into(),
        _ => format!("v{}", rng.random_range(0..100)),
    }
}

/// A random key: mostly plausible, sometimes not.
fn key(rng: &mut StdRng) -> String {
    match rng.random_range(0..8) {
        0 => string(rng),
        1 => "example.com/key".into(),
        2 => "-bad-".into(),
        3 => "$patch".into(),
        _ => format!("k{}", rng.random_range(0..5)),
    }
}

/// Labels, valid or not (never the owner label).
fn labels(rng: &mut StdRng) -> Value {
    let mut m = serde_json::Map::new();
    for _ in 0..rng.random_range(0..3) {
        let (k, v) = match rng.random_range(0..6) {
            0 => ("app".to_string(), json!("web")),
            1 => ("bad key!".into(), json!("x")),
            2 => ("k".into(), json!("v".repeat(70))),
            3 => ("k".into(), json!(5)),
            4 => ("example.com/tier".into(), json!("front")),
            _ => (key(rng), value(rng, 2)),
        };
        m.insert(k, v);
    }
    Value::Object(m)
}

/// A plausible object of `kind` (what a client would send), to be mutated.
fn template(t: &Target, name: &str, ns: Option<&str>) -> Value {
    let mut meta = json!({"name": name});
    if let Some(ns) = ns {
        meta["namespace"] = json!(ns);
    }
    let pod_spec =
        json!({"containers": [{"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}]}]});
    let selector = json!({"matchLabels": {"app": name}});
    let tmpl = json!({"metadata": {"labels": {"app": name}}, "spec": pod_spec});
    let (api_version, kind) = match t.sub.as_deref() {
        Some("scale") => ("autoscaling/v1".to_string(), "Scale".to_string()),
        Some("binding") => ("v1".to_string(), "Binding".to_string()),
        _ => (t.api_version.clone(), t.kind.clone()),
    };
    let mut o = json!({"apiVersion": api_version, "kind": kind, "metadata": meta});
    let body = match kind.as_str() {
        "ConfigMap" => json!({"data": {"a": "1"}}),
        "Secret" => json!({"stringData": {"a": "1"}, "type": "Opaque"}),
        "Pod" => json!({"spec": pod_spec}),
        "Service" => json!({"spec": {"ports": [{"port": 80}], "selector": {"app": name}}}),
        "Deployment" | "ReplicaSet" | "DaemonSet" => {
            json!({"spec": {"replicas": 1, "selector": selector, "template": tmpl}})
        }
        "StatefulSet" => {
            json!({"spec": {"replicas": 1, "serviceName": name, "selector": selector, "template": tmpl}})
        }
        "Job" => {
            json!({"spec": {"template": {"spec": {"containers": pod_spec["containers"], "restartPolicy": "Never"}}}})
        }
        "CronJob" => {
            json!({"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": pod_spec["containers"], "restartPolicy": "OnFailure"}}}}}})
        }
        "Node" => json!({"spec": {}, "status": {"capacity": {"cpu": "4", "pods": "110"}}}),
        "Event" if t.api_version == "v1" => {
            json!({"involvedObject": {"kind": "Pod", "name": name, "namespace": ns}, "reason": "Fuzz", "message": "m", "type": "Normal"})
        }
        "Event" => {
            json!({"eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "fuzz", "reportingInstance": "fuzz-1", "action": "Fuzz", "reason": "Fuzz", "type": "Normal", "regarding": {"kind": "Pod", "name": name, "namespace": ns}})
        }
        "Endpoints" => json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}),
        "EndpointSlice" => {
            json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}], "ports": [{"port": 80}]})
        }
        "Lease" => json!({"spec": {"holderIdentity": "fuzz", "leaseDurationSeconds": 40}}),
        "ControllerRevision" => json!({"revision": 1, "data": {"a": 1}}),
        "Scale" => json!({"spec": {"replicas": 2}}),
        "Binding" => json!({"target": {"apiVersion": "v1", "kind": "Node", "name": "miniplane-worker-1"}}),
        "Namespace" => json!({"metadata": {"labels": {OWNER_LABEL: "yes"}}}),
        _ => json!({"spec": {}}),
    };
    if let (Value::Object(o), Value::Object(b)) = (&mut o, body) {
        for (k, v) in b {
            match (o.get_mut(&k), v) {
                (Some(Value::Object(have)), Value::Object(add)) => have.extend(add),
                (_, v) => {
                    o.insert(k, v);
                }
            }
        }
    }
    o
}

/// Every path (as JSON pointer segments) of `v`.
fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                at.push(k.clone());
                paths(c, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(i.to_string());
                paths(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn pointer(segments: &[String]) -> String {
    segments
        .iter()
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// One to three random changes of `o`: a field set to a value of another
/// type, removed, or added; metadata made odd.
fn mutate(rng: &mut StdRng, o: &mut Value) {
    for _ in 0..rng.random_range(1..4) {
        let mut all = Vec::new();
        paths(o, &mut Vec::new(), &mut all);
        let Some(path) = all.choose(rng).cloned() else {
            return;
        };
        let p = pointer(&path);
        match rng.random_range(0..9) {
            0 | 1 => {
                if let Some(slot) = o.pointer_mut(&p) {
                    *slot = value(rng, 0);
                }
            }
            2 => {
                if let (Some((last, parent)), true) = (path.split_last(), !path.is_empty())
                    && let Some(Value::Object(m)) = o.pointer_mut(&pointer(parent))
                {
                    m.remove(last);
                }
            }
            3 => {
                if let Some(Value::Object(m)) = o.pointer_mut(&p) {
                    m.insert(key(rng), value(rng, 0));
                }
            }
            4 => set(o, &["metadata", "labels"], labels(rng)),
            5 => {
                let rv = json!(one(
                    rng,
                    &["", "0", "1", "abc", "-1", "99999999999999999999", "5"]
                ));
                set(o, &["metadata", "resourceVersion"], rv);
            }
            6 => {
                let field = one(
                    rng,
                    &[
                        "uid",
                        "generateName",
                        "finalizers",
                        "ownerReferences",
                        "managedFields",
                        "deletionTimestamp",
                        "creationTimestamp",
                        "annotations",
                        "namespace",
                        "name",
                    ],
                );
                let v = match field {
                    "finalizers" => json!(["example.com/fuzz"]),
                    "ownerReferences" => {
                        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "f0", "uid": "00000000-0000-0000-0000-000000000000"}])
                    }
                    "generateName" => json!("fuzz-"),
                    "managedFields" => {
                        json!([{"manager": "x", "operation": "Bogus", "fieldsV1": {"f:x": 1}}])
                    }
                    _ => value(rng, 1),
                };
                set(o, &["metadata", field], v);
            }
            7 => set(
                o,
                &["apiVersion"],
                json!(one(rng, &["v1", "apps/v1", "v2", "", "bogus/v1"])),
            ),
            _ => set(o, &["kind"], json!(one(rng, &["ConfigMap", "Pod", "Nope", ""]))),
        }
    }
}

/// Sets `o` at `path`, making every step on the way an object (a mutation
/// may have left a string where `metadata` was).
fn set(o: &mut Value, path: &[&str], v: Value) {
    let mut at = o;
    for k in path {
        if !at.is_object() {
            *at = json!({});
        }
        at = at
            .as_object_mut()
            .expect("just made an object")
            .entry(k.to_string())
            .or_insert(Value::Null);
    }
    *at = v;
}

/// The body as text, with the raw-number placeholders spliced in.
fn serialize(v: &Value) -> String {
    let mut s = v.to_string();
    for (i, raw) in RAW_NUMBERS.iter().enumerate() {
        s = s.replace(&format!("\"__RAW{i}__\""), raw);
    }
    s
}

/// A body that is not a plausible object at all.
fn wild_body(rng: &mut StdRng, o: &Value) -> (String, Bytes) {
    let json = "application/json".to_string();
    let text = serialize(o);
    match rng.random_range(0..14) {
        0 => {
            // Nesting, within reason: deep enough to pass serde's limit of 128.
            let depth = rng.random_range(10..400);
            let (open, close) = if rng.random_bool(0.5) {
                ("[", "]")
            } else {
                ("{\"a\":", "}")
            };
            (
                json,
                Bytes::from(format!("{}1{}", open.repeat(depth), close.repeat(depth))),
            )
        }
        1 => (
            json,
            // Cut at any byte: also inside a multi-byte character (invalid UTF-8).
            Bytes::copy_from_slice(&text.as_bytes()[..rng.random_range(0..text.len().max(1))]),
        ),
        2 => (json, Bytes::from(format!("{text}{text}"))),
        3 => (json, Bytes::from(format!("\u{feff}{text}"))),
        4 => (
            json,
            Bytes::from(one(
                rng,
                &["", "null", "[]", "\"s\"", "42", "{}", "{\"a\":1,\"a\":2}", "{,}"],
            )),
        ),
        5 => (
            json,
            Bytes::from(
                (0..rng.random_range(1..200))
                    .map(|_| rng.random::<u8>())
                    .collect::<Vec<_>>(),
            ),
        ),
        6 => ("application/yaml".into(), Bytes::from(text)),
        7 => ("application/yaml".into(), Bytes::from(yaml(rng, o))),
        8 => ("application/vnd.kubernetes.protobuf".into(), {
            let mut b = b"k8s\0".to_vec();
            b.extend((0..rng.random_range(0..100)).map(|_| rng.random::<u8>()));
            Bytes::from(b)
        }),
        9 => (
            one(
                rng,
                &[
                    "text/plain",
                    "application/xml",
                    "application/json; charset=latin1",
                    "",
                    "*/*",
                    "application/apply-patch+yaml",
                ],
            )
            .to_string(),
            Bytes::from(text),
        ),
        10 => (
            json,
            Bytes::from(format!(
                "{{\"data\":{{\"big\":\"{}\"}}}}",
                "x".repeat(rng.random_range(1 << 20..5 << 20))
            )),
        ),
        11 => (
            json,
            Bytes::from(text.replace("\"1\"", "1").replace("\"nginx:1\"", "[1,2]")),
        ),
        _ => (
            json,
            Bytes::from(text.replacen('{', "{\"extra\":{\"x\":[1,{\"y\":null}]},", 2)),
        ),
    }
}

/// YAML, well-formed or not.
fn yaml(rng: &mut StdRng, o: &Value) -> String {
    let name = o["metadata"]["name"].as_str().unwrap_or("f0");
    let kind = o["kind"].as_str().unwrap_or("ConfigMap");
    let api_version = o["apiVersion"].as_str().unwrap_or("v1");
    match rng.random_range(0..8) {
        0 => format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n  labels:\n    a: b\n"),
        1 => format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\ndata:\n  a: 5\n  b: [1, 2]\n"),
        2 => "a: [\n".into(),
        3 => "\tkind: tab\n".into(),
        4 => "a: &a [x, *a]\n".into(),
        // A small alias expansion (5^5 nodes), not a bomb.
        5 => "a: &a [x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d]\n".into(),
        6 => format!("---\napiVersion: v1\nkind: {kind}\n---\nkind: Second\n"),
        _ => format!("apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: {name}, resourceVersion: 12}}\n!!binary x: y\n"),
    }
}

/// A JSON patch of one to four operations; at most one `copy`, from a scalar.
fn json_patch(rng: &mut StdRng, o: &Value) -> Value {
    let mut all = Vec::new();
    paths(o, &mut Vec::new(), &mut all);
    let path = |rng: &mut StdRng| -> String {
        match rng.random_range(0..6) {
            0 => one(
                rng,
                &[
                    "",
                    "/",
                    "/-",
                    "/metadata/labels/a~1b",
                    "/a/b/c/d",
                    "/spec/containers/9",
                    "/metadata/finalizers/-",
                    "/data/~2",
                ],
            )
            .to_string(),
            _ => pointer(all.choose(rng).map(Vec::as_slice).unwrap_or(&[])),
        }
    };
    let mut copied = false;
    let ops: Vec<Value> = (0..rng.random_range(1..5))
        .map(|_| {
            let op = one(rng, &["add", "remove", "replace", "move", "copy", "test", "bogus"]);
            match op {
                "copy" if !copied => {
                    copied = true;
                    let from = one(rng, &["/metadata/name", "/kind", "/apiVersion", "/metadata/labels/app"]);
                    json!({"op": "copy", "from": from, "path": format!("/metadata/labels/c{}", rng.random_range(0..3))})
                }
                "copy" => json!({"op": "remove", "path": path(rng)}),
                "move" => json!({"op": "move", "from": path(rng), "path": path(rng)}),
                "remove" => json!({"op": "remove", "path": path(rng)}),
                "bogus" => json!({"op": "bogus", "path": value(rng, 2)}),
                _ => json!({"op": op, "path": path(rng), "value": value(rng, 1)}),
            }
        })
        .collect();
    match rng.random_range(0..10) {
        0 => json!({"op": "add", "path": "/a", "value": 1}),
        1 => json!([{"path": "/metadata/labels/x"}]),
        _ => Value::Array(ops),
    }
}

/// A merge or strategic merge patch: a fragment of the object, mutated,
/// with deletions and (strategic) directives.
fn merge_patch(rng: &mut StdRng, o: &Value, strategic: bool) -> Value {
    let mut p = o.clone();
    mutate(rng, &mut p);
    if rng.random_bool(0.3) {
        set(&mut p, &["metadata"], json!({"labels": {"a": null, "b": "c"}}));
    }
    if strategic {
        match rng.random_range(0..7) {
            0 => set(
                &mut p,
                &["$patch"],
                json!(one(rng, &["delete", "replace", "merge", "bogus"])),
            ),
            1 => set(&mut p, &["spec", "$retainKeys"], json!(["replicas", 5])),
            2 => set(
                &mut p,
                &["spec", "containers"],
                json!([{"name": "app", "$patch": "delete"}]),
            ),
            3 => set(
                &mut p,
                &["spec", "$setElementOrder/containers"],
                json!([{"name": "x"}, 1]),
            ),
            4 => set(
                &mut p,
                &["metadata", "$deleteFromPrimitiveList/finalizers"],
                json!(["a", {"b": 1}]),
            ),
            5 => set(
                &mut p,
                &["spec", "template", "spec", "containers"],
                json!([{"name": "app", "image": "nginx:2"}, {"name": "app", "image": "dup"}]),
            ),
            _ => {}
        }
    }
    match rng.random_range(0..12) {
        0 => Value::Null,
        1 => json!([1, 2]),
        2 => json!("string"),
        _ => p,
    }
}

// ---------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------

/// Percent-encodes everything but the unreserved characters.
fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A value for a query parameter, valid or not.
fn param(rng: &mut StdRng, name: &str, rv: u64) -> String {
    let pick = |rng: &mut StdRng, xs: &[&str]| one(rng, xs).to_string();
    match name {
        "watch" | "allowWatchBookmarks" | "sendInitialEvents" | "force" | "pretty" | "follow" => {
            pick(rng, &["true", "false", "1", "0", "yes", "", "TRUE", "2"])
        }
        "resourceVersion" => match rng.random_range(0..4) {
            0 => rv.saturating_sub(rng.random_range(0..50)).to_string(),
            1 => (rv + rng.random_range(1..1000)).to_string(),
            _ => pick(
                rng,
                &["", "0", "1", "abc", "-1", "18446744073709551616", " 5", "1.5"],
            ),
        },
        "resourceVersionMatch" => pick(rng, &["Exact", "NotOlderThan", "bogus", ""]),
        "limit" => pick(
            rng,
            &["1", "2", "5", "0", "-1", "x", "100000000000000000000", "500"],
        ),
        "continue" => pick(
            rng,
            &[
                "",
                "abc",
                "eyJydiI6MSwic3RhcnQiOiJ4In0",
                "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTAsInN0YXJ0IjoiZjAifQ",
                "%%%",
                "e30",
            ],
        ),
        "labelSelector" => pick(
            rng,
            &[
                "app=web",
                "app in (a,b)",
                "!app",
                "app!=x,tier",
                "a==",
                "=b",
                "app in (",
                "a b",
                "x=y=z",
                "app notin ()",
                "example.com/tier=front",
                &"k=v,".repeat(200),
            ],
        ),
        "fieldSelector" => pick(
            rng,
            &[
                "metadata.name=f0",
                "metadata.namespace!=default",
                "spec.nodeName=miniplane-worker-1",
                "status.phase=Running",
                "bogus.field=x",
                "metadata.name",
                "=",
                "metadata.name==f0,",
                "spec.nodeName in (a)",
            ],
        ),
        "timeoutSeconds" => pick(rng, &["0", "1", "-1", "x", "99999999999", "1.5"]),
        "dryRun" => pick(rng, &["All", "", "bogus", "All,All"]),
        "fieldManager" => pick(
            rng,
            &[
                "fuzz",
                "",
                &"m".repeat(200),
                "a\u{1}b",
                "kubectl-client-side-apply",
            ],
        ),
        "fieldValidation" => pick(rng, &["Strict", "Warn", "Ignore", "bogus", ""]),
        "propagationPolicy" => pick(rng, &["Foreground", "Background", "Orphan", "bogus", ""]),
        "gracePeriodSeconds" => pick(rng, &["0", "1", "30", "-1", "x", "99999999999999999999"]),
        "orphanDependents" => pick(rng, &["true", "false", "x"]),
        "container" | "tailLines" | "sinceSeconds" | "limitBytes" | "previous" | "timestamps" => {
            pick(rng, &["app", "0", "-1", "5", "x", "true"])
        }
        _ => string(rng),
    }
}

const PARAMS: &[&str] = &[
    "watch",
    "resourceVersion",
    "resourceVersionMatch",
    "limit",
    "continue",
    "labelSelector",
    "fieldSelector",
    "timeoutSeconds",
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "propagationPolicy",
    "gracePeriodSeconds",
    "orphanDependents",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "force",
    "pretty",
    "follow",
    "container",
    "tailLines",
    "previous",
    "bogus",
];

/// One generated request, and whether its answer streams (a watch, a followed log).
struct Generated {
    req: Request,
    streaming: bool,
}

/// What the generator knows of the server.
struct World {
    targets: Vec<Target>,
    /// A recent resourceVersion, for plausible `resourceVersion` values.
    rv: Arc<AtomicU64>,
}

/// A random request over `world`'s endpoints.
fn generate(rng: &mut StdRng, world: &World) -> Generated {
    if rng.random_ratio(1, 40) {
        return odd_path(rng);
    }
    let t = world
        .targets
        .choose(rng)
        .expect("discovery lists resources")
        .clone();
    let is_namespace = t.plural == "namespaces" && t.prefix == "/api/v1";
    let ns = if t.namespaced {
        Some(
            one(
                rng,
                &[
                    "fuzz-a",
                    "fuzz-b",
                    "fuzz-a",
                    "default",
                    "kube-system",
                    "nope",
                    "Bad_NS",
                    "fuzz-c",
                ],
            )
            .to_string(),
        )
    } else {
        None
    };
    let name = if is_namespace {
        one(rng, &OWN_NAMESPACES).to_string()
    } else {
        match rng.random_range(0..12) {
            0 => string(rng),
            1 if t.plural == "nodes" => "miniplane-worker-1".into(),
            1 if t.plural == "services" || t.plural == "endpoints" => "kubernetes".into(),
            _ => format!("f{}", rng.random_range(0..4)),
        }
    };
    let mut collection = t.prefix.clone();
    if let Some(ns) = &ns {
        collection.push_str(&format!("/namespaces/{}", enc(ns)));
    }
    collection.push('/');
    collection.push_str(&t.plural);
    let mut item = format!("{collection}/{}", enc(&name));
    if let Some(sub) = &t.sub {
        item.push('/');
        item.push_str(sub);
    }
    let mut verbs = t.verbs.clone();
    if verbs.is_empty() || rng.random_ratio(1, 15) {
        verbs.extend(["get", "create", "delete", "patch"].map(String::from));
    }
    let mut verb = verbs.choose(rng).expect("verbs were added").clone();
    // Namespaces: deleted one by one, only the fuzzer's own.
    if is_namespace && verb == "deletecollection" {
        verb = "delete".into();
    }
    let rv = world.rv.load(Ordering::Relaxed);
    let mut query: Vec<(String, String)> = Vec::new();
    for _ in 0..rng.random_range(0..4) {
        let p = one(rng, PARAMS);
        query.push((p.to_string(), param(rng, p, rv)));
    }
    let mut obj = template(&t, &name, ns.as_deref());
    let (method, path, mut streaming) = match verb.as_str() {
        "get" => ("GET", item, false),
        "list" => ("GET", collection.clone(), false),
        "watch" => {
            query.push(("watch".into(), "true".into()));
            query.push(("timeoutSeconds".into(), rng.random_range(0..2).to_string()));
            let path = if rng.random_bool(0.2) {
                collection.replacen(&t.prefix, &format!("{}/watch", t.prefix), 1)
            } else {
                collection.clone()
            };
            ("GET", path, true)
        }
        "create" if t.sub.is_some() => ("POST", item, false),
        "create" => ("POST", collection.clone(), false),
        "update" => ("PUT", item, false),
        "patch" => ("PATCH", item, false),
        "delete" => ("DELETE", item, false),
        "deletecollection" => {
            if !t.namespaced {
                query.retain(|(k, _)| k != "labelSelector");
                query.push(("labelSelector".into(), format!("{OWNER_LABEL}=yes")));
            }
            ("DELETE", collection.clone(), false)
        }
        _ => (
            one(rng, &["GET", "OPTIONS", "HEAD", "TRACE", "PROPFIND"]),
            item,
            false,
        ),
    };
    if query.iter().any(|(k, _)| k == "watch" || k == "follow") || path.contains("/watch/") {
        streaming = true;
    }
    // Writes to namespaces only on the fuzzer's own (the name pool above),
    // and a cluster-scoped object the fuzzer creates carries its label.
    if method == "POST" && !t.namespaced {
        set(&mut obj, &["metadata", "labels"], json!({OWNER_LABEL: "yes"}));
    }
    let mut req = Request::new(method, path);
    match method {
        "POST" | "PUT" => {
            let roll = rng.random_range(0..10);
            if roll < 4 {
                req = req.body("application/json", serialize(&obj));
            } else if roll < 8 {
                mutate(rng, &mut obj);
                req = req.body("application/json", serialize(&obj));
            } else {
                let (ct, body) = wild_body(rng, &obj);
                req = req.body(&ct, body);
            }
        }
        "PATCH" => {
            let kinds = [
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml",
            ];
            let ct = one(rng, &kinds);
            let body = match ct {
                "application/json-patch+json" => json_patch(rng, &obj),
                "application/merge-patch+json" => merge_patch(rng, &obj, false),
                "application/strategic-merge-patch+json" => merge_patch(rng, &obj, true),
                _ => {
                    if !query.iter().any(|(k, _)| k == "fieldManager") && rng.random_bool(0.8) {
                        query.push(("fieldManager".into(), "fuzz".into()));
                    }
                    if rng.random_bool(0.5) {
                        mutate(rng, &mut obj);
                    }
                    obj
                }
            };
            if rng.random_ratio(1, 8) {
                let (_, wild) = wild_body(rng, &body);
                req = req.body(ct, wild);
            } else if rng.random_ratio(1, 20) {
                req = req.body("application/json", serialize(&body));
            } else {
                req = req.body(ct, serialize(&body));
            }
        }
        "DELETE" if rng.random_bool(0.3) => {
            let mut opts = json!({"kind": "DeleteOptions", "apiVersion": "v1"});
            match rng.random_range(0..5) {
                0 => opts["gracePeriodSeconds"] = value(rng, 1),
                1 => opts["propagationPolicy"] = json!(one(rng, &["Foreground", "Orphan", "x"])),
                2 => opts["preconditions"] = json!({"uid": "nope", "resourceVersion": value(rng, 1)}),
                3 => opts["dryRun"] = json!(["All"]),
                _ => opts = value(rng, 0),
            }
            req = req.body("application/json", serialize(&opts));
        }
        _ => {}
    }
    if !query.is_empty() {
        let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={}", enc(v))).collect();
        req.path = format!("{}?{}", req.path, q.join("&"));
    }
    if rng.random_ratio(1, 4) {
        let accept = one(
            rng,
            &[
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
                "application/json;as=Table;v=v1;g=meta.k8s.io",
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json",
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
                "application/json;stream=watch",
                "text/html",
                "*/*",
                "garbage;;;q=x",
            ],
        );
        req = req.header("Accept", accept);
    }
    Generated { req, streaming }
}

/// A path outside the resources: discovery, OpenAPI, health, junk.
fn odd_path(rng: &mut StdRng) -> Generated {
    let path = one(
        rng,
        &[
            "/",
            "/api",
            "/api/",
            "/apis/",
            "/apis/apps",
            "/apis/apps/v1/",
            "/api/v2",
            "/apis/x.example/v1/things",
            "/version",
            "/version/",
            "/healthz",
            "/livez?verbose",
            "/readyz",
            "/metrics",
            "/openapi/v2",
            "/openapi/v3",
            "/openapi/v3/apis/apps/v1",
            "/openapi/v3/api/v1?hash=x",
            "/openapi/v3/nope",
            "/api/v1/namespaces/default/pods/f0/exec?command=ls",
            "/api/v1/namespaces/default/pods/f0/log?follow=false&tailLines=-5",
            "/api/v1/namespaces/default/configmaps/f0/status",
            "/api/v1/namespaces/default/configmaps/f0/a/b/c",
            "/api/v1/namespaces//configmaps",
            "/api/v1/nodes/miniplane-worker-1/proxy",
            "/apis/apps/v1/namespaces/default/deployments/f0/rollback",
            "/.well-known/openid-configuration",
            "/api/v1/namespaces/default/configmaps/%2e%2e",
            "/api/v1/watch/namespaces/default/configmaps/f0?timeoutSeconds=1",
        ],
    );
    let method = one(rng, &["GET", "GET", "GET", "POST", "DELETE", "PUT"]);
    Generated {
        streaming: path.contains("watch"),
        req: Request::new(method, path).body("application/json", "{}"),
    }
}

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

/// What the workers saw.
#[derive(Default)]
struct Tally {
    sent: u64,
    by_class: BTreeMap<u16, u64>,
    five_xx: Vec<String>,
    five_xx_count: u64,
    dropped: Vec<String>,
    dropped_count: u64,
    hung: u64,
    not_sent: u64,
    /// Requests sent again after a kept-alive connection closed under them.
    resent: u64,
}

/// A request's status and the start of its body, or why it got no full response.
type Outcome = Result<(u16, String), Failure>;

impl Tally {
    /// Counts one request; `what` names it in a failure message.
    fn record(&mut self, what: impl FnOnce() -> String, outcome: Outcome) {
        match outcome {
            Ok((status, body)) => {
                self.sent += 1;
                *self.by_class.entry(status / 100 * 100).or_default() += 1;
                if status >= 500 {
                    self.five_xx_count += 1;
                    if self.five_xx.len() < 30 {
                        self.five_xx.push(format!("{}\n  → {status} {body}", what()));
                    }
                }
            }
            Err(Failure::Invalid(_)) => self.not_sent += 1,
            Err(e) => {
                self.sent += 1;
                self.dropped_count += 1;
                if matches!(e, Failure::Timeout) {
                    self.hung += 1;
                }
                if self.dropped.len() < 30 {
                    self.dropped.push(format!("{}\n  → {e}", what()));
                }
            }
        }
    }
}

/// A watch or followed log on a connection of its own: the head must
/// arrive; the stream is read for 200 ms (it must not break off), then
/// the connection is dropped.
async fn streamed(endpoint: crate::harness::Endpoint, req: Request) -> Outcome {
    let mut http = Http::new(&endpoint);
    http.timeout = Duration::from_secs(15);
    let (status, mut body) = http.stream(&req).await?;
    let read = async {
        while let Some(frame) = body.frame().await {
            frame
                .map_err(|e| Failure::Dropped(format!("status {status}, then the stream broke off: {e}")))?;
        }
        Ok(())
    };
    match tokio::time::timeout(Duration::from_millis(200), read).await {
        Ok(Err(e)) => Err(e),
        _ => Ok((status, String::new())),
    }
}

/// Sends `count` generated requests from one worker: one kept-alive
/// connection for ordinary requests, up to 8 streaming ones at a time in
/// tasks of their own (so that their 200 ms do not hold the worker up).
async fn worker(
    world: Arc<World>,
    endpoint: crate::harness::Endpoint,
    seed: u64,
    id: usize,
    count: u64,
    stop: Arc<AtomicBool>,
) -> Tally {
    let mut rng = rng(crate::harness::mix(seed, &format!("worker-{id}")));
    let mut http = Http::new(&endpoint);
    http.timeout = Duration::from_secs(15);
    let mut t = Tally::default();
    let mut streams = tokio::task::JoinSet::new();
    let name = |n: u64, req: &Request| format!("seed {seed} worker {id} request #{n}:\n  {}", req.show());
    for n in 0..count {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let g = generate(&mut rng, &world);
        let big = g.req.body.len() > 1 << 20;
        if g.streaming && !big {
            while streams.len() >= 8 {
                if let Some(Ok((n, req, outcome))) = streams.join_next().await {
                    t.record(|| name(n, &req), outcome);
                }
            }
            let endpoint = endpoint.clone();
            streams.spawn(async move {
                let outcome = streamed(endpoint, g.req.clone()).await;
                (n, g.req, outcome)
            });
            continue;
        }
        // A body over 1 MiB may be refused (413) before the server reads it all.
        let reply = match big {
            true => http.send_closing(&g.req).await,
            false => match http.send(&g.req).await {
                // hyper will not build it (a URI over its 64 KiB limit): sent as raw bytes.
                Err(Failure::Invalid(_)) => http.send_closing(&g.req).await,
                other => other,
            },
        };
        let outcome = reply.map(|r| {
            if let Some(rv) = r.resource_version() {
                world.rv.fetch_max(rv, Ordering::Relaxed);
            }
            (r.status, r.text())
        });
        let down = matches!(outcome, Err(Failure::Connect(_)));
        t.record(|| name(n, &g.req), outcome);
        if down {
            // The server may be gone; the run checks and stops.
            sleep(Duration::from_millis(100)).await;
        }
    }
    while let Some(joined) = streams.join_next().await {
        if let Ok((n, req, outcome)) = joined {
            t.record(|| name(n, &req), outcome);
        }
    }
    t.resent = http.resent;
    t
}

/// Writes that are invalid for certain (a field of the wrong type, a name
/// that is no DNS label, deleting a system namespace, a JSON patch whose
/// copies double an object 30 times): each must be refused with a 4xx.
fn invalid_writes() -> Vec<Request> {
    let cms = "/api/v1/namespaces/fuzz-a/configmaps";
    let cm = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typed"}, "data": data});
    let storm: Vec<Value> = (0..30)
        .map(|i| json!({"op": "copy", "from": "/metadata", "path": format!("/metadata/labels/c{i}")}))
        .collect();
    let storm = serde_json::to_vec(&storm).expect("a JSON value serializes");
    let system = ["default", "kube-system", "kube-public"]
        .map(|ns| Request::new("DELETE", format!("/api/v1/namespaces/{ns}")));
    system.into_iter().chain([
        Request::new("PATCH", "/api/v1/namespaces/fuzz-a").body("application/json-patch+json", storm),
        Request::new("POST", cms).json(&cm(json!({"a": 5}))),
        Request::new("POST", cms).json(&cm(json!(["a"]))),
        Request::new("POST", cms).json(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}})),
        Request::new("POST", "/apis/apps/v1/namespaces/fuzz-a/deployments").json(&json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "typed"},
            "spec": {"replicas": "x", "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})),
        Request::new("POST", "/api/v1/namespaces/fuzz-a/pods").json(&json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typed"}, "spec": {"containers": {"name": "c"}}})),
    ])
    .collect()
}

/// Fuzzes a fresh server with the suite's seed.
pub async fn run(mode: Mode) -> Report {
    let mut report = Report::new("fuzz");
    let total: u64 = mode.pick(3_000, 100_000);
    let workers: u64 = 4;
    let seed = mode.seed_for("fuzz");
    let dir = crate::harness::temp_dir("fuzz");
    let mut server = Miniplane::start(
        &dir.path().join("data"),
        &["--seed", &seed.to_string(), "--nodes", "2"],
    )
    .await;
    let pid = server.pid();
    let mut http = Http::new(&server.endpoint);
    for ns in OWN_NAMESPACES {
        let body = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {OWNER_LABEL: "yes"}}});
        let r = http
            .send(&Request::new("POST", "/api/v1/namespaces").json(&body))
            .await
            .expect("creating a namespace");
        assert_eq!(r.status, 201, "creating {ns}: {}", r.text());
    }
    let targets = discover(&mut http).await;
    let resources = targets.iter().filter(|t| t.sub.is_none()).count();
    let world = Arc::new(World {
        targets,
        rv: Arc::new(AtomicU64::new(1)),
    });

    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut peak_rss = 0;
            while !stop.load(Ordering::Relaxed) {
                if let Some((rss, _)) = memory_kib(pid) {
                    peak_rss = peak_rss.max(rss);
                }
                sleep(Duration::from_millis(50)).await;
            }
            peak_rss
        })
    };
    let idle = memory_kib(pid).map(|m| m.0).unwrap_or(0);
    let started = tokio::time::Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|id| {
            tokio::spawn(worker(
                world.clone(),
                server.endpoint.clone(),
                seed,
                id as usize,
                total / workers,
                stop.clone(),
            ))
        })
        .collect();
    let mut t = Tally::default();
    let mut exited = None;
    for task in tasks {
        let w = task.await.expect("fuzz worker");
        t.sent += w.sent;
        for (k, v) in w.by_class {
            *t.by_class.entry(k).or_default() += v;
        }
        t.five_xx.extend(w.five_xx);
        t.five_xx_count += w.five_xx_count;
        t.dropped.extend(w.dropped);
        t.dropped_count += w.dropped_count;
        t.hung += w.hung;
        t.not_sent += w.not_sent;
        t.resent += w.resent;
        if exited.is_none() {
            exited = server.exited();
        }
    }
    let took = started.elapsed();
    let mut accepted = Vec::new();
    for req in invalid_writes() {
        match http.send(&req).await {
            Ok(r) if (400..500).contains(&r.status) => {}
            other => accepted.push(format!(
                "{}\n  → {}",
                req.show(),
                match other {
                    Ok(r) => format!("{} {}", r.status, r.text()),
                    Err(e) => e.to_string(),
                }
            )),
        }
    }
    let hwm = memory_kib(pid).map(|m| m.1).unwrap_or(0);
    stop.store(true, Ordering::Relaxed);
    let peak_rss = sampler.await.unwrap_or(0).max(hwm);
    let ready = http.send(&Request::new("GET", "/readyz")).await.map(|r| r.status);
    if exited.is_none() {
        exited = server.exited();
    }
    server.stop().await;

    let classes: Vec<String> = t
        .by_class
        .iter()
        .map(|(c, n)| format!("{}xx {}", c / 100, thousands(*n)))
        .collect();
    report.info(
        "requests fuzzed",
        format!(
            "{} over {resources} resources and their subresources, {workers} connections, {:.0}/s ({}; {} not sendable; {} sent again after a kept-alive connection closed)",
            thousands(t.sent),
            t.sent as f64 / took.as_secs_f64().max(0.001),
            classes.join(", "),
            t.not_sent,
            t.resent,
        ),
    );
    report.check("5xx", t.five_xx_count, t.five_xx_count == 0, || {
        t.five_xx.join("\n")
    });
    report.check(
        "dropped connections",
        format!("{} ({} without a response within 15 s)", t.dropped_count, t.hung),
        t.dropped_count == 0,
        || t.dropped.join("\n"),
    );
    let probes = invalid_writes().len();
    report.check(
        "writes invalid for certain, accepted",
        format!("{} of {probes}", accepted.len()),
        accepted.is_empty(),
        || accepted.join("\n"),
    );
    let mib = |kib: u64| kib as f64 / 1024.0;
    report.check(
        "peak RSS",
        format!(
            "{:.1} MiB (idle {:.1} MiB; bound {RSS_BOUND_MIB} MiB)",
            mib(peak_rss),
            mib(idle)
        ),
        peak_rss > 0 && peak_rss <= RSS_BOUND_MIB * 1024,
        || format!("peak RSS {:.1} MiB", mib(peak_rss)),
    );
    report.check(
        "server alive and ready afterwards",
        match (&exited, &ready) {
            (None, Ok(200)) => "yes".to_string(),
            _ => format!("exited {exited:?}, /readyz {ready:?}"),
        },
        exited.is_none() && matches!(ready, Ok(200)),
        || format!("exited {exited:?}, /readyz {ready:?} (seed {seed})"),
    );
    report
}
