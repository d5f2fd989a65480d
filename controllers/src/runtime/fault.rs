//! A fault layer for any [`Client`]: a seeded fraction of writes fails as
//! a loaded API server fails them, and the others arrive a little late.
//!
//! Upstream has no such layer in client-go; its controllers are tested
//! against fake clientsets with reactors that return errors
//! (`client-go/testing/fixture.go`, `PrependReactor`). This one wraps a
//! real client instead, so the whole control plane can run against it, as
//! the reliability suite does (`tests/reliability/converge.rs`).
//!
//! # What it injects
//!
//! Reads (get, list, watch) pass through untouched. Of the writes (create,
//! update, patch, delete and subresource creates such as a pod's binding),
//! a fraction [`Faults::write_failure`] fails, in one of these ways, drawn
//! evenly:
//!
//! | fault | the write | the caller sees |
//! | --- | --- | --- |
//! | [`Fault::InternalError`] | not applied | 500 `InternalError` |
//! | [`Fault::Conflict`] (update and patch only; others get `InternalError`) | not applied | 409 `Conflict`, as for a stale resourceVersion |
//! | [`Fault::TimeoutAfterApply`] | **applied** | 504 `Timeout`: the answer was lost, as when a client's deadline expires after the server committed |
//!
//! Every other write is delayed, with probability one half, by up to
//! [`Faults::max_delay`] on the injected [`Clock`] (so on paused tokio time
//! the delay costs no real time).
//!
//! # Guarantees
//!
//! - One seed, one sequence of decisions per client: a client's n-th write
//!   gets the same fault in every run (which write is n-th still depends
//!   on how the controllers' tasks interleave).
//! - The counts ([`FaultCounts`]) say how many writes got which fault, so a
//!   test can show that faults were really injected.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use store::Clock;

use super::client::{BoxFuture, Client, ClientError, ClientResult, ResourceRef};
use super::wrap::{Call, Verb, WrapClient, Written};

/// How often and how writes fail.
#[derive(Clone, Debug)]
pub struct Faults {
    /// Seeds the decisions.
    pub seed: u64,
    /// Fraction of writes that fail (0.1 = 10%).
    pub write_failure: f64,
    /// The longest delay of a write that does not fail (simulated time).
    pub max_delay: Duration,
}

impl Default for Faults {
    /// 10% of writes fail; others are delayed by up to 50 ms.
    fn default() -> Self {
        Faults {
            seed: 0,
            write_failure: 0.1,
            max_delay: Duration::from_millis(50),
        }
    }
}

/// What happened to one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Failed with 500 before it was applied.
    InternalError,
    /// Failed with 409 Conflict before it was applied.
    Conflict,
    /// Applied, then answered with 504 Timeout.
    TimeoutAfterApply,
}

/// How many writes got which fault, shared by every client that counts into it.
#[derive(Debug, Default)]
pub struct FaultCounts {
    /// Writes seen.
    pub writes: AtomicU64,
    /// Failed with 500 before applying.
    pub internal_errors: AtomicU64,
    /// Failed with 409 before applying.
    pub conflicts: AtomicU64,
    /// Applied, answered with 504.
    pub timeouts_after_apply: AtomicU64,
    /// Passed on after a delay.
    pub delayed: AtomicU64,
}

impl FaultCounts {
    /// Writes that failed, whichever way.
    pub fn failed(&self) -> u64 {
        self.internal_errors.load(Ordering::Relaxed)
            + self.conflicts.load(Ordering::Relaxed)
            + self.timeouts_after_apply.load(Ordering::Relaxed)
    }
}

/// What a write is, for choosing its fault.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Write {
    Create,
    Update,
    Delete,
}

/// The decision for one write: a fault, or a delay (possibly zero).
enum Decision {
    Fail(Fault),
    Delay(Duration),
}

