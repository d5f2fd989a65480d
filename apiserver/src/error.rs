//! API errors, and their wire form: a `metav1.Status`.
//!
//! Every way a request can fail is an [`ApiError`] with the upstream HTTP
//! code, `reason` and `message`, so that kubectl prints what it prints
//! against a real cluster (`Error from server (NotFound): deployments.apps
//! "web" not found`). Field validation problems are [`FieldError`]s, rendered
//! as upstream's `field.Error` (`spec.replicas: Invalid value: -1: must be
//! greater than or equal to 0`) and collected into a 422 Invalid by
//! [`ApiError::invalid`].

use serde_json::{Value, json};

use crate::gofmt::{go_quoted_list, go_value};

/// The `reason` of a `metav1.Status`, with its HTTP code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// 400
    BadRequest,
    /// 401
    Unauthorized,
    /// 403
    Forbidden,
    /// 404
    NotFound,
    /// 405
    MethodNotAllowed,
    /// 406
    NotAcceptable,
    /// 409, the object exists
    AlreadyExists,
    /// 409, a precondition (resourceVersion, uid) or field-manager conflict
    Conflict,
    /// 410, a resourceVersion older than the watch window
    Expired,
    /// 413
    RequestEntityTooLarge,
    /// 415
    UnsupportedMediaType,
    /// 422
    Invalid,
    /// 429
    TooManyRequests,
    /// 500: a bug, never caused by client input
    InternalError,
    /// 503
    ServiceUnavailable,
}

impl Reason {
    /// The HTTP status code upstream uses for this reason.
    pub fn code(self) -> u16 {
        match self {
            Reason::BadRequest => 400,
            Reason::Unauthorized => 401,
            Reason::Forbidden => 403,
            Reason::NotFound => 404,
            Reason::MethodNotAllowed => 405,
            Reason::NotAcceptable => 406,
            Reason::AlreadyExists | Reason::Conflict => 409,
            Reason::Expired => 410,
            Reason::RequestEntityTooLarge => 413,
            Reason::UnsupportedMediaType => 415,
            Reason::Invalid => 422,
            Reason::TooManyRequests => 429,
            Reason::InternalError => 500,
            Reason::ServiceUnavailable => 503,
        }
    }

    /// The `reason` string of the Status.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::BadRequest => "BadRequest",
            Reason::Unauthorized => "Unauthorized",
            Reason::Forbidden => "Forbidden",
            Reason::NotFound => "NotFound",
            Reason::MethodNotAllowed => "MethodNotAllowed",
            Reason::NotAcceptable => "NotAcceptable",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Conflict => "Conflict",
            Reason::Expired => "Expired",
            Reason::RequestEntityTooLarge => "RequestEntityTooLarge",
            Reason::UnsupportedMediaType => "UnsupportedMediaType",
            Reason::Invalid => "Invalid",
            Reason::TooManyRequests => "TooManyRequests",
            Reason::InternalError => "InternalError",
            Reason::ServiceUnavailable => "ServiceUnavailable",
        }
    }
}

/// The kind of a field validation error (upstream `field.ErrorType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorType {
    /// `FieldValueNotFound`, "Not found"
    NotFound,
    /// `FieldValueRequired`, "Required value"
    Required,
    /// `FieldValueDuplicate`, "Duplicate value"
    Duplicate,
    /// `FieldValueInvalid`, "Invalid value"
    Invalid,
    /// `FieldValueNotSupported`, "Unsupported value"
    NotSupported,
    /// `FieldValueForbidden`, "Forbidden"
    Forbidden,
    /// `FieldValueTooLong`, "Too long"
    TooLong,
    /// `FieldValueTooMany`, "Too many"
    TooMany,
    /// `FieldValueTypeInvalid`, "Invalid value"
    TypeInvalid,
}

impl FieldErrorType {
    /// The cause `reason` in `details.causes`.
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "FieldValueNotFound",
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::TooMany => "FieldValueTooMany",
            FieldErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The label that starts the message.
    pub fn label(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "Not found",
            FieldErrorType::Required => "Required value",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::Invalid | FieldErrorType::TypeInvalid => "Invalid value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::TooLong => "Too long",
            FieldErrorType::TooMany => "Too many",
        }
    }

    /// Upstream omits the value from the message for these types.
    fn omits_value(self) -> bool {
        matches!(
            self,
            FieldErrorType::Required | FieldErrorType::Forbidden | FieldErrorType::TooLong
        )
    }
}

/// One field validation error (upstream `field.Error`).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// What is wrong.
    pub kind: FieldErrorType,
    /// The path, e.g. `spec.template.spec.containers[0].name` or
    /// `metadata.labels[app]`.
    pub field: String,
    /// The offending value, if the message shows it.
    pub value: Option<Value>,
    /// Free text after the value.
    pub detail: String,
}

