//! The pure builders: names, strategy, primary, Services, route, HPA, hooks.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::fixtures::{ab_testing, blue_green, canary, canary_with_analysis, hook, map, target, target_with};
use crate::canary::objects::hooks::{HOOK_LABEL, REVISION_LABEL, hook_job_name};
use crate::canary::objects::primary::{TEMPLATE_HASH_ANNOTATION, primary_template_hash};
use crate::canary::objects::{
    CANARY_LABEL, CANARY_RPS_ANNOTATION, HEADER_SHARE_ANNOTATION, HookState, Names, Strategy, Weights,
    hook_job, hook_state, is_deployment_ready, names, primary_autoscaler, primary_deployment, route,
    route_weights, selector_error, selector_label, services, strategy, template_hash,
};

#[test]
fn names_follow_the_service_name_else_the_target() {
    assert_eq!(
        names(&canary()),
        Names {
            primary: "podinfo-primary".into(),
            apex_service: "podinfo".into(),
            primary_service: "podinfo-primary".into(),
            canary_service: "podinfo-canary".into(),
            route: "podinfo".into(),
        }
    );
    let mut c = canary();
    c.spec.service.name = Some("frontend".into());
    let n = names(&c);
    assert_eq!(n.primary, "podinfo-primary", "the Deployment follows the target");
    assert_eq!(
        (
            n.apex_service.as_str(),
            n.primary_service.as_str(),
            n.canary_service.as_str(),
            n.route.as_str()
        ),
        ("frontend", "frontend-primary", "frontend-canary", "frontend")
    );
}

#[test]
fn strategy_follows_the_analysis_fields() {
    let cases = [
        (json!({"stepWeight": 10, "maxWeight": 50}), Strategy::Canary),
        (json!({"stepWeights": [1, 10, 50]}), Strategy::Canary),
        (json!({}), Strategy::Canary),
        (json!({"iterations": 10}), Strategy::BlueGreen),
        (json!({"iterations": 0}), Strategy::Canary),
        (
            json!({"iterations": 10, "maxWeight": 50, "stepWeight": 10}),
            Strategy::Canary,
        ),
        (
            json!({"iterations": 10, "match": [{"headers": [{"name": "x", "value": "y"}]}]}),
            Strategy::ABTesting,
        ),
    ];
    for (analysis, want) in cases {
        assert_eq!(
            strategy(&canary_with_analysis(analysis.clone())),
            want,
            "{analysis}"
        );
    }
    assert_eq!(strategy(&blue_green()), Strategy::BlueGreen);
    assert_eq!(strategy(&ab_testing()), Strategy::ABTesting);
}

#[test]
fn the_selector_label_is_the_first_of_app_name_app_kubernetes_io_name() {
    type Labels<'a> = &'a [(&'a str, &'a str)];
    let cases: [(Labels, Option<(&str, &str)>); 6] = [
        (&[("app", "podinfo")], Some(("app", "podinfo"))),
        (&[("name", "podinfo")], Some(("name", "podinfo"))),
        (
            &[("app.kubernetes.io/name", "podinfo")],
            Some(("app.kubernetes.io/name", "podinfo")),
        ),
        (
            &[("app.kubernetes.io/name", "a"), ("name", "b")],
            Some(("name", "b")),
        ),
        (
            &[("name", "b"), ("app", "c"), ("app.kubernetes.io/name", "a")],
            Some(("app", "c")),
        ),
        (&[("tier", "web")], None),
    ];
    for (selector, want) in cases {
        let got = selector_label(&target_with(selector, "6.0.0"));
        let want = want.map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(got, want, "{selector:?}");
    }
}

