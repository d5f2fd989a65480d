//! The one clock of the process.
//!
//! Every timestamp written to an object and every delay a component waits
//! comes from a [`Clock`]. While it runs, it is the simulated time of its
//! last change of pace plus the *tokio* time elapsed since, multiplied by a
//! time scale:
//!
//! ```text
//! now() = at + (tokio::time::Instant::now() - since) * scale     (running)
//! now() = at                                                     (paused)
//! ```
//!
//! `at` and `since` start as the epoch and the moment the clock was made,
//! and move together whenever the pace changes ([`Clock::pause`],
//! [`Clock::resume`], [`Clock::set_scale`]), so `now()` never jumps; only
//! [`Clock::advance_to`] (the time machine's step) moves `at` forward while
//! paused.
//!
//! Because it reads tokio's clock, a test on paused tokio time
//! (`#[tokio::test(start_paused = true)]`) moves simulated wall time exactly
//! as far as it advances tokio time, and `--time-scale 10` makes ten
//! simulated seconds pass per real second.
//!
//! # Sleepers
//!
//! [`Clock::sleep_until`] registers its deadline (the time machine steps
//! from one deadline to the next) and waits for whichever comes first: the
//! tokio timer for the real time the deadline is away at the current scale,
//! or a change of pace, after which it computes that again. A sleeper on a
//! paused clock waits for the change only.
//!
//! # Cost
//!
//! `now()` is called for every timestamp, trace line and delay: it takes an
//! uncontended read lock on the pace (a few nanoseconds) and reads tokio's
//! clock. Only the time machine's controls take the write lock.
//!
//! This file is the only place allowed to read the system wall clock or
//! sleep on tokio's (see `clippy.toml`, `disallowed-methods`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use tokio::sync::watch;

use crate::journal::Journal;
use crate::time::TimeMachine;

/// A cheap-to-clone handle on simulated time. Every clone shares one
/// timeline: pausing one clone pauses them all.
#[derive(Clone, Debug)]
pub struct Clock {
    /// What happened on this clock, and why ([`crate::journal`]): the clock
    /// is the one handle every component of a cluster holds.
    journal: Journal,
    /// The timeline, pause, scale, step and breakpoints ([`crate::time`]).
    machine: Arc<TimeMachine>,
}

impl Clock {
    /// Real time: the system wall clock now, running at scale 1.
    pub fn system() -> Self {
        Self::scaled(1.0)
    }

    /// Starts at the system wall clock now and runs `scale` times faster.
    ///
    /// # Panics
    /// If `scale` is not a finite number greater than zero (the CLI checks it).
    pub fn scaled(scale: f64) -> Self {
        #[allow(clippy::disallowed_methods)] // the one wall-clock read of the process
        let epoch = SystemTime::now();
        Self::starting_at(epoch, scale)
    }

    /// Starts at `epoch` (a fixed time, for deterministic tests).
    ///
    /// # Panics
    /// If `scale` is not a finite number greater than zero.
    pub fn starting_at(epoch: SystemTime, scale: f64) -> Self {
        assert!(valid_scale(scale), "time scale must be > 0");
        let journal = Journal::new(crate::journal::DEFAULT_CAPACITY);
        Clock {
            machine: TimeMachine::new(Timeline::new(epoch, scale), journal.clone()),
            journal,
        }
    }