/// A [`Client`] whose writes fail now and then; see the module docs.
pub struct FaultyClient<C: Client> {
    inner: C,
    clock: Clock,
    faults: Faults,
    /// The decisions; a std mutex, held only to draw (never across an await).
    rng: Mutex<ChaCha8Rng>,
    counts: Arc<FaultCounts>,
}

impl<C: Client> FaultyClient<C> {
    /// Wraps `inner`, counting into a new [`FaultCounts`].
    pub fn new(inner: C, clock: Clock, faults: Faults) -> Self {
        FaultyClient {
            inner,
            clock,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(faults.seed)),
            faults,
            counts: Arc::default(),
        }
    }

    /// Counts into `counts` (shared with other clients) instead.
    pub fn with_counts(mut self, counts: Arc<FaultCounts>) -> Self {
        self.counts = counts;
        self
    }

    /// What was injected so far.
    pub fn counts(&self) -> &Arc<FaultCounts> {
        &self.counts
    }

    fn decide(&self, write: Write) -> Decision {
        // A poisoned lock only means another draw panicked; the generator is still usable.
        let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
        self.counts.writes.fetch_add(1, Ordering::Relaxed);
        if rng.random_bool(self.faults.write_failure.clamp(0.0, 1.0)) {
            let fault = match rng.random_range(0..3) {
                0 => Fault::InternalError,
                1 if write == Write::Update => Fault::Conflict,
                1 => Fault::InternalError,
                _ => Fault::TimeoutAfterApply,
            };
            let counter = match fault {
                Fault::InternalError => &self.counts.internal_errors,
                Fault::Conflict => &self.counts.conflicts,
                Fault::TimeoutAfterApply => &self.counts.timeouts_after_apply,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            return Decision::Fail(fault);
        }
        if rng.random_bool(0.5) {
            self.counts.delayed.fetch_add(1, Ordering::Relaxed);
            let max = self.faults.max_delay.as_micros().max(1) as u64;
            return Decision::Delay(Duration::from_micros(rng.random_range(0..=max)));
        }
        Decision::Delay(Duration::ZERO)
    }

    /// Runs `call` (the write, already made of the inner client) under a
    /// decision drawn for it now.
    fn faulty<'a, T: Send + 'a>(
        &'a self,
        write: Write,
        what: String,
        call: BoxFuture<'a, ClientResult<T>>,
    ) -> BoxFuture<'a, ClientResult<T>> {
        let decision = self.decide(write);
        Box::pin(async move {
            match decision {
                Decision::Delay(d) => {
                    if !d.is_zero() {
                        self.clock.sleep(d).await;
                    }
                    call.await
                }
                Decision::Fail(Fault::InternalError) => Err(ClientError::new(
                    500,
                    "InternalError",
                    format!("Internal error occurred: injected fault before {what}"),
                )),
                Decision::Fail(Fault::Conflict) => Err(ClientError::new(
                    409,
                    "Conflict",
                    format!(
                        "Operation cannot be fulfilled on {what}: the object has been modified; please apply your changes to the latest version and try again (injected)"
                    ),
                )),
                Decision::Fail(Fault::TimeoutAfterApply) => {
                    // The write happens; only its answer is lost.
                    call.await?;
                    Err(ClientError::new(
                        504,
                        "Timeout",
                        format!("Timeout: the answer to {what} was lost after it was applied (injected)"),
                    ))
                }
            }
        })
    }
}

fn describe(verb: &str, r: &ResourceRef, ns: Option<&str>, name: &str) -> String {
    match ns {
        Some(ns) => format!("{verb} {} {ns}/{name}", r.plural),
        None => format!("{verb} {} {name}", r.plural),
    }
}

impl<C: Client> WrapClient for FaultyClient<C> {
    fn inner(&self) -> &dyn Client {
        &self.inner
    }

