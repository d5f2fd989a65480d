//! The seams between the request path and the per-kind rules.
//!
//! Each function here is one step of a write (defaulting, strategy,
//! validation, patching, managed fields) and forwards to the module that
//! owns it, so that `api::write` reads as the sequence of steps.

use serde_json::Value;

use crate::error::{ApiResult, FieldError};
use crate::registry::ResourceInfo;

/// Layer D defaulting.
pub fn default_object(_info: &ResourceInfo, _obj: &mut Value) {}

/// Strategy on create.
pub fn prepare_for_create(info: &ResourceInfo, obj: &mut Value) {
    if info.has_generation {
        crate::api::obj::meta_mut(obj).insert("generation".into(), Value::from(1));
    }
}

/// Strategy on update of the main resource.
pub fn prepare_for_update(_info: &ResourceInfo, _new: &mut Value, _old: &Value) {}

/// Strategy on update of the status subresource.
pub fn prepare_for_status_update(_info: &ResourceInfo, _new: &mut Value, _old: &Value) {}

/// Validation on create.
pub fn validate_create(_info: &ResourceInfo, _obj: &Value) -> Vec<FieldError> {
    Vec::new()
}

/// Validation on update.
pub fn validate_update(_info: &ResourceInfo, _new: &Value, _old: &Value) -> Vec<FieldError> {
    Vec::new()
}

/// Fields of `obj` its kind's schema does not know.
pub fn unknown_fields(_info: &ResourceInfo, _obj: &Value) -> Vec<String> {
    Vec::new()
}

/// Strategic merge patch.
pub fn strategic(_info: &ResourceInfo, original: &Value, patch: &Value) -> ApiResult<Value> {
    let mut doc = original.clone();
    json_patch::merge(&mut doc, patch);
    Ok(doc)
}

/// Server-side apply.
pub fn apply(
    _info: &ResourceInfo,
    live: Option<&Value>,
    config: &Value,
    _manager: &str,
    _force: bool,
    _time: &str,
) -> ApiResult<Value> {
    let mut doc = live.cloned().unwrap_or(Value::Null);
    json_patch::merge(&mut doc, config);
    Ok(doc)
}

/// managedFields bookkeeping for non-apply writes.
pub fn track_update(
    _info: &ResourceInfo,
    _old: Option<&Value>,
    _new: &mut Value,
    _manager: &str,
    _subresource: Option<&str>,
    _time: &str,
) {
}

/// A compiled `labelSelector` + `fieldSelector` pair for lists and watches.
pub struct Filter {
    _label: String,
    _field: String,
}

impl Filter {
    /// Parses both selectors (400 on a syntax error or an unsupported field).
    pub fn new(_info: &ResourceInfo, label: Option<&str>, field: Option<&str>) -> ApiResult<Filter> {
        Ok(Filter { _label: label.unwrap_or("").into(), _field: field.unwrap_or("").into() })
    }

    /// Whether `obj` matches both selectors.
    pub fn matches(&self, _obj: &Value) -> bool {
        true
    }

    /// Whether the filter lets every object through.
    pub fn is_everything(&self) -> bool {
        true
    }
}

/// A metav1.LabelSelector as a selector string (`app=web,tier in (a,b)`).
pub fn selector_string(_sel: &Value) -> String {
    String::new()
}

/// Decodes a Kubernetes protobuf request body into JSON.
pub fn decode_protobuf(_body: &[u8]) -> ApiResult<Value> {
    Err(crate::error::ApiError::new(
        crate::error::Reason::UnsupportedMediaType,
        "protobuf request bodies are not supported yet",
    ))
}

/// Table column definitions of a kind.
pub fn table_columns(_info: &ResourceInfo) -> Value {
    serde_json::json!([
        {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0},
        {"name": "Created At", "type": "date", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0},
    ])
}

/// Table cells of one object.
pub fn table_cells(_info: &ResourceInfo, obj: &Value, _now: jiff::Timestamp) -> Value {
    serde_json::json!([
        obj.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        obj.pointer("/metadata/creationTimestamp").cloned().unwrap_or(Value::Null),
    ])
}

/// Row conditions (pods only).
pub fn table_conditions(_info: &ResourceInfo, _obj: &Value) -> Option<Value> {
    None
}

/// The OpenAPI documents.
pub struct OpenApi {
    index: Value,
}

impl OpenApi {
    /// Builds the documents.
    pub fn new(_registry: &crate::registry::Registry) -> Self {
        OpenApi { index: serde_json::json!({"paths": {}}) }
    }
    /// `/openapi/v3`.
    pub fn v3_index(&self) -> &Value {
        &self.index
    }
    /// `/openapi/v3/<gv>`.
    pub fn v3_document(&self, _gv: &str) -> Option<(&[u8], &str)> {
        None
    }
    /// `/openapi/v2`.
    pub fn v2_protobuf(&self) -> &[u8] {
        &[]
    }
}
