//! Tables of custom resources: a CRD version's `additionalPrinterColumns`.
//!
//! Upstream: `apiextensions-apiserver/pkg/registry/customresource/tableconvertor/tableconvertor.go`
//! (`New`, `ConvertToTable`, `cellForJSONValue`) and `serveDefaultColumnsIfEmpty`
//! of `apiextensions-apiserver/pkg/apiserver/customresource_handler.go`.
//!
//! The columns are `Name`, then one per printer column in the order the CRD
//! lists them (its name, type, format, priority, and its description or
//! "Custom resource definition column (in JSONPath format): <path>"); a
//! version that declares none gets `Age`, a `date` column of
//! `.metadata.creationTimestamp`. A column whose path does not parse ends
//! the list there, as upstream's convertor does (the CRD's validation
//! rejects such paths, so only stored CRDs older than it could have one).
//!
//! A cell is the column's JSONPath (`{<jsonPath>}`, missing keys allowed,
//! [`crate::jsonpath::template`]) evaluated on the object. Only the first
//! value found counts: `.spec.containers[*].name` shows the first name, as
//! upstream. Then by the column's type:
//! * `string`: the value as `kubectl -o jsonpath` prints it (numbers bare,
//!   objects and lists as JSON, null as `<no value>`);
//! * `integer` / `number` / `boolean`: the value if it is one (a float is
//!   truncated for `integer`), else an empty cell;
//! * `date`: the age since the RFC 3339 timestamp (`5m`, `3d2h`), `<unknown>`
//!   for an empty one, `<invalid>` for an unparsable one;
//! * no value, an evaluation error, or any other type: an empty cell (JSON
//!   null), which kubectl prints as `<none>`.
//!
//! `priority` travels in the column definitions: the server always sends
//! every cell and `kubectl get` shows the priority-0 columns, `-o wide` all.

use jiff::Timestamp;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition;
use serde_json::{Value, json};

use super::helpers::human_duration_between;
use super::{D_CREATED, D_NAME};
use crate::jsonpath::str_at;
use crate::jsonpath::template::{JsonPath, print_value};

/// The table of one custom resource version.
pub struct CustomPrinter {
    columns: Vec<PrinterColumn>,
}

/// One printer column: its definition and its compiled path.
struct PrinterColumn {
    definition: Value,
    ty: String,
    path: JsonPath,
}

impl CustomPrinter {
    /// The printer of a version with these `additionalPrinterColumns`
    /// (`None` or empty: the default `Age` column).
    pub fn new(columns: Option<&[CustomResourceColumnDefinition]>) -> Self {
        let declared = columns.filter(|c| !c.is_empty());
        let default_age;
        let columns = match declared {
            Some(columns) => columns,
            None => {
                default_age = [age_column()];
                &default_age[..]
            }
        };
        let mut compiled = Vec::new();
        for column in columns {
            let Ok(path) = JsonPath::parse(&format!("{{{}}}", column.json_path)) else {
                break;
            };
            compiled.push(PrinterColumn {
                definition: definition(column),
                ty: column.type_.clone(),
                path: path.allow_missing_keys(true),
            });
        }
        CustomPrinter { columns: compiled }
    }

    /// The `columnDefinitions`: Name, then the printer columns.
    pub fn column_definitions(&self) -> Vec<Value> {
        let name = json!({
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": D_NAME,
            "priority": 0,
        });
        std::iter::once(name)
            .chain(self.columns.iter().map(|c| c.definition.clone()))
            .collect()
    }

    /// The cells of `obj`'s row, dates measured at `now`.
    pub fn row_cells(&self, obj: &Value, now: Timestamp) -> Vec<Value> {
        let name = json!(str_at(obj, &["metadata", "name"]));
        std::iter::once(name)
            .chain(self.columns.iter().map(|c| c.cell(obj, now)))
            .collect()
    }
}

