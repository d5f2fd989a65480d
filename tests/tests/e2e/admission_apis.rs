//! admissionregistration.k8s.io, apiregistration.k8s.io and the two views
//! of HorizontalPodAutoscaler, end to end with the real `kubectl`.
//!
//! Each kind goes through create / get (its table) / list / watch / update
//! / patch / delete and shows one upstream validation error with its field
//! path; `kubectl get apiservices` and `kubectl api-versions` read as a real
//! cluster's; an HPA written in one version reads back in the other. Every
//! wait is bounded.

use e2e::Cluster;
use serde_json::Value;

/// The ingress-nginx manifest for kind, as published (tests/testdata/manifests).
const INGRESS_NGINX: &str = include_str!("../../testdata/manifests/ingress-nginx-kind.yaml");

/// Writes `yaml` to a file and runs `kubectl <args> -f <file>`.
async fn with_file(c: &Cluster, args: &[&str], yaml: &str) -> e2e::Run {
    c.run_with_yaml(args, yaml).await
}

/// `kubectl <args> -f` of `yaml`, which must succeed; returns stdout.
async fn ok_with(c: &Cluster, args: &[&str], yaml: &str) -> String {
    let r = with_file(c, args, yaml).await;
    assert!(r.success, "kubectl {args:?} failed: {}\n{yaml}", r.stderr);
    r.stdout
}

/// `kubectl create -f` of `yaml`, which must fail; returns stderr.
async fn create_fails(c: &Cluster, yaml: &str) -> String {
    c.create_fails(yaml).await
}

/// Runs `kubectl get <what> --watch --output-watch-events`; once a line
/// containing each of `ready` has been printed, runs `act`, then returns the
/// lines up to the one that contains each needle.
async fn watch_while(
    c: &Cluster,
    what: &[&str],
    ready: &[&str],
    needles: &[&str],
    act: impl AsyncFnOnce(),
) -> Vec<String> {
    c.watch_while(what, ready, needles, act).await
}

/// The cells of the table row of `name` in `kubectl get` output.
fn row<'a>(table: &'a str, name: &str) -> Vec<&'a str> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{table}"))
        .split("  ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The header cells of `kubectl get` output.
fn header(table: &str) -> Vec<&str> {
    table.lines().next().unwrap_or("").split_whitespace().collect()
}

/// The YAML document of `kind` in a multi-document manifest.
fn document<'a>(manifest: &'a str, kind: &str) -> &'a str {
    manifest
        .split("\n---")
        .find(|d| d.lines().any(|l| l == format!("kind: {kind}")))
        .unwrap_or_else(|| panic!("no {kind} in the manifest"))
}

// ---------------------------------------------------------------------------
// admissionregistration.k8s.io

const MUTATING: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: injector
webhooks:
- name: inject.example.com
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1, v1beta1]
  clientConfig:
    url: https://injector.example.com/mutate
  rules:
  - operations: [CREATE]
    apiGroups: [""]
    apiVersions: [v1]
    resources: [pods]
