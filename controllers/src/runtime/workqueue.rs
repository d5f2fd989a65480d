//! The work queue: keys of objects that need a sync.
//!
//! Upstream: client-go `util/workqueue/queue.go` (the dirty and processing
//! sets), `delaying_queue.go` (`AddAfter`), `rate_limiting_queue.go` and
//! `default_rate_limiters.go` (`ItemExponentialFailureRateLimiter`).
//!
//! Guarantees, as upstream:
//!
//! - **Dedup.** A key added many times before a worker takes it is handed
//!   out once (the *dirty* set holds the keys waiting in the queue).
//! - **One worker per key.** A key being processed (between [`WorkQueue::get`]
//!   and [`WorkQueue::done`]) is not handed out again. Adding it meanwhile
//!   marks it dirty, and `done` puts it back in the queue, so the change is
//!   not lost and is synced after the running sync ends.
//! - **Delays.** [`WorkQueue::add_after`] adds the key once the delay has
//!   passed on the [`store::Clock`]; of several pending delays for one key
//!   the earliest wins.
//! - **Backoff.** [`WorkQueue::add_rate_limited`] waits 5 ms × 2^failures
//!   (capped at 1000 s) per key, until [`WorkQueue::forget`].
//! - **Drain.** After [`WorkQueue::shut_down`] new adds are ignored, the keys
//!   already queued are still handed out, and then `get` returns `None`;
//!   [`WorkQueue::drained`] waits for the workers to finish them.
//!
//! Causes, for the journal ([`store::journal`]): a named queue records
//! every add as an `Enqueue` entry caused by what the adding task acts for
//! ([`store::journal::current_cause`]: an informer event in a handler, a
//! sync in a worker; for [`WorkQueue::add_after`] and
//! [`WorkQueue::add_rate_limited`], the cause current when the delay was
//! asked for, recorded when it has passed). The entries of a key's adds
//! wait beside it (the queue deduplicates the key, not its causes) until a
//! worker takes it; [`WorkQueue::take_causes`] hands them to the sync.
//!
//! Simplified: client-go's default *controller* rate limiter is the maximum
//! of this per-key backoff and an overall 10 qps / burst 100 token bucket;
//! the bucket is left out. No metrics.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, SystemTime};

use store::Clock;
use store::journal::{self, EntryId, MAX_CAUSES, ObjectRef as JournalRef, Record, Step};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::trace;

/// First backoff of a failing key (client-go: `5*time.Millisecond`).
pub const BACKOFF_BASE: Duration = Duration::from_millis(5);
/// Longest backoff (client-go: `1000*time.Second`).
pub const BACKOFF_MAX: Duration = Duration::from_secs(1000);

