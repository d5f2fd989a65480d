//! Prometheus's HTTP API answers (`/api/v1/query`) and the text exposition format.

use crate::tsdb::Inner;

/// The text format of every live series.
pub(crate) fn exposition(inner: &Inner) -> String {
    let _ = inner;
    String::new()
}