impl FieldError {
    fn new(
        kind: FieldErrorType,
        field: impl Into<String>,
        value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            kind,
            field: field.into(),
            value,
            detail: detail.into(),
        }
    }
    /// `Invalid value: <value>: <detail>`
    pub fn invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Invalid, field, Some(value), detail)
    }
    /// `Required value[: <detail>]`
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Required, field, None, detail)
    }
    /// `Forbidden[: <detail>]`
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Forbidden, field, None, detail)
    }
    /// `Duplicate value: <value>`
    pub fn duplicate(field: impl Into<String>, value: Value) -> Self {
        Self::new(FieldErrorType::Duplicate, field, Some(value), "")
    }
    /// `Not found: <value>`
    pub fn not_found(field: impl Into<String>, value: Value) -> Self {
        Self::new(FieldErrorType::NotFound, field, Some(value), "")
    }
    /// `Unsupported value: <value>: supported values: "a", "b"`
    pub fn not_supported(field: impl Into<String>, value: Value, supported: &[&str]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            format!("supported values: {}", go_quoted_list(supported))
        };
        Self::new(FieldErrorType::NotSupported, field, Some(value), detail)
    }
    /// `Too long: may not be more than <max> bytes` style errors.
    pub fn too_long(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::TooLong, field, None, detail)
    }
    /// `Too many: <value>: must have at most <max> items`
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        Self::new(
            FieldErrorType::TooMany,
            field,
            Some(json!(actual)),
            format!("must have at most {max} items"),
        )
    }

    /// The message without the field: `Invalid value: -1: must be ...`.
    pub fn body(&self) -> String {
        let mut s = self.kind.label().to_string();
        if !self.kind.omits_value()
            && let Some(v) = &self.value
        {
            s.push_str(": ");
            s.push_str(&go_value(v));
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// A failed API call: everything needed to build the `metav1.Status`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    /// Reason and HTTP code.
    pub reason: Reason,
    /// Human-readable message, printed by kubectl after `Error from server (Reason): `.
    pub message: String,
    /// `details`, when upstream sends them (`name`, `group`, `kind`, `causes`, `retryAfterSeconds`).
    pub details: Option<Value>,
}

/// Result alias for API operations.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// An error with no details.
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        ApiError {
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(Reason::BadRequest, message)
    }

    /// 500. Only for bugs and storage failures, never for client input.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            Reason::InternalError,
            format!("Internal error occurred: {message}"),
        )
    }

    /// 404 `<resource>.<group> "<name>" not found`.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            reason: Reason::NotFound,
            message: format!("{} \"{name}\" not found", qualified(resource, group)),
            details: Some(json!({"name": name, "group": group, "kind": resource})),
        }
    }

    /// 409 `<resource>.<group> "<name>" already exists`.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        ApiError {
            reason: Reason::AlreadyExists,
            message: format!("{} \"{name}\" already exists", qualified(resource, group)),
            details: Some(json!({"name": name, "group": group, "kind": resource})),
        }
    }

    /// 409 Conflict: `Operation cannot be fulfilled on <resource>.<group> "<name>": <why>`.
    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        ApiError {
            reason: Reason::Conflict,
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(resource, group)
            ),
            details: Some(json!({"name": name, "group": group, "kind": resource})),
        }
    }

    /// 403 Forbidden: `<resource>.<group> "<name>" is forbidden: <why>`.
    pub fn forbidden(group: &str, resource: &str, name: &str, why: &str) -> Self {
        ApiError {
            reason: Reason::Forbidden,
            message: format!("{} \"{name}\" is forbidden: {why}", qualified(resource, group)),
            details: Some(json!({"name": name, "group": group, "kind": resource})),
        }
    }

    /// The stale-resourceVersion conflict.
    pub fn modified(group: &str, resource: &str, name: &str) -> Self {
        Self::conflict(
            group,
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 410 Expired: `too old resource version: <requested> (<oldest>)`.
    pub fn expired(requested: u64, oldest: u64) -> Self {
        Self::new(
            Reason::Expired,
            format!("too old resource version: {requested} ({oldest})"),
        )
    }

    /// 422 Invalid: `<Kind>[.<group>] "<name>" is invalid: <errors>`.
    pub fn invalid(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let mut rendered: Vec<String> = Vec::new();
        for e in errors {
            let s = e.to_string();
            if !rendered.contains(&s) {
                rendered.push(s);
            }
        }
        let agg = match rendered.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| json!({"reason": e.kind.reason(), "message": e.body(), "field": e.field}))
            .collect();
        ApiError {
            reason: Reason::Invalid,
            message: format!("{} \"{name}\" is invalid: {agg}", qualified(kind, group)),
            details: Some(json!({"name": name, "group": group, "kind": kind, "causes": causes})),
        }
    }

    /// The `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason.as_str(),
            "code": self.reason.code(),
        });
        if let Some(d) = &self.details {
            status["details"] = d.clone();
        }
        status
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.reason.as_str())
    }
}

impl std::error::Error for ApiError {}

/// `deployments.apps`, or `pods` for the core group.
pub fn qualified(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_string()
    } else {
        format!("{name}.{group}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_renders_like_upstream() {
        let e = ApiError::invalid(
            "apps",
            "Deployment",
            "web",
            &[FieldError::invalid(
                "spec.replicas",
                json!(-1),
                "must be greater than or equal to 0",
            )],
        );
        assert_eq!(
            e.message,
            "Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        let s = e.to_status();
        assert_eq!(s["code"], 422);
        assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueInvalid");
        assert_eq!(
            s["details"]["causes"][0]["message"],
            "Invalid value: -1: must be greater than or equal to 0"
        );
    }

    #[test]
    fn several_errors_are_bracketed_and_deduplicated() {
        let r = FieldError::required("metadata.name", "name or generateName is required");
        let e = ApiError::invalid(
            "",
            "Pod",
            "",
            &[r.clone(), r, FieldError::invalid("x", json!("a b"), "bad")],
        );
        assert_eq!(
            e.message,
            "Pod \"\" is invalid: [metadata.name: Required value: name or generateName is required, x: Invalid value: \"a b\": bad]"
        );
    }
}
