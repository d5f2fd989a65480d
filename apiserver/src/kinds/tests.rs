//! Table tests of the kind strategies.

use serde_json::{Value, json};

use super::*;
use crate::registry::{ResourceInfo, builtin};
use crate::validation::{is_dns1035_label, is_dns1123_label, is_dns1123_subdomain};

fn info(kind: &str) -> ResourceInfo {
    builtin()
        .into_iter()
        .find(|r| r.kind == kind && r.group != "events.k8s.io")
        .expect("built-in kind")
}

fn msgs(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn created(kind: &str, mut obj: Value) -> Value {
    let i = info(kind);
    default_object(&i, &mut obj);
    set_meta(&mut obj, "uid", json!("u-1"));
    prepare_for_create(&i, &mut obj);
    obj
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}
            }
        }
    })
}

const DEFAULTED_CONTAINER: &str = r#"{
    "name": "nginx", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
    "resources": {}, "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File"
}"#;

fn template_spec_defaults() -> Value {
    json!({
        "containers": [serde_json::from_str::<Value>(DEFAULTED_CONTAINER).unwrap()],
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always",
        "schedulerName": "default-scheduler", "securityContext": {},
        "terminationGracePeriodSeconds": 30
    })
}

// ---------------------------------------------------------------- names

#[test]
fn name_rules_give_upstream_messages() {
    assert!(is_dns1123_subdomain("a.b-c").is_empty());
    assert_eq!(
        is_dns1123_subdomain("Web"),
        vec![
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ]
    );
    assert_eq!(is_dns1123_label("a.b"), vec!["must not contain dots"]);
    assert_eq!(
        is_dns1123_label("-a"),
        vec![
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(
        is_dns1035_label("1abc"),
        vec![
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(
        is_dns1123_label(&"a".repeat(64))[0],
        "must be no more than 63 characters"
    );
}

#[test]
fn metadata_name_required_and_generate_name_prefix() {
    let mut d = created("Deployment", deployment());
    set_meta(&mut d, "name", json!(""));
    assert_eq!(
        msgs(&validate_create(&info("Deployment"), &d)),
        vec!["metadata.name: Required value: name or generateName is required"]
    );
    set_meta(&mut d, "generateName", json!("web-"));
    set_meta(&mut d, "name", json!("web-x7k2p"));
    assert!(validate_create(&info("Deployment"), &d).is_empty());
    set_meta(&mut d, "generateName", json!("Web-"));
    let errs = msgs(&validate_create(&info("Deployment"), &d));
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].starts_with("metadata.generateName: Invalid value: \"Web-\": a lowercase RFC 1123 subdomain")
    );
}

#[test]
fn namespace_required_or_forbidden_by_scope() {
    let mut d = created("Deployment", deployment());
    remove_meta(&mut d, "namespace");
    assert_eq!(
        msgs(&validate_create(&info("Deployment"), &d)),
        vec!["metadata.namespace: Required value"]
    );
    let mut n = created("Node", json!({"metadata": {"name": "n1", "namespace": "x"}}));
    assert_eq!(
        msgs(&validate_create(&info("Node"), &n)),
        vec!["metadata.namespace: Forbidden: not allowed on this type"]
    );
    remove_meta(&mut n, "namespace");
    assert!(validate_create(&info("Node"), &n).is_empty());
}

#[test]
fn labels_annotations_owner_refs_finalizers() {
    let mut d = created("Deployment", deployment());
    set_meta(&mut d, "labels", json!({"ok": "bad value"}));
    set_meta(&mut d, "annotations", json!({"big": "x".repeat(300 * 1024)}));
    set_meta(&mut d, "finalizers", json!(["orphan", "foregroundDeletion"]));
    set_meta(
        &mut d,
        "ownerReferences",
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "", "uid": "1"}]),
    );
    let errs = msgs(&validate_create(&info("Deployment"), &d));
    assert_eq!(
        errs,
        vec![
            "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            "metadata.annotations: Too long: must have at most 262144 bytes",
            "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
            "metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set",
        ]
    );
}

