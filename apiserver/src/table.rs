//! Server-side Table printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).
//!
//! Columns and cells follow upstream `pkg/printers/internalversion/printers.go`
//! (v1.33), `staging/.../apimachinery/pkg/util/duration/duration.go` (HumanDuration)
//! and, for kinds without a printer, `staging/.../apiserver/pkg/registry/rest/table.go`
//! (Name + "Created At"). The server always generates wide rows, so every row holds
//! all cells, priority-1 ones included. See /work/shared/API_DETAILS.md §1.
//!
//! Simplifications: objects are v1 JSON, so the few v1->internal conversions the
//! printers depend on are applied by hand (pod IP, service cluster IPs, secret
//! `stringData`, events.k8s.io field names). Column descriptions are the upstream
//! OpenAPI field docs copied as constants; they are not user-visible.

use crate::selector::{format_label_selector, format_labels, label_selector_string, pod_ip};
use jiff::Timestamp;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

/// The `columnDefinitions` of a Table for `group`/`kind` (core group is "").
pub fn column_definitions(group: &str, kind: &str) -> Vec<Value> {
    columns(group, kind).iter().map(Column::to_json).collect()
}

/// The cells of one row, in column order, for the v1 JSON object `obj`.
pub fn row_cells(group: &str, kind: &str, obj: &Value, now: Timestamp) -> Vec<Value> {
    let p = Printer { obj, now };
    match (group, kind) {
        ("", "Pod") => p.pod(),
        ("", "Node") => p.node(),
        ("", "Namespace") => p.namespace(),
        ("", "Service") => p.service(),
        ("", "Endpoints") => p.endpoints(),
        ("", "ConfigMap") => p.config_map(),
        ("", "Secret") => p.secret(),
        ("", "ServiceAccount") => p.service_account(),
        ("", "Event") => p.event(),
        ("events.k8s.io", "Event") => Printer {
            obj: &events_to_core(obj),
            now,
        }
        .event(),
        ("apps", "Deployment") => p.deployment(),
        ("apps", "ReplicaSet") => p.replica_set(),
        ("apps", "StatefulSet") => p.stateful_set(),
        ("apps", "DaemonSet") => p.daemon_set(),
        ("apps", "ControllerRevision") => p.controller_revision(),
        ("batch", "Job") => p.job(),
        ("batch", "CronJob") => p.cron_job(),
        ("coordination.k8s.io", "Lease") => p.lease(),
        ("discovery.k8s.io", "EndpointSlice") => p.endpoint_slice(),
        _ => p.default_row(),
    }
}

/// Row conditions: only pods carry one, `Completed` once the pod is Succeeded/Failed.
pub fn row_conditions(group: &str, kind: &str, obj: &Value) -> Option<Value> {
    if (group, kind) != ("", "Pod") {
        return None;
    }
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

/// `duration.HumanDuration` for a signed number of whole seconds (truncated toward
/// zero, as Go's `int(d.Seconds())`).
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    if hours < 24 * 365 * 8 {
        return with_remainder(days / 365, "y", days % 365, "d");
    }
    format!("{}y", days / 365)
}

/// HumanDuration of `to - from`, truncating sub-second parts toward zero.
pub fn human_duration_between(from: Timestamp, to: Timestamp) -> String {
    human_duration(to.duration_since(from).as_secs())
}

/// `translateTimestampSince`: `<unknown>` for a missing/unparsable timestamp.
pub fn translate_timestamp_since(ts: Option<&Value>, now: Timestamp) -> String {
    match ts.and_then(parse_time) {
        Some(t) => human_duration_between(t, now),
        None => "<unknown>".to_string(),
    }
}

fn with_remainder(major: i64, major_unit: &str, minor: i64, minor_unit: &str) -> String {
    if minor == 0 {
        format!("{major}{major_unit}")
    } else {
        format!("{major}{major_unit}{minor}{minor_unit}")
    }
}

// ---------------------------------------------------------------------------
// Column definitions
// ---------------------------------------------------------------------------

struct Column {
    name: &'static str,
    ty: &'static str,
    format: &'static str,
    description: &'static str,
    priority: i64,
}

impl Column {
    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.ty,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

const fn col(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name,
        ty,
        format: "",
        description,
        priority: 0,
    }
}

const fn wide(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name,
        ty,
        format: "",
        description,
        priority: 1,
    }
}

const NAME: Column = Column {
    name: "Name",
    ty: "string",
    format: "name",
    description: D_NAME,
    priority: 0,
};
const AGE: Column = col("Age", "string", D_CREATED);
const CONTAINERS: Column = wide("Containers", "string", "Names of each container in the template.");
const IMAGES: Column = wide(
    "Images",
    "string",
    "Images referenced by each container in the template.",
);

