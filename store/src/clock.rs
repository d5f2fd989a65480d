//! The one clock of the process.
//!
//! Every timestamp written to an object and every delay a component waits
//! comes from a [`Clock`]. It is a fixed epoch plus the *tokio* time elapsed
//! since the clock was made, multiplied by a time scale:
//!
//! ```text
//! now() = epoch + (tokio::time::Instant::now() - start) * scale
//! ```
//!
//! Because it reads tokio's clock, a test on paused tokio time
//! (`#[tokio::test(start_paused = true)]`) moves simulated wall time exactly
//! as far as it advances tokio time, and `--time-scale 10` makes ten
//! simulated seconds pass per real second.
//!
//! This file is the only place allowed to read the system wall clock
//! (see `clippy.toml`, `disallowed-methods`).

use std::time::{Duration, SystemTime};

use std::sync::Arc;

use crate::journal::Journal;
use crate::time::TimeMachine;

/// A cheap-to-clone handle on simulated time.
#[derive(Clone, Debug)]
pub struct Clock {
    /// Simulated wall time at `start`.
    epoch: SystemTime,
    /// The tokio instant the clock was made at.
    start: tokio::time::Instant,
    /// Simulated seconds per real second (1.0 = real time).
    scale: f64,
    /// What happened on this clock, and why ([`crate::journal`]): the clock
    /// is the one handle every component of a cluster holds.
    journal: Journal,
    /// Pause, scale, step and breakpoints ([`crate::time`]).
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
    pub fn starting_at(epoch: SystemTime, scale: f64) -> Self {
        assert!(scale.is_finite() && scale > 0.0, "time scale must be > 0");
        Clock {
            epoch,
            start: tokio::time::Instant::now(),
            scale,
            journal: Journal::new(crate::journal::DEFAULT_CAPACITY),
            machine: TimeMachine::new(),
        }
    }

    /// The same clock recording into `journal` (`--journal-size`).
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = journal;
        self
    }

    /// The time machine's controls.
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
        let real = tokio::time::Instant::now().saturating_duration_since(self.start);
        self.epoch + real.mul_f64(self.scale)
    }

    /// Simulated seconds per real second.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The real (tokio) duration that `simulated` takes at this clock's scale.
    pub fn real_duration(&self, simulated: Duration) -> Duration {
        simulated.div_f64(self.scale)
    }

    /// Waits until `simulated` has passed on this clock.
    pub async fn sleep(&self, simulated: Duration) {
        #[allow(clippy::disallowed_methods)] // the clock's own timer
        tokio::time::sleep(self.real_duration(simulated)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn scaled_time_follows_paused_tokio_time() {
        let epoch = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let clock = Clock::starting_at(epoch, 10.0);
        assert_eq!(clock.now(), epoch);
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(clock.now(), epoch + Duration::from_secs(30));
        clock.sleep(Duration::from_secs(20)).await; // 2 real seconds
        assert_eq!(clock.now(), epoch + Duration::from_secs(50));
    }
}
