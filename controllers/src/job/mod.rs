//! The Job controller: runs a Job's pods until `completions` of them succeed, or the Job fails
//! (`backoffLimit`, `activeDeadlineSeconds`, a pod failure policy), counting every finished pod
//! exactly once.
//!
//! Upstream: `pkg/controller/job/` as of Kubernetes 1.33. Laid out as every controller here (see the
//! ReplicaSet controller for the same files):
//!
//! | file | role | upstream |
//! | --- | --- | --- |
//! | [`controller`] | informers → handlers (change → work items, expectations) → queue; `impl Reconciler`; `run` | `job_controller.go`: `NewController`, the `add*`/`update*`/`delete*` handlers, `Run` |
//! | [`sync`] | one sync: read the caches → claim the pods → [`plan`] → create / delete → [`tracking`] → status; orphan pods | `job_controller.go`: `syncJob`, `manageJob`'s writes, `trackJobStatusAndRemoveFinalizers`, `syncOrphanPod` |
//! | [`plan`] | pure: counts, the finish checks, what `manageJob` creates or deletes, completion and suspend | `job_controller.go`: `syncJob`, `manageJob`, `activePodsForRemoval` |
//! | [`tracking`] | pure: uncounted pods → finalizer removal → counters; the final condition; finalizer expectations | `tracking_utils.go`; `job_controller.go`: `trackJobStatusAndRemoveFinalizers`, `enactJobFinished` |
//! | [`backoff`] | pure: the pod-failure backoff (10 s doubling to 10 min) and pod finish times | `backoff_utils.go` |
//! | [`pod_failure_policy`] | pure: matching a failed pod against `podFailurePolicy` | `pod_failure_policy.go` |
//! | [`indexed`] | pure: completion indexes, interval strings, per-index failures, pod names | `indexed_job_utils.go` |
//! | [`success_policy`] | pure: `successPolicy` of Indexed Jobs | `success_policy.go` |
//! | [`decisions`] | pure: the sentences the sync records in the causal journal (`manageJob`'s `wantActive` arithmetic, the backoff wait, the conclusion) | `job_controller.go`: `manageJob`, `syncJob`, `pastBackoffLimitOnFailure`, `pastActiveDeadline` |
//! | [`util`] | pure: spec defaults, conditions, reasons and messages, when a pod counts as failed | `job_controller.go` helpers, `util/utils.go` |
//! | `tests/` | `controller.rs` against a real API (paused time); table tests of the pure files; `fixtures.rs` | `job_controller_test.go`, `backoff_utils_test.go`, ... |
//! | `properties.rs` | property tests: parallelism, completions, no double counting | — |
//!
//! Only [`controller`] and [`sync`] perform IO; the rest reads no clock (`now` is a parameter, read
//! once per sync with [`crate::runtime::clock_now`]). Pod ranking, slow start and pods from templates
//! are [`crate::controller_utils`]; adoption and release are [`crate::controller_ref_manager`].
//!
//! What it writes, as Kubernetes 1.33 does: pods `<job>-<random>` (Indexed: `<job>-<index>-<random>`
//! with the `batch.kubernetes.io/job-completion-index` annotation and label, `JOB_COMPLETION_INDEX`
//! and hostname `<job>-<index>`), each with the `batch.kubernetes.io/job-tracking` finalizer; status
//! `active`, `ready`, `terminating`, `succeeded`, `failed`, `completedIndexes`, `failedIndexes`,
//! `uncountedTerminatedPods`, `startTime`, `completionTime`; conditions `SuccessCriteriaMet` then
//! `Complete` (reason `CompletionsReached`, or `SuccessPolicy`), `FailureTarget` then `Failed`
//! (`BackoffLimitExceeded`, `DeadlineExceeded`, `PodFailurePolicy`, `MaxFailedIndexesExceeded`,
//! `FailedIndexes`), `Suspended`; events `SuccessfulCreate`, `SuccessfulDelete`, `Completed`,
//! `Suspended`, `Resumed`, and the failure reason as a Warning.
//!
//! Where to start reading: [`sync::JobSync::sync_job`], then [`plan::evaluate_finish`],
//! [`plan::manage_job`] and [`tracking::plan_tracking`].

pub mod backoff;
pub mod controller;
pub mod decisions;
pub mod indexed;
pub mod plan;
pub mod pod_failure_policy;
pub mod success_policy;
pub mod sync;
pub mod tracking;
pub mod util;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
