//! The Pod table: `podColumnDefinitions` and `printPod` of upstream
//! `pkg/printers/internalversion/printers.go`.
//!
//! The status walk follows `printPod`: the reason starts from the phase (or
//! `status.reason`, or SchedulingGated), init containers are walked first
//! (sidecars — init containers with `restartPolicy: Always` — count toward
//! Ready once started), then the main containers from last to first, so the
//! first container's reason wins. Simplified: the v1 pod IP stands in for the
//! internal type's `PodIPs[0]` (see `pod_ip`).

use jiff::Timestamp;
use serde_json::{Value, json};

use super::helpers::{
    array, conditions, has_condition, human_duration_between, is_deleting, or_none, parse_time,
};
use super::{Row, TablePrinter, col, wide};
use crate::fields::pod_ip;
use crate::jsonpath::{bool_at, int_at, str_at};

pub(super) static POD: TablePrinter = TablePrinter::named(
    &[
        col(
            "Ready",
            "string",
            "The aggregate readiness state of this pod for accepting traffic.",
        ),
        col(
            "Status",
            "string",
            "The aggregate status of the containers in this pod.",
        ),
        col("Restarts", "string", D_RESTARTS),
    ],
    &[
        wide("IP", "string", D_IP),
        wide("Node", "string", D_NODE),
        wide("Nominated Node", "string", D_NOMINATED),
        wide("Readiness Gates", "string", D_GATES),
    ],
    print_pod,
)
.with_conditions(pod_conditions);
const D_RESTARTS: &str = "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.";
const D_IP: &str =
    "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.";
const D_NODE: &str = "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename";
const D_NOMINATED: &str = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.";
const D_GATES: &str = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates";

fn print_pod(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let total = array(obj.pointer("/spec/containers")).len()
        + array(obj.pointer("/spec/initContainers"))
            .iter()
            .filter(|c| is_sidecar(c))
            .count();
    let mut walk = PodWalk {
        reason: initial_pod_reason(obj),
        ..PodWalk::default()
    };
    walk.init_containers(obj);
    if !walk.initializing || has_condition(obj, "Initialized") {
        walk.main_containers(obj);
    }
    let phase = str_at(obj, &["status", "phase"]);
    if is_deleting(obj) {
        if str_at(obj, &["status", "reason"]) == "NodeLost" {
            walk.reason = "Unknown".to_string();
        } else if phase != "Succeeded" && phase != "Failed" {
            walk.reason = "Terminating".to_string();
        }
    }
    let restarts = match walk.last_restart {
        Some(t) if walk.restarts != 0 => {
            format!("{} ({} ago)", walk.restarts, human_duration_between(t, r.now))
        }
        _ => walk.restarts.to_string(),
    };
    r.named(
        [
            json!(format!("{}/{total}", walk.ready)),
            json!(walk.reason),
            json!(restarts),
        ],
        [
            json!(or_none(pod_ip(obj))),
            json!(or_none(str_at(obj, &["spec", "nodeName"]).to_string())),
            json!(or_none(str_at(obj, &["status", "nominatedNodeName"]).to_string())),
            json!(readiness_gates(obj)),
        ],
    )
}

/// Row conditions: `Completed` once the pod is Succeeded or Failed.
fn pod_conditions(obj: &Value) -> Option<Value> {
    let (reason, message) = match str_at(obj, &["status", "phase"]) {
        "Succeeded" => ("Succeeded", "The pod has completed successfully."),
        "Failed" => ("Failed", "The pod failed."),
        _ => return None,
    };
    Some(json!([{
        "type": "Completed",
        "status": "True",
        "reason": reason,
        "message": message,
    }]))
}

/// Accumulated state of the pod status walk (`printPod`).
#[derive(Default)]
struct PodWalk {
    reason: String,
    ready: usize,
    restarts: i64,
    last_restart: Option<Timestamp>,
    sidecar_restarts: i64,
    sidecar_last_restart: Option<Timestamp>,
    initializing: bool,
}

