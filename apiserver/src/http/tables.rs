//! Lists and objects as `meta.k8s.io` Tables, for `kubectl get`.
//!
//! Upstream: `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go`
//! (`asTable`). The columns and cells come from the kind's
//! [`crate::table::Printer`], resolved once per Table; this module wraps
//! them: `row.object` per `includeObject` (PartialObjectMetadata by default),
//! row conditions, and the list metadata.

use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceInfo;
use crate::table::Printer;

/// `?includeObject=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IncludeObject {
    /// `None`: `row.object` is null.
    None,
    /// `Metadata` (the default): a PartialObjectMetadata.
    #[default]
    Metadata,
    /// `Object`: the full object.
    Object,
}

impl IncludeObject {
    /// Parses the query parameter.
    pub fn parse(s: Option<&str>) -> ApiResult<Self> {
        match s.unwrap_or("") {
            "" | "Metadata" => Ok(Self::Metadata),
            "None" => Ok(Self::None),
            "Object" => Ok(Self::Object),
            other => Err(ApiError::bad_request(format!(
                "Unable to convert to Table as requested: unrecognized includeObject value: {other:?}"
            ))),
        }
    }
}

/// Builds the Table of `objects`.
pub fn table(
    info: &ResourceInfo,
    objects: &[Value],
    metadata: Value,
    include: IncludeObject,
    version: &str,
    now: jiff::Timestamp,
) -> Value {
    let printer = crate::table::printer_for(info);
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| row(&printer, o, include, version, now))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "columnDefinitions": printer.column_definitions(),
        "rows": rows,
    })
}

fn row(printer: &Printer, o: &Value, include: IncludeObject, version: &str, now: jiff::Timestamp) -> Value {
    let object = match include {
        IncludeObject::None => Value::Null,
        IncludeObject::Object => o.clone(),
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": format!("meta.k8s.io/{version}"),
            "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
    };
    let mut row = json!({"cells": printer.row_cells(o, now), "object": object});
    if let Some(conditions) = printer.row_conditions(o) {
        row["conditions"] = conditions;
    }
    row
}
