//! The sentences a Job sync records in the causal journal: what `manageJob` creates or deletes and
//! why, the pod failure backoff it waits for, and the conclusion that finishes the Job.
//!
//! Upstream: `job_controller.go` (`manageJob`, `syncJob`, `pastBackoffLimitOnFailure`,
//! `pastActiveDeadline`) and `backoff_utils.go`. Upstream logs the counts at `-v=4` ("Too few
//! pods running") without the arithmetic of `wantActive`.
//!
//! The message functions take plain values and are tested by their exact sentences; the
//! functions over a [`SyncJobCtx`] pick the values, reading nothing the plan did not read.

use std::time::Duration;

use k8s_openapi::api::batch::v1::{Job, JobCondition};

use super::plan::{ManagePlan, SyncJobCtx, want_active};
use super::util::{
    COMPLETE, REASON_BACKOFF_LIMIT_EXCEEDED, REASON_DEADLINE_EXCEEDED, backoff_limit, completions,
    job_suspended, only_replace_failed_pods, parallelism, past_backoff_limit_on_failure, spec,
};
use crate::runtime::name_of;

pub use crate::runtime::Decision;
use crate::runtime::decision;

/// The counts a `manageJob` decision starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Active pods.
    pub active: i32,
    /// Succeeded pods.
    pub succeeded: i32,
    /// `spec.completions` (`None`: a work queue Job).
    pub completions: Option<i32>,
    /// `spec.parallelism`.
    pub parallelism: i32,
    /// Terminating pods that hold back replacements (`podReplacementPolicy: Failed`), else 0.
    pub terminating: i32,
}

impl Counts {
    /// `active 1, succeeded 2, completions 5, parallelism 2`.
    fn text(&self) -> String {
        let completions = self.completions.map_or("unset".to_owned(), |c| c.to_string());
        format!(
            "active {}, succeeded {}, completions {completions}, parallelism {}",
            self.active, self.succeeded, self.parallelism
        )
    }

    /// Upstream `wantActive`, with the arithmetic.
    fn want_active_text(&self, want: i32) -> String {
        match self.completions {
            Some(c) => format!(
                "wantActive = min(parallelism {}, completions {c} − succeeded {}) = {want}",
                self.parallelism, self.succeeded
            ),
            None if self.succeeded > 0 => {
                format!("wantActive = active {want}: no completions set and a pod succeeded, so no new pods")
            }
            None => format!("wantActive = parallelism {want}: no completions set"),
        }
    }
}

/// `manageJob` creating `count` pods (`indexes` for an Indexed Job).
pub fn creating(counts: &Counts, want: i32, count: usize, indexes: &[i64]) -> Decision {
    let terminating = match counts.terminating {
        0 => String::new(),
        t => format!(" − terminating {t}"),
    };
    let diff = want - counts.terminating - counts.active;
    let indexes = match indexes {
        [] => String::new(),
        list => {
            let list: Vec<String> = list.iter().map(ToString::to_string).collect();
            format!(", completion indexes {}", list.join(", "))
        }
    };
    decision(
        "manageJob",
        format!(
            "{}: creating {count} ({}, diff = {want}{terminating} − active {} = +{diff}{indexes})",
            counts.text(),
            counts.want_active_text(want),
            counts.active
        ),
    )
}

/// `manageJob` deleting pods beyond `wantActive`.
pub fn deleting_extra(counts: &Counts, want: i32, pods: &[String]) -> Decision {
    decision(
        "manageJob",
        format!(
            "{}: deleting {} ({}; active {} > wantActive {want}): {}",
            counts.text(),
            pods.len(),
            counts.want_active_text(want),
            counts.active,
            pods.join(", ")
        ),
    )
}

/// `manageJob` deleting every active pod of a suspended Job.
pub fn deleting_suspended(pods: &[String]) -> Decision {
    decision(
        "manageJob",
        format!(
            "spec.suspend is true: deleting the {} active pods: {}",
            pods.len(),
            pods.join(", ")
        ),
    )
}