    /// The same clock recording into `journal` (`--journal-size`). Call it
    /// when making the clock, before handing out clones: the clones made
    /// before keep the old journal.
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.machine.set_journal(journal.clone());
        self.journal = journal;
        self
    }

    /// The time machine's controls: breakpoints, step, the queue probes.
    pub fn time_machine(&self) -> &TimeMachine {
        &self.machine
    }

    /// Records a plan's decision in the journal, caused by the running sync
    /// ([`crate::journal::current_cause`]): `function` is the upstream
    /// function it mirrors, `message` the numbers (built only when the
    /// journal records):
    ///
    /// ```ignore
    /// clock.decide("deployment", "reconcileOldReplicaSets", Some(ObjectRef::new("Deployment", ns, name)),
    ///     || format!("maxScaledDown = allPods {all} − minAvailable {min} − newRSUnavailable {u} = {n}"));
    /// ```
    pub fn decide(
        &self,
        controller: &str,
        function: &str,
        object: Option<crate::journal::ObjectRef>,
        message: impl FnOnce() -> String,
    ) -> crate::journal::EntryId {
        if !self.journal.enabled() {
            return 0;
        }
        let record = crate::journal::Record {
            cause: crate::journal::current_cause(),
            step: Some(crate::journal::Step::Decision),
            actor: controller.to_string(),
            object,
            function: function.to_string(),
            message: message(),
            ..Default::default()
        };
        self.journal.record(self.now(), record)
    }

    /// The cluster's causal journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The current simulated wall time.
    pub fn now(&self) -> SystemTime {
        self.timeline().now()
    }

    /// Simulated seconds per real second (also while paused: the scale the
    /// clock resumes at).
    pub fn scale(&self) -> f64 {
        self.timeline().pace().scale
    }

    /// Whether simulated time stands still ([`Clock::pause`]).
    pub fn is_paused(&self) -> bool {
        self.timeline().pace().paused
    }

    /// The real (tokio) duration that `simulated` takes at the current
    /// scale (while paused: once resumed).
    pub fn real_duration(&self, simulated: Duration) -> Duration {
        simulated.div_f64(self.scale())
    }

    /// Waits until `simulated` has passed on this clock.
    pub async fn sleep(&self, simulated: Duration) {
        let deadline = self.now() + simulated;
        self.sleep_until(deadline).await;
    }

    /// Waits until this clock reads `deadline` or later: through pauses,
    /// changes of scale and steps (see the module docs).
    pub async fn sleep_until(&self, deadline: SystemTime) {
        let timeline = self.timeline();
        // Registered while this future lives: a sleep dropped by a `select!`
        // is no pending deadline any more.
        let _sleeper = timeline.register(deadline);
        let mut changed = timeline.changed.subscribe();
        loop {
            // Mark the current pace as seen *before* reading it, so that a
            // change after the read wakes the wait below.
            changed.borrow_and_update();
            let pace = timeline.pace();
            let now = pace.now();
            if now >= deadline {
                return;
            }
            if pace.paused {
                // The sender lives as long as the timeline we hold.
                let _ = changed.changed().await;
                continue;
            }
            let real = deadline
                .duration_since(now)
                .unwrap_or_default()
                .div_f64(pace.scale);
            #[allow(clippy::disallowed_methods)] // the clock's own timer
            let timer = tokio::time::sleep(real);
            tokio::select! {
                () = timer => {
                    // The timer was computed at this pace: trust it (a
                    // rounding nanosecond short of the deadline is not a
                    // reason to sleep again), unless the pace changed.
                    if !changed.has_changed().unwrap_or(false) {
                        return;
                    }
                }
                _ = changed.changed() => {}
            }
        }
    }

    /// Stops simulated time; returns the time it stands at. Sleepers stay
    /// asleep until [`Clock::resume`] or a step reaches their deadline.
    /// Pausing a paused clock changes nothing.
    pub fn pause(&self) -> SystemTime {
        self.timeline().change(|pace| {
            pace.rebase();
            pace.paused = true;
        })
    }

    /// Lets simulated time run again from where it stands, at the current
    /// scale; returns that time.
    pub fn resume(&self) -> SystemTime {
        self.timeline().change(|pace| {
            pace.rebase();
            pace.paused = false;
        })
    }

    /// Runs simulated time `scale` times faster than real time from now on
    /// (continuously: `now()` does not jump); returns the time of the change.
    pub fn set_scale(&self, scale: f64) -> Result<SystemTime, InvalidScale> {
        if !valid_scale(scale) {
            return Err(InvalidScale(scale));
        }
        Ok(self.timeline().change(|pace| {
            pace.rebase();
            pace.scale = scale;
        }))
    }

    /// Moves a paused clock forward to `to` and wakes the sleepers due by
    /// then (the time machine's step; [`TimeMachine::step`] is the careful
    /// way). Fails when the clock runs; an earlier `to` changes nothing.
    pub fn advance_to(&self, to: SystemTime) -> Result<SystemTime, NotPaused> {
        let mut result = Ok(to);
        self.timeline().change(|pace| {
            if !pace.paused {
                result = Err(NotPaused);
            } else if to > pace.at {
                pace.at = to;
            }
        });
        result
    }

    /// The earliest deadline of a sleeper waiting now that is after `after`.
    pub fn next_deadline_after(&self, after: SystemTime) -> Option<SystemTime> {
        let sleepers = self.timeline().sleepers();
        sleepers
            .range((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded))
            .next()
            .map(|(at, _)| *at)
    }

    /// How many sleepers wait for a deadline at or before `at` (they are due
    /// and about to wake).
    pub fn sleepers_due_by(&self, at: SystemTime) -> usize {
        let sleepers = self.timeline().sleepers();
        sleepers.range(..=at).map(|(_, n)| n).sum()
    }

    fn timeline(&self) -> &Timeline {
        self.machine.timeline()
    }
}

