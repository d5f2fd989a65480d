//! The pod lifecycle of a simulated kubelet, as a state table.
//!
//! Upstream, the kubelet's pod worker runs `SyncPod` whenever something happens
//! (PLEG relist every second, probe results, a periodic resync): it creates the
//! sandbox, pulls images, creates and starts containers, restarts exited ones
//! under a per-container exponential back-off, and writes a status generated
//! from what the runtime reports (`generateAPIPodStatus`, `getPhase`,
//! `GeneratePodReadyCondition`). Here each container is a small state machine
//! whose state is read back from the pod's own `status.containerStatuses`, so
//! [`next`] is a pure function of the pod, its [`Behaviour`] and `now`:
//!
//! | container state (as written) | due at | next state | kubelet Events |
//! |---|---|---|---|
//! | *(no status yet)* | now | waiting `ContainerCreating` | Pulling |
//! | waiting `ContainerCreating` | startTime + pull + startup | running | Pulled, Created, Started |
//! | waiting `ContainerCreating` (pull fails) | startTime + pull | waiting `ErrImagePull` | Failed (pull error), Failed `Error: ErrImagePull` |
//! | waiting `ErrImagePull` | failure + 1 s | waiting `ImagePullBackOff` | BackOff, Failed `Error: ImagePullBackOff` |
//! | waiting `ImagePullBackOff` | failure + back-off + pull | waiting `ErrImagePull` | Pulling, Failed, Failed |
//! | running, not ready | startedAt + readiness delay | running, ready | — |
//! | running | startedAt + run-seconds | terminated (exit-code; `Completed`/`Error`) | — |
//! | terminated, restart wanted, no back-off | finishedAt + 1 s | running, restartCount + 1 | Pulled (or Pulling, Pulled), Created, Started |
//! | terminated, restart wanted, back-off | finishedAt + 1 s | waiting `CrashLoopBackOff` | BackOff |
//! | waiting `CrashLoopBackOff` | finishedAt + back-off | running, restartCount + 1 | Pulled…, Created, Started |
//! | any, pod has deletionTimestamp | now | terminated; final delete due | Killing (running containers) |
//!
//! "Restart wanted" follows `restartPolicy` (Always: always; OnFailure: exit
//! code ≠ 0; Never: never). The restart back-off is upstream's: the first
//! restart is immediate, then 10 s, doubling to 5 min; a run longer than 10 min
//! resets it. The back-off is not kept in memory (a kubelet does, and loses it
//! on restart) but recovered from the status: the previous delay is the gap
//! between `lastState.terminated.finishedAt` and the current run's start, and
//! the pending delay is in the `CrashLoopBackOff` message, worded as upstream.
//! Image pull retries follow the same 10 s → 5 min schedule from
//! `status.startTime`. The pod phase and the conditions PodReadyToStartContainers,
//! Initialized, Ready, ContainersReady (and PodScheduled, if the scheduler did
//! not write it) are computed as upstream computes them.
//!
//! Transition times (startedAt, finishedAt, Event times) are the times the
//! transitions were *due*, not when [`next`] happened to run, so a late call
//! catches up several transitions at once and produces the same timeline.
//!
//! Simplifications: sim containers honour SIGTERM at once (exit code 0), so the
//! final delete is due as soon as deletion is seen rather than at
//! `deletionTimestamp`; init containers are reported as already completed when
//! the pod starts (sidecars are not run); every first pull really pulls (no
//! node image cache); the repeated BackOff / Unhealthy events a kubelet emits on
//! every sync are emitted once per back-off; no liveness/startup probes; a
//! pull failure never reaches `Running`; the ErrImagePull → ImagePullBackOff
//! cycles a caller sleeps through entirely are not reported.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus,
    HostIP, Pod, PodCondition, PodIP, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::behaviour::{Behaviour, ContainerBehaviour, ImagePull, Readiness};
use crate::node::{node_index, node_internal_ip};
use crate::{stable_hash, stable_hex128};

/// Initial restart / pull back-off (kubelet `backOffPeriod`).
pub const BACKOFF_INITIAL: SignedDuration = SignedDuration::from_secs(10);
/// Maximum restart / pull back-off (kubelet `MaxContainerBackOff`).
pub const BACKOFF_MAX: SignedDuration = SignedDuration::from_secs(300);
/// A run longer than this resets the restart back-off (twice the maximum).
pub const BACKOFF_RESET: SignedDuration = SignedDuration::from_secs(600);
/// How long an exited container or a fresh pull error is visible before the
/// next sync acts on it (PLEG relists every second).
const SYNC_DELAY: SignedDuration = SignedDuration::from_secs(1);
/// Upper bound on transitions taken in one call (a caller far behind is asked
/// to come back immediately).
const MAX_TRANSITIONS: usize = 64;

/// Event type, as in `core/v1` Event `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// `Normal`
    Normal,
    /// `Warning`
    Warning,
}

impl EventType {
    /// The API string.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// An Event the kubelet emits about the pod (source component `kubelet`, host
/// the node name: the caller fills those, and aggregates repeats into counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimEvent {
    /// Normal or Warning.
    pub type_: EventType,
    /// Upstream reason, e.g. `Pulling`.
    pub reason: String,
    /// Upstream message, e.g. `Pulling image "nginx:1.27"`.
    pub message: String,
    /// `involvedObject.fieldPath`, e.g. `spec.containers{nginx}`.
    pub field_path: Option<String>,
    /// When it happened.
    pub at: Timestamp,
}

/// What the kubelet does now for one pod.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Step {
    /// The status to write (`None`: leave it as it is).
    pub status: Option<PodStatus>,
    /// Events to emit, in order.
    pub events: Vec<SimEvent>,
    /// Call [`next`] again after this long (`None`: only when the pod changes).
    pub requeue_after: Option<std::time::Duration>,
    /// Issue the final delete (grace period 0) after this long.
    pub delete_after: Option<std::time::Duration>,
}

