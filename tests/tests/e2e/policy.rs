//! Networking and policy end to end, through the real kubectl: Ingress,
//! IngressClass, NetworkPolicy and PodDisruptionBudget (tables, defaults,
//! validation, every verb), a budget's status following its pods, the
//! `pods/eviction` subresource over raw HTTP (201, upstream's 429 and 500),
//! and `kubectl drain` waiting on a budget while replacements become ready
//! on another node.

use std::time::Duration;

use e2e::{Cluster, Config, http};
use miniplane::cluster::SimConfig;
use serde_json::{Value, json};
use store::Clock;

/// Simulated seconds per real second in the tests with pods.
const SCALE: f64 = 20.0;
/// Real-time bound of every poll.
const WAIT: Duration = Duration::from_secs(60);

const NETWORKING: &str = r#"apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
spec:
  controller: k8s.io/ingress-nginx
  parameters:
    apiGroup: k8s.example.com
    kind: IngressParameters
    name: external-lb
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  ingressClassName: nginx
  tls:
  - hosts: [foo.example.com]
    secretName: foo-tls
  rules:
  - host: foo.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port:
              number: 80
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
spec:
  podSelector:
    matchLabels:
      app: web
  ingress:
  - from:
    - podSelector:
        matchLabels:
          role: frontend
    ports:
    - port: 80
"#;

/// A cluster of `nodes` nodes on accelerated time.
async fn sim_cluster(nodes: usize) -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        sim: Some(SimConfig {
            nodes,
            ..SimConfig::default()
        }),
        ..Config::ephemeral()
    })
    .await
}

/// `kubectl apply -f` of `yaml`.
async fn apply(c: &Cluster, yaml: &str) -> String {
    let file = c.file("manifest.yaml", yaml);
    c.ok(&["apply", "-f", file.to_str().expect("utf-8 path")]).await
}

/// `kubectl create -f` of `yaml`, expected to fail: its stderr.
async fn create_fails(c: &Cluster, yaml: &str) -> String {
    c.create_fails(yaml).await
}

/// The words of the first line (the table header) of `kubectl get` output.
fn header(out: &str) -> String {
    out.lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The line of the table that starts with `name`.
fn row<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{out}"))
}