fn columns(group: &str, kind: &str) -> Vec<Column> {
    match (group, kind) {
        ("", "Pod") => vec![
            NAME,
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
            col("Restarts", "string", D_POD_RESTARTS),
            AGE,
            wide("IP", "string", D_POD_IP),
            wide("Node", "string", D_POD_NODE),
            wide("Nominated Node", "string", D_POD_NOMINATED),
            wide("Readiness Gates", "string", D_POD_GATES),
        ],
        ("", "Node") => vec![
            NAME,
            col("Status", "string", "The status of the node"),
            col("Roles", "string", "The roles of the node"),
            AGE,
            col("Version", "string", D_KUBELET),
            wide("Internal-IP", "string", D_ADDRESSES),
            wide("External-IP", "string", D_ADDRESSES),
            wide("OS-Image", "string", D_OS_IMAGE),
            wide("Kernel-Version", "string", D_KERNEL),
            wide("Container-Runtime", "string", D_RUNTIME),
        ],
        ("", "Namespace") => vec![NAME, col("Status", "string", "The status of the namespace"), AGE],
        ("", "Service") => vec![
            NAME,
            col("Type", "string", D_SVC_TYPE),
            col("Cluster-IP", "string", D_SVC_CLUSTER_IP),
            col("External-IP", "string", D_SVC_EXTERNAL_IPS),
            col("Port(s)", "string", D_SVC_PORTS),
            AGE,
            wide("Selector", "string", D_SVC_SELECTOR),
        ],
        ("", "Endpoints") => vec![NAME, col("Endpoints", "string", D_EP_SUBSETS), AGE],
        ("", "ConfigMap") => vec![NAME, col("Data", "string", D_CM_DATA), AGE],
        ("", "Secret") => vec![
            NAME,
            col("Type", "string", D_SECRET_TYPE),
            col("Data", "string", D_SECRET_DATA),
            AGE,
        ],
        ("", "ServiceAccount") => vec![NAME, col("Secrets", "string", D_SA_SECRETS), AGE],
        ("", "Event") | ("events.k8s.io", "Event") => event_columns(),
        ("apps", "Deployment") => vec![
            NAME,
            col("Ready", "string", "Number of the pod with ready state"),
            col("Up-to-date", "string", D_DEP_UPDATED),
            col("Available", "string", D_DEP_AVAILABLE),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "string", D_DEP_SELECTOR),
        ],
        ("apps", "ReplicaSet") => vec![
            NAME,
            col("Desired", "integer", D_RS_REPLICAS),
            col("Current", "integer", D_RS_CURRENT),
            col("Ready", "integer", D_RS_READY),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "string", D_RS_SELECTOR),
        ],
        ("apps", "StatefulSet") => vec![
            NAME,
            col("Ready", "string", "Number of the pod with ready state"),
            AGE,
            CONTAINERS,
            IMAGES,
        ],
        ("apps", "DaemonSet") => vec![
            NAME,
            col("Desired", "integer", D_DS_DESIRED),
            col("Current", "integer", D_DS_CURRENT),
            col("Ready", "integer", D_DS_READY),
            col("Up-to-date", "integer", D_DS_UPDATED),
            col("Available", "integer", D_DS_AVAILABLE),
            col("Node Selector", "string", D_DS_NODE_SELECTOR),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "string", D_DS_SELECTOR),
        ],
        ("apps", "ControllerRevision") => vec![
            NAME,
            col("Controller", "string", "Controller of the object"),
            col("Revision", "string", D_CR_REVISION),
            AGE,
        ],
        ("batch", "Job") => vec![
            NAME,
            col("Status", "string", "Status of the job."),
            col("Completions", "string", D_JOB_COMPLETIONS),
            col("Duration", "string", "Time required to complete the job."),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "string", D_JOB_SELECTOR),
        ],
        ("batch", "CronJob") => vec![
            NAME,
            col("Schedule", "string", D_CJ_SCHEDULE),
            col("Timezone", "string", D_CJ_TIMEZONE),
            col("Suspend", "boolean", D_CJ_SUSPEND),
            col("Active", "integer", D_CJ_ACTIVE),
            col("Last Schedule", "string", D_CJ_LAST),
            AGE,
            CONTAINERS,
            IMAGES,
            wide("Selector", "string", D_JOB_SELECTOR),
        ],
        ("coordination.k8s.io", "Lease") => {
            vec![NAME, col("Holder", "string", D_LEASE_HOLDER), AGE]
        }
        ("discovery.k8s.io", "EndpointSlice") => vec![
            NAME,
            col("AddressType", "string", D_EPS_ADDRESS_TYPE),
            col("Ports", "string", D_EPS_PORTS),
            col("Endpoints", "string", D_EPS_ENDPOINTS),
            AGE,
        ],
        _ => vec![NAME, col("Created At", "date", D_CREATED)],
    }
}

fn event_columns() -> Vec<Column> {
    vec![
        col("Last Seen", "string", D_EV_LAST),
        col("Type", "string", D_EV_TYPE),
        col("Reason", "string", D_EV_REASON),
        col("Object", "string", D_EV_OBJECT),
        wide("Subobject", "string", D_EV_SUBOBJECT),
        wide("Source", "string", D_EV_SOURCE),
        col("Message", "string", D_EV_MESSAGE),
        wide("First Seen", "string", D_EV_FIRST),
        wide("Count", "string", D_EV_COUNT),
        Column {
            name: "Name",
            ty: "string",
            format: "name",
            description: D_NAME,
            priority: 1,
        },
    ]
}

// ---------------------------------------------------------------------------
// Row printers
// ---------------------------------------------------------------------------

struct Printer<'a> {
    obj: &'a Value,
    now: Timestamp,
}

impl Printer<'_> {
    fn name(&self) -> Value {
        json!(str_at(self.obj, &["metadata", "name"]))
    }

    fn age(&self) -> Value {
        json!(self.since(self.obj.pointer("/metadata/creationTimestamp")))
    }

    fn since(&self, ts: Option<&Value>) -> String {
        translate_timestamp_since(ts, self.now)
    }

    fn default_row(&self) -> Vec<Value> {
        let created = self
            .obj
            .pointer("/metadata/creationTimestamp")
            .and_then(parse_time)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
            .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_string());
        vec![self.name(), json!(created)]
    }

    fn namespace(&self) -> Vec<Value> {
        vec![
            self.name(),
            json!(str_at(self.obj, &["status", "phase"])),
            self.age(),
        ]
    }

    fn config_map(&self) -> Vec<Value> {
        let n = map_len(self.obj.get("data")) + map_len(self.obj.get("binaryData"));
        vec![self.name(), json!(n), self.age()]
    }

    fn secret(&self) -> Vec<Value> {
        // stringData is merged into data by the v1 -> internal conversion.
        let mut keys: Vec<&String> = Vec::new();
        for field in ["data", "stringData"] {
            for k in self
                .obj
                .get(field)
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(k, _)| k)
            {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let ty = str_at(self.obj, &["type"]);
        vec![self.name(), json!(ty), json!(keys.len()), self.age()]
    }

    fn service_account(&self) -> Vec<Value> {
        vec![self.name(), json!(array_len(self.obj.get("secrets"))), self.age()]
    }

    fn lease(&self) -> Vec<Value> {
        vec![
            self.name(),
            json!(str_at(self.obj, &["spec", "holderIdentity"])),
            self.age(),
        ]
    }

    fn controller_revision(&self) -> Vec<Value> {
        let controller = controller_ref(self.obj)
            .map(|r| {
                let kind = str_at(r, &["kind"]);
                let group = str_at(r, &["apiVersion"])
                    .rsplit_once('/')
                    .map(|(g, _)| g)
                    .unwrap_or("");
                let gk = if group.is_empty() {
                    kind.to_string()
                } else {
                    format!("{kind}.{group}")
                };
                let name = str_at(r, &["name"]);
                if gk.is_empty() {
                    name.to_string()
                } else {
                    format!("{}/{name}", gk.to_lowercase())
                }
            })
            .unwrap_or_else(|| "<none>".to_string());
        vec![
            self.name(),
            json!(controller),
            json!(int_at(self.obj, &["revision"])),
            self.age(),
        ]
    }

    fn with_template(&self, mut cells: Vec<Value>, template: &[&str], selector: Option<Value>) -> Vec<Value> {
        let containers = at(self.obj, template).and_then(|t| t.pointer("/spec/containers"));
        let (names, images) = container_cells(containers);
        cells.push(json!(names));
        cells.push(json!(images));
        if let Some(sel) = selector {
            cells.push(sel);
        }
        cells
    }

    fn selector_cell(&self, path: &[&str]) -> Value {
        json!(format_label_selector(at(self.obj, path).unwrap_or(&Value::Null)))
    }

    fn deployment(&self) -> Vec<Value> {
        let ready = int_at(self.obj, &["status", "readyReplicas"]);
        let desired = int_at(self.obj, &["spec", "replicas"]);
        let selector = label_selector_string(at(self.obj, &["spec", "selector"]).unwrap_or(&Value::Null));
        let cells = vec![
            self.name(),
            json!(format!("{ready}/{desired}")),
            json!(int_at(self.obj, &["status", "updatedReplicas"])),
            json!(int_at(self.obj, &["status", "availableReplicas"])),
            self.age(),
        ];
        self.with_template(cells, &["spec", "template"], Some(json!(selector)))
    }

    fn replica_set(&self) -> Vec<Value> {
        let cells = vec![
            self.name(),
            json!(int_at(self.obj, &["spec", "replicas"])),
            json!(int_at(self.obj, &["status", "replicas"])),
            json!(int_at(self.obj, &["status", "readyReplicas"])),
            self.age(),
        ];
        self.with_template(
            cells,
            &["spec", "template"],
            Some(self.selector_cell(&["spec", "selector"])),
        )
    }

    fn stateful_set(&self) -> Vec<Value> {
        let ready = int_at(self.obj, &["status", "readyReplicas"]);
        let desired = int_at(self.obj, &["spec", "replicas"]);
        let cells = vec![self.name(), json!(format!("{ready}/{desired}")), self.age()];
        self.with_template(cells, &["spec", "template"], None)
    }

    fn daemon_set(&self) -> Vec<Value> {
        let status = |k: &str| json!(int_at(self.obj, &["status", k]));
        let node_selector =
            at(self.obj, &["spec", "template", "spec", "nodeSelector"]).and_then(Value::as_object);
        let cells = vec![
            self.name(),
            status("desiredNumberScheduled"),
            status("currentNumberScheduled"),
            status("numberReady"),
            status("updatedNumberScheduled"),
            status("numberAvailable"),
            json!(format_labels(node_selector)),
            self.age(),
        ];
        self.with_template(
            cells,
            &["spec", "template"],
            Some(self.selector_cell(&["spec", "selector"])),
        )
    }

    fn job(&self) -> Vec<Value> {
        let cells = vec![
            self.name(),
            json!(job_status(self.obj)),
            json!(job_completions(self.obj)),
            json!(self.job_duration()),
            self.age(),
        ];
        self.with_template(
            cells,
            &["spec", "template"],
            Some(self.selector_cell(&["spec", "selector"])),
        )
    }

    fn job_duration(&self) -> String {
        let Some(start) = self.obj.pointer("/status/startTime").and_then(parse_time) else {
            return String::new();
        };
        let end = self.obj.pointer("/status/completionTime").and_then(parse_time);
        human_duration_between(start, end.unwrap_or(self.now))
    }

    fn cron_job(&self) -> Vec<Value> {
        let last = match self.obj.pointer("/status/lastScheduleTime") {
            Some(v) if !v.is_null() => self.since(Some(v)),
            _ => "<none>".to_string(),
        };
        let tz = match at(self.obj, &["spec", "timeZone"]).and_then(Value::as_str) {
            Some(tz) => tz.to_string(),
            None => "<none>".to_string(),
        };
        let suspend = match at(self.obj, &["spec", "suspend"]).and_then(Value::as_bool) {
            Some(true) => "True",
            Some(false) => "False",
            None => "<unset>",
        };
        let cells = vec![
            self.name(),
            json!(str_at(self.obj, &["spec", "schedule"])),
            json!(tz),
            json!(suspend),
            json!(array_len(self.obj.pointer("/status/active"))),
            json!(last),
            self.age(),
        ];
        let template = ["spec", "jobTemplate", "spec", "template"];
        let selector = self.selector_cell(&["spec", "jobTemplate", "spec", "selector"]);
        self.with_template(cells, &template, Some(selector))
    }
}