/// `manageJob` holding creations back while the pod failure backoff runs.
pub fn backing_off(counts: &Counts, want: i32, failures: i32, wait: Duration) -> Decision {
    decision(
        "manageJob",
        format!(
            "{}: {} pods missing, but {failures} pods failed after the last success: pod failure backoff \
             (10s doubling per failure, at most 10m), creating again after {}s",
            counts.text(),
            want - counts.terminating - counts.active,
            wait.as_secs()
        ),
    )
}

/// `syncJob` deleting the active pods of a Job that has just finished.
pub fn deleting_finished(reason: &str, pods: &[String]) -> Decision {
    decision(
        "syncJob",
        format!(
            "job finishing ({reason}): deleting its {} active pods: {}",
            pods.len(),
            pods.join(", ")
        ),
    )
}

/// `failed > backoffLimit`: the Job failed.
pub fn backoff_limit_exceeded(failed: i32, limit: i32) -> Decision {
    decision(
        "syncJob",
        format!("failed {failed} > backoffLimit {limit}: job failed (BackoffLimitExceeded)"),
    )
}

/// `pastBackoffLimitOnFailure`: container restarts of an `OnFailure` Job reached the limit.
pub fn restarts_exceeded(limit: i32) -> Decision {
    decision(
        "pastBackoffLimitOnFailure",
        format!(
            "restartPolicy OnFailure: the container restarts of the running and pending pods reached \
             backoffLimit {limit}: job failed (BackoffLimitExceeded)"
        ),
    )
}

/// `pastActiveDeadline`: `activeDeadlineSeconds` passed since `startTime`.
pub fn deadline_exceeded(deadline_seconds: i64) -> Decision {
    decision(
        "pastActiveDeadline",
        format!(
            "activeDeadlineSeconds {deadline_seconds} have passed since startTime: job failed (DeadlineExceeded)"
        ),
    )
}

/// The Job completed: enough pods succeeded (or the success policy matched).
pub fn completed(succeeded: i32, completions: Option<i32>, reason: &str) -> Decision {
    let numbers = match completions {
        Some(c) => format!("succeeded {succeeded} ≥ completions {c}"),
        None => format!("succeeded {succeeded}, no completions set"),
    };
    decision(
        "syncJob",
        format!("{numbers} and no pod is active: job complete ({reason})"),
    )
}

/// Any other failure (pod failure policy, failed indexes), with upstream's reason and message.
pub fn failed_other(reason: &str, message: &str) -> Decision {
    decision("syncJob", format!("job failed ({reason}): {message}"))
}

/// The counts of `ctx`, as `manageJob` sees them.
pub fn counts_of(ctx: &SyncJobCtx) -> Counts {
    let job = &ctx.job;
    Counts {
        active: i32::try_from(ctx.active_pods.len()).unwrap_or(i32::MAX),
        succeeded: ctx.succeeded,
        completions: completions(job),
        parallelism: parallelism(job),
        terminating: if only_replace_failed_pods(job) {
            ctx.terminating
        } else {
            0
        },
    }
}

fn pod_names<'a>(pods: impl IntoIterator<Item = &'a k8s_openapi::api::core::v1::Pod>) -> Vec<String> {
    pods.into_iter()
        .map(|p| name_of(&p.metadata).to_owned())
        .collect()
}

/// The `manageJob` decision of `plan`; none when it does nothing.
pub fn manage(ctx: &SyncJobCtx, plan: &ManagePlan) -> Option<Decision> {
    let counts = counts_of(ctx);
    let want = want_active(&ctx.job, counts.succeeded, counts.active);
    match plan {
        ManagePlan::Nothing => None,
        ManagePlan::Delete(pods) if job_suspended(&ctx.job) => {
            Some(deleting_suspended(&pod_names(pods.iter().map(AsRef::as_ref))))
        }
        ManagePlan::Delete(pods) => Some(deleting_extra(
            &counts,
            want,
            &pod_names(pods.iter().map(AsRef::as_ref)),
        )),
        ManagePlan::Backoff(wait) => Some(backing_off(
            &counts,
            want,
            ctx.new_backoff_record.failures_after_last_success,
            *wait,
        )),
        ManagePlan::Create(pods) => {
            let indexes: Vec<i64> = pods.iter().filter_map(super::indexed::completion_index).collect();
            Some(creating(&counts, want, pods.len(), &indexes))
        }
    }
}

