//! Resource quantities (`500m`, `64Mi`, `2`) as quota and limit ranges
//! read, add, compare and print them.
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`
//! (`ParseQuantity`, `Add`, `Cmp`, `String`, and the canonical form
//! `CanonicalizeBytes` picks). Simplified: a quantity is held in
//! thousandths of a unit (`i128`), so anything finer than `1m` rounds up
//! (upstream keeps nano precision); the suffix family (decimal SI, binary
//! SI, exponent) is kept so sums print as upstream prints them (`128Mi`,
//! `1500m`, `2k`).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// How a quantity prints (upstream `resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `m`, `k`, `M`, `G`, ... or no suffix.
    DecimalSI,
    /// `Ki`, `Mi`, `Gi`, ...
    BinarySI,
    /// `1e3`.
    DecimalExponent,
}

/// A parsed quantity: its value in thousandths and the format it prints in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    milli: i128,
    format: Format,
}

impl Quantity {
    /// Zero, printed `0`.
    pub const ZERO: Quantity = Quantity {
        milli: 0,
        format: Format::DecimalSI,
    };

    /// A whole number of units (a count), decimal SI.
    pub fn from_int(n: i64) -> Self {
        Quantity {
            milli: i128::from(n) * 1000,
            format: Format::DecimalSI,
        }
    }

    /// Parses a quantity string; `None` when it is not one.
    pub fn parse(s: &str) -> Option<Self> {
        let (num, suffix) = split_number(s)?;
        let (exp10, exp2, format) = suffix_scale(suffix)?;
        let negative = num.starts_with('-');
        let digits = num.trim_start_matches(['+', '-']);
        let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
        if whole.is_empty() && frac.is_empty() {
            return None;
        }
        // The value is (whole.frac) * 10^exp10 * 2^exp2, in thousandths.
        let mut mantissa: i128 = 0;
        for d in whole.bytes().chain(frac.bytes()) {
            mantissa = mantissa.checked_mul(10)?.checked_add(i128::from(d - b'0'))?;
        }
        let scale = exp10 + 3 - i32::try_from(frac.len()).ok()?;
        let mut milli = mantissa.checked_mul(1i128.checked_shl(exp2)?)?;
        if scale >= 0 {
            milli = milli.checked_mul(10i128.checked_pow(scale.unsigned_abs())?)?;
        } else {
            let den = 10i128.checked_pow(scale.unsigned_abs()).unwrap_or(i128::MAX);
            milli = milli / den + i128::from(milli % den != 0);
        }
        Some(Quantity {
            milli: if negative { -milli } else { milli },
            format,
        })
    }

    /// Reads a quantity from JSON (a string, or a number as some clients send).
    pub fn from_json(v: &Value) -> Option<Self> {
        match v {
            Value::String(s) => Self::parse(s),
            Value::Number(n) => Self::parse(&n.to_string()),
            _ => None,
        }
    }

    /// The value in thousandths (upstream `MilliValue`).
    pub fn milli_value(&self) -> i128 {
        self.milli
    }

    /// Whether it is below zero.
    pub fn is_negative(&self) -> bool {
        self.milli < 0
    }

    /// Whether it is a whole number of units.
    pub fn is_integer(&self) -> bool {
        self.milli % 1000 == 0
    }

    /// The quantity as JSON (its canonical string).
    pub fn to_json(self) -> Value {
        Value::String(self.to_string())
    }
}

impl std::ops::Add for Quantity {
    type Output = Quantity;

    /// `self + other`, in `self`'s format (upstream `Add`; a zero takes
    /// the other's format).
    fn add(self, other: Quantity) -> Quantity {
        let format = if self.milli == 0 && self.format == Format::DecimalSI {
            other.format
        } else {
            self.format
        };
        Quantity {
            milli: self.milli.saturating_add(other.milli),
            format,
        }
    }
}

impl std::ops::Sub for Quantity {
    type Output = Quantity;

    /// `self - other`, in `self`'s format.
    fn sub(self, other: Quantity) -> Quantity {
        Quantity {
            milli: self.milli.saturating_sub(other.milli),
            format: self.format,
        }
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.milli.cmp(&other.milli)
    }
}