/// Decide what the kubelet does for `pod` at `now`. Pods without
/// `spec.nodeName` are not a kubelet's business and get an empty step.
pub fn next(pod: &Pod, behaviour: &Behaviour, now: Timestamp) -> Step {
    let Some(spec) = pod.spec.as_ref() else {
        return Step::default();
    };
    let Some(node_name) = spec.node_name.as_deref() else {
        return Step::default();
    };
    let old = pod.status.clone().unwrap_or_default();
    let terminal = is_terminal(old.phase.as_deref());
    let started = old.start_time.is_some();
    if pod.metadata.deletion_timestamp.is_some() {
        return terminate(pod, behaviour, &old, now, started && !terminal);
    }
    if terminal {
        return Step::default();
    }
    let ctx = Ctx::new(pod, behaviour, &old, now);
    let mut events = Vec::new();
    let mut due: Option<Timestamp> = None;
    let mut statuses = Vec::new();
    for cb in &behaviour.containers {
        let previous = find_status(old.container_statuses.as_deref(), &cb.name);
        let (status, next_due) = ctx.advance(cb, previous, &mut events);
        due = earliest(due, next_due);
        statuses.push(status);
    }
    let status = pod_status(&ctx, node_name, &old, statuses, false);
    let requeue_after = due.map(|d| to_std(d.duration_since(now)));
    Step {
        status: (status != old).then_some(status),
        events,
        requeue_after,
        delete_after: None,
    }
}

/// Everything a container transition needs to know about its pod.
struct Ctx<'a> {
    pod: &'a Pod,
    behaviour: &'a Behaviour,
    now: Timestamp,
    /// `status.startTime`: when the kubelet first synced the pod.
    start: Timestamp,
    restart_policy: &'a str,
}

impl<'a> Ctx<'a> {
    fn new(pod: &'a Pod, behaviour: &'a Behaviour, old: &PodStatus, now: Timestamp) -> Ctx<'a> {
        let start = old.start_time.as_ref().map_or(now, |t| t.0);
        let restart_policy = pod
            .spec
            .as_ref()
            .and_then(|s| s.restart_policy.as_deref())
            .unwrap_or("Always");
        Ctx {
            pod,
            behaviour,
            now,
            start,
            restart_policy,
        }
    }

    /// Advance one container to `now`; returns its status and when it next changes.
    fn advance(
        &self,
        cb: &ContainerBehaviour,
        previous: Option<&ContainerStatus>,
        events: &mut Vec<SimEvent>,
    ) -> (ContainerStatus, Option<Timestamp>) {
        let mut container = match previous {
            Some(status) => Tracked::from_status(status),
            None => {
                events.push(event(cb, EventType::Normal, "Pulling", pulling(cb), self.start));
                Tracked::new()
            }
        };
        if self.behaviour.image_pull == ImagePull::Fail {
            let due = self.pull_failure(cb, &mut container, events);
            return (container.to_status(self, cb), Some(due));
        }
        for _ in 0..MAX_TRANSITIONS {
            match container.due(self, cb) {
                Some(due) if due <= self.now => container.fire(self, cb, due, events),
                due => return (container.to_status(self, cb), due),
            }
        }
        (container.to_status(self, cb), Some(self.now))
    }

    /// The failing-pull timeline, computed from `startTime`; updates the
    /// container if its written state is behind and returns the next change.
    fn pull_failure(
        &self,
        cb: &ContainerBehaviour,
        c: &mut Tracked,
        events: &mut Vec<SimEvent>,
    ) -> Timestamp {
        let (attempt, attempt_start) = pull_attempt(self.start, cb.pull, self.now);
        let failed = attempt_start + cb.pull;
        let current = match c.state {
            State::Waiting(w) => w,
            _ => Waiting::Creating,
        };
        if self.now < failed {
            // Still pulling: the status shows what the previous attempt left.
            if attempt > 0 && current != Waiting::PullBackOff {
                let previous_failed = attempt_start - pull_backoff(attempt - 1);
                events.extend(pull_backoff_events(cb, previous_failed + SYNC_DELAY));
                c.state = State::Waiting(Waiting::PullBackOff);
            }
            return failed;
        }
        if self.now < failed + SYNC_DELAY {
            if current != Waiting::ErrImagePull {
                if attempt > 0 {
                    events.push(event(
                        cb,
                        EventType::Normal,
                        "Pulling",
                        pulling(cb),
                        attempt_start,
                    ));
                }
                events.extend(pull_failed_events(cb, failed));
            }
            c.state = State::Waiting(Waiting::ErrImagePull);
            return failed + SYNC_DELAY;
        }
        // Backing off. A written ImagePullBackOff is taken to be this attempt's.
        if current == Waiting::Creating {
            events.extend(pull_failed_events(cb, failed));
        }
        if current != Waiting::PullBackOff {
            events.extend(pull_backoff_events(cb, failed + SYNC_DELAY));
        }
        c.state = State::Waiting(Waiting::PullBackOff);
        failed + pull_backoff(attempt) + cb.pull
    }

    fn restart_wanted(&self, exit_code: i32) -> bool {
        match self.restart_policy {
            "Never" => false,
            "OnFailure" => exit_code != 0,
            _ => true,
        }
    }
}

/// Which pull attempt is in progress or last happened at `now`, and when it started.
fn pull_attempt(start: Timestamp, pull: SignedDuration, now: Timestamp) -> (u32, Timestamp) {
    let mut attempt = 0;
    let mut attempt_start = start;
    loop {
        let next_start = attempt_start + pull + pull_backoff(attempt);
        if next_start > now {
            return (attempt, attempt_start);
        }
        if pull_backoff(attempt) == BACKOFF_MAX {
            // Steady state: whole cycles of pull + 5 min.
            let cycle = pull + BACKOFF_MAX;
            let cycles = now.duration_since(attempt_start).as_millis() / cycle.as_millis().max(1);
            let cycles = u32::try_from(cycles).unwrap_or(u32::MAX);
            let skipped = i32::try_from(cycles).unwrap_or(i32::MAX);
            return (attempt.saturating_add(cycles), attempt_start + cycle * skipped);
        }
        attempt += 1;
        attempt_start = next_start;
    }
}

/// Back-off after failed pull number `attempt` (0-based): 10 s doubling to 5 min.
fn pull_backoff(attempt: u32) -> SignedDuration {
    let factor = 1i32 << attempt.min(5);
    (BACKOFF_INITIAL * factor).min(BACKOFF_MAX)
}

/// Waiting reasons the simulation writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Creating,
    ErrImagePull,
    PullBackOff,
}

/// One finished run of a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    exit_code: i32,
    started: Timestamp,
    finished: Timestamp,
    id_seq: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting(Waiting),
    Running {
        started: Timestamp,
        ready: bool,
    },
    Exited(Run),
    /// `CrashLoopBackOff`: the run that ended is in `last`.
    BackOff {
        delay: SignedDuration,
    },
}

/// A container's state as read back from its status.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tracked {
    state: State,
    restarts: i32,
    last: Option<Run>,
}

impl Tracked {
    fn new() -> Tracked {
        Tracked {
            state: State::Waiting(Waiting::Creating),
            restarts: 0,
            last: None,
        }
    }