/// A deduplicating, delaying, rate-limited queue of keys. Cheap to clone:
/// the event handlers that add and the workers that get share one queue.
pub struct WorkQueue<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        WorkQueue {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<T> {
    /// Every set of the queue. A std mutex: it is held for a few map
    /// operations and never across an `.await`.
    state: Mutex<State<T>>,
    /// Wakes workers waiting in `get` (a key was queued, or shutdown) and
    /// waiters in `drained` (a key was done). `notify_waiters` wakes them all;
    /// each re-checks the state.
    changed: Notify,
    /// Cancelled by `shut_down`; ends every pending `add_after` timer task.
    shutdown: CancellationToken,
    clock: Clock,
    /// Controller name for the trace and the journal; "" for neither.
    name: String,
    /// The kind of object the keys name ([`key_kind`]), for the journal.
    kind: &'static str,
}

struct State<T> {
    /// Keys ready for a worker, in order of arrival. Every key here is also in `dirty`.
    queue: VecDeque<T>,
    /// Keys that need processing: the ones in `queue`, plus processing keys re-added meanwhile.
    dirty: HashSet<T>,
    /// Keys a worker holds (between `get` and `done`).
    processing: HashSet<T>,
    /// Delayed keys and when they become ready (the earliest pending delay).
    waiting: HashMap<T, SystemTime>,
    /// Failures per key, for the backoff; cleared by `forget`.
    failures: HashMap<T, u32>,
    /// The journal entries of the adds of each dirty key, oldest first (at
    /// most [`MAX_CAUSES`]); moved to `taken` when a worker gets the key.
    pending: HashMap<T, Vec<EntryId>>,
    /// The entries of the keys workers got, until [`WorkQueue::take_causes`]
    /// (or `done`) removes them.
    taken: HashMap<T, Vec<EntryId>>,
    shutting_down: bool,
}

/// How a key came to be added, for its journal entry.
#[derive(Clone, Copy)]
enum Via {
    /// `add`.
    Now,
    /// `add_after`, once the delay passed.
    After(Duration),
    /// `add_rate_limited`, once the backoff passed.
    Backoff(Duration),
}

impl<T> WorkQueue<T>
where
    T: Clone + Eq + Hash + Debug + Send + Sync + 'static,
{
    /// An empty queue whose delays follow `clock`.
    pub fn new(clock: Clock) -> Self {
        Self::named(clock, "")
    }

    /// An empty queue whose adds appear in the trace under `controller`.
    pub fn named(clock: Clock, controller: &str) -> Self {
        let queue = WorkQueue {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    dirty: HashSet::new(),
                    processing: HashSet::new(),
                    waiting: HashMap::new(),
                    failures: HashMap::new(),
                    pending: HashMap::new(),
                    taken: HashMap::new(),
                    shutting_down: false,
                }),
                changed: Notify::new(),
                shutdown: CancellationToken::new(),
                clock,
                name: controller.to_string(),
                kind: key_kind(controller),
            }),
        };
        if !controller.is_empty() {
            // `miniplane time step` waits until every controller's queue is empty.
            let weak = Arc::downgrade(&queue.inner);
            queue.inner.clock.time_machine().register_queue(
                controller,
                Box::new(move || {
                    let inner = weak.upgrade()?;
                    let state = lock(&inner);
                    Some(state.dirty.len() + state.processing.len())
                }),
            );
        }
        queue
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        lock(&self.inner)
    }

    /// The clock the delays follow.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// The queue's name ("" for an unnamed queue).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Marks `key` as needing a sync (client-go `Add`).
    pub fn add(&self, key: T) {
        add_now(&self.inner, key, journal::current_cause(), Via::Now);
    }

    /// Adds `key` once `delay` has passed (client-go `AddAfter`).
    pub fn add_after(&self, key: T, delay: Duration) {
        self.add_after_via(key, delay, Via::After(delay));
    }

    fn add_after_via(&self, key: T, delay: Duration, via: Via) {
        let cause = journal::current_cause();
        if delay.is_zero() {
            add_now(&self.inner, key, cause, via);
            return;
        }
        let ready_at = self.inner.clock.now() + delay;
        {
            let mut state = self.lock();
            if state.shutting_down {
                return;
            }
            // An earlier pending delay for the same key wins.
            if state.waiting.get(&key).is_some_and(|at| *at <= ready_at) {
                return;
            }
            state.waiting.insert(key.clone(), ready_at);
        }
        // The timer holds only a weak handle, so it does not keep a dropped
        // queue alive; shutdown cancels it.
        let weak = Arc::downgrade(&self.inner);
        let clock = self.inner.clock.clone();
        let cancelled = self.inner.shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = cancelled.cancelled() => {}
                _ = clock.sleep(delay) => promote(&weak, key, ready_at, cause, via),
            }
        });
    }

    /// Adds `key` after its backoff, and counts a failure
    /// (client-go `AddRateLimited`).
    pub fn add_rate_limited(&self, key: T) {
        let delay = {
            let mut state = self.lock();
            let failures = state.failures.entry(key.clone()).or_insert(0);
            let delay = backoff(*failures);
            *failures = failures.saturating_add(1);
            delay
        };
        self.add_after_via(key, delay, Via::Backoff(delay));
    }

    /// Clears the failure count of `key` (client-go `Forget`): the next
    /// failure starts over at 5 ms.
    pub fn forget(&self, key: &T) {
        self.lock().failures.remove(key);
    }

    /// How many times `key` was re-added with backoff since the last `forget`.
    pub fn num_requeues(&self, key: &T) -> u32 {
        self.lock().failures.get(key).copied().unwrap_or(0)
    }

    /// Waits for a key to process; `None` once the queue is shut down and
    /// empty. The caller must call [`WorkQueue::done`] with the key.
    pub async fn get(&self) -> Option<T> {
        loop {
            // Register for a wakeup *before* looking, so that an add between
            // the look and the wait is not missed.
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut state = self.lock();
                if let Some(key) = state.queue.pop_front() {
                    state.dirty.remove(&key);
                    state.processing.insert(key.clone());
                    if let Some(causes) = state.pending.remove(&key) {
                        state.taken.insert(key.clone(), causes);
                    }
                    return Some(key);
                }
                if state.shutting_down {
                    return None;
                }
            }
            changed.await;
        }
    }

    /// Ends the processing of `key`. When it was added again meanwhile, it
    /// goes back in the queue now.
    pub fn done(&self, key: &T) {
        let mut state = self.lock();
        state.processing.remove(key);
        state.taken.remove(key);
        if state.dirty.contains(key) {
            state.queue.push_back(key.clone());
        }
        drop(state);
        self.inner.changed.notify_waiters();
    }

    /// The journal entries of the adds a worker's sync of `key` answers
    /// (the first is its cause, the others its `also`), taken once, between
    /// [`WorkQueue::get`] and [`WorkQueue::done`]. Empty when the journal is
    /// off or the queue unnamed.
    pub fn take_causes(&self, key: &T) -> Vec<EntryId> {
        self.lock().taken.remove(key).unwrap_or_default()
    }

    /// The object a key names, for the journal: `namespace/name` or `name`
    /// of the queue's kind ([`key_kind`]); an enum key `Variant("ns/name")`
    /// names an object of the variant's kind.
    pub fn object_of(&self, key: &T) -> Option<JournalRef> {
        object_of(self.inner.kind, &trace::show(key))
    }

    /// Stops accepting keys and cancels pending delays. Keys already queued
    /// are still handed out; then `get` returns `None`.
    pub fn shut_down(&self) {
        self.lock().shutting_down = true;
        self.inner.shutdown.cancel();
        self.inner.changed.notify_waiters();
    }

    /// Whether [`WorkQueue::shut_down`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.lock().shutting_down
    }

    /// Waits until no key is queued or being processed (client-go's
    /// `ShutDownWithDrain` is `shut_down` followed by this).
    pub async fn drained(&self) {
        loop {
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let state = self.lock();
                if state.queue.is_empty() && state.processing.is_empty() {
                    return;
                }
            }
            changed.await;
        }
    }

    /// Keys waiting for a worker (not counting delayed or processing ones).
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether no key is waiting for a worker.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Locks the state. A panic while holding the lock leaves the sets
/// consistent (each operation is a few inserts/removes), so a poisoned lock
/// is used as is.
fn lock<T>(inner: &Inner<T>) -> MutexGuard<'_, State<T>> {
    inner
        .state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// client-go `Add`, shared by `add` and the delay timers; journaled (a
