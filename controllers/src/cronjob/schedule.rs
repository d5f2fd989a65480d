//! Schedule arithmetic: which scheduled time is due now, and how long until the next one.
//!
//! Upstream: `pkg/controller/cronjob/utils.go` (`mostRecentScheduleTime`, `nextScheduleTime`,
//! `nextScheduleTimeDuration`, `getJobName` / `getTimeHashInMinutes`) and `formatSchedule` of
//! `cronjob_controllerv2.go`. The schedule itself (robfig/cron's dialect, evaluated by croner) is
//! [`apiserver::kinds::batch::cron`], the module the API server validates with.
//!
//! Pure: the times come in as arguments; nothing here reads a clock.
//!
//! ## The missed-schedule approximation
//!
//! A controller that was down (or a CronJob whose status was lost) may find many scheduled
//! times between its last run and now; it starts only the most recent one. Rather than walking
//! every activation from the last run, upstream estimates how many were missed from the gap
//! between the first two activations, jumps close to `now`, and walks from there:
//!
//! ```text
//! earliest = lastScheduleTime ?? creationTimestamp   (moved up to now − startingDeadlineSeconds)
//! t1 = next(earliest), t2 = next(t1)
//! gap = round(t2 − t1) in seconds;  missed = floor((now − t1) / gap) + 1
//! walk from next(t1 + (missed − 2) · gap) while ≤ now → the most recent time
//! ```
//!
//! For a regular schedule the walk takes a step or two. For an irregular one it can jump past
//! the run it should have found. Worked example (`30 10,11,12 * * 1-5`, last run Thursday
//! 10:30, now Friday 16:30): t1 = Thu 11:30, t2 = Thu 12:30, gap = 1 h, missed = 30, so the walk
//! starts after Thu 11:30 + 28 h = Fri 15:30; the next activation is Monday 10:30, after now,
//! and nothing is returned although Friday 12:30 was missed. Upstream's tests pin this, and so do
//! ours (`controllers/testdata/cronjob_schedule.json`).

use std::time::Duration;

use apiserver::kinds::batch::cron::{Schedule, load_location};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::CronJob;

/// Added to every requeue, so the sync lands just after the scheduled time (upstream
/// `nextScheduleDelta`).
pub const NEXT_SCHEDULE_DELTA: Duration = Duration::from_millis(100);

/// More missed start times than this give the `TooManyMissedTimes` warning.
pub const MANY_MISSED: i64 = 100;

/// How many scheduled times passed unstarted (upstream `missedSchedulesType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissedSchedules {
    /// None since the earliest time.
    None,
    /// Some, at most [`MANY_MISSED`].
    Few,
    /// More than [`MANY_MISSED`].
    Many,
}

/// What [`most_recent_schedule_time`] reads of a CronJob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleState {
    /// `metadata.creationTimestamp`.
    pub creation: Timestamp,
    /// `status.lastScheduleTime`.
    pub last_schedule_time: Option<Timestamp>,
    /// `spec.startingDeadlineSeconds`.
    pub starting_deadline_seconds: Option<i64>,
}

impl ScheduleState {
    /// The state of `cj` (a missing creation time reads as the Unix epoch).
    pub fn of(cj: &CronJob) -> Self {
        ScheduleState {
            creation: cj
                .metadata
                .creation_timestamp
                .as_ref()
                .map_or(Timestamp::UNIX_EPOCH, |t| t.0),
            last_schedule_time: cj
                .status
                .as_ref()
                .and_then(|s| s.last_schedule_time.as_ref())
                .map(|t| t.0),
            starting_deadline_seconds: cj.spec.as_ref().and_then(|s| s.starting_deadline_seconds),
        }
    }
}

/// The answer of [`most_recent_schedule_time`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MostRecent {
    /// Where the search started (last run, creation, or now − startingDeadlineSeconds).
    pub earliest: Timestamp,
    /// The most recent scheduled time at or before now, if the search found one.
    pub most_recent: Option<Timestamp>,
    /// How many were missed.
    pub missed: MissedSchedules,
}

/// A schedule that `Next` cannot step through (two activations less than a second apart, or
/// none at all, e.g. `59 23 31 2 *`).
pub const TOO_CLOSE: &str = "time difference between two schedules is less than 1 second";

