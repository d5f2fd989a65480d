//! JSON Patch (RFC 6902), bounded as kube-apiserver bounds it.
//!
//! Upstream: `handlers/patch.go` (`jsonPatcher`) with evanphx/json-patch.
//! A patch is small, but its `copy` operations are not: each may copy the
//! whole document into itself, so a few hundred bytes of patch can double
//! a document a dozen times. Upstream refuses
//!
//! * a patch of more than [`MAX_OPERATIONS`] operations, with 413; and
//! * a patch whose `copy` operations together copy more than
//!   [`MAX_COPY_BYTES`] (`--json-patch-max-copy-bytes`, the apiserver's
//!   `JSONPatchMaxCopyBytes`), with 422, checked before each copy is made.
//!
//! Every other operation adds at most a value that is part of the request
//! body (itself limited to 3 MiB), so the document stays bounded.

use serde_json::Value;

use crate::error::{ApiError, ApiResult, Reason};

/// Upstream `maxJSONPatchOperations`.
pub const MAX_OPERATIONS: usize = 10_000;

/// Upstream's default `JSONPatchMaxCopyBytes`: 3 MiB.
pub const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Applies the JSON Patch `patch` (the request body) to `doc`. On an error
/// `doc` may be half patched; the caller patches a copy.
pub fn apply(doc: &mut Value, patch: &Value) -> ApiResult<()> {
    let ops: json_patch::Patch = serde_json::from_value(patch.clone())
        .map_err(|e| ApiError::bad_request(format!("json: cannot unmarshal the patch: {e}")))?;
    if ops.len() > MAX_OPERATIONS {
        return Err(ApiError::new(
            Reason::RequestEntityTooLarge,
            format!(
                "The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {}",
                ops.len()
            ),
        ));
    }
    let mut copied = 0usize;
    for op in ops.iter() {
        if let json_patch::PatchOperation::Copy(copy) = op
            && let Some(source) = doc.pointer(copy.from.as_str())
        {
            copied += encoded_len(source);
            if copied > MAX_COPY_BYTES {
                return Err(rejected(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
                )));
            }
        }
        if tests_null_on_missing_member(doc, op) {
            continue;
        }
        json_patch::patch_unsafe(doc, std::slice::from_ref(op))
            .map_err(|e| rejected(upstream_message(doc, op, &e)))?;
    }
    Ok(())
}

/// Whether `op` tests for `null` at a member its (existing) parent object
/// lacks: upstream's json-patch counts a missing member as null, so the
/// test passes. kube-rs's finalizer helper adds the first finalizer behind
/// `{"op":"test","path":"/metadata/finalizers","value":null}`.
fn tests_null_on_missing_member(doc: &Value, op: &json_patch::PatchOperation) -> bool {
    let json_patch::PatchOperation::Test(test) = op else {
        return false;
    };
    let path = test.path.as_str();
    let parent = path.rfind('/').map(|i| &path[..i]);
    test.value.is_null()
        && doc.pointer(path).is_none()
        && parent.and_then(|p| doc.pointer(p)).is_some_and(Value::is_object)
}

/// The text upstream's json-patch gives a failed operation (`ErrMissing`
/// reads `missing value`, `ErrTestFailed` `test failed`).
fn upstream_message(doc: &Value, op: &json_patch::PatchOperation, e: &json_patch::PatchError) -> String {
    use json_patch::{PatchErrorKind, PatchOperation as Op};
    let has_parent = |path: &str| {
        let parent = path.rfind('/').map_or("", |i| &path[..i]);
        doc.pointer(parent).is_some_and(|p| p.is_object() || p.is_array())
    };
    let path = e.path.as_str();
    match (op, &e.kind) {
        (Op::Test(_), PatchErrorKind::TestFailed) => format!("testing value {path} failed: test failed"),
        (Op::Test(_), _) if !has_parent(path) => {
            format!("test operation does not apply: is missing path: {path}: missing value")
        }
        (Op::Add(_) | Op::Remove(_), _) if !has_parent(path) => format!(
            "{} operation does not apply: doc is missing path: \"{path}\": missing value",
            op_name(op)
        ),
        (Op::Remove(_), _) => {
            let key = path.rsplit('/').next().unwrap_or_default();
            format!(
                "error in remove for path: '{path}': Unable to remove nonexistent key: {key}: missing value"
            )
        }
        (Op::Replace(_), _) if !has_parent(path) => {
            format!("replace operation does not apply: doc is missing path: {path}: missing value")
        }
        (Op::Replace(_), _) => {
            format!("replace operation does not apply: doc is missing key: {path}: missing value")
        }
        (Op::Move(m), PatchErrorKind::InvalidFromPointer) => {
            format!(
                "move operation does not apply: doc is missing from path: {}: missing value",
                m.from
            )
        }
        (Op::Copy(c), PatchErrorKind::InvalidFromPointer) => {
            format!(
                "copy operation does not apply: doc is missing from path: {}: missing value",
                c.from
            )
        }
        _ => e.to_string(),
    }
}

