//! The time machine: pause, resume, rescale and single-step the simulated
//! clock, and hold a controller's sync at a breakpoint.
//!
//! There is no upstream counterpart: a real cluster runs on the wall clock.
//! The nearest are a debugger's breakpoints and the fake clocks of
//! upstream's unit tests (`k8s.io/utils/clock/testing.FakeClock.Step`),
//! which move time for one controller; here one step moves the whole
//! cluster's time, and waits for everyone to finish reacting.
//!
//! # Pause, resume, scale
//!
//! [`Clock::pause`], [`Clock::resume`] and [`Clock::set_scale`] (in
//! `clock.rs`) change the pace of the one timeline every clone of a clock
//! shares. Here they are recorded in the journal ([`Step::Time`], actor
//! `time-machine`).
//!
//! # Step
//!
//! [`Clock::step`] moves a paused clock forward by `d`, one sleeper's
//! deadline at a time, letting the cluster settle at each:
//!
//! ```text
//! target = now + d
//! loop:
//!     wait until quiescent
//!     next = earliest deadline a sleeper waits for, after now
//!     if next > target: break
//!     now = next                     (the sleepers due by then wake)
//! now = target
//! wait until quiescent
//! ```
//!
//! *Quiescent* means, all at once for [`QUIET`] of real time:
//!
//! - every registered work queue (each controller's, the kubelet's) holds no
//!   key, queued or processing; a queue with a sync held at a breakpoint
//!   counts as idle (the held key and the keys behind it wait for the
//!   release, not for time);
//! - the journal recorded no new entry (with the journal off, the interval
//!   alone);
//! - no sleeper is due (waiting for a deadline at or before now);
//! - the step's own polls (every 5 ms) woke on time: a poll that woke more
//!   than 10 ms late says the machine was too busy to run every task, so
//!   that interval does not count as quiet.
//!
//! What this does not see: work that is in flight between two of these
//! signs without recording anything for longer than [`QUIET`] (a watch
//! event on its way from the store to an informer under heavy load, a
//! handler that has taken an event but not yet enqueued a key, an HTTP
//! client's request); tasks that wait on tokio's own timers rather than the
//! clock (HTTP timeouts, which are real time on purpose). The same seed and
//! the same steps reach the same state as long as every reaction to an
//! instant finishes within that window, which it does on an idle machine by
//! far (milliseconds); a step that cannot settle within [`SETTLE_LIMIT`]
//! fails and says which queues were busy.
//!
//! # Breakpoints
//!
//! [`TimeMachine::break_on`] `Deployment default/web` holds the next sync of
//! the key `default/web` by the controller named `deployment`: a breakpoint
//! matches a sync when the controller's name is the kind in lower case
//! (`Deployment` → `deployment`, `ReplicaSet` → `replicaset`,
//! `StatefulSet`, `DaemonSet`, `Job`, `CronJob` likewise) and the key is
//! `namespace/name` (`name` for a cluster-scoped kind). Plurals and kubectl's
//! short names are accepted (`deployments`, `deploy`, `rs`, `sts`, `ds`,
//! `cj`). The worker calls [`TimeMachine::hold_at_breakpoint`] before every
//! sync; a held sync records a [`Step::Break`] entry and waits until
//! [`TimeMachine::release`], which removes the breakpoint (one-shot: set it
//! again to hold the next sync). While held, new events for the key only
//! mark it dirty in its queue, as for any running sync.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, SystemTime};

use tokio::sync::watch;

use crate::Clock;
use crate::clock::{NotPaused, Timeline, real_now, sleep_real};
use crate::journal::{Journal, ObjectRef, Record, Step};

/// Reports how many keys a work queue holds (queued or processing);
/// `None` once the queue is gone.
pub type BusyProbe = Box<dyn Fn() -> Option<usize> + Send + Sync>;

/// The journal's actor for pause, resume, scale and step.
pub const ACTOR: &str = "time-machine";

