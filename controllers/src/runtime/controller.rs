//! The worker loop: take a key, reconcile it, decide what happens next.
//!
//! Upstream: sample-controller `controller.go` (`runWorker`,
//! `processNextWorkItem`) and controller-runtime
//! `pkg/internal/controller/controller.go` (`reconcileHandler`), with the
//! drop-after-N-retries of `pkg/controller/deployment/deployment_controller.go`
//! (`handleErr`, `maxRetries = 15`).
//!
//! ```text
//! loop:
//!   key ← queue.get()                      (None: shut down and drained → stop)
//!   match reconcile(key):
//!     Ok(Done)             → forget(key)                       backoff starts over
//!     Ok(RequeueAfter(d))  → forget(key); add_after(key, d)    waiting is not failing
//!     Err(retryable)       → add_rate_limited(key)             5 ms, 10 ms, 20 ms, ...
//!                            (or forget + log after max_retries, as upstream)
//!     Err(terminal)        → forget(key) + log                 retrying cannot help
//!   queue.done(key)
//! ```
//!
//! Each sync is a story in the journal ([`store::journal`]): a `Sync`
//! `start` entry caused by the enqueues it answers
//! ([`WorkQueue::take_causes`]), the reconcile run under it
//! ([`store::journal::caused_by`]: its writes and decisions name it as their
//! cause), and a `Sync` `end` entry with the outcome.
//!
//! A panic inside a reconcile is caught and treated as a retryable error,
//! so one bad object cannot stop a controller (upstream's `HandleCrash`
//! would crash the process instead).

use std::fmt::Debug;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::FutureExt;
use store::journal::{EntryId, Record, Step, caused_by, caused_by_sync};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::client::{BoxFuture, ClientError};
use super::trace;
use super::workqueue::WorkQueue;

/// How often a failing key is retried before it is dropped from the queue
/// (upstream deployment controller: `maxRetries = 15`; with the 5 ms
/// doubling backoff the last retry comes about 82 s after the first failure).
pub const DEFAULT_MAX_RETRIES: u32 = 15;

/// What a successful reconcile asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing: the next event for the key wakes it again.
    Done,
    /// Look again after this long even if nothing changes (e.g. a progress
    /// deadline, minReadySeconds). Not an error: the backoff is reset.
    RequeueAfter(Duration),
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// An API call failed (conflict, unavailable, ...): retried with backoff.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// Some other transient failure: retried with backoff.
    #[error("{0}")]
    Retryable(String),
    /// Retrying cannot help (e.g. an invalid object): logged, not retried
    /// until the next event for the key (controller-runtime `TerminalError`).
    #[error("terminal: {0}")]
    Terminal(String),
}

impl ReconcileError {
    /// A transient failure.
    pub fn retryable(message: impl Into<String>) -> Self {
        ReconcileError::Retryable(message.into())
    }

    /// A failure retrying cannot fix.
    pub fn terminal(message: impl Into<String>) -> Self {
        ReconcileError::Terminal(message.into())
    }

    /// Whether this failure must not be retried.
    pub fn is_terminal(&self) -> bool {
        matches!(self, ReconcileError::Terminal(_))
    }
}

/// A controller's sync function (upstream `syncHandler`).
///
/// `reconcile` is level-based: it reads the current state for `key` from
/// the informer caches and acts on the difference to the desired state,
/// never on the event that enqueued the key.
pub trait Reconciler: Send + Sync + 'static {
    /// What the queue holds, e.g. `"namespace/name"`.
    type Key: Clone + Eq + Hash + Debug + Send + Sync + 'static;

    /// The controller's name, for logs and the trace (`replicaset`).
    fn name(&self) -> &str;

    /// Brings the object named by `key` to its desired state.
    fn reconcile(&self, key: &Self::Key) -> BoxFuture<'_, Result<Action, ReconcileError>>;

    /// Retries of a failing key before it is dropped (default 15).
    fn max_retries(&self) -> u32 {
        DEFAULT_MAX_RETRIES
    }
}

/// Runs `workers` workers on `queue` until `shutdown` is cancelled; then
/// shuts the queue down, lets the workers finish the keys already queued,
/// and returns when they have stopped.
pub async fn run_workers<R: Reconciler>(
    queue: WorkQueue<R::Key>,
    reconciler: Arc<R>,
    workers: usize,
    shutdown: CancellationToken,
) {
    // The worker tasks; joined below, so none outlives this function.
    let mut tasks = JoinSet::new();
    for _ in 0..workers.max(1) {
        tasks.spawn(worker(queue.clone(), reconciler.clone()));
    }
    shutdown.cancelled().await;
    queue.shut_down();
    while let Some(joined) = tasks.join_next().await {
        if let Err(e) = joined {
            tracing::error!(controller = reconciler.name(), "worker task failed: {e}");
        }
    }
}