/// Polls `kubectl get <args> -o json` until `check` holds (for [`WAIT`] of
/// real time; the pause between polls is on the cluster's clock).
async fn wait_json(c: &Cluster, args: &[&str], what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    let polled = tokio::time::timeout(WAIT, async {
        loop {
            last = c.json(args).await;
            if check(&last) {
                return last.clone();
            }
            c.server().api().clock().sleep(Duration::from_secs(2)).await;
        }
    })
    .await;
    polled.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// Runs `kubectl get <plural> --watch --output-watch-events` while `act`
/// runs, and returns once every needle was printed, in order.
async fn watch_sees(c: &Cluster, plural: &str, needles: &[&str], act: impl AsyncFnOnce()) {
    c.watch_while(&[plural], &[], needles, act).await;
}

// ---------------------------------------------------------------------------
// networking.k8s.io/v1

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_classes_ingresses_and_network_policies_through_kubectl() {
    let mut c = Cluster::start().await;
    let out = apply(&c, NETWORKING).await;
    assert!(
        out.contains("ingressclass.networking.k8s.io/nginx created"),
        "{out}"
    );
    assert!(out.contains("ingress.networking.k8s.io/web created"), "{out}");
    assert!(
        out.contains("networkpolicy.networking.k8s.io/web created"),
        "{out}"
    );

    // Tables, as upstream prints them.
    let out = c.ok(&["get", "ingressclass"]).await;
    assert_eq!(header(&out), "NAME CONTROLLER PARAMETERS AGE");
    assert!(
        row(&out, "nginx").contains("k8s.io/ingress-nginx   IngressParameters.k8s.example.com/external-lb"),
        "{out}"
    );
    let out = c.ok(&["get", "ingress"]).await;
    assert_eq!(header(&out), "NAME CLASS HOSTS ADDRESS PORTS AGE");
    let web = row(&out, "web");
    assert!(
        web.contains("nginx") && web.contains("foo.example.com") && web.contains("80, 443"),
        "{out}"
    );
    let out = c.ok(&["get", "netpol"]).await;
    assert_eq!(header(&out), "NAME POD-SELECTOR AGE");
    assert!(row(&out, "web").contains("app=web"), "{out}");

    // The list, with upstream's defaults and a fresh Ingress status.
    let list = c.json(&["get", "ingressclass,ingress,networkpolicy"]).await;
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{list:#}");
    let class = &items[0];
    assert_eq!(class["spec"]["parameters"]["scope"], "Cluster");
    let ingress = &items[1];
    assert_eq!(ingress["status"], json!({"loadBalancer": {}}));
    assert_eq!(ingress["metadata"]["generation"], 1);
    let policy = &items[2];
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress"]));
    assert_eq!(policy["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");

    // Patches: a spec change bumps the generation; the status is written
    // through its subresource only, and shows in the table.
    c.ok(&[
        "patch",
        "ingress",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/rules/0/host","value":"bar.example.com"}]"#,
    ])
    .await;
    c.ok(&[
        "patch",
        "ingress",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.5"}]}}}"#,
    ])
    .await;
    let ingress = c.json(&["get", "ingress", "web"]).await;
    assert_eq!(ingress["metadata"]["generation"], 2);
    assert_eq!(ingress["spec"]["rules"][0]["host"], "bar.example.com");
    let out = c.ok(&["get", "ingress", "web"]).await;
    assert!(row(&out, "web").contains("10.0.0.5"), "{out}");
    // Strategic merge: policyTypes is atomic, replaced as a whole.
    c.ok(&[
        "patch",
        "netpol",
        "web",
        "-p",
        r#"{"spec":{"policyTypes":["Egress"]}}"#,
    ])
    .await;
    let policy = c.json(&["get", "netpol", "web"]).await;
    assert_eq!(policy["spec"]["policyTypes"], json!(["Egress"]));
    assert_eq!(policy["metadata"]["generation"], 2);

    // Upstream's validation, with its field paths.
    let err = create_fails(
        &c,
        r#"apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad}
spec:
  rules:
  - http:
      paths:
      - path: /
        backend: {service: {name: web, port: {number: 80}}}
"#,
    )
    .await;
    assert!(err.contains(r#"The Ingress "bad" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"#), "{err}");
    let err = c
        .fails(&[
            "patch",
            "ingressclass",
            "nginx",
            "--type=merge",
            "-p",
            r#"{"spec":{"controller":"example.com/other"}}"#,
        ])
        .await;
    assert!(
        err.contains(r#"spec.controller: Invalid value: "example.com/other": field is immutable"#),
        "{err}"
    );
    let err = create_fails(
        &c,
        r#"apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: bad}
spec:
  podSelector: {}
  ingress:
  - ports:
    - {port: 8080, endPort: 80}
"#,
    )
    .await;
    assert!(
        err.contains(
            "spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`"
        ),
        "{err}"
    );

    // Update: `kubectl replace` of each object as read (its resourceVersion a precondition).
    for (kind, name) in [("ingress", "web"), ("ingressclass", "nginx"), ("netpol", "web")] {
        let mut obj = c.json(&["get", kind, name]).await;
        obj["metadata"]["labels"] = json!({"replaced": "yes"});
        let file = c.file("replace.json", &obj.to_string());
        c.ok(&["replace", "-f", file.to_str().unwrap()]).await;
        let out = c.ok(&["get", kind, "-l", "replaced=yes", "-o", "name"]).await;
        assert!(out.contains(&format!("/{name}")), "{kind}: {out}");
    }
    for (kind, name) in [("ingress", "web"), ("ingressclass", "nginx"), ("netpol", "web")] {
        c.ok(&["delete", kind, name]).await;
        let err = c.fails(&["get", kind, name]).await;
        assert!(err.contains("NotFound"), "{err}");
    }
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_is_watched_through_kubectl() {
    let mut c = Cluster::start().await;
    let events = ["ADDED", "MODIFIED", "DELETED"];
    watch_sees(&c, "ingressclasses", &events, async || {
        c.ok(&[
            "create",
            "-f",
            c.file("ic.yaml", NETWORKING.split("---").next().unwrap())
                .to_str()
                .unwrap(),
        ])
        .await;
        c.ok(&["label", "ingressclass", "nginx", "team=a"]).await;
        c.ok(&["delete", "ingressclass", "nginx"]).await;
    })
    .await;
    watch_sees(&c, "ingresses", &events, async || {
        apply(&c, NETWORKING.split("---").nth(1).unwrap()).await;
        c.ok(&["label", "ingress", "web", "team=a"]).await;
        c.ok(&["delete", "ingress", "web"]).await;
    })
    .await;
    watch_sees(&c, "networkpolicies", &events, async || {
        apply(&c, NETWORKING.split("---").nth(2).unwrap()).await;
        c.ok(&["label", "netpol", "web", "team=a"]).await;
        c.ok(&["delete", "netpol", "web"]).await;
    })
    .await;
    watch_sees(&c, "poddisruptionbudgets", &events, async || {
        apply(&c, PDB).await;
        c.ok(&["label", "pdb", "web", "team=a"]).await;
        c.ok(&["delete", "pdb", "web"]).await;
    })
    .await;
    c.stop().await;
}

// ---------------------------------------------------------------------------
// policy/v1

/// A Deployment `web` of `replicas` pods labelled `app: web`.
fn deployment(replicas: u32) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: nginx
        image: nginx:1.25
"#
    )
}

const PDB: &str = r#"apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 2
  selector:
    matchLabels: {app: web}
"#;

/// Waits until the budget `web` reports `allowed` disruptions with all
/// `healthy` pods counted.
async fn wait_budget(c: &Cluster, healthy: i64, allowed: i64) -> Value {
    wait_json(c, &["get", "pdb", "web"], "the budget's status", |p| {
        p["status"]["currentHealthy"] == healthy && p["status"]["disruptionsAllowed"] == allowed
    })
    .await
}

/// The names of the Deployment's live pods.
async fn web_pods(c: &Cluster) -> Vec<(String, String)> {
    let pods = c.json(&["get", "pods", "-l", "app=web"]).await;
    pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .map(|p| {
            let name = p["metadata"]["name"].as_str().unwrap().to_string();
            let node = p["spec"]["nodeName"].as_str().unwrap_or("").to_string();
            (name, node)
        })
        .collect()
}

/// POSTs a policy/v1 Eviction of `pod` in `default`.
async fn evict(c: &Cluster, pod: &str) -> e2e::HttpResponse {
    let body = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": pod, "namespace": "default"}});
    let path = format!("/api/v1/namespaces/default/pods/{pod}/eviction");
    let headers = [("Content-Type", "application/json")];
    http(c.server(), "POST", &path, &headers, body.to_string().as_bytes()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_follows_its_pods_and_evictions_honour_it() {
    let mut c = sim_cluster(3).await;
    apply(&c, &deployment(3)).await;
    apply(&c, PDB).await;

    // The status follows the pods: three ready, two needed, one to spare.
    let pdb = wait_budget(&c, 3, 1).await;
    assert_eq!(pdb["status"]["desiredHealthy"], 2);
    assert_eq!(pdb["status"]["expectedPods"], 3);
    assert_eq!(pdb["status"]["observedGeneration"], 1);
    let cond = &pdb["status"]["conditions"][0];
    assert_eq!(
        (
            cond["type"].as_str(),
            cond["status"].as_str(),
            cond["reason"].as_str()
        ),
        (Some("DisruptionAllowed"), Some("True"), Some("SufficientPods"))
    );
    let out = c.ok(&["get", "pdb"]).await;
    assert_eq!(
        header(&out),
        "NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE"
    );
    let cells: Vec<&str> = row(&out, "web").split_whitespace().collect();
    assert_eq!(cells[..4], ["web", "2", "N/A", "1"], "{out}");

    // Validation, with upstream's field paths.
    let err = create_fails(
        &c,
        &PDB.replace("name: web", "name: both")
            .replace("minAvailable: 2", "minAvailable: 2\n  maxUnavailable: 1"),
    )
    .await;
    assert!(
        err.contains(r#"The PodDisruptionBudget "both" is invalid: spec: Invalid value: "#),
        "{err}"
    );
    assert!(
        err.contains("minAvailable and maxUnavailable cannot be both set"),
        "{err}"
    );
    let err = create_fails(
        &c,
        &PDB.replace("name: web", "name: neg")
            .replace("minAvailable: 2", "minAvailable: -1"),
    )
    .await;
    assert!(
        err.contains("spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"),
        "{err}"
    );

    // A pod under two budgets: upstream's 500, and nothing is deleted.
    apply(&c, &PDB.replace("name: web", "name: other")).await;
    let pods = web_pods(&c).await;
    let r = evict(&c, &pods[0].0).await;
    assert_eq!(r.status, 500, "{:?}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.json()["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    c.ok(&["delete", "pdb", "other"]).await;

    // The first eviction spends the one disruption; the second is refused.
    let r = evict(&c, &pods[0].0).await;
    assert_eq!(r.status, 201, "{:?}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["status"], "Success");
    let r = evict(&c, &pods[1].0).await;
    assert_eq!(r.status, 429, "{:?}", String::from_utf8_lossy(&r.body));
    let status = r.json();
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(
        status["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    let cause = &status["details"]["causes"][0];
    assert_eq!(cause["reason"], "DisruptionBudget");
    let text = cause["message"].as_str().unwrap();
    assert!(
        text.starts_with("The disruption budget web needs 2 healthy pods and has "),
        "{text}"
    );
    let pdb = c.json(&["get", "pdb", "web"]).await;
    assert!(
        pdb["status"]["disruptedPods"][&pods[0].0].is_string() || pdb["status"]["disruptedPods"].is_null(),
        "{pdb:#}"
    );

    // The replacement becomes ready: one disruption to spare again.
    wait_budget(&c, 3, 1).await;
    let r = evict(&c, &pods[1].0).await;
    assert_eq!(r.status, 201, "{:?}", String::from_utf8_lossy(&r.body));

    // A spec change bumps the generation, and the controller observes it.
    c.ok(&[
        "patch",
        "pdb",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"minAvailable":"100%"}}"#,
    ])
    .await;
    let pdb = wait_json(&c, &["get", "pdb", "web"], "generation 2 observed", |p| {
        p["status"]["observedGeneration"] == 2 && p["status"]["desiredHealthy"] == 3
    })
    .await;
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    // Update: `kubectl replace` keeps the status (only /status writes it).
    // Without a resourceVersion: the controller may write the status meanwhile.
    let mut obj = pdb.clone();
    obj["metadata"].as_object_mut().unwrap().remove("resourceVersion");
    obj["spec"]["minAvailable"] = json!(1);
    obj["status"]["disruptionsAllowed"] = json!(99);
    let file = c.file("pdb.json", &obj.to_string());
    c.ok(&["replace", "-f", file.to_str().unwrap()]).await;
    let pdb = wait_json(&c, &["get", "pdb", "web"], "generation 3 observed", |p| {
        p["status"]["observedGeneration"] == 3
    })
    .await;
    assert_eq!(pdb["status"]["desiredHealthy"], 1);
    assert_ne!(pdb["status"]["disruptionsAllowed"], 99);
    c.ok(&["delete", "pdb", "web"]).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_drain_waits_for_the_budget_and_proceeds_as_replacements_become_ready() {
    let mut c = sim_cluster(2).await;
    // Every pod on worker-1: worker-2 is cordoned while they are scheduled.
    c.ok(&["cordon", "miniplane-worker-2"]).await;
    apply(&c, &deployment(3)).await;
    apply(&c, PDB).await;
    wait_budget(&c, 3, 1).await;
    let pods = web_pods(&c).await;
    assert!(
        pods.iter().all(|(_, node)| node == "miniplane-worker-1"),
        "{pods:?}"
    );
    c.ok(&["uncordon", "miniplane-worker-2"]).await;

    let r = c
        .run(&[
            "drain",
            "miniplane-worker-1",
            "--ignore-daemonsets",
            "--timeout=120s",
        ])
        .await;
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(r.success, "drain failed:\n{all}");
    assert!(all.contains("node/miniplane-worker-1 cordoned"), "{all}");
    // Only one disruption at a time: the later evictions waited.
    assert!(
        all.contains(
            "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."
        ),
        "{all}"
    );
    for (pod, _) in &pods {
        assert!(all.contains(&format!("pod/{pod} evicted")), "{pod}: {all}");
    }
    assert!(all.contains("node/miniplane-worker-1 drained"), "{all}");

    let node = c.json(&["get", "node", "miniplane-worker-1"]).await;
    assert_eq!(node["spec"]["unschedulable"], true);
    let pdb = wait_budget(&c, 3, 1).await;
    assert_eq!(pdb["status"]["expectedPods"], 3);
    let pods = web_pods(&c).await;
    assert_eq!(pods.len(), 3);
    assert!(
        pods.iter().all(|(_, node)| node == "miniplane-worker-2"),
        "{pods:?}"
    );
    c.stop().await;
}