/// How long everything must stay quiet (real time) before a step moves on.
pub const QUIET: Duration = Duration::from_millis(25);
/// How often a step looks at the queues and the journal (real time).
const POLL: Duration = Duration::from_millis(5);
/// How much later than [`POLL`] a step's own poll may wake before the
/// interval is taken for a sign of a starved machine (not quiet).
const STARVED: Duration = Duration::from_millis(10);
/// How long (real time) a step waits for the cluster to settle at one
/// instant before it gives up.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(30);

/// The clock's controls, shared by every clone of one [`crate::Clock`].
pub struct TimeMachine {
    /// The one timeline ([`crate::clock`]).
    timeline: Timeline,
    /// Where pause, resume, scale, step and breaks are recorded (the
    /// clock's journal, replaced by [`Clock::with_journal`]).
    journal: RwLock<Journal>,
    /// Every named work queue, for "every queue is empty".
    queues: Mutex<Vec<Queue>>,
    /// Breakpoints and the syncs they hold.
    breaks: Mutex<Breaks>,
    /// How many breakpoints are set: the workers' fast path (no lock when 0).
    armed: AtomicUsize,
    /// Bumped when a breakpoint is released; held syncs look again.
    released: watch::Sender<u64>,
    /// One step at a time.
    stepping: tokio::sync::Mutex<()>,
}

/// A work queue's name and its probe.
struct Queue {
    name: String,
    probe: BusyProbe,
}

#[derive(Default)]
struct Breaks {
    /// In the order they were set.
    set: Vec<Breakpoint>,
    /// `(controller, key)` of each sync waiting at a breakpoint now.
    held: Vec<(String, String)>,
}

impl std::fmt::Debug for TimeMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeMachine")
            .field("timeline", &self.timeline)
            .finish_non_exhaustive()
    }
}

impl TimeMachine {
    /// A machine on `timeline`, recording into `journal`.
    pub(crate) fn new(timeline: Timeline, journal: Journal) -> Arc<Self> {
        Arc::new(TimeMachine {
            timeline,
            journal: RwLock::new(journal),
            queues: Mutex::new(Vec::new()),
            breaks: Mutex::new(Breaks::default()),
            armed: AtomicUsize::new(0),
            released: watch::Sender::new(0),
            stepping: tokio::sync::Mutex::new(()),
        })
    }

    pub(crate) fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    pub(crate) fn set_journal(&self, journal: Journal) {
        *self.journal.write().unwrap_or_else(|p| p.into_inner()) = journal;
    }