#[test]
fn the_primary_rewrites_the_selector_label_in_selector_and_pod_labels() {
    for (key, selector) in [
        ("app", vec![("app", "podinfo"), ("tier", "web")]),
        ("name", vec![("name", "podinfo"), ("tier", "web")]),
        (
            "app.kubernetes.io/name",
            vec![("app.kubernetes.io/name", "podinfo")],
        ),
    ] {
        let t = target_with(&selector, "6.0.0");
        let p = primary_deployment(&canary(), &t, None);
        let spec = p.spec.as_ref().unwrap();
        let sel = spec.selector.match_labels.as_ref().unwrap();
        assert_eq!(sel[key], "podinfo-primary", "{key}");
        let pod_labels = spec.template.metadata.as_ref().unwrap().labels.as_ref().unwrap();
        assert_eq!(pod_labels[key], "podinfo-primary", "{key}");
        assert_eq!(pod_labels["version"], "v1", "other pod labels are kept");
        for (k, v) in sel {
            assert_eq!(
                pod_labels.get(k),
                Some(v),
                "the selector selects the primary's own pods"
            );
        }
        let target_sel = t.spec.as_ref().unwrap().selector.match_labels.as_ref().unwrap();
        assert_ne!(
            sel, target_sel,
            "primary and target never select each other's pods"
        );
        assert_eq!(selector_error(&t), None);
    }
}

#[test]
fn a_target_without_a_selector_label_gets_an_error_and_a_distinct_primary() {
    let t = target_with(&[("tier", "web")], "6.0.0");
    assert_eq!(
        selector_error(&t).as_deref(),
        Some(
            "deployment podinfo.default spec.selector.matchLabels must contain one of [app name app.kubernetes.io/name]"
        )
    );
    let p = primary_deployment(&canary(), &t, None);
    let spec = p.spec.unwrap();
    assert_eq!(
        spec.selector.match_labels.unwrap(),
        map(&[("app", "podinfo-primary"), ("tier", "web")])
    );
    assert_eq!(
        spec.template.metadata.unwrap().labels.unwrap()["app"],
        "podinfo-primary"
    );
}

#[test]
fn the_primary_copies_the_target_spec_and_is_owned_by_the_canary() {
    let c = canary();
    let t = target();
    let p = primary_deployment(&c, &t, None);
    assert_eq!(p.metadata.name.as_deref(), Some("podinfo-primary"));
    assert_eq!(p.metadata.namespace.as_deref(), Some("default"));
    let labels = p.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["team"], "web");
    assert_eq!(labels["app"], "podinfo-primary");
    assert_eq!(labels[CANARY_LABEL], "podinfo");
    let owner = &p.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.uid.as_str()
        ),
        ("rollouts.miniplane.dev/v1beta1", "Canary", "podinfo", "c0ffee-1")
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(primary_template_hash(&p), Some(template_hash(&t).as_str()));
    assert_eq!(
        p.metadata.annotations.as_ref().unwrap()[TEMPLATE_HASH_ANNOTATION],
        template_hash(&t)
    );

    let (ps, ts) = (p.spec.as_ref().unwrap(), t.spec.as_ref().unwrap());
    assert_eq!(ps.replicas, Some(2), "the target's replicas by default");
    assert_eq!(ps.strategy, ts.strategy);
    assert_eq!(ps.min_ready_seconds, Some(3));
    assert_eq!(ps.revision_history_limit, Some(5));
    assert_eq!(ps.progress_deadline_seconds, Some(60));
    assert_eq!(ps.template.spec, ts.template.spec);
    assert_eq!(
        ps.template.metadata.as_ref().unwrap().annotations,
        ts.template.metadata.as_ref().unwrap().annotations
    );
    let scaled = primary_deployment(&c, &t, Some(7));
    assert_eq!(scaled.spec.unwrap().replicas, Some(7), "the replicas given win");
}

#[test]
fn the_template_hash_follows_the_template_only() {
    let t = target();
    let mut scaled = t.clone();
    scaled.spec.as_mut().unwrap().replicas = Some(9);
    scaled.metadata.labels = None;
    assert_eq!(template_hash(&t), template_hash(&scaled));
    assert_eq!(template_hash(&t), template_hash(&target()), "deterministic");
    assert_ne!(
        template_hash(&t),
        template_hash(&target_with(&[("app", "podinfo")], "6.0.1"))
    );
    assert!(!template_hash(&t).is_empty());
}