fn op_name(op: &json_patch::PatchOperation) -> &'static str {
    match op {
        json_patch::PatchOperation::Add(_) => "add",
        json_patch::PatchOperation::Remove(_) => "remove",
        json_patch::PatchOperation::Replace(_) => "replace",
        json_patch::PatchOperation::Move(_) => "move",
        json_patch::PatchOperation::Copy(_) => "copy",
        json_patch::PatchOperation::Test(_) => "test",
    }
}

/// The 422 upstream answers a patch that cannot be applied with.
fn rejected(why: String) -> ApiError {
    ApiError::new(
        Reason::Invalid,
        format!("the server rejected our request due to an error in our request: {why}"),
    )
}

/// The length of `value` as JSON, without building the text.
fn encoded_len(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a `Value` to an infallible writer cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations_apply_in_order() {
        let mut doc = json!({"data": {"a": "1"}});
        let patch = json!([
            {"op": "add", "path": "/data/b", "value": "2"},
            {"op": "copy", "from": "/data/a", "path": "/data/c"},
            {"op": "remove", "path": "/data/a"},
            {"op": "test", "path": "/data/c", "value": "1"},
        ]);
        apply(&mut doc, &patch).unwrap();
        assert_eq!(doc, json!({"data": {"b": "2", "c": "1"}}));
    }

    #[test]
    fn copies_that_double_the_document_stop_at_the_limit() {
        // 14 copies of a 1 KiB map into itself would make 16 MiB.
        let mut doc = json!({"data": {"v": "x".repeat(1024)}});
        let ops: Vec<Value> = (0..14)
            .map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/c{i}")}))
            .collect();
        let err = apply(&mut doc, &Value::Array(ops)).unwrap_err();
        assert_eq!(err.reason, Reason::Invalid);
        assert!(
            err.message.contains("exceeding the limit 3145728"),
            "{}",
            err.message
        );
        assert!(encoded_len(&doc) < 2 * MAX_COPY_BYTES);
    }

    #[test]
    fn more_than_ten_thousand_operations_are_too_large() {
        let ops: Vec<Value> = (0..=MAX_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "/a", "value": 1}))
            .collect();
        let err = apply(&mut json!({"a": 1}), &Value::Array(ops)).unwrap_err();
        assert_eq!(err.reason, Reason::RequestEntityTooLarge);
        assert_eq!(
            err.message,
            "The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
    }

    #[test]
    fn a_failed_test_is_unprocessable() {
        let err = apply(
            &mut json!({"a": 1}),
            &json!([{"op": "test", "path": "/a", "value": 2}]),
        )
        .unwrap_err();
        assert_eq!(err.reason, Reason::Invalid);
    }

    #[test]
    fn null_tests_a_missing_member_of_an_existing_object() {
        let mut doc = json!({"metadata": {"name": "a"}});
        let patch = json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["f"]},
        ]);
        apply(&mut doc, &patch).unwrap();
        assert_eq!(doc, json!({"metadata": {"name": "a", "finalizers": ["f"]}}));
        // The parent must exist, and a present value is not null.
        let missing_parent = json!([{"op": "test", "path": "/spec/x", "value": null}]);
        assert!(apply(&mut doc, &missing_parent).is_err());
        let present = json!([{"op": "test", "path": "/metadata/name", "value": null}]);
        assert!(apply(&mut doc, &present).is_err());
    }

    #[test]
    fn failures_read_as_upstream() {
        let doc = json!({"spec": {"replicas": 1}});
        let cases = [
            (
                json!({"op": "test", "path": "/spec/replicas", "value": 2}),
                "testing value /spec/replicas failed: test failed",
            ),
            (
                json!({"op": "test", "path": "/status/x", "value": 2}),
                "test operation does not apply: is missing path: /status/x: missing value",
            ),
            (
                json!({"op": "add", "path": "/status/x", "value": 2}),
                "add operation does not apply: doc is missing path: \"/status/x\": missing value",
            ),
            (
                json!({"op": "remove", "path": "/spec/x"}),
                "error in remove for path: '/spec/x': Unable to remove nonexistent key: x: missing value",
            ),
            (
                json!({"op": "replace", "path": "/spec/x", "value": 1}),
                "replace operation does not apply: doc is missing key: /spec/x: missing value",
            ),
        ];
        for (op, want) in cases {
            let err = apply(&mut doc.clone(), &json!([op])).unwrap_err();
            assert_eq!(
                err.message,
                format!("the server rejected our request due to an error in our request: {want}")
            );
        }
    }

    #[test]
    fn encoded_len_matches_serialization() {
        let v = json!({"a": [1, "two", {"three": null}], "b": "ü"});
        assert_eq!(encoded_len(&v), serde_json::to_vec(&v).unwrap().len());
    }
}
