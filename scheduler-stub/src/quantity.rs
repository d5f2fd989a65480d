//! Parsing Kubernetes resource quantities (`500m`, `1Gi`, `1e3`, `2.5k`).
//!
//! The grammar is the one documented on upstream's `resource.Quantity`
//! (staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go):
//!
//! ```text
//! quantity  ::= [+-] number suffix
//! number    ::= digits | digits "." digits | digits "." | "." digits
//! suffix    ::= binarySI | decimalSI | ("e" | "E") [+-] digits
//! binarySI  ::= Ki | Mi | Gi | Ti | Pi | Ei
//! decimalSI ::= n | u | m | "" | k | M | G | T | P | E
//! ```
//!
//! A parsed quantity is held exactly as `mantissa * 10^exp10 * 2^exp2`, and
//! read back the way the scheduler reads it: [`Parsed::milli_value`] for CPU
//! (millicores) and [`Parsed::value`] for everything else (bytes, counts).
//! Both round up, as upstream's `MilliValue`/`Value` do, and saturate at the
//! `i64` range instead of wrapping. Mantissas longer than 30 significant
//! digits are truncated (rounding up), which no real manifest reaches.

use std::fmt;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Significant mantissa digits kept exactly; the rest round the mantissa up.
const MAX_DIGITS: usize = 30;

/// Why a quantity string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityError {
    /// The rejected input.
    pub input: String,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {:?}",
            self.input
        )
    }
}

impl std::error::Error for QuantityError {}

/// An exactly parsed quantity: `(-1)^negative * mantissa * 10^exp10 * 2^exp2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed {
    negative: bool,
    mantissa: u128,
    exp10: i32,
    exp2: u32,
}

impl Parsed {
    /// The value in whole units (bytes, pods), rounded up.
    pub fn value(&self) -> i64 {
        self.scaled(0)
    }

    /// The value in thousandths (millicores), rounded up.
    pub fn milli_value(&self) -> i64 {
        self.scaled(-3)
    }

    /// `ceil(self / 10^scale)` away from zero, saturated to the `i64` range.
    fn scaled(&self, scale: i32) -> i64 {
        if self.mantissa == 0 {
            return 0;
        }
        let magnitude = self.magnitude(scale);
        let clamped = i64::try_from(magnitude).unwrap_or(i64::MAX);
        if self.negative { -clamped } else { clamped }
    }

    fn magnitude(&self, scale: i32) -> u128 {
        let Some(mut num) = self.mantissa.checked_mul(1u128 << self.exp2.min(127)) else {
            return u128::MAX;
        };
        let shift = i64::from(self.exp10) - i64::from(scale);
        if shift >= 0 {
            let Ok(shift) = u32::try_from(shift) else {
                return u128::MAX;
            };
            10u128
                .checked_pow(shift)
                .and_then(|p| num.checked_mul(p))
                .unwrap_or(u128::MAX)
        } else {
            let Ok(down) = u32::try_from(-shift) else { return 1 };
            let Some(den) = 10u128.checked_pow(down) else {
                return 1;
            };
            let whole = num / den;
            num %= den;
            if num == 0 { whole } else { whole + 1 }
        }
    }
}

