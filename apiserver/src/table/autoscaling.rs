//! The table of HorizontalPodAutoscaler (autoscaling/v2, and v1 through its v2 form).
//!
//! Upstream: `horizontalPodAutoscalerColumnDefinitions`, `printHorizontalPodAutoscaler`
//! and `formatHPAMetrics` of `pkg/printers/internalversion/printers.go`; upstream
//! prints the internal object whatever the version asked for, so a v1 row is
//! printed from the object converted to v2 ([`crate::conversion::autoscaling`]).

use serde_json::{Value, json};

use super::helpers::array;
use super::{Row, TablePrinter, col};
use crate::conversion::autoscaling::v1_to_v2;
use crate::jsonpath::{int_at, str_at};

pub(super) static HORIZONTAL_POD_AUTOSCALER: TablePrinter = TablePrinter::named(COLUMNS, &[], print_hpa);

pub(super) static HORIZONTAL_POD_AUTOSCALER_V1: TablePrinter =
    TablePrinter::named(COLUMNS, &[], print_hpa_v1);

const COLUMNS: &[super::Column] = &[
    col("Reference", "string", D_REFERENCE),
    col("Targets", "string", D_TARGETS),
    col("MinPods", "string", D_MIN),
    col("MaxPods", "string", D_MAX),
    col("Replicas", "string", D_REPLICAS),
];
const D_REFERENCE: &str = "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.";
const D_TARGETS: &str = "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.";
const D_MIN: &str = "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.";
const D_MAX: &str = "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.";
const D_REPLICAS: &str = "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.";

fn print_hpa_v1(r: &Row) -> Vec<Value> {
    match v1_to_v2(r.obj.clone()) {
        Ok(v2) => print_hpa(&Row { obj: &v2, now: r.now }),
        Err(_) => print_hpa(r),
    }
}

fn print_hpa(r: &Row) -> Vec<Value> {
    let o = r.obj;
    let reference = format!(
        "{}/{}",
        str_at(o, &["spec", "scaleTargetRef", "kind"]),
        str_at(o, &["spec", "scaleTargetRef", "name"])
    );
    let min = match o.pointer("/spec/minReplicas").and_then(Value::as_i64) {
        Some(n) => n.to_string(),
        None => "<unset>".to_string(),
    };
    let specs = array(o.pointer("/spec/metrics"));
    let statuses = array(o.pointer("/status/currentMetrics"));
    r.named(
        [
            json!(reference),
            json!(format_hpa_metrics(specs, statuses)),
            json!(min),
            json!(int_at(o, &["spec", "maxReplicas"])),
            json!(int_at(o, &["status", "currentReplicas"])),
        ],
        [],
    )
}

/// `formatHPAMetrics`: `current/target` per metric, at most two, then `+ N more...`.
fn format_hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    if specs.is_empty() {
        return "<none>".to_string();
    }
    const MAXIMUM: usize = 2;
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| format_metric(spec, statuses.get(i)))
        .collect();
    let shown = list[..list.len().min(MAXIMUM)].join(", ");
    if list.len() > MAXIMUM {
        format!("{shown} + {} more...", list.len() - MAXIMUM)
    } else {
        shown
    }
}

fn format_metric(spec: &Value, status: Option<&Value>) -> String {
    let unknown = || "<unknown>".to_string();
    // A quantity of the status at `path`, when the status has the same source.
    let current = |source: &str, path: &[&str]| -> String {
        status
            .and_then(|s| s.get(source))
            .filter(|s| s.is_object())
            .map(|s| {
                let mut v = s;
                for p in path {
                    v = &v[*p];
                }
                quantity(v)
            })
            .unwrap_or_else(unknown)
    };
    let target = |source: &str, field: &str| quantity(&spec[source]["target"][field]);
    match spec["type"].as_str().unwrap_or("") {
        "External" | "Object" => {
            let source = if spec["type"] == "External" {
                "external"
            } else {
                "object"
            };
            if !spec[source]["target"]["averageValue"].is_null() {
                let has = status.is_some_and(|s| !s[source]["current"]["averageValue"].is_null());
                let cur = if has {
                    current(source, &["current", "averageValue"])
                } else {
                    unknown()
                };
                format!("{cur}/{} (avg)", target(source, "averageValue"))
            } else {
                format!(
                    "{}/{}",
                    current(source, &["current", "value"]),
                    target(source, "value")
                )
            }
        }
        "Pods" => format!(
            "{}/{}",
            current("pods", &["current", "averageValue"]),
            target("pods", "averageValue")
        ),
        kind @ ("Resource" | "ContainerResource") => {
            let source = if kind == "Resource" {
                "resource"
            } else {
                "containerResource"
            };
            let name = str_at(spec, &[source, "name"]);
            if !spec[source]["target"]["averageValue"].is_null() {
                let cur = current(source, &["current", "averageValue"]);
                format!("{name}: {cur}/{}", target(source, "averageValue"))
            } else {
                let cur = status
                    .and_then(|s| s[source]["current"]["averageUtilization"].as_i64())
                    .map_or_else(unknown, |u| format!("{u}%"));
                let tgt = spec[source]["target"]["averageUtilization"]
                    .as_i64()
                    .map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
                format!("{name}: {cur}/{tgt}")
            }
        }
        _ => "<unknown type>".to_string(),
    }
}

/// A quantity as Go's `Quantity.String()` prints the stored string; an
/// unset one is `0`.
fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "0".to_string(),
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

    fn hpa(metrics: Value, status: Value) -> Value {
        json!({"apiVersion": "autoscaling/v2", "metadata": {"name": "web", "creationTimestamp": ago(30)},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2,
                     "maxReplicas": 5, "metrics": metrics}, "status": status})
    }

    fn cpu(u: i64) -> Value {
        json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": u}}})
    }

    #[test]
    fn a_new_hpa_prints_its_cpu_target_as_unknown() {
        let o = hpa(json!([cpu(80)]), json!({"desiredReplicas": 0}));
        assert_eq!(
            cells(&HORIZONTAL_POD_AUTOSCALER, &o),
            vec![
                json!("web"),
                json!("Deployment/web"),
                json!("cpu: <unknown>/80%"),
                json!("2"),
                json!(5),
                json!(0),
                json!("30s")
            ]
        );
    }

    #[test]
    fn more_than_two_metrics_are_summed_up() {
        let pods = json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}});
        let memory = json!({"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}});
        let status = json!({"currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45}}}]});
        let o = hpa(json!([cpu(80), pods, memory]), status);
        assert_eq!(
            cells(&HORIZONTAL_POD_AUTOSCALER, &o)[2],
            json!("cpu: 45%/80%, <unknown>/1k + 1 more...")
        );
    }

    #[test]
    fn a_v1_row_is_printed_from_its_v2_form() {
        let o = json!({"apiVersion": "autoscaling/v1", "metadata": {"name": "web", "creationTimestamp": ago(30)},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3,
                     "targetCPUUtilizationPercentage": 60}, "status": {"currentReplicas": 1, "desiredReplicas": 1}});
        let row = cells(&HORIZONTAL_POD_AUTOSCALER_V1, &o);
        assert_eq!(row[2], json!("cpu: <unknown>/60%"));
        assert_eq!(row[3], json!("<unset>"));
        assert_eq!(row[5], json!(1));
    }
}