impl PrinterColumn {
    fn cell(&self, obj: &Value, now: Timestamp) -> Value {
        let Ok(results) = self.path.find_results(obj) else {
            return Value::Null;
        };
        let Some(value) = results.first().and_then(|r| r.first()) else {
            return Value::Null;
        };
        if self.ty == "string" {
            return Value::String(print_value(value));
        }
        typed_cell(&self.ty, value, now)
    }
}

/// Upstream `cellForJSONValue`: the value when it has the column's type.
fn typed_cell(ty: &str, value: &Value, now: Timestamp) -> Value {
    match (ty, value) {
        ("integer", Value::Number(n)) => match n.as_i64() {
            Some(i) => json!(i),
            None => json!(n.as_f64().unwrap_or_default() as i64),
        },
        ("number", Value::Number(n)) => json!(n.as_f64()),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => json!(age(s, now)),
        _ => Value::Null,
    }
}

/// `ConvertToHumanReadableDateType` of a `metav1.Time` query parameter.
fn age(timestamp: &str, now: Timestamp) -> String {
    if timestamp.is_empty() || timestamp == "null" {
        return "<unknown>".into();
    }
    match timestamp.parse::<Timestamp>() {
        Err(_) => "<invalid>".into(),
        Ok(t) if t.as_second() == GO_ZERO_TIME_SECONDS => "<unknown>".into(),
        Ok(t) => human_duration_between(t, now),
    }
}

/// Unix seconds of Go's zero `time.Time` (0001-01-01T00:00:00Z).
const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;

/// A column's `TableColumnDefinition`.
fn definition(column: &CustomResourceColumnDefinition) -> Value {
    let description = match column.description.as_deref() {
        Some(d) if !d.is_empty() => d.to_string(),
        _ => format!(
            "Custom resource definition column (in JSONPath format): {}",
            column.json_path
        ),
    };
    json!({
        "name": column.name,
        "type": column.type_,
        "format": column.format.as_deref().unwrap_or_default(),
        "description": description,
        "priority": column.priority.unwrap_or_default(),
    })
}

