//! Quota and limits, end to end with the real `kubectl`: ResourceQuota
//! (controller and admission), LimitRange (defaults and limits),
//! PodTemplate, ReplicationController, and a Deployment held back by a
//! quota reporting `ReplicaFailure`.
//!
//! Every kind goes through create / get (its table) / list / watch /
//! update / patch / delete and shows one upstream validation error with its
//! field path. Every wait is bounded.

use e2e::Cluster;
use serde_json::Value;

/// Writes `yaml` to a file and runs `kubectl <verb> -f` on it.
async fn with_file(c: &Cluster, verb: &str, yaml: &str) -> e2e::Run {
    c.run_with_yaml(&[verb], yaml).await
}

/// `kubectl apply -f` of `yaml`, which must succeed.
async fn apply(c: &Cluster, yaml: &str) -> String {
    let r = with_file(c, "apply", yaml).await;
    assert!(r.success, "apply failed: {}\n{yaml}", r.stderr);
    r.stdout
}

/// `kubectl create -f` of `yaml`, which must fail; returns stderr.
async fn create_fails(c: &Cluster, yaml: &str) -> String {
    c.create_fails(yaml).await
}

/// Polls `kubectl get <what> -o json` until `check` holds; returns the object.
async fn eventually(c: &Cluster, what: &[&str], desc: &str, check: impl Fn(&Value) -> bool) -> Value {
    c.eventually_json(what, desc, check).await
}

/// A quota's `status.used[resource]`.
fn used<'a>(q: &'a Value, resource: &str) -> Option<&'a str> {
    q.pointer(&format!("/status/used/{}", resource.replace('/', "~1")))
        .and_then(Value::as_str)
}

/// A pod with one container `app` and, when `cpu` is given, that cpu as
/// its request and limit.
fn pod(name: &str, cpu: Option<&str>) -> String {
    let resources = match cpu {
        Some(cpu) => format!("\n    resources: {{requests: {{cpu: {cpu}}}, limits: {{cpu: {cpu}}}}}"),
        None => String::new(),
    };
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n  - name: app\n    image: nginx{resources}\n"
    )
}

const QUOTA: &str = r#"apiVersion: v1
kind: ResourceQuota
metadata:
  name: q
spec:
  hard:
    pods: "2"
    requests.cpu: "1"
    limits.cpu: "2"
"#;