/// Parses a quantity string.
pub fn parse(input: &str) -> Result<Parsed, QuantityError> {
    let err = || QuantityError {
        input: input.to_owned(),
    };
    let bytes = input.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if let Some(&c) = bytes.first()
        && (c == b'+' || c == b'-')
    {
        negative = c == b'-';
        i = 1;
    }
    let mut digits = String::new();
    let mut frac_digits: i32 = 0;
    let mut seen_dot = false;
    let mut seen_digit = false;
    while i < bytes.len() {
        match bytes[i] {
            b'0'..=b'9' => {
                seen_digit = true;
                digits.push(char::from(bytes[i]));
                if seen_dot {
                    frac_digits += 1;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return Err(err());
    }
    let (exp10_suffix, exp2) = parse_suffix(&input[i..]).ok_or_else(err)?;

    let significant = digits.trim_start_matches('0');
    let (kept, dropped) = significant.split_at(significant.len().min(MAX_DIGITS));
    let mut mantissa: u128 = if kept.is_empty() {
        0
    } else {
        kept.parse().map_err(|_| err())?
    };
    if dropped.bytes().any(|b| b != b'0') {
        mantissa += 1;
    }
    let dropped_len = i32::try_from(dropped.len()).map_err(|_| err())?;
    let exp10 = exp10_suffix
        .checked_add(dropped_len)
        .and_then(|e| e.checked_sub(frac_digits))
        .ok_or_else(err)?;
    Ok(Parsed {
        negative: negative && mantissa != 0,
        mantissa,
        exp10,
        exp2,
    })
}

/// Returns `(power of ten, power of two)` for a suffix, `None` if malformed.
fn parse_suffix(suffix: &str) -> Option<(i32, u32)> {
    let known = match suffix {
        "" => Some((0, 0)),
        "n" => Some((-9, 0)),
        "u" => Some((-6, 0)),
        "m" => Some((-3, 0)),
        "k" => Some((3, 0)),
        "M" => Some((6, 0)),
        "G" => Some((9, 0)),
        "T" => Some((12, 0)),
        "P" => Some((15, 0)),
        "E" => Some((18, 0)),
        "Ki" => Some((0, 10)),
        "Mi" => Some((0, 20)),
        "Gi" => Some((0, 30)),
        "Ti" => Some((0, 40)),
        "Pi" => Some((0, 50)),
        "Ei" => Some((0, 60)),
        _ => None,
    };
    if known.is_some() {
        return known;
    }
    let rest = suffix.strip_prefix(['e', 'E'])?;
    let unsigned = rest.strip_prefix(['+', '-']).unwrap_or(rest);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((rest.parse().ok()?, 0))
}

/// CPU in millicores; `None` when the string is malformed.
pub fn milli_value(q: &Quantity) -> Option<i64> {
    parse(&q.0).ok().map(|p| p.milli_value())
}

/// Whole units (bytes, pods); `None` when the string is malformed.
pub fn value(q: &Quantity) -> Option<i64> {
    parse(&q.0).ok().map(|p| p.value())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> i64 {
        parse(s).unwrap_or_else(|e| panic!("{e}")).value()
    }

    fn mv(s: &str) -> i64 {
        parse(s).unwrap_or_else(|e| panic!("{e}")).milli_value()
    }

    #[test]
    fn cpu_forms_in_millicores() {
        let cases = [
            ("1", 1000),
            ("500m", 500),
            ("0.5", 500),
            ("1.5", 1500),
            (".1", 100),
            ("2.", 2000),
            ("100m", 100),
            ("1500m", 1500),
            ("0", 0),
            ("0m", 0),
            ("1e3", 1_000_000),
            ("1e-3", 1),
            ("0.0001", 1), // rounds up like MilliValue
            ("1u", 1),
            ("250000u", 250),
            ("+2", 2000),
            ("1k", 1_000_000),
        ];
        for (input, want) in cases {
            assert_eq!(mv(input), want, "{input}");
        }
    }

    #[test]
    fn memory_forms_in_bytes() {
        let cases = [
            ("128974848", 128_974_848),
            ("129e6", 129_000_000),
            ("129M", 129_000_000),
            ("123Mi", 128_974_848),
            ("1Ki", 1024),
            ("1Gi", 1 << 30),
            ("1.5Gi", 3 << 29),
            ("1Ti", 1 << 40),
            ("1Pi", 1 << 50),
            ("1Ei", 1 << 60),
            ("1k", 1000),
            ("1G", 1_000_000_000),
            ("1T", 1_000_000_000_000),
            ("1P", 1_000_000_000_000_000),
            ("1E", 1_000_000_000_000_000_000),
            ("1E3", 1000),
            ("1e+3", 1000),
            ("100m", 1), // 0.1 rounds up
            ("1n", 1),
            ("110", 110),
            ("0.5Ki", 512),
        ];
        for (input, want) in cases {
            assert_eq!(v(input), want, "{input}");
        }
    }

    #[test]
    fn saturates_instead_of_overflowing() {
        assert_eq!(v("16Ei"), i64::MAX);
        assert_eq!(v("1e40"), i64::MAX);
        assert_eq!(mv("9223372036854775807"), i64::MAX);
        assert_eq!(v("1e-40"), 1);
        assert_eq!(v("-1"), -1);
        assert_eq!(v("123456789012345678901234567890123456789e-30"), 123_456_790);
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "", "m", "1.2.3", "1KiB", "1ki", "abc", "1e", "1e+", "--1", "1 Gi", " 1", "1.5e1.5", "Ki",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn reads_k8s_openapi_quantity() {
        assert_eq!(milli_value(&Quantity("250m".into())), Some(250));
        assert_eq!(value(&Quantity("64Mi".into())), Some(64 << 20));
        assert_eq!(value(&Quantity("nope".into())), None);
    }
}