    fn from_status(status: &ContainerStatus) -> Tracked {
        let last = status
            .last_state
            .as_ref()
            .and_then(|s| s.terminated.as_ref())
            .and_then(run_of);
        let state = status.state.as_ref();
        let state = if let Some(running) = state.and_then(|s| s.running.as_ref()) {
            let started = running.started_at.as_ref().map_or(Timestamp::UNIX_EPOCH, |t| t.0);
            State::Running {
                started,
                ready: status.ready,
            }
        } else if let Some(run) = state.and_then(|s| s.terminated.as_ref()).and_then(run_of) {
            State::Exited(run)
        } else {
            let waiting = state.and_then(|s| s.waiting.as_ref());
            match waiting.and_then(|w| w.reason.as_deref()) {
                Some("ErrImagePull") => State::Waiting(Waiting::ErrImagePull),
                Some("ImagePullBackOff") => State::Waiting(Waiting::PullBackOff),
                Some("CrashLoopBackOff") if last.is_some() => {
                    let message = waiting.and_then(|w| w.message.as_deref()).unwrap_or_default();
                    let delay = parse_backoff_message(message)
                        .unwrap_or_else(|| restart_backoff_for_count(status.restart_count));
                    State::BackOff { delay }
                }
                _ => State::Waiting(Waiting::Creating),
            }
        };
        Tracked {
            state,
            restarts: status.restart_count,
            last,
        }
    }

    /// When this container's next transition is due (`None`: never, by itself).
    fn due(&self, ctx: &Ctx, cb: &ContainerBehaviour) -> Option<Timestamp> {
        match self.state {
            State::Waiting(_) => Some(ctx.start + cb.pull + ctx.behaviour.startup),
            State::Running { started, ready } => {
                let exit = ctx.behaviour.run.map(|run| started + run);
                let ready_at = match (ready, cb.readiness) {
                    (false, Readiness::After(delay)) => Some(started + delay),
                    _ => None,
                };
                earliest(exit, ready_at)
            }
            State::Exited(run) => ctx
                .restart_wanted(run.exit_code)
                .then_some(run.finished + SYNC_DELAY),
            State::BackOff { delay } => self.last.map(|run| run.finished + delay),
        }
    }

    /// Take the transition due at `at`.
    fn fire(&mut self, ctx: &Ctx, cb: &ContainerBehaviour, at: Timestamp, events: &mut Vec<SimEvent>) {
        match self.state {
            State::Waiting(_) => {
                let pulled = ctx.start + cb.pull;
                events.push(event(
                    cb,
                    EventType::Normal,
                    "Pulled",
                    pulled_message(cb, cb.pull),
                    pulled,
                ));
                events.extend(start_events(cb, at));
                self.state = State::Running {
                    started: at,
                    ready: false,
                };
            }
            State::Running { started, .. } => {
                let exit = ctx.behaviour.run.map(|run| started + run);
                if exit.is_some_and(|exit| exit <= at) {
                    let run = Run {
                        exit_code: ctx.behaviour.exit_code,
                        started,
                        finished: at,
                        id_seq: self.restarts,
                    };
                    self.state = State::Exited(run);
                } else {
                    self.state = State::Running { started, ready: true };
                }
            }
            State::Exited(run) => {
                let delay = restart_backoff(&run, self.last.as_ref(), self.restarts);
                self.last = Some(run);
                if delay <= SYNC_DELAY {
                    self.restart(cb, at, events);
                } else {
                    events.push(event(
                        cb,
                        EventType::Warning,
                        "BackOff",
                        backoff_message(ctx, cb),
                        at,
                    ));
                    self.state = State::BackOff { delay };
                }
            }
            State::BackOff { .. } => self.restart(cb, at, events),
        }
    }

    fn restart(&mut self, cb: &ContainerBehaviour, at: Timestamp, events: &mut Vec<SimEvent>) {
        if cb.pull_always {
            events.push(event(cb, EventType::Normal, "Pulling", pulling(cb), at));
            events.push(event(
                cb,
                EventType::Normal,
                "Pulled",
                pulled_message(cb, cb.repull),
                at,
            ));
        } else {
            let message = format!("Container image {:?} already present on machine", cb.image);
            events.push(event(cb, EventType::Normal, "Pulled", message, at));
        }
        events.extend(start_events(cb, at));
        self.restarts += 1;
        self.state = State::Running {
            started: at,
            ready: false,
        };
    }

    fn to_status(&self, ctx: &Ctx, cb: &ContainerBehaviour) -> ContainerStatus {
        let image_known = self.last.is_some() || !matches!(self.state, State::Waiting(_));
        let mut status = ContainerStatus {
            name: cb.name.clone(),
            image: normalized_image(&cb.image),
            image_id: if image_known {
                image_id(&cb.image)
            } else {
                String::new()
            },
            restart_count: self.restarts,
            started: Some(matches!(self.state, State::Running { .. })),
            ready: matches!(self.state, State::Running { ready: true, .. }),
            last_state: Some(
                self.last
                    .map(|run| terminated_state(ctx, cb, &run))
                    .unwrap_or_default(),
            ),
            state: Some(self.current_state(ctx, cb)),
            ..ContainerStatus::default()
        };
        status.container_id = match self.state {
            State::Running { .. } => Some(container_id(ctx.pod, &cb.name, self.restarts)),
            State::Exited(run) => Some(container_id(ctx.pod, &cb.name, run.id_seq)),
            _ => self.last.map(|run| container_id(ctx.pod, &cb.name, run.id_seq)),
        };
        status
    }

    fn current_state(&self, ctx: &Ctx, cb: &ContainerBehaviour) -> ContainerState {
        let waiting = |reason: &str, message: Option<String>| ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some(reason.into()),
                message,
            }),
            ..ContainerState::default()
        };
        match self.state {
            State::Waiting(Waiting::Creating) => waiting("ContainerCreating", None),
            State::Waiting(Waiting::ErrImagePull) => waiting("ErrImagePull", Some(pull_error(cb))),
            State::Waiting(Waiting::PullBackOff) => waiting(
                "ImagePullBackOff",
                Some(format!("Back-off pulling image {:?}", cb.image)),
            ),
            State::Running { started, .. } => ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(Time(started)),
                }),
                ..ContainerState::default()
            },
            State::Exited(run) => terminated_state(ctx, cb, &run),
            State::BackOff { delay } => waiting(
                "CrashLoopBackOff",
                Some(format!(
                    "back-off {} restarting failed container={} pod={}",
                    go_duration(delay),
                    cb.name,
                    pod_ref(ctx.pod)
                )),
            ),
        }
    }
}