// ---------------------------------------------------------------------------
// Pod
// ---------------------------------------------------------------------------

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

impl Printer<'_> {
    fn pod(&self) -> Vec<Value> {
        let obj = self.obj;
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
        if obj
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null())
        {
            if str_at(obj, &["status", "reason"]) == "NodeLost" {
                walk.reason = "Unknown".to_string();
            } else if phase != "Succeeded" && phase != "Failed" {
                walk.reason = "Terminating".to_string();
            }
        }
        let restarts = match walk.last_restart {
            Some(t) if walk.restarts != 0 => {
                format!("{} ({} ago)", walk.restarts, human_duration_between(t, self.now))
            }
            _ => walk.restarts.to_string(),
        };
        vec![
            self.name(),
            json!(format!("{}/{total}", walk.ready)),
            json!(walk.reason),
            json!(restarts),
            self.age(),
            json!(or_none(pod_ip(obj))),
            json!(or_none(str_at(obj, &["spec", "nodeName"]).to_string())),
            json!(or_none(str_at(obj, &["status", "nominatedNodeName"]).to_string())),
            json!(readiness_gates(obj)),
        ]
    }
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

fn conditions(obj: &Value) -> &[Value] {
    array(obj.pointer("/status/conditions"))
}

fn has_condition(obj: &Value, ty: &str) -> bool {
    conditions(obj)
        .iter()
        .any(|c| str_at(c, &["type"]) == ty && str_at(c, &["status"]) == "True")
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

// ---------------------------------------------------------------------------
// Node, Service, Endpoints
// ---------------------------------------------------------------------------

impl Printer<'_> {
    fn node(&self) -> Vec<Value> {
        let obj = self.obj;
        let info = |k: &str| {
            let v = str_at(obj, &["status", "nodeInfo", k]);
            json!(if v.is_empty() { "<unknown>" } else { v })
        };
        vec![
            self.name(),
            json!(node_status(obj)),
            json!(node_roles(obj)),
            self.age(),
            json!(str_at(obj, &["status", "nodeInfo", "kubeletVersion"])),
            json!(node_address(obj, "InternalIP")),
            json!(node_address(obj, "ExternalIP")),
            info("osImage"),
            info("kernelVersion"),
            info("containerRuntimeVersion"),
        ]
    }

    fn service(&self) -> Vec<Value> {
        let obj = self.obj;
        let ports: Vec<String> = array(obj.pointer("/spec/ports"))
            .iter()
            .map(service_port)
            .collect();
        let ports = if ports.is_empty() {
            "<none>".to_string()
        } else {
            ports.join(",")
        };
        let selector = at(obj, &["spec", "selector"]).and_then(Value::as_object);
        vec![
            self.name(),
            json!(str_at(obj, &["spec", "type"])),
            json!(service_cluster_ip(obj)),
            json!(service_external_ip(obj)),
            json!(ports),
            self.age(),
            json!(format_labels(selector)),
        ]
    }

    fn endpoints(&self) -> Vec<Value> {
        vec![self.name(), json!(format_endpoints(self.obj)), self.age()]
    }

    fn endpoint_slice(&self) -> Vec<Value> {
        let obj = self.obj;
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
        vec![
            self.name(),
            json!(str_at(obj, &["addressType"])),
            json!(list_with_more(ports)),
            json!(list_with_more(addresses)),
            self.age(),
        ]
    }
}

/// The first three items joined by commas and `+ N more...`, or `<unset>`
/// (upstream `listWithMoreString`).
fn list_with_more(items: impl Iterator<Item = String>) -> String {
    const MAX: usize = 3;
    let all: Vec<String> = items.collect();
    let shown = all[..all.len().min(MAX)].join(",");
    match all.len() {
        0 => "<unset>".to_string(),
        n if n > MAX => format!("{shown} + {} more...", n - MAX),
        _ => shown,
    }
}