#[test]
fn label_key_prefix_errors() {
    let errs = crate::validation::is_qualified_name("Example.com/app");
    assert!(errs[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
    assert!(crate::validation::is_qualified_name("app.kubernetes.io/name").is_empty());
    assert_eq!(
        crate::validation::is_qualified_name("a/")[0],
        "name part must be non-empty"
    );
}

#[test]
fn metadata_identity_is_immutable_on_update() {
    let i = info("Deployment");
    let old = created("Deployment", deployment());
    let mut new = old.clone();
    set_meta(&mut new, "uid", json!("other"));
    set_meta(&mut new, "name", json!("web2"));
    prepare_for_update(&i, &mut new, &old);
    assert_eq!(
        msgs(&validate_update(&i, &new, &old)),
        vec![
            "metadata.name: Invalid value: \"web2\": field is immutable",
            "metadata.uid: Invalid value: \"other\": field is immutable",
        ]
    );
}

// ---------------------------------------------------------------- Deployment

#[test]
fn deployment_defaults_and_create() {
    let d = created("Deployment", deployment());
    let mut template = json!({"metadata": {"creationTimestamp": null, "labels": {"app": "web"}}});
    template["spec"] = template_spec_defaults();
    assert_eq!(
        d["spec"],
        json!({
            "progressDeadlineSeconds": 600, "replicas": 1, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": template,
        })
    );
    assert_eq!(d["status"], json!({}));
    assert_eq!(d["metadata"]["generation"], 1);
    assert!(validate_create(&info("Deployment"), &d).is_empty());
}

#[test]
fn deployment_recreate_keeps_no_rolling_update() {
    let mut d = deployment();
    d["spec"]["strategy"] = json!({"type": "Recreate"});
    let d = created("Deployment", d);
    assert_eq!(d["spec"]["strategy"], json!({"type": "Recreate"}));
}

fn deployment_errors(edit: impl FnOnce(&mut Value)) -> Vec<String> {
    let mut d = created("Deployment", deployment());
    edit(&mut d);
    msgs(&validate_create(&info("Deployment"), &d))
}

/// One row: an edit of a valid Deployment and the errors it must give.
type Case = (Box<dyn FnOnce(&mut Value)>, Vec<&'static str>);

#[test]
fn deployment_validation_table() {
    let cases: Vec<Case> = vec![
        (
            Box::new(|d| d["spec"]["replicas"] = json!(-1)),
            vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            Box::new(|d| d["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"})),
            vec![
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`",
            ],
        ),
        (
            Box::new(|d| {
                d["spec"].as_object_mut().unwrap().remove("selector");
            }),
            vec![
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
            ],
        ),
        (
            Box::new(|d| d["spec"]["selector"] = json!({})),
            vec![
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
            ],
        ),
        (
            Box::new(|d| d["spec"]["template"]["spec"]["restartPolicy"] = json!("Never")),
            vec![
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            ],
        ),
        (
            Box::new(|d| {
                d["spec"]["strategy"]["rollingUpdate"] = json!({"maxSurge": 0, "maxUnavailable": 0})
            }),
            vec![
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0",
            ],
        ),
        (
            Box::new(|d| d["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = json!("abc")),
            vec![
                "spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"abc\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            ],
        ),
        (
            Box::new(|d| d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] = json!("120%")),
            vec![
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"120%\"}: must not be greater than 100%",
            ],
        ),
        (
            Box::new(|d| d["spec"]["minReadySeconds"] = json!(-5)),
            vec!["spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"],
        ),
        (
            Box::new(|d| d["spec"]["minReadySeconds"] = json!(700)),
            vec!["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
        ),
        (
            Box::new(|d| d["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {}})),
            vec![
                "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
            ],
        ),
        (
            Box::new(|d| d["spec"]["strategy"] = json!({"type": "Blue"})),
            vec![
                "spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"Blue\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\"",
            ],
        ),
        (
            Box::new(|d| d["spec"]["template"]["spec"]["containers"][0]["image"] = json!("")),
            vec!["spec.template.spec.containers[0].image: Required value"],
        ),
    ];
    for (edit, want) in cases {
        assert_eq!(deployment_errors(edit), want);
    }
}

#[test]
fn deployment_selector_is_immutable() {
    let i = info("Deployment");
    let old = created("Deployment", deployment());
    let mut new = old.clone();
    new["spec"]["selector"] = json!({"matchLabels": {"app": "web", "tier": "fe"}});
    new["spec"]["template"]["metadata"]["labels"]["tier"] = json!("fe");
    prepare_for_update(&i, &mut new, &old);
    assert_eq!(
        msgs(&validate_update(&i, &new, &old)),
        vec![
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"tier\":\"fe\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        ]
    );
}

#[test]
fn deployment_generation_bumps_on_spec_or_annotations_only() {
    let i = info("Deployment");
    let old = created("Deployment", deployment());
    let bumped = |edit: &dyn Fn(&mut Value)| {
        let mut new = old.clone();
        edit(&mut new);
        new["status"] = json!({"replicas": 9});
        default_object(&i, &mut new);
        prepare_for_update(&i, &mut new, &old);
        assert_eq!(new["status"], json!({}), "status comes from the old object");
        new["metadata"]["generation"].as_i64().unwrap()
    };
    assert_eq!(bumped(&|_| {}), 1);
    assert_eq!(bumped(&|d| d["metadata"]["labels"] = json!({"x": "y"})), 1);
    assert_eq!(bumped(&|d| d["spec"]["replicas"] = json!(3)), 2);
    assert_eq!(bumped(&|d| d["metadata"]["annotations"] = json!({"a": "b"})), 2);
    assert_eq!(bumped(&|d| d["metadata"]["generation"] = json!(40)), 1);
}

#[test]
fn status_update_keeps_spec_and_labels() {
    let i = info("Deployment");
    let old = created("Deployment", deployment());
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(5);
    new["metadata"]["labels"] = json!({"x": "y"});
    new["status"] = json!({"replicas": 1, "observedGeneration": 1});
    prepare_for_status_update(&i, &mut new, &old);
    assert_eq!(new["spec"], old["spec"]);
    assert!(new["metadata"].get("labels").is_none());
    assert_eq!(new["status"]["replicas"], 1);
}

// ---------------------------------------------------------------- ReplicaSet, StatefulSet, DaemonSet

fn workload(kind: &str) -> Value {
    let mut d = deployment();
    d["kind"] = json!(kind);
    d["spec"].as_object_mut().unwrap().remove("strategy");
    d
}

#[test]
fn replicaset_defaults_and_status() {
    let rs = created("ReplicaSet", workload("ReplicaSet"));
    assert_eq!(rs["spec"]["replicas"], 1);
    assert_eq!(rs["status"], json!({"replicas": 0}));
    assert!(validate_create(&info("ReplicaSet"), &rs).is_empty());
    let mut bad = rs.clone();
    bad["spec"]["selector"] = json!({"matchExpressions": [{"key": "app", "operator": "In"}]});
    assert_eq!(
        msgs(&validate_create(&info("ReplicaSet"), &bad))[0],
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
    );
}

#[test]
fn statefulset_defaults() {
    let mut s = workload("StatefulSet");
    s["spec"]["volumeClaimTemplates"] =
        json!([{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]);
    let s = created("StatefulSet", s);
    assert_eq!(s["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        s["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        s["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(s["spec"]["replicas"], 1);
    assert_eq!(s["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(
        s["spec"]["volumeClaimTemplates"][0],
        json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "creationTimestamp": null},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"},
        })
    );
    assert_eq!(s["status"], json!({"availableReplicas": 0, "replicas": 0}));
    assert!(validate_create(&info("StatefulSet"), &s).is_empty());
}

#[test]
fn statefulset_given_rolling_update_type_gets_no_partition() {
    let mut s = workload("StatefulSet");
    s["spec"]["updateStrategy"] = json!({"type": "RollingUpdate"});
    let s = created("StatefulSet", s);
    assert_eq!(s["spec"]["updateStrategy"], json!({"type": "RollingUpdate"}));
}

#[test]
fn statefulset_update_rules() {
    let i = info("StatefulSet");
    let old = created("StatefulSet", workload("StatefulSet"));
    let mut ok = old.clone();
    ok["spec"]["replicas"] = json!(3);
    prepare_for_update(&i, &mut ok, &old);
    assert!(validate_update(&i, &ok, &old).is_empty());
    assert_eq!(ok["metadata"]["generation"], 2);
    let mut bad = old.clone();
    bad["spec"]["serviceName"] = json!("other");
    prepare_for_update(&i, &mut bad, &old);
    assert_eq!(
        msgs(&validate_update(&i, &bad, &old)),
        vec![
            "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
        ]
    );
}

#[test]
fn statefulset_name_is_a_dns_label() {
    let mut s = created("StatefulSet", workload("StatefulSet"));
    set_meta(&mut s, "name", json!("a.b"));
    assert_eq!(
        msgs(&validate_create(&info("StatefulSet"), &s)),
        vec!["metadata.name: Invalid value: \"a.b\": must not contain dots"]
    );
}

#[test]
fn daemonset_defaults_template_generation_and_bumps() {
    let i = info("DaemonSet");
    let ds = created("DaemonSet", workload("DaemonSet"));
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(
        ds["metadata"]["annotations"],
        json!({"deprecated.daemonset.template.generation": "1"})
    );
    assert_eq!(ds["status"]["numberReady"], 0);
    assert!(validate_create(&i, &ds).is_empty());

    let mut min_ready = ds.clone();
    min_ready["spec"]["minReadySeconds"] = json!(5);
    prepare_for_update(&i, &mut min_ready, &ds);
    assert_eq!(min_ready["metadata"]["generation"], 2);
    assert_eq!(
        min_ready["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "1"
    );

    let mut image = ds.clone();
    image["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    image["metadata"]["annotations"] = json!({});
    prepare_for_update(&i, &mut image, &ds);
    assert_eq!(image["metadata"]["generation"], 2);
    assert_eq!(
        image["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "2"
    );
}

#[test]
fn daemonset_rolling_update_rules() {
    let mut ds = created("DaemonSet", workload("DaemonSet"));
    ds["spec"]["updateStrategy"]["rollingUpdate"] = json!({"maxSurge": 1, "maxUnavailable": 1});
    assert_eq!(
        msgs(&validate_create(&info("DaemonSet"), &ds)),
        vec![
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when maxUnavailable is non-zero"
        ]
    );
    ds["spec"]["updateStrategy"]["rollingUpdate"] = json!({"maxSurge": 0, "maxUnavailable": 0});
    assert_eq!(
        msgs(&validate_create(&info("DaemonSet"), &ds)),
        vec![
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"
        ]
    );
}

// ---------------------------------------------------------------- Pod

fn pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "nginx", "namespace": "default"},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})
}

#[test]
fn pod_defaults_admission_and_status() {
    let p = created("Pod", pod());
    assert_eq!(
        p["spec"],
        json!({
            "containers": [{
                "name": "nginx", "image": "nginx", "imagePullPolicy": "Always", "resources": {},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"
            }],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
            "serviceAccount": "default", "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}
            ]
        })
    );
    assert_eq!(p["status"], json!({"phase": "Pending", "qosClass": "BestEffort"}));
    assert_eq!(p["metadata"]["generation"], 1);
    assert!(validate_create(&info("Pod"), &p).is_empty());
}

#[test]
fn image_pull_policy_follows_the_tag() {
    for (image, want) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.27", "IfNotPresent"),
        ("localhost:5000/app", "Always"),
        ("localhost:5000/app:v1", "IfNotPresent"),
        ("nginx@sha256:abc", "IfNotPresent"),
    ] {
        let mut p = pod();
        p["spec"]["containers"][0]["image"] = json!(image);
        let p = created("Pod", p);
        assert_eq!(p["spec"]["containers"][0]["imagePullPolicy"], want, "{image}");
    }
}

#[test]
fn pod_requests_from_limits_and_qos() {
    let mut p = pod();
    p["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": "500m", "memory": "128Mi"}});
    let p = created("Pod", p);
    assert_eq!(
        p["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "500m", "memory": "128Mi"})
    );
    assert_eq!(p["status"]["qosClass"], "Guaranteed");
    let mut b = pod();
    b["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": "0.5"}, "limits": {"cpu": "1"}});
    assert_eq!(created("Pod", b)["status"]["qosClass"], "Burstable");
}

#[test]
fn probes_ports_and_volumes_defaults() {
    let mut p = pod();
    p["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80}]);
    p["spec"]["containers"][0]["livenessProbe"] = json!({"httpGet": {"port": 80}});
    p["spec"]["volumes"] = json!([{"name": "a"}, {"name": "b", "configMap": {"name": "c"}}]);
    let p = created("Pod", p);
    let c = &p["spec"]["containers"][0];
    assert_eq!(c["ports"], json!([{"containerPort": 80, "protocol": "TCP"}]));
    assert_eq!(
        c["livenessProbe"],
        json!({
            "failureThreshold": 3, "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1,
            "httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}
        })
    );
    assert_eq!(
        p["spec"]["volumes"],
        json!([
            {"name": "a", "emptyDir": {}},
            {"name": "b", "configMap": {"name": "c", "defaultMode": 420}}
        ])
    );
}

#[test]
fn pod_validation_table() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!([]), vec!["spec.containers: Required value"]),
        (
            json!([{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]),
            vec!["spec.containers[1].name: Duplicate value: \"a\""],
        ),
        (
            json!([{"name": "A_b", "image": "x"}]),
            vec![
                "spec.containers[0].name: Invalid value: \"A_b\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
        (
            json!([{"name": "a"}]),
            vec!["spec.containers[0].image: Required value"],
        ),
        (
            json!([{"name": "a", "image": "x", "ports": [{"containerPort": 70000}]}]),
            vec![
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
            ],
        ),
        (
            json!([{"name": "a", "image": "x", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]),
            vec!["spec.containers[0].volumeMounts[0].name: Not found: \"v\""],
        ),
    ];
    for (containers, want) in cases {
        let mut p = pod();
        p["spec"]["containers"] = containers;
        let p = created("Pod", p);
        assert_eq!(msgs(&validate_create(&info("Pod"), &p)), want);
    }
    let mut p = created("Pod", pod());
    p["spec"]["restartPolicy"] = json!("Sometimes");
    assert_eq!(
        msgs(&validate_create(&info("Pod"), &p)),
        vec![
            "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\""
        ]
    );
}

#[test]
fn pod_update_rules() {
    let i = info("Pod");
    let old = created("Pod", pod());
    let mut image = old.clone();
    image["spec"]["containers"][0]["image"] = json!("nginx:2");
    prepare_for_update(&i, &mut image, &old);
    assert!(validate_update(&i, &image, &old).is_empty());
    assert_eq!(image["metadata"]["generation"], 2);

    let mut restart = old.clone();
    restart["spec"]["restartPolicy"] = json!("Never");
    prepare_for_update(&i, &mut restart, &old);
    let errs = validate_update(&i, &restart, &old);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].to_string().starts_with("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n  core.PodSpec{\n"));

    let mut more = old.clone();
    more["spec"]["containers"] = json!([{"name": "a", "image": "a"}, {"name": "b", "image": "b"}]);
    default_object(&i, &mut more);
    assert_eq!(
        msgs(&validate_update(&i, &more, &old)),
        vec!["spec.containers: Forbidden: pod updates may not add or remove containers"]
    );

    let mut labels = old.clone();
    labels["metadata"]["labels"] = json!({"a": "b"});
    prepare_for_update(&i, &mut labels, &old);
    assert_eq!(labels["metadata"]["generation"], 1);
}

// ---------------------------------------------------------------- Job, CronJob

fn job() -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl"}]}}}})
}

#[test]
fn job_defaults_and_generated_selector() {
    let j = created("Job", job());
    let labels = json!({
        "batch.kubernetes.io/controller-uid": "u-1", "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "u-1", "job-name": "pi"
    });
    assert_eq!(j["spec"]["template"]["metadata"]["labels"], labels);
    assert_eq!(j["metadata"]["labels"], labels);
    assert_eq!(
        j["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
    );
    for (k, v) in [
        ("backoffLimit", json!(6)),
        ("completions", json!(1)),
        ("parallelism", json!(1)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("manualSelector", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
    ] {
        assert_eq!(j["spec"][k], v, "{k}");
    }
    assert_eq!(j["status"], json!({}));
    assert!(
        validate_create(&info("Job"), &j).is_empty(),
        "{:?}",
        msgs(&validate_create(&info("Job"), &j))
    );
}

#[test]
fn job_user_template_labels_become_job_labels() {
    let mut j = job();
    j["spec"]["template"]["metadata"] = json!({"labels": {"app": "pi"}});
    let j = created("Job", j);
    assert_eq!(j["metadata"]["labels"], json!({"app": "pi"}));
}

#[test]
fn job_parallelism_only_leaves_completions_unset() {
    let mut j = job();
    j["spec"]["parallelism"] = json!(3);
    let j = created("Job", j);
    assert!(j["spec"].get("completions").is_none());
}

#[test]
fn job_validation_and_immutability() {
    let i = info("Job");
    let mut j = job();
    j["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("restartPolicy");
    let j = created("Job", j);
    assert_eq!(
        msgs(&validate_create(&i, &j)),
        vec![
            "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""
        ]
    );
    let old = created("Job", job());
    let mut new = old.clone();
    new["spec"]["completions"] = json!(5);
    new["spec"]["parallelism"] = json!(2);
    prepare_for_update(&i, &mut new, &old);
    assert_eq!(
        msgs(&validate_update(&i, &new, &old)),
        vec!["spec.completions: Invalid value: 5: field is immutable"]
    );
    assert_eq!(new["metadata"]["generation"], 2);
}

#[test]
fn cronjob_defaults_and_validation() {
    let i = info("CronJob");
    let cj = created(
        "CronJob",
        json!({"metadata": {"name": "hello", "namespace": "default"},
        "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
    );
    assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(cj["spec"]["suspend"], false);
    assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(cj["spec"]["failedJobsHistoryLimit"], 1);
    assert_eq!(
        cj["spec"]["jobTemplate"]["metadata"],
        json!({"creationTimestamp": null})
    );
    assert!(
        validate_create(&i, &cj).is_empty(),
        "{:?}",
        msgs(&validate_create(&i, &cj))
    );

    let mut long = cj.clone();
    set_meta(&mut long, "name", json!("a".repeat(53)));
    long["spec"]["schedule"] = json!("");
    assert_eq!(
        msgs(&validate_create(&i, &long)),
        vec![
            "spec.schedule: Required value",
            &format!(
                "metadata.name: Invalid value: \"{}\": must be no more than 52 characters",
                "a".repeat(53)
            ),
        ]
    );
    let mut bad = cj.clone();
    bad["spec"]["schedule"] = json!("every minute");
    assert_eq!(
        msgs(&validate_create(&i, &bad)),
        vec![
            "spec.schedule: Invalid value: \"every minute\": expected exactly 5 fields, found 2: [every minute]"
        ]
    );
}

// ---------------------------------------------------------------- core kinds

#[test]
fn service_defaults_and_families() {
    let s = created(
        "Service",
        json!({"metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
    );
    assert_eq!(
        s["spec"],
        json!({
            "selector": {"app": "web"},
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
            "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"],
        })
    );
    assert_eq!(s["status"], json!({"loadBalancer": {}}));
    assert!(s["metadata"].get("generation").is_none());
    assert!(validate_create(&info("Service"), &s).is_empty());
}

#[test]
fn service_validation_table() {
    let i = info("Service");
    let base = created(
        "Service",
        json!({"metadata": {"name": "web", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]}}),
    );
    let mut bad = base.clone();
    set_meta(&mut bad, "name", json!("1web"));
    bad["spec"]["ports"] = json!([{"port": 0, "protocol": "TCP", "targetPort": 80}, {"port": 81, "protocol": "TCP", "targetPort": 81, "nodePort": 30001}]);
    bad["spec"]["type"] = json!("ClusterIP");
    let errs = msgs(&validate_create(&i, &bad));
    assert!(errs[0].starts_with("metadata.name: Invalid value: \"1web\": a DNS-1035 label"));
    assert_eq!(
        &errs[1..],
        [
            "spec.ports[0].name: Required value",
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            "spec.ports[1].name: Required value",
            "spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
        ]
    );
    let mut ty = base.clone();
    ty["spec"]["type"] = json!("Magic");
    assert_eq!(
        msgs(&validate_create(&i, &ty)),
        vec![
            "spec.type: Unsupported value: \"Magic\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""
        ]
    );
}

#[test]
fn service_cluster_ip_kept_and_immutable() {
    let i = info("Service");
    let mut old = created(
        "Service",
        json!({"metadata": {"name": "web", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]}}),
    );
    old["spec"]["clusterIP"] = json!("10.96.0.10");
    old["spec"]["clusterIPs"] = json!(["10.96.0.10"]);
    let mut omitted = json!({"metadata": old["metadata"].clone(), "spec": {"ports": [{"port": 80}]}});
    default_object(&i, &mut omitted);
    prepare_for_update(&i, &mut omitted, &old);
    assert_eq!(omitted["spec"]["clusterIP"], "10.96.0.10");
    assert!(validate_update(&i, &omitted, &old).is_empty());
    let mut changed = old.clone();
    changed["spec"]["clusterIP"] = json!("10.96.0.11");
    changed["spec"]["clusterIPs"] = json!(["10.96.0.11"]);
    assert_eq!(
        msgs(&validate_update(&i, &changed, &old)),
        vec!["spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.11\"}: may not change once set"]
    );
}

#[test]
fn namespace_label_finalizer_phase() {
    let i = info("Namespace");
    let ns = created("Namespace", json!({"metadata": {"name": "team-a"}}));
    assert_eq!(
        ns["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "team-a"})
    );
    assert_eq!(ns["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(ns["status"], json!({"phase": "Active"}));
    assert!(validate_create(&i, &ns).is_empty());
    let mut new = ns.clone();
    new["spec"]["finalizers"] = json!([]);
    new["status"] = json!({"phase": "Terminating"});
    prepare_for_update(&i, &mut new, &ns);
    assert_eq!(new["spec"], ns["spec"]);
    assert_eq!(new["status"], ns["status"]);
    let mut dotted = ns.clone();
    set_meta(&mut dotted, "name", json!("a.b"));
    assert_eq!(
        msgs(&validate_create(&i, &dotted)),
        vec!["metadata.name: Invalid value: \"a.b\": must not contain dots"]
    );
}

#[test]
fn node_allocatable_from_capacity() {
    let n = created(
        "Node",
        json!({"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}}),
    );
    assert_eq!(n["status"]["allocatable"], json!({"cpu": "4"}));
}

#[test]
fn secret_and_configmap_rules() {
    let i = info("Secret");
    let s = created(
        "Secret",
        json!({"metadata": {"name": "s", "namespace": "default"},
        "stringData": {"user": "admin"}, "immutable": true}),
    );
    assert_eq!(s["type"], "Opaque");
    assert_eq!(s["data"], json!({"user": "YWRtaW4="}));
    assert!(s.get("stringData").is_none());
    assert!(validate_create(&i, &s).is_empty());
    let mut new = s.clone();
    new["type"] = json!("kubernetes.io/tls");
    new["data"] = json!({"user": "eA=="});
    assert_eq!(
        msgs(&validate_update(&i, &new, &s)),
        vec![
            "data[tls.crt]: Required value",
            "data[tls.key]: Required value",
            "type: Invalid value: \"kubernetes.io/tls\": field is immutable",
            "data: Forbidden: field is immutable when `immutable` is set",
        ]
    );
    let ci = info("ConfigMap");
    let cm = created(
        "ConfigMap",
        json!({"metadata": {"name": "c", "namespace": "default"},
        "data": {"bad key": "v"}}),
    );
    assert_eq!(
        msgs(&validate_create(&ci, &cm)),
        vec![
            "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
        ]
    );
}

#[test]
fn custom_resources_drop_status_and_bump_on_any_change() {
    let mut i = info("Deployment");
    i.group = "example.com".into();
    i.kind = "Widget".into();
    let mut obj =
        json!({"metadata": {"name": "w", "namespace": "default"}, "spec": {"a": 1}, "status": {"x": 1}});
    prepare_for_create(&i, &mut obj);
    assert!(obj.get("status").is_none());
    let mut new = obj.clone();
    new["data"] = json!({"b": 2});
    prepare_for_update(&i, &mut new, &obj);
    assert_eq!(new["metadata"]["generation"], 2);
}

#[test]
fn base64_matches_rfc4648() {
    for (input, want) in [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foobar", "Zm9vYmFy"),
    ] {
        let mut s = json!({"stringData": {"k": input}});
        core::default_secret(&mut s);
        assert_eq!(s["data"]["k"], want);
    }
}

fn event(namespace: &str, involved: Value) -> Value {
    json!({
        "metadata": {"name": "e.1", "namespace": namespace},
        "involvedObject": involved,
        "reason": "Starting", "message": "Starting kubelet.", "type": "Normal",
    })
}

#[test]
fn events_about_cluster_scoped_objects_live_in_default() {
    let ev = info("Event");
    let node = json!({"kind": "Node", "name": "n1", "uid": "n1"});
    assert!(validate_create(&ev, &event("default", node.clone())).is_empty());
    let mismatch = r#"involvedObject.namespace: Invalid value: "": does not match event.namespace"#;
    assert_eq!(
        msgs(&validate_create(&ev, &event("kube-system", node))),
        [mismatch]
    );
    let pod = json!({"kind": "Pod", "name": "p", "namespace": "shop"});
    assert!(validate_create(&ev, &event("shop", pod.clone())).is_empty());
    assert_eq!(
        msgs(&validate_create(&ev, &event("default", pod))),
        [r#"involvedObject.namespace: Invalid value: "shop": does not match event.namespace"#]
    );
}

#[test]
fn events_with_an_event_time_say_who_reported_them() {
    let ev = info("Event");
    let mut e = event("kube-system", json!({"kind": "Node", "name": "n1"}));
    e["eventTime"] = json!("2025-01-01T00:00:00.000000Z");
    // An empty name also fails the qualified-name rule, twice, as upstream.
    let errs = msgs(&validate_create(&ev, &e));
    assert_eq!(errs.len(), 5, "{errs:?}");
    assert_eq!(errs[0], "reportingController: Required value");
    assert_eq!(
        errs[1],
        r#"reportingController: Invalid value: "": name part must be non-empty"#
    );
    assert_eq!(
        errs[3..],
        ["reportingInstance: Required value", "action: Required value"]
    );
    e["reportingComponent"] = json!("kubelet");
    e["reportingInstance"] = json!("n1");
    e["action"] = json!("Starting");
    assert!(validate_create(&ev, &e).is_empty());
    e["metadata"]["namespace"] = json!("shop");
    assert_eq!(
        msgs(&validate_create(&ev, &e)),
        [r#"involvedObject.namespace: Invalid value: "": does not match event.namespace"#]
    );
}

#[test]
fn events_k8s_io_events_follow_the_same_namespace_rule() {
    let ev = builtin()
        .into_iter()
        .find(|r| r.group == "events.k8s.io")
        .unwrap();
    let mut e = json!({
        "metadata": {"name": "e.1", "namespace": "default"},
        "regarding": {"kind": "Node", "name": "n1"},
        "eventTime": "2025-01-01T00:00:00.000000Z",
    });
    assert!(validate_create(&ev, &e).is_empty());
    e["metadata"]["namespace"] = json!("shop");
    assert_eq!(
        msgs(&validate_create(&ev, &e)),
        [r#"involvedObject.namespace: Invalid value: "": does not match event.namespace"#]
    );
}

#[test]
fn only_the_kubernetes_service_may_have_the_first_service_ip() {
    let svc = info("Service");
    let body = |ns: &str, name: &str| {
        created(
            "Service",
            json!({"metadata": {"name": name, "namespace": ns},
                   "spec": {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"], "ports": [{"port": 443}]}}),
        )
    };
    assert!(validate_create(&svc, &body("default", "kubernetes")).is_empty());
    assert_eq!(
        msgs(&validate_create(&svc, &body("default", "web"))),
        [
            r#"spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated"#
        ]
    );
    assert_eq!(validate_create(&svc, &body("other", "kubernetes")).len(), 1);
}

#[test]
fn endpoint_slices_are_defaulted_and_validated() {
    let eps = info("EndpointSlice");
    let mut slice = json!({
        "metadata": {"name": "web-1", "namespace": "default"},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.1.5"]}],
        "ports": [{"port": 80}],
    });
    default_object(&eps, &mut slice);
    assert_eq!(
        slice["ports"][0],
        json!({"name": "", "port": 80, "protocol": "TCP"})
    );
    assert!(validate_create(&eps, &slice).is_empty());
    let mut v6 = slice.clone();
    v6["addressType"] = json!("IPv6");
    assert_eq!(
        msgs(&validate_update(&eps, &v6, &slice)),
        [
            r#"endpoints[0].addresses[0]: Invalid value: "10.244.1.5": must be a valid IPv6 address"#,
            r#"addressType: Invalid value: "IPv6": field is immutable"#,
        ]
    );
}
