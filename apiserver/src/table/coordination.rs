//! The table of coordination.k8s.io/v1 Lease.
//!
//! Upstream: `leaseColumnDefinitions` and `printLease` of
//! `pkg/printers/internalversion/printers.go`.

use serde_json::json;

use super::{TablePrinter, col};
use crate::jsonpath::str_at;

pub(super) static LEASE: TablePrinter = TablePrinter::named(&[col("Holder", "string", D_HOLDER)], &[], |r| {
    r.named([json!(str_at(r.obj, &["spec", "holderIdentity"]))], [])
});
const D_HOLDER: &str = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::cells;

    #[test]
    fn lease_rows() {
        let lease =
            json!({"metadata": {"name": "kube-scheduler"}, "spec": {"holderIdentity": "miniplane_1"}});
        assert_eq!(cells(&LEASE, &lease)[1], json!("miniplane_1"));
        let lease = json!({"metadata": {"name": "l"}, "spec": {}});
        assert_eq!(cells(&LEASE, &lease)[1], json!(""));
    }
}