impl fmt::Display for Quantity {
    /// Upstream's canonical form: the largest suffix that keeps the number
    /// whole (`1500m`, `2k`, `128Mi`); a binary quantity that is not a whole
    /// number of KiB prints in decimal SI.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.milli;
        if m == 0 {
            return f.write_str("0");
        }
        if m % 1000 != 0 {
            return write!(f, "{m}m");
        }
        let units = m / 1000;
        if self.format == Format::BinarySI {
            const BINARY: [(&str, u32); 6] = [
                ("Ei", 60),
                ("Pi", 50),
                ("Ti", 40),
                ("Gi", 30),
                ("Mi", 20),
                ("Ki", 10),
            ];
            for (suffix, shift) in BINARY {
                let unit = 1i128 << shift;
                if units % unit == 0 {
                    return write!(f, "{}{suffix}", units / unit);
                }
            }
            if units.abs() < 1024 {
                return write!(f, "{units}");
            }
        }
        const DECIMAL: [(&str, u32); 6] = [("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3)];
        for (suffix, exp) in DECIMAL {
            let unit = 10i128.pow(exp);
            if units % unit == 0 {
                return match self.format {
                    Format::DecimalExponent => write!(f, "{}e{exp}", units / unit),
                    _ => write!(f, "{}{suffix}", units / unit),
                };
            }
        }
        write!(f, "{units}")
    }
}

/// Splits `[+-]digits[.digits]` from the suffix.
fn split_number(s: &str) -> Option<(&str, &str)> {
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && (c == '+' || c == '-'))))
        .map_or(s.len(), |(i, _)| i);
    let (num, suffix) = s.split_at(end);
    (num.matches('.').count() <= 1 && num.bytes().any(|b| b.is_ascii_digit())).then_some((num, suffix))
}

/// `(power of ten, power of two, format)` of a suffix.
fn suffix_scale(suffix: &str) -> Option<(i32, u32, Format)> {
    let decimal = |e| Some((e, 0, Format::DecimalSI));
    let binary = |e| Some((0, e, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exp = suffix.strip_prefix(['e', 'E'])?;
            let digits = exp.trim_start_matches(['+', '-']);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let e: i32 = exp.parse().ok()?;
            (-30..=30).contains(&e).then_some((e, 0, Format::DecimalExponent))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|| panic!("{s} should parse"))
    }

    #[test]
    fn parses_and_prints_canonically() {
        let cases = [
            ("500m", 500, "500m"),
            ("0.5", 500, "500m"),
            ("1", 1000, "1"),
            ("1500m", 1500, "1500m"),
            ("2000m", 2000, "2"),
            ("2000", 2_000_000, "2k"),
            ("64Mi", (64i128 << 20) * 1000, "64Mi"),
            ("1Gi", (1i128 << 30) * 1000, "1Gi"),
            ("1024Mi", (1i128 << 30) * 1000, "1Gi"),
            ("128M", 128_000_000_000, "128M"),
            ("1e3", 1_000_000, "1e3"),
            ("0", 0, "0"),
            ("-1", -1000, "-1"),
            ("1u", 1, "1m"),
        ];
        for (input, milli, printed) in cases {
            let parsed = q(input);
            assert_eq!(parsed.milli_value(), milli, "{input}");
            assert_eq!(parsed.to_string(), printed, "{input}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_quantity() {
        for bad in ["", "m", "1.2.3", "1KiB", "abc", "1e", "--1", " 1", "1 Gi"] {
            assert_eq!(Quantity::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn sums_keep_the_first_format() {
        let sum = q("64Mi") + q("64Mi");
        assert_eq!(sum.to_string(), "128Mi");
        assert_eq!((Quantity::ZERO + q("100m") + q("400m")).to_string(), "500m");
        assert_eq!((Quantity::from_int(1) + Quantity::from_int(1)).to_string(), "2");
        assert_eq!((q("1") - q("250m")).to_string(), "750m");
        assert!(q("100m") < q("1"));
        assert_eq!(q("1000m").cmp(&q("1")), Ordering::Equal);
    }
}