    /// Fails the write, delays it or passes it on; see the module docs.
    fn around_write<'a, T: Written + 'a>(
        &'a self,
        call: &Call<'_>,
        next: impl FnOnce() -> BoxFuture<'a, ClientResult<T>>,
    ) -> BoxFuture<'a, ClientResult<T>> {
        let (write, what) = match (call.verb, call.subresource) {
            (Verb::Create, Some(sub)) => (Write::Create, format!("create {sub} of")),
            (Verb::Create, None) => (Write::Create, "create".to_string()),
            (Verb::Update | Verb::Patch, _) => (Write::Update, call.verb.as_str().to_string()),
            (Verb::Delete, _) => (Write::Delete, "delete".to_string()),
            (Verb::Get | Verb::List | Verb::Watch, _) => return next(),
        };
        let what = describe(&what, call.resource, call.ns, call.name);
        self.faulty(write, what, next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::client::{InProcessClient, ListParams};
    use apiserver::testkit::TestApi;
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::Value;

    async fn api() -> apiserver::Api {
        TestApi::builder().build().await
    }

    fn cm(name: &str) -> Value {
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    }

    #[tokio::test(start_paused = true)]
    async fn a_tenth_of_writes_fail_and_a_timeout_still_applies_the_write() {
        let api = api().await;
        let faults = Faults {
            seed: 7,
            ..Faults::default()
        };
        let client = FaultyClient::new(InProcessClient::new(api.clone(), "t"), Clock::system(), faults);
        let r = ResourceRef::of::<ConfigMap>();
        let mut timed_out = Vec::new();
        let mut failed_before = Vec::new();
        for i in 0..400 {
            let name = format!("c{i}");
            match client.create(&r, Some("default"), cm(&name)).await {
                Ok(_) => {}
                Err(e) if e.code == 504 => timed_out.push(name),
                Err(e) => {
                    assert_eq!((e.code, e.reason.as_str()), (500, "InternalError"), "{e:?}");
                    failed_before.push(name);
                }
            }
        }
        let counts = client.counts();
        assert_eq!(counts.writes.load(Ordering::Relaxed), 400);
        let failed = counts.failed();
        assert!(
            (20..=60).contains(&failed),
            "{failed} of 400 failed, not about 10%"
        );
        assert_eq!(failed as usize, timed_out.len() + failed_before.len());
        assert!(!timed_out.is_empty() && !failed_before.is_empty());
        assert!(counts.delayed.load(Ordering::Relaxed) > 100);
        let plain = InProcessClient::new(api, "check");
        for name in &timed_out {
            assert!(
                plain.get(&r, Some("default"), name).await.is_ok(),
                "{name} was applied"
            );
        }
        for name in &failed_before {
            assert!(
                plain
                    .get(&r, Some("default"), name)
                    .await
                    .unwrap_err()
                    .is_not_found()
            );
        }
        // Reads are never faulted.
        client
            .list(&r, Some("default"), &ListParams::default())
            .await
            .unwrap();
        client.get(&r, Some("default"), &timed_out[0]).await.unwrap();
        assert_eq!(counts.writes.load(Ordering::Relaxed), 400);
    }

    #[tokio::test(start_paused = true)]
    async fn one_seed_gives_one_sequence_of_faults() {
        let api = api().await;
        let r = ResourceRef::of::<ConfigMap>();
        let mut runs = Vec::new();
        for run in 0..2 {
            let faults = Faults {
                seed: 11,
                ..Faults::default()
            };
            let client = FaultyClient::new(InProcessClient::new(api.clone(), "t"), Clock::system(), faults);
            let mut outcomes = Vec::new();
            for i in 0..100 {
                let result = client
                    .create(&r, Some("default"), cm(&format!("r{run}-{i}")))
                    .await;
                outcomes.push(result.map(|_| ()).map_err(|e| e.code));
            }
            runs.push(outcomes);
        }
        assert_eq!(runs[0], runs[1]);
        assert!(runs[0].iter().any(Result::is_err));
    }
}