fn with_status(spec_replicas: i32, generation: i64, status: DeploymentStatus) -> Deployment {
    let mut d = target();
    d.spec.as_mut().unwrap().replicas = Some(spec_replicas);
    d.metadata.generation = Some(generation);
    d.status = Some(status);
    d
}

#[test]
fn a_deployment_is_ready_once_rolled_out() {
    let st = |observed: i64, replicas: i32, updated: i32, available: i32| DeploymentStatus {
        observed_generation: Some(observed),
        replicas: Some(replicas),
        updated_replicas: Some(updated),
        available_replicas: Some(available),
        ready_replicas: Some(available),
        ..Default::default()
    };
    let cases = [
        ("rolled out", with_status(2, 3, st(3, 2, 2, 2)), true),
        (
            "observed a later generation",
            with_status(2, 3, st(4, 2, 2, 2)),
            true,
        ),
        ("spec not yet observed", with_status(2, 3, st(2, 2, 2, 2)), false),
        ("old pods remain", with_status(2, 3, st(3, 3, 2, 3)), false),
        ("not all available", with_status(2, 3, st(3, 2, 2, 1)), false),
        ("not all updated", with_status(2, 3, st(3, 2, 1, 2)), false),
        ("scaling up", with_status(3, 3, st(3, 2, 2, 2)), false),
        ("scaled to zero", with_status(0, 3, st(3, 0, 0, 0)), true),
        (
            "scaled to zero, counters absent",
            with_status(
                0,
                1,
                DeploymentStatus {
                    observed_generation: Some(1),
                    ..Default::default()
                },
            ),
            true,
        ),
    ];
    for (what, d, want) in cases {
        assert_eq!(is_deployment_ready(&d), want, "{what}");
    }
    assert!(!is_deployment_ready(&target()), "no status yet");
}

#[test]
fn the_services_select_the_primary_and_the_target_pods() {
    let c = canary();
    let t = target_with(&[("app", "podinfo"), ("tier", "web")], "6.0.0");
    let svcs = services(&c, &t);
    let got: Vec<_> = svcs
        .iter()
        .map(|s| {
            let spec = s.spec.as_ref().unwrap();
            (s.metadata.name.clone().unwrap(), spec.selector.clone().unwrap())
        })
        .collect();
    let primary_sel = map(&[("app", "podinfo-primary"), ("tier", "web")]);
    assert_eq!(
        got,
        vec![
            ("podinfo".to_string(), primary_sel.clone()),
            ("podinfo-primary".to_string(), primary_sel),
            (
                "podinfo-canary".to_string(),
                map(&[("app", "podinfo"), ("tier", "web")])
            ),
        ]
    );
    let primary = primary_deployment(&c, &t, None);
    let primary_pods = primary.spec.unwrap().template.metadata.unwrap().labels.unwrap();
    for (k, v) in svcs[0].spec.as_ref().unwrap().selector.as_ref().unwrap() {
        assert_eq!(
            primary_pods.get(k),
            Some(v),
            "the apex Service selects the primary's pods"
        );
    }
    for s in &svcs {
        let spec = s.spec.as_ref().unwrap();
        assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
        let ports = spec.ports.as_ref().unwrap();
        assert_eq!(ports.len(), 1);
        assert_eq!(
            (ports[0].port, ports[0].target_port.clone()),
            (9898, Some(IntOrString::Int(9898)))
        );
        assert_eq!(ports[0].name.as_deref(), Some("http"));
        assert_eq!(s.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(s.metadata.owner_references.as_ref().unwrap()[0].uid, "c0ffee-1");
        assert!(s.metadata.annotations.is_none(), "no load on a canary's Services");
    }
}

#[test]
fn the_target_port_is_the_one_given() {
    let mut c = canary();
    c.spec.service.port = 80;
    c.spec.service.target_port = Some(IntOrString::String("http".into()));
    for s in services(&c, &target()) {
        let port = &s.spec.unwrap().ports.unwrap()[0];
        assert_eq!(
            (port.port, port.target_port.clone()),
            (80, Some(IntOrString::String("http".into())))
        );
    }
}

#[test]
fn in_blue_green_the_canary_service_carries_the_request_rate() {
    let rps = |c: &crate::canary::types::Canary| -> Vec<Option<String>> {
        services(c, &target())
            .iter()
            .map(|s| {
                s.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(CANARY_RPS_ANNOTATION).cloned())
            })
            .collect()
    };
    assert_eq!(
        rps(&blue_green()),
        vec![None, None, Some("10".to_string())],
        "the default rate"
    );
    let mut c = blue_green();
    c.metadata.annotations = Some(map(&[(CANARY_RPS_ANNOTATION, "25")]));
    assert_eq!(
        rps(&c),
        vec![None, None, Some("25".to_string())],
        "the Canary's rate"
    );
    assert_eq!(rps(&ab_testing()), vec![None, None, None]);
    let mut weighted = canary();
    weighted.metadata.annotations = Some(map(&[(CANARY_RPS_ANNOTATION, "25")]));
    assert_eq!(rps(&weighted), vec![None, None, None]);
}