fn node_status(obj: &Value) -> String {
    // The last Ready condition wins, as upstream builds a map by type.
    let ready = conditions(obj)
        .iter()
        .rev()
        .find(|c| str_at(c, &["type"]) == "Ready");
    let mut status = match ready {
        Some(c) if str_at(c, &["status"]) == "True" => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if bool_at(obj, &["spec", "unschedulable"]) {
        status.push_str(",SchedulingDisabled");
    }
    status
}

fn node_roles(obj: &Value) -> String {
    let mut roles: Vec<&str> = Vec::new();
    for (key, value) in obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let role = if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
            role
        } else if key == "kubernetes.io/role" {
            value.as_str().unwrap_or_default()
        } else {
            continue;
        };
        if !role.is_empty() && !roles.contains(&role) {
            roles.push(role);
        }
    }
    roles.sort_unstable();
    if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.join(",")
    }
}

fn node_address(obj: &Value, ty: &str) -> String {
    array(obj.pointer("/status/addresses"))
        .iter()
        .find(|a| str_at(a, &["type"]) == ty)
        .map(|a| str_at(a, &["address"]).to_string())
        .unwrap_or_else(|| "<none>".to_string())
}

fn service_port(port: &Value) -> String {
    let number = int_at(port, &["port"]);
    let protocol = str_at(port, &["protocol"]);
    match int_at(port, &["nodePort"]) {
        n if n > 0 => format!("{number}:{n}/{protocol}"),
        _ => format!("{number}/{protocol}"),
    }
}

/// `spec.clusterIPs[0]`, falling back to `spec.clusterIP` as the v1 conversion does.
fn service_cluster_ip(obj: &Value) -> String {
    let first = obj
        .pointer("/spec/clusterIPs/0")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ip = if first.is_empty() {
        str_at(obj, &["spec", "clusterIP"])
    } else {
        first
    };
    or_none(ip.to_string())
}

