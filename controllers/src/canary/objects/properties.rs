//! Property tests of the guarantees the builders and [`super::apply`] make:
//!
//! 1. a hook's Job name is a DNS label of at most 63 characters, the same
//!    for the same inputs, and another for another revision;
//! 2. the weights written into a route read back unchanged, in A/B as well;
//! 3. one update brings an object to rest: after [`merge_owned`] wrote our
//!    fields over any existing object, merging again changes nothing (no
//!    write loops), and the result contains every field we set.

use proptest::prelude::*;
use serde_json::Value;

use super::apply::{contains, merge_owned};
use super::{Weights, hook_job_name, names, route, route_weights, services};
use crate::canary::types::{Canary, CanaryHook};

fn canary_named(name: &str) -> Canary {
    let mut c: Canary = serde_json::from_value(serde_json::json!({
        "metadata": {"namespace": "default", "uid": "u-1"},
        "spec": {
            "targetRef": {"name": "web"},
            "service": {"port": 80},
            "analysis": {"iterations": 5, "match": [{"headers": [{"name": "x-canary", "value": "1"}]}]}
        }
    }))
    .unwrap_or_default();
    c.metadata.name = Some(name.to_string());
    c
}

fn hook(name: &str) -> CanaryHook {
    CanaryHook {
        name: name.to_string(),
        type_: "rollout".to_string(),
        job_template: None,
    }
}

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A Service as [`services`] builds it, for a target selected by `app`.
fn service(canary: &Canary, app: &str, port: i32) -> Value {
    let mut c = canary.clone();
    c.spec.service.port = port;
    let target: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}, "template": {}}
    }))
    .unwrap_or_default();
    services(&c, &target)
        .pop()
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn hook_job_names_are_stable_dns_labels(
        canary in "[a-z0-9]([-a-z0-9.]{0,80}[a-z0-9])?",
        hook_name in "\\PC{0,70}",
        revision in "[a-z0-9]{1,12}",
        other in "[a-z0-9]{1,12}",
    ) {
        let c = canary_named(&canary);
        let name = hook_job_name(&c, &hook(&hook_name), &revision);
        prop_assert!(is_dns_label(&name), "{name:?}");
        prop_assert_eq!(&name, &hook_job_name(&c, &hook(&hook_name), &revision));
        let first10 = |s: &str| s.chars().take(10).collect::<String>();
        if first10(&revision) != first10(&other) {
            prop_assert_ne!(name, hook_job_name(&c, &hook(&hook_name), &other));
        }
    }

    #[test]
    fn route_weights_round_trip(weight in 0..=100i32, ab in any::<bool>()) {
        let c = canary_named("web");
        let w = Weights::canary(weight);
        prop_assert_eq!(route_weights(&route(&c, w, ab), &names(&c)), Some(w));
    }

    #[test]
    fn one_update_brings_an_object_to_rest(
        port_a in 1..=65535i32,
        port_b in 1..=65535i32,
        app_a in "[a-z]{1,8}",
        app_b in "[a-z]{1,8}",
        extra_label in "[a-z]{1,8}",
        cluster_ip in "10\\.0\\.[0-9]{1,2}\\.[0-9]{1,2}",
    ) {
        let c = canary_named("web");
        let mut existing = service(&c, &app_a, port_a);
        existing["metadata"]["labels"][extra_label.as_str()] = Value::from("kept");
        existing["metadata"]["resourceVersion"] = Value::from("7");
        existing["spec"]["clusterIP"] = Value::from(cluster_ip.clone());
        existing["spec"]["ports"][0]["appProtocol"] = Value::from("http");
        let desired = service(&c, &app_b, port_b);
        let merged = merge_owned(&existing, &desired).unwrap_or_else(|| existing.clone());
        prop_assert_eq!(merge_owned(&merged, &desired), None);
        prop_assert!(contains(&merged["spec"], &desired["spec"]));
        prop_assert_eq!(&merged["spec"]["clusterIP"], &Value::from(cluster_ip));
        prop_assert_eq!(&merged["metadata"]["resourceVersion"], &Value::from("7"));
        prop_assert!(merged["metadata"]["labels"].get(extra_label.as_str()).is_some());
        if port_a == port_b && app_a == app_b {
            prop_assert_eq!(merge_owned(&existing, &desired), None, "server-filled fields are no change");
        }
    }
}
