//! The Gateway API, end to end: the real `kubectl` against an in-process
//! miniplane (nothing mocked). The API (GatewayClass, Gateway, HTTPRoute)
//! is served from the CRDs installed at start, and the simulated gateway
//! (`sim.miniplane.dev/gateway-controller`) reports statuses.
//!
//! Covered:
//! * the built-in CRDs are listed by `kubectl get crd`, with their short
//!   names, category and v1beta1 served beside v1;
//! * `kubectl get gatewayclass` shows `miniplane`, ACCEPTED True;
//! * examples/gateway/gateway-http.yaml applies; `kubectl wait
//!   --for=condition=Programmed`; the `kubectl get gateway` row (CLASS,
//!   ADDRESS, PROGRAMMED); the route's parent conditions; a deleted backend
//!   Service turns ResolvedRefs False (BackendNotFound), a recreated one True;
//! * a listener with a protocol the gateway does not implement;
//! * invalid objects are refused (422) by the CRDs' schemas and CEL rules,
//!   while valid neighbours of each are accepted.
//!
//! Every wait is bounded (kubectl `--timeout`, [`Cluster::eventually_json`]).

use e2e::{Cluster, Config};
use serde_json::Value;
use store::Clock;

/// The example manifests: a Gateway, an HTTPRoute, two Services.
const EXAMPLE: &str = include_str!("../../../examples/gateway/gateway-http.yaml");
const CONTROLLER: &str = "sim.miniplane.dev/gateway-controller";

async fn cluster() -> Cluster {
    Cluster::start_with(Config {
        clock: Clock::scaled(20.0),
        sim: Some(miniplane::cluster::SimConfig {
            nodes: 1,
            ..Default::default()
        }),
        ..Config::ephemeral()
    })
    .await
}

/// The `(status, reason)` of condition `type_` in a JSON conditions list.
fn condition(conditions: &Value, type_: &str) -> Option<(String, String)> {
    conditions
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["reason"].as_str().unwrap_or("").to_string(),
            )
        })
}

fn pair(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_string(), reason.to_string()))
}

/// Our entry of a route's `status.parents`.
fn our_parent(route: &Value) -> Option<&Value> {
    route["status"]["parents"]
        .as_array()?
        .iter()
        .find(|p| p["controllerName"] == CONTROLLER)
}

