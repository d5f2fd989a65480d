//! Server-side Table printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).
//!
//! Upstream: `pkg/printers/internalversion/printers.go` (v1.33), where
//! `AddHandlers` registers, per type, a `[]metav1.TableColumnDefinition` with the
//! `printX` function that fills its rows; and, for kinds without a printer,
//! `staging/src/k8s.io/apiserver/pkg/registry/rest/table.go` (Name + "Created At").
//! The server always generates wide rows, so every row holds all cells,
//! priority-1 ones included.
//!
//! Layout: each built-in kind has one [`TablePrinter`] — its columns and its
//! print function side by side — in the file of its group: `pod`, `core`
//! (the other core/v1 kinds), `events` (core/v1 and events.k8s.io/v1),
//! `apps`, `batch`, `coordination`, `discovery`. [`printer_for`] picks
//! one by the `Kind` the resource resolves to (`kind_of`, the same
//! resolution the strategies in [`crate::kinds`] use), so no table code matches
//! group and kind strings. A custom resource's table is built from its CRD's
//! printer columns (`custom`). Shared cell helpers (ages, durations, container
//! lists, object access) are in `helpers`.
//!
//! Simplifications: objects are v1 JSON, so the few v1->internal conversions the
//! printers depend on are applied by hand (pod IP, service cluster IPs, secret
//! `stringData`, events.k8s.io field names). Column descriptions are the upstream
//! OpenAPI field docs copied as constants; they are not user-visible. Upstream
//! print functions return rows (a list prints one row per item); here a print
//! function returns the cells of one object's row and [`crate::http::tables`]
//! assembles the Table.

mod admissionregistration;
mod apiregistration;
mod apps;
mod autoscaling;
mod batch;
mod certificates;
mod coordination;
mod core;
mod custom;
mod discovery;
mod events;
mod helpers;
mod networking;
mod pod;
mod policy;
mod quota;
mod rbac;
mod scheduling;
mod storage;

pub use helpers::{human_duration, human_duration_between, translate_timestamp_since};

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::jsonpath::{at, str_at};
use crate::kinds::{Kind, kind_of};
use crate::registry::ResourceInfo;
use helpers::{container_cells, parse_time};

/// The table of one resource: a built-in kind's printer, or the one a
/// CustomResourceDefinition's printer columns make.
pub enum Printer {
    /// A kind with a printer of its own, or the default table.
    Builtin(&'static TablePrinter),
    /// A custom resource: Name and the version's `additionalPrinterColumns`.
    Custom(custom::CustomPrinter),
}

impl Printer {
    /// The `columnDefinitions` of the Table.
    pub fn column_definitions(&self) -> Vec<Value> {
        match self {
            Printer::Builtin(p) => p.column_definitions(),
            Printer::Custom(p) => p.column_definitions(),
        }
    }

    /// The cells of `obj`'s row, in column order, ages measured at `now`.
    pub fn row_cells(&self, obj: &Value, now: Timestamp) -> Vec<Value> {
        match self {
            Printer::Builtin(p) => p.row_cells(obj, now),
            Printer::Custom(p) => p.row_cells(obj, now),
        }
    }