/// Upstream `mostRecentScheduleTime` (see the module doc for the approximation).
pub fn most_recent_schedule_time(
    state: &ScheduleState,
    now: Timestamp,
    schedule: &Schedule,
    include_starting_deadline_seconds: bool,
) -> Result<MostRecent, String> {
    let mut earliest = state.last_schedule_time.unwrap_or(state.creation);
    if include_starting_deadline_seconds && let Some(sds) = state.starting_deadline_seconds {
        let deadline = now
            .saturating_sub(SignedDuration::from_secs(sds))
            .unwrap_or(Timestamp::MIN);
        if deadline > earliest {
            earliest = deadline;
        }
    }
    let found = |most_recent, missed| MostRecent {
        earliest,
        most_recent,
        missed,
    };
    let Some(t1) = schedule.next(earliest) else {
        return Err(TOO_CLOSE.to_string());
    };
    if now < t1 {
        return Ok(found(None, MissedSchedules::None));
    }
    let Some(t2) = schedule.next(t1) else {
        return Err(TOO_CLOSE.to_string());
    };
    if now < t2 {
        return Ok(found(Some(t1), MissedSchedules::None));
    }
    let gap = round_to_seconds(t2.duration_since(t1));
    if gap < 1 {
        return Err(TOO_CLOSE.to_string());
    }
    let elapsed = now.duration_since(t1).as_secs();
    let missed = elapsed / gap + 1;
    let back = (missed - 2).saturating_mul(gap);
    let mut most_recent = None;
    let mut t = t1
        .checked_add(SignedDuration::from_secs(back))
        .ok()
        .and_then(|start| schedule.next(start));
    while let Some(at) = t.filter(|at| *at <= now) {
        most_recent = Some(at);
        t = schedule.next(at);
    }
    let missed = if missed > MANY_MISSED {
        MissedSchedules::Many
    } else {
        MissedSchedules::Few
    };
    Ok(found(most_recent, missed))
}

/// Go's `Duration.Round(time.Second)` in whole seconds (halves away from zero).
fn round_to_seconds(d: SignedDuration) -> i64 {
    let secs = d.as_secs();
    let nanos = i64::from(d.subsec_nanos());
    if nanos >= 500_000_000 {
        secs + 1
    } else if nanos <= -500_000_000 {
        secs - 1
    } else {
        secs
    }
}

/// Upstream `nextScheduleTime`: the scheduled time to start now (if any), counting
/// `startingDeadlineSeconds`, and whether too many were missed (the caller's
/// `TooManyMissedTimes` warning).
pub fn next_schedule_time(
    state: &ScheduleState,
    now: Timestamp,
    schedule: &Schedule,
) -> Result<(Option<Timestamp>, bool), String> {
    let found = most_recent_schedule_time(state, now, schedule, true)?;
    match found.most_recent {
        Some(t) if t <= now => Ok((Some(t), found.missed == MissedSchedules::Many)),
        _ => Ok((None, false)),
    }
}

/// Upstream `nextScheduleTimeDuration`: how long until the sync after the next scheduled time
/// (plus [`NEXT_SCHEDULE_DELTA`]). `None` when the schedule has no next time at all.
pub fn next_schedule_time_duration(
    state: &ScheduleState,
    now: Timestamp,
    schedule: &Schedule,
) -> Option<Duration> {
    let base = match most_recent_schedule_time(state, now, schedule, false) {
        Err(_) => now,
        Ok(MostRecent {
            most_recent: Some(t), ..
        }) => t,
        Ok(MostRecent {
            earliest,
            missed: MissedSchedules::None,
            ..
        }) => earliest,
        Ok(_) => now,
    };
    let next = schedule.next(base)?;
    let until = Duration::try_from(next.duration_since(now)).unwrap_or(Duration::ZERO);
    Some(until + NEXT_SCHEDULE_DELTA)
}

/// Upstream `formatSchedule`: the schedule with the CronJob's zone as a `TZ=` prefix. A
/// schedule that names a zone itself is used as it is (the second value is then true: the
/// caller's `UnsupportedSchedule` warning); a zone that does not load is left out (the sync
/// has already stopped with `UnknownTimeZone`).
pub fn format_schedule(schedule: &str, time_zone: Option<&str>) -> (String, bool) {
    if schedule.contains("TZ") {
        return (schedule.to_string(), true);
    }
    match time_zone {
        Some(tz) if load_location(tz).is_ok() => (format!("TZ={tz} {schedule}"), false),
        _ => (schedule.to_string(), false),
    }
}

/// The CronJob's parsed schedule (with its zone), or robfig's parse error; and whether the
/// schedule carries its own `TZ` (the `UnsupportedSchedule` warning).
pub fn schedule_of(cj: &CronJob) -> (Result<Schedule, String>, bool) {
    let spec = cj.spec.as_ref();
    let schedule = spec.map_or("", |s| s.schedule.as_str());
    let zone = spec.and_then(|s| s.time_zone.as_deref());
    let (formatted, unsupported) = format_schedule(schedule, zone);
    (Schedule::parse_standard(&formatted), unsupported)
}

/// Upstream `getJobName`: `<cronjob>-<scheduled time in Unix minutes>`, the same name for the
/// same scheduled time, so a run is never created twice.
pub fn get_job_name(cronjob_name: &str, scheduled: Timestamp) -> String {
    format!("{cronjob_name}-{}", get_time_hash_in_minutes(scheduled))
}

/// Upstream `getTimeHashInMinutes`: Unix seconds / 60.
pub fn get_time_hash_in_minutes(scheduled: Timestamp) -> i64 {
    scheduled.as_second() / 60
}
