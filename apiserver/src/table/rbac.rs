//! The tables of rbac.authorization.k8s.io/v1: Role and ClusterRole,
//! RoleBinding and ClusterRoleBinding.
//!
//! Upstream: `pkg/printers/internalversion/printers.go` has no printer for
//! roles, so they print as every kind without one
//! (`apiserver/pkg/registry/rest/table.go`: Name, Created At); the bindings
//! have `roleBindingsColumnDefinitions` / `printRoleBinding` and their
//! cluster twins (Role as `Kind/name`; Users, Groups and ServiceAccounts
//! wide, from `rbac.SubjectsStrings`).

use serde_json::{Value, json};

use super::{AGE, D_CREATED, NAME, Row, TablePrinter, col, print_default, wide};
use crate::jsonpath::str_at;

const CREATED_AT: super::Column = col("Created At", "date", D_CREATED);

/// Role: Name, Created At.
pub(super) static ROLE: TablePrinter = TablePrinter::exact(&[NAME, CREATED_AT], print_default);
/// ClusterRole: Name, Created At.
pub(super) static CLUSTER_ROLE: TablePrinter = TablePrinter::exact(&[NAME, CREATED_AT], print_default);

/// RoleBinding: Name, Role, Age, then Users, Groups, ServiceAccounts (wide).
pub(super) static ROLE_BINDING: TablePrinter = TablePrinter::exact(
    &[
        NAME,
        col("Role", "string", D_ROLE_REF),
        AGE,
        wide("Users", "string", "Users in the roleBinding"),
        wide("Groups", "string", "Groups in the roleBinding"),
        wide("ServiceAccounts", "string", "ServiceAccounts in the roleBinding"),
    ],
    print_binding,
);

/// ClusterRoleBinding: as RoleBinding.
pub(super) static CLUSTER_ROLE_BINDING: TablePrinter = TablePrinter::exact(
    &[
        NAME,
        col("Role", "string", D_CLUSTER_ROLE_REF),
        AGE,
        wide("Users", "string", "Users in the clusterRoleBinding"),
        wide("Groups", "string", "Groups in the clusterRoleBinding"),
        wide(
            "ServiceAccounts",
            "string",
            "ServiceAccounts in the clusterRoleBinding",
        ),
    ],
    print_binding,
);

const D_ROLE_REF: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";
const D_CLUSTER_ROLE_REF: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";

fn print_binding(r: &Row) -> Vec<Value> {
    let role_ref = format!(
        "{}/{}",
        str_at(r.obj, &["roleRef", "kind"]),
        str_at(r.obj, &["roleRef", "name"])
    );
    let (users, groups, sas) = subjects_strings(r.obj);
    vec![
        r.name(),
        json!(role_ref),
        r.age(),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(sas.join(", ")),
    ]
}

/// Upstream `rbac.SubjectsStrings`: user names, group names and
/// service accounts as `namespace/name` (other kinds are left out).
fn subjects_strings(binding: &Value) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    let subjects = binding.get("subjects").and_then(Value::as_array);
    for s in subjects.into_iter().flatten() {
        let name = str_at(s, &["name"]).to_string();
        match str_at(s, &["kind"]) {
            "User" => users.push(name),
            "Group" => groups.push(name),
            "ServiceAccount" => sas.push(format!("{}/{name}", str_at(s, &["namespace"]))),
            _ => {}
        }
    }
    (users, groups, sas)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells};

    #[test]
    fn role_binding_rows() {
        let rb = json!({
            "metadata": {"name": "read-pods", "creationTimestamp": ago(90)},
            "roleRef": {"kind": "Role", "name": "pod-reader"},
            "subjects": [
                {"kind": "User", "name": "jane"},
                {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
                {"kind": "User", "name": "joe"},
            ],
        });
        assert_eq!(
            cells(&ROLE_BINDING, &rb),
            json!([
                "read-pods",
                "Role/pod-reader",
                "90s",
                "jane, joe",
                "devs",
                "ns/sa"
            ])
        );
        let empty = json!({"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "view"}});
        assert_eq!(cells(&CLUSTER_ROLE_BINDING, &empty)[1], json!("ClusterRole/view"));
        assert_eq!(cells(&CLUSTER_ROLE_BINDING, &empty)[3], json!(""));
    }

    #[test]
    fn roles_print_name_and_created_at() {
        let role = json!({"metadata": {"name": "admin", "creationTimestamp": "2025-05-01T10:00:00Z"}});
        assert_eq!(
            cells(&CLUSTER_ROLE, &role),
            json!(["admin", "2025-05-01T10:00:00Z"])
        );
        assert_eq!(ROLE.column_definitions()[1]["name"], json!("Created At"));
    }
}