fn initial_pod_reason(obj: &Value) -> String {
    let mut reason = str_at(obj, &["status", "phase"]).to_string();
    let status_reason = str_at(obj, &["status", "reason"]);
    if !status_reason.is_empty() {
        reason = status_reason.to_string();
    }
    let gated = conditions(obj)
        .iter()
        .any(|c| str_at(c, &["type"]) == "PodScheduled" && str_at(c, &["reason"]) == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".to_string();
    }
    reason
}

impl PodWalk {
    fn note_restarts(&mut self, status: &Value, sidecar: bool) {
        let count = int_at(status, &["restartCount"]);
        let finished = status
            .pointer("/lastState/terminated/finishedAt")
            .and_then(parse_time);
        self.restarts += count;
        self.last_restart = later(self.last_restart, finished);
        if sidecar {
            self.sidecar_restarts += count;
            self.sidecar_last_restart = later(self.sidecar_last_restart, finished);
        }
    }

    fn init_containers(&mut self, obj: &Value) {
        let specs = array(obj.pointer("/spec/initContainers"));
        let statuses = array(obj.pointer("/status/initContainerStatuses"));
        for (i, status) in statuses.iter().enumerate() {
            let name = str_at(status, &["name"]);
            let sidecar = specs
                .iter()
                .any(|c| str_at(c, &["name"]) == name && is_sidecar(c));
            self.note_restarts(status, sidecar);
            let terminated = status.pointer("/state/terminated").filter(|v| !v.is_null());
            let waiting_reason = status
                .pointer("/state/waiting/reason")
                .and_then(Value::as_str)
                .unwrap_or("");
            if terminated.is_some_and(|t| int_at(t, &["exitCode"]) == 0) {
                continue;
            }
            if sidecar && status.get("started").and_then(Value::as_bool) == Some(true) {
                if bool_at(status, &["ready"]) {
                    self.ready += 1;
                }
                continue;
            }
            self.reason = if let Some(t) = terminated {
                format!("Init:{}", termination_reason(t))
            } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
                format!("Init:{waiting_reason}")
            } else {
                format!("Init:{i}/{}", specs.len())
            };
            self.initializing = true;
            break;
        }
    }

    fn main_containers(&mut self, obj: &Value) {
        self.restarts = self.sidecar_restarts;
        self.last_restart = self.sidecar_last_restart;
        let mut has_running = false;
        for status in array(obj.pointer("/status/containerStatuses")).iter().rev() {
            self.note_restarts(status, false);
            let waiting_reason = status
                .pointer("/state/waiting/reason")
                .and_then(Value::as_str)
                .unwrap_or("");
            let terminated = status.pointer("/state/terminated").filter(|v| !v.is_null());
            let running = status.pointer("/state/running").is_some_and(|v| !v.is_null());
            if !waiting_reason.is_empty() {
                self.reason = waiting_reason.to_string();
            } else if let Some(t) = terminated {
                self.reason = termination_reason(t);
            } else if bool_at(status, &["ready"]) && running {
                has_running = true;
                self.ready += 1;
            }
        }
        if self.reason == "Completed" && has_running {
            self.reason = if has_condition(obj, "Ready") {
                "Running"
            } else {
                "NotReady"
            }
            .to_string();
        }
    }
}

/// A terminated state's reason, or `Signal:<n>` / `ExitCode:<n>` when it has none.
fn termination_reason(terminated: &Value) -> String {
    let reason = str_at(terminated, &["reason"]);
    if !reason.is_empty() {
        return reason.to_string();
    }
    match int_at(terminated, &["signal"]) {
        0 => format!("ExitCode:{}", int_at(terminated, &["exitCode"])),
        signal => format!("Signal:{signal}"),
    }
}

fn is_sidecar(container: &Value) -> bool {
    str_at(container, &["restartPolicy"]) == "Always"
}