#[test]
fn the_route_splits_by_weight_and_reads_back() {
    let c = canary();
    let n = names(&c);
    for w in [
        Weights::PRIMARY,
        Weights::canary(10),
        Weights::canary(50),
        Weights::canary(100),
        Weights::canary(0),
    ] {
        let r = route(&c, w, false);
        assert_eq!(r.spec.rules.len(), 1);
        assert_eq!(route_weights(&r, &n), Some(w));
        let backends = &r.spec.rules[0].backend_refs;
        assert_eq!(
            backends
                .iter()
                .map(|b| (b.name.as_str(), b.port, b.weight))
                .collect::<Vec<_>>(),
            vec![
                ("podinfo-primary", Some(9898), Some(w.primary)),
                ("podinfo-canary", Some(9898), Some(w.canary))
            ]
        );
    }
    assert_eq!(
        Weights::canary(30),
        Weights {
            primary: 70,
            canary: 30
        }
    );
    assert_eq!(
        Weights::canary(130),
        Weights {
            primary: 0,
            canary: 100
        },
        "clamped"
    );
    let r = route(&c, Weights::PRIMARY, false);
    assert_eq!(r.metadata.name.as_deref(), Some("podinfo"));
    assert_eq!(r.spec.hostnames, vec!["podinfo.example.com".to_string()]);
    assert_eq!(r.spec.parent_refs, c.spec.service.gateway_refs);
    assert_eq!(r.metadata.owner_references.as_ref().unwrap()[0].name, "podinfo");
    assert!(r.metadata.annotations.is_none());
}

#[test]
fn the_ab_route_sends_matching_requests_to_the_canary_first() {
    let c = ab_testing();
    let n = names(&c);
    let r = route(&c, Weights::PRIMARY, true);
    assert_eq!(r.spec.rules.len(), 2);
    let first = &r.spec.rules[0];
    assert_eq!(first.matches, c.spec.analysis.match_);
    assert_eq!(
        first
            .backend_refs
            .iter()
            .map(|b| (b.name.as_str(), b.weight))
            .collect::<Vec<_>>(),
        vec![("podinfo-primary", Some(0)), ("podinfo-canary", Some(100))]
    );
    assert!(r.spec.rules[1].matches.is_empty());
    assert_eq!(
        route_weights(&r, &n),
        Some(Weights::PRIMARY),
        "the default rule is read back"
    );
    assert_eq!(
        route(&c, Weights::PRIMARY, false).spec.rules.len(),
        1,
        "outside analysis: one rule"
    );
    let without_match = route(&canary(), Weights::PRIMARY, true);
    assert_eq!(without_match.spec.rules.len(), 1, "no match, no A/B rule");
}

