//! The CronJob controller: starts a CronJob's Job at each scheduled time, as its concurrency
//! policy allows, and keeps `status.active`, `lastScheduleTime`, `lastSuccessfulTime` and the
//! history limits true.
//!
//! Upstream: `pkg/controller/cronjob/`.
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers → handlers (change → keys; a new schedule → its next time) → queue; `impl Reconciler`; `run` | `cronjob_controllerv2.go`: `NewControllerV2`, `addJob`/`updateJob`/`deleteJob`, `updateCronJob`, `Run` |
//! | [`sync`] | one sync: read the caches → history cleanup → observe the Jobs → [`plan::decide`] → delete / create → status | `cronjob_controllerv2.go`: `sync`, `syncCronJob`, `cleanupFinishedJobs`, `deleteJob` |
//! | [`plan`] | pure: Jobs → status, the scheduling decision, the Job from the template, what the history limits drop | `cronjob_controllerv2.go`: `syncCronJob`, `removeOldestJobs`; `utils.go`: `getJobFromTemplate2`, `byJobStartTime` |
//! | [`schedule`] | pure: the due scheduled time, the missed-schedule approximation, the requeue delay, Job names | `utils.go`: `mostRecentScheduleTime`, `nextScheduleTime`, `nextScheduleTimeDuration`, `getJobName` |
//! | [`decisions`] | pure: the sentences the sync records in the causal journal (the Job started, a run skipped, Replace, the history cleanup) | `cronjob_controllerv2.go`: `syncCronJob`, `cleanupFinishedJobs` |
//! | `properties.rs` | property tests: the approximation is exact for regular schedules; the requeue lands after the next activation | (none) |
//! | `tests/` | `controller.rs` against a real API on paused time; `schedule.rs`, `plan.rs` tables (`controllers/testdata/cronjob_schedule.json`) | `cronjob_controllerv2_test.go`, `utils_test.go` |
//!
//! Schedules are parsed and evaluated by [`apiserver::kinds::batch::cron`] (robfig/cron's
//! `ParseStandard` dialect on `croner`, zones from jiff's tz database), the module the API
//! server validates `spec.schedule` and `spec.timeZone` with. Only [`controller`] and [`sync`]
//! perform IO; `now` is read once per sync with [`crate::runtime::clock_now`].
//!
//! A Job made by hand from the CronJob (`kubectl create job x --from=cronjob/y`) carries a
//! controller reference to it but no schedule: the sync sees it as an unlisted running Job
//! (`UnexpectedJob`), never starts or counts it as a scheduled run, and its history limits and
//! `lastSuccessfulTime` count it once it finishes, as upstream.
//!
//! Where to start reading: [`sync::CronJobSync::sync_cronjob`], then [`plan::decide`] and
//! [`schedule::most_recent_schedule_time`].

pub mod controller;
pub mod decisions;
pub mod plan;
pub mod schedule;
pub mod sync;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
