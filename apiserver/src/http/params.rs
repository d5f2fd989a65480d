//! Query parameters, read as kube-apiserver reads them.
//!
//! Upstream decodes `?watch=true&limit=5` into `ListOptions` and friends
//! with the conversions of `apimachinery/pkg/runtime/conversion.go` and
//! then validates them (`metainternalversion/validation`). Their rules,
//! which clients rely on whether they know it or not:
//!
//! * a boolean is false only when absent, `false` or `0` (any case);
//!   anything else, the empty string included, is true — so
//!   `?watch=maybe` is a watch;
//! * an integer is Go's `strconv.ParseInt`: a malformed one is 400
//!   BadRequest with Go's message, `strconv.ParseInt: parsing "abc":
//!   invalid syntax`;
//! * a resourceVersion is an opaque string to the client but a number to
//!   the storage: a malformed one is 422 Invalid on `resourceVersion`;
//! * `resourceVersionMatch` needs a resourceVersion, and `Exact` needs one
//!   other than `0`.
//!
//! Simplified: upstream's list passes the storage layer's resourceVersion
//! error through as a 500; here it is the same 422 a watch gets.

use std::collections::HashMap;

use crate::error::{ApiError, ApiResult, FieldError};

/// The query parameters, last value wins.
pub type Query = HashMap<String, String>;

/// A boolean parameter (upstream `Convert_Slice_string_To_bool`).
pub fn flag(query: &Query, key: &str) -> bool {
    match query.get(key) {
        None => false,
        Some(v) => !(v.eq_ignore_ascii_case("false") || v == "0"),
    }
}

/// An integer parameter (upstream `Convert_Slice_string_To_int64`).
pub fn int64(query: &Query, key: &str) -> ApiResult<Option<i64>> {
    let Some(s) = query.get(key) else {
        return Ok(None);
    };
    s.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => "value out of range",
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing {s:?}: {why}"))
    })
}

/// An integer parameter where upstream treats zero and below as unset
/// (`limit`, `timeoutSeconds`).
pub fn positive(query: &Query, key: &str) -> ApiResult<Option<u64>> {
    Ok(int64(query, key)?
        .and_then(|n| u64::try_from(n).ok())
        .filter(|n| *n > 0))
}

/// `resourceVersion`, with `resourceVersionMatch` checked against it.
/// `Ok(None)` when absent or empty; `Some(0)` means "any".
/// A malformed one is 422 on `<resource>[.<group>] ""`, as upstream's
/// `InterpretWatchError` words it.
pub fn resource_version(query: &Query, group: &str, resource: &str) -> ApiResult<Option<u64>> {
    let rv = query.get("resourceVersion").map(String::as_str).unwrap_or("");
    let parsed = match rv {
        "" => None,
        s => Some(s.parse::<u64>().map_err(|e| {
            let why = match e.kind() {
                std::num::IntErrorKind::PosOverflow => "value out of range",
                _ => "invalid syntax",
            };
            ApiError::invalid(
                group,
                resource,
                "",
                &[FieldError::invalid(
                    "resourceVersion",
                    s.into(),
                    format!("strconv.ParseUint: parsing {s:?}: {why}"),
                )],
            )
        })?),
    };
    check_match(query.get("resourceVersionMatch").map(String::as_str), rv)?;
    Ok(parsed)
}

/// Upstream `ValidateListOptions`' rules for `resourceVersionMatch`.
fn check_match(matching: Option<&str>, rv: &str) -> ApiResult<()> {
    let field = "resourceVersionMatch";
    let error = match matching.unwrap_or("") {
        "" => return Ok(()),
        _ if rv.is_empty() => FieldError::forbidden(
            field,
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        "Exact" if rv == "0" => FieldError::forbidden(
            field,
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ),
        "Exact" | "NotOlderThan" => return Ok(()),
        other => FieldError::not_supported(field, other.into(), &["Exact", "NotOlderThan", ""]),
    };
    Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", &[error]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Reason;

    fn q(pairs: &[(&str, &str)]) -> Query {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn booleans_are_false_only_when_absent_false_or_zero() {
        for (v, want) in [
            ("true", true),
            ("maybe", true),
            ("", true),
            ("1", true),
            ("false", false),
            ("FALSE", false),
            ("0", false),
        ] {
            assert_eq!(flag(&q(&[("watch", v)]), "watch"), want, "watch={v}");
        }
        assert!(!flag(&q(&[]), "watch"));
    }

    #[test]
    fn integers_are_parsed_as_go_does() {
        assert_eq!(int64(&q(&[("limit", "5")]), "limit").unwrap(), Some(5));
        assert_eq!(int64(&q(&[("limit", "-5")]), "limit").unwrap(), Some(-5));
        let err = int64(&q(&[("limit", "abc")]), "limit").unwrap_err();
        assert_eq!(err.reason, Reason::BadRequest);
        assert_eq!(err.message, "strconv.ParseInt: parsing \"abc\": invalid syntax");
        let err = int64(&q(&[("limit", "")]), "limit").unwrap_err();
        assert_eq!(err.message, "strconv.ParseInt: parsing \"\": invalid syntax");
        let err = int64(&q(&[("limit", "99999999999999999999")]), "limit").unwrap_err();
        assert!(err.message.ends_with("value out of range"));
        assert_eq!(positive(&q(&[("limit", "-1")]), "limit").unwrap(), None);
        assert_eq!(positive(&q(&[("limit", "0")]), "limit").unwrap(), None);
    }

    #[test]
    fn resource_versions_must_be_numbers() {
        assert_eq!(resource_version(&q(&[]), "", "pods").unwrap(), None);
        assert_eq!(
            resource_version(&q(&[("resourceVersion", "")]), "", "pods").unwrap(),
            None
        );
        assert_eq!(
            resource_version(&q(&[("resourceVersion", "0")]), "", "pods").unwrap(),
            Some(0)
        );
        assert_eq!(
            resource_version(&q(&[("resourceVersion", "42")]), "", "pods").unwrap(),
            Some(42)
        );
        let err = resource_version(&q(&[("resourceVersion", "abc")]), "", "pods").unwrap_err();
        assert_eq!(err.reason, Reason::Invalid);
        assert_eq!(
            err.message,
            "pods \"\" is invalid: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
        );
    }

    #[test]
    fn resource_version_match_follows_list_options_validation() {
        let only_match = q(&[("resourceVersionMatch", "NotOlderThan")]);
        assert!(
            resource_version(&only_match, "", "pods")
                .unwrap_err()
                .message
                .contains("forbidden unless resourceVersion is provided")
        );
        let exact_zero = q(&[("resourceVersion", "0"), ("resourceVersionMatch", "Exact")]);
        assert!(resource_version(&exact_zero, "", "pods").is_err());
        let bogus = q(&[("resourceVersion", "5"), ("resourceVersionMatch", "Sometimes")]);
        assert_eq!(
            resource_version(&bogus, "", "pods").unwrap_err().reason,
            Reason::Invalid
        );
        let fine = q(&[("resourceVersion", "5"), ("resourceVersionMatch", "NotOlderThan")]);
        assert_eq!(resource_version(&fine, "", "pods").unwrap(), Some(5));
    }
}