fn run_of(terminated: &ContainerStateTerminated) -> Option<Run> {
    Some(Run {
        exit_code: terminated.exit_code,
        started: terminated.started_at.as_ref()?.0,
        finished: terminated.finished_at.as_ref()?.0,
        id_seq: terminated
            .container_id
            .as_deref()
            .and_then(|id| id.rsplit('-').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
    })
}

fn terminated_state(ctx: &Ctx, cb: &ContainerBehaviour, run: &Run) -> ContainerState {
    let reason = if run.exit_code == 0 { "Completed" } else { "Error" };
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            container_id: Some(container_id(ctx.pod, &cb.name, run.id_seq)),
            exit_code: run.exit_code,
            reason: Some(reason.into()),
            started_at: Some(Time(run.started)),
            finished_at: Some(Time(run.finished)),
            ..ContainerStateTerminated::default()
        }),
        ..ContainerState::default()
    }
}

/// Restart delay after `run` ended, given the run before it and the restarts so
/// far: none for the first restart or after a run longer than 10 min, else
/// double the previous delay (read from the gap between the two runs), from
/// 10 s up to 5 min.
fn restart_backoff(run: &Run, previous: Option<&Run>, restarts: i32) -> SignedDuration {
    if restarts == 0 || run.finished.duration_since(run.started) > BACKOFF_RESET {
        return SignedDuration::ZERO;
    }
    let Some(previous) = previous else {
        return BACKOFF_INITIAL;
    };
    let gap = run.started.duration_since(previous.finished);
    let mut delay = BACKOFF_INITIAL;
    while delay < BACKOFF_MAX && delay * 2 <= gap {
        delay *= 2;
    }
    if gap < BACKOFF_INITIAL {
        BACKOFF_INITIAL
    } else {
        (delay * 2).min(BACKOFF_MAX)
    }
}

/// The restart back-offs that `new` starts and `old` did not have, one sentence per container
/// for the causal journal (upstream `doBackOff` in `kuberuntime_manager.go`):
/// `back-off 20s restarting failed container app (restartCount 2, exit code 1) ...`.
pub fn backoff_decisions(old: &PodStatus, new: &PodStatus) -> Vec<String> {
    let waiting_backoff = |c: &ContainerStatus| {
        let waiting = c.state.as_ref()?.waiting.as_ref()?;
        (waiting.reason.as_deref() == Some("CrashLoopBackOff"))
            .then(|| waiting.message.clone().unwrap_or_default())
    };
    let new_statuses = new.container_statuses.iter().flatten();
    new_statuses
        .filter_map(|c| {
            let message = waiting_backoff(c)?;
            let before = find_status(old.container_statuses.as_deref(), &c.name).and_then(waiting_backoff);
            if before.as_ref() == Some(&message) {
                return None;
            }
            let delay =
                parse_backoff_message(&message).unwrap_or_else(|| restart_backoff_for_count(c.restart_count));
            let exit_code = c
                .last_state
                .as_ref()
                .and_then(|s| s.terminated.as_ref())
                .map_or(0, |t| t.exit_code);
            Some(format!(
                "back-off {} restarting failed container {} (restartCount {}, exit code {exit_code}): \
                 CrashLoopBackOff doubles the delay after each crash, from {} up to {}",
                go_duration(delay),
                c.name,
                c.restart_count,
                go_duration(BACKOFF_INITIAL),
                go_duration(BACKOFF_MAX),
            ))
        })
        .collect()
}

/// Fallback when a CrashLoopBackOff message cannot be parsed.
fn restart_backoff_for_count(restarts: i32) -> SignedDuration {
    let exponent = (restarts - 1).clamp(0, 5);
    (BACKOFF_INITIAL * (1 << exponent)).min(BACKOFF_MAX)
}

/// The delay in `back-off 2m40s restarting failed container=...`.
fn parse_backoff_message(message: &str) -> Option<SignedDuration> {
    let text = message.strip_prefix("back-off ")?.split(' ').next()?;
    let mut total = 0i64;
    let mut number = String::new();
    for ch in text.chars() {
        match ch {
            '0'..='9' => number.push(ch),
            'h' | 'm' | 's' => {
                let unit = match ch {
                    'h' => 3600,
                    'm' => 60,
                    _ => 1,
                };
                total += number.parse::<i64>().ok()? * unit;
                number.clear();
            }
            _ => return None,
        }
    }
    (number.is_empty() && total > 0).then(|| SignedDuration::from_secs(total))
}

/// Go's `time.Duration.String()` for millisecond-precision durations
/// (`512ms`, `1.234s`, `2m40s`, `5m0s`, `1h0m0s`).
pub fn go_duration(duration: SignedDuration) -> String {
    let millis = duration.as_millis().max(0);
    if millis == 0 {
        return "0s".into();
    }
    if millis < 1000 {
        return format!("{millis}ms");
    }
    let (secs, frac) = (millis / 1000, millis % 1000);
    let seconds = if frac == 0 {
        format!("{}s", secs % 60)
    } else {
        let frac = format!("{frac:03}");
        format!("{}.{}s", secs % 60, frac.trim_end_matches('0'))
    };
    match (secs / 3600, secs / 60 % 60) {
        (0, 0) => seconds,
        (0, m) => format!("{m}m{seconds}"),
        (h, m) => format!("{h}h{m}m{seconds}"),
    }
}

fn event(
    cb: &ContainerBehaviour,
    type_: EventType,
    reason: &str,
    message: String,
    at: Timestamp,
) -> SimEvent {
    SimEvent {
        type_,
        reason: reason.into(),
        message,
        field_path: Some(format!("spec.containers{{{}}}", cb.name)),
        at,
    }
}

fn pulling(cb: &ContainerBehaviour) -> String {
    format!("Pulling image {:?}", cb.image)
}

fn pulled_message(cb: &ContainerBehaviour, took: SignedDuration) -> String {
    let took = go_duration(took);
    let size = image_size_bytes(&cb.image);
    format!(
        "Successfully pulled image {:?} in {took} ({took} including waiting). Image size: {size} bytes.",
        cb.image
    )
}

/// A plausible size for `image`, the same for every pull of it: 5–200 MB.
fn image_size_bytes(image: &str) -> u64 {
    const MB: u64 = 1_000_000;
    5 * MB + crate::stable_hash(&["image-size", image]) % (195 * MB)
}

fn start_events(cb: &ContainerBehaviour, at: Timestamp) -> [SimEvent; 2] {
    [
        event(
            cb,
            EventType::Normal,
            "Created",
            format!("Created container: {}", cb.name),
            at,
        ),
        event(
            cb,
            EventType::Normal,
            "Started",
            format!("Started container {}", cb.name),
            at,
        ),
    ]
}

