//! What every namespace and every Service gets, end to end with the real
//! `kubectl`: the `default` ServiceAccount and the `kube-root-ca.crt`
//! ConfigMap (put back when deleted or edited), namespace lifecycle
//! admission (404 for a missing namespace, 403 with the NamespaceTerminating
//! cause in a terminating one, the immortal namespaces), and the Endpoints
//! and EndpointSlices of Services following their pods' readiness, named
//! target ports, `publishNotReadyAddresses` and deletion.
//!
//! Every wait is bounded in real time ([`PATIENCE`]).

use std::time::{Duration, Instant};

use e2e::{Cluster, Config, http};
use serde_json::{Value, json};
use store::Clock;

/// Simulated seconds per real second in the Endpoints tests.
const SCALE: f64 = 10.0;
/// The longest real-time wait for what the controllers write.
const PATIENCE: Duration = Duration::from_secs(30);
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Polls `kubectl get ... -o json` every 50 ms of real time until `done`
/// holds, for at most [`PATIENCE`]; returns the object and when it held.
async fn eventually(c: &Cluster, args: &[&str], done: impl Fn(&Value) -> bool) -> Value {
    let started = real_now();
    let mut last = Value::Null;
    while started.elapsed() < PATIENCE {
        let r = c.run(&[args, &["-o", "json"]].concat()).await;
        if r.success {
            last = serde_json::from_str(&r.stdout).unwrap_or(Value::Null);
            if done(&last) {
                return last;
            }
        }
        tick(c).await;
    }
    panic!("kubectl {args:?} never got there; last:\n{last:#}");
}

/// Now on the wall clock: the test measures a real server from outside
/// (the acceptance bound of a second is real time).
#[allow(clippy::disallowed_methods)] // measuring from outside the server: real time, not simulated
fn real_now() -> Instant {
    Instant::now()
}

/// Waits 50 ms of real time (on the server's clock, scaled back).
async fn tick(c: &Cluster) {
    let clock: &Clock = c.server().api().clock();
    clock.sleep(Duration::from_secs_f64(0.05 * clock.scale())).await;
}

/// `kubectl apply -f` of `yaml`.
async fn apply(c: &Cluster, yaml: &str) {
    let f = c.file("manifest.yaml", yaml);
    c.ok(&["apply", "-f", f.to_str().expect("utf-8 path")]).await;
}

// ---------------------------------------------------------------------------
// ServiceAccount and root CA

/// Whether the namespace has both objects, as an in-process read (fast
/// enough to time a second).
fn has_both(c: &Cluster, ns: &str) -> bool {
    let api = c.server().api();
    let sa = api.resource("", "v1", "serviceaccounts").unwrap();
    let cm = api.resource("", "v1", "configmaps").unwrap();
    api.get(&sa, Some(ns), "default").is_ok() && api.get(&cm, Some(ns), "kube-root-ca.crt").is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_namespace_gets_its_service_account_and_root_ca_within_a_second() {
    let mut c = Cluster::start().await;
    let ca = c.server().pki().expect("HTTPS has a CA").ca_cert.clone();
    c.ok(&["create", "namespace", "team"]).await;
    let created = real_now();
    while !has_both(&c, "team") {
        assert!(
            created.elapsed() < Duration::from_secs(1),
            "no default ServiceAccount and kube-root-ca.crt within a second"
        );
        tokio::task::yield_now().await;
    }
    let sa = c.ok(&["get", "serviceaccount", "-n", "team"]).await;
    assert!(sa.starts_with("NAME") && sa.contains("default"), "{sa}");
    let cm = c
        .json(&["get", "configmap", "kube-root-ca.crt", "-n", "team"])
        .await;
    assert_eq!(cm["data"], json!({"ca.crt": ca}));
    assert_eq!(
        cm["metadata"]["annotations"]["kubernetes.io/description"],
        DESCRIPTION
    );
    // The namespaces that existed at start have them too.
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        eventually(&c, &["get", "cm", "kube-root-ca.crt", "-n", ns], |cm| {
            cm["data"]["ca.crt"] == ca
        })
        .await;
        eventually(&c, &["get", "sa", "default", "-n", ns], |sa| {
            sa["metadata"]["name"] == "default"
        })
        .await;
    }

    // Deleted, both come back; edited, the ConfigMap is put right.
    let old_uid = c.json(&["get", "sa", "default", "-n", "team"]).await["metadata"]["uid"].clone();
    c.ok(&["delete", "sa", "default", "-n", "team"]).await;
    eventually(&c, &["get", "sa", "default", "-n", "team"], |sa| {
        sa["metadata"]["uid"] != old_uid
    })
    .await;
    c.ok(&["delete", "cm", "kube-root-ca.crt", "-n", "team"]).await;
    eventually(&c, &["get", "cm", "kube-root-ca.crt", "-n", "team"], |cm| {
        cm["data"]["ca.crt"] == ca
    })
    .await;
    let patch = r#"{"data":{"ca.crt":"forged","extra":"x"},"metadata":{"annotations":{"kubernetes.io/description":null}}}"#;
    c.ok(&[
        "patch",
        "cm",
        "kube-root-ca.crt",
        "-n",
        "team",
        "--type=merge",
        "-p",
        patch,
    ])
    .await;
    let fixed = eventually(&c, &["get", "cm", "kube-root-ca.crt", "-n", "team"], |cm| {
        cm["data"] == json!({"ca.crt": ca})
            && cm["metadata"]["annotations"]["kubernetes.io/description"] == DESCRIPTION
    })
    .await;
    assert_eq!(fixed["data"].as_object().unwrap().len(), 1, "{fixed:#}");
    c.stop().await;
}