#[test]
fn the_route_carries_the_traffic_annotations() {
    let mut c = ab_testing();
    c.metadata.annotations = Some(map(&[
        (CANARY_RPS_ANNOTATION, "40"),
        (HEADER_SHARE_ANNOTATION, "0.25"),
        ("unrelated", "x"),
    ]));
    let r = route(&c, Weights::PRIMARY, true);
    assert_eq!(
        r.metadata.annotations.unwrap(),
        map(&[(CANARY_RPS_ANNOTATION, "40"), (HEADER_SHARE_ANNOTATION, "0.25")])
    );
}

#[test]
fn route_weights_need_both_backends_of_a_catch_all_rule() {
    let c = canary();
    let n = names(&c);
    let mut r = route(&c, Weights::canary(20), false);
    r.spec.rules[0].backend_refs.pop();
    assert_eq!(route_weights(&r, &n), None, "no canary backend");
    let mut r = route(&c, Weights::canary(20), false);
    r.spec.rules[0].backend_refs[1].weight = None;
    assert_eq!(
        route_weights(&r, &n),
        Some(Weights {
            primary: 80,
            canary: 1
        }),
        "the API's default weight"
    );
    let mut r = route(&c, Weights::canary(20), false);
    r.spec.rules[0].matches = ab_testing().spec.analysis.match_;
    assert_eq!(route_weights(&r, &n), None, "only a header rule");
    let mut other = names(&c);
    other.canary_service = "other-canary".into();
    assert_eq!(route_weights(&route(&c, Weights::PRIMARY, false), &other), None);
}

#[test]
fn the_primary_autoscaler_scales_the_primary() {
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "podinfo", "namespace": "default", "labels": {"team": "web"}},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"},
            "minReplicas": 2, "maxReplicas": 4,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}
        }
    }))
    .unwrap();
    let p = primary_autoscaler(&canary(), &hpa);
    assert_eq!(p.metadata.name.as_deref(), Some("podinfo-primary"));
    assert_eq!(p.metadata.labels.as_ref().unwrap()["team"], "web");
    assert_eq!(p.metadata.owner_references.as_ref().unwrap()[0].kind, "Canary");
    let (ps, hs) = (p.spec.unwrap(), hpa.spec.unwrap());
    assert_eq!(ps.scale_target_ref.name, "podinfo-primary");
    assert_eq!(ps.scale_target_ref.kind, "Deployment");
    assert_eq!(ps.scale_target_ref.api_version.as_deref(), Some("apps/v1"));
    assert_eq!((ps.min_replicas, ps.max_replicas), (Some(2), 4));
    assert_eq!(ps.metrics, hs.metrics);
    assert_eq!(ps.behavior, hs.behavior);
}