fn pull_failed_events(cb: &ContainerBehaviour, at: Timestamp) -> [SimEvent; 2] {
    let failed = format!("Failed to pull image {:?}: {}", cb.image, pull_error(cb));
    [
        event(cb, EventType::Warning, "Failed", failed, at),
        event(cb, EventType::Warning, "Failed", "Error: ErrImagePull".into(), at),
    ]
}

fn pull_backoff_events(cb: &ContainerBehaviour, at: Timestamp) -> [SimEvent; 2] {
    let message = format!("Back-off pulling image {:?}", cb.image);
    [
        event(cb, EventType::Normal, "BackOff", message, at),
        event(
            cb,
            EventType::Warning,
            "Failed",
            "Error: ImagePullBackOff".into(),
            at,
        ),
    ]
}

fn backoff_message(ctx: &Ctx, cb: &ContainerBehaviour) -> String {
    format!(
        "Back-off restarting failed container {} in pod {}",
        cb.name,
        pod_ref(ctx.pod)
    )
}

/// The error a containerd-backed pull of a missing image reports.
fn pull_error(cb: &ContainerBehaviour) -> String {
    let image = normalized_image(&cb.image);
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image {image:?}: \
         failed to resolve reference {image:?}: {image}: not found"
    )
}

/// `format.Pod`: `name_namespace(uid)`.
fn pod_ref(pod: &Pod) -> String {
    let meta = &pod.metadata;
    format!(
        "{}_{}({})",
        meta.name.as_deref().unwrap_or_default(),
        meta.namespace.as_deref().unwrap_or_default(),
        meta.uid.as_deref().unwrap_or_default()
    )
}

/// The fully qualified reference a container runtime reports
/// (`nginx:1.27` → `docker.io/library/nginx:1.27`).
pub fn normalized_image(image: &str) -> String {
    let (name, suffix) = match image.split_once('@') {
        Some((name, digest)) => (name.to_owned(), format!("@{digest}")),
        None => {
            let last = image.rsplit('/').next().unwrap_or(image);
            if last.contains(':') {
                (image.to_owned(), String::new())
            } else {
                (image.to_owned(), ":latest".into())
            }
        }
    };
    let first = name.split('/').next().unwrap_or_default();
    let has_registry =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let qualified = if has_registry {
        name
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    format!("{qualified}{suffix}")
}

/// `imageID`: the repository plus a digest derived from the image reference.
fn image_id(image: &str) -> String {
    let normalized = normalized_image(image);
    let repository = normalized.split('@').next().unwrap_or_default();
    let repository = match repository.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => repo,
        _ => repository,
    };
    let digest = format!(
        "{}{}",
        stable_hex128(&["image", image]),
        stable_hex128(&["image-2", image])
    );
    format!("{repository}@sha256:{digest}")
}

/// `containerID`: `miniplane://<hex>-<run>`, stable per pod, container and run.
fn container_id(pod: &Pod, container: &str, run: i32) -> String {
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    format!("miniplane://{}-{run}", stable_hex128(&[uid, container]))
}

/// The pod IP: in the node's `10.244.<index>.0/24`, derived from the pod uid.
pub fn pod_ip(pod: &Pod, node_name: &str) -> String {
    let meta = &pod.metadata;
    let key = meta.uid.as_deref().or(meta.name.as_deref()).unwrap_or_default();
    let host = 2 + stable_hash(&["pod-ip", key]) % 252;
    format!("10.244.{}.{host}", node_index(node_name) & 0xff)
}

/// Graceful termination: running containers are sent SIGTERM (Killing) and,
/// being simulated, exit at once; the final delete is then due immediately.
fn terminate(pod: &Pod, behaviour: &Behaviour, old: &PodStatus, now: Timestamp, active: bool) -> Step {
    let mut step = Step {
        delete_after: Some(std::time::Duration::ZERO),
        ..Step::default()
    };
    if !active {
        return step;
    }
    let ctx = Ctx::new(pod, behaviour, old, now);
    let node_name = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or_default();
    let statuses: Vec<ContainerStatus> = behaviour
        .containers
        .iter()
        .map(|cb| {
            let previous = find_status(old.container_statuses.as_deref(), &cb.name);
            let tracked = previous.map_or_else(Tracked::new, Tracked::from_status);
            stop_container(&ctx, cb, &tracked, &mut step.events)
        })
        .collect();
    step.status = Some(pod_status(&ctx, node_name, old, statuses, true));
    step
}

fn stop_container(
    ctx: &Ctx,
    cb: &ContainerBehaviour,
    c: &Tracked,
    events: &mut Vec<SimEvent>,
) -> ContainerStatus {
    let mut stopped = c.clone();
    match c.state {
        State::Running { started, .. } => {
            let message = format!("Stopping container {}", cb.name);
            events.push(event(cb, EventType::Normal, "Killing", message, ctx.now));
            let run = Run {
                exit_code: 0,
                started,
                finished: ctx.now,
                id_seq: c.restarts,
            };
            stopped.state = State::Exited(run);
            stopped.to_status(ctx, cb)
        }
        State::Exited(_) => stopped.to_status(ctx, cb),
        State::Waiting(_) | State::BackOff { .. } => {
            let mut status = stopped.to_status(ctx, cb);
            status.started = Some(false);
            status.state = Some(ContainerState {
                terminated: Some(ContainerStateTerminated {
                    exit_code: 137,
                    reason: Some("ContainerStatusUnknown".into()),
                    message: Some("The container could not be located when the pod was terminated".into()),
                    ..ContainerStateTerminated::default()
                }),
                ..ContainerState::default()
            });
            status
        }
    }
}

/// The whole pod status from the container statuses, as `generateAPIPodStatus` would.
fn pod_status(
    ctx: &Ctx,
    node_name: &str,
    old: &PodStatus,
    containers: Vec<ContainerStatus>,
    pod_is_terminal: bool,
) -> PodStatus {
    let phase = pod_phase(ctx.restart_policy, &containers, pod_is_terminal);
    let ip = old.pod_ip.clone().unwrap_or_else(|| pod_ip(ctx.pod, node_name));
    let host_ip = node_internal_ip(node_name);
    let conditions = pod_conditions(ctx, old, &containers, phase);
    PodStatus {
        phase: Some(phase.into()),
        conditions: Some(conditions),
        host_ip: Some(host_ip.clone()),
        host_ips: Some(vec![HostIP { ip: host_ip }]),
        pod_ip: Some(ip.clone()),
        pod_ips: Some(vec![PodIP { ip }]),
        start_time: Some(Time(ctx.start)),
        init_container_statuses: init_container_statuses(ctx),
        container_statuses: Some(containers),
        ..old.clone()
    }
}

