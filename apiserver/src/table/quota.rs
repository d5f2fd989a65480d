//! Tables of core/v1 ResourceQuota, LimitRange, PodTemplate and
//! ReplicationController.
//!
//! Upstream: `resourceQuotaColumnDefinitions` / `printResourceQuota`,
//! `limitRangeColumnDefinitions`, `podTemplateColumnDefinitions` /
//! `printPodTemplate` and `replicationControllerColumnDefinitions` /
//! `printReplicationController` of `pkg/printers/internalversion/printers.go`.

use serde_json::{Value, json};

use super::helpers::{container_cells, parse_time};
use super::{D_CREATED, NAME, Row, TablePrinter, col};
use crate::jsonpath::{at, int_at};
use crate::labels::format_labels;
use crate::quantity::Quantity;

pub(super) static RESOURCE_QUOTA: TablePrinter = TablePrinter::named(
    &[],
    &[
        col(
            "Request",
            "string",
            "Request represents a minimum amount of cpu/memory that a container may consume.",
        ),
        col(
            "Limit",
            "string",
            "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
        ),
    ],
    |r| {
        let (request, limit) = quota_columns(r.obj);
        r.named([], [json!(request), json!(limit)])
    },
);

/// A quantity as upstream's `Quantity.String()` prints it (`0` when absent).
fn canonical(v: Option<&Value>) -> String {
    match v {
        None => "0".to_string(),
        Some(v) => Quantity::from_json(v)
            .map(|q| q.to_string())
            .unwrap_or_else(|| v.as_str().unwrap_or_default().to_string()),
    }
}

/// `resource: used/hard` for each hard resource, sorted by name; the
/// `limits.*` ones in the second column.
fn quota_columns(obj: &Value) -> (String, String) {
    let hard = at(obj, &["status", "hard"]).and_then(Value::as_object);
    let used = at(obj, &["status", "used"]);
    let mut names: Vec<&String> = hard.map(|h| h.keys().collect()).unwrap_or_default();
    names.sort();
    let (mut request, mut limit) = (Vec::new(), Vec::new());
    for name in names {
        let cell = format!(
            "{name}: {}/{}",
            canonical(used.and_then(|u| u.get(name))),
            canonical(hard.and_then(|h| h.get(name)))
        );
        match name.split_once('.') {
            Some(("limits", _)) => limit.push(cell),
            _ => request.push(cell),
        }
    }
    (request.join(", "), limit.join(", "))
}

pub(super) static LIMIT_RANGE: TablePrinter =
    TablePrinter::exact(&[NAME, col("Created At", "date", D_CREATED)], |r| {
        let created = r
            .obj
            .pointer("/metadata/creationTimestamp")
            .and_then(parse_time)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_string());
        vec![r.name(), json!(created)]
    });

pub(super) static POD_TEMPLATE: TablePrinter = TablePrinter::exact(
    &[
        NAME,
        col("Containers", "string", "Names of each container in the template."),
        col(
            "Images",
            "string",
            "Images referenced by each container in the template.",
        ),
        col("Pod Labels", "string", "The labels for the pod template."),
    ],
    |r| {
        let containers = r.obj.pointer("/template/spec/containers");
        let (names, images) = container_cells(containers);
        let labels = format_labels(
            r.obj
                .pointer("/template/metadata/labels")
                .and_then(Value::as_object),
        );
        vec![r.name(), json!(names), json!(images), json!(labels)]
    },
);

pub(super) static REPLICATION_CONTROLLER: TablePrinter = TablePrinter::workload(
    &[
        col("Desired", "integer", D_RC_REPLICAS),
        col("Current", "integer", D_RC_CURRENT),
        col(
            "Ready",
            "integer",
            "The number of ready replicas for this replication controller.",
        ),
    ],
    Some(D_RC_SELECTOR),
    print_replication_controller,
);

fn print_replication_controller(r: &Row) -> Vec<Value> {
    let counts = [
        ["spec", "replicas"],
        ["status", "replicas"],
        ["status", "readyReplicas"],
    ];
    let selector = format_labels(at(r.obj, &["spec", "selector"]).and_then(Value::as_object));
    r.workload(
        counts.map(|path| json!(int_at(r.obj, &path))),
        &["spec", "template"],
        Some(json!(selector)),
    )
}

const D_RC_REPLICAS: &str = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_CURRENT: &str = "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller";
const D_RC_SELECTOR: &str = "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels#label-selectors";

#[cfg(test)]
mod tests {
    use super::super::testing::{ago, cells, names};
    use super::*;

    #[test]
    fn resource_quota_prints_used_over_hard_split_by_limits() {
        assert_eq!(names(&RESOURCE_QUOTA), ["Name", "Age", "Request", "Limit"]);
        let rq = json!({"metadata": {"name": "q", "creationTimestamp": ago(90)}, "status": {
            "hard": {"pods": "2", "requests.cpu": "1", "limits.memory": "1Gi", "limits.cpu": "2000m"},
            "used": {"pods": "1", "requests.cpu": "500m", "limits.memory": "128Mi"},
        }});
        assert_eq!(
            cells(&RESOURCE_QUOTA, &rq),
            json!([
                "q",
                "90s",
                "pods: 1/2, requests.cpu: 500m/1",
                "limits.cpu: 0/2, limits.memory: 128Mi/1Gi"
            ])
        );
    }

    #[test]
    fn pod_template_and_replication_controller_columns() {
        assert_eq!(
            names(&POD_TEMPLATE),
            ["Name", "Containers", "Images", "Pod Labels"]
        );
        let pt = json!({"metadata": {"name": "t"}, "template": {"metadata": {"labels": {"b": "2", "a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "busybox"}]}}});
        assert_eq!(
            cells(&POD_TEMPLATE, &pt),
            json!(["t", "c,d", "nginx,busybox", "a=1,b=2"])
        );
        assert_eq!(
            names(&REPLICATION_CONTROLLER),
            [
                "Name",
                "Desired",
                "Current",
                "Ready",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
        let rc = json!({"metadata": {"name": "rc", "creationTimestamp": ago(30)},
            "spec": {"replicas": 3, "selector": {"app": "web"}, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            "status": {"replicas": 2, "readyReplicas": 1}});
        assert_eq!(
            cells(&REPLICATION_CONTROLLER, &rc),
            json!(["rc", 3, 2, 1, "30s", "c", "nginx", "app=web"])
        );
        assert_eq!(names(&LIMIT_RANGE), ["Name", "Created At"]);
    }
}
