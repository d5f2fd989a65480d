//! `desired_subsets` and `plan_endpoints`, case by case (after upstream
//! `endpoints_controller_test.go`: `TestSyncEndpointsItemsPreserveNoSelector`,
//! `...WithNamedPorts`, `...NotReady`, `TestSyncEndpointsHeadlessService`,
//! `TestSyncEndpointsItemsWithLabels`, publishNotReadyAddresses).

use k8s_openapi::api::core::v1::{Endpoints, Pod};
use serde_json::{Value, json};

use super::fixtures::{address, pod, service};
use crate::endpoint::plan::{EndpointsPlan, LAST_CHANGE_TRIGGER_TIME, desired_subsets, plan_endpoints};
use crate::endpoint::pods::{find_port, has_managed_endpoints, should_pod_be_in_endpoints};

fn subsets(svc_spec: Value, pods: &[Pod]) -> Value {
    let refs: Vec<&Pod> = pods.iter().collect();
    serde_json::to_value(desired_subsets(&service(svc_spec), &refs)).unwrap()
}

#[test]
fn a_numeric_target_port_takes_every_pod_ready_or_not() {
    let pods = [
        pod("a", "10.0.0.1", true, json!([])),
        pod("b", "10.0.0.2", false, json!([])),
    ];
    let got = subsets(
        json!({"ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]}),
        &pods,
    );
    assert_eq!(
        got,
        json!([{"addresses": [address("a", "10.0.0.1")], "notReadyAddresses": [address("b", "10.0.0.2")],
                "ports": [{"port": 8080, "protocol": "TCP"}]}])
    );
}

#[test]
fn a_named_target_port_is_looked_up_per_pod_and_pods_without_it_are_left_out() {
    let pods = [
        pod(
            "a",
            "10.0.0.1",
            true,
            json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"}]),
        ),
        pod(
            "b",
            "10.0.0.2",
            true,
            json!([{"name": "http", "containerPort": 8081, "protocol": "TCP"}]),
        ),
        pod(
            "c",
            "10.0.0.3",
            true,
            json!([{"name": "other", "containerPort": 9000, "protocol": "TCP"}]),
        ),
    ];
    let got = subsets(
        json!({"ports": [{"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"}]}),
        &pods,
    );
    // Two port numbers: two subsets; c has no `http` port.
    assert_eq!(
        got,
        json!([
            {"addresses": [address("a", "10.0.0.1")], "ports": [{"name": "web", "port": 8080, "protocol": "TCP"}]},
            {"addresses": [address("b", "10.0.0.2")], "ports": [{"name": "web", "port": 8081, "protocol": "TCP"}]},
        ])
    );
}

#[test]
fn a_named_port_of_another_protocol_does_not_match() {
    let p = pod(
        "a",
        "10.0.0.1",
        true,
        json!([{"name": "dns", "containerPort": 53, "protocol": "UDP"}]),
    );
    let svc = service(json!({"ports": [{"port": 53, "targetPort": "dns", "protocol": "TCP"}]}));
    let port = &svc.spec.as_ref().unwrap().ports.as_ref().unwrap()[0];
    assert_eq!(find_port(&p, port), None);
}

#[test]
fn publish_not_ready_addresses_lists_every_pod_as_ready() {
    let pods = [pod("a", "10.0.0.1", false, json!([]))];
    let got = subsets(
        json!({"publishNotReadyAddresses": true, "ports": [{"port": 80, "protocol": "TCP"}]}),
        &pods,
    );
    assert_eq!(
        got,
        json!([{"addresses": [address("a", "10.0.0.1")], "ports": [{"port": 80, "protocol": "TCP"}]}])
    );
}

#[test]
fn pods_without_ip_finished_or_being_deleted_are_left_out() {
    let mut no_ip = pod("a", "", true, json!([]));
    no_ip.status.as_mut().unwrap().pod_ips = None;
    let mut done = pod("b", "10.0.0.2", false, json!([]));
    done.status.as_mut().unwrap().phase = Some("Succeeded".into());
    let mut deleting = pod("c", "10.0.0.3", true, json!([]));
    deleting.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2023-11-14T22:20:00Z".parse().unwrap(),
    ));
    assert!(!should_pod_be_in_endpoints(&no_ip, true));
    assert!(!should_pod_be_in_endpoints(&done, true));
    assert!(!should_pod_be_in_endpoints(&deleting, false));
    assert!(should_pod_be_in_endpoints(&deleting, true));
    let got = subsets(
        json!({"ports": [{"port": 80, "protocol": "TCP"}]}),
        &[no_ip, done, deleting],
    );
    assert_eq!(got, json!([]));
}

#[test]
fn a_headless_service_without_ports_gets_addresses_without_ports() {
    let pods = [pod("a", "10.0.0.1", true, json!([]))];
    assert_eq!(
        subsets(json!({"clusterIP": "None"}), &pods),
        json!([{"addresses": [address("a", "10.0.0.1")]}])
    );
    // A service that is not headless gets nothing without ports.
    assert_eq!(subsets(json!({}), &pods), json!([]));
}

#[test]
fn services_without_selector_or_of_type_external_name_are_not_managed() {
    assert!(has_managed_endpoints(&service(json!({"ports": []}))));
    assert!(!has_managed_endpoints(&service(json!({"selector": null}))));
    assert!(!has_managed_endpoints(&service(json!({"type": "ExternalName"}))));
}

#[test]
fn the_plan_creates_then_updates_only_on_change() {
    let svc = service(json!({"ports": [{"port": 80, "protocol": "TCP"}]}));
    let a = pod("a", "10.0.0.1", true, json!([]));
    let EndpointsPlan::Create(created) = plan_endpoints(&svc, &[&a], None) else {
        panic!("expected a create");
    };
    assert_eq!(created.metadata.name.as_deref(), Some("web"));
    let annotations = created.metadata.annotations.clone().unwrap();
    // The later of the Service's creation and the pod's Ready transition.
    assert_eq!(annotations[LAST_CHANGE_TRIGGER_TIME], "2023-11-14T22:13:20Z");
    let mut live: Endpoints = created.clone();
    live.metadata.resource_version = Some("7".into());
    assert_eq!(plan_endpoints(&svc, &[&a], Some(&live)), EndpointsPlan::Nothing);
    // The Service's labels are mirrored.
    let mut labelled = svc.clone();
    labelled.metadata.labels = Some([("tier".to_string(), "front".to_string())].into());
    let EndpointsPlan::Update(updated) = plan_endpoints(&labelled, &[&a], Some(&live)) else {
        panic!("expected an update");
    };
    assert_eq!(updated.metadata.resource_version.as_deref(), Some("7"));
    assert_eq!(updated.metadata.labels.unwrap()["tier"], "front");
    // A pod gone: an update to no subsets.
    let EndpointsPlan::Update(emptied) = plan_endpoints(&svc, &[], Some(&live)) else {
        panic!("expected an update");
    };
    assert_eq!(emptied.subsets, None);
}

#[test]
fn a_headless_service_labels_its_endpoints() {
    let svc = service(json!({"clusterIP": "None"}));
    let EndpointsPlan::Create(created) = plan_endpoints(&svc, &[], None) else {
        panic!("expected a create");
    };
    assert_eq!(
        created.metadata.labels.unwrap()["service.kubernetes.io/headless"],
        ""
    );
}
