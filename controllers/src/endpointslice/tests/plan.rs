//! `pod_to_endpoint`, `endpoint_ports`, `address_types`, `slice_labels`
//! and `desired_groups`, case by case (after upstream `utils_test.go`:
//! `TestPodToEndpoint`, `TestGetEndpointPorts`, `TestSetEndpointSliceLabels`).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use crate::endpoint::tests::fixtures::{pod, service};
use crate::endpointslice::plan::{
    address_types, desired_groups, endpoint_ports, new_slice, placeholder_address_type, pod_to_endpoint,
    slice_labels,
};

fn conditions(p: &Pod, publish: bool) -> (Option<bool>, Option<bool>, Option<bool>) {
    let svc = service(json!({"publishNotReadyAddresses": publish}));
    let e = pod_to_endpoint(p, &svc, "IPv4").unwrap();
    let c = e.conditions.unwrap();
    (c.ready, c.serving, c.terminating)
}

#[test]
fn conditions_of_ready_unready_and_terminating_pods() {
    let ready = pod("a", "10.0.0.1", true, json!([]));
    let unready = pod("b", "10.0.0.2", false, json!([]));
    let mut terminating = ready.clone();
    terminating.metadata.deletion_timestamp = Some(Time("2023-11-14T22:20:00Z".parse().unwrap()));
    assert_eq!(conditions(&ready, false), (Some(true), Some(true), Some(false)));
    assert_eq!(
        conditions(&unready, false),
        (Some(false), Some(false), Some(false))
    );
    assert_eq!(
        conditions(&terminating, false),
        (Some(false), Some(true), Some(true))
    );
    // publishNotReadyAddresses: ready whatever the pod says.
    assert_eq!(conditions(&unready, true), (Some(true), Some(false), Some(false)));
    assert_eq!(
        conditions(&terminating, true),
        (Some(true), Some(true), Some(true))
    );
}

#[test]
fn an_endpoint_names_its_pod_and_node_and_only_ips_of_its_type() {
    let p = pod("a", "10.0.0.1", true, json!([]));
    let svc = service(json!({}));
    let e = pod_to_endpoint(&p, &svc, "IPv4").unwrap();
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"addresses": ["10.0.0.1"], "conditions": {"ready": true, "serving": true, "terminating": false},
               "nodeName": "node-1",
               "targetRef": {"kind": "Pod", "namespace": "default", "name": "a", "uid": "uid-a"}})
    );
    assert!(pod_to_endpoint(&p, &svc, "IPv6").is_none());
}

#[test]
fn ports_are_named_as_the_service_numbered_as_the_pod() {
    let p = pod(
        "a",
        "10.0.0.1",
        true,
        json!([{"name": "http", "containerPort": 8080}]),
    );
    let svc = service(json!({"ports": [
        {"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"},
        {"port": 9090, "targetPort": "missing", "protocol": "TCP"},
        {"port": 53, "protocol": "UDP", "targetPort": 5353, "appProtocol": "dns"}]}));
    assert_eq!(
        serde_json::to_value(endpoint_ports(&svc, &p)).unwrap(),
        json!([{"name": "web", "port": 8080, "protocol": "TCP"},
               {"name": "", "port": 5353, "protocol": "UDP", "appProtocol": "dns"}])
    );
}

#[test]
fn address_types_follow_ip_families_then_the_cluster_ip() {
    assert_eq!(
        address_types(&service(json!({"ipFamilies": ["IPv6", "IPv4"]}))),
        ["IPv4", "IPv6"]
    );
    assert_eq!(address_types(&service(json!({"clusterIP": "fd00::1"}))), ["IPv6"]);
    assert_eq!(
        address_types(&service(json!({"clusterIP": "10.96.0.9"}))),
        ["IPv4"]
    );
    assert_eq!(
        address_types(&service(json!({"clusterIP": "None"}))),
        ["IPv4", "IPv6"]
    );
    assert_eq!(
        placeholder_address_type(&service(json!({"clusterIP": "None"}))),
        "IPv4"
    );
    assert_eq!(
        placeholder_address_type(&service(json!({"ipFamilies": ["IPv6"]}))),
        "IPv6"
    );
}

#[test]
fn labels_mirror_the_service_but_the_reserved_ones() {
    let mut svc = service(json!({"clusterIP": "None"}));
    svc.metadata.labels = Some(
        [
            ("tier", "front"),
            ("kubernetes.io/service-name", "spoof"),
            ("endpointslice.kubernetes.io/managed-by", "me"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    );
    assert_eq!(
        serde_json::to_value(slice_labels(&svc)).unwrap(),
        json!({"tier": "front", "service.kubernetes.io/headless": "", "kubernetes.io/service-name": "web",
               "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"})
    );
}

#[test]
fn a_new_slice_is_generated_and_owned_by_its_service() {
    let mut svc = service(json!({}));
    svc.metadata.uid = Some("svc-uid".into());
    let slice = new_slice(&svc, "IPv4", &[], Vec::new());
    assert_eq!(slice.metadata.generate_name.as_deref(), Some("web-"));
    let owner = &slice.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.uid.as_str()
        ),
        ("v1", "Service", "web", "svc-uid")
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(slice.ports, None);
}

#[test]
fn pods_are_grouped_by_their_resolved_ports() {
    let a = pod(
        "a",
        "10.0.0.1",
        true,
        json!([{"name": "http", "containerPort": 8080}]),
    );
    let b = pod(
        "b",
        "10.0.0.2",
        true,
        json!([{"name": "http", "containerPort": 8081}]),
    );
    let c = pod(
        "c",
        "10.0.0.3",
        false,
        json!([{"name": "http", "containerPort": 8080}]),
    );
    let svc =
        service(json!({"ports": [{"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"}]}));
    let groups = desired_groups(&svc, &[&c, &b, &a]);
    let summary: Vec<(i32, Vec<&str>)> = groups
        .iter()
        .map(|g| {
            let names = g
                .endpoints
                .iter()
                .map(|e| e.target_ref.as_ref().unwrap().name.as_deref().unwrap())
                .collect();
            (g.ports[0].port.unwrap(), names)
        })
        .collect();
    assert_eq!(summary, [(8080, vec!["a", "c"]), (8081, vec!["b"])]);
}