fn later(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

fn readiness_gates(obj: &Value) -> String {
    let gates = array(obj.pointer("/spec/readinessGates"));
    if gates.is_empty() {
        return "<none>".to_string();
    }
    let ready = gates
        .iter()
        .filter(|g| {
            let ty = str_at(g, &["conditionType"]);
            conditions(obj)
                .iter()
                .find(|c| str_at(c, &["type"]) == ty)
                .is_some_and(|c| str_at(c, &["status"]) == "True")
        })
        .count();
    format!("{ready}/{}", gates.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells, names};

    #[test]
    fn pod_columns() {
        assert_eq!(
            names(&POD),
            [
                "Name",
                "Ready",
                "Status",
                "Restarts",
                "Age",
                "IP",
                "Node",
                "Nominated Node",
                "Readiness Gates"
            ]
        );
    }

    fn running_pod() -> Value {
        json!({
            "metadata": {"name": "web-1", "namespace": "default", "creationTimestamp": ago(3600)},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx"}]},
            "status": {
                "phase": "Running",
                "podIP": "10.0.0.9",
                "podIPs": [{"ip": "10.0.0.9"}],
                "conditions": [{"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "True"}],
                "containerStatuses": [{
                    "name": "app", "ready": true, "restartCount": 0, "started": true,
                    "state": {"running": {"startedAt": ago(3500)}}
                }]
            }
        })
    }

    #[test]
    fn pod_running() {
        assert_eq!(
            cells(&POD, &running_pod()),
            json!([
                "web-1", "1/1", "Running", "0", "60m", "10.0.0.9", "node-1", "<none>", "<none>"
            ])
        );
        assert_eq!(POD.row_conditions(&running_pod()), None);
    }

    #[test]
    fn pod_pending_unscheduled() {
        let pod = json!({
            "metadata": {"name": "p", "creationTimestamp": ago(5)},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Pending"}
        });
        assert_eq!(
            cells(&POD, &pod),
            json!([
                "p", "0/2", "Pending", "0", "5s", "<none>", "<none>", "<none>", "<none>"
            ])
        );
    }

    #[test]
    fn pod_crash_loop_with_restarts() {
        let pod = json!({
            "metadata": {"name": "crash", "creationTimestamp": ago(7200)},
            "spec": {"containers": [{"name": "app"}]},
            "status": {
                "phase": "Running",
                "containerStatuses": [{
                    "name": "app", "ready": false, "restartCount": 5,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(90)}}
                }]
            }
        });
        let c = cells(&POD, &pod);
        assert_eq!(c[1], json!("0/1"));
        assert_eq!(c[2], json!("CrashLoopBackOff"));
        assert_eq!(c[3], json!("5 (90s ago)"));
        assert_eq!(c[4], json!("120m"));
    }

    #[test]
    fn pod_reverse_walk_first_container_reason_wins() {
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "state": {"waiting": {"reason": "ImagePullBackOff"}}},
                {"name": "b", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
            ]}
        });
        let c = cells(&POD, &pod);
        assert_eq!(c[2], json!("ImagePullBackOff"));
        assert_eq!(c[4], json!("<unknown>"));
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "b", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
            ]}
        });
        assert_eq!(cells(&POD, &pod)[2], json!("Signal:9"));
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "b", "state": {"terminated": {"exitCode": 3}}}
            ]}
        });
        assert_eq!(cells(&POD, &pod)[2], json!("ExitCode:3"));
    }

    #[test]
    fn pod_completed_with_running_container() {
        let mut pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [
                    {"name": "a", "ready": true, "state": {"running": {}}},
                    {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
                ]}
        });
        assert_eq!(cells(&POD, &pod)[2], json!("Running"));
        assert_eq!(cells(&POD, &pod)[1], json!("1/2"));
        pod["status"]["conditions"][0]["status"] = json!("False");
        assert_eq!(cells(&POD, &pod)[2], json!("NotReady"));
    }

    #[test]
    fn pod_terminating_and_unknown() {
        let mut pod = running_pod();
        pod["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(cells(&POD, &pod)[2], json!("Terminating"));
        pod["status"]["reason"] = json!("NodeLost");
        assert_eq!(cells(&POD, &pod)[2], json!("Unknown"));
        let mut done = running_pod();
        done["status"]["phase"] = json!("Succeeded");
        done["status"]["containerStatuses"][0]["state"] =
            json!({"terminated": {"exitCode": 0, "reason": "Completed"}});
        done["status"]["containerStatuses"][0]["ready"] = json!(false);
        done["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(cells(&POD, &done)[2], json!("Completed"));
    }

    #[test]
    fn pod_init_containers() {
        let base = |statuses: Value| {
            json!({
                "metadata": {"name": "p"},
                "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]},
                "status": {"phase": "Pending", "initContainerStatuses": statuses,
                    "containerStatuses": [{"name": "a", "state": {"waiting": {"reason": "PodInitializing"}}}]}
            })
        };
        let pod = base(json!([
            {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
            {"name": "i2", "state": {"running": {}}}
        ]));
        assert_eq!(cells(&POD, &pod)[2], json!("Init:1/2"));
        let pod = base(json!([
            {"name": "i1", "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "restartCount": 2,
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(30)}}}
        ]));
        let c = cells(&POD, &pod);
        assert_eq!(c[2], json!("Init:CrashLoopBackOff"));
        assert_eq!(c[3], json!("2 (30s ago)"));
        let pod = base(json!([{"name": "i1", "state": {"terminated": {"exitCode": 2}}}]));
        assert_eq!(cells(&POD, &pod)[2], json!("Init:ExitCode:2"));
        let pod = base(json!([{"name": "i1", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]));
        assert_eq!(cells(&POD, &pod)[2], json!("Init:Error"));
        let pod = base(json!([{"name": "i1", "state": {"waiting": {"reason": "PodInitializing"}}}]));
        assert_eq!(cells(&POD, &pod)[2], json!("Init:0/2"));
    }

    #[test]
    fn pod_sidecar_counts_and_restarts() {
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {
                "initContainers": [{"name": "proxy", "restartPolicy": "Always"}, {"name": "setup"}],
                "containers": [{"name": "app"}]
            },
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
                "initContainerStatuses": [
                    {"name": "proxy", "started": true, "ready": true, "restartCount": 1,
                     "state": {"running": {}}, "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(600)}}},
                    {"name": "setup", "restartCount": 4, "state": {"terminated": {"exitCode": 0}},
                     "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(60)}}}
                ],
                "containerStatuses": [{"name": "app", "ready": true, "restartCount": 2, "state": {"running": {}},
                    "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(300)}}}]
            }
        });
        let c = cells(&POD, &pod);
        assert_eq!(c[1], json!("2/2"));
        assert_eq!(c[2], json!("Running"));
        // Only sidecar restarts survive from the init walk: 1 + 2, last at 300s ago.
        assert_eq!(c[3], json!("3 (5m ago)"));
    }

    #[test]
    fn pod_scheduling_gated_and_gates_and_conditions() {
        let mut pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}], "readinessGates": [{"conditionType": "x/ok"}, {"conditionType": "x/lb"}]},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"},
                {"type": "x/ok", "status": "True"}
            ]}
        });
        let c = cells(&POD, &pod);
        assert_eq!(c[2], json!("SchedulingGated"));
        assert_eq!(c[8], json!("1/2"));
        pod["status"]["phase"] = json!("Succeeded");
        assert_eq!(
            POD.row_conditions(&pod),
            Some(
                json!([{"type": "Completed", "status": "True", "reason": "Succeeded",
                         "message": "The pod has completed successfully."}])
            )
        );
        pod["status"]["phase"] = json!("Failed");
        assert_eq!(
            POD.row_conditions(&pod).unwrap()[0]["message"],
            json!("The pod failed.")
        );
        assert_eq!(super::super::apps::DEPLOYMENT.row_conditions(&pod), None);
    }
}
