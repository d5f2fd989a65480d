//! Property tests of the schedule arithmetic against the guarantees the controller relies on.
//!
//! For a regular schedule (a fixed gap between activations) upstream's missed-schedule
//! approximation is exact; these tests compare it with a plain walk over every activation:
//!
//! * the most recent scheduled time at or before `now` is the walk's last one;
//! * the missed count falls in the walk's category (none below two, many above a hundred);
//! * the requeue lands 100 ms after the walk's first activation after `now`, never before `now`;
//! * Job names are unique per scheduled minute.
//!
//! Irregular schedules are left out on purpose: there the approximation can skip a run (see
//! [`super::schedule`]), as upstream's does.

use std::time::Duration;

use apiserver::kinds::batch::cron::Schedule;
use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

use super::schedule::{
    MANY_MISSED, MissedSchedules, NEXT_SCHEDULE_DELTA, ScheduleState, get_job_name,
    most_recent_schedule_time, next_schedule_time_duration,
};

/// Regular schedules: every k minutes (k divides 60), hourly at m, daily at h:m, `@every`.
fn regular_schedule() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![1u32, 2, 3, 5, 10, 15, 20, 30]).prop_map(|k| format!("*/{k} * * * *")),
        (0u32..60).prop_map(|m| format!("{m} * * * *")),
        (0u32..60, 0u32..24).prop_map(|(m, h)| format!("{m} {h} * * *")),
        (1u32..600).prop_map(|s| format!("@every {s}s")),
    ]
}

/// Every activation in (earliest, now]: how many, the last, and the first after now.
fn walk(schedule: &Schedule, earliest: Timestamp, now: Timestamp) -> (usize, Option<Timestamp>, Timestamp) {
    let mut count = 0;
    let mut last = None;
    let mut t = schedule.next(earliest).unwrap();
    while t <= now {
        count += 1;
        last = Some(t);
        t = schedule.next(t).unwrap();
    }
    (count, last, t)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_approximation_is_exact_for_regular_schedules(
        spec in regular_schedule(),
        created in 1_400_000_000i64..1_900_000_000,
        created_nanos in 0i32..1_000_000_000,
        elapsed in 0i64..3 * 86_400,
        elapsed_nanos in 0i32..1_000_000_000,
    ) {
        let schedule = Schedule::parse_standard(&spec).unwrap();
        let creation = Timestamp::new(created, created_nanos).unwrap();
        let now = creation + SignedDuration::new(elapsed, elapsed_nanos);
        let state = ScheduleState { creation, last_schedule_time: None, starting_deadline_seconds: None };
        let found = most_recent_schedule_time(&state, now, &schedule, false).unwrap();
        let (count, last, next) = walk(&schedule, creation, now);
        prop_assert_eq!(found.most_recent, last, "{} from {} to {}", spec, creation, now);
        let missed = match count {
            0 | 1 => MissedSchedules::None,
            n if n as i64 > MANY_MISSED => MissedSchedules::Many,
            _ => MissedSchedules::Few,
        };
        prop_assert_eq!(found.missed, missed, "{} activations", count);

        let after = next_schedule_time_duration(&state, now, &schedule).unwrap();
        let until = Duration::try_from(next.duration_since(now)).unwrap();
        prop_assert_eq!(after, until + NEXT_SCHEDULE_DELTA);
        prop_assert!(after > NEXT_SCHEDULE_DELTA);
    }

    #[test]
    fn job_names_differ_per_scheduled_minute(a in 0i64..4_000_000_000, b in 0i64..4_000_000_000) {
        let (ta, tb) = (Timestamp::from_second(a).unwrap(), Timestamp::from_second(b).unwrap());
        prop_assert_eq!(get_job_name("x", ta) == get_job_name("x", tb), a / 60 == b / 60);
    }
}
