//! The table of apiregistration.k8s.io/v1 APIService.
//!
//! Upstream: the `ConvertToTable` of
//! `staging/src/k8s.io/kube-aggregator/pkg/registry/apiservice/etcd/etcd.go`:
//! Name, Service (`Local` for the API server's own groups), Available (the
//! `Available` condition, with its reason when not True), Age.

use serde_json::{Value, json};

use super::helpers::conditions;
use super::{Row, TablePrinter, col};
use crate::jsonpath::str_at;

pub(super) static API_SERVICE: TablePrinter = TablePrinter::named(
    &[
        col(
            "Service",
            "string",
            "The reference to the service that hosts this API endpoint.",
        ),
        col("Available", "string", "Whether this service is available."),
    ],
    &[],
    print_api_service,
);

fn print_api_service(r: &Row) -> Vec<Value> {
    let service = match r.obj.pointer("/spec/service").filter(|s| s.is_object()) {
        Some(s) => format!("{}/{}", str_at(s, &["namespace"]), str_at(s, &["name"])),
        None => "Local".to_string(),
    };
    r.named([json!(service), json!(available(r.obj))], [])
}

/// `True`, `False (Reason)`, or `Unknown` without the condition.
fn available(obj: &Value) -> String {
    let Some(c) = conditions(obj).iter().find(|c| c["type"] == "Available") else {
        return "Unknown".to_string();
    };
    let (status, reason) = (str_at(c, &["status"]), str_at(c, &["reason"]));
    if status == "True" || reason.is_empty() {
        status.to_string()
    } else {
        format!("{status} ({reason})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::ago;

    /// The row's cells as a vector.
    fn cells(printer: &TablePrinter, obj: &Value) -> Vec<Value> {
        crate::table::testing::cells(printer, obj)
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn local_api_services_are_available() {
        let o = json!({"metadata": {"name": "v1.apps", "creationTimestamp": ago(60)},
            "spec": {"group": "apps", "version": "v1", "service": null},
            "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]}});
        assert_eq!(
            cells(&API_SERVICE, &o),
            vec![json!("v1.apps"), json!("Local"), json!("True"), json!("60s")]
        );
    }

    #[test]
    fn remote_api_services_show_the_reason_they_are_not_available() {
        let o = json!({"metadata": {"name": "v1beta1.metrics.k8s.io"},
            "spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}},
            "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}});
        let row = cells(&API_SERVICE, &o);
        assert_eq!(
            row[1..3],
            [
                json!("kube-system/metrics-server"),
                json!("False (MissingEndpoints)")
            ]
        );
        let none = json!({"metadata": {"name": "x"}, "spec": {}});
        assert_eq!(cells(&API_SERVICE, &none)[2], json!("Unknown"));
    }
}
