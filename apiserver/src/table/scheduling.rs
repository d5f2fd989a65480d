//! Tables of scheduling.k8s.io/v1 PriorityClass and node.k8s.io/v1
//! RuntimeClass.
//!
//! Upstream: `priorityClassColumnDefinitions`, `printPriorityClass`,
//! `runtimeClassColumnDefinitions`, `printRuntimeClass` of
//! `pkg/printers/internalversion/printers.go`. Upstream describes the
//! RuntimeClass Handler column with `ObjectMeta`'s (absent) `handler` doc,
//! an empty string; here it carries RuntimeClass's own `handler` doc.

use serde_json::{Value, json};

use super::{TablePrinter, col};
use crate::jsonpath::str_at;

pub(super) static PRIORITY_CLASS: TablePrinter = TablePrinter::named(
    &[
        col("Value", "integer", D_VALUE),
        col("Global-Default", "boolean", D_GLOBAL_DEFAULT),
    ],
    &[col("PreemptionPolicy", "string", D_PREEMPTION_POLICY)],
    |r| {
        let value = r.obj.get("value").and_then(Value::as_i64).unwrap_or(0);
        let global = r
            .obj
            .get("globalDefault")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let policy = str_at(r.obj, &["preemptionPolicy"]);
        r.named([json!(value), json!(global)], [json!(policy)])
    },
);

const D_VALUE: &str = "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.";
const D_GLOBAL_DEFAULT: &str = "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.";
const D_PREEMPTION_POLICY: &str = "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.";

pub(super) static RUNTIME_CLASS: TablePrinter =
    TablePrinter::named(&[col("Handler", "string", D_HANDLER)], &[], |r| {
        r.named([json!(str_at(r.obj, &["handler"]))], [])
    });

const D_HANDLER: &str = "handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class. The possible values are specific to the node & CRI configuration.  It is assumed that all handlers are available on every node, and handlers of the same name are equivalent on every node. For example, a handler called \"runc\" might specify that the runc OCI runtime (using native Linux containers) will be used to run the containers in a pod. The Handler must be lowercase, conform to the DNS Label (RFC 1123) requirements, and is immutable.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells, names};

    #[test]
    fn priority_class_row() {
        assert_eq!(
            names(&PRIORITY_CLASS),
            ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
        );
        let pc = json!({"metadata": {"name": "system-node-critical", "creationTimestamp": ago(120)},
            "value": 2000001000, "preemptionPolicy": "PreemptLowerPriority"});
        assert_eq!(
            cells(&PRIORITY_CLASS, &pc),
            json!([
                "system-node-critical",
                2000001000,
                false,
                "2m",
                "PreemptLowerPriority"
            ])
        );
    }

    #[test]
    fn runtime_class_row() {
        assert_eq!(names(&RUNTIME_CLASS), ["Name", "Handler", "Age"]);
        let rc = json!({"metadata": {"name": "gvisor", "creationTimestamp": ago(5)}, "handler": "runsc"});
        assert_eq!(cells(&RUNTIME_CLASS, &rc), json!(["gvisor", "runsc", "5s"]));
    }
}