#[test]
fn a_hook_job_is_named_per_canary_hook_and_revision() {
    let c = canary();
    let h = hook("smoke-test", "pre-rollout", true);
    assert!(hook_job(&c, &hook("gate", "confirm-promotion", false), "abc").is_none());
    let job = hook_job(&c, &h, "5d4f8b9c7x6y").unwrap();
    assert_eq!(
        job.metadata.name.as_deref(),
        Some("podinfo-smoke-test-5d4f8b9c7x")
    );
    assert_eq!(
        hook_job(&c, &h, "5d4f8b9c7x6y"),
        Some(job.clone()),
        "deterministic"
    );
    assert_ne!(
        hook_job_name(&c, &h, "other"),
        hook_job_name(&c, &h, "5d4f8b9c7x6y")
    );
    assert_ne!(
        hook_job_name(&c, &hook("load", "rollout", true), "r"),
        hook_job_name(&c, &hook("smoke-test", "rollout", true), "r")
    );
    let labels = job.metadata.labels.as_ref().unwrap();
    assert_eq!(labels[CANARY_LABEL], "podinfo");
    assert_eq!(labels[HOOK_LABEL], "smoke-test");
    assert_eq!(labels[REVISION_LABEL], "5d4f8b9c7x6y");
    assert_eq!(labels["purpose"], "smoke", "the template's labels are kept");
    assert_eq!(job.metadata.owner_references.as_ref().unwrap()[0].uid, "c0ffee-1");
    let spec = job.spec.as_ref().unwrap();
    assert_eq!(spec.backoff_limit, Some(0));
    assert_eq!(
        spec.template.spec.as_ref().unwrap().restart_policy.as_deref(),
        Some("Never")
    );

    let mut h3 = h.clone();
    let t = h3.job_template.as_mut().unwrap().spec.as_mut().unwrap();
    t.backoff_limit = Some(3);
    t.template.spec.as_mut().unwrap().restart_policy = Some("OnFailure".into());
    let spec = hook_job(&c, &h3, "r").unwrap().spec.unwrap();
    assert_eq!(spec.backoff_limit, Some(3));
    assert_eq!(
        spec.template.spec.unwrap().restart_policy.as_deref(),
        Some("OnFailure")
    );
}

#[test]
fn long_hook_job_names_are_cut_to_a_unique_dns_label() {
    let mut c = canary();
    c.metadata.name = Some("a-very-long-canary-name-for-the-checkout-service-in-production".into());
    let long = |name: &str| hook(name, "rollout", true);
    let a = hook_job_name(
        &c,
        &long("acceptance-tests-against-the-canary-service"),
        "5d4f8b9c7x6y",
    );
    let b = hook_job_name(
        &c,
        &long("acceptance-tests-against-the-canary-service-2"),
        "5d4f8b9c7x6y",
    );
    let r = hook_job_name(
        &c,
        &long("acceptance-tests-against-the-canary-service"),
        "7777777777",
    );
    for name in [&a, &b, &r] {
        assert!(name.len() <= 63, "{name}");
        assert!(
            name.chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-'),
            "{name}"
        );
        assert!(!name.starts_with('-') && !name.ends_with('-'), "{name}");
    }
    assert_ne!(a, b);
    assert_ne!(a, r);
    assert_eq!(
        a,
        hook_job_name(
            &c,
            &long("acceptance-tests-against-the-canary-service"),
            "5d4f8b9c7x6y"
        )
    );
    let odd = hook_job_name(&canary(), &hook("Smoke_Test!", "rollout", true), "ABC");
    assert_eq!(odd, "podinfo-smoke-test--abc");
}

#[test]
fn the_hook_state_follows_the_job_conditions() {
    let job = |conditions: &[(&str, &str)]| Job {
        status: Some(JobStatus {
            conditions: Some(
                conditions
                    .iter()
                    .map(|(t, s)| JobCondition {
                        type_: t.to_string(),
                        status: s.to_string(),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(hook_state(None), HookState::Missing);
    assert_eq!(hook_state(Some(&Job::default())), HookState::Running);
    assert_eq!(hook_state(Some(&job(&[]))), HookState::Running);
    assert_eq!(
        hook_state(Some(&job(&[("Suspended", "True")]))),
        HookState::Running
    );
    assert_eq!(
        hook_state(Some(&job(&[("Complete", "True")]))),
        HookState::Succeeded
    );
    assert_eq!(
        hook_state(Some(&job(&[("Complete", "False")]))),
        HookState::Running
    );
    assert_eq!(hook_state(Some(&job(&[("Failed", "True")]))), HookState::Failed);
    assert_eq!(
        hook_state(Some(&job(&[("FailureTarget", "True"), ("Failed", "True")]))),
        HookState::Failed
    );
}