    /// The row's `conditions` (custom resources have none).
    pub fn row_conditions(&self, obj: &Value) -> Option<Value> {
        match self {
            Printer::Builtin(p) => p.row_conditions(obj),
            Printer::Custom(_) => None,
        }
    }
}

/// The printer of the resource `info` serves: a custom resource's from its
/// CRD version (its JSONPaths parsed once per call, so once per Table), a
/// built-in kind's own, or the default (Name, Created At).
pub fn printer_for(info: &ResourceInfo) -> Printer {
    match &info.custom {
        Some(custom) => Printer::Custom(custom::CustomPrinter::new(
            custom.version.additional_printer_columns.as_deref(),
        )),
        None => Printer::Builtin(builtin_printer_for(info)),
    }
}

/// The printer of a built-in kind, or the default table.
fn builtin_printer_for(info: &ResourceInfo) -> &'static TablePrinter {
    match kind_of(info) {
        Kind::Pod => &pod::POD,
        Kind::Namespace => &core::NAMESPACE,
        Kind::Node => &core::NODE,
        Kind::Service => &core::SERVICE,
        Kind::Endpoints => &core::ENDPOINTS,
        Kind::ConfigMap => &core::CONFIG_MAP,
        Kind::Secret => &core::SECRET,
        Kind::ServiceAccount => &core::SERVICE_ACCOUNT,
        Kind::Event => &events::EVENT,
        Kind::EventV1 => &events::EVENT_V1,
        Kind::Deployment => &apps::DEPLOYMENT,
        Kind::ReplicaSet => &apps::REPLICA_SET,
        Kind::StatefulSet => &apps::STATEFUL_SET,
        Kind::DaemonSet => &apps::DAEMON_SET,
        Kind::ControllerRevision => &apps::CONTROLLER_REVISION,
        Kind::Job => &batch::JOB,
        Kind::CronJob => &batch::CRON_JOB,
        Kind::Lease => &coordination::LEASE,
        Kind::EndpointSlice => &discovery::ENDPOINT_SLICE,
        Kind::ResourceQuota => &quota::RESOURCE_QUOTA,
        Kind::LimitRange => &quota::LIMIT_RANGE,
        Kind::PodTemplate => &quota::POD_TEMPLATE,
        Kind::ReplicationController => &quota::REPLICATION_CONTROLLER,
        Kind::Ingress => &networking::INGRESS,
        Kind::IngressClass => &networking::INGRESS_CLASS,
        Kind::NetworkPolicy => &networking::NETWORK_POLICY,
        Kind::PodDisruptionBudget => &policy::POD_DISRUPTION_BUDGET,
        Kind::Role => &rbac::ROLE,
        Kind::ClusterRole => &rbac::CLUSTER_ROLE,
        Kind::RoleBinding => &rbac::ROLE_BINDING,
        Kind::ClusterRoleBinding => &rbac::CLUSTER_ROLE_BINDING,
        Kind::HorizontalPodAutoscaler => &autoscaling::HORIZONTAL_POD_AUTOSCALER,
        Kind::HorizontalPodAutoscalerV1 => &autoscaling::HORIZONTAL_POD_AUTOSCALER_V1,
        Kind::ValidatingWebhookConfiguration => &admissionregistration::VALIDATING_WEBHOOK_CONFIGURATION,
        Kind::MutatingWebhookConfiguration => &admissionregistration::MUTATING_WEBHOOK_CONFIGURATION,
        Kind::ValidatingAdmissionPolicy => &admissionregistration::VALIDATING_ADMISSION_POLICY,
        Kind::ValidatingAdmissionPolicyBinding => &admissionregistration::VALIDATING_ADMISSION_POLICY_BINDING,
        Kind::APIService => &apiregistration::API_SERVICE,
        Kind::PersistentVolume => &storage::PERSISTENT_VOLUME,
        Kind::PersistentVolumeClaim => &storage::PERSISTENT_VOLUME_CLAIM,
        Kind::StorageClass => &storage::STORAGE_CLASS,
        Kind::CSIDriver => &storage::CSI_DRIVER,
        Kind::PriorityClass => &scheduling::PRIORITY_CLASS,
        Kind::RuntimeClass => &scheduling::RUNTIME_CLASS,
        Kind::CertificateSigningRequest => &certificates::CERTIFICATE_SIGNING_REQUEST,
        Kind::Review => &REVIEW,
        Kind::CustomResourceDefinition => &CUSTOM_RESOURCE_DEFINITION,
        _ => &DEFAULT,
    }
}

/// One kind's table: its column definitions and the function that prints an
/// object's cells in column order (upstream: one `TableGenerator` handler).
pub struct TablePrinter {
    layout: Layout,
    print: fn(&Row) -> Vec<Value>,
    conditions: Option<fn(&Value) -> Option<Value>>,
}

impl TablePrinter {
    /// A table of Name, `columns`, Age, then `after_age`.
    const fn named(
        columns: &'static [Column],
        after_age: &'static [Column],
        print: fn(&Row) -> Vec<Value>,
    ) -> Self {
        Self::new(Layout::Named { columns, after_age }, print)
    }

    /// A workload table: Name, `columns`, Age, Containers, Images and, when
    /// `selector` holds its description, a Selector column.
    const fn workload(
        columns: &'static [Column],
        selector: Option<&'static str>,
        print: fn(&Row) -> Vec<Value>,
    ) -> Self {
        Self::new(Layout::Workload { columns, selector }, print)
    }

    /// A table of exactly `columns`.
    const fn exact(columns: &'static [Column], print: fn(&Row) -> Vec<Value>) -> Self {
        Self::new(Layout::Exact(columns), print)
    }

    const fn new(layout: Layout, print: fn(&Row) -> Vec<Value>) -> Self {
        Self {
            layout,
            print,
            conditions: None,
        }
    }