/// Runs `kubectl get <plural> --watch --output-watch-events`, then `act`,
/// and returns the lines it printed once every `needles` was seen in order.
async fn watch_while(c: &Cluster, plural: &str, needles: &[&str], act: impl AsyncFnOnce()) -> Vec<String> {
    c.watch_while(&[plural], &[], needles, act).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_of_two_pods_refuses_the_third_and_follows_deletes() {
    let mut c = Cluster::start().await;
    apply(&c, QUOTA).await;
    eventually(&c, &["get", "quota", "q"], "status.used", |q| {
        used(q, "pods") == Some("0")
    })
    .await;
    let table = c.ok(&["get", "quota"]).await;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "AGE", "REQUEST", "LIMIT"], "{table}");
    assert!(
        table.contains("pods: 0/2, requests.cpu: 0/1   limits.cpu: 0/2"),
        "{table}"
    );

    apply(&c, &pod("p1", Some("250m"))).await;
    apply(&c, &pod("p2", Some("500m"))).await;
    let q = c.json(&["get", "quota", "q"]).await;
    assert_eq!(used(&q, "pods"), Some("2"), "admission charged both pods: {q}");
    assert_eq!(used(&q, "requests.cpu"), Some("750m"));
    assert_eq!(used(&q, "limits.cpu"), Some("750m"));

    let err = create_fails(&c, &pod("p3", Some("100m"))).await;
    assert!(
        err.contains(r#"Error from server (Forbidden): error when creating "#)
            && err.contains(
                r#"pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"#
            ),
        "{err}"
    );
    let err = create_fails(&c, &pod("p4", None)).await;
    assert!(
        err.contains(
            r#"pods "p4" is forbidden: failed quota: q: must specify limits.cpu for: app; requests.cpu for: app"#
        ),
        "{err}"
    );

    c.ok(&["delete", "pod", "p1", "--wait=true", "--timeout=20s"])
        .await;
    let q = eventually(&c, &["get", "quota", "q"], "the deleted pod's usage back", |q| {
        used(q, "pods") == Some("1")
    })
    .await;
    assert_eq!(used(&q, "requests.cpu"), Some("500m"));
    apply(&c, &pod("p3", Some("100m"))).await;
    let described = c.ok(&["describe", "quota", "q"]).await;
    assert!(
        described.contains("pods          2     2") && described.contains("requests.cpu  600m  1"),
        "{described}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_held_back_by_quota_reports_replica_failure() {
    let mut c = Cluster::start().await;
    apply(
        &c,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: two-pods\nspec:\n  hard:\n    pods: \"2\"\n",
    )
    .await;
    eventually(&c, &["get", "quota", "two-pods"], "status.used", |q| {
        used(q, "pods") == Some("0")
    })
    .await;
    apply(
        &c,
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx
"#,
    )
    .await;
    let failure = |conditions: Option<&Value>| {
        conditions
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "ReplicaFailure")
            .cloned()
    };
    let d = eventually(
        &c,
        &["get", "deploy", "web"],
        "the Deployment's ReplicaFailure",
        |d| failure(d.pointer("/status/conditions")).is_some(),
    )
    .await;
    let cond = failure(d.pointer("/status/conditions")).unwrap();
    assert_eq!(cond["status"], "True", "{cond}");
    assert_eq!(cond["reason"], "FailedCreate", "{cond}");
    let message = cond["message"].as_str().unwrap();
    assert!(
        message.starts_with(r#"pods "web-"#)
            && message.ends_with(
                "is forbidden: exceeded quota: two-pods, requested: pods=1, used: pods=2, limited: pods=2"
            ),
        "{message}"
    );
    let rs = c.json(&["get", "rs", "-l", "app=web"]).await;
    let rs_cond = failure(rs.pointer("/items/0/status/conditions")).expect("the ReplicaSet's condition");
    assert_eq!(rs_cond["reason"], "FailedCreate");
    let described = c.ok(&["describe", "deploy", "web"]).await;
    assert!(
        described.contains("ReplicaFailure   True    FailedCreate"),
        "{described}"
    );
    assert_eq!(
        c.json(&["get", "pods", "-l", "app=web"]).await["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_quota_verbs_and_validation() {
    let mut c = Cluster::start().await;
    let seen = watch_while(
        &c,
        "resourcequotas",
        &["ADDED", "MODIFIED", "DELETED"],
        async || {
            apply(&c, QUOTA).await;
            eventually(&c, &["get", "quota", "q"], "status", |q| {
                q.pointer("/status/used").is_some()
            })
            .await;
            c.ok(&[
                "patch",
                "quota",
                "q",
                "--type=merge",
                "-p",
                r#"{"spec":{"hard":{"pods":"5"}}}"#,
            ])
            .await;
            eventually(&c, &["get", "quota", "q"], "status.hard after the patch", |q| {
                q.pointer("/status/hard/pods") == Some(&Value::from("5"))
            })
            .await;
            let mut live = c.json(&["get", "quota", "q"]).await;
            live["spec"]["hard"]["secrets"] = Value::from("3");
            let r = with_file(&c, "replace", &live.to_string()).await;
            assert!(r.success, "{}", r.stderr);
            eventually(&c, &["get", "quota", "q"], "the replaced quota's usage", |q| {
                used(q, "secrets") == Some("0")
            })
            .await;
            let list = c.json(&["get", "resourcequotas", "-A"]).await;
            assert_eq!(list["items"].as_array().unwrap().len(), 1);
            c.ok(&["delete", "quota", "q"]).await;
        },
    )
    .await;
    assert!(
        seen[0].contains("REQUEST") && seen[0].contains("LIMIT"),
        "{seen:#?}"
    );

    // kubectl's generator (a protobuf body since kubectl 1.32).
    let err = c
        .fails(&[
            "create",
            "quota",
            "gen",
            "--hard=pods=3,secrets=1",
            "--scopes=NotTerminating",
        ])
        .await;
    assert!(
        err.contains(r#"spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotTerminating"}: unsupported scope applied to resource"#),
        "{err}"
    );
    let out = c
        .ok(&[
            "create",
            "quota",
            "gen",
            "--hard=pods=3,requests.cpu=1",
            "--scopes=NotTerminating",
        ])
        .await;
    assert!(out.contains("resourcequota/gen created"), "{out}");
    let q = c.json(&["get", "quota", "gen"]).await;
    assert_eq!(
        q["spec"]["hard"],
        serde_json::json!({"pods": "3", "requests.cpu": "1"}),
        "{q}"
    );
    assert_eq!(q["spec"]["scopes"], serde_json::json!(["NotTerminating"]), "{q}");

    let err = create_fails(
        &c,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: bad\nspec:\n  hard:\n    pods: \"-1\"\n",
    )
    .await;
    assert!(
        err.contains(r#"The ResourceQuota "bad" is invalid: spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0"#),
        "{err}"
    );
    c.stop().await;
}

const LIMITS: &str = r#"apiVersion: v1
kind: LimitRange
metadata:
  name: limits
spec:
  limits:
  - type: Container
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m}
    min: {cpu: 50m}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_range_defaults_and_limits_containers() {
    let mut c = Cluster::start().await;
    apply(&c, LIMITS).await;
    let lr = c.json(&["get", "limits", "limits"]).await;
    // Defaulting: defaultRequest memory from default.
    assert_eq!(
        lr["spec"]["limits"][0]["defaultRequest"]["memory"], "256Mi",
        "{lr}"
    );
    let table = c.ok(&["get", "limitranges"]).await;
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "CREATED", "AT"], "{table}");
    assert!(table.lines().nth(1).unwrap().starts_with("limits "), "{table}");

    apply(&c, &pod("defaulted", None)).await;
    let p = c.json(&["get", "pod", "defaulted"]).await;
    let resources = &p["spec"]["containers"][0]["resources"];
    assert_eq!(resources["requests"]["cpu"], "100m", "{p}");
    assert_eq!(resources["requests"]["memory"], "256Mi", "{p}");
    assert_eq!(resources["limits"]["cpu"], "500m", "{p}");
    assert_eq!(
        p["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app"
    );
    assert_eq!(
        p["status"]["qosClass"], "Burstable",
        "QoS follows the defaults: {p}"
    );

    let err = create_fails(&c, &pod("tiny", Some("10m"))).await;
    assert!(
        err.contains(
            r#"pods "tiny" is forbidden: minimum cpu usage per Container is 50m, but request is 10m"#
        ),
        "{err}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_range_verbs_and_validation() {
    let mut c = Cluster::start().await;
    watch_while(&c, "limitranges", &["ADDED", "MODIFIED", "DELETED"], async || {
        apply(&c, LIMITS).await;
        c.ok(&[
            "patch",
            "limits",
            "limits",
            "--type=json",
            "-p",
            r#"[{"op":"replace","path":"/spec/limits/0/min/cpu","value":"20m"}]"#,
        ])
        .await;
        assert_eq!(
            c.json(&["get", "limits", "limits"]).await["spec"]["limits"][0]["min"]["cpu"],
            "20m"
        );
        let mut live = c.json(&["get", "limits", "limits"]).await;
        live["metadata"]["labels"] = serde_json::json!({"team": "a"});
        let r = with_file(&c, "replace", &live.to_string()).await;
        assert!(r.success, "{}", r.stderr);
        assert_eq!(
            c.json(&["get", "limitranges"]).await["items"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        c.ok(&["delete", "limitrange", "limits"]).await;
    })
    .await;
    let err = create_fails(
        &c,
        "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: bad\nspec:\n  limits:\n  - type: Container\n    min: {cpu: \"2\"}\n    max: {cpu: \"1\"}\n",
    )
    .await;
    assert!(
        err.contains(r#"The LimitRange "bad" is invalid: "#)
            && err.contains(
                r#"spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1"#
            ),
        "{err}"
    );
    c.stop().await;
}

const POD_TEMPLATE: &str = r#"apiVersion: v1
kind: PodTemplate
metadata:
  name: tpl
template:
  metadata:
    labels: {app: web, tier: front}
  spec:
    containers:
    - name: app
      image: nginx
    - name: side
      image: busybox
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_template_verbs_table_and_validation() {
    let mut c = Cluster::start().await;
    watch_while(
        &c,
        "podtemplates",
        &["ADDED", "MODIFIED", "DELETED"],
        async || {
            apply(&c, POD_TEMPLATE).await;
            let table = c.ok(&["get", "podtemplates"]).await;
            let lines: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
            assert_eq!(
                lines[0],
                ["NAME", "CONTAINERS", "IMAGES", "POD", "LABELS"],
                "{table}"
            );
            assert_eq!(
                lines[1],
                ["tpl", "app,side", "nginx,busybox", "app=web,tier=front"],
                "{table}"
            );
            let t = c.json(&["get", "podtemplate", "tpl"]).await;
            assert_eq!(
                t["template"]["spec"]["restartPolicy"], "Always",
                "pod defaults: {t}"
            );
            c.ok(&["label", "podtemplate", "tpl", "x=y"]).await;
            c.ok(&[
                "patch",
                "podtemplate",
                "tpl",
                "-p",
                r#"{"template":{"metadata":{"labels":{"tier":"back"}}}}"#,
            ])
            .await;
            let mut live = c.json(&["get", "podtemplate", "tpl"]).await;
            assert_eq!(live["template"]["metadata"]["labels"]["tier"], "back");
            live["template"]["spec"]["containers"][1]["image"] = Value::from("busybox:1.36");
            let r = with_file(&c, "replace", &live.to_string()).await;
            assert!(r.success, "{}", r.stderr);
            c.ok(&["delete", "podtemplate", "tpl"]).await;
        },
    )
    .await;
    let err = create_fails(
        &c,
        "apiVersion: v1\nkind: PodTemplate\nmetadata:\n  name: bad\ntemplate:\n  spec:\n    containers: []\n",
    )
    .await;
    assert!(
        err.contains(r#"The PodTemplate "bad" is invalid: template.spec.containers: Required value"#),
        "{err}"
    );
    c.stop().await;
}

const RC: &str = r#"apiVersion: v1
kind: ReplicationController
metadata:
  name: rc
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: legacy}
    spec:
      containers:
      - name: app
        image: nginx
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replication_controller_verbs_table_scale_and_validation() {
    let mut c = Cluster::start().await;
    watch_while(
        &c,
        "replicationcontrollers",
        &["ADDED", "MODIFIED", "DELETED"],
        async || {
            apply(&c, RC).await;
            let rc = c.json(&["get", "rc", "rc"]).await;
            assert_eq!(
                rc["spec"]["selector"],
                serde_json::json!({"app": "legacy"}),
                "{rc}"
            );
            assert_eq!(
                rc["metadata"]["labels"],
                serde_json::json!({"app": "legacy"}),
                "{rc}"
            );
            let table = c.ok(&["get", "rc", "-o", "wide"]).await;
            let lines: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
            assert_eq!(
                lines[0],
                [
                    "NAME",
                    "DESIRED",
                    "CURRENT",
                    "READY",
                    "AGE",
                    "CONTAINERS",
                    "IMAGES",
                    "SELECTOR"
                ],
                "{table}"
            );
            assert_eq!(
                [
                    lines[1][0],
                    lines[1][1],
                    lines[1][2],
                    lines[1][3],
                    lines[1][5],
                    lines[1][6],
                    lines[1][7]
                ],
                ["rc", "2", "0", "0", "app", "nginx", "app=legacy"],
                "{table}"
            );
            c.ok(&["scale", "rc", "rc", "--replicas=3"]).await;
            let rc = c.json(&["get", "rc", "rc"]).await;
            assert_eq!(rc["spec"]["replicas"], 3);
            assert_eq!(rc["metadata"]["generation"], 2);
            c.ok(&["patch", "rc", "rc", "-p", r#"{"spec":{"minReadySeconds":5}}"#])
                .await;
            let mut live = c.json(&["get", "rc", "rc"]).await;
            live["spec"]["replicas"] = Value::from(1);
            let r = with_file(&c, "replace", &live.to_string()).await;
            assert!(r.success, "{}", r.stderr);
            assert_eq!(c.json(&["get", "rc"]).await["items"][0]["spec"]["replicas"], 1);
            c.ok(&["delete", "rc", "rc"]).await;
        },
    )
    .await;
    let err = create_fails(
        &c,
        &RC.replace("replicas: 2", "replicas: 2\n  selector: {app: other}"),
    )
    .await;
    assert!(
        err.contains(r#"The ReplicationController "rc" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"legacy"}: `selector` does not match template `labels`"#),
        "{err}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_debug_adds_an_ephemeral_container_that_then_stays() {
    let mut c = Cluster::start().await;
    apply(&c, &pod("target", None)).await;
    c.ok(&["debug", "target", "--image=busybox", "--container=dbg"])
        .await;
    let p = c.json(&["get", "pod", "target"]).await;
    let ephemeral = &p["spec"]["ephemeralContainers"];
    assert_eq!(ephemeral[0]["name"], "dbg", "{p}");
    assert_eq!(ephemeral[0]["image"], "busybox", "{p}");
    assert_eq!(
        p["spec"]["containers"][0]["image"], "nginx",
        "the rest of the pod is untouched"
    );

    // GET of the subresource is the pod; a PUT that drops the container is refused.
    let raw = c
        .ok(&[
            "get",
            "--raw",
            "/api/v1/namespaces/default/pods/target/ephemeralcontainers",
        ])
        .await;
    let mut live: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(live["kind"], "Pod");
    live["spec"]["ephemeralContainers"] = serde_json::json!([]);
    let f = c.file("pod.json", &live.to_string());
    let err = c
        .fails(&[
            "replace",
            "--raw",
            "/api/v1/namespaces/default/pods/target/ephemeralcontainers",
            "-f",
            f.to_str().unwrap(),
        ])
        .await;
    assert!(
        err.contains(
            r#"spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed"#
        ),
        "{err}"
    );
    // Through the pod itself, ephemeral containers cannot be added.
    let err = create_fails(
        &c,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: early\nspec:\n  containers:\n  - {name: app, image: nginx}\n  ephemeralContainers:\n  - {name: dbg, image: busybox}\n",
    )
    .await;
    assert!(
        err.contains(r#"spec.ephemeralContainers: Forbidden: cannot be set on create"#),
        "{err}"
    );
    c.stop().await;
}