- name: label.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: labeler, namespace: default}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingress_nginx_webhook_applies_server_side_with_upstream_defaults() {
    let mut c = Cluster::start().await;
    let vwc = document(INGRESS_NGINX, "ValidatingWebhookConfiguration");
    ok_with(&c, &["apply", "--server-side"], vwc).await;
    // Applying the same manifest again changes nothing.
    let out = ok_with(&c, &["apply", "--server-side"], vwc).await;
    assert!(out.contains("serverside-applied"), "{out}");

    let table = c.ok(&["get", "validatingwebhookconfigurations"]).await;
    assert_eq!(header(&table), ["NAME", "WEBHOOKS", "AGE"]);
    assert_eq!(row(&table, "ingress-nginx-admission")[1], "1");

    let o = c
        .json(&[
            "get",
            "validatingwebhookconfiguration",
            "ingress-nginx-admission",
            "--show-managed-fields",
        ])
        .await;
    let hook = &o["webhooks"][0];
    assert_eq!(hook["timeoutSeconds"], 10);
    assert_eq!(hook["namespaceSelector"], serde_json::json!({}));
    assert_eq!(hook["objectSelector"], serde_json::json!({}));
    assert_eq!(hook["rules"][0]["scope"], "*");
    assert_eq!(hook["clientConfig"]["service"]["port"], 443);
    assert_eq!(o["metadata"]["generation"], 1);
    assert_eq!(o["metadata"]["managedFields"][0]["operation"], "Apply");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_configurations_go_through_every_verb() {
    let mut c = Cluster::start().await;
    let seen = watch_while(
        &c,
        &["mutatingwebhookconfigurations"],
        &[],
        &["ADDED", "MODIFIED", "DELETED"],
        async || {
            ok_with(&c, &["create"], MUTATING).await;
            let list = c.ok(&["get", "mutatingwebhookconfigurations"]).await;
            assert_eq!(header(&list), ["NAME", "WEBHOOKS", "AGE"]);
            assert_eq!(row(&list, "injector")[1], "2");
            let o = c.json(&["get", "mutatingwebhookconfiguration", "injector"]).await;
            assert_eq!(o["webhooks"][0]["reinvocationPolicy"], "Never");
            assert_eq!(o["webhooks"][0]["failurePolicy"], "Fail");
            assert_eq!(o["webhooks"][0]["matchPolicy"], "Equivalent");

            // A webhook change bumps the generation; a label does not.
            c.ok(&[
                "patch",
                "mutatingwebhookconfiguration",
                "injector",
                "--type=json",
                "-p",
                r#"[{"op":"replace","path":"/webhooks/0/timeoutSeconds","value":5}]"#,
            ])
            .await;
            c.ok(&["label", "mutatingwebhookconfiguration", "injector", "team=a"])
                .await;
            let o = c.json(&["get", "mutatingwebhookconfiguration", "injector"]).await;
            assert_eq!(o["webhooks"][0]["timeoutSeconds"], 5);
            assert_eq!(o["metadata"]["generation"], 2);

            // Update with replace: webhooks merge by name under strategic merge patch too.
            let replaced = MUTATING.replace("sideEffects: NoneOnDryRun", "sideEffects: None");
            ok_with(&c, &["replace"], &replaced).await;
            c.ok(&[
                "patch",
                "mutatingwebhookconfiguration",
                "injector",
                "-p",
                r#"{"webhooks":[{"name":"label.example.com","timeoutSeconds":7}]}"#,
            ])
            .await;
            let o = c.json(&["get", "mutatingwebhookconfiguration", "injector"]).await;
            assert_eq!(o["webhooks"].as_array().map(Vec::len), Some(2), "{o}");
            assert_eq!(o["webhooks"][1]["timeoutSeconds"], 7);
            assert_eq!(o["webhooks"][0]["sideEffects"], "None");
            c.ok(&["delete", "mutatingwebhookconfiguration", "injector"])
                .await;
        },
    )
    .await;
    assert!(
        seen.iter()
            .any(|l| l.starts_with("ADDED") && l.contains("injector")),
        "{seen:#?}"
    );

    // Upstream's validation, with its field paths.
    let bad = MUTATING.replace("  sideEffects: NoneOnDryRun\n", "");
    let err = create_fails(&c, &bad).await;
    assert!(
        err.contains("webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"),
        "{err}"
    );
    let bad = MUTATING.replace(
        "https://injector.example.com/mutate",
        "http://injector.example.com/mutate",
    );
    let err = create_fails(&c, &bad).await;
    assert!(
        err.contains("webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"),
        "{err}"
    );
    let bad = MUTATING.replace("name: label.example.com", "name: inject.example.com");
    let err = create_fails(&c, &bad).await;
    assert!(
        err.contains("webhooks[1].name: Duplicate value: \"inject.example.com\""),
        "{err}"
    );
    c.stop().await;
}

const POLICY: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: "object.spec.replicas <= int(params.data.max)"
    message: too many replicas
"#;

const BINDING: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-team-a
spec:
  policyName: max-replicas
  validationActions: [Deny]
  paramRef:
    name: limits
    namespace: team-a
    parameterNotFoundAction: Deny
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_policies_and_bindings_are_stored_validated_and_printed() {
    let mut c = Cluster::start().await;
    let seen = watch_while(&c, &["validatingadmissionpolicies"], &[], &["ADDED", "MODIFIED", "DELETED"], async || {
        ok_with(&c, &["create"], POLICY).await;
        let table = c.ok(&["get", "validatingadmissionpolicies"]).await;
        assert_eq!(header(&table), ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]);
        assert_eq!(row(&table, "max-replicas")[1..3], ["1", "v1/ConfigMap"]);
        let o = c.json(&["get", "validatingadmissionpolicy", "max-replicas"]).await;
        assert_eq!(o["spec"]["failurePolicy"], "Fail");
        assert_eq!(o["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
        assert_eq!(o["spec"]["matchConstraints"]["resourceRules"][0]["scope"], "*");
        assert_eq!(o["metadata"]["generation"], 1);
        // A second validation, through a merge patch: the generation follows the spec.
        c.ok(&["patch", "validatingadmissionpolicy", "max-replicas", "--type=merge", "-p",
            r#"{"spec":{"validations":[{"expression":"true"},{"expression":"object.spec.replicas > 0"}]}}"#]).await;
        let o = c.json(&["get", "validatingadmissionpolicy", "max-replicas"]).await;
        assert_eq!(o["metadata"]["generation"], 2);
        let table = c.ok(&["get", "validatingadmissionpolicy", "max-replicas"]).await;
        assert_eq!(row(&table, "max-replicas")[1], "2");
        c.ok(&["delete", "validatingadmissionpolicy", "max-replicas"]).await;
    })
    .await;
    assert!(seen.iter().any(|l| l.starts_with("DELETED")), "{seen:#?}");

    ok_with(&c, &["create"], BINDING).await;
    let table = c.ok(&["get", "validatingadmissionpolicybindings"]).await;
    assert_eq!(header(&table), ["NAME", "POLICYNAME", "PARAMREF", "AGE"]);
    assert_eq!(
        row(&table, "max-replicas-team-a")[1..3],
        ["max-replicas", "team-a/limits"]
    );
    ok_with(&c, &["replace"], &BINDING.replace("[Deny]", "[Warn, Audit]")).await;
    let o = c
        .json(&["get", "validatingadmissionpolicybinding", "max-replicas-team-a"])
        .await;
    assert_eq!(
        o["spec"]["validationActions"],
        serde_json::json!(["Warn", "Audit"])
    );
    c.ok(&[
        "delete",
        "validatingadmissionpolicybinding",
        "max-replicas-team-a",
    ])
    .await;

    // Upstream's validation, with its field paths.
    let err = create_fails(&c, &BINDING.replace("[Deny]", "[Deny, Warn]")).await;
    assert!(
        err.contains("spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\"}: must not contain both Deny and Warn"),
        "{err}"
    );
    let no_validations = &POLICY[..POLICY.find("  validations:").expect("validations")];
    let err = create_fails(&c, no_validations).await;
    assert!(
        err.contains(
            "spec.validations: Required value: validations or auditAnnotations must contain at least one item"
        ),
        "{err}"
    );
    c.stop().await;
}

// ---------------------------------------------------------------------------
// apiregistration.k8s.io and discovery

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_served_group_version_has_an_available_local_api_service() {
    let mut c = Cluster::start().await;
    let versions = c.ok(&["api-versions"]).await;
    let versions: Vec<&str> = versions.lines().collect();
    for gv in [
        "v1",
        "apps/v1",
        "autoscaling/v1",
        "autoscaling/v2",
        "admissionregistration.k8s.io/v1",
        "apiregistration.k8s.io/v1",
        "rbac.authorization.k8s.io/v1",
    ] {
        assert!(versions.contains(&gv), "{gv} in {versions:?}");
    }
    let mut sorted = versions.clone();
    sorted.sort();
    assert_eq!(versions, sorted, "kubectl api-versions prints them sorted");

    let table = c.ok(&["get", "apiservices"]).await;
    assert_eq!(header(&table), ["NAME", "SERVICE", "AVAILABLE", "AGE"]);
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(
        rows.len(),
        versions.len(),
        "one APIService per group-version:\n{table}"
    );
    for gv in &versions {
        let name = match gv.split_once('/') {
            Some((group, version)) => format!("{version}.{group}"),
            None => format!("{gv}."),
        };
        assert_eq!(row(&table, &name)[1..3], ["Local", "True"], "{name}");
    }
    let apps = c.json(&["get", "apiservice", "v1.apps"]).await;
    assert_eq!(apps["spec"]["groupPriorityMinimum"], 17800);
    assert_eq!(apps["spec"]["versionPriority"], 15);
    assert_eq!(
        apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    let available = &apps["status"]["conditions"][0];
    assert_eq!(
        (&available["type"], &available["reason"], &available["message"]),
        (
            &"Available".into(),
            &"Local".into(),
            &"Local APIServices are always available".into()
        )
    );

    // Discovery lists the groups by upstream's priorities, the preferred version first.
    let groups = serde_json::from_str::<Value>(&c.ok(&["get", "--raw", "/apis"]).await).expect("json");
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(
        names[..4],
        [
            "apiregistration.k8s.io",
            "apps",
            "events.k8s.io",
            "authentication.k8s.io"
        ]
    );
    let autoscaling = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["name"] == "autoscaling")
        .expect("autoscaling");
    assert_eq!(autoscaling["preferredVersion"]["version"], "v2");
    assert_eq!(autoscaling["versions"].as_array().map(Vec::len), Some(2));
    let resources = c.ok(&["api-resources", "--api-group=autoscaling"]).await;
    assert!(
        resources.contains("hpa") && resources.contains("autoscaling/v2"),
        "{resources}"
    );

    // A user's APIService: validated as upstream, listed, deleted.
    let remote = r#"
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {name: metrics-server, namespace: kube-system}
"#;
    let err = create_fails(
        &c,
        &remote.replace("name: v1beta1.metrics.k8s.io", "name: v1.metrics.k8s.io"),
    )
    .await;
    assert!(
        err.contains("metadata.name: Invalid value: \"v1.metrics.k8s.io\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\""),
        "{err}"
    );
    ok_with(&c, &["create"], remote).await;
    let o = c.json(&["get", "apiservice", "v1beta1.metrics.k8s.io"]).await;
    assert_eq!(o["spec"]["service"]["port"], 443);
    let table = c.ok(&["get", "apiservice", "v1beta1.metrics.k8s.io"]).await;
    assert_eq!(
        row(&table, "v1beta1.metrics.k8s.io")[1..3],
        ["kube-system/metrics-server", "Unknown"]
    );
    c.ok(&["delete", "apiservice", "v1beta1.metrics.k8s.io"]).await;
    c.stop().await;
}

// ---------------------------------------------------------------------------
// autoscaling/v1 and autoscaling/v2

/// The v1 view by its full resource name: kubectl 1.32 expands the short
/// name `hpa` to the group's preferred version (v2) whatever version follows it.
const HPA_V1_RESOURCE: &str = "horizontalpodautoscalers.v1.autoscaling";
/// The v2 view.
const HPA_V2_RESOURCE: &str = "hpa.v2.autoscaling";

const HPA_V1: &str = r#"
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata:
  name: api
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  maxReplicas: 4
  targetCPUUtilizationPercentage: 60
"#;

const HPA_V2: &str = r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: memory
      target: {type: AverageValue, averageValue: 500Mi}
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 70}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 120
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_autoscale_makes_an_hpa_that_prints_as_upstream() {
    // The API alone: with the HPA controller running, the HPA's status (and
    // the Deployment's replicas: 1 < minReplicas 2) would change under the
    // checks. tests/tests/e2e/hpa.rs runs the controller.
    let controllers = "*,-horizontal-pod-autoscaler-controller"
        .parse()
        .expect("known names");
    let sim = miniplane::cluster::SimConfig {
        controllers,
        ..Default::default()
    };
    let mut c = Cluster::start_with(e2e::Config {
        sim: Some(sim),
        ..e2e::Config::ephemeral()
    })
    .await;
    c.ok(&["create", "deployment", "web", "--image=nginx"]).await;
    c.ok(&[
        "autoscale",
        "deployment",
        "web",
        "--min=2",
        "--max=5",
        "--cpu-percent=80",
    ])
    .await;
    let table = c.ok(&["get", "hpa"]).await;
    assert_eq!(
        header(&table),
        [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MINPODS",
            "MAXPODS",
            "REPLICAS",
            "AGE"
        ]
    );
    assert_eq!(
        row(&table, "web")[1..6],
        ["Deployment/web", "cpu: <unknown>/80%", "2", "5", "0"]
    );
    let v2 = c.json(&["get", HPA_V2_RESOURCE, "web"]).await;
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(
        v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
    let v1 = c.json(&["get", HPA_V1_RESOURCE, "web"]).await;
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 80);
    assert_eq!(
        v1["status"],
        serde_json::json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hpa_written_in_one_version_reads_back_in_the_other() {
    let mut c = Cluster::start().await;
    // v1 in, v2 out: the cpu target becomes the cpu metric, minReplicas is defaulted.
    ok_with(&c, &["create"], HPA_V1).await;
    let v2 = c.json(&["get", HPA_V2_RESOURCE, "api"]).await;
    assert_eq!(v2["spec"]["minReplicas"], 1);
    assert_eq!(
        v2["spec"]["metrics"],
        serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}])
    );
    // v2 in, v1 out: the other metric and the behavior travel as annotations.
    ok_with(&c, &["create"], HPA_V2).await;
    let v1 = c.json(&["get", HPA_V1_RESOURCE, "worker"]).await;
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70);
    let annotations = &v1["metadata"]["annotations"];
    let metrics: Value = serde_json::from_str(
        annotations["autoscaling.alpha.kubernetes.io/metrics"]
            .as_str()
            .expect("metrics"),
    )
    .expect("json");
    assert_eq!(
        metrics,
        serde_json::json!([{"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "500Mi"}}])
    );
    assert!(
        annotations["autoscaling.alpha.kubernetes.io/behavior"].is_string(),
        "{v1}"
    );
    // A change through v1 keeps what only v2 can say.
    c.ok(&[
        "patch",
        HPA_V1_RESOURCE,
        "worker",
        "--type=merge",
        "-p",
        r#"{"spec":{"maxReplicas":12}}"#,
    ])
    .await;
    let v2 = c.json(&["get", HPA_V2_RESOURCE, "worker"]).await;
    assert_eq!(v2["spec"]["maxReplicas"], 12);
    assert_eq!(v2["spec"]["metrics"].as_array().map(Vec::len), Some(2), "{v2}");
    assert_eq!(
        v2["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        120
    );
    assert_eq!(v2["spec"]["behavior"]["scaleUp"]["policies"][0]["type"], "Pods");
    assert!(v2["metadata"].get("annotations").is_none(), "{v2}");
    // The list of either version shows both, and the table is the same.
    let v1_list = c.json(&["get", HPA_V1_RESOURCE]).await;
    assert_eq!(v1_list["items"].as_array().map(Vec::len), Some(2));
    assert!(
        v1_list["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|i| i["apiVersion"] == "autoscaling/v1")
    );
    let table = c.ok(&["get", HPA_V1_RESOURCE, "worker"]).await;
    assert_eq!(
        row(&table, "worker")[2],
        "memory: <unknown>/500Mi, cpu: <unknown>/70%"
    );

    // Watch in v1 sees v1 objects; an update made in v2 arrives converted.
    let seen = watch_while(
        &c,
        &[HPA_V1_RESOURCE, "-o", "json"],
        &["\"name\":\"api\"", "\"name\":\"worker\""],
        &["\"maxReplicas\":9"],
        async || {
            c.ok(&[
                "patch",
                HPA_V2_RESOURCE,
                "api",
                "--type=merge",
                "-p",
                r#"{"spec":{"maxReplicas":9}}"#,
            ])
            .await;
        },
    )
    .await;
    let events: Vec<Value> = seen
        .iter()
        .map(|l| serde_json::from_str(l).expect("a JSON event"))
        .collect();
    assert!(
        events
            .iter()
            .all(|e| e["object"]["apiVersion"] == "autoscaling/v1"),
        "{events:#?}"
    );
    let last = events.last().expect("the change");
    assert_eq!(last["type"], "MODIFIED");
    assert_eq!(last["object"]["spec"]["targetCPUUtilizationPercentage"], 60);

    // Upstream's validation, with its field path, from either version.
    let err = create_fails(
        &c,
        &HPA_V1
            .replace("name: api\n", "name: bad\n")
            .replace("maxReplicas: 4", "maxReplicas: 4\n  minReplicas: 6"),
    )
    .await;
    assert!(
        err.contains("spec.maxReplicas: Invalid value: 4: must be greater than or equal to `minReplicas`"),
        "{err}"
    );
    let err = create_fails(
        &c,
        &HPA_V2
            .replace("name: worker\n", "name: bad\n")
            .replace("kind: Deployment, name: worker", "kind: Deployment"),
    )
    .await;
    assert!(err.contains("spec.scaleTargetRef.name: Required value"), "{err}");
    c.ok(&["delete", "hpa", "api", "worker"]).await;
    assert!(c.ok(&["get", HPA_V1_RESOURCE]).await.is_empty());
    c.stop().await;
}
