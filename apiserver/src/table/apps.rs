//! Tables of apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet,
//! ControllerRevision.
//!
//! Upstream: the `*ColumnDefinitions` and `printDeployment`,
//! `printReplicaSet`, `printStatefulSet`, `printDaemonSet`,
//! `printControllerRevision` of `pkg/printers/internalversion/printers.go`.
//! The four workload tables share their tail (Age, Containers, Images,
//! Selector): see `TablePrinter::workload` and `Row::workload`.

use serde_json::{Value, json};

use super::helpers::{controller_ref, selector_at};
use super::{Column, Row, TablePrinter, col};
use crate::jsonpath::{at, int_at, str_at};
use crate::labels::{format_labels, label_selector_string};

const TEMPLATE: &[&str] = &["spec", "template"];

/// `spec.selector` as upstream's `metav1.FormatLabelSelector` prints it.
fn selector(r: &Row) -> Option<Value> {
    Some(selector_at(r.obj, &["spec", "selector"]))
}

/// Ready as `readyReplicas/replicas`.
fn ready_of_desired(r: &Row) -> Value {
    let ready = int_at(r.obj, &["status", "readyReplicas"]);
    let desired = int_at(r.obj, &["spec", "replicas"]);
    json!(format!("{ready}/{desired}"))
}

pub(super) static DEPLOYMENT: TablePrinter = TablePrinter::workload(
    &[
        col("Ready", "string", D_READY),
        col("Up-to-date", "string", D_DEP_UPDATED),
        col("Available", "string", D_DEP_AVAILABLE),
    ],
    Some(D_DEP_SELECTOR),
    |r| {
        // Upstream prints this selector with LabelSelectorAsSelector: empty, not <none>.
        let selector = label_selector_string(at(r.obj, &["spec", "selector"]).unwrap_or(&Value::Null));
        let own = [
            ready_of_desired(r),
            json!(int_at(r.obj, &["status", "updatedReplicas"])),
            json!(int_at(r.obj, &["status", "availableReplicas"])),
        ];
        r.workload(own, TEMPLATE, Some(json!(selector)))
    },
);
const D_READY: &str = "Number of the pod with ready state";
const D_DEP_UPDATED: &str =
    "Total number of non-terminated pods targeted by this deployment that have the desired template spec.";
const D_DEP_AVAILABLE: &str =
    "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.";
const D_DEP_SELECTOR: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.";

pub(super) static REPLICA_SET: TablePrinter = TablePrinter::workload(
    &[
        col("Desired", "integer", D_RS_REPLICAS),
        col("Current", "integer", D_RS_CURRENT),
        col("Ready", "integer", D_RS_READY),
    ],
    Some(D_RS_SELECTOR),
    |r| {
        let counts = [
            ["spec", "replicas"],
            ["status", "replicas"],
            ["status", "readyReplicas"],
        ];
        r.workload(
            counts.map(|path| json!(int_at(r.obj, &path))),
            TEMPLATE,
            selector(r),
        )
    },
);
const D_RS_REPLICAS: &str = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller";
const D_RS_CURRENT: &str = "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller";
const D_RS_READY: &str = "The number of ready replicas for this replica set.";
const D_RS_SELECTOR: &str = "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

pub(super) static STATEFUL_SET: TablePrinter =
    TablePrinter::workload(&[col("Ready", "string", D_READY)], None, |r| {
        r.workload([ready_of_desired(r)], TEMPLATE, None)
    });

pub(super) static DAEMON_SET: TablePrinter = TablePrinter::workload(
    &[
        COUNTS[0].0,
        COUNTS[1].0,
        COUNTS[2].0,
        COUNTS[3].0,
        COUNTS[4].0,
        col("Node Selector", "string", D_DS_NODE_SELECTOR),
    ],
    Some(D_DS_SELECTOR),
    print_daemon_set,
);

const D_DS_DESIRED: &str = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_CURRENT: &str = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_READY: &str = "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.";
const D_DS_UPDATED: &str = "The total number of nodes that are running updated daemon pod";
const D_DS_AVAILABLE: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)";

/// The DaemonSet's count columns and the `status` field each shows.
const COUNTS: [(Column, &str); 5] = [
    (col("Desired", "integer", D_DS_DESIRED), "desiredNumberScheduled"),
    (col("Current", "integer", D_DS_CURRENT), "currentNumberScheduled"),
    (col("Ready", "integer", D_DS_READY), "numberReady"),
    (
        col("Up-to-date", "integer", D_DS_UPDATED),
        "updatedNumberScheduled",
    ),
    (col("Available", "integer", D_DS_AVAILABLE), "numberAvailable"),
];

const D_DS_NODE_SELECTOR: &str = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/";
const D_DS_SELECTOR: &str = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