/// Waits `real` on tokio's clock, whatever the simulated clock does: the
/// time machine's own polling (it moves simulated time, so it cannot wait
/// on it).
pub(crate) async fn sleep_real(real: Duration) {
    #[allow(clippy::disallowed_methods)] // real time on purpose (see above)
    tokio::time::sleep(real).await;
}

/// Now on tokio's clock (for the time machine's real-time bounds).
pub(crate) fn real_now() -> tokio::time::Instant {
    tokio::time::Instant::now()
}

/// A scale that is not a finite number greater than zero.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("time scale must be a number greater than 0, not {0}")]
pub struct InvalidScale(pub f64);

/// A step asked of a running clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the clock is running: pause it first (`miniplane time pause`)")]
pub struct NotPaused;

fn valid_scale(scale: f64) -> bool {
    scale.is_finite() && scale > 0.0
}

/// The simulated timeline every clone of one clock shares: its pace and
/// the deadlines its sleepers wait for.
#[derive(Debug)]
pub(crate) struct Timeline {
    /// Read on every `now()`; written by pause, resume, scale and step. A std
    /// lock, never held across an `.await`.
    pace: RwLock<Pace>,
    /// The deadlines of the sleepers waiting now, and how many wait for
    /// each (a sleeper adds itself when it starts and removes itself when
    /// dropped).
    sleepers: Mutex<BTreeMap<SystemTime, usize>>,
    /// Bumped on every change of pace; every sleeper holds a receiver and
    /// computes its wait again.
    changed: watch::Sender<u64>,
}

/// How simulated time moves.
#[derive(Clone, Copy, Debug)]
struct Pace {
    /// Simulated time at `since`.
    at: SystemTime,
    /// The tokio instant of the last change of pace.
    since: tokio::time::Instant,
    /// Simulated seconds per real second.
    scale: f64,
    /// Whether time stands at `at`.
    paused: bool,
}

impl Pace {
    fn now(&self) -> SystemTime {
        if self.paused {
            return self.at;
        }
        let real = tokio::time::Instant::now().saturating_duration_since(self.since);
        self.at + real.mul_f64(self.scale)
    }

    /// Makes `at`/`since` the present, so the next change of pace starts here.
    fn rebase(&mut self) {
        self.at = self.now();
        self.since = tokio::time::Instant::now();
    }
}

impl Timeline {
    fn new(epoch: SystemTime, scale: f64) -> Self {
        Timeline {
            pace: RwLock::new(Pace {
                at: epoch,
                since: tokio::time::Instant::now(),
                scale,
                paused: false,
            }),
            sleepers: Mutex::new(BTreeMap::new()),
            changed: watch::Sender::new(0),
        }
    }

    fn pace(&self) -> Pace {
        *self.pace.read().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn now(&self) -> SystemTime {
        self.pace().now()
    }

    /// Applies `f` to the pace, wakes every sleeper to look again; returns
    /// the time after the change.
    fn change(&self, f: impl FnOnce(&mut Pace)) -> SystemTime {
        let now = {
            let mut pace = self.pace.write().unwrap_or_else(|p| p.into_inner());
            f(&mut pace);
            pace.now()
        };
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        now
    }

    fn sleepers(&self) -> std::sync::MutexGuard<'_, BTreeMap<SystemTime, usize>> {
        self.sleepers.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn register(&self, deadline: SystemTime) -> Sleeper<'_> {
        *self.sleepers().entry(deadline).or_insert(0) += 1;
        Sleeper {
            timeline: self,
            deadline,
        }
    }
}

/// One pending deadline; removed when the sleep ends or is dropped.
struct Sleeper<'a> {
    timeline: &'a Timeline,
    deadline: SystemTime,
}