/// The conclusion that finished the Job, from its final condition.
pub fn finished(ctx: &SyncJobCtx, condition: &JobCondition) -> Decision {
    let job: &Job = &ctx.job;
    let reason = condition.reason.as_deref().unwrap_or("");
    if condition.type_ == COMPLETE {
        return completed(ctx.succeeded, completions(job), reason);
    }
    match reason {
        REASON_BACKOFF_LIMIT_EXCEEDED if ctx.failed > backoff_limit(job) => {
            backoff_limit_exceeded(ctx.failed, backoff_limit(job))
        }
        REASON_BACKOFF_LIMIT_EXCEEDED
            if past_backoff_limit_on_failure(job, ctx.pods.iter().map(AsRef::as_ref)) =>
        {
            restarts_exceeded(backoff_limit(job))
        }
        REASON_DEADLINE_EXCEEDED => deadline_exceeded(spec(job).active_deadline_seconds.unwrap_or(0)),
        _ => failed_other(reason, condition.message.as_deref().unwrap_or("")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(active: i32, succeeded: i32, completions: Option<i32>, parallelism: i32) -> Counts {
        Counts {
            active,
            succeeded,
            completions,
            parallelism,
            terminating: 0,
        }
    }

    #[test]
    fn creating_gives_the_want_active_arithmetic() {
        let d = creating(&counts(1, 2, Some(5), 2), 2, 1, &[]);
        assert_eq!(d.function, "manageJob");
        assert_eq!(
            d.message,
            "active 1, succeeded 2, completions 5, parallelism 2: creating 1 \
             (wantActive = min(parallelism 2, completions 5 − succeeded 2) = 2, diff = 2 − active 1 = +1)"
        );
        let mut c = counts(0, 0, None, 3);
        c.terminating = 1;
        assert_eq!(
            creating(&c, 3, 2, &[0, 2]).message,
            "active 0, succeeded 0, completions unset, parallelism 3: creating 2 \
             (wantActive = parallelism 3: no completions set, diff = 3 − terminating 1 − active 0 = +2, completion indexes 0, 2)"
        );
    }

    #[test]
    fn deleting_names_the_pods() {
        assert_eq!(
            deleting_extra(&counts(3, 4, Some(5), 3), 1, &["pi-a".into(), "pi-b".into()]).message,
            "active 3, succeeded 4, completions 5, parallelism 3: deleting 2 \
             (wantActive = min(parallelism 3, completions 5 − succeeded 4) = 1; active 3 > wantActive 1): pi-a, pi-b"
        );
        assert_eq!(
            deleting_suspended(&["pi-a".into()]).message,
            "spec.suspend is true: deleting the 1 active pods: pi-a"
        );
        assert_eq!(
            deleting_finished("BackoffLimitExceeded", &["pi-a".into()]).message,
            "job finishing (BackoffLimitExceeded): deleting its 1 active pods: pi-a"
        );
    }

    #[test]
    fn backoff_gives_the_delay() {
        let d = backing_off(&counts(0, 0, Some(1), 1), 1, 2, Duration::from_secs(20));
        assert_eq!(
            d.message,
            "active 0, succeeded 0, completions 1, parallelism 1: 1 pods missing, but 2 pods failed after the last \
             success: pod failure backoff (10s doubling per failure, at most 10m), creating again after 20s"
        );
    }

    #[test]
    fn conclusions() {
        assert_eq!(
            backoff_limit_exceeded(7, 6).message,
            "failed 7 > backoffLimit 6: job failed (BackoffLimitExceeded)"
        );
        assert_eq!(restarts_exceeded(2).function, "pastBackoffLimitOnFailure");
        assert_eq!(
            deadline_exceeded(30).message,
            "activeDeadlineSeconds 30 have passed since startTime: job failed (DeadlineExceeded)"
        );
        assert_eq!(deadline_exceeded(30).function, "pastActiveDeadline");
        assert_eq!(
            completed(3, Some(3), "CompletionsReached").message,
            "succeeded 3 ≥ completions 3 and no pod is active: job complete (CompletionsReached)"
        );
        assert_eq!(
            failed_other("PodFailurePolicy", "Container main failed").message,
            "job failed (PodFailurePolicy): Container main failed"
        );
    }
}

/// [`manage`] and [`finished`] over real contexts and plans.
#[cfg(test)]
mod ctx_tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::job::backoff::BackoffRecord;
    use crate::job::plan::{evaluate_finish, manage_job, new_sync_ctx};
    use crate::job::tests::fixtures::{JobFixture, PodFixture, at, t0};

    fn ctx(
        job: JobFixture,
        pods: Vec<PodFixture>,
        previous: Option<BackoffRecord>,
        now: jiff::Timestamp,
    ) -> SyncJobCtx {
        let pods: Vec<Arc<_>> = pods.into_iter().map(PodFixture::arc).collect();
        let mut c = new_sync_ctx(&job.build(), pods, HashSet::new(), previous, now);
        evaluate_finish(&mut c, now);
        c
    }

    fn manage_message(c: &SyncJobCtx, now: jiff::Timestamp) -> Option<String> {
        let plan = manage_job(c, now).expect("plans");
        manage(c, &plan).map(|d| format!("{}: {}", d.function, d.message))
    }

    #[test]
    fn a_new_job_creates_parallelism_pods() {
        let c = ctx(JobFixture::new(Some(5), 2), vec![], None, t0());
        assert_eq!(
            manage_message(&c, t0()).as_deref(),
            Some(
                "manageJob: active 0, succeeded 0, completions 5, parallelism 2: creating 2 \
                 (wantActive = min(parallelism 2, completions 5 − succeeded 0) = 2, diff = 2 − active 0 = +2)"
            )
        );
    }

    #[test]
    fn enough_active_pods_decide_nothing() {
        let pods = vec![PodFixture::new("a"), PodFixture::new("b")];
        let c = ctx(JobFixture::new(Some(5), 2), pods, None, t0());
        assert_eq!(manage_message(&c, t0()), None);
    }

    #[test]
    fn a_failure_backoff_holds_creations_back() {
        let pods = vec![
            PodFixture::new("f0").failed(1, at(0)).counted(),
            PodFixture::new("f1").failed(1, at(20)),
        ];
        let previous = BackoffRecord {
            failures_after_last_success: 1,
            last_failure_time: Some(at(0)),
        };
        let job = JobFixture::new(Some(1), 1)
            .backoff_limit(2)
            .status(json!({"failed": 1}))
            .started(t0());
        let c = ctx(job, pods, Some(previous), at(25));
        assert_eq!(
            manage_message(&c, at(25)).as_deref(),
            Some(
                "manageJob: active 0, succeeded 0, completions 1, parallelism 1: 1 pods missing, but 2 pods failed \
                 after the last success: pod failure backoff (10s doubling per failure, at most 10m), creating again after 15s"
            )
        );
    }

    #[test]
    fn the_backoff_limit_fails_the_job() {
        let pods = vec![
            PodFixture::new("f0").failed(1, at(0)),
            PodFixture::new("f1").failed(1, at(1)),
        ];
        let job = JobFixture::new(Some(3), 1).backoff_limit(1).started(t0());
        let c = ctx(job, pods, None, at(2));
        let condition = c.finished_condition.clone().expect("finished");
        assert_eq!(
            finished(&c, &condition).message,
            "failed 2 > backoffLimit 1: job failed (BackoffLimitExceeded)"
        );
    }

    #[test]
    fn the_deadline_fails_the_job() {
        let job = JobFixture::new(Some(3), 1).deadline(10).started(t0());
        let c = ctx(job, vec![PodFixture::new("a")], None, at(11));
        let condition = c.finished_condition.clone().expect("finished");
        let d = finished(&c, &condition);
        assert_eq!(d.function, "pastActiveDeadline");
        assert_eq!(
            d.message,
            "activeDeadlineSeconds 10 have passed since startTime: job failed (DeadlineExceeded)"
        );
    }
}
