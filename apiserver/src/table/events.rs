//! The Event table, for core/v1 and events.k8s.io/v1 Events alike.
//!
//! Upstream: `eventColumnDefinitions` and `printEvent` of
//! `pkg/printers/internalversion/printers.go`. Upstream converts both API
//! versions to one internal Event; here an events.k8s.io/v1 Event is renamed
//! onto the core/v1 field names (`events_to_core`) and printed as one.

use serde_json::{Map, Value, json};

use super::helpers::is_set;
use super::{D_NAME, Row, TablePrinter, col, wide};
use crate::jsonpath::{int_at, str_at};

/// core/v1 Event.
pub(super) static EVENT: TablePrinter = TablePrinter::exact(COLUMNS, print_event);

/// events.k8s.io/v1 Event.
pub(super) static EVENT_V1: TablePrinter = TablePrinter::exact(COLUMNS, |r| {
    print_event(&Row {
        obj: &events_to_core(r.obj),
        now: r.now,
    })
});

/// Name comes last and only in wide output: events are read by time.
const COLUMNS: &[super::Column] = &[
    col("Last Seen", "string", D_LAST),
    col("Type", "string", D_TYPE),
    col("Reason", "string", D_REASON),
    col("Object", "string", "The object that this event is about."),
    wide("Subobject", "string", D_SUBOBJECT),
    wide("Source", "string", D_SOURCE),
    col(
        "Message",
        "string",
        "A human-readable description of the status of this operation.",
    ),
    wide("First Seen", "string", D_FIRST),
    wide("Count", "string", "The number of times this event has occurred."),
    super::Column {
        format: "name",
        ..wide("Name", "string", D_NAME)
    },
];
const D_LAST: &str = "The time at which the most recent occurrence of this event was recorded.";
const D_TYPE: &str = "Type of this event (Normal, Warning), new types could be added in the future";
const D_REASON: &str = "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.";
const D_SUBOBJECT: &str = "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.";
const D_SOURCE: &str = "The component reporting this event. Should be a short machine understandable string.";
const D_FIRST: &str =
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)";

fn print_event(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let first = if is_set(obj.get("firstTimestamp")) {
        r.since(obj.get("firstTimestamp"))
    } else {
        r.since(obj.get("eventTime"))
    };
    let mut last = if is_set(obj.get("lastTimestamp")) {
        r.since(obj.get("lastTimestamp"))
    } else {
        first.clone()
    };
    let mut count = int_at(obj, &["count"]);
    if let Some(series) = obj.get("series").filter(|s| !s.is_null()) {
        last = r.since(series.get("lastObservedTime"));
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
        r.name(),
    ]
}

/// `source.component, source.host`, each falling back to the reporting
/// controller and instance.
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

/// Maps an events.k8s.io/v1 Event onto core/v1 field names.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells, names};

    #[test]
    fn event_columns_for_both_apis() {
        assert_eq!(
            names(&EVENT),
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
        assert_eq!(names(&EVENT_V1), names(&EVENT));
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
            cells(&EVENT, &ev),
            json!([
                "60s",
                "Normal",
                "Pulled",
                "pod/web-1",
                "spec.containers{app}",
                "kubelet, node-1",
                "Successfully pulled image",
                "5m",
                3,
                "web.17f"
            ])
        );
        let new_api = json!({
            "metadata": {"name": "e2"},
            "regarding": {"kind": "Deployment", "name": "web"},
            "reason": "ScalingReplicaSet", "type": "Normal", "note": "Scaled up",
            "reportingController": "deployment-controller", "reportingInstance": "",
            "eventTime": ago(20),
            "deprecatedCount": 0
        });
        let c = cells(&EVENT_V1, &new_api);
        assert_eq!(
            c,
            json!([
                "20s",
                "Normal",
                "ScalingReplicaSet",
                "deployment/web",
                "",
                "deployment-controller",
                "Scaled up",
                "20s",
                1,
                "e2"
            ])
        );
        let series = json!({
            "metadata": {"name": "e3"}, "involvedObject": {"kind": "Node"},
            "eventTime": ago(600), "series": {"count": 7, "lastObservedTime": ago(5)}
        });
        let c = cells(&EVENT, &series);
        assert_eq!(
            (c[0].clone(), c[3].clone(), c[7].clone(), c[8].clone()),
            (json!("5s"), json!("node"), json!("10m"), json!(7))
        );
        let bare = json!({"metadata": {"name": "e4"}});
        let c = cells(&EVENT, &bare);
        assert_eq!(
            (c[0].clone(), c[7].clone()),
            (json!("<unknown>"), json!("<unknown>"))
        );
    }
}
