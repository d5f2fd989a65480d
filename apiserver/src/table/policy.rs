//! The table of policy/v1 PodDisruptionBudget.
//!
//! Upstream: `podDisruptionBudgetColumnDefinitions` and
//! `printPodDisruptionBudget` of `pkg/printers/internalversion/printers.go`.

use serde_json::{Value, json};

use super::{Row, TablePrinter, col};

pub(super) static POD_DISRUPTION_BUDGET: TablePrinter = TablePrinter::named(
    &[
        col("Min Available", "string", D_MIN),
        col("Max Unavailable", "string", D_MAX),
        col("Allowed Disruptions", "integer", D_ALLOWED),
    ],
    &[],
    print_pdb,
);
const D_MIN: &str = "The minimum number of pods that must be available.";
const D_MAX: &str = "The maximum number of pods that may be unavailable.";
const D_ALLOWED: &str = "Calculated number of pods that may be disrupted at this time.";

fn print_pdb(r: &Row) -> Vec<Value> {
    let budget = |field: &str| match r.obj.pointer(&format!("/spec/{field}")) {
        None | Some(Value::Null) => "N/A".to_string(),
        // IntOrString.String(): the number, or the string as given.
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let allowed = r
        .obj
        .pointer("/status/disruptionsAllowed")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    r.named(
        [
            json!(budget("minAvailable")),
            json!(budget("maxUnavailable")),
            json!(allowed),
        ],
        [],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells, names};

    #[test]
    fn pdb_rows() {
        assert_eq!(
            names(&POD_DISRUPTION_BUDGET),
            [
                "Name",
                "Min Available",
                "Max Unavailable",
                "Allowed Disruptions",
                "Age"
            ]
        );
        let pdb = json!({"metadata": {"name": "web", "creationTimestamp": ago(5)},
            "spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 1}});
        assert_eq!(
            cells(&POD_DISRUPTION_BUDGET, &pdb),
            json!(["web", "2", "N/A", 1, "5s"])
        );
        let pct = json!({"metadata": {"name": "p"}, "spec": {"maxUnavailable": "25%"}});
        let c = cells(&POD_DISRUPTION_BUDGET, &pct);
        assert_eq!(
            c.as_array().unwrap()[1..4],
            [json!("N/A"), json!("25%"), json!(0)]
        );
    }
}
