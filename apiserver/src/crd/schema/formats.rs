//! String formats a CRD schema may name (upstream
//! `k8s.io/kube-openapi/pkg/validation/strfmt/default.go`, the registry
//! kube-openapi's format validator consults, restricted to the formats
//! `apiextensions-apiserver/pkg/apiserver/validation/formats.go` keeps).
//!
//! A string failing its format gives `spec.x in body must be of type uuid:
//! "abc"` (see [`super::validate`]).
//!
//! Checked: `uuid`, `uuid3`, `uuid4`, `uuid5`, `date-time` / `datetime`,
//! `date`, `byte`, `ipv4`, `ipv6`, `cidr`, `mac`, `hostname`, `email`,
//! `uri`, `duration`, `hexcolor`, `rgbcolor`, `bsonobjectid`. Not checked
//! (accepted as any string): `isbn`, `isbn10`, `isbn13`, `creditcard`,
//! `ssn`, `password`, and any unknown format; the numeric formats (`int32`,
//! `int64`, `float`, `double`) are not range-checked, as kube-openapi's
//! number validator is built without them for CRDs.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

/// Whether `s` is valid for `format` (unknown formats accept anything).
pub fn valid(format: &str, s: &str) -> bool {
    match format {
        "" => true,
        "uuid" => UUID.is_match(s),
        "uuid3" => UUID3.is_match(s),
        "uuid4" => UUID4.is_match(s),
        "uuid5" => UUID5.is_match(s),
        "date-time" | "datetime" => date_time(s),
        "date" => jiff::civil::Date::strptime("%Y-%m-%d", s).is_ok(),
        "byte" => byte(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => cidr(s),
        "mac" => MAC.is_match(s),
        "hostname" => HOSTNAME.is_match(s) && s.len() <= 255,
        "email" => EMAIL.is_match(s),
        "uri" => URI.is_match(s),
        "duration" => duration(s),
        "hexcolor" => HEXCOLOR.is_match(s),
        "rgbcolor" => RGBCOLOR.is_match(s),
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        _ => true,
    }
}

fn re(s: &str) -> Regex {
    // The patterns below are constants; a typo is a bug caught by the tests.
    Regex::new(s).expect("format pattern compiles")
}

static UUID: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID4: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"));
static UUID5: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"));
static MAC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$",
    )
});
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| re(r"^[^@\s]+@[^@\s]+$"));
static URI: LazyLock<Regex> = LazyLock::new(|| re(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|/)\S*$"));
static HEXCOLOR: LazyLock<Regex> = LazyLock::new(|| re(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
    )
});
static DURATION: LazyLock<Regex> = LazyLock::new(|| re(r"^(-?\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$"));

/// RFC 3339 date-time (strfmt also accepts a few variants; the common
/// `2006-01-02T15:04:05Z07:00` forms are what clients send).
fn date_time(s: &str) -> bool {
    s.parse::<jiff::Timestamp>().is_ok()
}

fn byte(s: &str) -> bool {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).is_ok()
}

fn cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

fn duration(s: &str) -> bool {
    DURATION.is_match(s) || s == "0"
}
