//! CronJob schedules: the dialect of robfig/cron's `ParseStandard`, evaluated by `croner`, in
//! time zones from jiff's tz database. Shared by the API server's validation of
//! `spec.schedule` / `spec.timeZone` and by the CronJob controller.
//!
//! Upstream: `github.com/robfig/cron/v3` (`parser.go`: `ParseStandard`, `getField`,
//! `getRange`, `parseDescriptor`; `spec.go`: `Next`, `dayMatches`; `constantdelay.go`:
//! `Every`), `time.LoadLocation`, and `pkg/apis/batch/validation/validation.go`
//! (`validateScheduleFormat`, `validateTimeZone`).
//!
//! ```text
//! "*/15 9-17 * * mon-fri"           robfig's rules, robfig's error texts (what `kubectl` shows)
//!   → fields as sets of values      "0,15,30,45 9,10,…,17 * * 1,2,3,4,5"
//!   → croner::Cron                  next occurrence in the zone (DST included), 5-year horizon
//! "@every 90s"                      a constant delay, as robfig's `Every` (not a cron pattern)
//! "TZ=Europe/Paris 0 3 * * *"       a zone prefix (the controller's `formatSchedule` writes it)
//! ```
//!
//! Why the fields are checked here and not by croner alone: croner accepts more than Kubernetes
//! does (`L`, `W`, `#`, `+`, `7` for Sunday, seconds and years, long month names) and words its
//! errors its own way. So each field is read by robfig's rules into the set of values it stands
//! for, errors worded as robfig words them, and croner gets a plain pattern of numbers to
//! evaluate. Whether a day-of-month or day-of-week field is "starred" (`*` or `?` without a step)
//! carries over as `*`, since it decides whether the two day fields are ANDed or ORed.
//!
//! Simplified: a schedule without a zone runs in UTC (robfig's `time.Local` of the controller
//! manager; miniplane's process zone is taken to be UTC); around DST changes croner's rules
//! apply, not robfig's.

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};

/// A parsed schedule (robfig's `cron.Schedule`).
#[derive(Clone, Debug)]
pub struct Schedule {
    kind: Kind,
    /// Where the cron fields are read (`TZ=` prefix, else UTC).
    zone: TimeZone,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Five fields (or a descriptor such as `@daily`), evaluated by croner.
    Cron(Box<Cron>),
    /// `@every <duration>`: whole seconds, at least one.
    Every(SignedDuration),
    /// Fields that can never match (a field with no values, e.g. `,`, or the 31st of
    /// February only): `Next` finds nothing, as robfig's returns the zero time.
    Never,
}

/// The bounds and names of one field (robfig's `bounds`).
struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// One field read by robfig's rules: the values it stands for, and whether it was starred.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Field {
    /// Bit `v` set when value `v` matches.
    bits: u64,
    /// `*` or `?` with no step above 1 (robfig's `starBit`).
    star: bool,
}

impl Field {
    /// The field as croner reads it: `*` when starred, else the values, comma-separated.
    fn pattern(&self, b: &Bounds) -> String {
        if self.star {
            return "*".to_string();
        }
        let values: Vec<String> = (b.min..=b.max)
            .filter(|v| self.bits & (1 << v) != 0)
            .map(|v| v.to_string())
            .collect();
        values.join(",")
    }
}