    fn journal(&self) -> Journal {
        self.journal.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Records one entry of `step` by `actor` at the current time.
    fn record(&self, record: Record) -> crate::journal::EntryId {
        let journal = self.journal();
        if !journal.enabled() {
            return 0;
        }
        journal.record(self.timeline.now(), record)
    }

    /// Counts the work queue of `controller` in "every queue is empty"
    /// (step); `probe` answers how many keys it holds.
    pub fn register_queue(&self, controller: &str, probe: BusyProbe) {
        lock(&self.queues).push(Queue {
            name: controller.to_string(),
            probe,
        });
    }

    /// The queues holding keys now (by name, with their counts), leaving
    /// out the queues of held syncs; forgets the queues that are gone.
    pub fn busy_queues(&self) -> Vec<(String, usize)> {
        let held: Vec<String> = lock(&self.breaks).held.iter().map(|(c, _)| c.clone()).collect();
        let mut busy = Vec::new();
        lock(&self.queues).retain(|q| match (q.probe)() {
            None => false,
            Some(n) => {
                if n > 0 && !held.contains(&q.name) {
                    busy.push((q.name.clone(), n));
                }
                true
            }
        });
        busy
    }

    /// Sets a breakpoint: the next sync it matches waits until released.
    /// Setting one twice changes nothing.
    pub fn break_on(&self, breakpoint: Breakpoint) {
        let mut breaks = lock(&self.breaks);
        if !breaks.set.contains(&breakpoint) {
            breaks.set.push(breakpoint);
            self.armed.store(breaks.set.len(), Ordering::SeqCst);
        }
    }

    /// Removes a breakpoint and lets the sync it holds (if any) go on;
    /// returns whether it held one. `Err` lists the breakpoints that are set.
    pub fn release(&self, breakpoint: &Breakpoint) -> Result<bool, NoSuchBreakpoint> {
        let mut breaks = lock(&self.breaks);
        let Some(i) = breaks.set.iter().position(|b| b == breakpoint) else {
            return Err(NoSuchBreakpoint {
                breakpoint: breakpoint.to_string(),
                set: breaks.set.iter().map(ToString::to_string).collect(),
            });
        };
        breaks.set.remove(i);
        self.armed.store(breaks.set.len(), Ordering::SeqCst);
        let held = breaks.held.iter().any(|(c, k)| breakpoint.matches(c, k));
        drop(breaks);
        self.released.send_modify(|n| *n = n.wrapping_add(1));
        Ok(held)
    }

    /// The breakpoints set, as `Deployment/default/web`.
    pub fn breakpoints(&self) -> Vec<Breakpoint> {
        lock(&self.breaks).set.clone()
    }

    /// The syncs held now, as `deployment default/web`.
    pub fn held(&self) -> Vec<String> {
        lock(&self.breaks)
            .held
            .iter()
            .map(|(c, k)| format!("{c} {k}"))
            .collect()
    }

    /// Waits while a breakpoint holds `controller`'s next sync of `key`
    /// (`namespace/name` or `name`); returns at once when none matches.
    pub async fn hold_at_breakpoint(&self, controller: &str, key: &str) {
        if self.armed.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut released = self.released.subscribe();
        let breakpoint = {
            let mut breaks = lock(&self.breaks);
            let Some(b) = breaks.set.iter().find(|b| b.matches(controller, key)).cloned() else {
                return;
            };
            breaks.held.push((controller.to_string(), key.to_string()));
            b
        };
        let _held = Held {
            machine: self,
            controller,
            key,
        };
        self.record(Record {
            cause: crate::journal::current_cause(),
            step: Some(Step::Break),
            actor: controller.to_string(),
            object: Some(breakpoint.object()),
            message: format!("{controller} about to sync {key} (held at a breakpoint)"),
            ..Record::default()
        });
        loop {
            released.borrow_and_update();
            if !lock(&self.breaks).set.contains(&breakpoint) {
                return;
            }
            // The sender lives as long as `self`.
            let _ = released.changed().await;
        }
    }
}

/// A sync waiting at a breakpoint; no longer listed as held once dropped
/// (released, or the worker's task ended).
struct Held<'a> {
    machine: &'a TimeMachine,
    controller: &'a str,
    key: &'a str,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let mut breaks = lock(&self.machine.breaks);
        if let Some(i) = breaks
            .held
            .iter()
            .position(|(c, k)| c == self.controller && k == self.key)
        {
            breaks.held.remove(i);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where a sync stops: a kind (`Deployment`), a namespace (empty for a
/// cluster-scoped kind) and a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breakpoint {
    /// The kind, as the API names it (`Deployment`).
    pub kind: String,
    /// The namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

/// The kinds whose controllers are named after them, with their plurals
/// and kubectl's short names.
const KINDS: &[(&str, &[&str])] = &[
    ("Deployment", &["deployment", "deployments", "deploy"]),
    ("ReplicaSet", &["replicaset", "replicasets", "rs"]),
    ("StatefulSet", &["statefulset", "statefulsets", "sts"]),
    ("DaemonSet", &["daemonset", "daemonsets", "ds"]),
    ("Job", &["job", "jobs"]),
    ("CronJob", &["cronjob", "cronjobs", "cj"]),
];

impl Breakpoint {
    /// A breakpoint on `kind` (a kind, its plural or a short name, any case;
    /// a `.group` suffix is dropped) `namespace/name`.
    pub fn new(kind: &str, namespace: &str, name: &str) -> Result<Self, InvalidBreakpoint> {
        let kind = kind.split('.').next().unwrap_or_default().trim();
        if kind.is_empty() {
            return Err(InvalidBreakpoint(
                "a breakpoint needs a kind, e.g. Deployment".into(),
            ));
        }
        if name.trim().is_empty() {
            return Err(InvalidBreakpoint(format!(
                "a breakpoint needs the name of the {kind} to hold"
            )));
        }
        let lower = kind.to_ascii_lowercase();
        let kind = KINDS
            .iter()
            .find(|(_, names)| names.contains(&lower.as_str()))
            .map(|(k, _)| k.to_string())
            .unwrap_or_else(|| kind.to_string());
        Ok(Breakpoint {
            kind,
            namespace: namespace.trim().to_string(),
            name: name.trim().to_string(),
        })
    }

    /// The name of the controller whose syncs it holds: the kind in lower case.
    pub fn controller(&self) -> String {
        self.kind.to_ascii_lowercase()
    }

    /// The work queue key it holds: `namespace/name`, or `name`.
    pub fn key(&self) -> String {
        match self.namespace.as_str() {
            "" => self.name.clone(),
            ns => format!("{ns}/{}", self.name),
        }
    }

    /// Whether it holds `controller`'s sync of `key`.
    pub fn matches(&self, controller: &str, key: &str) -> bool {
        controller == self.controller() && key == self.key()
    }

    fn object(&self) -> ObjectRef {
        ObjectRef::new(&self.kind, &self.namespace, &self.name)
    }
}

/// `Deployment/default/web` (`Node/worker-1` when cluster-scoped).
impl std::fmt::Display for Breakpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.kind, self.key())
    }
}

