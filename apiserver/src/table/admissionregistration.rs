//! Tables of admissionregistration.k8s.io/v1: the webhook configurations,
//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding.
//!
//! Upstream: `mutatingWebhookColumnDefinitions`, `validatingWebhookColumnDefinitions`,
//! `validatingAdmissionPolicy`, `validatingAdmissionPolicyBinding` and their
//! `print*` functions in `pkg/printers/internalversion/printers.go`.
//!
//! Simplified: a binding's `paramRef` by selector prints the selector in
//! label-selector syntax (`app=web`), not Go's `LabelSelector.String()` dump.

use serde_json::{Value, json};

use super::helpers::{array_len, selector_at};
use super::{Row, TablePrinter, col};
use crate::jsonpath::str_at;

pub(super) static VALIDATING_WEBHOOK_CONFIGURATION: TablePrinter =
    TablePrinter::named(&[col("Webhooks", "integer", D_WEBHOOKS)], &[], print_webhooks);
pub(super) static MUTATING_WEBHOOK_CONFIGURATION: TablePrinter =
    TablePrinter::named(&[col("Webhooks", "integer", D_WEBHOOKS)], &[], print_webhooks);
const D_WEBHOOKS: &str = "Webhooks indicates the number of webhooks registered in this configuration";

pub(super) static VALIDATING_ADMISSION_POLICY: TablePrinter = TablePrinter::named(
    &[
        col("Validations", "integer", D_VALIDATIONS),
        col("ParamKind", "string", D_PARAM_KIND),
    ],
    &[],
    print_policy,
);
const D_VALIDATIONS: &str =
    "Validations indicates the number of validation rules defined in this configuration";
const D_PARAM_KIND: &str = "ParamKind specifies the kind of resources used to parameterize this policy";

pub(super) static VALIDATING_ADMISSION_POLICY_BINDING: TablePrinter = TablePrinter::named(
    &[
        col("PolicyName", "string", D_POLICY_NAME),
        col("ParamRef", "string", D_PARAM_REF),
    ],
    &[],
    print_binding,
);
const D_POLICY_NAME: &str = "PolicyName indicates the policy definition which the policy binding binded to";
const D_PARAM_REF: &str = "ParamRef indicates the param resource which sets the configration param";

fn print_webhooks(r: &Row) -> Vec<Value> {
    r.named([json!(array_len(r.obj.get("webhooks")))], [])
}

fn print_policy(r: &Row) -> Vec<Value> {
    let validations = array_len(r.obj.pointer("/spec/validations"));
    let param_kind = match r.obj.pointer("/spec/paramKind").filter(|p| p.is_object()) {
        Some(p) => format!("{}/{}", str_at(p, &["apiVersion"]), str_at(p, &["kind"])),
        None => "<unset>".to_string(),
    };
    r.named([json!(validations), json!(param_kind)], [])
}

fn print_binding(r: &Row) -> Vec<Value> {
    let policy = str_at(r.obj, &["spec", "policyName"]);
    r.named([json!(policy), json!(param_ref(r.obj))], [])
}

/// `namespace/name`, `*/name` when the namespace is not given (the param
/// may be cluster-scoped), the selector, or `<unset>`.
fn param_ref(obj: &Value) -> String {
    let Some(pr) = obj.pointer("/spec/paramRef").filter(|p| p.is_object()) else {
        return "<unset>".to_string();
    };
    let (name, namespace) = (str_at(pr, &["name"]), str_at(pr, &["namespace"]));
    if !name.is_empty() {
        let ns = if namespace.is_empty() { "*" } else { namespace };
        return format!("{ns}/{name}");
    }
    if pr.get("selector").is_some_and(Value::is_object) {
        return selector_at(pr, &["selector"]).as_str().unwrap_or("").to_string();
    }
    "<unset>".to_string()
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

    #[test]
    fn webhook_configurations_count_their_webhooks() {
        let o = json!({"metadata": {"name": "ingress-nginx-admission", "creationTimestamp": ago(90)},
            "webhooks": [{"name": "validate.nginx.ingress.kubernetes.io"}]});
        assert_eq!(
            cells(&VALIDATING_WEBHOOK_CONFIGURATION, &o),
            vec![json!("ingress-nginx-admission"), json!(1), json!("90s")]
        );
        let empty = json!({"metadata": {"name": "m", "creationTimestamp": ago(5)}});
        assert_eq!(cells(&MUTATING_WEBHOOK_CONFIGURATION, &empty)[1], json!(0));
    }

    #[test]
    fn policies_print_validations_and_param_kind() {
        let o = json!({"metadata": {"name": "p", "creationTimestamp": ago(5)},
            "spec": {"validations": [{"expression": "true"}, {"expression": "1 < 2"}],
                     "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}});
        assert_eq!(
            cells(&VALIDATING_ADMISSION_POLICY, &o)[1..3],
            [json!(2), json!("v1/ConfigMap")]
        );
        let unset = json!({"metadata": {"name": "p"}, "spec": {}});
        assert_eq!(cells(&VALIDATING_ADMISSION_POLICY, &unset)[2], json!("<unset>"));
    }

    #[test]
    fn bindings_print_policy_and_param_ref() {
        let b = |pr: Value| json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "paramRef": pr}});
        let row = |pr| cells(&VALIDATING_ADMISSION_POLICY_BINDING, &b(pr))[1..3].to_vec();
        assert_eq!(
            row(json!({"name": "limits", "namespace": "team"})),
            [json!("p"), json!("team/limits")]
        );
        assert_eq!(row(json!({"name": "limits"}))[1], json!("*/limits"));
        assert_eq!(row(Value::Null)[1], json!("<unset>"));
    }
}