// ---------------------------------------------------------------------------
// Namespace lifecycle admission

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_in_missing_or_terminating_namespaces_fail_as_upstream() {
    let mut c = Cluster::start().await;
    // `kubectl create configmap` words a failed create its own way; `apply`
    // prints the server's Status as it is.
    let err = c.fails(&["create", "configmap", "x", "-n", "nowhere"]).await;
    assert!(
        err.contains(r#"error: failed to create configmap: namespaces "nowhere" not found"#),
        "{err}"
    );
    let f = c.file(
        "x.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: nowhere\n",
    );
    let err = c.fails(&["apply", "-f", f.to_str().unwrap()]).await;
    assert!(
        err.contains(r#"Error from server (NotFound): error when creating"#)
            && err.contains(r#"namespaces "nowhere" not found"#),
        "{err}"
    );

    // A finalizer holds the namespace in Terminating while the test looks.
    c.ok(&["create", "namespace", "going"]).await;
    let held = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: going\n  finalizers: [example.com/hold]\n";
    apply(&c, held).await;
    c.ok(&["delete", "namespace", "going", "--wait=false"]).await;
    eventually(&c, &["get", "namespace", "going"], |ns| {
        ns["status"]["phase"] == "Terminating"
    })
    .await;
    let table = c.ok(&["get", "namespace", "going"]).await;
    assert!(table.contains("Terminating"), "{table}");

    let err = c.fails(&["create", "configmap", "late", "-n", "going"]).await;
    assert!(
        err.contains(r#"error: failed to create configmap: configmaps "late" is forbidden: unable to create new content in namespace going because it is being terminated"#),
        "{err}"
    );
    // The Status carries upstream's cause.
    let body = br#"{"apiVersion":"v1","kind":"Secret","metadata":{"generateName":"s-"}}"#;
    let r = http(
        c.server(),
        "POST",
        "/api/v1/namespaces/going/secrets",
        &[("Content-Type", "application/json")],
        body,
    )
    .await;
    assert_eq!(r.status, 403);
    let status = r.json();
    assert_eq!(
        status["message"],
        "secrets \"s-\" is forbidden: unable to create new content in namespace going because it is being terminated"
    );
    assert_eq!(
        status["details"],
        json!({"name": "s-", "group": "", "kind": "secrets", "causes": [{
            "reason": "NamespaceTerminating",
            "message": "namespace going is being terminated",
            "field": "metadata.namespace"}]})
    );
    // Neither the ServiceAccount controller nor the publisher writes there:
    // what the namespace held is being deleted, nothing comes back.
    c.ok(&[
        "patch",
        "cm",
        "held",
        "-n",
        "going",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ])
    .await;
    let gone = real_now();
    while c.run(&["get", "namespace", "going"]).await.success {
        assert!(gone.elapsed() < PATIENCE, "namespace going never went away");
        tick(&c).await;
    }

    for ns in ["default", "kube-system", "kube-public"] {
        let err = c.fails(&["delete", "namespace", ns]).await;
        assert!(
            err.contains(&format!(
                r#"Error from server (Forbidden): namespaces "{ns}" is forbidden: this namespace may not be deleted"#
            )),
            "{err}"
        );
    }
    c.stop().await;
}

// ---------------------------------------------------------------------------
// Endpoints and EndpointSlices

/// A cluster with nodes on accelerated time.
async fn scaled_cluster() -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        ..Config::ephemeral()
    })
    .await
}

/// A pod `name` labelled `app: <app>`, with `ports` (a YAML flow list of
/// container ports) and `annotations` (a YAML flow map).
fn pod(name: &str, app: &str, ports: &str, annotations: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{app: {app}}}\n  annotations: {annotations}\n\
         spec:\n  terminationGracePeriodSeconds: 5\n  containers:\n  - name: app\n    image: nginx:1.25\n    ports: {ports}\n---\n"
    )
}