    /// The same printer, with row conditions.
    const fn with_conditions(self, conditions: fn(&Value) -> Option<Value>) -> Self {
        Self {
            conditions: Some(conditions),
            ..self
        }
    }

    /// The `columnDefinitions` of the Table.
    pub fn column_definitions(&self) -> Vec<Value> {
        self.layout.columns().into_iter().map(Column::to_json).collect()
    }

    /// The cells of `obj`'s row, in column order, ages measured at `now`.
    pub fn row_cells(&self, obj: &Value, now: Timestamp) -> Vec<Value> {
        (self.print)(&Row { obj, now })
    }

    /// The row's `conditions`: only pods have any, `Completed` once the pod
    /// is Succeeded or Failed.
    pub fn row_conditions(&self, obj: &Value) -> Option<Value> {
        self.conditions.and_then(|f| f(obj))
    }
}

/// Where a kind's columns stand around Name and Age.
enum Layout {
    /// Name, `columns`, Age, then `after_age`: most printers.
    Named {
        columns: &'static [Column],
        after_age: &'static [Column],
    },
    /// Name, `columns`, Age, Containers, Images, then a Selector described by
    /// `selector` if any: the workload printers (cells by `Row::workload`).
    Workload {
        columns: &'static [Column],
        selector: Option<&'static str>,
    },
    /// Exactly these columns (Event, the default table).
    Exact(&'static [Column]),
}

impl Layout {
    fn columns(&self) -> Vec<Column> {
        match *self {
            Layout::Named { columns, after_age } => [&[NAME][..], columns, &[AGE], after_age].concat(),
            Layout::Workload { columns, selector } => {
                let selector = selector.map(|d| wide("Selector", "string", d));
                [
                    &[NAME][..],
                    columns,
                    &[AGE, CONTAINERS, IMAGES],
                    selector.as_slice(),
                ]
                .concat()
            }
            Layout::Exact(columns) => columns.to_vec(),
        }
    }
}

// ---------------------------------------------------------------------------
// Column definitions
// ---------------------------------------------------------------------------

/// A `metav1.TableColumnDefinition`.
#[derive(Clone, Copy)]
struct Column {
    name: &'static str,
    ty: &'static str,
    format: &'static str,
    description: &'static str,
    priority: i64,
}

impl Column {
    fn to_json(self) -> Value {
        json!({
            "name": self.name,
            "type": self.ty,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// A priority-0 column (shown by `kubectl get`).
const fn col(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name,
        ty,
        format: "",
        description,
        priority: 0,
    }
}

/// A priority-1 column (shown by `kubectl get -o wide`).
const fn wide(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        priority: 1,
        ..col(name, ty, description)
    }
}

const NAME: Column = Column {
    format: "name",
    ..col("Name", "string", D_NAME)
};
const AGE: Column = col("Age", "string", D_CREATED);
const CONTAINERS: Column = wide("Containers", "string", "Names of each container in the template.");
const IMAGES: Column = wide(
    "Images",
    "string",
    "Images referenced by each container in the template.",
);

const D_NAME: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const D_CREATED: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

// ---------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------

/// The object a print function reads, and the time its ages are measured at.
struct Row<'a> {
    obj: &'a Value,
    now: Timestamp,
}

impl Row<'_> {
    fn name(&self) -> Value {
        json!(str_at(self.obj, &["metadata", "name"]))
    }

    fn age(&self) -> Value {
        json!(self.since(self.obj.pointer("/metadata/creationTimestamp")))
    }

    fn since(&self, ts: Option<&Value>) -> String {
        translate_timestamp_since(ts, self.now)
    }

    /// The cells of a `Layout::Named` table: Name, `own`, Age, `after_age`.
    fn named(
        &self,
        own: impl IntoIterator<Item = Value>,
        after_age: impl IntoIterator<Item = Value>,
    ) -> Vec<Value> {
        let mut cells = vec![self.name()];
        cells.extend(own);
        cells.push(self.age());
        cells.extend(after_age);
        cells
    }