/// One worker (upstream `runWorker`): process keys until the queue is shut
/// down and empty.
async fn worker<R: Reconciler>(queue: WorkQueue<R::Key>, reconciler: Arc<R>) {
    while let Some(key) = queue.get().await {
        process_next_work_item(&queue, reconciler.as_ref(), &key).await;
        queue.done(&key);
    }
}

/// One sync of one key, and what to do with the key afterwards (upstream
/// `processNextWorkItem` + `handleErr`). The caller calls `done(key)`.
pub async fn process_next_work_item<R: Reconciler>(queue: &WorkQueue<R::Key>, reconciler: &R, key: &R::Key) {
    let name = reconciler.name();
    // `miniplane time break-on KIND/NAME` holds the sync here until released.
    queue
        .clock()
        .time_machine()
        .hold_at_breakpoint(name, &trace::show(key))
        .await;
    let started = queue.clock().now();
    let causes = queue.take_causes(key);
    let sync = journal_sync_start(queue, name, key, &causes);
    trace::sync_start(name, key, sync, causes.first().copied());
    // The writes of the sync, and the requeue it asks for, are caused by it.
    let result = caused_by(sync, reconcile_catching_panics(reconciler, key)).await;
    let outcome = caused_by_sync(sync, || handle_result(queue, reconciler, key, result));
    let took = elapsed_since(queue, started);
    journal_sync_end(queue, name, key, sync, took, &outcome);
    trace::sync_end(name, key, took, &outcome);
}

/// Records the start of a sync: caused by the first of the enqueues it
/// answers, the others as `also`. Returns its id (0 when not recorded).
fn journal_sync_start<T>(queue: &WorkQueue<T>, name: &str, key: &T, causes: &[EntryId]) -> EntryId
where
    T: Clone + Eq + Hash + Debug + Send + Sync + 'static,
{
    let journal = queue.clock().journal();
    if queue.name().is_empty() || !journal.enabled() {
        return 0;
    }
    let record = Record {
        cause: causes.first().copied(),
        also: causes.iter().skip(1).copied().collect(),
        step: Some(Step::Sync),
        actor: name.to_string(),
        verb: "start".to_string(),
        object: queue.object_of(key),
        message: match causes.len() {
            0 | 1 => String::new(),
            n => format!("answers {n} enqueues"),
        },
        ..Record::default()
    };
    journal.record(queue.clock().now(), record)
}

/// Records the end of sync `sync` and its outcome.
fn journal_sync_end<T>(
    queue: &WorkQueue<T>,
    name: &str,
    key: &T,
    sync: EntryId,
    took: Duration,
    outcome: &str,
) where
    T: Clone + Eq + Hash + Debug + Send + Sync + 'static,
{
    let journal = queue.clock().journal();
    if sync == 0 {
        return;
    }
    let record = Record {
        cause: Some(sync),
        step: Some(Step::Sync),
        actor: name.to_string(),
        verb: "end".to_string(),
        object: queue.object_of(key),
        message: format!("{outcome} after {took:?}"),
        ..Record::default()
    };
    journal.record(queue.clock().now(), record);
}

/// Runs one reconcile; a panic becomes a retryable error.
async fn reconcile_catching_panics<R: Reconciler>(
    reconciler: &R,
    key: &R::Key,
) -> Result<Action, ReconcileError> {
    let sync = AssertUnwindSafe(reconciler.reconcile(key)).catch_unwind();
    match sync.await {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(ReconcileError::retryable(format!("reconcile panicked: {what}")))
        }
    }
}

/// The one `match` over every outcome. Returns a description for the trace.
fn handle_result<R: Reconciler>(
    queue: &WorkQueue<R::Key>,
    reconciler: &R,
    key: &R::Key,
    result: Result<Action, ReconcileError>,
) -> String {
    let name = reconciler.name();
    match result {
        Ok(Action::Done) => {
            queue.forget(key);
            "Done".to_string()
        }
        Ok(Action::RequeueAfter(delay)) => {
            queue.forget(key);
            queue.add_after(key.clone(), delay);
            format!("RequeueAfter({delay:?})")
        }
        Err(e) if e.is_terminal() => {
            queue.forget(key);
            tracing::error!(controller = name, key = ?key, "sync failed, not retrying: {e}");
            format!("terminal error: {e}")
        }
        Err(e) if queue.num_requeues(key) < reconciler.max_retries() => {
            tracing::info!(controller = name, key = ?key, "error syncing, retrying: {e}");
            queue.add_rate_limited(key.clone());
            format!("error, retry {}: {e}", queue.num_requeues(key))
        }
        Err(e) => {
            queue.forget(key);
            tracing::warn!(controller = name, key = ?key, "dropping out of the queue: {e}");
            format!("error, dropped after {} retries: {e}", reconciler.max_retries())
        }
    }
}

