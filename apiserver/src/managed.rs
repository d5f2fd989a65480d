//! Field ownership on the write path: server-side apply and the
//! managedFields bookkeeping of every other write, adapted to the request
//! path (schema lookup by kind, conflicts as a 409 Status with causes).

use serde_json::Value;

use serde_json::json;

use crate::error::{ApiError, ApiResult, Reason};
use crate::patch::meta::Schema;
use crate::registry::ResourceInfo;

/// Server-side apply of `config` over `live` (None: create on apply), on
/// the main resource or a subresource such as `status`.
pub fn apply(
    info: &ResourceInfo,
    live: Option<&Value>,
    config: &Value,
    subresource: Option<&str>,
    manager: &str,
    force: bool,
    time: &str,
) -> ApiResult<Value> {
    use crate::patch::apply::{ApplyError, ApplyOptions};
    let schema = Schema::for_resource(info);
    let opts = ApplyOptions {
        manager,
        force,
        resource: info,
        subresource,
        time,
    };
    crate::patch::apply::apply(schema.as_ref(), live, config, &opts).map_err(|e| match e {
        ApplyError::Conflicts(conflicts) => {
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|c| json!({"reason": "FieldManagerConflict", "message": c.message(), "field": c.field}))
                .collect();
            ApiError {
                reason: Reason::Conflict,
                message: crate::patch::apply::conflict_message(&conflicts),
                details: Some(json!({"causes": causes})),
            }
        }
        ApplyError::BadRequest(m) => ApiError::bad_request(m),
        // Upstream answers these (duplicate list keys, unreadable managedFields)
        // with a 500; they come from the request, so they get a 400 here.
        ApplyError::Invalid(m) => ApiError::bad_request(m),
    })
}

/// managedFields bookkeeping for a non-apply write (an `Update` operation).
pub fn track_update(
    info: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    time: &str,
) {
    let schema = Schema::for_resource(info);
    crate::patch::apply::track_update(schema.as_ref(), old, new, manager, info, subresource, time);
}