/// A breakpoint without a kind or a name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidBreakpoint(pub String);

/// A release of a breakpoint that is not set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no breakpoint on {breakpoint} (set: {})", if set.is_empty() { "none".to_string() } else { set.join(", ") })]
pub struct NoSuchBreakpoint {
    /// The one asked for.
    pub breakpoint: String,
    /// The ones set.
    pub set: Vec<String>,
}

/// Why a step did not happen or did not finish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// Steps move a paused clock only.
    #[error("the clock is running: pause it first (`miniplane time pause`), then step")]
    NotPaused,
    /// Another step is under way.
    #[error("a step is already under way: wait for it to return")]
    AlreadyStepping,
    /// The clock was resumed while the step ran; it runs on from where the
    /// step had brought it.
    #[error("the clock was resumed during the step, at {at}")]
    Resumed {
        /// RFC 3339.
        at: String,
    },
    /// The cluster kept busy at one instant for [`SETTLE_LIMIT`].
    #[error(
        "the cluster did not settle at {at} within {limit:?} of real time (busy: {busy}); \
         the clock stays paused there"
    )]
    NotSettled {
        /// RFC 3339.
        at: String,
        /// What was busy: queues with their key counts, due sleepers, the journal.
        busy: String,
        /// [`SETTLE_LIMIT`].
        limit: Duration,
    },
}

impl From<NotPaused> for StepError {
    fn from(_: NotPaused) -> Self {
        StepError::NotPaused
    }
}

/// What one step did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stepped {
    /// Where the clock stood.
    pub from: SystemTime,
    /// Where it stands now (`from + by`).
    pub to: SystemTime,
    /// How many sleepers' deadlines it stopped at on the way.
    pub stops: usize,
}

/// The time machine's state, as `/debug/time` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeStatus {
    /// The simulated time now.
    pub now: SystemTime,
    /// Whether it stands still.
    pub paused: bool,
    /// Simulated seconds per real second.
    pub scale: f64,
    /// The breakpoints set, `Deployment/default/web`.
    pub breakpoints: Vec<String>,
    /// The syncs held, `deployment default/web`.
    pub held: Vec<String>,
}

impl Clock {
    /// Pauses and records it; returns the time it stands at.
    pub fn pause_recorded(&self) -> SystemTime {
        let at = self.pause();
        self.record_time(format!("paused at {}", rfc3339(at)));
        at
    }

    /// Resumes and records it; returns the time it continues from.
    pub fn resume_recorded(&self) -> SystemTime {
        let at = self.resume();
        self.record_time(format!("resumed at {} (scale {})", rfc3339(at), self.scale()));
        at
    }

