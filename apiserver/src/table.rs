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
        ("events.k8s.io", "Event") => Printer { obj: &events_to_core(obj), now }.event(),
        ("apps", "Deployment") => p.deployment(),
        ("apps", "ReplicaSet") => p.replica_set(),
        ("apps", "StatefulSet") => p.stateful_set(),
        ("apps", "DaemonSet") => p.daemon_set(),
        ("apps", "ControllerRevision") => p.controller_revision(),
        ("batch", "Job") => p.job(),
        ("batch", "CronJob") => p.cron_job(),
        ("coordination.k8s.io", "Lease") => p.lease(),
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
    Column { name, ty, format: "", description, priority: 0 }
}

const fn wide(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column { name, ty, format: "", description, priority: 1 }
}

const NAME: Column = Column { name: "Name", ty: "string", format: "name", description: D_NAME, priority: 0 };
const AGE: Column = col("Age", "string", D_CREATED);
const CONTAINERS: Column = wide("Containers", "string", "Names of each container in the template.");
const IMAGES: Column = wide("Images", "string", "Images referenced by each container in the template.");

fn columns(group: &str, kind: &str) -> Vec<Column> {
    match (group, kind) {
        ("", "Pod") => vec![
            NAME,
            col("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
            col("Status", "string", "The aggregate status of the containers in this pod."),
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
        ("coordination.k8s.io", "Lease") => vec![NAME, col("Holder", "string", D_LEASE_HOLDER), AGE],
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
        Column { name: "Name", ty: "string", format: "name", description: D_NAME, priority: 1 },
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
        vec![self.name(), json!(str_at(self.obj, &["status", "phase"])), self.age()]
    }

    fn config_map(&self) -> Vec<Value> {
        let n = map_len(self.obj.get("data")) + map_len(self.obj.get("binaryData"));
        vec![self.name(), json!(n), self.age()]
    }

    fn secret(&self) -> Vec<Value> {
        // stringData is merged into data by the v1 -> internal conversion.
        let mut keys: Vec<&String> = Vec::new();
        for field in ["data", "stringData"] {
            for k in self.obj.get(field).and_then(Value::as_object).into_iter().flatten().map(|(k, _)| k) {
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
        vec![self.name(), json!(str_at(self.obj, &["spec", "holderIdentity"])), self.age()]
    }

    fn controller_revision(&self) -> Vec<Value> {
        let controller = controller_ref(self.obj)
            .map(|r| {
                let kind = str_at(r, &["kind"]);
                let group = str_at(r, &["apiVersion"]).rsplit_once('/').map(|(g, _)| g).unwrap_or("");
                let gk = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
                let name = str_at(r, &["name"]);
                if gk.is_empty() { name.to_string() } else { format!("{}/{name}", gk.to_lowercase()) }
            })
            .unwrap_or_else(|| "<none>".to_string());
        vec![self.name(), json!(controller), json!(int_at(self.obj, &["revision"])), self.age()]
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
        self.with_template(cells, &["spec", "template"], Some(self.selector_cell(&["spec", "selector"])))
    }

    fn stateful_set(&self) -> Vec<Value> {
        let ready = int_at(self.obj, &["status", "readyReplicas"]);
        let desired = int_at(self.obj, &["spec", "replicas"]);
        let cells = vec![self.name(), json!(format!("{ready}/{desired}")), self.age()];
        self.with_template(cells, &["spec", "template"], None)
    }

    fn daemon_set(&self) -> Vec<Value> {
        let status = |k: &str| json!(int_at(self.obj, &["status", k]));
        let node_selector = at(self.obj, &["spec", "template", "spec", "nodeSelector"]).and_then(Value::as_object);
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
        self.with_template(cells, &["spec", "template"], Some(self.selector_cell(&["spec", "selector"])))
    }

    fn job(&self) -> Vec<Value> {
        let cells = vec![
            self.name(),
            json!(job_status(self.obj)),
            json!(job_completions(self.obj)),
            json!(self.job_duration()),
            self.age(),
        ];
        self.with_template(cells, &["spec", "template"], Some(self.selector_cell(&["spec", "selector"])))
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
            + array(obj.pointer("/spec/initContainers")).iter().filter(|c| is_sidecar(c)).count();
        let mut walk = PodWalk { reason: initial_pod_reason(obj), ..PodWalk::default() };
        walk.init_containers(obj);
        if !walk.initializing || has_condition(obj, "Initialized") {
            walk.main_containers(obj);
        }
        let phase = str_at(obj, &["status", "phase"]);
        if obj.pointer("/metadata/deletionTimestamp").is_some_and(|v| !v.is_null()) {
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
        let finished = status.pointer("/lastState/terminated/finishedAt").and_then(parse_time);
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
            let sidecar = specs.iter().any(|c| str_at(c, &["name"]) == name && is_sidecar(c));
            self.note_restarts(status, sidecar);
            let terminated = status.pointer("/state/terminated").filter(|v| !v.is_null());
            let waiting_reason = status.pointer("/state/waiting/reason").and_then(Value::as_str).unwrap_or("");
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
            let waiting_reason = status.pointer("/state/waiting/reason").and_then(Value::as_str).unwrap_or("");
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
            self.reason = if has_condition(obj, "Ready") { "Running" } else { "NotReady" }.to_string();
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
        let ports: Vec<String> = array(obj.pointer("/spec/ports")).iter().map(service_port).collect();
        let ports = if ports.is_empty() { "<none>".to_string() } else { ports.join(",") };
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
}

fn node_status(obj: &Value) -> String {
    // The last Ready condition wins, as upstream builds a map by type.
    let ready = conditions(obj).iter().rev().find(|c| str_at(c, &["type"]) == "Ready");
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
    for (key, value) in obj.pointer("/metadata/labels").and_then(Value::as_object).into_iter().flatten() {
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
    if roles.is_empty() { "<none>".to_string() } else { roles.join(",") }
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
    let first = obj.pointer("/spec/clusterIPs/0").and_then(Value::as_str).unwrap_or("");
    let ip = if first.is_empty() { str_at(obj, &["spec", "clusterIP"]) } else { first };
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
            if all.is_empty() { "<pending>".to_string() } else { all.join(",") }
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
            if ip.is_empty() { str_at(i, &["hostname"]) } else { ip }
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
        let ips: Vec<&str> = array(subset.get("addresses")).iter().map(|a| str_at(a, &["ip"])).collect();
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
    if count > MAX { format!("{joined} + {} more...", count - MAX) } else { joined }
}

fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
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
        let target = if name.is_empty() { kind } else { format!("{kind}/{name}") };
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
    let pick = |a: &str, b: &str| if a.is_empty() { b.to_string() } else { a.to_string() };
    let component = pick(str_at(obj, &["source", "component"]), str_at(obj, &["reportingComponent"]));
    let instance = pick(str_at(obj, &["source", "host"]), str_at(obj, &["reportingInstance"]));
    if instance.is_empty() { component } else { format!("{component}, {instance}") }
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
    let deleting = obj.pointer("/metadata/deletionTimestamp").is_some_and(|v| !v.is_null());
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
const D_POD_IP: &str = "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.";
const D_POD_NODE: &str = "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename";
const D_POD_NOMINATED: &str = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.";
const D_POD_GATES: &str = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates";
const D_KUBELET: &str = "Kubelet Version reported by the node.";
const D_OS_IMAGE: &str = "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).";
const D_KERNEL: &str = "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).";
const D_RUNTIME: &str = "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).";
const D_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
const D_SVC_TYPE: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const D_SVC_CLUSTER_IP: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_EXTERNAL_IPS: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const D_SVC_PORTS: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const D_SVC_SELECTOR: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";
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
const D_EV_SOURCE: &str = "The component reporting this event. Should be a short machine understandable string.";
const D_EV_MESSAGE: &str = "A human-readable description of the status of this operation.";
const D_EV_FIRST: &str = "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)";
const D_EV_COUNT: &str = "The number of times this event has occurred.";
const D_DEP_UPDATED: &str = "Total number of non-terminated pods targeted by this deployment that have the desired template spec.";
const D_DEP_AVAILABLE: &str = "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.";
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

