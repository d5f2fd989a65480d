//! Cell helpers shared by the printers: ages and durations, object access,
//! conditions, container lists.
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go`
//! (`HumanDuration`), `translateTimestampSince`, `layoutContainerCells` and
//! `listWithMoreString` of `pkg/printers/internalversion/printers.go`.
//! Objects are v1 JSON here, so the typed field access of the Go printers is a
//! path walk in which a missing or mistyped field reads as its zero value
//! (`crate::jsonpath`, plus the list helpers below).

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::jsonpath::{at, bool_at, str_at};
use crate::labels::format_label_selector;

// ---------------------------------------------------------------------------
// Durations
// ---------------------------------------------------------------------------

/// `duration.HumanDuration` for a signed number of whole seconds (truncated toward
/// zero, as Go's `int(d.Seconds())`).
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    if hours < 24 * 365 * 8 {
        return with_remainder(days / 365, "y", days % 365, "d");
    }
    format!("{}y", days / 365)
}

/// HumanDuration of `to - from`, truncating sub-second parts toward zero.
pub fn human_duration_between(from: Timestamp, to: Timestamp) -> String {
    human_duration(to.duration_since(from).as_secs())
}

/// `translateTimestampSince`: `<unknown>` for a missing/unparsable timestamp.
pub fn translate_timestamp_since(ts: Option<&Value>, now: Timestamp) -> String {
    match ts.and_then(parse_time) {
        Some(t) => human_duration_between(t, now),
        None => "<unknown>".to_string(),
    }
}

fn with_remainder(major: i64, major_unit: &str, minor: i64, minor_unit: &str) -> String {
    if minor == 0 {
        format!("{major}{major_unit}")
    } else {
        format!("{major}{major_unit}{minor}{minor_unit}")
    }
}

/// Parses a metav1.Time / MicroTime; null, empty and Go's zero time count as unset.
pub(super) fn parse_time(v: &Value) -> Option<Timestamp> {
    let t: Timestamp = v.as_str()?.parse().ok()?;
    (t.as_second() != GO_ZERO_TIME_SECONDS).then_some(t)
}

/// Whether `v` holds a set time (not null, empty or Go's zero time).
pub(super) fn is_set(v: Option<&Value>) -> bool {
    v.and_then(parse_time).is_some()
}

/// Unix seconds of Go's zero `time.Time` (0001-01-01T00:00:00Z).
const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;

// ---------------------------------------------------------------------------
// Object access
// ---------------------------------------------------------------------------

pub(super) fn array(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

pub(super) fn strings(v: Option<&Value>) -> Vec<&str> {
    array(v).iter().filter_map(Value::as_str).collect()
}

pub(super) fn map_len(v: Option<&Value>) -> usize {
    v.and_then(Value::as_object).map_or(0, Map::len)
}

pub(super) fn array_len(v: Option<&Value>) -> usize {
    array(v).len()
}

pub(super) fn or_none(s: String) -> String {
    if s.is_empty() { "<none>".to_string() } else { s }
}

/// Whether `metadata.deletionTimestamp` is set (to anything but null).
pub(super) fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// The owner reference with `controller: true`.
pub(super) fn controller_ref(obj: &Value) -> Option<&Value> {
    array(obj.pointer("/metadata/ownerReferences"))
        .iter()
        .find(|r| bool_at(r, &["controller"]))
}

// ---------------------------------------------------------------------------
// Conditions and lists
// ---------------------------------------------------------------------------

pub(super) fn conditions(obj: &Value) -> &[Value] {
    array(obj.pointer("/status/conditions"))
}

/// Whether `status.conditions` holds a condition of type `ty` with status True.
pub(super) fn has_condition(obj: &Value, ty: &str) -> bool {
    conditions(obj)
        .iter()
        .any(|c| str_at(c, &["type"]) == ty && str_at(c, &["status"]) == "True")
}

/// `layoutContainerCells`: names and images, each joined by `,`.
pub(super) fn container_cells(containers: Option<&Value>) -> (String, String) {
    let list = array(containers);
    let names: Vec<&str> = list.iter().map(|c| str_at(c, &["name"])).collect();
    let images: Vec<&str> = list.iter().map(|c| str_at(c, &["image"])).collect();
    (names.join(","), images.join(","))
}

/// The label selector at `path`, as `metav1.FormatLabelSelector` prints it
/// (`<none>` when empty).
pub(super) fn selector_at(obj: &Value, path: &[&str]) -> Value {
    json!(format_label_selector(at(obj, path).unwrap_or(&Value::Null)))
}

/// The first three items joined by commas and `+ N more...`, or `<unset>`
/// (upstream `listWithMoreString`).
pub(super) fn list_with_more(items: impl Iterator<Item = String>) -> String {
    const MAX: usize = 3;
    let all: Vec<String> = items.collect();
    let shown = all[..all.len().min(MAX)].join(",");
    match all.len() {
        0 => "<unset>".to_string(),
        n if n > MAX => format!("{shown} + {} more...", n - MAX),
        _ => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_boundaries() {
        let cases = [
            (-3, "<invalid>"),
            (-2, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (1, "1s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (599, "9m59s"),
            (600, "10m"),
            (179 * 60 + 59, "179m"),
            (180 * 60, "3h"),
            (3 * 3600 + 30 * 60, "3h30m"),
            (8 * 3600 - 1, "7h59m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (8 * 86400 - 1, "7d23h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (731 * 86400, "2y1d"),
            (8 * 365 * 86400 - 1, "7y364d"),
            (8 * 365 * 86400, "8y"),
            (20 * 365 * 86400 + 5 * 86400, "20y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}s");
        }
    }

    #[test]
    fn human_duration_between_truncates_sub_seconds() {
        let a: Timestamp = "2025-05-01T12:00:00Z".parse().unwrap();
        let b: Timestamp = "2025-05-01T12:00:01.5Z".parse().unwrap();
        let c: Timestamp = "2025-05-01T12:00:02.5Z".parse().unwrap();
        assert_eq!(human_duration_between(b, a), "0s"); // -1.5s
        assert_eq!(human_duration_between(c, a), "<invalid>"); // -2.5s
        assert_eq!(human_duration_between(a, c), "2s");
        assert_eq!(translate_timestamp_since(None, a), "<unknown>");
        assert_eq!(translate_timestamp_since(Some(&Value::Null), a), "<unknown>");
        assert_eq!(
            translate_timestamp_since(Some(&json!("0001-01-01T00:00:00Z")), a),
            "<unknown>"
        );
    }
}