/// named queue) as an `Enqueue` caused by `cause`.
fn add_now<T: Clone + Eq + Hash + Debug>(inner: &Inner<T>, key: T, cause: Option<EntryId>, via: Via) {
    let mut state = lock(inner);
    if state.shutting_down {
        return;
    }
    let outcome = if state.dirty.contains(&key) {
        "already queued"
    } else if state.processing.contains(&key) {
        "queued behind the running sync"
    } else {
        "queued"
    };
    let id = journal_add(inner, &key, cause, via, outcome);
    if id != 0 {
        let causes = state.pending.entry(key.clone()).or_default();
        if causes.len() < MAX_CAUSES {
            causes.push(id);
        }
    }
    let newly_dirty = state.dirty.insert(key.clone());
    let wakes = newly_dirty && !state.processing.contains(&key);
    if wakes {
        state.queue.push_back(key.clone());
    }
    drop(state);
    if !inner.name.is_empty() {
        trace::enqueued(&inner.name, &key, id, cause);
    }
    if wakes {
        inner.changed.notify_waiters();
    }
}

/// Records one add as an `Enqueue` entry (named queues, journal on);
/// returns its id, or 0.
fn journal_add<T: Debug>(
    inner: &Inner<T>,
    key: &T,
    cause: Option<EntryId>,
    via: Via,
    outcome: &str,
) -> EntryId {
    let journal = inner.clock.journal();
    if inner.name.is_empty() || !journal.enabled() {
        return 0;
    }
    let message = match via {
        Via::Now => outcome.to_string(),
        Via::After(d) => format!("{outcome}, after {d:?}"),
        Via::Backoff(d) => format!("{outcome}, retry after {d:?} of backoff"),
    };
    let record = Record {
        cause,
        step: Some(Step::Enqueue),
        actor: inner.name.clone(),
        object: object_of(inner.kind, &trace::show(key)),
        message,
        ..Record::default()
    };
    journal.record(inner.clock.now(), record)
}