impl Drop for Sleeper<'_> {
    fn drop(&mut self) {
        let mut sleepers = self.timeline.sleepers();
        if let Some(n) = sleepers.get_mut(&self.deadline) {
            *n -= 1;
            if *n == 0 {
                sleepers.remove(&self.deadline);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    const SEC: Duration = Duration::from_secs(1);

    fn epoch() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000)
    }

    /// Lets spawned tasks run until they wait again.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn scaled_time_follows_paused_tokio_time() {
        let clock = Clock::starting_at(epoch(), 10.0);
        assert_eq!(clock.now(), epoch());
        tokio::time::advance(3 * SEC).await;
        assert_eq!(clock.now(), epoch() + 30 * SEC);
        clock.sleep(20 * SEC).await; // 2 real seconds
        assert_eq!(clock.now(), epoch() + 50 * SEC);
    }

    #[tokio::test(start_paused = true)]
    async fn pause_stops_now_and_resume_continues_without_a_jump() {
        let clock = Clock::starting_at(epoch(), 1.0);
        let other = clock.clone();
        tokio::time::advance(5 * SEC).await;
        assert_eq!(clock.pause(), epoch() + 5 * SEC);
        assert!(other.is_paused(), "every clone shares the timeline");
        tokio::time::advance(100 * SEC).await;
        assert_eq!(other.now(), epoch() + 5 * SEC);
        assert_eq!(clock.resume(), epoch() + 5 * SEC);
        tokio::time::advance(2 * SEC).await;
        assert_eq!(other.now(), epoch() + 7 * SEC);
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_scale_applies_from_now_on() {
        let clock = Clock::starting_at(epoch(), 1.0);
        tokio::time::advance(10 * SEC).await;
        assert_eq!(clock.set_scale(60.0), Ok(epoch() + 10 * SEC));
        tokio::time::advance(SEC).await;
        assert_eq!(clock.now(), epoch() + 70 * SEC);
        assert_eq!(clock.real_duration(120 * SEC), 2 * SEC);
        assert_eq!(clock.set_scale(0.0), Err(InvalidScale(0.0)));
        assert_eq!(clock.set_scale(f64::NAN).map_err(|e| e.0.is_nan()), Err(true));
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleeper_on_a_paused_clock_stays_asleep_until_resumed() {
        let clock = Clock::starting_at(epoch(), 1.0);
        clock.pause();
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move {
                clock.sleep(10 * SEC).await;
                clock.now()
            }
        });
        sleep_real(3600 * SEC).await;
        assert!(
            !sleeper.is_finished(),
            "paused: an hour of real time is no simulated second"
        );
        clock.resume();
        let woke = sleeper.await.unwrap();
        assert_eq!(woke, epoch() + 10 * SEC);
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleeper_wakes_at_its_simulated_deadline_after_a_change_of_scale() {
        let clock = Clock::starting_at(epoch(), 1.0);
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move {
                clock.sleep(100 * SEC).await;
                (clock.now(), tokio::time::Instant::now())
            }
        });
        settle().await;
        let start = tokio::time::Instant::now();
        tokio::time::advance(10 * SEC).await; // 10 simulated seconds at scale 1
        clock.set_scale(10.0).unwrap(); // the other 90 take 9 real seconds
        let (woke, real) = sleeper.await.unwrap();
        assert_eq!(woke, epoch() + 100 * SEC);
        assert_eq!(real - start, 19 * SEC);
    }

    #[tokio::test(start_paused = true)]
    async fn advancing_a_paused_clock_wakes_the_sleepers_due_in_deadline_order() {
        let clock = Clock::starting_at(epoch(), 1.0);
        clock.pause();
        let woken = Arc::new(Mutex::new(Vec::new()));
        for secs in [3u32, 1, 2, 7] {
            let (clock, woken) = (clock.clone(), woken.clone());
            tokio::spawn(async move {
                clock.sleep(secs * SEC).await;
                woken.lock().unwrap().push((secs, clock.now()));
            });
        }
        settle().await;
        assert_eq!(clock.next_deadline_after(clock.now()), Some(epoch() + SEC));
        let mut steps = 0;
        while let Some(next) = clock.next_deadline_after(clock.now()) {
            if next > epoch() + 5 * SEC {
                break;
            }
            clock.advance_to(next).unwrap();
            settle().await;
            steps += 1;
        }
        assert_eq!(steps, 3);
        let woken = woken.lock().unwrap().clone();
        let at = |s: u32| epoch() + s * SEC;
        assert_eq!(woken, vec![(1, at(1)), (2, at(2)), (3, at(3))]);
        assert_eq!(
            clock.next_deadline_after(clock.now()),
            Some(at(7)),
            "7 s is still pending"
        );
        assert_eq!(clock.sleepers_due_by(at(5)), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn advance_needs_a_paused_clock_and_a_dropped_sleep_is_no_deadline() {
        let clock = Clock::starting_at(epoch(), 1.0);
        assert_eq!(clock.advance_to(epoch() + SEC), Err(NotPaused));
        let mut sleep = Box::pin(clock.sleep(5 * SEC));
        assert!(sleep.as_mut().now_or_never().is_none());
        assert_eq!(clock.next_deadline_after(epoch()), Some(epoch() + 5 * SEC));
        drop(sleep);
        assert_eq!(clock.next_deadline_after(epoch()), None);
    }

    #[tokio::test(start_paused = true)]
    async fn sleeping_until_a_past_deadline_returns_at_once() {
        let clock = Clock::starting_at(epoch(), 1.0);
        clock.pause();
        assert!(clock.sleep_until(epoch()).now_or_never().is_some());
        assert!(clock.sleep(Duration::ZERO).now_or_never().is_some());
    }
}
