//! The prometheus-operator definitions (ten large CRDs, 5 MB), applied
//! unmodified with `kubectl apply --server-side` as the project documents,
//! and an install bundle applied after them.

use e2e::{Cluster, Config};
use serde_json::Value;
use store::Clock;

use super::{established, headers, jsonpath, row, table, testdata, user_crd_names};

/// The manifest, as published.
const MANIFEST: &str = "manifests/prometheus-operator-crds.yaml";

/// The definitions in the manifest.
const DEFINITIONS: [&str; 10] = [
    "alertmanagerconfigs.monitoring.coreos.com",
    "alertmanagers.monitoring.coreos.com",
    "podmonitors.monitoring.coreos.com",
    "probes.monitoring.coreos.com",
    "prometheusagents.monitoring.coreos.com",
    "prometheuses.monitoring.coreos.com",
    "prometheusrules.monitoring.coreos.com",
    "scrapeconfigs.monitoring.coreos.com",
    "servicemonitors.monitoring.coreos.com",
    "thanosrulers.monitoring.coreos.com",
];

/// Applies the manifest server-side and waits for every definition.
async fn apply_definitions(c: &Cluster) {
    let out = c.ok(&["apply", "--server-side", "-f", &testdata(MANIFEST)]).await;
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    let want: Vec<String> = DEFINITIONS
        .iter()
        .map(|d| format!("customresourcedefinition.apiextensions.k8s.io/{d} serverside-applied"))
        .collect();
    assert_eq!(lines, want, "{out}");
    for name in DEFINITIONS {
        established(c, name).await;
    }
}