/// A delay timer fired: add the key, unless a newer, earlier delay replaced
/// this one (that timer adds it) or the queue is gone.
fn promote<T: Clone + Eq + Hash + Debug>(
    weak: &Weak<Inner<T>>,
    key: T,
    ready_at: SystemTime,
    cause: Option<EntryId>,
    via: Via,
) {
    let Some(inner) = weak.upgrade() else { return };
    {
        let mut state = lock(&inner);
        if state.waiting.get(&key) != Some(&ready_at) {
            return;
        }
        state.waiting.remove(&key);
    }
    add_now(&inner, key, cause, via);
}

/// The kind of object a queue's keys name, by the queue's (controller's)
/// name; "" when its keys name no one kind (the journal then leaves the
/// kind empty). Upstream keys are bare strings too; the kind is the
/// controller's knowledge.
pub fn key_kind(queue: &str) -> &'static str {
    match queue {
        "deployment" => "Deployment",
        "replicaset" => "ReplicaSet",
        "statefulset" => "StatefulSet",
        "daemonset" => "DaemonSet",
        "job" | "ttl-after-finished" => "Job",
        "cronjob" => "CronJob",
        "kubelet" | "default-scheduler" | "taint-eviction" => "Pod",
        "node-lifecycle" => "Node",
        "endpoint-controller" | "endpointslice-controller" => "Service",
        "disruption" => "PodDisruptionBudget",
        "horizontal-pod-autoscaler" => "HorizontalPodAutoscaler",
        "canary-controller" => "Canary",
        "resourcequota" => "ResourceQuota",
        "serviceaccount-controller" | "root-ca-cert-publisher" => "Namespace",
        "clusterrole-aggregation" => "ClusterRole",
        "csrsigning-controller" => "CertificateSigningRequest",
        _ => "",
    }
}

/// The object a shown key names: `ns/name` or `name` of `kind`, or
/// `Variant("ns/name")` of the variant's kind.
fn object_of(kind: &str, shown: &str) -> Option<JournalRef> {
    let (kind, inner) = match shown.split_once("(\"") {
        Some((variant, rest)) => (variant_kind(variant), rest.strip_suffix("\")")?),
        None => (kind, shown),
    };
    if inner.is_empty() || inner.contains(['"', ' ', '(', ')', ',']) {
        return None;
    }
    match inner.split_once('/') {
        Some((ns, name)) if !name.contains('/') => Some(JournalRef::new(kind, ns, name)),
        Some(_) => None,
        None => Some(JournalRef::new(kind, "", inner)),
    }
}

/// The kind an enum key's variant names (the job controller's
/// `OrphanPod`, the gateway and volume controllers' keys).
fn variant_kind(variant: &str) -> &str {
    match variant {
        "OrphanPod" => "Pod",
        "Class" => "GatewayClass",
        "Route" => "HTTPRoute",
        "Claim" => "PersistentVolumeClaim",
        "Volume" => "PersistentVolume",
        other => other,
    }
}

