//! When a finished Job expires, pure.
//!
//! Upstream: `pkg/controller/ttlafterfinished/ttlafterfinished_controller.go` (`needsCleanup`,
//! `jobFinishTime`, `getFinishAndExpireTime`, `timeLeft`, `processTTL`) and
//! `pkg/controller/job/util` (`IsJobFinished`).
//!
//! ```text
//! finish = lastTransitionTime of the True Complete/Failed condition   (missing → error)
//! expire = finish + ttlSecondsAfterFinished
//! expire − now > 0 → look again then;  ≤ 0 → delete
//! ```

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::Job;

use crate::runtime::name_of;

/// What [`process_ttl`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// No TTL, not finished, or already being deleted: nothing to do.
    NotApplicable,
    /// Expires after this long: look again then.
    Later(Duration),
    /// Expired at this time: delete.
    Expired(Timestamp),
}

/// Upstream `needsCleanup`: a TTL is set and the Job has finished.
pub fn needs_cleanup(job: &Job) -> bool {
    let ttl = job.spec.as_ref().and_then(|s| s.ttl_seconds_after_finished);
    ttl.is_some() && finish_condition_time(job).is_some()
}

/// The True `Complete` or `Failed` condition's `lastTransitionTime` (`Some(None)`: finished,
/// time unknown).
fn finish_condition_time(job: &Job) -> Option<Option<Timestamp>> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        .map(|c| c.last_transition_time.as_ref().map(|t| t.0))
}

/// Upstream `jobFinishTime`.
pub fn job_finish_time(job: &Job) -> Result<Timestamp, String> {
    let ns = job.metadata.namespace.as_deref().unwrap_or("");
    let name = name_of(&job.metadata);
    match finish_condition_time(job) {
        Some(Some(t)) => Ok(t),
        Some(None) => Err(format!(
            "unable to find the time when the Job {ns}/{name} finished"
        )),
        None => Err(format!(
            "unable to find the status of the finished Job {ns}/{name}"
        )),
    }
}

/// Upstream `timeLeft`: the time left until the Job expires (negative: past), and when it
/// expires.
pub fn time_left(job: &Job, now: Timestamp) -> Result<(SignedDuration, Timestamp), String> {
    let ttl = job.spec.as_ref().and_then(|s| s.ttl_seconds_after_finished);
    let Some(ttl) = ttl.filter(|_| needs_cleanup(job)) else {
        let ns = job.metadata.namespace.as_deref().unwrap_or("");
        return Err(format!(
            "job {ns}/{} should not be cleaned up",
            name_of(&job.metadata)
        ));
    };
    let finish = job_finish_time(job)?;
    if finish > now {
        tracing::info!(
            job = name_of(&job.metadata),
            "Found Job finished in the future; likely time skew, cleanup deferred"
        );
    }
    let expire = finish
        .checked_add(SignedDuration::from_secs(i64::from(ttl)))
        .map_err(|e| e.to_string())?;
    Ok((expire.duration_since(now), expire))
}

/// Upstream `processTTL`: whether the Job is to be deleted now, later, or never.
pub fn process_ttl(job: &Job, now: Timestamp) -> Result<Ttl, String> {
    if job.metadata.deletion_timestamp.is_some() || !needs_cleanup(job) {
        return Ok(Ttl::NotApplicable);
    }
    let (left, expire) = time_left(job, now)?;
    if left <= SignedDuration::ZERO {
        return Ok(Ttl::Expired(expire));
    }
    Ok(Ttl::Later(Duration::try_from(left).unwrap_or(Duration::ZERO)))
}