/// A document of `kind` (`monitoring.coreos.com/<version>`) named `name`.
fn object(version: &str, kind: &str, name: &str, spec: &str) -> String {
    format!(
        "apiVersion: monitoring.coreos.com/{version}\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{spec}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_operator_definitions_serve_their_kinds() {
    let mut c = Cluster::start().await;
    apply_definitions(&c).await;
    // Applied again: nothing to change.
    let out = c.ok(&["apply", "--server-side", "-f", &testdata(MANIFEST)]).await;
    assert_eq!(out.lines().count(), 10, "{out}");

    let out = c
        .ok(&["api-resources", "--api-group=monitoring.coreos.com", "-o", "wide"])
        .await;
    let rows = table(&out);
    assert_eq!(rows.len(), 10, "{out}");
    let prom = row(&rows, "prometheuses");
    assert_eq!(prom["SHORTNAMES"], "prom");
    assert_eq!(prom["KIND"], "Prometheus");
    assert_eq!(prom["CATEGORIES"], "prometheus-operator");
    // kubectl shows a resource in the first version of the group's list
    // (by Kubernetes version priority) that has it: v1beta1, not the stored v1alpha1.
    assert_eq!(
        row(&rows, "alertmanagerconfigs")["APIVERSION"],
        "monitoring.coreos.com/v1beta1"
    );

    // An object of each kind that its schema accepts.
    let out = c
        .ok(&["create", "-f", &testdata("crds/prometheus-operator-objects.yaml")])
        .await;
    let mut created: Vec<&str> = out.lines().collect();
    created.sort_unstable();
    assert_eq!(
        created,
        [
            "alertmanager.monitoring.coreos.com/main created",
            "alertmanagerconfig.monitoring.coreos.com/team-frontend created",
            "podmonitor.monitoring.coreos.com/web created",
            "probe.monitoring.coreos.com/website created",
            "prometheus.monitoring.coreos.com/main created",
            "prometheusagent.monitoring.coreos.com/agent created",
            "prometheusrule.monitoring.coreos.com/web-alerts created",
            "scrapeconfig.monitoring.coreos.com/static-targets created",
            "servicemonitor.monitoring.coreos.com/web created",
            "thanosruler.monitoring.coreos.com/ruler created",
        ],
        "{out}"
    );
    let out = c.ok(&["get", "prometheus-operator", "-o", "name"]).await;
    assert_eq!(out.lines().count(), 10, "the category lists all ten: {out}");
    // Defaults from the schema, and a value kept as written.
    let prom = c.json(&["get", "prometheus", "main"]).await;
    assert_eq!(prom["spec"]["shards"], 1, "defaulted: {:#}", prom["spec"]);
    assert_eq!(prom["spec"]["replicas"], 2);
    let rule = c.json(&["get", "promrule", "web-alerts"]).await;
    assert_eq!(rule["spec"]["groups"][0]["rules"][0]["for"], "5m");
    assert_eq!(rule["spec"]["groups"][0]["partial_response_strategy"], "WARN");

    // And one that it refuses, with the field path.
    let refusals = [
        (
            object("v1", "Prometheus", "bad", "  replicas: two"),
            r#"The Prometheus "bad" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
        ),
        (
            object("v1", "Alertmanager", "bad", "  logLevel: verbose"),
            r#"The Alertmanager "bad" is invalid: spec.logLevel: Unsupported value: "verbose": supported values: "", "debug", "info", "warn", "error""#,
        ),
        (
            object(
                "v1",
                "ServiceMonitor",
                "bad",
                "  selector: {}\n  endpoints:\n  - port: web\n    scheme: ftp",
            ),
            r#"The ServiceMonitor "bad" is invalid: spec.endpoints[0].scheme: Unsupported value: "ftp": supported values: "http", "https", "HTTP", "HTTPS""#,
        ),
        (
            object("v1", "PodMonitor", "bad", "  podMetricsEndpoints:\n  - port: web"),
            r#"The PodMonitor "bad" is invalid: spec.selector: Required value"#,
        ),
        (
            object("v1", "Probe", "bad", "  prober:\n    path: /probe"),
            r#"The Probe "bad" is invalid: spec.prober.url: Required value"#,
        ),
        (
            object(
                "v1",
                "PrometheusRule",
                "bad",
                "  groups:\n  - name: g\n    rules:\n    - alert: A\n      expr: up == 0\n      for: 5 minutes",
            ),
            r#"The PrometheusRule "bad" is invalid: spec.groups[0].rules[0].for: Invalid value: "5 minutes": spec.groups[0].rules[0].for in body should match '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'"#,
        ),
        (
            object("v1", "ThanosRuler", "bad", "  dnsPolicy: Sometimes"),
            r#"The ThanosRuler "bad" is invalid: spec.dnsPolicy: Unsupported value: "Sometimes": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None""#,
        ),
        (
            object(
                "v1alpha1",
                "AlertmanagerConfig",
                "bad",
                "  receivers:\n  - name: \"\"",
            ),
            r#"The AlertmanagerConfig "bad" is invalid: spec.receivers[0].name: Invalid value: "": spec.receivers[0].name in body should be at least 1 chars long"#,
        ),
        (
            object(
                "v1alpha1",
                "PrometheusAgent",
                "bad",
                "  mode: DaemonSet\n  replicas: 2",
            ),
            r#"The PrometheusAgent "bad" is invalid: spec: Invalid value: "object": replicas cannot be set when mode is DaemonSet"#,
        ),
        (
            object(
                "v1alpha1",
                "ScrapeConfig",
                "bad",
                "  scheme: ftp\n  staticConfigs:\n  - targets: [a:1]",
            ),
            r#"The ScrapeConfig "bad" is invalid: spec.scheme: Unsupported value: "ftp": supported values: "http", "https", "HTTP", "HTTPS""#,
        ),
    ];
    for (doc, want) in &refusals {
        let err = c.create_fails(doc).await;
        assert!(err.contains(want), "{doc}\nwant: {want}\ngot: {err}");
    }
    // The object itself is required.
    let err = c
        .create_fails("apiVersion: monitoring.coreos.com/v1\nkind: Probe\nmetadata:\n  name: nospec\n")
        .await;
    assert!(
        err.contains(r#"The Probe "nospec" is invalid: spec: Required value"#),
        "{err}"
    );

    // Printer columns, with a status the operator would write.
    c.ok(&[
        "patch",
        "prometheus",
        "main",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"availableReplicas":2,"paused":false,"replicas":2,"unavailableReplicas":0,"updatedReplicas":2,"conditions":[{"type":"Available","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"},{"type":"Reconciled","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}"#,
    ])
    .await;
    let out = c.ok(&["get", "prometheuses"]).await;
    assert_eq!(
        headers(&out),
        [
            "NAME",
            "VERSION",
            "DESIRED",
            "READY",
            "RECONCILED",
            "AVAILABLE",
            "AGE"
        ],
        "{out}"
    );
    let main = row(&table(&out), "main").clone();
    assert_eq!(main["VERSION"], "v3.5.0", "{out}");
    assert_eq!(main["DESIRED"], "2");
    assert_eq!(main["READY"], "2");
    assert_eq!(main["RECONCILED"], "True");
    assert_eq!(main["AVAILABLE"], "True");
    let out = c.ok(&["get", "prom", "-o", "wide"]).await;
    assert_eq!(headers(&out).last().map(String::as_str), Some("PAUSED"), "{out}");
    assert_eq!(row(&table(&out), "main")["PAUSED"], "false");
    let out = c.ok(&["get", "alertmanagers"]).await;
    assert_eq!(
        headers(&out),
        [
            "NAME",
            "VERSION",
            "REPLICAS",
            "READY",
            "RECONCILED",
            "AVAILABLE",
            "AGE"
        ],
        "{out}"
    );
    assert_eq!(row(&table(&out), "main")["REPLICAS"], "3", "{out}");
    let out = c.ok(&["get", "servicemonitors"]).await;
    assert_eq!(headers(&out), ["NAME", "AGE"], "{out}");

    // kubectl scale follows the scale subresource: Prometheus scales shards.
    let out = c.ok(&["scale", "prometheus/main", "--replicas=3"]).await;
    assert_eq!(out.trim(), "prometheus.monitoring.coreos.com/main scaled");
    let prom = c.json(&["get", "prometheus", "main"]).await;
    assert_eq!(prom["spec"]["shards"], 3);
    assert_eq!(prom["spec"]["replicas"], 2);

    // kubectl explain reads the schema's descriptions.
    let out = c.ok(&["explain", "prometheus.spec.replicas"]).await;
    assert!(out.contains("FIELD: replicas <integer>"), "{out}");
    assert!(
        out.contains("replicas defines the number of replicas of each shard to deploy for a"),
        "{out}"
    );
    let out = c.ok(&["explain", "servicemonitor.spec.endpoints.scheme"]).await;
    assert!(out.contains("FIELD: scheme <string>"), "{out}");

    // The alpha definition's second version serves the same object.
    let v1beta1 = c
        .json(&[
            "get",
            "alertmanagerconfigs.v1beta1.monitoring.coreos.com",
            "team-frontend",
        ])
        .await;
    assert_eq!(v1beta1["apiVersion"], "monitoring.coreos.com/v1beta1");

    // Deleting the definitions removes every object (kubectl waits for the
    // definitions to go), then the resources leave discovery.
    c.ok(&["delete", "-f", &testdata(MANIFEST)]).await;
    assert_eq!(
        user_crd_names(&c.json(&["get", "crd"]).await),
        Vec::<String>::new(),
        "only the built-in definitions are left"
    );
    let gone = tokio::time::timeout(e2e::PATIENCE, async {
        loop {
            let out = c
                .ok(&[
                    "api-resources",
                    "--api-group=monitoring.coreos.com",
                    "--no-headers",
                ])
                .await;
            if out.trim().is_empty() {
                return;
            }
            c.sleep_real(std::time::Duration::from_millis(200)).await;
        }
    })
    .await;
    let left = c
        .run(&["api-resources", "--api-group=monitoring.coreos.com"])
        .await;
    assert!(
        gone.is_ok(),
        "still served a minute after the definitions went:\n{}",
        left.stdout
    );
    c.stop().await;
}

/// Simulated seconds per real second: kube-state-metrics' probes wait 5
/// simulated seconds.
const SCALE: f64 = 10.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_install_bundle_after_the_prometheus_definitions_rolls_out_and_is_monitored() {
    let mut c = Cluster::start_with(Config {
        clock: Clock::scaled(SCALE),
        ..Config::ephemeral()
    })
    .await;
    // Definitions first, as prometheus-operator documents.
    apply_definitions(&c).await;
    let bundle = testdata("manifests/kube-state-metrics.yaml");
    let out = c.ok(&["apply", "--server-side", "-f", &bundle]).await;
    assert!(
        out.contains("deployment.apps/kube-state-metrics serverside-applied"),
        "{out}"
    );
    let listed: Value = c.json(&["get", "-f", &bundle]).await;
    for item in listed["items"].as_array().unwrap() {
        if item["kind"] == "Deployment" {
            let meta = &item["metadata"];
            let out = c
                .ok(&[
                    "rollout",
                    "status",
                    &format!("deployment/{}", meta["name"].as_str().unwrap()),
                    "-n",
                    meta["namespace"].as_str().unwrap(),
                    "--timeout=90s",
                ])
                .await;
            assert!(out.contains("successfully rolled out"), "{out}");
        }
    }
    // A ServiceMonitor for it, as its users add one.
    let monitor = "apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: kube-state-metrics
  namespace: kube-system
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: kube-state-metrics
  endpoints:
  - port: http-metrics
    interval: 30s
  - port: telemetry
";
    let r = c.run_with_yaml(&["apply", "--server-side"], monitor).await;
    if !r.success {
        let served = c
            .run(&["api-resources", "--api-group=monitoring.coreos.com"])
            .await;
        let crds = c.run(&["get", "crd", "-o", "wide"]).await;
        panic!(
            "{}\nserved now:\n{}\ndefinitions:\n{}",
            r.stderr, served.stdout, crds.stdout
        );
    }
    assert_eq!(
        r.stdout.trim(),
        "servicemonitor.monitoring.coreos.com/kube-state-metrics serverside-applied"
    );
    let ports = jsonpath(
        &c,
        &["get", "smon", "kube-state-metrics", "-n", "kube-system"],
        "{.spec.endpoints[*].port}",
    )
    .await;
    assert_eq!(ports, "http-metrics telemetry");
    c.stop().await;
}
