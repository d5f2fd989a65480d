//! Scaffolding the controller tests share: a clock at a fixed instant, an
//! in-process API client on it, polling on that clock, stopping what runs,
//! and the seed of the property tests.
//!
//! Every wait here is measured on the injected [`Clock`], so the tests run on
//! paused tokio time and take no real time.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use apiserver::testkit::{Tasks, TestApi};
use proptest::test_runner::{RngAlgorithm, TestRng};
use store::Clock;
use tokio::time::timeout;

use crate::runtime::{Client, InProcessClient};

/// Seconds after the Unix epoch at which [`test_clock`] starts: 2023-11-14T22:13:20Z.
pub(crate) const TEST_EPOCH_SECS: u64 = 1_700_000_000;

/// A clock at real speed, starting at [`TEST_EPOCH_SECS`].
pub(crate) fn test_clock() -> Clock {
    Clock::starting_at(SystemTime::UNIX_EPOCH + Duration::from_secs(TEST_EPOCH_SECS), 1.0)
}

/// A client of a fresh in-process API server (temporary store) on `clock`.
pub(crate) async fn test_client(clock: &Clock) -> Arc<dyn Client> {
    let api = TestApi::builder().clock(clock.clone()).build().await;
    Arc::new(InProcessClient::new(api, "test"))
}

/// Stops `tasks`, panicking unless every one stops within 10 s without panicking.
pub(crate) async fn stop_tasks(tasks: Tasks) {
    let stopped = tasks.stop(Duration::from_secs(10)).await;
    stopped.expect("every task stops within 10 s, without panicking");
}

/// Calls `check` every `every` (on `clock`) until it returns `Some`, for up to `limit` of
/// simulated time; panics with "timed out waiting for {what}" after that.
pub(crate) async fn poll<T>(
    clock: &Clock,
    what: &str,
    limit: Duration,
    every: Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let polled = timeout(limit, async {
        loop {
            if let Some(v) = check().await {
                return v;
            }
            clock.sleep(every).await;
        }
    });
    polled
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// [`poll`] for a `check` that answers whether it holds.
pub(crate) async fn holds_within<F, Fut>(
    clock: &Clock,
    what: &str,
    limit: Duration,
    every: Duration,
    mut check: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    poll(clock, what, limit, every, async || check().await.then_some(())).await;
}

/// [`poll`] every 20 ms for up to 60 s of simulated time.
pub(crate) async fn eventually<T>(clock: &Clock, what: &str, check: impl AsyncFnMut() -> Option<T>) -> T {
    poll(
        clock,
        what,
        Duration::from_secs(60),
        Duration::from_millis(20),
        check,
    )
    .await
}

/// [`holds_within`] every 10 ms for up to 60 s of simulated time.
pub(crate) async fn eventually_holds<F, Fut>(clock: &Clock, what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    holds_within(
        clock,
        what,
        Duration::from_secs(60),
        Duration::from_millis(10),
        check,
    )
    .await;
}

/// The property tests' generator: seeded from `MINIPLANE_PROPTEST_SEED` (a u64; `random` for a
/// fresh one) if set, else from `default_seed`, so that `cargo test` is repeatable. Returns the
/// seed too, to report with a failure.
pub(crate) fn proptest_rng(default_seed: u64) -> (u64, TestRng) {
    let seed: u64 = match std::env::var("MINIPLANE_PROPTEST_SEED").ok().as_deref() {
        Some("random") => rand::random(),
        Some(v) => v.parse().expect("MINIPLANE_PROPTEST_SEED is a u64 or `random`"),
        None => default_seed,
    };
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    (seed, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}