fn elapsed_since<T>(queue: &WorkQueue<T>, started: SystemTime) -> Duration
where
    T: Clone + Eq + Hash + Debug + Send + Sync + 'static,
{
    queue
        .clock()
        .now()
        .duration_since(started)
        .unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use store::Clock;

    /// A reconciler that answers from a script, per key, and records calls.
    struct Scripted {
        /// Outcomes still to give, per key; when empty, `Done`.
        script: Mutex<HashMap<String, Vec<Result<Action, ReconcileError>>>>,
        /// Every reconciled key, in order.
        calls: Mutex<Vec<String>>,
        max_retries: u32,
    }

    impl Scripted {
        fn new(max_retries: u32) -> Arc<Self> {
            Arc::new(Scripted {
                script: Mutex::new(HashMap::new()),
                calls: Mutex::new(Vec::new()),
                max_retries,
            })
        }

        fn then(&self, key: &str, outcome: Result<Action, ReconcileError>) {
            let mut script = self.script.lock().unwrap();
            script.entry(key.to_string()).or_default().push(outcome);
        }

        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }
    }

    impl Reconciler for Scripted {
        type Key = String;

        fn name(&self) -> &str {
            "scripted"
        }

        fn reconcile(&self, key: &String) -> BoxFuture<'_, Result<Action, ReconcileError>> {
            self.calls.lock().unwrap().push(key.clone());
            let next = {
                let mut script = self.script.lock().unwrap();
                let outcomes = script.entry(key.clone()).or_default();
                if outcomes.is_empty() {
                    Ok(Action::Done)
                } else {
                    outcomes.remove(0)
                }
            };
            Box::pin(async move {
                if let Err(ReconcileError::Retryable(m)) = &next
                    && m == "panic"
                {
                    panic!("scripted panic");
                }
                next
            })
        }

        fn max_retries(&self) -> u32 {
            self.max_retries
        }
    }

    fn queue() -> WorkQueue<String> {
        WorkQueue::new(Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0))
    }

    async fn one(q: &WorkQueue<String>, r: &Scripted) {
        let key = q.get().await.unwrap();
        process_next_work_item(q, r, &key).await;
        q.done(&key);
    }

    #[tokio::test(start_paused = true)]
    async fn done_forgets_the_backoff() {
        let (q, r) = (queue(), Scripted::new(15));
        r.then("a", Err(ReconcileError::retryable("boom")));
        q.add("a".into());
        one(&q, &r).await;
        assert_eq!(q.num_requeues(&"a".into()), 1);
        one(&q, &r).await; // comes back after 5 ms, then Done
        assert_eq!(q.num_requeues(&"a".into()), 0);
        assert_eq!(r.calls(), vec!["a", "a"]);
    }

    #[tokio::test(start_paused = true)]
    async fn requeue_after_comes_back_after_the_delay() {
        let (q, r) = (queue(), Scripted::new(15));
        r.then("a", Ok(Action::RequeueAfter(Duration::from_secs(30))));
        let start = tokio::time::Instant::now();
        q.add("a".into());
        one(&q, &r).await;
        assert_eq!(q.num_requeues(&"a".into()), 0, "waiting is not failing");
        one(&q, &r).await;
        assert!(start.elapsed() >= Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn terminal_errors_are_not_retried() {
        let (q, r) = (queue(), Scripted::new(15));
        r.then("a", Err(ReconcileError::terminal("invalid")));
        q.add("a".into());
        one(&q, &r).await;
        assert_eq!(q.num_requeues(&"a".into()), 0);
        let again = tokio::time::timeout(Duration::from_secs(3600), q.get()).await;
        assert!(again.is_err(), "a terminal error does not requeue");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_key_is_dropped_after_max_retries() {
        let (q, r) = (queue(), Scripted::new(3));
        for _ in 0..10 {
            r.then("a", Err(ReconcileError::retryable("boom")));
        }
        q.add("a".into());
        for _ in 0..4 {
            one(&q, &r).await; // the first try and 3 retries
        }
        assert_eq!(q.num_requeues(&"a".into()), 0, "dropped and forgotten");
        let again = tokio::time::timeout(Duration::from_secs(3600), q.get()).await;
        assert!(again.is_err(), "no fifth try");
        assert_eq!(r.calls().len(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_reconcile_is_retried() {
        let (q, r) = (queue(), Scripted::new(15));
        r.then("a", Err(ReconcileError::retryable("panic")));
        q.add("a".into());
        one(&q, &r).await;
        assert_eq!(q.num_requeues(&"a".into()), 1);
        one(&q, &r).await;
        assert_eq!(r.calls().len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn run_workers_processes_keys_and_drains_on_shutdown() {
        let (q, r) = (queue(), Scripted::new(15));
        let shutdown = CancellationToken::new();
        for k in ["a", "b", "c"] {
            q.add(k.to_string());
        }
        let run = tokio::spawn(run_workers(q.clone(), r.clone(), 2, shutdown.clone()));
        tokio::time::timeout(Duration::from_secs(1), async {
            while r.calls().len() < 3 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        q.add("d".to_string());
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(1), run)
            .await
            .unwrap()
            .unwrap();
        let mut calls = r.calls();
        calls.sort();
        assert_eq!(calls, vec!["a", "b", "c", "d"]);
        assert!(q.is_empty());
    }
}