/// Upstream's column for versions that declare none.
fn age_column() -> CustomResourceColumnDefinition {
    CustomResourceColumnDefinition {
        name: "Age".into(),
        type_: "date".into(),
        description: Some(D_CREATED.into()),
        json_path: ".metadata.creationTimestamp".into(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ago, now};
    use super::*;

    fn column(name: &str, ty: &str, path: &str) -> CustomResourceColumnDefinition {
        CustomResourceColumnDefinition {
            name: name.into(),
            type_: ty.into(),
            json_path: path.into(),
            ..Default::default()
        }
    }

    fn printer(columns: &[CustomResourceColumnDefinition]) -> CustomPrinter {
        CustomPrinter::new(Some(columns))
    }

    fn names(p: &CustomPrinter) -> Vec<String> {
        p.column_definitions()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The cells after Name.
    fn cells(p: &CustomPrinter, obj: &Value) -> Vec<Value> {
        let cells = p.row_cells(obj, now());
        assert_eq!(cells.len(), p.column_definitions().len());
        cells[1..].to_vec()
    }

    #[test]
    fn no_printer_columns_gives_name_and_age() {
        for p in [CustomPrinter::new(None), printer(&[])] {
            assert_eq!(names(&p), ["Name", "Age"]);
            let age = &p.column_definitions()[1];
            assert_eq!(
                age,
                &json!({"name": "Age", "type": "date", "format": "", "description": D_CREATED, "priority": 0})
            );
            let obj = json!({"metadata": {"name": "w", "creationTimestamp": ago(300)}});
            assert_eq!(p.row_cells(&obj, now()), [json!("w"), json!("5m")]);
        }
    }

    #[test]
    fn definitions_carry_type_format_description_and_priority() {
        let mut wide = column(
            "Reconciled",
            "string",
            ".status.conditions[?(@.type == 'Reconciled')].status",
        );
        wide.priority = Some(1);
        wide.format = Some("byte".into());
        let mut described = column("Version", "string", ".spec.version");
        described.description = Some("The version of Prometheus".into());
        let p = printer(&[described, wide]);
        let defs = p.column_definitions();
        assert_eq!(defs[0]["format"], "name");
        assert_eq!(defs[0]["description"], D_NAME);
        assert_eq!(
            defs[1],
            json!({"name": "Version", "type": "string", "format": "", "description": "The version of Prometheus", "priority": 0})
        );
        assert_eq!(
            defs[2],
            json!({"name": "Reconciled", "type": "string", "format": "byte",
                   "description": "Custom resource definition column (in JSONPath format): .status.conditions[?(@.type == 'Reconciled')].status",
                   "priority": 1})
        );
    }

    #[test]
    fn cells_are_typed_as_their_column() {
        let p = printer(&[
            column("I", "integer", ".v"),
            column("N", "number", ".v"),
            column("B", "boolean", ".v"),
            column("S", "string", ".v"),
        ]);
        let row = |v: Value| cells(&p, &json!({"metadata": {"name": "x"}, "v": v}));
        assert_eq!(row(json!(3)), [json!(3), json!(3.0), Value::Null, json!("3")]);
        assert_eq!(row(json!(2.7)), [json!(2), json!(2.7), Value::Null, json!("2.7")]);
        assert_eq!(
            row(json!(true)),
            [Value::Null, Value::Null, json!(true), json!("true")]
        );
        assert_eq!(
            row(json!("7")),
            [Value::Null, Value::Null, Value::Null, json!("7")]
        );
        assert_eq!(
            row(json!({"b": 1, "a": [1, 2]})),
            [
                Value::Null,
                Value::Null,
                Value::Null,
                json!(r#"{"a":[1,2],"b":1}"#)
            ]
        );
        assert_eq!(
            row(Value::Null),
            [Value::Null, Value::Null, Value::Null, json!("<no value>")]
        );
    }

    #[test]
    fn missing_fields_and_errors_are_empty_cells() {
        let p = printer(&[
            column("Missing", "string", ".spec.nothing.here"),
            column("Index", "string", ".spec.items[3]"),
            column("NotAList", "integer", ".spec[0]"),
            column("Kind", "unknown", ".spec"),
        ]);
        let obj = json!({"metadata": {"name": "x"}, "spec": {"items": [1]}});
        assert_eq!(cells(&p, &obj), vec![Value::Null; 4]);
    }

    #[test]
    fn only_the_first_value_counts() {
        let p = printer(&[column("Containers", "string", ".spec.containers[*].name")]);
        let obj = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(cells(&p, &obj), [json!("a")]);
    }

    #[test]
    fn filters_and_recursive_descent() {
        let p = printer(&[
            column(
                "Available",
                "string",
                ".status.conditions[?(@.type == 'Available')].status",
            ),
            column(
                "Ready",
                "string",
                r#".status.conditions[?(@.type=="Ready")].reason"#,
            ),
            column("Image", "string", "..image"),
        ]);
        let obj = json!({
            "spec": {"template": {"image": "quay.io/x:v1"}},
            "status": {"conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Ready", "status": "False", "reason": "Pending"}
            ]}
        });
        assert_eq!(
            cells(&p, &obj),
            [json!("True"), json!("Pending"), json!("quay.io/x:v1")]
        );
        let no_conditions = json!({"status": {}});
        assert_eq!(cells(&p, &no_conditions)[..2], [Value::Null, Value::Null]);
    }

    #[test]
    fn dates_are_ages() {
        let p = printer(&[column("Started", "date", ".status.startTime")]);
        let row = |v: Value| cells(&p, &json!({"status": {"startTime": v}}))[0].clone();
        assert_eq!(row(json!(ago(90))), json!("90s"));
        assert_eq!(row(json!(ago(3 * 86400 + 7200))), json!("3d2h"));
        assert_eq!(row(json!("2025-05-01T11:59:00.5+00:00")), json!("59s"));
        assert_eq!(row(json!("")), json!("<unknown>"));
        assert_eq!(row(json!("0001-01-01T00:00:00Z")), json!("<unknown>"));
        assert_eq!(row(json!("yesterday")), json!("<invalid>"));
        assert_eq!(row(json!(12)), Value::Null);
        assert_eq!(row(json!(ago(-3600))), json!("<invalid>"));
    }

    #[test]
    fn an_unparsable_path_ends_the_columns() {
        let p = printer(&[
            column("A", "string", ".a"),
            column("Bad", "string", ".b[x]"),
            column("C", "string", ".c"),
        ]);
        assert_eq!(names(&p), ["Name", "A"]);
    }

    /// The `v1` version of prometheus-operator's `prometheuses.monitoring.coreos.com`,
    /// its printer columns as the CRD in `shared/manifests` declares them.
    const PROMETHEUS_V1: &str = r#"
name: v1
served: true
storage: true
additionalPrinterColumns:
- description: The version of Prometheus
  jsonPath: .spec.version
  name: Version
  type: string
- description: The number of desired replicas
  jsonPath: .spec.replicas
  name: Desired
  type: integer
- description: The number of ready replicas
  jsonPath: .status.availableReplicas
  name: Ready
  type: integer
- jsonPath: .status.conditions[?(@.type == 'Reconciled')].status
  name: Reconciled
  type: string
- jsonPath: .status.conditions[?(@.type == 'Available')].status
  name: Available
  type: string
- jsonPath: .metadata.creationTimestamp
  name: Age
  type: date
- description: Whether the resource reconciliation is paused or not
  jsonPath: .status.paused
  name: Paused
  priority: 1
  type: boolean
subresources:
  status: {}
"#;

    /// A registry row of a custom resource, as the CRD lifecycle makes one.
    fn prometheus_row() -> crate::registry::ResourceInfo {
        use crate::crd::CustomVersion;
        let version = serde_saphyr::from_str(PROMETHEUS_V1).expect("a CRD version");
        let mut info = crate::registry::builtin().into_iter().next().unwrap();
        (info.group, info.version, info.kind, info.plural) = (
            "monitoring.coreos.com".into(),
            "v1".into(),
            "Prometheus".into(),
            "prometheuses".into(),
        );
        info.custom = Some(std::sync::Arc::new(CustomVersion {
            crd: "prometheuses.monitoring.coreos.com".into(),
            version,
            structural: None,
        }));
        info
    }

    #[test]
    fn a_prometheus_table() {
        let printer = super::super::printer_for(&prometheus_row());
        let defs = printer.column_definitions();
        let header: Vec<(&str, &str, i64)> = defs
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap();
                (name, c["type"].as_str().unwrap(), c["priority"].as_i64().unwrap())
            })
            .collect();
        assert_eq!(
            header,
            [
                ("Name", "string", 0),
                ("Version", "string", 0),
                ("Desired", "integer", 0),
                ("Ready", "integer", 0),
                ("Reconciled", "string", 0),
                ("Available", "string", 0),
                ("Age", "date", 0),
                ("Paused", "boolean", 1),
            ]
        );
        let running = json!({
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "Prometheus",
            "metadata": {"name": "k8s", "namespace": "monitoring", "creationTimestamp": ago(7200)},
            "spec": {"version": "v3.1.0", "replicas": 2},
            "status": {"availableReplicas": 1, "paused": false, "conditions": [
                {"type": "Available", "status": "Degraded"},
                {"type": "Reconciled", "status": "True"}
            ]}
        });
        assert_eq!(
            printer.row_cells(&running, now()),
            [
                json!("k8s"),
                json!("v3.1.0"),
                json!(2),
                json!(1),
                json!("True"),
                json!("Degraded"),
                json!("120m"),
                json!(false)
            ]
        );
        assert_eq!(printer.row_conditions(&running), None);
        let fresh = json!({
            "metadata": {"name": "new", "creationTimestamp": ago(4)},
            "spec": {"replicas": 1}
        });
        assert_eq!(
            printer.row_cells(&fresh, now()),
            [
                json!("new"),
                Value::Null,
                json!(1),
                Value::Null,
                Value::Null,
                Value::Null,
                json!("4s"),
                Value::Null
            ]
        );
    }
}