/// The columns of the table row whose first column is `name`.
fn row(table: &str, name: &str) -> Vec<String> {
    table
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .find(|cols| cols.first().map(String::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in:\n{table}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_http_route_statuses_end_to_end() {
    let c = cluster().await;

    let crds = c.ok(&["get", "crd"]).await;
    for crd in [
        "gatewayclasses.gateway.networking.k8s.io",
        "gateways.gateway.networking.k8s.io",
        "httproutes.gateway.networking.k8s.io",
    ] {
        assert!(crds.contains(crd), "{crd} missing from:\n{crds}");
    }

    // The class the simulated gateway installs, accepted.
    c.eventually_json(
        &["get", "gatewayclass", "miniplane"],
        "miniplane Accepted",
        |gc| condition(&gc["status"]["conditions"], "Accepted") == pair("True", "Accepted"),
    )
    .await;
    let table = c.ok(&["get", "gatewayclass"]).await;
    assert_eq!(
        table
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["NAME", "CONTROLLER", "ACCEPTED", "AGE"]
    );
    let cols = row(&table, "miniplane");
    assert_eq!(cols[1..3], [CONTROLLER.to_string(), "True".to_string()]);
    let wide = c.ok(&["get", "gc", "miniplane", "-o", "wide"]).await;
    assert!(
        wide.contains("DESCRIPTION") && wide.contains("miniplane's simulated gateway"),
        "{wide}"
    );

    // The example: Gateway, HTTPRoute, Services.
    let applied = c.run_with_yaml(&["apply"], EXAMPLE).await;
    assert!(applied.success, "{}", applied.stderr);
    c.ok(&[
        "wait",
        "--for=condition=Programmed",
        "gateway/web",
        "--timeout=30s",
    ])
    .await;
    let table = c.ok(&["get", "gateway"]).await;
    assert_eq!(
        table
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["NAME", "CLASS", "ADDRESS", "PROGRAMMED", "AGE"]
    );
    let cols = row(&table, "web");
    assert_eq!(cols[1], "miniplane");
    assert!(cols[2].starts_with("10.200."), "{table}");
    assert_eq!(cols[3], "True");
    let gw = c.json(&["get", "gateway", "web"]).await;
    let listener = &gw["status"]["listeners"][0];
    assert_eq!(listener["name"], "http");
    assert_eq!(listener["supportedKinds"][0]["kind"], "HTTPRoute");
    for (t, reason) in [
        ("Accepted", "Accepted"),
        ("Programmed", "Programmed"),
        ("ResolvedRefs", "ResolvedRefs"),
    ] {
        assert_eq!(condition(&listener["conditions"], t), pair("True", reason), "{t}");
    }
    assert_eq!(
        condition(&listener["conditions"], "Conflicted"),
        pair("False", "NoConflicts")
    );

    // The route: accepted by the Gateway's listener, both Services found.
    let route = c
        .eventually_json(&["get", "httproute", "web"], "route accepted and resolved", |r| {
            our_parent(r).is_some_and(|p| {
                condition(&p["conditions"], "Accepted") == pair("True", "Accepted")
                    && condition(&p["conditions"], "ResolvedRefs") == pair("True", "ResolvedRefs")
            })
        })
        .await;
    let parent = our_parent(&route).unwrap();
    assert_eq!(parent["parentRef"]["name"], "web");
    assert_eq!(parent["parentRef"]["kind"], "Gateway");
    assert_eq!(
        parent["conditions"][0]["observedGeneration"],
        route["metadata"]["generation"]
    );
    c.eventually_json(&["get", "gateway", "web"], "one attached route", |g| {
        g["status"]["listeners"][0]["attachedRoutes"] == 1
    })
    .await;
    let routes = c.ok(&["get", "httproute"]).await;
    assert!(row(&routes, "web")[1].contains("web.example.com"), "{routes}");

    // A backend Service goes away, and comes back.
    c.ok(&["delete", "service", "web-canary"]).await;
    let route = c
        .eventually_json(&["get", "httproute", "web"], "BackendNotFound", |r| {
            our_parent(r).is_some_and(|p| {
                condition(&p["conditions"], "ResolvedRefs") == pair("False", "BackendNotFound")
            })
        })
        .await;
    let message = our_parent(&route).unwrap()["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "ResolvedRefs")
        .unwrap()["message"]
        .clone();
    assert!(message.as_str().unwrap().contains("web-canary"), "{message}");
    c.run_with_yaml(&["apply"], EXAMPLE).await;
    c.eventually_json(&["get", "httproute", "web"], "ResolvedRefs again", |r| {
        our_parent(r)
            .is_some_and(|p| condition(&p["conditions"], "ResolvedRefs") == pair("True", "ResolvedRefs"))
    })
    .await;

    // v1beta1 is served too, the same object; the short name and category work.
    let beta = c
        .json(&["get", "gateways.v1beta1.gateway.networking.k8s.io", "web"])
        .await;
    assert_eq!(beta["apiVersion"], "gateway.networking.k8s.io/v1beta1");
    assert_eq!(beta["spec"]["gatewayClassName"], "miniplane");
    let all = c.ok(&["get", "gateway-api"]).await;
    for name in [
        "gatewayclass.gateway.networking.k8s.io/miniplane",
        "gateway.gateway.networking.k8s.io/web",
        "httproute.gateway.networking.k8s.io/web",
    ] {
        assert!(all.contains(name), "{name} missing from:\n{all}");
    }
    c.ok(&["get", "gtw", "web"]).await;

    // A TCP listener: the simulated gateway serves HTTP and HTTPS only.
    let tcp = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: mixed
spec:
  gatewayClassName: miniplane
  listeners:
  - {name: http, protocol: HTTP, port: 80}
  - {name: tcp, protocol: TCP, port: 9000}
"#;
    assert!(c.run_with_yaml(&["apply"], tcp).await.success);
    let gw = c
        .eventually_json(&["get", "gateway", "mixed"], "mixed listeners", |g| {
            g["status"]["listeners"].as_array().is_some_and(|l| l.len() == 2)
        })
        .await;
    assert_eq!(
        condition(&gw["status"]["conditions"], "Accepted"),
        pair("True", "ListenersNotValid")
    );
    assert_eq!(
        condition(&gw["status"]["listeners"][1]["conditions"], "Accepted"),
        pair("False", "UnsupportedProtocol")
    );
}

/// A manifest of `kind` named `name` with `spec` (YAML, indented two spaces).
fn manifest(kind: &str, name: &str, spec: &str) -> String {
    format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{spec}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_gateway_api_objects_are_refused() {
    let c = cluster().await;
    let http = "  gatewayClassName: miniplane\n  listeners:\n  - {name: http, protocol: HTTP, port: 80}\n";
    let refused: &[(&str, &str, String, &str)] = &[
        (
            "a path that is not absolute",
            "HTTPRoute",
            "  rules:\n  - matches:\n    - path: {type: PathPrefix, value: foo}\n".to_string(),
            "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
        ),
        (
            "a Service backend without a port",
            "HTTPRoute",
            "  rules:\n  - backendRefs:\n    - name: web\n".to_string(),
            "Must have port for Service reference",
        ),
        (
            "two references to one parent without sectionName",
            "HTTPRoute",
            "  parentRefs:\n  - {name: gw, namespace: default}\n  - {name: gw, namespace: default}\n".to_string(),
            "sectionName must be unique when parentRefs includes 2 or more references to the same parent",
        ),
        (
            "a backend timeout longer than the request's",
            "HTTPRoute",
            "  rules:\n  - timeouts: {request: 1s, backendRequest: 2s}\n".to_string(),
            "backendRequest timeout cannot be longer than request timeout",
        ),
        (
            "redirect and rewrite together",
            "HTTPRoute",
            "  rules:\n  - filters:\n    - {type: RequestRedirect, requestRedirect: {scheme: https}}\n    - {type: URLRewrite, urlRewrite: {hostname: a.example.com}}\n".to_string(),
            "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both",
        ),
        (
            "tls on an HTTP listener",
            "Gateway",
            "  gatewayClassName: miniplane\n  listeners:\n  - {name: http, protocol: HTTP, port: 80, tls: {certificateRefs: [{name: c}]}}\n".to_string(),
            "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
        ),
        (
            "two listeners on one port, protocol and hostname",
            "Gateway",
            format!("{http}  - {{name: other, protocol: HTTP, port: 80}}\n"),
            "Combination of port, protocol and hostname must be unique for each listener",
        ),
        (
            "no listeners",
            "Gateway",
            "  gatewayClassName: miniplane\n  listeners: []\n".to_string(),
            "spec.listeners",
        ),
        (
            "a hostname with an upper-case letter",
            "Gateway",
            "  gatewayClassName: miniplane\n  listeners:\n  - {name: http, protocol: HTTP, port: 80, hostname: Web.example.com}\n".to_string(),
            "spec.listeners[0].hostname",
        ),
        (
            "a controllerName that is no domain-prefixed path",
            "GatewayClass",
            "  controllerName: not-a-path\n".to_string(),
            "spec.controllerName",
        ),
    ];
    for (what, kind, spec, message) in refused {
        let stderr = c.create_fails(&manifest(kind, "bad", spec)).await;
        assert!(stderr.contains("is invalid"), "{what}: not a 422: {stderr}");
        assert!(stderr.contains(message), "{what}: {message:?} not in {stderr}");
    }

    // Their valid neighbours are accepted: CEL rules evaluate without error
    // on valid objects (the parentRefs rules name `__namespace__`).
    let accepted: &[(&str, String)] = &[
        (
            "HTTPRoute",
            "  parentRefs:\n  - {name: gw, namespace: a}\n  - {name: gw, namespace: b}\n  - {name: gw, sectionName: http}\n  - {name: gw, sectionName: https}\n  rules:\n  - matches:\n    - path: {type: PathPrefix, value: /a}\n      headers: [{name: x-canary, value: \"1\"}]\n    filters:\n    - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /b}}}\n    backendRefs:\n    - {name: web, port: 80, weight: 3}\n    timeouts: {request: 10s, backendRequest: 2s}\n".to_string(),
        ),
        (
            "Gateway",
            format!("{http}  - {{name: https, protocol: HTTPS, port: 443, hostname: '*.example.com', tls: {{certificateRefs: [{{name: cert}}]}}}}\n  addresses:\n  - {{type: IPAddress, value: 192.0.2.10}}\n  infrastructure:\n    labels: {{team: web}}\n"),
        ),
        ("GatewayClass", "  controllerName: example.net/gateway\n".to_string()),
    ];
    for (kind, spec) in accepted {
        let r = c.run_with_yaml(&["create"], &manifest(kind, "good", spec)).await;
        assert!(r.success, "{kind}: {}", r.stderr);
    }
    // The defaults of the schema were applied.
    let route = c.json(&["get", "httproute", "good"]).await;
    assert_eq!(route["spec"]["parentRefs"][0]["kind"], "Gateway");
    assert_eq!(route["spec"]["rules"][0]["backendRefs"][0]["kind"], "Service");

    // controllerName is immutable (a transition rule).
    let r = c
        .run(&[
            "patch",
            "gatewayclass",
            "good",
            "--type=merge",
            "-p",
            r#"{"spec":{"controllerName":"example.net/other"}}"#,
        ])
        .await;
    assert!(
        !r.success && r.stderr.contains("Value is immutable"),
        "{}",
        r.stderr
    );
}