impl Schedule {
    /// Upstream `cron.ParseStandard`: five fields (minute, hour, day of month, month, day of
    /// week), a descriptor (`@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
    /// `@midnight`, `@hourly`, `@every <duration>`), optionally after `TZ=<zone> ` or
    /// `CRON_TZ=<zone> `. The error is robfig's text, which the API server puts in its 422.
    pub fn parse_standard(spec: &str) -> Result<Schedule, String> {
        if spec.is_empty() {
            return Err("empty spec string".to_string());
        }
        let mut spec = spec;
        let mut zone = TimeZone::UTC;
        if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
            let eq = spec.find('=').unwrap_or(0);
            let end = spec.find(' ').unwrap_or(spec.len());
            let name = spec.get(eq + 1..end).unwrap_or("");
            zone = load_location(name).map_err(|e| format!("provided bad location {name}: {e}"))?;
            spec = spec.get(end..).unwrap_or("").trim();
        }
        if spec.starts_with('@') {
            return parse_descriptor(spec).map(|kind| Schedule { kind, zone });
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ));
        }
        let minute = get_field(fields[0], &MINUTES)?;
        let hour = get_field(fields[1], &HOURS)?;
        let dom = get_field(fields[2], &DOM)?;
        let month = get_field(fields[3], &MONTHS)?;
        let dow = get_field(fields[4], &DOW)?;
        let kind = if [&minute, &hour, &dom, &month, &dow].iter().any(|f| f.bits == 0)
            || never_a_day(&dom, &month, &dow)
        {
            Kind::Never
        } else {
            let pattern = [
                minute.pattern(&MINUTES),
                hour.pattern(&HOURS),
                dom.pattern(&DOM),
                month.pattern(&MONTHS),
                dow.pattern(&DOW),
            ]
            .join(" ");
            Kind::Cron(Box::new(
                croner_parser().parse(&pattern).map_err(|e| e.to_string())?,
            ))
        };
        Ok(Schedule { kind, zone })
    }

    /// Upstream `Schedule.Next`: the first activation strictly after `t` (cron schedules fire
    /// at second 0 of a minute). `None` where robfig answers the zero time: no activation
    /// within five years (e.g. `59 23 31 2 *`).
    pub fn next(&self, t: Timestamp) -> Option<Timestamp> {
        // Whole seconds, as robfig counts from `t` rounded down to its second.
        let t = t
            .checked_sub(SignedDuration::from_nanos(i64::from(t.subsec_nanosecond())))
            .ok()?;
        match &self.kind {
            Kind::Never => None,
            Kind::Every(delay) => t.checked_add(*delay).ok(),
            Kind::Cron(cron) => {
                let start = t.to_zoned(self.zone.clone());
                let next = cron.find_next_occurrence(&start, false).ok()?;
                (next.year() <= start.year().saturating_add(5)).then(|| next.timestamp())
            }
        }
    }
}

/// croner as Kubernetes needs it: five fields only; `sloppy_ranges` so that `N/step` (which
/// robfig reads as `N-max/step`) would parse, though the patterns handed over are plain lists.
fn croner_parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .sloppy_ranges(true)
        .build()
}

/// Upstream `parseDescriptor`. `@midnight` is `@daily`; the others are croner's own nicknames.
fn parse_descriptor(descriptor: &str) -> Result<Kind, String> {
    let nickname = match descriptor {
        "@yearly" | "@annually" => Some("@yearly"),
        "@monthly" => Some("@monthly"),
        "@weekly" => Some("@weekly"),
        "@daily" | "@midnight" => Some("@daily"),
        "@hourly" => Some("@hourly"),
        _ => None,
    };
    if let Some(nickname) = nickname {
        let cron = croner_parser().parse(nickname).map_err(|e| e.to_string())?;
        return Ok(Kind::Cron(Box::new(cron)));
    }
    if let Some(duration) = descriptor.strip_prefix("@every ") {
        let d =
            parse_go_duration(duration).map_err(|e| format!("failed to parse duration {descriptor}: {e}"))?;
        // robfig's `Every`: at least a second, in whole seconds.
        let secs = (d / 1_000_000_000).max(1);
        return Ok(Kind::Every(SignedDuration::from_secs(secs)));
    }
    Err(format!("unrecognized descriptor: {descriptor}"))
}

/// Upstream `getField`: comma-separated ranges (empty pieces skipped), their values ORed.
fn get_field(field: &str, b: &Bounds) -> Result<Field, String> {
    let mut out = Field::default();
    for expr in field.split(',').filter(|e| !e.is_empty()) {
        let f = get_range(expr, b)?;
        out.bits |= f.bits;
        out.star |= f.star;
    }
    Ok(out)
}

/// Upstream `getRange`: `*`, `?`, `N`, `N-M`, each with an optional `/step`; `N/step` runs to
/// the field's maximum.
fn get_range(expr: &str, b: &Bounds) -> Result<Field, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end, mut star) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (u64::from(b.min), u64::from(b.max), true)
    } else {
        let start = parse_int_or_name(low_and_high[0], b)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => parse_int_or_name(low_and_high[1], b)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end, false)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single {
                end = u64::from(b.max);
            }
            if step > 1 {
                star = false;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    let (min, max) = (u64::from(b.min), u64::from(b.max));
    if start < min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Err(format!("end of range ({end}) above maximum ({max}): {expr}"));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    let mut bits = 0u64;
    let mut v = start;
    while v <= end {
        bits |= 1 << v;
        v += step;
    }
    Ok(Field { bits, star })
}

/// Upstream `parseIntOrName`: a three-letter name (any case) or a number.
fn parse_int_or_name(expr: &str, b: &Bounds) -> Result<u64, String> {
    let lower = expr.to_ascii_lowercase();
    if let Some((_, v)) = b.names.iter().find(|(name, _)| *name == lower) {
        return Ok(u64::from(*v));
    }
    must_parse_int(expr)
}

