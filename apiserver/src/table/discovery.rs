//! The table of discovery.k8s.io/v1 EndpointSlice.
//!
//! Upstream: `endpointSliceColumnDefinitions` and `printEndpointSlice` of
//! `pkg/printers/internalversion/printers.go`.

use serde_json::{Value, json};

use super::helpers::{array, list_with_more, strings};
use super::{Row, TablePrinter, col};
use crate::jsonpath::str_at;

pub(super) static ENDPOINT_SLICE: TablePrinter = TablePrinter::named(
    &[
        col("AddressType", "string", D_ADDRESS_TYPE),
        col("Ports", "string", D_PORTS),
        col("Endpoints", "string", D_ENDPOINTS),
    ],
    &[],
    print_endpoint_slice,
);
const D_ADDRESS_TYPE: &str = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.";
const D_PORTS: &str = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.";
const D_ENDPOINTS: &str = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.";

fn print_endpoint_slice(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    // A port prints as its number, else its name, else `*` (all ports).
    let ports = array(obj.get("ports")).iter().map(|p| {
        match (
            p.get("port").and_then(Value::as_i64),
            p.get("name").and_then(Value::as_str),
        ) {
            (Some(n), _) => n.to_string(),
            (None, Some(name)) => name.to_string(),
            (None, None) => "*".to_string(),
        }
    });
    let addresses = array(obj.get("endpoints"))
        .iter()
        .flat_map(|e| strings(e.get("addresses")))
        .map(str::to_string);
    r.named(
        [
            json!(str_at(obj, &["addressType"])),
            json!(list_with_more(ports)),
            json!(list_with_more(addresses)),
        ],
        [],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells};

    #[test]
    fn endpoint_slice_rows() {
        let slice = json!({
            "metadata": {"name": "kubernetes", "creationTimestamp": ago(30)},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
            "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
        });
        assert_eq!(
            cells(&ENDPOINT_SLICE, &slice),
            json!(["kubernetes", "IPv4", "6443", "127.0.0.1", "30s"])
        );
        let many = json!({
            "metadata": {"name": "web-abc"},
            "addressType": "IPv4",
            "endpoints": [
                {"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2", "10.0.0.3"]},
                {"addresses": ["10.0.0.4"]}, {"addresses": ["10.0.0.5"]},
            ],
            "ports": [{"name": "http"}, {}, {"port": 1}, {"port": 2}],
        });
        let c = cells(&ENDPOINT_SLICE, &many);
        assert_eq!(c[2], json!("http,*,1 + 1 more..."));
        assert_eq!(c[3], json!("10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."));
        let empty = json!({"metadata": {"name": "e"}, "addressType": "IPv6"});
        let c = cells(&ENDPOINT_SLICE, &empty);
        assert_eq!((c[2].clone(), c[3].clone()), (json!("<unset>"), json!("<unset>")));
    }
}