    /// Changes the scale and records it.
    pub fn set_scale_recorded(&self, scale: f64) -> Result<SystemTime, crate::clock::InvalidScale> {
        let before = self.scale();
        let at = self.set_scale(scale)?;
        self.record_time(format!("scale {before} → {scale} at {}", rfc3339(at)));
        Ok(at)
    }

    /// Moves a paused clock forward by `by`, stopping at every sleeper's
    /// deadline on the way and waiting at each for the cluster to settle
    /// (see the module docs); records the step.
    pub async fn step(&self, by: Duration) -> Result<Stepped, StepError> {
        let Ok(_one) = self.time_machine().stepping.try_lock() else {
            return Err(StepError::AlreadyStepping);
        };
        if !self.is_paused() {
            return Err(StepError::NotPaused);
        }
        let from = self.now();
        let target = from + by;
        let mut stops = 0;
        loop {
            self.settle().await?;
            match self.next_deadline_after(self.now()) {
                Some(next) if next <= target => {
                    self.advance_to(next).map_err(|_| self.resumed())?;
                    stops += 1;
                }
                _ => break,
            }
        }
        self.advance_to(target).map_err(|_| self.resumed())?;
        self.settle().await?;
        self.record_time(format!(
            "stepped {}: {} → {} ({stops} stops)",
            go_duration(by),
            rfc3339(from),
            rfc3339(target)
        ));
        Ok(Stepped {
            from,
            to: target,
            stops,
        })
    }

    /// The time machine's state now.
    pub fn time_status(&self) -> TimeStatus {
        let machine = self.time_machine();
        TimeStatus {
            now: self.now(),
            paused: self.is_paused(),
            scale: self.scale(),
            breakpoints: machine.breakpoints().iter().map(ToString::to_string).collect(),
            held: machine.held(),
        }
    }

    fn resumed(&self) -> StepError {
        StepError::Resumed {
            at: rfc3339(self.now()),
        }
    }

    fn record_time(&self, message: String) {
        self.time_machine().record(Record {
            step: Some(Step::Time),
            actor: ACTOR.to_string(),
            message,
            ..Record::default()
        });
    }

    /// Waits until the cluster is quiescent (module docs) at the current
    /// instant, for at most [`SETTLE_LIMIT`].
    async fn settle(&self) -> Result<(), StepError> {
        let machine = self.time_machine();
        let started = real_now();
        let mut quiet_since = started;
        let mut polled = started;
        let mut last_entry = machine.journal().next_id();
        loop {
            sleep_real(POLL).await;
            if !self.is_paused() {
                return Err(self.resumed());
            }
            let busy = machine.busy_queues();
            let due = self.sleepers_due_by(self.now());
            let entry = machine.journal().next_id();
            let now = real_now();
            // Woken late: the machine is too busy to run this task on time,
            // so the others may not have run either. Quiet that nobody had
            // the chance to break does not count.
            let starved = now.duration_since(polled) > POLL + STARVED;
            polled = now;
            if busy.is_empty() && due == 0 && entry == last_entry && !starved {
                if now.duration_since(quiet_since) >= QUIET {
                    return Ok(());
                }
            } else {
                quiet_since = now;
                last_entry = entry;
            }
            if now.duration_since(started) >= SETTLE_LIMIT {
                return Err(StepError::NotSettled {
                    at: rfc3339(self.now()),
                    busy: describe_busy(&busy, due),
                    limit: SETTLE_LIMIT,
                });
            }
        }
    }
}

/// `deployment (2 keys), 1 sleeper due`, or `the journal` when only new
/// entries kept coming.
fn describe_busy(queues: &[(String, usize)], due: usize) -> String {
    let mut parts: Vec<String> = queues
        .iter()
        .map(|(name, n)| format!("{name} ({n} key{})", if *n == 1 { "" } else { "s" }))
        .collect();
    if due > 0 {
        parts.push(format!("{due} sleeper{} due", if due == 1 { "" } else { "s" }));
    }
    if parts.is_empty() {
        parts.push("new journal entries kept coming".to_string());
    }
    parts.join(", ")
}

