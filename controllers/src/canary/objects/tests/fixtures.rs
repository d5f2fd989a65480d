//! A Canary of `podinfo` and its target, as Flagger's docs write them.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::{Container, ContainerPort, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde_json::json;

use crate::canary::types::{Canary, CanaryHook};

/// `labels` as a map.
pub fn map(labels: &[(&str, &str)]) -> BTreeMap<String, String> {
    labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The Canary `podinfo` in `default`: target `podinfo`, port 9898, one
/// Gateway, one host, stepWeight 10 up to 50.
pub fn canary() -> Canary {
    serde_json::from_value(json!({
        "metadata": {"name": "podinfo", "namespace": "default", "uid": "c0ffee-1"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "podinfo"},
            "service": {
                "port": 9898,
                "gatewayRefs": [{"name": "gateway", "namespace": "default"}],
                "hosts": ["podinfo.example.com"]
            },
            "analysis": {"interval": "1m", "threshold": 5, "maxWeight": 50, "stepWeight": 10}
        }
    }))
    .expect("the fixture decodes")
}

/// [`canary`] with `analysis` replaced.
pub fn canary_with_analysis(analysis: serde_json::Value) -> Canary {
    let mut c = canary();
    c.spec.analysis = serde_json::from_value(analysis).expect("the analysis decodes");
    c
}

/// A blue/green Canary: 10 iterations, no weights.
pub fn blue_green() -> Canary {
    canary_with_analysis(json!({"interval": "1m", "threshold": 2, "iterations": 10}))
}

/// An A/B Canary: 10 iterations, requests with `x-canary: insider` to the canary.
pub fn ab_testing() -> Canary {
    canary_with_analysis(json!({
        "interval": "1m", "threshold": 2, "iterations": 10,
        "match": [{"headers": [{"name": "x-canary", "value": "insider"}]}]
    }))
}

/// The target `podinfo`: 2 replicas selected by `selector`, pods labelled
/// with `selector` and `version: v1`, image tag `tag`.
pub fn target_with(selector: &[(&str, &str)], tag: &str) -> Deployment {
    let mut pod_labels = map(selector);
    pod_labels.insert("version".into(), "v1".into());
    Deployment {
        metadata: ObjectMeta {
            name: Some("podinfo".into()),
            namespace: Some("default".into()),
            labels: Some(map(&[("team", "web")])),
            ..Default::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(2),
            selector: LabelSelector {
                match_labels: Some(map(selector)),
                match_expressions: None,
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    annotations: Some(map(&[("sim.miniplane.dev/error-rate", "0")])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "podinfod".into(),
                        image: Some(format!("ghcr.io/stefanprodan/podinfo:{tag}")),
                        ports: Some(vec![ContainerPort {
                            container_port: 9898,
                            name: Some("http".into()),
                            ..Default::default()
                        }]),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".into()),
                rolling_update: None,
            }),
            min_ready_seconds: Some(3),
            revision_history_limit: Some(5),
            progress_deadline_seconds: Some(60),
            paused: None,
        }),
        status: None,
    }
}

/// The target selected by `app: podinfo`, image 6.0.0.
pub fn target() -> Deployment {
    target_with(&[("app", "podinfo")], "6.0.0")
}

/// A hook named `name` of `type_`, running `curl` (or without a Job).
pub fn hook(name: &str, type_: &str, with_job: bool) -> CanaryHook {
    let job_template: Option<JobTemplateSpec> = with_job.then(|| {
        serde_json::from_value(json!({
            "metadata": {"labels": {"purpose": "smoke"}},
            "spec": {"template": {"spec": {"containers": [
                {"name": "check", "image": "curlimages/curl", "args": ["http://podinfo-canary:9898/healthz"]}
            ]}}}
        }))
        .expect("the job template decodes")
    });
    CanaryHook {
        name: name.into(),
        type_: type_.into(),
        job_template,
    }
}
