//! The seams between the request path and the per-kind rules.
//!
//! Each function here is one step of a write (defaulting, strategy,
//! validation, patching, managed fields) and forwards to the module that
//! owns it, so that `api::write` reads as the sequence of steps.

use serde_json::Value;

use crate::error::ApiResult;
use crate::registry::ResourceInfo;

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