/// `2026-12-02T15:04:05Z` (fractions of a second when there are some).
pub fn rfc3339(at: SystemTime) -> String {
    match jiff::Timestamp::try_from(at) {
        Ok(t) => t.to_string(),
        Err(_) => format!("{at:?}"),
    }
}

/// Parses a positive Go-style duration (`10s`, `1m30s`, `500ms`, `1h`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    s.parse::<jiff::SignedDuration>()
        .ok()
        .and_then(|d| Duration::try_from(d).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?} is not a positive duration such as 1h, 30m, 90s or 500ms"))
}

/// A duration as Go prints it: `10s`, `1m30s`, `1h0m0s`, `500ms`, `1.5s`.
pub fn go_duration(d: Duration) -> String {
    let secs = d.as_secs();
    let nanos = d.subsec_nanos();
    if secs == 0 {
        return match nanos {
            0 => "0s".to_string(),
            n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
            n if n >= 1_000_000 => format!("{}ms", trim_fraction(n as f64 / 1e6)),
            n if n >= 1_000 => format!("{}µs", trim_fraction(n as f64 / 1e3)),
            n => format!("{n}ns"),
        };
    }
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let s = match nanos {
        0 => s.to_string(),
        n => format!("{s}.{}", format!("{n:09}").trim_end_matches('0')),
    };
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, m) => format!("{m}m{s}s"),
        (h, m) => format!("{h}h{m}m{s}s"),
    }
}