fn service_external_ip(obj: &Value) -> String {
    let external: Vec<&str> = strings(obj.pointer("/spec/externalIPs"));
    match str_at(obj, &["spec", "type"]) {
        "ClusterIP" | "NodePort" if !external.is_empty() => external.join(","),
        "ClusterIP" | "NodePort" => "<none>".to_string(),
        "LoadBalancer" => {
            let mut all = load_balancer_ingress(obj);
            all.extend(external.iter().map(|s| s.to_string()));
            if all.is_empty() {
                "<pending>".to_string()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => str_at(obj, &["spec", "externalName"]).to_string(),
        _ => "<unknown>".to_string(),
    }
}

/// Ingress IPs (or hostnames when the IP is empty), deduplicated and sorted.
fn load_balancer_ingress(obj: &Value) -> Vec<String> {
    let mut out: Vec<String> = array(obj.pointer("/status/loadBalancer/ingress"))
        .iter()
        .map(|i| {
            let ip = str_at(i, &["ip"]);
            if ip.is_empty() {
                str_at(i, &["hostname"])
            } else {
                ip
            }
        })
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

fn format_endpoints(obj: &Value) -> String {
    const MAX: usize = 3;
    let subsets = array(obj.get("subsets"));
    if subsets.is_empty() {
        return "<none>".to_string();
    }
    let mut list: Vec<String> = Vec::new();
    let mut count = 0;
    for subset in subsets {
        let ips: Vec<&str> = array(subset.get("addresses"))
            .iter()
            .map(|a| str_at(a, &["ip"]))
            .collect();
        let ports = array(subset.get("ports"));
        let entries: Vec<String> = if ports.is_empty() {
            ips.iter().map(|ip| ip.to_string()).collect()
        } else {
            ports
                .iter()
                .flat_map(|p| ips.iter().map(move |ip| join_host_port(ip, int_at(p, &["port"]))))
                .collect()
        };
        count += entries.len();
        list.extend(entries.into_iter().take(MAX.saturating_sub(list.len())));
    }
    let joined = list.join(",");
    if count > MAX {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

// ---------------------------------------------------------------------------
// Event
// ---------------------------------------------------------------------------

impl Printer<'_> {
    fn event(&self) -> Vec<Value> {
        let obj = self.obj;
        let first = if is_set(obj.get("firstTimestamp")) {
            self.since(obj.get("firstTimestamp"))
        } else {
            self.since(obj.get("eventTime"))
        };
        let mut last = if is_set(obj.get("lastTimestamp")) {
            self.since(obj.get("lastTimestamp"))
        } else {
            first.clone()
        };
        let mut count = int_at(obj, &["count"]);
        if let Some(series) = obj.get("series").filter(|s| !s.is_null()) {
            last = self.since(series.get("lastObservedTime"));
            count = int_at(series, &["count"]);
        } else if count == 0 {
            count = 1;
        }
        let kind = str_at(obj, &["involvedObject", "kind"]).to_lowercase();
        let name = str_at(obj, &["involvedObject", "name"]);
        let target = if name.is_empty() {
            kind
        } else {
            format!("{kind}/{name}")
        };
        vec![
            json!(last),
            json!(str_at(obj, &["type"])),
            json!(str_at(obj, &["reason"])),
            json!(target),
            json!(str_at(obj, &["involvedObject", "fieldPath"])),
            json!(event_source(obj)),
            json!(str_at(obj, &["message"]).trim()),
            json!(first),
            json!(count),
            self.name(),
        ]
    }
}

fn event_source(obj: &Value) -> String {
    let pick = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let component = pick(
        str_at(obj, &["source", "component"]),
        str_at(obj, &["reportingComponent"]),
    );
    let instance = pick(
        str_at(obj, &["source", "host"]),
        str_at(obj, &["reportingInstance"]),
    );
    if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    }
}

/// Maps an events.k8s.io/v1 Event onto core/v1 field names (both share one registry).
fn events_to_core(obj: &Value) -> Value {
    let mut out = Map::new();
    let renames = [
        ("metadata", "metadata"),
        ("note", "message"),
        ("regarding", "involvedObject"),
        ("deprecatedSource", "source"),
        ("deprecatedFirstTimestamp", "firstTimestamp"),
        ("deprecatedLastTimestamp", "lastTimestamp"),
        ("deprecatedCount", "count"),
        ("reportingController", "reportingComponent"),
        ("reportingInstance", "reportingInstance"),
        ("series", "series"),
        ("eventTime", "eventTime"),
        ("type", "type"),
        ("reason", "reason"),
    ];
    for (from, to) in renames {
        if let Some(v) = obj.get(from) {
            out.insert(to.to_string(), v.clone());
        }
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------------
// Workload helpers
// ---------------------------------------------------------------------------

/// `layoutContainerCells`: names and images, each joined by `,`.
fn container_cells(containers: Option<&Value>) -> (String, String) {
    let list = array(containers);
    let names: Vec<&str> = list.iter().map(|c| str_at(c, &["name"])).collect();
    let images: Vec<&str> = list.iter().map(|c| str_at(c, &["image"])).collect();
    (names.join(","), images.join(","))
}

fn job_condition(obj: &Value, ty: &str) -> bool {
    has_condition(obj, ty)
}

fn job_status(obj: &Value) -> &'static str {
    let deleting = obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    if job_condition(obj, "Complete") {
        "Complete"
    } else if job_condition(obj, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if job_condition(obj, "Suspended") {
        "Suspended"
    } else if job_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else if job_condition(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}

fn job_completions(obj: &Value) -> String {
    let succeeded = int_at(obj, &["status", "succeeded"]);
    if let Some(completions) = at(obj, &["spec", "completions"]).and_then(Value::as_i64) {
        return format!("{succeeded}/{completions}");
    }
    let parallelism = int_at(obj, &["spec", "parallelism"]);
    if parallelism > 1 {
        format!("{succeeded}/1 of {parallelism}")
    } else {
        format!("{succeeded}/1")
    }
}

fn controller_ref(obj: &Value) -> Option<&Value> {
    array(obj.pointer("/metadata/ownerReferences"))
        .iter()
        .find(|r| bool_at(r, &["controller"]))
}

// ---------------------------------------------------------------------------
// JSON access helpers
// ---------------------------------------------------------------------------

fn at<'a>(obj: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(obj, |v, k| v.get(k))
}

fn str_at<'a>(obj: &'a Value, path: &[&str]) -> &'a str {
    at(obj, path).and_then(Value::as_str).unwrap_or_default()
}

fn int_at(obj: &Value, path: &[&str]) -> i64 {
    at(obj, path)
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
        .unwrap_or(0)
}

fn bool_at(obj: &Value, path: &[&str]) -> bool {
    at(obj, path).and_then(Value::as_bool).unwrap_or(false)
}

fn array(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn strings(v: Option<&Value>) -> Vec<&str> {
    array(v).iter().filter_map(Value::as_str).collect()
}

fn map_len(v: Option<&Value>) -> usize {
    v.and_then(Value::as_object).map_or(0, Map::len)
}

fn array_len(v: Option<&Value>) -> usize {
    array(v).len()
}

fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".to_string() } else { s }
}

fn is_set(v: Option<&Value>) -> bool {
    v.and_then(parse_time).is_some()
}

/// Parses a metav1.Time / MicroTime; null, empty and Go's zero time count as unset.
fn parse_time(v: &Value) -> Option<Timestamp> {
    let t: Timestamp = v.as_str()?.parse().ok()?;
    (t.as_second() != GO_ZERO_TIME_SECONDS).then_some(t)
}

/// Unix seconds of Go's zero `time.Time` (0001-01-01T00:00:00Z).
const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;

// ---------------------------------------------------------------------------
// Column descriptions (upstream OpenAPI field docs)
// ---------------------------------------------------------------------------

const D_NAME: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const D_CREATED: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const D_POD_RESTARTS: &str = "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.";
const D_POD_IP: &str =
    "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.";
const D_POD_NODE: &str = "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename";
const D_POD_NOMINATED: &str = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.";
const D_POD_GATES: &str = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates";
const D_KUBELET: &str = "Kubelet Version reported by the node.";
const D_OS_IMAGE: &str =
    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).";
const D_KERNEL: &str = "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).";
const D_RUNTIME: &str =
    "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).";
const D_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
const D_SVC_TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const D_SVC_CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const D_SVC_PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";
const D_EPS_ADDRESS_TYPE: &str = "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.";
const D_EPS_PORTS: &str = "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.";
const D_EPS_ENDPOINTS: &str = "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.";
const D_EP_SUBSETS: &str = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.";
const D_CM_DATA: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
const D_SECRET_TYPE: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
const D_SECRET_DATA: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
const D_SA_SECRETS: &str = "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The \"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret";
const D_EV_LAST: &str = "The time at which the most recent occurrence of this event was recorded.";
const D_EV_TYPE: &str = "Type of this event (Normal, Warning), new types could be added in the future";
const D_EV_REASON: &str = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.";
const D_EV_OBJECT: &str = "The object that this event is about.";
const D_EV_SUBOBJECT: &str = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.";
const D_EV_SOURCE: &str =
    "The component reporting this event. Should be a short machine understandable string.";
const D_EV_MESSAGE: &str = "A human-readable description of the status of this operation.";
const D_EV_FIRST: &str =
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)";
const D_EV_COUNT: &str = "The number of times this event has occurred.";
const D_DEP_UPDATED: &str =
    "Total number of non-terminated pods targeted by this deployment that have the desired template spec.";
const D_DEP_AVAILABLE: &str =
    "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.";
const D_DEP_SELECTOR: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.";
const D_RS_REPLICAS: &str = "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller";
const D_RS_CURRENT: &str = "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller";
const D_RS_READY: &str = "The number of ready replicas for this replica set.";
const D_RS_SELECTOR: &str = "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_DS_DESIRED: &str = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_CURRENT: &str = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const D_DS_READY: &str = "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.";
const D_DS_UPDATED: &str = "The total number of nodes that are running updated daemon pod";
const D_DS_AVAILABLE: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)";
const D_DS_NODE_SELECTOR: &str = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/";
const D_DS_SELECTOR: &str = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_CR_REVISION: &str = "Revision indicates the revision of the state represented by Data.";
const D_JOB_COMPLETIONS: &str = "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.";
const D_JOB_SELECTOR: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const D_CJ_SCHEDULE: &str = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.";
const D_CJ_TIMEZONE: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";
const D_CJ_SUSPEND: &str = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.";
const D_CJ_ACTIVE: &str = "A list of pointers to currently running jobs.";
const D_CJ_LAST: &str = "Information when was the last time the job was successfully scheduled.";
const D_LEASE_HOLDER: &str = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.";

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2025-05-01T12:00:00Z";

    fn now() -> Timestamp {
        NOW.parse().unwrap()
    }

    /// RFC3339 timestamp `secs` seconds before NOW.
    fn ago(secs: i64) -> String {
        let t = now() - jiff::SignedDuration::from_secs(secs);
        t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    fn cells(group: &str, kind: &str, obj: &Value) -> Vec<Value> {
        let cells = row_cells(group, kind, obj, now());
        assert_eq!(cells.len(), column_definitions(group, kind).len(), "{kind}");
        cells
    }

    fn names(group: &str, kind: &str) -> Vec<String> {
        column_definitions(group, kind)
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn human_duration_boundaries() {
        let cases = [
            (-3, "<invalid>"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (1, "1s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (599, "9m59s"),
            (600, "10m"),
            (179 * 60 + 59, "179m"),
            (180 * 60, "3h"),
            (3 * 3600 + 30 * 60, "3h30m"),
            (8 * 3600 - 1, "7h59m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (8 * 86400 - 1, "7d23h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (731 * 86400, "2y1d"),
            (8 * 365 * 86400 - 1, "7y364d"),
            (8 * 365 * 86400, "8y"),
            (20 * 365 * 86400 + 5 * 86400, "20y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}s");
        }
    }

    #[test]
    fn human_duration_between_truncates_sub_seconds() {
        let a: Timestamp = "2025-05-01T12:00:00Z".parse().unwrap();
        let b: Timestamp = "2025-05-01T12:00:01.5Z".parse().unwrap();
        let c: Timestamp = "2025-05-01T12:00:02.5Z".parse().unwrap();
        assert_eq!(human_duration_between(b, a), "0s"); // -1.5s
        assert_eq!(human_duration_between(c, a), "<invalid>"); // -2.5s
        assert_eq!(human_duration_between(a, c), "2s");
        assert_eq!(translate_timestamp_since(None, a), "<unknown>");
        assert_eq!(translate_timestamp_since(Some(&Value::Null), a), "<unknown>");
        assert_eq!(
            translate_timestamp_since(Some(&json!("0001-01-01T00:00:00Z")), a),
            "<unknown>"
        );
    }

    #[test]
    fn column_definitions_serialize_every_field() {
        let cols = column_definitions("", "Pod");
        assert_eq!(
            cols[0],
            json!({"name": "Name", "type": "string", "format": "name", "description": D_NAME, "priority": 0})
        );
        assert_eq!(cols[5]["priority"], json!(1));
        assert_eq!(cols[1]["format"], json!(""));
        assert_eq!(
            names("", "Pod"),
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
        assert_eq!(
            names("apps", "Deployment"),
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
        assert_eq!(
            names("", "Event"),
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "Subobject",
                "Source",
                "Message",
                "First Seen",
                "Count",
                "Name"
            ]
        );
        assert_eq!(names("events.k8s.io", "Event"), names("", "Event"));
        assert_eq!(names("example.com", "Widget"), ["Name", "Created At"]);
        assert_eq!(
            column_definitions("example.com", "Widget")[1]["type"],
            json!("date")
        );
        for (g, k) in [
            ("", "Pod"),
            ("", "Node"),
            ("", "Namespace"),
            ("", "Service"),
            ("", "Endpoints"),
            ("", "ConfigMap"),
            ("", "Secret"),
            ("", "ServiceAccount"),
            ("", "Event"),
            ("apps", "Deployment"),
            ("apps", "ReplicaSet"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("apps", "ControllerRevision"),
            ("batch", "Job"),
            ("batch", "CronJob"),
            ("coordination.k8s.io", "Lease"),
            ("discovery.k8s.io", "EndpointSlice"),
        ] {
            for c in column_definitions(g, k) {
                let obj = c.as_object().unwrap();
                assert_eq!(obj.len(), 5, "{k}");
                assert!(
                    !c["description"].as_str().unwrap().is_empty(),
                    "{k} {}",
                    c["name"]
                );
            }
        }
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
            cells("", "Pod", &running_pod()),
            vec![
                json!("web-1"),
                json!("1/1"),
                json!("Running"),
                json!("0"),
                json!("60m"),
                json!("10.0.0.9"),
                json!("node-1"),
                json!("<none>"),
                json!("<none>")
            ]
        );
        assert_eq!(row_conditions("", "Pod", &running_pod()), None);
    }

    #[test]
    fn pod_pending_unscheduled() {
        let pod = json!({
            "metadata": {"name": "p", "creationTimestamp": ago(5)},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Pending"}
        });
        assert_eq!(
            cells("", "Pod", &pod),
            vec![
                json!("p"),
                json!("0/2"),
                json!("Pending"),
                json!("0"),
                json!("5s"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>"),
                json!("<none>")
            ]
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
        let c = cells("", "Pod", &pod);
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
        let c = cells("", "Pod", &pod);
        assert_eq!(c[2], json!("ImagePullBackOff"));
        assert_eq!(c[4], json!("<unknown>"));
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "b", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
            ]}
        });
        assert_eq!(cells("", "Pod", &pod)[2], json!("Signal:9"));
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "b", "state": {"terminated": {"exitCode": 3}}}
            ]}
        });
        assert_eq!(cells("", "Pod", &pod)[2], json!("ExitCode:3"));
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
        assert_eq!(cells("", "Pod", &pod)[2], json!("Running"));
        assert_eq!(cells("", "Pod", &pod)[1], json!("1/2"));
        pod["status"]["conditions"][0]["status"] = json!("False");
        assert_eq!(cells("", "Pod", &pod)[2], json!("NotReady"));
    }

    #[test]
    fn pod_terminating_and_unknown() {
        let mut pod = running_pod();
        pod["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(cells("", "Pod", &pod)[2], json!("Terminating"));
        pod["status"]["reason"] = json!("NodeLost");
        assert_eq!(cells("", "Pod", &pod)[2], json!("Unknown"));
        let mut done = running_pod();
        done["status"]["phase"] = json!("Succeeded");
        done["status"]["containerStatuses"][0]["state"] =
            json!({"terminated": {"exitCode": 0, "reason": "Completed"}});
        done["status"]["containerStatuses"][0]["ready"] = json!(false);
        done["metadata"]["deletionTimestamp"] = json!(ago(1));
        assert_eq!(cells("", "Pod", &done)[2], json!("Completed"));
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
        assert_eq!(cells("", "Pod", &pod)[2], json!("Init:1/2"));
        let pod = base(json!([
            {"name": "i1", "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "restartCount": 2,
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(30)}}}
        ]));
        let c = cells("", "Pod", &pod);
        assert_eq!(c[2], json!("Init:CrashLoopBackOff"));
        assert_eq!(c[3], json!("2 (30s ago)"));
        let pod = base(json!([{"name": "i1", "state": {"terminated": {"exitCode": 2}}}]));
        assert_eq!(cells("", "Pod", &pod)[2], json!("Init:ExitCode:2"));
        let pod = base(json!([{"name": "i1", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]));
        assert_eq!(cells("", "Pod", &pod)[2], json!("Init:Error"));
        let pod = base(json!([{"name": "i1", "state": {"waiting": {"reason": "PodInitializing"}}}]));
        assert_eq!(cells("", "Pod", &pod)[2], json!("Init:0/2"));
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
        let c = cells("", "Pod", &pod);
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
        let c = cells("", "Pod", &pod);
        assert_eq!(c[2], json!("SchedulingGated"));
        assert_eq!(c[8], json!("1/2"));
        pod["status"]["phase"] = json!("Succeeded");
        assert_eq!(
            row_conditions("", "Pod", &pod),
            Some(
                json!([{"type": "Completed", "status": "True", "reason": "Succeeded",
                         "message": "The pod has completed successfully."}])
            )
        );
        pod["status"]["phase"] = json!("Failed");
        assert_eq!(
            row_conditions("", "Pod", &pod).unwrap()[0]["message"],
            json!("The pod failed.")
        );
        assert_eq!(row_conditions("apps", "Deployment", &pod), None);
    }

    #[test]
    fn node_rows() {
        let node = json!({
            "metadata": {"name": "node-1", "creationTimestamp": ago(86400 * 3),
                "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x",
                           "kubernetes.io/role": "worker", "kubernetes.io/hostname": "node-1"}},
            "spec": {"unschedulable": true},
            "status": {
                "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}, {"type": "Hostname", "address": "node-1"}],
                "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian", "kernelVersion": "",
                             "containerRuntimeVersion": "containerd://2.0"}
            }
        });
        assert_eq!(
            cells("", "Node", &node),
            vec![
                json!("node-1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,worker"),
                json!("3d"),
                json!("v1.33.0"),
                json!("172.18.0.2"),
                json!("<none>"),
                json!("Debian"),
                json!("<unknown>"),
                json!("containerd://2.0")
            ]
        );
        let bare = json!({"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        let c = cells("", "Node", &bare);
        assert_eq!(c[1], json!("NotReady"));
        assert_eq!(c[2], json!("<none>"));
        assert_eq!(
            cells("", "Node", &json!({"metadata": {"name": "n"}}))[1],
            json!("Unknown")
        );
    }

    #[test]
    fn namespace_configmap_secret_sa_lease() {
        let ns = json!({"metadata": {"name": "default", "creationTimestamp": ago(30)}, "status": {"phase": "Active"}});
        assert_eq!(
            cells("", "Namespace", &ns),
            vec![json!("default"), json!("Active"), json!("30s")]
        );
        let cm =
            json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}});
        assert_eq!(cells("", "ConfigMap", &cm)[1], json!(3));
        let secret = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "eA=="}, "stringData": {"a": "x", "b": "y"}});
        assert_eq!(
            cells("", "Secret", &secret),
            vec![json!("s"), json!("Opaque"), json!(2), json!("<unknown>")]
        );
        let sa = json!({"metadata": {"name": "default"}});
        assert_eq!(cells("", "ServiceAccount", &sa)[1], json!(0));
        let lease =
            json!({"metadata": {"name": "kube-scheduler"}, "spec": {"holderIdentity": "miniplane_1"}});
        assert_eq!(
            cells("coordination.k8s.io", "Lease", &lease)[1],
            json!("miniplane_1")
        );
        let lease = json!({"metadata": {"name": "l"}, "spec": {}});
        assert_eq!(cells("coordination.k8s.io", "Lease", &lease)[1], json!(""));
    }

    #[test]
    fn service_rows() {
        let svc = json!({
            "metadata": {"name": "web", "creationTimestamp": ago(10)},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                     "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
                     "selector": {"app": "web"}}
        });
        assert_eq!(
            cells("", "Service", &svc),
            vec![
                json!("web"),
                json!("ClusterIP"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80/TCP,53/UDP"),
                json!("10s"),
                json!("app=web")
            ]
        );
        let np = json!({"metadata": {"name": "np"}, "spec": {"type": "NodePort", "clusterIP": "10.96.0.11",
            "externalIPs": ["1.2.3.4"], "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}});
        let c = cells("", "Service", &np);
        assert_eq!(
            (c[2].clone(), c[3].clone(), c[4].clone()),
            (json!("10.96.0.11"), json!("1.2.3.4"), json!("80:30080/TCP"))
        );
        assert_eq!(c[6], json!("<none>"));
        let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "clusterIPs": ["10.96.0.12"]},
            "status": {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "a.example.com"}, {"ip": "1.1.1.1"}, {"ip": "5.6.7.8"}]}}});
        let c = cells("", "Service", &lb);
        assert_eq!(c[3], json!("1.1.1.1,5.6.7.8,a.example.com"));
        assert_eq!(c[4], json!("<none>"));
        let pending =
            json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "externalIPs": []}});
        assert_eq!(cells("", "Service", &pending)[3], json!("<pending>"));
        let headless = json!({"metadata": {"name": "h"}, "spec": {"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}});
        assert_eq!(cells("", "Service", &headless)[2], json!("None"));
        let ext = json!({"metadata": {"name": "e"}, "spec": {"type": "ExternalName", "externalName": "example.com"}});
        let c = cells("", "Service", &ext);
        assert_eq!(
            (c[2].clone(), c[3].clone()),
            (json!("<none>"), json!("example.com"))
        );
    }

    #[test]
    fn endpoint_slice_rows() {
        let slice = json!({
            "metadata": {"name": "kubernetes", "creationTimestamp": ago(30)},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
            "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
        });
        assert_eq!(
            cells("discovery.k8s.io", "EndpointSlice", &slice),
            vec![
                json!("kubernetes"),
                json!("IPv4"),
                json!("6443"),
                json!("127.0.0.1"),
                json!("30s")
            ]
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
        let c = cells("discovery.k8s.io", "EndpointSlice", &many);
        assert_eq!(c[2], json!("http,*,1 + 1 more..."));
        assert_eq!(c[3], json!("10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."));
        let empty = json!({"metadata": {"name": "e"}, "addressType": "IPv6"});
        let c = cells("discovery.k8s.io", "EndpointSlice", &empty);
        assert_eq!((c[2].clone(), c[3].clone()), (json!("<unset>"), json!("<unset>")));
    }

    #[test]
    fn endpoints_rows() {
        let ep = |subsets: Value| json!({"metadata": {"name": "web"}, "subsets": subsets});
        assert_eq!(
            cells("", "Endpoints", &json!({"metadata": {"name": "x"}}))[1],
            json!("<none>")
        );
        let one =
            ep(json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}], "ports": [{"port": 80}]}]));
        assert_eq!(cells("", "Endpoints", &one)[1], json!("10.0.0.1:80,[fd00::1]:80"));
        let many = ep(
            json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]}]),
        );
        assert_eq!(
            cells("", "Endpoints", &many)[1],
            json!("10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...")
        );
        let no_ports = ep(json!([{"addresses": [{"ip": "10.0.0.1"}]}]));
        assert_eq!(cells("", "Endpoints", &no_ports)[1], json!("10.0.0.1"));
        let not_ready = ep(json!([{"notReadyAddresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]));
        assert_eq!(cells("", "Endpoints", &not_ready)[1], json!(""));
    }

    #[test]
    fn event_rows_core_and_events_api() {
        let ev = json!({
            "metadata": {"name": "web.17f", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{app}"},
            "reason": "Pulled", "type": "Normal", "message": "  Successfully pulled image\n",
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": ago(300), "lastTimestamp": ago(60), "count": 3
        });
        assert_eq!(
            cells("", "Event", &ev),
            vec![
                json!("60s"),
                json!("Normal"),
                json!("Pulled"),
                json!("pod/web-1"),
                json!("spec.containers{app}"),
                json!("kubelet, node-1"),
                json!("Successfully pulled image"),
                json!("5m"),
                json!(3),
                json!("web.17f")
            ]
        );
        let new_api = json!({
            "metadata": {"name": "e2"},
            "regarding": {"kind": "Deployment", "name": "web"},
            "reason": "ScalingReplicaSet", "type": "Normal", "note": "Scaled up",
            "reportingController": "deployment-controller", "reportingInstance": "",
            "eventTime": ago(20),
            "deprecatedCount": 0
        });
        let c = cells("events.k8s.io", "Event", &new_api);
        assert_eq!(
            c,
            vec![
                json!("20s"),
                json!("Normal"),
                json!("ScalingReplicaSet"),
                json!("deployment/web"),
                json!(""),
                json!("deployment-controller"),
                json!("Scaled up"),
                json!("20s"),
                json!(1),
                json!("e2")
            ]
        );
        let series = json!({
            "metadata": {"name": "e3"}, "involvedObject": {"kind": "Node"},
            "eventTime": ago(600), "series": {"count": 7, "lastObservedTime": ago(5)}
        });
        let c = cells("", "Event", &series);
        assert_eq!(
            (c[0].clone(), c[3].clone(), c[7].clone(), c[8].clone()),
            (json!("5s"), json!("node"), json!("10m"), json!(7))
        );
        let bare = json!({"metadata": {"name": "e4"}});
        let c = cells("", "Event", &bare);
        assert_eq!(
            (c[0].clone(), c[7].clone()),
            (json!("<unknown>"), json!("<unknown>"))
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
            cells("apps", "Deployment", &deployment(2, 1, 2)),
            vec![
                json!("web"),
                json!("2/3"),
                json!(1),
                json!(2),
                json!("45s"),
                json!("nginx,side"),
                json!("nginx:1.27,busybox"),
                json!("app=web")
            ]
        );
        let mut empty_sel = deployment(0, 0, 0);
        empty_sel["spec"]["selector"] = json!({});
        assert_eq!(cells("apps", "Deployment", &empty_sel)[7], json!(""));
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
            cells("apps", "ReplicaSet", &rs),
            vec![
                json!("web-7d4b9"),
                json!(3),
                json!(3),
                json!(1),
                json!("<unknown>"),
                json!("nginx"),
                json!("nginx"),
                json!("app=web,pod-template-hash=7d4b9")
            ]
        );
        let sts = json!({"metadata": {"name": "db"}, "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "pg", "image": "postgres"}]}}},
                         "status": {"readyReplicas": 1}});
        assert_eq!(
            cells("apps", "StatefulSet", &sts),
            vec![
                json!("db"),
                json!("1/2"),
                json!("<unknown>"),
                json!("pg"),
                json!("postgres")
            ]
        );
        let ds = json!({
            "metadata": {"name": "agent"},
            "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["agent"]}]},
                     "template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [{"name": "a", "image": "agent:1"}]}}},
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2, "updatedNumberScheduled": 3, "numberAvailable": 2}
        });
        assert_eq!(
            cells("apps", "DaemonSet", &ds),
            vec![
                json!("agent"),
                json!(3),
                json!(3),
                json!(2),
                json!(3),
                json!(2),
                json!("kubernetes.io/os=linux"),
                json!("<unknown>"),
                json!("a"),
                json!("agent:1"),
                json!("app in (agent)")
            ]
        );
        let mut no_sel = ds.clone();
        no_sel["spec"]["template"]["spec"]["nodeSelector"] = json!({});
        no_sel["spec"]["selector"] = Value::Null;
        let c = cells("apps", "DaemonSet", &no_sel);
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
            cells("apps", "ControllerRevision", &cr),
            vec![
                json!("agent-5f6"),
                json!("daemonset.apps/agent"),
                json!(2),
                json!("<unknown>")
            ]
        );
        let core = json!({"metadata": {"name": "x", "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "controller": true}]}, "revision": 1});
        assert_eq!(cells("apps", "ControllerRevision", &core)[1], json!("pod/p"));
        let orphan = json!({"metadata": {"name": "x"}, "revision": 1});
        assert_eq!(cells("apps", "ControllerRevision", &orphan)[1], json!("<none>"));
    }

    #[test]
    fn job_rows() {
        let complete = json!({
            "metadata": {"name": "pi", "creationTimestamp": ago(400)},
            "spec": {"completions": 1, "parallelism": 1, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "abc"}},
                     "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}},
            "status": {"succeeded": 1, "startTime": ago(400), "completionTime": ago(300),
                       "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}
        });
        assert_eq!(
            cells("batch", "Job", &complete),
            vec![
                json!("pi"),
                json!("Complete"),
                json!("1/1"),
                json!("100s"),
                json!("6m40s"),
                json!("pi"),
                json!("perl"),
                json!("batch.kubernetes.io/controller-uid=abc")
            ]
        );
        let running =
            json!({"metadata": {"name": "r"}, "spec": {"parallelism": 3}, "status": {"startTime": ago(30)}});
        let c = cells("batch", "Job", &running);
        assert_eq!(
            (c[1].clone(), c[2].clone(), c[3].clone()),
            (json!("Running"), json!("0/1 of 3"), json!("30s"))
        );
        let fresh = json!({"metadata": {"name": "f"}, "spec": {}});
        let c = cells("batch", "Job", &fresh);
        assert_eq!((c[2].clone(), c[3].clone()), (json!("0/1"), json!("")));
        let failed = json!({"metadata": {"name": "x", "deletionTimestamp": ago(1)}, "status": {"conditions": [{"type": "Failed", "status": "True"}]}});
        assert_eq!(cells("batch", "Job", &failed)[1], json!("Failed"));
        let deleting = json!({"metadata": {"name": "x", "deletionTimestamp": ago(1)}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        assert_eq!(cells("batch", "Job", &deleting)[1], json!("Terminating"));
        let suspended = json!({"metadata": {"name": "x"}, "status": {"conditions": [{"type": "Suspended", "status": "True"}, {"type": "Complete", "status": "False"}]}});
        assert_eq!(cells("batch", "Job", &suspended)[1], json!("Suspended"));
    }

    #[test]
    fn cron_job_rows() {
        let cj = json!({
            "metadata": {"name": "hello", "creationTimestamp": ago(3600 * 5)},
            "spec": {"schedule": "*/1 * * * *", "suspend": false,
                     "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "hello", "image": "busybox"}]}}}}},
            "status": {"active": [{"name": "hello-1"}], "lastScheduleTime": ago(42)}
        });
        assert_eq!(
            cells("batch", "CronJob", &cj),
            vec![
                json!("hello"),
                json!("*/1 * * * *"),
                json!("<none>"),
                json!("False"),
                json!(1),
                json!("42s"),
                json!("5h"),
                json!("hello"),
                json!("busybox"),
                json!("<none>")
            ]
        );
        let bare = json!({"metadata": {"name": "c"}, "spec": {"schedule": "@daily", "timeZone": "Etc/UTC"}});
        let c = cells("batch", "CronJob", &bare);
        assert_eq!(
            (c[2].clone(), c[3].clone(), c[4].clone(), c[5].clone()),
            (json!("Etc/UTC"), json!("<unset>"), json!(0), json!("<none>"))
        );
    }

    #[test]
    fn default_table_for_unknown_kinds() {
        let obj = json!({"metadata": {"name": "w", "creationTimestamp": "2025-05-01T10:00:00Z"}});
        assert_eq!(
            cells("example.com", "Widget", &obj),
            vec![json!("w"), json!("2025-05-01T10:00:00Z")]
        );
        let no_ts = json!({"metadata": {"name": "w"}});
        assert_eq!(
            cells("example.com", "Widget", &no_ts)[1],
            json!("0001-01-01T00:00:00Z")
        );
        // A known kind name in another group is not mistaken for the built-in one.
        assert_eq!(names("example.com", "Pod"), ["Name", "Created At"]);
    }
}
