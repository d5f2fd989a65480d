//! Schedules and time zones: what Kubernetes accepts and rejects, with robfig's and Go's texts,
//! and `next` against robfig's answers.

use jiff::Timestamp;

use super::*;

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn next_of(spec: &str, after: &str) -> Option<String> {
    let schedule = Schedule::parse_standard(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    schedule.next(ts(after)).map(|t| t.to_string())
}

#[test]
fn accepted_schedules() {
    for spec in [
        "* * * * *",
        "*/1 * * * *",
        "0 * * * ?",
        "? ? ? ? ?",
        "30 10,11,12 * * 1-5",
        "30 6-16/4 * * 1-5",
        "5/15 * * * *",
        "0 0 1 jan,JUL *",
        "0 9 * * mon-fri",
        "0 9 * * Sun",
        "59 23 31 2 *",
        "0 0 * * 6",
        "+5 * * * *",
        ",",
        "*-5 * * * *",
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
        "@every 1h30m",
        "@every 90s",
        "TZ=Europe/Paris 0 3 * * *",
        "CRON_TZ=UTC @daily",
    ] {
        if spec == "," {
            // One field only: robfig counts fields before it reads them.
            assert!(Schedule::parse_standard(spec).is_err());
            continue;
        }
        Schedule::parse_standard(spec).unwrap_or_else(|e| panic!("{spec:?} rejected: {e}"));
    }
}

#[test]
fn rejected_schedules_carry_robfigs_messages() {
    let cases = [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("0 0 * * * *", "expected exactly 5 fields, found 6: [0 0 * * * *]"),
        ("61 * * * *", "end of range (61) above maximum (59): 61"),
        ("* 24 * * *", "end of range (24) above maximum (23): 24"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("* * 32 * *", "end of range (32) above maximum (31): 32"),
        ("* * * 13 *", "end of range (13) above maximum (12): 13"),
        ("* * * * 7", "end of range (7) above maximum (6): 7"),
        (
            "* * * * mon-sun",
            "beginning of range (1) beyond end of range (0): mon-sun",
        ),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("*/2/3 * * * *", "too many slashes: */2/3"),
        (
            "x * * * *",
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
        ),
        (
            "* * L * *",
            "failed to parse int from L: strconv.Atoi: parsing \"L\": invalid syntax",
        ),
        (
            "* * 15W * *",
            "failed to parse int from 15W: strconv.Atoi: parsing \"15W\": invalid syntax",
        ),
        (
            "* * * * 5#2",
            "failed to parse int from 5#2: strconv.Atoi: parsing \"5#2\": invalid syntax",
        ),
        (
            "* * * * +mon",
            "failed to parse int from +mon: strconv.Atoi: parsing \"+mon\": invalid syntax",
        ),
        (
            "* * * january *",
            "failed to parse int from january: strconv.Atoi: parsing \"january\": invalid syntax",
        ),
        (
            "-5 * * * *",
            "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax",
        ),
        ("@reboot", "unrecognized descriptor: @reboot"),
        ("@daily ", "unrecognized descriptor: @daily "),
        ("@DAILY", "unrecognized descriptor: @DAILY"),
        (
            "@every 5",
            "failed to parse duration @every 5: time: missing unit in duration \"5\"",
        ),
        (
            "@every 5x",
            "failed to parse duration @every 5x: time: unknown unit \"x\" in duration \"5x\"",
        ),
        (
            "@every soon",
            "failed to parse duration @every soon: time: invalid duration \"soon\"",
        ),
        (
            "TZ=Mars/Olympus 0 * * * *",
            "provided bad location Mars/Olympus: unknown time zone Mars/Olympus",
        ),
    ];
    for (spec, want) in cases {
        let err = Schedule::parse_standard(spec).expect_err(spec);
        assert_eq!(err, want, "{spec:?}");
    }
}

#[test]
fn the_first_failing_field_is_reported() {
    let err = Schedule::parse_standard("99 99 * * *").unwrap_err();
    assert_eq!(err, "end of range (99) above maximum (59): 99");
}

#[test]
fn next_follows_robfig() {
    // Strictly after, at second 0.
    assert_eq!(
        next_of("* * * * *", "2016-05-19T10:00:00Z").as_deref(),
        Some("2016-05-19T10:01:00Z")
    );
    assert_eq!(
        next_of("* * * * *", "2016-05-19T10:00:59.5Z").as_deref(),
        Some("2016-05-19T10:01:00Z")
    );
    assert_eq!(
        next_of("0 * * * ?", "2016-05-19T09:50:00Z").as_deref(),
        Some("2016-05-19T10:00:00Z")
    );
    // N/step runs to the maximum.
    assert_eq!(
        next_of("50/5 * * * *", "2016-05-19T10:56:00Z").as_deref(),
        Some("2016-05-19T11:50:00Z")
    );
    // Weekdays only: Friday 12:30 → Monday 10:30.
    assert_eq!(
        next_of("30 10,11,12 * * 1-5", "2016-05-20T12:30:00Z").as_deref(),
        Some("2016-05-23T10:30:00Z")
    );
    // Both day fields restricted: either matches (the 1st, or any Monday).
    assert_eq!(
        next_of("0 0 1 * mon", "2016-05-19T00:00:00Z").as_deref(),
        Some("2016-05-23T00:00:00Z")
    );
    // A starred day of week (even `*/1`) ANDs: only the 1st.
    assert_eq!(
        next_of("0 0 1 * */1", "2016-05-19T00:00:00Z").as_deref(),
        Some("2016-06-01T00:00:00Z")
    );
    // Descriptors.
    assert_eq!(
        next_of("@midnight", "2016-05-19T10:00:00Z").as_deref(),
        Some("2016-05-20T00:00:00Z")
    );
    assert_eq!(
        next_of("@weekly", "2016-05-19T10:00:00Z").as_deref(),
        Some("2016-05-22T00:00:00Z")
    );
    assert_eq!(
        next_of("@every 90s", "2016-05-19T10:00:00.7Z").as_deref(),
        Some("2016-05-19T10:01:30Z")
    );
    assert_eq!(
        next_of("@every 100ms", "2016-05-19T10:00:00Z").as_deref(),
        Some("2016-05-19T10:00:01Z")
    );
    // Never: the 31st of February, an empty field.
    assert_eq!(next_of("59 23 31 2 *", "2016-05-19T10:00:00Z"), None);
    assert_eq!(next_of(", * * * *", "2016-05-19T10:00:00Z"), None);
    // Leap days are within robfig's five years.
    assert_eq!(
        next_of("0 0 29 2 *", "2017-01-01T00:00:00Z").as_deref(),
        Some("2020-02-29T00:00:00Z")
    );
}

#[test]
fn a_zone_prefix_moves_the_fields_into_the_zone() {
    // 03:00 in Paris (CEST, UTC+2) is 01:00 UTC.
    assert_eq!(
        next_of("TZ=Europe/Paris 0 3 * * *", "2016-05-19T10:00:00Z").as_deref(),
        Some("2016-05-20T01:00:00Z")
    );
    assert_eq!(
        next_of("CRON_TZ=America/New_York 0 9 * * *", "2016-01-19T10:00:00Z").as_deref(),
        Some("2016-01-19T14:00:00Z")
    );
}

#[test]
fn time_zones_as_go_loads_them() {
    for name in [
        "",
        "UTC",
        "Local",
        "Europe/Paris",
        "America/Argentina/Buenos_Aires",
        "Etc/GMT+5",
        "EST5EDT",
    ] {
        load_location(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert_eq!(
        load_location("Mars/Olympus").unwrap_err(),
        "unknown time zone Mars/Olympus"
    );
    // Go reads the file of that exact name.
    assert_eq!(
        load_location("europe/paris").unwrap_err(),
        "unknown time zone europe/paris"
    );
    assert_eq!(load_location("a..b").unwrap_err(), "time: invalid location name");
}

#[test]
fn time_zone_validation_messages() {
    assert!(validate_time_zone("Europe/Berlin").is_empty());
    assert!(validate_time_zone("UTC").is_empty());
    assert_eq!(
        validate_time_zone(""),
        ["timeZone must be nil or non-empty string"]
    );
    assert_eq!(
        validate_time_zone("Mars/Olympus"),
        ["unknown time zone Mars/Olympus"]
    );
    assert_eq!(
        validate_time_zone("../etc/passwd"),
        ["unknown time zone ../etc/passwd"]
    );
    assert_eq!(
        validate_time_zone("Europe/-Paris"),
        ["unknown time zone Europe/-Paris"]
    );
    assert_eq!(
        validate_time_zone("America/Very_Long_Name_Here"),
        ["unknown time zone America/Very_Long_Name_Here"]
    );
    assert_eq!(
        validate_time_zone("Europe/Paris "),
        ["unknown time zone Europe/Paris "]
    );
    assert_eq!(
        validate_time_zone("Local"),
        ["timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"]
    );
    assert_eq!(
        validate_time_zone("local"),
        [
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            "unknown time zone local",
        ]
    );
}

#[test]
fn schedule_validation_messages() {
    assert!(validate_schedule_format("*/5 * * * *", false, true).is_empty());
    assert_eq!(
        validate_schedule_format("TZ=UTC * * * * * *", false, false),
        [
            "expected exactly 5 fields, found 6: [* * * * * *]",
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ]
    );
    assert_eq!(
        validate_schedule_format("CRON_TZ=UTC * * * * ?", false, false),
        ["cannot use TZ or CRON_TZ in schedule, use timeZone field instead"]
    );
    assert_eq!(
        validate_schedule_format("TZ=UTC 0 * * * *", true, true),
        ["cannot use both timeZone field and TZ or CRON_TZ in schedule"]
    );
    assert!(validate_schedule_format("TZ=UTC 0 * * * *", true, false).is_empty());
}

#[test]
fn go_durations() {
    assert_eq!(parse_go_duration("1h30m"), Ok(5_400_000_000_000));
    assert_eq!(parse_go_duration("1.5s"), Ok(1_500_000_000));
    assert_eq!(parse_go_duration("-2m"), Ok(-120_000_000_000));
    assert_eq!(parse_go_duration("0"), Ok(0));
    assert_eq!(parse_go_duration("300µs"), Ok(300_000));
    assert_eq!(
        parse_go_duration(""),
        Err("time: invalid duration \"\"".to_string())
    );
    assert_eq!(
        parse_go_duration("."),
        Err("time: invalid duration \".\"".to_string())
    );
}

#[test]
fn bad_input_never_panics() {
    for spec in [
        "TZ=",
        "TZ=UTC",
        "CRON_TZ= ",
        "@every ",
        "@",
        "/ / / / /",
        "- - - - -",
        "99999999999999999999 * * * *",
        "*/99999999999999999999 * * * *",
    ] {
        let _ = Schedule::parse_standard(spec);
    }
}
