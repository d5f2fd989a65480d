//! The seams between the request path and the per-kind rules.
//!
//! Each function here is one step of a write (defaulting, strategy,
//! validation, patching, managed fields) and forwards to the module that
//! owns it, so that `api::write` reads as the sequence of steps.

use serde_json::Value;

use crate::error::{ApiError, ApiResult, FieldError, Reason};
use crate::patch::meta::Schema;
use crate::registry::ResourceInfo;
use crate::selector::{FieldSelector, LabelSelector};

/// Layer D defaulting.
pub fn default_object(info: &ResourceInfo, obj: &mut Value) {
    crate::kinds::default_object(info, obj);
}

/// Strategy on create.
pub fn prepare_for_create(info: &ResourceInfo, obj: &mut Value) {
    crate::kinds::prepare_for_create(info, obj);
}

/// Strategy on update of the main resource.
pub fn prepare_for_update(info: &ResourceInfo, new: &mut Value, old: &Value) {
    crate::kinds::prepare_for_update(info, new, old);
}

/// Strategy on update of the status subresource.
pub fn prepare_for_status_update(info: &ResourceInfo, new: &mut Value, old: &Value) {
    crate::kinds::prepare_for_status_update(info, new, old);
}

/// Validation on create.
pub fn validate_create(info: &ResourceInfo, obj: &Value) -> Vec<FieldError> {
    crate::kinds::validate_create(info, obj)
}

/// Validation on update.
pub fn validate_update(info: &ResourceInfo, new: &Value, old: &Value) -> Vec<FieldError> {
    crate::kinds::validate_update(info, new, old)
}

/// Fields of `obj` its kind's schema does not know.
pub fn unknown_fields(info: &ResourceInfo, obj: &Value) -> Vec<String> {
    crate::schema::unknown_fields(&info.group, &info.version, &info.kind, obj)
}

/// Strategic merge patch, with the merge keys of the kind.
pub fn strategic(info: &ResourceInfo, original: &Value, patch: &Value) -> ApiResult<Value> {
    use crate::patch::strategic::PatchError;
    let schema = Schema::for_kind(&info.group, &info.kind);
    crate::patch::strategic::strategic_merge_patch(schema.as_ref(), original, patch).map_err(|e| match e {
        PatchError::BadRequest(m) => ApiError::bad_request(m),
        PatchError::Unprocessable(m) => ApiError::new(Reason::Invalid, m),
        PatchError::Internal(m) => ApiError::internal(m),
    })
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
    label: Option<LabelSelector>,
    field: Option<FieldSelector>,
    group: String,
    kind: String,
}

impl Filter {
    /// Parses both selectors (400 on a syntax error or an unsupported field).
    pub fn new(info: &ResourceInfo, label: Option<&str>, field: Option<&str>) -> ApiResult<Filter> {
        let label = match label.filter(|s| !s.trim().is_empty()) {
            Some(s) => Some(
                LabelSelector::parse(s)
                    .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?,
            ),
            None => None,
        };
        let field = match field.filter(|s| !s.trim().is_empty()) {
            Some(s) => {
                let f = FieldSelector::parse(s).map_err(ApiError::bad_request)?;
                for name in f.fields() {
                    // Rejects fields the kind does not support, as upstream does.
                    let probe = serde_json::json!({});
                    crate::selector::field_value(&info.group, &info.kind, &probe, name)
                        .map_err(ApiError::bad_request)?;
                }
                Some(f)
            }
            None => None,
        };
        Ok(Filter {
            label,
            field,
            group: info.group.clone(),
            kind: info.kind.clone(),
        })
    }

    /// Whether `obj` matches both selectors.
    pub fn matches(&self, obj: &Value) -> bool {
        if let Some(l) = &self.label
            && !l.matches(crate::api::obj::labels(obj))
        {
            return false;
        }
        match &self.field {
            Some(f) => f.matches(|name| {
                crate::selector::field_value(&self.group, &self.kind, obj, name)
                    .ok()
                    .flatten()
            }),
            None => true,
        }
    }

    /// Whether the filter lets every object through.
    pub fn is_everything(&self) -> bool {
        self.label.is_none() && self.field.is_none()
    }
}

/// A metav1.LabelSelector as a selector string (`app=web,tier in (a,b)`).
pub fn selector_string(sel: &Value) -> String {
    crate::selector::label_selector_string(sel)
}

/// Decodes a Kubernetes protobuf request body into JSON.
pub fn decode_protobuf(body: &[u8]) -> ApiResult<Value> {
    crate::protobuf::decode(body).map_err(|e| {
        let reason = if e.status_code() == 415 {
            Reason::UnsupportedMediaType
        } else {
            Reason::BadRequest
        };
        ApiError::new(reason, e.to_string())
    })
}

/// Table column definitions of a kind.
pub fn table_columns(info: &ResourceInfo) -> Value {
    Value::Array(crate::table::column_definitions(&info.group, &info.kind))
}

/// Table cells of one object.
pub fn table_cells(info: &ResourceInfo, obj: &Value, now: jiff::Timestamp) -> Value {
    Value::Array(crate::table::row_cells(&info.group, &info.kind, obj, now))
}

/// Row conditions (pods only).
pub fn table_conditions(info: &ResourceInfo, obj: &Value) -> Option<Value> {
    crate::table::row_conditions(&info.group, &info.kind, obj)
}