fn print_daemon_set(r: &Row) -> Vec<Value> {
    let counts = COUNTS.map(|(_, field)| json!(int_at(r.obj, &["status", field])));
    let node_selector = at(r.obj, &["spec", "template", "spec", "nodeSelector"]).and_then(Value::as_object);
    let own = counts.into_iter().chain([json!(format_labels(node_selector))]);
    r.workload(own, TEMPLATE, selector(r))
}

pub(super) static CONTROLLER_REVISION: TablePrinter = TablePrinter::named(
    &[
        col("Controller", "string", "Controller of the object"),
        col("Revision", "string", D_CR_REVISION),
    ],
    &[],
    |r| {
        r.named(
            [json!(controller_of(r.obj)), json!(int_at(r.obj, &["revision"]))],
            [],
        )
    },
);
const D_CR_REVISION: &str = "Revision indicates the revision of the state represented by Data.";

/// The controller owner as `kind.group/name` in lower case, or `<none>`.
fn controller_of(obj: &Value) -> String {
    let Some(owner) = controller_ref(obj) else {
        return "<none>".to_string();
    };
    let kind = str_at(owner, &["kind"]);
    let group = str_at(owner, &["apiVersion"])
        .rsplit_once('/')
        .map(|(g, _)| g)
        .unwrap_or("");
    let group_kind = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let name = str_at(owner, &["name"]);
    if group_kind.is_empty() {
        name.to_string()
    } else {
        format!("{}/{name}", group_kind.to_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells, names};

    #[test]
    fn deployment_columns() {
        assert_eq!(
            names(&DEPLOYMENT),
            [
                "Name",
                "Ready",
                "Up-to-date",
                "Available",
                "Age",
                "Containers",
                "Images",
                "Selector"
            ]
        );
    }

    fn deployment(ready: i64, updated: i64, available: i64) -> Value {
        json!({
            "metadata": {"name": "web", "creationTimestamp": ago(45)},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}, {"name": "side", "image": "busybox"}]}}},
            "status": {"replicas": 4, "readyReplicas": ready, "updatedReplicas": updated, "availableReplicas": available}
        })
    }

    #[test]
    fn deployment_mid_rollout() {
        assert_eq!(
            cells(&DEPLOYMENT, &deployment(2, 1, 2)),
            json!([
                "web",
                "2/3",
                1,
                2,
                "45s",
                "nginx,side",
                "nginx:1.27,busybox",
                "app=web"
            ])
        );
        let mut empty_sel = deployment(0, 0, 0);
        empty_sel["spec"]["selector"] = json!({});
        assert_eq!(cells(&DEPLOYMENT, &empty_sel)[7], json!(""));
    }

    #[test]
    fn replica_set_stateful_set_daemon_set() {
        let rs = json!({
            "metadata": {"name": "web-7d4b9"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web", "pod-template-hash": "7d4b9"}},
                     "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}},
            "status": {"replicas": 3, "readyReplicas": 1}
        });
        assert_eq!(
            cells(&REPLICA_SET, &rs),
            json!([
                "web-7d4b9",
                3,
                3,
                1,
                "<unknown>",
                "nginx",
                "nginx",
                "app=web,pod-template-hash=7d4b9"
            ])
        );
        let sts = json!({"metadata": {"name": "db"}, "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "pg", "image": "postgres"}]}}},
                         "status": {"readyReplicas": 1}});
        assert_eq!(
            cells(&STATEFUL_SET, &sts),
            json!(["db", "1/2", "<unknown>", "pg", "postgres"])
        );
        let ds = json!({
            "metadata": {"name": "agent"},
            "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["agent"]}]},
                     "template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [{"name": "a", "image": "agent:1"}]}}},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2, "updatedNumberScheduled": 3, "numberAvailable": 2}
        });
        assert_eq!(
            cells(&DAEMON_SET, &ds),
            json!([
                "agent",
                3,
                3,
                2,
                3,
                2,
                "kubernetes.io/os=linux",
                "<unknown>",
                "a",
                "agent:1",
                "app in (agent)"
            ])
        );
        let mut no_sel = ds.clone();
        no_sel["spec"]["template"]["spec"]["nodeSelector"] = json!({});
        no_sel["spec"]["selector"] = Value::Null;
        let c = cells(&DAEMON_SET, &no_sel);
        assert_eq!((c[6].clone(), c[10].clone()), (json!("<none>"), json!("<none>")));
    }

    #[test]
    fn controller_revision_rows() {
        let cr = json!({
            "metadata": {"name": "agent-5f6", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": true}]},
            "revision": 2
        });
        assert_eq!(
            cells(&CONTROLLER_REVISION, &cr),
            json!(["agent-5f6", "daemonset.apps/agent", 2, "<unknown>"])
        );
        let core = json!({"metadata": {"name": "x", "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": true}]}, "revision": 1});
        assert_eq!(cells(&CONTROLLER_REVISION, &core)[1], json!("pod/p"));
        let orphan = json!({"metadata": {"name": "x"}, "revision": 1});
        assert_eq!(cells(&CONTROLLER_REVISION, &orphan)[1], json!("<none>"));
    }
}