/// Init containers are not simulated: they are reported as having completed
/// the moment the pod started.
fn init_container_statuses(ctx: &Ctx) -> Option<Vec<ContainerStatus>> {
    let spec = ctx.pod.spec.as_ref()?;
    let init = spec.init_containers.as_ref().filter(|c| !c.is_empty())?;
    let uid = ctx.pod.metadata.uid.as_deref().unwrap_or_default();
    let statuses = init
        .iter()
        .map(|c| {
            let image = c.image.clone().unwrap_or_default();
            let id = format!("miniplane://{}-0", stable_hex128(&[uid, &c.name]));
            ContainerStatus {
                name: c.name.clone(),
                image: normalized_image(&image),
                image_id: image_id(&image),
                container_id: Some(id.clone()),
                ready: true,
                started: Some(false),
                restart_count: 0,
                last_state: Some(ContainerState::default()),
                state: Some(ContainerState {
                    terminated: Some(ContainerStateTerminated {
                        container_id: Some(id),
                        exit_code: 0,
                        reason: Some("Completed".into()),
                        started_at: Some(Time(ctx.start)),
                        finished_at: Some(Time(ctx.start)),
                        ..ContainerStateTerminated::default()
                    }),
                    ..ContainerState::default()
                }),
                ..ContainerStatus::default()
            }
        })
        .collect();
    Some(statuses)
}

/// Upstream `getPhase` for regular containers.
fn pod_phase(restart_policy: &str, containers: &[ContainerStatus], pod_is_terminal: bool) -> &'static str {
    let (mut waiting, mut running, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for status in containers {
        let state = status.state.clone().unwrap_or_default();
        if state.running.is_some() {
            running += 1;
        } else if let Some(terminated) = &state.terminated {
            stopped += 1;
            if terminated.exit_code == 0 {
                succeeded += 1;
            }
        } else if status.last_state.as_ref().is_some_and(|s| s.terminated.is_some()) {
            stopped += 1;
        } else {
            waiting += 1;
        }
    }
    if waiting > 0 || (running == 0 && stopped == 0) {
        "Pending"
    } else if running > 0 {
        "Running"
    } else if pod_is_terminal {
        if stopped == succeeded {
            "Succeeded"
        } else {
            "Failed"
        }
    } else if restart_policy == "Always" {
        "Running"
    } else if stopped == succeeded {
        "Succeeded"
    } else if restart_policy == "OnFailure" {
        "Running"
    } else {
        "Failed"
    }
}

fn is_terminal(phase: Option<&str>) -> bool {
    matches!(phase, Some("Succeeded" | "Failed"))
}

/// PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled.
fn pod_conditions(
    ctx: &Ctx,
    old: &PodStatus,
    containers: &[ContainerStatus],
    phase: &str,
) -> Vec<PodCondition> {
    let terminal = is_terminal(Some(phase));
    let unready: Vec<&str> = containers
        .iter()
        .filter(|c| !c.ready)
        .map(|c| c.name.as_str())
        .collect();
    let (ready_status, ready_reason, ready_message) = match phase {
        "Succeeded" => ("False", Some("PodCompleted"), None),
        "Failed" => ("False", Some("PodFailed"), None),
        _ if unready.is_empty() => ("True", None, None),
        _ => (
            "False",
            Some("ContainersNotReady"),
            Some(format!("containers with unready status: [{}]", unready.join(" "))),
        ),
    };
    let initialized_reason = (phase == "Succeeded").then_some("PodCompleted");
    let sandbox = if terminal { "False" } else { "True" };
    let mut conditions = vec![
        condition(ctx, old, "PodReadyToStartContainers", sandbox, None, None),
        condition(ctx, old, "Initialized", "True", initialized_reason, None),
        condition(
            ctx,
            old,
            "Ready",
            ready_status,
            ready_reason,
            ready_message.clone(),
        ),
        condition(
            ctx,
            old,
            "ContainersReady",
            ready_status,
            ready_reason,
            ready_message,
        ),
    ];
    let scheduled = old
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "PodScheduled")
        .cloned();
    conditions.push(scheduled.unwrap_or_else(|| condition(ctx, old, "PodScheduled", "True", None, None)));
    conditions
}

fn condition(
    ctx: &Ctx,
    old: &PodStatus,
    type_: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<String>,
) -> PodCondition {
    let previous = old.conditions.iter().flatten().find(|c| c.type_ == type_);
    let transition = match previous {
        Some(p) if p.status == status => p.last_transition_time.clone(),
        _ => Some(Time(ctx.now)),
    };
    PodCondition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.map(Into::into),
        message,
        last_transition_time: transition,
        last_probe_time: None,
        observed_generation: None,
    }
}

fn find_status<'a>(statuses: Option<&'a [ContainerStatus]>, name: &str) -> Option<&'a ContainerStatus> {
    statuses?.iter().find(|s| s.name == name)
}

fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn to_std(duration: SignedDuration) -> std::time::Duration {
    std::time::Duration::try_from(duration.max(SignedDuration::ZERO)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;

    use k8s_openapi::api::core::v1::{Container, PodSpec, Probe};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    /// The simulation seed of these tests.
    const SEED: u64 = 0;

    fn t0() -> Timestamp {
        "2025-05-01T10:00:00Z".parse().unwrap()
    }

    fn pod(annotations: &[(&str, &str)], restart_policy: &str, probe: Option<Probe>) -> Pod {
        let annotations: BTreeMap<String, String> = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Pod {
            metadata: ObjectMeta {
                name: Some("web-1".into()),
                namespace: Some("default".into()),
                uid: Some("uid-1".into()),
                annotations: Some(annotations),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                node_name: Some("miniplane-worker-1".into()),
                restart_policy: Some(restart_policy.into()),
                containers: vec![Container {
                    name: "nginx".into(),
                    image: Some("nginx:1.27".into()),
                    image_pull_policy: Some("IfNotPresent".into()),
                    readiness_probe: probe,
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                phase: Some("Pending".into()),
                ..PodStatus::default()
            }),
        }
    }

    /// `kubectl get pods` STATUS and READY, per the printPod algorithm.
    fn kubectl_columns(pod: &Pod) -> (String, String) {
        let status = pod.status.clone().unwrap_or_default();
        let mut reason = status.phase.clone().unwrap_or_default();
        let (mut ready, mut running) = (0, false);
        let statuses = status.container_statuses.clone().unwrap_or_default();
        for c in statuses.iter().rev() {
            let state = c.state.clone().unwrap_or_default();
            if let Some(r) = state.waiting.and_then(|w| w.reason) {
                reason = r;
            } else if let Some(r) = state.terminated.and_then(|t| t.reason) {
                reason = r;
            } else if c.ready && state.running.is_some() {
                ready += 1;
                running = true;
            }
        }
        if reason == "Completed" && running {
            reason = "Running".into();
        }
        if pod.metadata.deletion_timestamp.is_some() && !is_terminal(status.phase.as_deref()) {
            reason = "Terminating".into();
        }
        (
            reason,
            format!("{ready}/{}", pod.spec.as_ref().unwrap().containers.len()),
        )
    }

    /// Step the pod through simulated time, calling `next` exactly when asked,
    /// and render one line per call that changed something.
    fn simulate(pod: &mut Pod, horizon: i64) -> String {
        let behaviour = Behaviour::for_pod(pod, SEED);
        let mut now = t0();
        let mut out = String::new();
        while now <= t0() + SignedDuration::from_secs(horizon) {
            let step = next(pod, &behaviour, now);
            if let Some(status) = &step.status {
                pod.status = Some(status.clone());
            }
            if step.status.is_some() || !step.events.is_empty() {
                render(&mut out, pod, &step, now);
            }
            let Some(after) = step.requeue_after else { break };
            now += SignedDuration::try_from(after).unwrap();
        }
        out
    }

    fn render(out: &mut String, pod: &Pod, step: &Step, now: Timestamp) {
        let secs = |at: Timestamp| at.duration_since(t0()).as_millis() as f64 / 1000.0;
        let (column, ready) = kubectl_columns(pod);
        let status = pod.status.as_ref().unwrap();
        let c = &status.container_statuses.as_ref().unwrap()[0];
        let phase = status.phase.as_deref().unwrap();
        let _ = writeln!(
            out,
            "{:>7.3} {phase} {column} {ready} restarts={}",
            secs(now),
            c.restart_count
        );
        for e in &step.events {
            let _ = writeln!(
                out,
                "        {:>7.3} {} {}: {}",
                secs(e.at),
                e.type_.as_str(),
                e.reason,
                e.message
            );
        }
    }

    fn condition<'a>(pod: &'a Pod, type_: &str) -> &'a PodCondition {
        let conditions = pod.status.as_ref().unwrap().conditions.as_ref().unwrap();
        conditions.iter().find(|c| c.type_ == type_).unwrap()
    }

    /// Compare a transcript with `golden/<name>.txt`; with
    /// `MINIPLANE_UPDATE_GOLDEN=1` the file is rewritten instead.
    macro_rules! assert_golden {
        ($actual:expr, $name:literal) => {{
            let actual: &str = &$actual;
            let expected = include_str!(concat!("../golden/", $name, ".txt"));
            if actual != expected {
                if std::env::var_os("MINIPLANE_UPDATE_GOLDEN").is_some() {
                    let source = std::path::Path::new(file!());
                    let source = if source.is_absolute() {
                        source.to_path_buf()
                    } else {
                        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                            .join("..")
                            .join(source)
                    };
                    let path = source
                        .parent()
                        .unwrap()
                        .join(concat!("../golden/", $name, ".txt"));
                    std::fs::write(path, actual).unwrap();
                } else {
                    panic!("golden {} differs; actual:\n{actual}", $name);
                }
            }
        }};
    }

    #[test]
    fn plain_nginx_runs_and_is_ready() {
        let mut p = pod(&[], "Always", None);
        let transcript = simulate(&mut p, 3600);
        assert_golden!(transcript, "plain_nginx");
        let status = p.status.as_ref().unwrap();
        assert_eq!(
            status.pod_ip.as_deref(),
            Some(pod_ip(&p, "miniplane-worker-1").as_str())
        );
        assert!(status.pod_ip.as_deref().unwrap().starts_with("10.244.1."));
        assert_eq!(status.host_ip.as_deref(), Some("10.0.0.3"));
        assert_eq!(condition(&p, "Ready").status, "True");
        assert_eq!(condition(&p, "PodScheduled").status, "True");
        let c = &status.container_statuses.as_ref().unwrap()[0];
        assert_eq!(c.image, "docker.io/library/nginx:1.27");
        assert!(c.image_id.starts_with("docker.io/library/nginx@sha256:"));
        assert!(c.container_id.as_deref().unwrap().starts_with("miniplane://"));
        assert_eq!(c.started, Some(true));
        let json = serde_json::to_value(status).unwrap();
        assert_eq!(json["containerStatuses"][0]["lastState"], serde_json::json!({}));
        assert_eq!(json["conditions"][0]["type"], "PodReadyToStartContainers");
    }

    #[test]
    fn readiness_waits_for_the_first_probe_after_the_initial_delay() {
        let probe = Probe {
            initial_delay_seconds: Some(5),
            ..Probe::default()
        };
        let mut p = pod(&[], "Always", Some(probe));
        let transcript = simulate(&mut p, 3600);
        assert_golden!(transcript, "readiness_delay");
        let ready = condition(&p, "Ready");
        assert_eq!(
            ready.last_transition_time,
            Some(Time(t0() + SignedDuration::from_millis(12_815)))
        );
    }

    #[test]
    fn never_ready_stays_unready() {
        let mut p = pod(&[("sim.miniplane.dev/ready", "never")], "Always", None);
        let transcript = simulate(&mut p, 3600);
        assert!(transcript.ends_with("Started container nginx\n"), "{transcript}");
        assert_eq!(kubectl_columns(&p), ("Running".into(), "0/1".into()));
        let ready = condition(&p, "ContainersReady");
        assert_eq!(ready.reason.as_deref(), Some("ContainersNotReady"));
        assert_eq!(
            ready.message.as_deref(),
            Some("containers with unready status: [nginx]")
        );
    }

    #[test]
    fn crash_loop_backs_off_ten_seconds_doubling() {
        let annotations = [
            ("sim.miniplane.dev/run-seconds", "3"),
            ("sim.miniplane.dev/exit-code", "1"),
        ];
        let mut p = pod(&annotations, "Always", None);
        let transcript = simulate(&mut p, 100);
        assert_golden!(transcript, "crash_loop");
        let waiting = p.status.as_ref().unwrap().container_statuses.as_ref().unwrap()[0]
            .state
            .clone();
        assert_eq!(
            waiting.unwrap().waiting.unwrap().message.as_deref(),
            Some("back-off 1m20s restarting failed container=nginx pod=web-1_default(uid-1)")
        );
    }

    #[test]
    fn crash_loop_backoff_caps_at_five_minutes_and_resets_after_long_runs() {
        let run = |secs| Run {
            exit_code: 1,
            started: t0(),
            finished: t0() + SignedDuration::from_secs(secs),
            id_seq: 0,
        };
        let before = |gap: i64| Run {
            exit_code: 1,
            started: t0() - SignedDuration::from_secs(gap + 5),
            finished: t0() - SignedDuration::from_secs(gap),
            id_seq: 0,
        };
        assert_eq!(restart_backoff(&run(3), None, 0), SignedDuration::ZERO);
        assert_eq!(restart_backoff(&run(3), Some(&before(1)), 1), BACKOFF_INITIAL);
        assert_eq!(restart_backoff(&run(3), Some(&before(160)), 6), BACKOFF_MAX);
        assert_eq!(restart_backoff(&run(3), Some(&before(300)), 7), BACKOFF_MAX);
        assert_eq!(
            restart_backoff(&run(3), Some(&before(43)), 4),
            SignedDuration::from_secs(80),
            "late caller"
        );
        assert_eq!(
            restart_backoff(&run(601), Some(&before(300)), 9),
            SignedDuration::ZERO
        );
        assert_eq!(
            parse_backoff_message("back-off 2m40s restarting failed container=x pod=y"),
            Some(SignedDuration::from_secs(160))
        );
        assert_eq!(go_duration(SignedDuration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(SignedDuration::from_millis(512)), "512ms");
        assert_eq!(go_duration(SignedDuration::from_millis(1200)), "1.2s");
        assert_eq!(go_duration(SignedDuration::from_secs(3600)), "1h0m0s");
    }

    #[test]
    fn image_pull_failure_cycles_err_image_pull_and_back_off() {
        let mut p = pod(&[("sim.miniplane.dev/image-pull", "fail")], "Always", None);
        let transcript = simulate(&mut p, 60);
        assert_golden!(transcript, "image_pull_fail");
    }

    #[test]
    fn job_like_pods_complete_or_fail_per_restart_policy() {
        let succeed = [("sim.miniplane.dev/run-seconds", "3")];
        let mut p = pod(&succeed, "Never", None);
        let transcript = simulate(&mut p, 3600);
        assert!(
            transcript.ends_with("  5.815 Succeeded Completed 0/1 restarts=0\n"),
            "{transcript}"
        );
        assert_eq!(condition(&p, "Ready").reason.as_deref(), Some("PodCompleted"));
        assert_eq!(
            condition(&p, "Initialized").reason.as_deref(),
            Some("PodCompleted")
        );
        assert_eq!(condition(&p, "PodReadyToStartContainers").status, "False");
        assert_eq!(
            next(
                &p,
                &Behaviour::for_pod(&p, SEED),
                t0() + SignedDuration::from_secs(9999)
            ),
            Step::default()
        );

        let fail = [
            ("sim.miniplane.dev/run-seconds", "3"),
            ("sim.miniplane.dev/exit-code", "2"),
        ];
        let mut p = pod(&fail, "Never", None);
        let transcript = simulate(&mut p, 3600);
        assert!(
            transcript.ends_with("  5.815 Failed Error 0/1 restarts=0\n"),
            "{transcript}"
        );
        assert_eq!(condition(&p, "Ready").reason.as_deref(), Some("PodFailed"));

        let mut p = pod(&fail, "OnFailure", None);
        let transcript = simulate(&mut p, 30);
        assert!(
            transcript.contains(" 10.815 Running CrashLoopBackOff 0/1 restarts=1\n"),
            "{transcript}"
        );

        let mut p = pod(&succeed, "OnFailure", None);
        let transcript = simulate(&mut p, 3600);
        assert!(
            transcript.ends_with("  5.815 Succeeded Completed 0/1 restarts=0\n"),
            "{transcript}"
        );
    }

    #[test]
    fn startup_seconds_delay_running() {
        let mut p = pod(&[("sim.miniplane.dev/startup-seconds", "4")], "Always", None);
        let transcript = simulate(&mut p, 60);
        assert!(
            transcript.contains("  6.815 Running Running 1/1 restarts=0\n          2.815 Normal Pulled"),
            "{transcript}"
        );
    }

    #[test]
    fn deletion_kills_containers_then_deletes() {
        let mut p = pod(&[], "Always", None);
        simulate(&mut p, 60);
        let behaviour = Behaviour::for_pod(&p, SEED);
        let at = t0() + SignedDuration::from_secs(100);
        p.metadata.deletion_timestamp = Some(Time(at + SignedDuration::from_secs(30)));
        p.metadata.deletion_grace_period_seconds = Some(30);
        assert_eq!(kubectl_columns(&p).0, "Terminating");
        let step = next(&p, &behaviour, at);
        assert_eq!(step.events.len(), 1);
        assert_eq!(step.events[0].reason, "Killing");
        assert_eq!(step.events[0].message, "Stopping container nginx");
        assert_eq!(step.delete_after, Some(std::time::Duration::ZERO));
        p.status = step.status;
        assert_eq!(kubectl_columns(&p), ("Completed".into(), "0/1".into()));
        assert_eq!(p.status.as_ref().unwrap().phase.as_deref(), Some("Succeeded"));
        // A second look only repeats the delete.
        let again = next(&p, &behaviour, at);
        assert_eq!(
            again,
            Step {
                delete_after: Some(std::time::Duration::ZERO),
                ..Step::default()
            }
        );
    }

    #[test]
    fn pods_without_a_node_are_ignored_and_late_callers_catch_up() {
        let mut p = pod(&[], "Always", None);
        p.spec.as_mut().unwrap().node_name = None;
        assert_eq!(next(&p, &Behaviour::for_pod(&p, SEED), t0()), Step::default());

        let annotations = [
            ("sim.miniplane.dev/run-seconds", "3"),
            ("sim.miniplane.dev/exit-code", "1"),
        ];
        let mut p = pod(&annotations, "Always", None);
        let b = Behaviour::for_pod(&p, SEED);
        p.status = next(&p, &b, t0()).status;
        let late = next(&p, &b, t0() + SignedDuration::from_secs(20));
        let c = &late.status.as_ref().unwrap().container_statuses.as_ref().unwrap()[0];
        assert_eq!(c.restart_count, 2);
        assert_eq!(late.requeue_after, Some(std::time::Duration::from_millis(2815)));
        assert_eq!(late.events.iter().filter(|e| e.reason == "Started").count(), 3);
    }
}
