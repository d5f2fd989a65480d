//! `repack_subsets`, after upstream `pkg/api/v1/endpoints/util_test.go`
//! (`TestPackSubsets`).

use k8s_openapi::api::core::v1::EndpointSubset;
use serde_json::{Value, json};

use crate::endpoint::repack::repack_subsets;

fn addr(ip: &str) -> Value {
    json!({"ip": ip})
}

fn addr_uid(ip: &str, uid: &str) -> Value {
    json!({"ip": ip, "targetRef": {"uid": uid}})
}

fn port(name: &str, number: i32) -> Value {
    json!({"name": name, "port": number, "protocol": "TCP"})
}

fn repack(subsets: Value) -> Value {
    let subsets: Vec<EndpointSubset> = serde_json::from_value(subsets).unwrap();
    serde_json::to_value(repack_subsets(&subsets)).unwrap()
}

#[test]
fn cases() {
    let cases = [
        ("empty everything", json!([]), json!([])),
        (
            "one set, one ip, no ports",
            json!([{"addresses": [addr("1.2.3.4")]}]),
            json!([{"addresses": [addr("1.2.3.4")]}]),
        ),
        (
            "one set, two ips, one port, duplicates merged",
            json!([{"addresses": [addr("1.2.3.4"), addr("5.6.7.8"), addr("1.2.3.4")], "ports": [port("", 111)]}]),
            json!([{"addresses": [addr("1.2.3.4"), addr("5.6.7.8")], "ports": [port("", 111)]}]),
        ),
        (
            "same ip, different pods: kept apart",
            json!([{"addresses": [addr_uid("1.2.3.4", "uid-2"), addr_uid("1.2.3.4", "uid-1")], "ports": [port("", 111)]}]),
            json!([{"addresses": [addr_uid("1.2.3.4", "uid-1"), addr_uid("1.2.3.4", "uid-2")], "ports": [port("", 111)]}]),
        ),
        (
            "two sets with the same ports: merged",
            json!([{"addresses": [addr("1.2.3.4")], "ports": [port("", 111)]},
                   {"addresses": [addr("5.6.7.8")], "ports": [port("", 111)]}]),
            json!([{"addresses": [addr("1.2.3.4"), addr("5.6.7.8")], "ports": [port("", 111)]}]),
        ),
        (
            "one address on two ports, another on one",
            json!([{"addresses": [addr("1.2.3.4")], "ports": [port("a", 111)]},
                   {"addresses": [addr("1.2.3.4")], "ports": [port("b", 222)]},
                   {"addresses": [addr("5.6.7.8")], "ports": [port("a", 111)]}]),
            json!([{"addresses": [addr("1.2.3.4")], "ports": [port("b", 222)]},
                   {"addresses": [addr("1.2.3.4"), addr("5.6.7.8")], "ports": [port("a", 111)]}]),
        ),
        (
            "two sets with the same addresses: their ports join",
            json!([{"addresses": [addr("1.2.3.4")], "ports": [port("b", 222)]},
                   {"addresses": [addr("1.2.3.4")], "ports": [port("a", 111)]}]),
            json!([{"addresses": [addr("1.2.3.4")], "ports": [port("a", 111), port("b", 222)]}]),
        ),
        (
            "not ready trumps ready on the same port",
            json!([{"addresses": [addr("1.2.3.4")], "ports": [port("", 111)]},
                   {"notReadyAddresses": [addr("1.2.3.4")], "ports": [port("", 111)]}]),
            json!([{"notReadyAddresses": [addr("1.2.3.4")], "ports": [port("", 111)]}]),
        ),
        (
            "ready and not ready addresses share a subset",
            json!([{"addresses": [addr("1.2.3.4")], "ports": [port("", 111)]},
                   {"notReadyAddresses": [addr("5.6.7.8")], "ports": [port("", 111)]}]),
            json!([{"addresses": [addr("1.2.3.4")], "notReadyAddresses": [addr("5.6.7.8")], "ports": [port("", 111)]}]),
        ),
    ];
    for (name, input, want) in cases {
        assert_eq!(repack(input), want, "{name}");
    }
}