    /// The cells of a `Layout::Workload` table: Name, `own`, Age, then the
    /// containers and images of the pod template at `template` and `selector`.
    fn workload(
        &self,
        own: impl IntoIterator<Item = Value>,
        template: &[&str],
        selector: Option<Value>,
    ) -> Vec<Value> {
        let containers = at(self.obj, template).and_then(|t| t.pointer("/spec/containers"));
        let (names, images) = container_cells(containers);
        let mut cells = self.named(own, [json!(names), json!(images)]);
        cells.extend(selector);
        cells
    }
}

// ---------------------------------------------------------------------------
// Default table
// ---------------------------------------------------------------------------

/// Kinds without a printer: `rest.DefaultTableConvertor`.
static DEFAULT: TablePrinter =
    TablePrinter::exact(&[NAME, col("Created At", "date", D_CREATED)], print_default);

/// The review kinds (TokenReview, SubjectAccessReview, ...): their REST
/// storage upstream has no table convertor of its own, so a Table of one
/// is the default (Name, Created At); a printer of its own name only so
/// that every built-in kind is seen to be decided.
static REVIEW: TablePrinter =
    TablePrinter::exact(&[NAME, col("Created At", "date", D_CREATED)], print_default);

/// CustomResourceDefinitions: upstream's CRD storage has no table
/// convertor of its own either (`kubectl get crds`: NAME, CREATED AT).
static CUSTOM_RESOURCE_DEFINITION: TablePrinter =
    TablePrinter::exact(&[NAME, col("Created At", "date", D_CREATED)], print_default);

fn print_default(r: &Row) -> Vec<Value> {
    let created = r
        .obj
        .pointer("/metadata/creationTimestamp")
        .and_then(parse_time)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "0001-01-01T00:00:00Z".to_string());
    vec![r.name(), json!(created)]
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

/// Fixtures for the printer tests of every group file.
#[cfg(test)]
mod testing {
    use super::*;

    const NOW: &str = "2025-05-01T12:00:00Z";

    pub(super) fn now() -> Timestamp {
        NOW.parse().unwrap()
    }

    /// RFC3339 timestamp `secs` seconds before NOW.
    pub(super) fn ago(secs: i64) -> String {
        let t = now() - jiff::SignedDuration::from_secs(secs);
        t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// The cells of `obj`'s row as a JSON array, checked to have one cell
    /// per column.
    pub(super) fn cells(printer: &TablePrinter, obj: &Value) -> Value {
        let cells = printer.row_cells(obj, now());
        assert_eq!(cells.len(), printer.column_definitions().len());
        Value::Array(cells)
    }

    pub(super) fn names(printer: &TablePrinter) -> Vec<String> {
        printer
            .column_definitions()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{cells, names};
    use super::*;
    use crate::registry::builtin;

    fn info(group: &str, kind: &str) -> ResourceInfo {
        let mut info = builtin().into_iter().next().unwrap();
        (info.group, info.kind) = (group.to_string(), kind.to_string());
        info
    }

    #[test]
    fn every_builtin_kind_prints_one_cell_per_column() {
        for info in builtin() {
            let printer = builtin_printer_for(&info);
            for c in printer.column_definitions() {
                assert_eq!(c.as_object().unwrap().len(), 5, "{}", info.kind);
                assert!(
                    !c["description"].as_str().unwrap().is_empty(),
                    "{} {}",
                    info.kind,
                    c["name"]
                );
            }
            cells(printer, &json!({"metadata": {"name": "x"}}));
            assert!(!std::ptr::eq(printer, &DEFAULT), "{} has a printer", info.kind);
        }
    }

    #[test]
    fn column_definitions_serialize_every_field() {
        let cols = pod::POD.column_definitions();
        assert_eq!(
            cols[0],
            json!({"name": "Name", "type": "string", "format": "name", "description": D_NAME, "priority": 0})
        );
        assert_eq!(cols[5]["priority"], json!(1));
        assert_eq!(cols[1]["format"], json!(""));
    }

    #[test]
    fn default_table_for_unknown_kinds() {
        let widget = builtin_printer_for(&info("example.com", "Widget"));
        assert_eq!(names(widget), ["Name", "Created At"]);
        assert_eq!(widget.column_definitions()[1]["type"], json!("date"));
        let obj = json!({"metadata": {"name": "w", "creationTimestamp": "2025-05-01T10:00:00Z"}});
        assert_eq!(cells(widget, &obj), json!(["w", "2025-05-01T10:00:00Z"]));
        let no_ts = json!({"metadata": {"name": "w"}});
        assert_eq!(cells(widget, &no_ts)[1], json!("0001-01-01T00:00:00Z"));
        assert_eq!(widget.row_conditions(&obj), None);
        // A known kind name in another group is not mistaken for the built-in one.
        assert_eq!(
            names(builtin_printer_for(&info("example.com", "Pod"))),
            ["Name", "Created At"]
        );
        assert_eq!(names(builtin_printer_for(&info("", "Pod")))[1], "Ready");
    }
}