fn trim_fraction(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    const SEC: Duration = Duration::from_secs(1);

    fn epoch() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000)
    }

    #[test]
    fn durations_parse_and_print_as_go() {
        assert_eq!(parse_duration("10s"), Ok(10 * SEC));
        assert_eq!(parse_duration("1m30s"), Ok(90 * SEC));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1h"), Ok(3600 * SEC));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("-5s").is_err());
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .contains("\"soon\" is not a positive duration")
        );
        assert_eq!(go_duration(10 * SEC), "10s");
        assert_eq!(go_duration(90 * SEC), "1m30s");
        assert_eq!(go_duration(3600 * SEC), "1h0m0s");
        assert_eq!(go_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn a_breakpoint_names_its_controller_and_key() {
        let b = Breakpoint::new("deploy", "default", "web").unwrap();
        assert_eq!(b.kind, "Deployment");
        assert_eq!(b.to_string(), "Deployment/default/web");
        assert!(b.matches("deployment", "default/web"));
        assert!(!b.matches("replicaset", "default/web"));
        assert!(!b.matches("deployment", "other/web"));
        let rs = Breakpoint::new("replicasets.apps", "ns", "x").unwrap();
        assert_eq!(
            (rs.kind.as_str(), rs.controller()),
            ("ReplicaSet", "replicaset".to_string())
        );
        let node = Breakpoint::new("Node", "", "n1").unwrap();
        assert!(node.matches("node", "n1"));
        assert_eq!(node.to_string(), "Node/n1");
        assert!(Breakpoint::new("", "default", "web").is_err());
        assert!(Breakpoint::new("Deployment", "default", " ").is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_step_needs_a_paused_clock() {
        let clock = Clock::starting_at(epoch(), 1.0);
        assert_eq!(clock.step(SEC).await, Err(StepError::NotPaused));
    }

    /// A "controller": a loop that sleeps `period` and counts its rounds.
    fn ticker(clock: &Clock, period: Duration, ticks: Arc<Mutex<Vec<SystemTime>>>) {
        let clock = clock.clone();
        tokio::spawn(async move {
            loop {
                clock.sleep(period).await;
                ticks.lock().unwrap().push(clock.now());
            }
        });
    }

    #[tokio::test(start_paused = true)]
    async fn a_step_stops_at_every_deadline_on_the_way() {
        let clock = Clock::starting_at(epoch(), 1.0);
        clock.pause_recorded();
        let (three, four) = (Arc::default(), Arc::default());
        ticker(&clock, 3 * SEC, Arc::clone(&three));
        ticker(&clock, 4 * SEC, Arc::clone(&four));
        tokio::task::yield_now().await;
        let stepped = clock.step(10 * SEC).await.unwrap();
        assert_eq!(stepped.to, epoch() + 10 * SEC);
        assert_eq!(clock.now(), epoch() + 10 * SEC);
        assert!(clock.is_paused());
        let at = |s: u32| epoch() + s * SEC;
        assert_eq!(*three.lock().unwrap(), vec![at(3), at(6), at(9)]);
        assert_eq!(*four.lock().unwrap(), vec![at(4), at(8)]);
        assert_eq!(stepped.stops, 5);
        let steps: Vec<_> = clock
            .journal()
            .since(0)
            .into_iter()
            .filter(|e| e.step == Step::Time)
            .map(|e| e.message)
            .collect();
        assert_eq!(steps.len(), 2);
        assert!(steps[1].starts_with("stepped 10s: "), "{steps:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn ten_steps_of_one_second_reach_what_one_step_of_ten_does() {
        let run = async |steps: &[u32]| {
            let clock = Clock::starting_at(epoch(), 1.0);
            clock.pause();
            let ticks = Arc::default();
            ticker(&clock, Duration::from_millis(700), Arc::clone(&ticks));
            tokio::task::yield_now().await;
            for s in steps {
                clock.step(*s * SEC).await.unwrap();
            }
            ticks.lock().unwrap().clone()
        };
        let one = run(&[10]).await;
        let ten = run(&[1; 10]).await;
        assert_eq!(one.len(), 14);
        assert_eq!(one, ten);
    }

    #[tokio::test(start_paused = true)]
    async fn a_step_waits_for_a_busy_queue() {
        let clock = Clock::starting_at(epoch(), 1.0);
        clock.pause();
        let busy = Arc::new(AtomicBool::new(true));
        let probe = Arc::clone(&busy);
        clock.time_machine().register_queue(
            "deployment",
            Box::new(move || Some(probe.load(Ordering::SeqCst) as usize)),
        );
        let step = tokio::spawn({
            let clock = clock.clone();
            async move { clock.step(SEC).await }
        });
        sleep_real(Duration::from_secs(1)).await;
        assert!(!step.is_finished(), "the queue holds a key");
        assert_eq!(clock.now(), epoch());
        busy.store(false, Ordering::SeqCst);
        assert!(step.await.unwrap().is_ok());
        assert_eq!(clock.now(), epoch() + SEC);
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_sync_waits_for_release_and_its_queue_counts_as_idle() {
        let clock = Clock::starting_at(epoch(), 1.0);
        clock.pause();
        let machine = clock.time_machine();
        machine.register_queue("deployment", Box::new(|| Some(2)));
        let web = Breakpoint::new("Deployment", "default", "web").unwrap();
        machine.break_on(web.clone());
        let synced = Arc::new(AtomicBool::new(false));
        let worker = tokio::spawn({
            let (clock, synced) = (clock.clone(), Arc::clone(&synced));
            async move {
                clock
                    .time_machine()
                    .hold_at_breakpoint("deployment", "default/other")
                    .await;
                clock
                    .time_machine()
                    .hold_at_breakpoint("deployment", "default/web")
                    .await;
                synced.store(true, Ordering::SeqCst);
            }
        });
        sleep_real(SEC).await;
        assert!(!synced.load(Ordering::SeqCst));
        let status = clock.time_status();
        assert_eq!(status.breakpoints, vec!["Deployment/default/web"]);
        assert_eq!(status.held, vec!["deployment default/web"]);
        let breaks: Vec<_> = clock
            .journal()
            .since(0)
            .into_iter()
            .filter(|e| e.step == Step::Break)
            .collect();
        assert_eq!(
            breaks[0].message,
            "deployment about to sync default/web (held at a breakpoint)"
        );
        clock
            .step(SEC)
            .await
            .expect("a held queue does not stop the step");
        assert_eq!(machine.release(&web), Ok(true));
        worker.await.unwrap();
        assert!(synced.load(Ordering::SeqCst));
        assert!(clock.time_status().held.is_empty());
        let err = machine.release(&web).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no breakpoint on Deployment/default/web (set: none)"
        );
    }
}