/// 5 ms × 2^failures, at most 1000 s.
pub fn backoff(failures: u32) -> Duration {
    let factor = 2u32.checked_pow(failures).unwrap_or(u32::MAX);
    BACKOFF_BASE
        .checked_mul(factor)
        .unwrap_or(BACKOFF_MAX)
        .min(BACKOFF_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use tokio::time::timeout;

    fn queue() -> WorkQueue<String> {
        WorkQueue::new(Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0))
    }

    fn key(s: &str) -> String {
        s.to_string()
    }

    /// Lets spawned tasks (the delay timers) run until they wait again.
    async fn settle() {
        for _ in 0..5 {
            tokio::task::yield_now().await;
        }
    }

    /// Moves paused time forward by `d` (tokio time, which the clock follows).
    async fn pass(d: Duration) {
        settle().await;
        tokio::time::advance(d).await;
        settle().await;
    }

    /// The next key, if one is ready without waiting.
    async fn try_get(q: &WorkQueue<String>) -> Option<String> {
        settle().await;
        q.get().now_or_never().flatten()
    }

    #[tokio::test(start_paused = true)]
    async fn adding_a_key_twice_hands_it_out_once() {
        let q = queue();
        q.add(key("a"));
        q.add(key("b"));
        q.add(key("a"));
        assert_eq!(q.len(), 2);
        assert_eq!(q.get().await, Some(key("a")));
        assert_eq!(q.get().await, Some(key("b")));
        assert_eq!(try_get(&q).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_being_processed_comes_back_only_after_done() {
        let q = queue();
        q.add(key("a"));
        let a = q.get().await.unwrap();
        q.add(key("a"));
        q.add(key("a"));
        assert_eq!(q.len(), 0, "a processing key is not queued");
        assert_eq!(try_get(&q).await, None);
        q.done(&a);
        assert_eq!(q.len(), 1);
        assert_eq!(q.get().await, Some(key("a")));
        q.done(&key("a"));
        assert_eq!(try_get(&q).await, None, "done without a re-add does not queue");
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_worker_is_woken_by_add() {
        let q = queue();
        let worker = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::task::yield_now().await;
        q.add(key("x"));
        assert_eq!(worker.await.unwrap(), Some(key("x")));
    }

    #[tokio::test(start_paused = true)]
    async fn add_after_waits_for_the_clock() {
        let q = queue();
        q.add_after(key("a"), Duration::from_secs(10));
        q.add_after(key("a"), Duration::from_secs(30)); // later: ignored
        pass(Duration::from_secs(9)).await;
        assert_eq!(try_get(&q).await, None);
        pass(Duration::from_secs(2)).await;
        assert_eq!(try_get(&q).await, Some(key("a")));
        q.done(&key("a"));
        pass(Duration::from_secs(60)).await;
        assert_eq!(
            try_get(&q).await,
            None,
            "the later delay was merged into the earlier"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_add_after_replaces_a_later_one() {
        let q = queue();
        q.add_after(key("a"), Duration::from_secs(30));
        q.add_after(key("a"), Duration::from_secs(5));
        pass(Duration::from_secs(6)).await;
        assert_eq!(try_get(&q).await, Some(key("a")));
    }

    #[tokio::test(start_paused = true)]
    async fn add_after_follows_a_scaled_clock() {
        let q: WorkQueue<String> = WorkQueue::new(Clock::starting_at(SystemTime::UNIX_EPOCH, 10.0));
        q.add_after(key("a"), Duration::from_secs(100)); // 10 real seconds
        pass(Duration::from_secs(9)).await;
        assert_eq!(try_get(&q).await, None);
        pass(Duration::from_secs(2)).await;
        assert_eq!(try_get(&q).await, Some(key("a")));
    }

    #[test]
    fn backoff_doubles_from_5ms_up_to_1000s() {
        assert_eq!(backoff(0), Duration::from_millis(5));
        assert_eq!(backoff(1), Duration::from_millis(10));
        assert_eq!(backoff(2), Duration::from_millis(20));
        assert_eq!(backoff(10), Duration::from_millis(5120));
        assert_eq!(backoff(18), BACKOFF_MAX); // 5 ms × 2^18 = 1310 s
        assert_eq!(backoff(40), BACKOFF_MAX);
    }

    #[tokio::test(start_paused = true)]
    async fn add_rate_limited_backs_off_and_forget_starts_over() {
        let q = queue();
        for failures in 0..4u32 {
            assert_eq!(q.num_requeues(&key("a")), failures);
            q.add_rate_limited(key("a"));
            let wait = backoff(failures);
            pass(wait - Duration::from_micros(500)).await;
            assert_eq!(
                try_get(&q).await,
                None,
                "still backing off after failure {failures}"
            );
            pass(Duration::from_millis(1)).await;
            let got = try_get(&q).await;
            assert_eq!(got, Some(key("a")));
            q.done(&key("a"));
        }
        assert_eq!(q.num_requeues(&key("a")), 4);
        q.forget(&key("a"));
        assert_eq!(q.num_requeues(&key("a")), 0);
        q.add_rate_limited(key("a"));
        pass(Duration::from_millis(6)).await;
        assert_eq!(try_get(&q).await, Some(key("a")));
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_drains_queued_keys_then_returns_none() {
        let q = queue();
        q.add(key("a"));
        q.add(key("b"));
        let a = q.get().await.unwrap();
        q.add_after(key("later"), Duration::from_secs(1));
        q.shut_down();
        q.add(key("c")); // ignored
        assert_eq!(q.get().await, Some(key("b")));
        assert_eq!(q.get().await, None);
        let drained = tokio::spawn({
            let q = q.clone();
            async move { q.drained().await }
        });
        tokio::task::yield_now().await;
        assert!(!drained.is_finished(), "a and b are still being processed");
        q.done(&a);
        q.done(&key("b"));
        timeout(Duration::from_secs(1), drained).await.unwrap().unwrap();
        pass(Duration::from_secs(2)).await;
        assert_eq!(q.get().await, None, "the delayed key was cancelled");
    }

    #[tokio::test(start_paused = true)]
    async fn a_sync_gets_the_enqueues_it_answers() {
        let clock = Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0);
        let q: WorkQueue<String> = WorkQueue::named(clock.clone(), "deployment");
        journal::caused_by_sync(41, || q.add(key("default/web")));
        journal::caused_by_sync(42, || q.add(key("default/web")));
        let got = q.get().await.unwrap();
        let causes = q.take_causes(&got);
        assert_eq!(causes.len(), 2);
        assert!(q.take_causes(&got).is_empty(), "taken once");
        let first = clock.journal().get(causes[0]).unwrap();
        assert_eq!(first.step, Step::Enqueue);
        assert_eq!(first.cause, Some(41));
        assert_eq!(first.actor, "deployment");
        assert_eq!(
            first.object,
            Some(JournalRef::new("Deployment", "default", "web"))
        );
        let second = clock.journal().get(causes[1]).unwrap();
        assert_eq!(
            (second.cause, second.message.as_str()),
            (Some(42), "already queued")
        );
        q.done(&got);
    }

    #[tokio::test(start_paused = true)]
    async fn a_delayed_add_keeps_the_cause_it_was_asked_under() {
        let clock = Clock::starting_at(SystemTime::UNIX_EPOCH, 1.0);
        let q: WorkQueue<String> = WorkQueue::named(clock.clone(), "replicaset");
        journal::caused_by_sync(7, || q.add_after(key("default/web"), Duration::from_secs(5)));
        pass(Duration::from_secs(6)).await;
        let got = try_get(&q).await.unwrap();
        let causes = q.take_causes(&got);
        let entry = clock.journal().get(causes[0]).unwrap();
        assert_eq!(entry.cause, Some(7));
        assert_eq!(entry.message, "queued, after 5s");
    }

    #[test]
    fn keys_name_objects_of_the_queues_kind() {
        assert_eq!(
            object_of("Pod", "default/web-1"),
            Some(JournalRef::new("Pod", "default", "web-1"))
        );
        assert_eq!(
            object_of("Node", "node-1"),
            Some(JournalRef::new("Node", "", "node-1"))
        );
        assert_eq!(
            object_of("Job", "OrphanPod(\"default/p\")"),
            Some(JournalRef::new("Pod", "default", "p"))
        );
        assert_eq!(object_of("", "(\"a\", 3)"), None);
        assert_eq!(key_kind("deployment"), "Deployment");
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_wakes_idle_workers() {
        let q = queue();
        let worker = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::task::yield_now().await;
        q.shut_down();
        assert_eq!(worker.await.unwrap(), None);
    }
}