/// The IP of a running pod.
async fn pod_ip(c: &Cluster, name: &str) -> String {
    let pod = eventually(c, &["get", "pod", name], |p| p["status"]["podIP"].is_string()).await;
    pod["status"]["podIP"].as_str().unwrap().to_string()
}

/// `(ip, ready)` of every endpoint in the service's slices, sorted.
fn slice_endpoints(slices: &Value) -> Vec<(String, bool)> {
    let mut all: Vec<(String, bool)> = slices["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .map(|e| {
            let ip = e["addresses"][0].as_str().unwrap_or("").to_string();
            (ip, e["conditions"]["ready"] == true)
        })
        .collect();
    all.sort();
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_and_slices_resolve_named_ports_and_readiness() {
    let mut c = scaled_cluster().await;
    let http_port = "[{name: http, containerPort: 8080}]";
    let mut manifest = String::from(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {tier: front}\nspec:\n  selector: {app: web}\n  ports:\n\
         \x20 - {name: http, port: 80, targetPort: http}\n  - {name: metrics, port: 9090, targetPort: 9090}\n---\n",
    );
    manifest += &pod("web-a", "web", http_port, "{}");
    // Without a port named http: only on the metrics port.
    manifest += &pod("web-b", "web", "[{name: other, containerPort: 7070}]", "{}");
    manifest += &pod("web-c", "web", http_port, r#"{sim.miniplane.dev/ready: "never"}"#);
    manifest += &pod("other", "other", http_port, "{}");
    apply(&c, &manifest).await;
    let (a, b, cc) = (
        pod_ip(&c, "web-a").await,
        pod_ip(&c, "web-b").await,
        pod_ip(&c, "web-c").await,
    );

    let ep = eventually(&c, &["get", "endpoints", "web"], |ep| {
        ep["subsets"]
            .as_array()
            .is_some_and(|s| s.len() == 2 && s.iter().all(|s| s["addresses"].is_array()))
            && ep["subsets"].to_string().matches("\"ip\"").count() == 5
    })
    .await;
    let address = |ip: &str, pod: &str| -> Value {
        json!({"ip": ip, "targetRef": {"kind": "Pod", "namespace": "default", "name": pod}})
    };
    // Compare without uids and nodeNames: those are checked once below.
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        for subset in v.as_array_mut().into_iter().flatten() {
            for key in ["addresses", "notReadyAddresses"] {
                for a in subset[key].as_array_mut().into_iter().flatten() {
                    assert!(
                        a["nodeName"]
                            .as_str()
                            .is_some_and(|n| n.starts_with("miniplane-worker-")),
                        "{a}"
                    );
                    assert!(a["targetRef"]["uid"].is_string(), "{a}");
                    a.as_object_mut().unwrap().remove("nodeName");
                    a["targetRef"].as_object_mut().unwrap().remove("uid");
                }
            }
        }
        v
    };
    let mut ready_both = vec![address(&a, "web-a"), address(&b, "web-b")];
    ready_both.sort_by_key(|v| v["ip"].as_str().unwrap().to_string());
    let mut want = vec![
        json!({"addresses": [address(&a, "web-a")], "notReadyAddresses": [address(&cc, "web-c")],
               "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}),
        json!({"addresses": ready_both, "notReadyAddresses": [address(&cc, "web-c")],
               "ports": [{"name": "metrics", "port": 9090, "protocol": "TCP"}]}),
    ];
    let mut got = strip(&ep["subsets"]).as_array().unwrap().clone();
    let port_name = |v: &Value| v["ports"][0]["name"].as_str().unwrap_or("").to_string();
    got.sort_by_key(port_name);
    want.sort_by_key(port_name);
    assert_eq!(got, want, "{ep:#}");
    assert_eq!(ep["metadata"]["labels"], json!({"tier": "front"}));
    assert!(ep["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"].is_string());
    let table = c.ok(&["get", "endpoints", "web"]).await;
    assert!(
        table.starts_with("NAME") && table.contains("ENDPOINTS") && table.contains(&format!("{a}:")),
        "{table}"
    );

    // Two slices: {http, metrics} for web-a and web-c, {metrics} for web-b.
    let selector = "kubernetes.io/service-name=web";
    let slices = eventually(&c, &["get", "endpointslices", "-l", selector], |s| {
        slice_endpoints(s).len() == 3 && s["items"].as_array().is_some_and(|i| i.len() == 2)
    })
    .await;
    let mut want_eps = vec![(a.clone(), true), (b.clone(), true), (cc.clone(), false)];
    want_eps.sort();
    assert_eq!(slice_endpoints(&slices), want_eps);
    let svc_uid = c.json(&["get", "svc", "web"]).await["metadata"]["uid"].clone();
    for slice in slices["items"].as_array().unwrap() {
        let name = slice["metadata"]["name"].as_str().unwrap();
        assert!(
            name.starts_with("web-") && name.len() == "web-".len() + 5,
            "{name}"
        );
        assert_eq!(slice["addressType"], "IPv4");
        assert_eq!(
            slice["metadata"]["labels"],
            json!({"tier": "front", "kubernetes.io/service-name": "web",
                   "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"})
        );
        let owner = &slice["metadata"]["ownerReferences"][0];
        assert_eq!(
            (
                &owner["kind"],
                &owner["name"],
                &owner["uid"],
                &owner["controller"]
            ),
            (&json!("Service"), &json!("web"), &svc_uid, &json!(true))
        );
        let ports = slice["ports"].as_array().unwrap();
        let ports: Vec<(&str, i64)> = ports
            .iter()
            .map(|p| (p["name"].as_str().unwrap(), p["port"].as_i64().unwrap()))
            .collect();
        let has_web_b = slice.to_string().contains("\"web-b\"");
        if has_web_b {
            assert_eq!(ports, [("metrics", 9090)]);
        } else {
            assert_eq!(ports, [("http", 8080), ("metrics", 9090)]);
        }
        for e in slice["endpoints"].as_array().unwrap() {
            let never_ready = e["targetRef"]["name"] == "web-c";
            assert_eq!(
                e["conditions"],
                json!({"ready": !never_ready, "serving": !never_ready, "terminating": false}),
                "{e}"
            );
            assert!(
                e["nodeName"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("miniplane-worker-")),
                "{e}"
            );
        }
    }
    let table = c.ok(&["get", "endpointslices", "-l", selector]).await;
    assert!(table.contains("ADDRESSTYPE") && table.contains("IPv4"), "{table}");

    // A pod deleted: gone from the Endpoints and the slices (the simulated
    // kubelet stops it at once, so it is never seen terminating; the
    // controller test covers `terminating`).
    c.ok(&["delete", "pod", "web-a", "--wait=false"]).await;
    eventually(&c, &["get", "endpoints", "web"], |ep| {
        !ep.to_string().contains("\"web-a\"")
    })
    .await;
    eventually(&c, &["get", "endpointslices", "-l", selector], |s| {
        !s.to_string().contains("\"web-a\"") && slice_endpoints(s).len() == 2
    })
    .await;

    // The Service deleted: its Endpoints go, and its slices with it.
    c.ok(&["delete", "service", "web"]).await;
    let gone = real_now();
    while c.run(&["get", "endpoints", "web"]).await.success {
        assert!(gone.elapsed() < PATIENCE, "the Endpoints outlived their Service");
        tick(&c).await;
    }
    eventually(&c, &["get", "endpointslices", "-l", selector], |s| {
        s["items"] == json!([])
    })
    .await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoints_follow_a_pod_becoming_ready_and_not_ready() {
    let mut c = scaled_cluster().await;
    let mut manifest = String::from(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: flip\nspec:\n  selector: {app: flip}\n  ports: [{port: 80, targetPort: 8080}]\n---\n",
    );
    // Runs 8 simulated seconds, exits 1, restarts after a back-off: ready,
    // then not ready, then ready again.
    manifest += &pod(
        "flip-0",
        "flip",
        "[{containerPort: 8080}]",
        r#"{sim.miniplane.dev/run-seconds: "8", sim.miniplane.dev/exit-code: "1"}"#,
    );
    apply(&c, &manifest).await;
    let ip = pod_ip(&c, "flip-0").await;
    let ready = |ep: &Value| ep["subsets"][0]["addresses"][0]["ip"] == ip.as_str();
    let not_ready = |ep: &Value| ep["subsets"][0]["notReadyAddresses"][0]["ip"] == ip.as_str();
    let selector = "kubernetes.io/service-name=flip";
    let slice_ready = |s: &Value, want: bool| slice_endpoints(s) == [(ip.clone(), want)];
    eventually(&c, &["get", "endpoints", "flip"], ready).await;
    eventually(&c, &["get", "endpointslices", "-l", selector], |s| {
        slice_ready(s, true)
    })
    .await;
    eventually(&c, &["get", "endpoints", "flip"], not_ready).await;
    eventually(&c, &["get", "endpointslices", "-l", selector], |s| {
        slice_ready(s, false)
    })
    .await;
    eventually(&c, &["get", "endpoints", "flip"], ready).await;
    eventually(&c, &["get", "endpointslices", "-l", selector], |s| {
        slice_ready(s, true)
    })
    .await;
    // The unnamed service port: the Endpoints port has no name, the slice's an empty one.
    let ep = c.json(&["get", "endpoints", "flip"]).await;
    assert_eq!(
        ep["subsets"][0]["ports"],
        json!([{"port": 8080, "protocol": "TCP"}])
    );
    let slices = c.json(&["get", "endpointslices", "-l", selector]).await;
    assert_eq!(
        slices["items"][0]["ports"],
        json!([{"name": "", "port": 8080, "protocol": "TCP"}])
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_not_ready_addresses_and_services_without_selectors() {
    let mut c = scaled_cluster().await;
    let mut manifest = String::from(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: peers\nspec:\n  clusterIP: None\n  publishNotReadyAddresses: true\n\
         \x20 selector: {app: peers}\n  ports: [{name: gossip, port: 7000}]\n---\n\
         apiVersion: v1\nkind: Service\nmetadata:\n  name: manual\nspec:\n  ports: [{port: 5432}]\n---\n\
         apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: manual\nsubsets:\n- addresses: [{ip: 192.0.2.10}]\n  ports: [{port: 5432}]\n---\n",
    );
    manifest += &pod(
        "peers-0",
        "peers",
        "[{containerPort: 7000}]",
        r#"{sim.miniplane.dev/ready: "never"}"#,
    );
    manifest += &pod("unready", "manual", "[{containerPort: 5432}]", "{}");
    apply(&c, &manifest).await;
    let ip = pod_ip(&c, "peers-0").await;

    // Never ready, yet published as a ready address.
    let ep = eventually(&c, &["get", "endpoints", "peers"], |ep| {
        ep["subsets"][0]["addresses"][0]["ip"] == ip.as_str()
    })
    .await;
    assert!(ep["subsets"][0].get("notReadyAddresses").is_none(), "{ep:#}");
    assert_eq!(
        ep["metadata"]["labels"],
        json!({"service.kubernetes.io/headless": ""})
    );
    let slices = eventually(
        &c,
        &["get", "endpointslices", "-l", "kubernetes.io/service-name=peers"],
        |s| slice_endpoints(s) == [(ip.clone(), true)],
    )
    .await;
    let e = &slices["items"][0]["endpoints"][0];
    assert_eq!(
        e["conditions"],
        json!({"ready": true, "serving": false, "terminating": false})
    );

    // A Service without a selector: its hand-made Endpoints stay as they
    // are, and it gets no slices from the controller.
    let pod_ip_of_unready = pod_ip(&c, "unready").await;
    let manual = c.json(&["get", "endpoints", "manual"]).await;
    assert_eq!(manual["subsets"][0]["addresses"], json!([{"ip": "192.0.2.10"}]));
    assert!(!manual.to_string().contains(&pod_ip_of_unready));
    let none = c
        .json(&["get", "endpointslices", "-l", "kubernetes.io/service-name=manual"])
        .await;
    assert_eq!(none["items"], json!([]));
    c.stop().await;
}