/// Upstream `mustParseInt`: Go's `strconv.Atoi`, then no negatives.
fn must_parse_int(expr: &str) -> Result<u64, String> {
    let n = go_atoi(expr).map_err(|e| format!("failed to parse int from {expr}: {e}"))?;
    u64::try_from(n).map_err(|_| format!("negative number ({n}) not allowed: {expr}"))
}

/// Go's `strconv.Atoi` (64-bit `int`) with its error texts.
fn go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {}: invalid syntax", go_quote(s)));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", go_quote(s)))
}

/// Go's `%q` / `strconv.Quote` for the printable strings a schedule holds.
fn go_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Whether a starred day-of-week leaves a day-of-month list that no month in the month list
/// has (robfig ANDs the two day fields when one is starred): `Next` would find nothing.
fn never_a_day(dom: &Field, month: &Field, dow: &Field) -> bool {
    if dom.star || !dow.star {
        return false;
    }
    const DAYS_IN_MONTH: [u32; 13] = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    !(1..=12u32).any(|m| {
        month.bits & (1 << m) != 0 && (1..=DAYS_IN_MONTH[m as usize]).any(|d| dom.bits & (1 << d) != 0)
    })
}

/// Go's `time.ParseDuration`, in nanoseconds, with its error texts.
pub fn parse_go_duration(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(s));
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(f) => {
                let n = f.bytes().take_while(u8::is_ascii_digit).count();
                f.split_at(n)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        let unit_len = after
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(after.len(), |(i, _)| i);
        let (unit, after) = after.split_at(unit_len);
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {}", go_quote(s)));
        }
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(unit),
                    go_quote(s)
                ));
            }
        };
        let number: f64 = format!(
            "{}.{}",
            if int_part.is_empty() { "0" } else { int_part },
            frac_part
        )
        .parse()
        .map_err(|_| invalid())?;
        total += number * scale;
        if total > i64::MAX as f64 {
            return Err(invalid());
        }
        rest = after;
    }
    // Within i64 by the check above; the cast rounds toward zero.
    let nanos = total as i64;
    Ok(if neg { -nanos } else { nanos })
}

/// Go's `time.LoadLocation` over jiff's tz database: `""` and `UTC` are UTC; `Local` is the
/// process zone (UTC here); other names must be in the database, spelled as there (Go reads a
/// file of that exact name). The error is Go's text.
pub fn load_location(name: &str) -> Result<TimeZone, String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(TimeZone::UTC);
    }
    if name.contains("..") || name.starts_with('/') || name.contains('\\') {
        return Err("time: invalid location name".to_string());
    }
    match TimeZone::get(name) {
        Ok(tz) if tz.iana_name() == Some(name) => Ok(tz),
        _ => Err(format!("unknown time zone {name}")),
    }
}

/// Upstream `validateScheduleFormat`: the messages of `spec.schedule`'s Invalid errors.
/// `allow_tz_in_schedule` is upstream's update rule (the old schedule had a `TZ`).
pub fn validate_schedule_format(
    schedule: &str,
    allow_tz_in_schedule: bool,
    time_zone_set: bool,
) -> Vec<String> {
    let mut errs = Vec::new();
    if let Err(e) = Schedule::parse_standard(schedule) {
        errs.push(e);
    }
    let has_tz = schedule.contains("TZ");
    if allow_tz_in_schedule && has_tz && time_zone_set {
        errs.push("cannot use both timeZone field and TZ or CRON_TZ in schedule".to_string());
    } else if !allow_tz_in_schedule && has_tz {
        errs.push("cannot use TZ or CRON_TZ in schedule, use timeZone field instead".to_string());
    }
    errs
}

/// Upstream `validateTimeZone`: the messages of `spec.timeZone`'s Invalid errors.
pub fn validate_time_zone(time_zone: &str) -> Vec<String> {
    if time_zone.is_empty() {
        return vec!["timeZone must be nil or non-empty string".to_string()];
    }
    let valid_part = |p: &str| {
        (1..=14).contains(&p.len())
            && p.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'+'))
    };
    let bad_part = time_zone
        .split('/')
        .any(|p| p == "." || p == ".." || p.starts_with('-') || !valid_part(p));
    if bad_part {
        return vec![format!("unknown time zone {time_zone}")];
    }
    let mut errs = Vec::new();
    if time_zone.eq_ignore_ascii_case("Local") {
        errs.push(
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
                .to_string(),
        );
    }
    if let Err(e) = load_location(time_zone) {
        errs.push(e);
    }
    errs
}

#[cfg(test)]
mod tests;
