//! How a simulated pod behaves.
//!
//! A real container decides for itself how long it runs, how it exits and
//! whether it answers its readiness probe. miniplane has no process to ask, so
//! users say it with pod annotations (a stable, documented contract):
//!
//! | annotation | value | default |
//! |---|---|---|
//! | `sim.miniplane.dev/run-seconds` | whole seconds each container run lasts before exiting | run until deleted |
//! | `sim.miniplane.dev/exit-code` | exit code when a run ends (0–255) | `0` |
//! | `sim.miniplane.dev/image-pull` | `fail`: every pull fails (ErrImagePull, then ImagePullBackOff; never Running) | pulls succeed |
//! | `sim.miniplane.dev/ready` | `never`: containers never pass readiness | ready per the probe |
//! | `sim.miniplane.dev/startup-seconds` | extra whole seconds between the image pull and Running | `0` |
//!
//! How a pod answers simulated requests and what CPU it uses
//! (`sim.miniplane.dev/error-rate`, `latency-ms`, `latency-p99-ms`,
//! `cpu-millicores`, `cpu-millicores-per-request`) is read by the traffic
//! simulation: see [`crate::traffic::annotations`].
//!
//! The annotations apply to every regular container of the pod. Everything else
//! comes from the pod spec the way a kubelet reads it: a container's readiness
//! starts at the first probe tick at or after `initialDelaySeconds` (ticks every
//! `periodSeconds`, default 10; no readinessProbe means ready as soon as it
//! runs), and the grace period is `terminationGracePeriodSeconds` (default 30).
//!
//! The one random input, the image pull time (1–3 s for a first pull, 0.2–0.8 s
//! for a re-pull under `imagePullPolicy: Always`), is drawn from a generator
//! passed in, or from one seeded by the simulation's seed (`--seed`) and the
//! pod's namespace and name: under one seed a pod of a given name always gets
//! the same timeline, in whatever order pods are synced and whatever its uid.
//! An invalid annotation value never fails the pod: it yields a warning (for
//! the runner to surface, e.g. as an Event) and the default.
//!
//! Simplifications: startup and liveness probes are not simulated (a container
//! is `started` as soon as it runs); probe jitter is ignored.

use std::collections::BTreeMap;

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::{Container, Pod};
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::stable_hash;

/// Prefix of every simulation annotation.
pub const ANNOTATION_PREFIX: &str = "sim.miniplane.dev/";
/// Annotation: seconds each container run lasts.
pub const RUN_SECONDS: &str = "sim.miniplane.dev/run-seconds";
/// Annotation: exit code when a run ends.
pub const EXIT_CODE: &str = "sim.miniplane.dev/exit-code";
/// Annotation: `fail` makes every image pull fail.
pub const IMAGE_PULL: &str = "sim.miniplane.dev/image-pull";
/// Annotation: `never` keeps containers unready.
pub const READY: &str = "sim.miniplane.dev/ready";
/// Annotation: extra seconds before a container runs.
pub const STARTUP_SECONDS: &str = "sim.miniplane.dev/startup-seconds";

const DEFAULT_GRACE_SECONDS: i64 = 30;
const DEFAULT_PROBE_PERIOD_SECONDS: i64 = 10;

/// Whether image pulls succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImagePull {
    /// Pulls succeed after the pull delay.
    Succeed,
    /// Every pull fails after the pull delay.
    Fail,
}

/// When a running container becomes ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Ready this long after the container started.
    After(SignedDuration),
    /// Never ready.
    Never,
}

/// Per-container timings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerBehaviour {
    /// Container name.
    pub name: String,
    /// Image as written in the spec.
    pub image: String,
    /// How long the first pull takes.
    pub pull: SignedDuration,
    /// How long a re-pull on restart takes (only with `imagePullPolicy: Always`).
    pub repull: SignedDuration,
    /// Whether the image is pulled again on every start (`imagePullPolicy: Always`).
    pub pull_always: bool,
    /// When the container becomes ready after it starts.
    pub readiness: Readiness,
}

/// The simulated behaviour of one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behaviour {
    /// How long each container run lasts; `None` runs until the pod is deleted.
    pub run: Option<SignedDuration>,
    /// Exit code when a run ends.
    pub exit_code: i32,
    /// Whether image pulls succeed.
    pub image_pull: ImagePull,
    /// Extra delay between the image pull and the container running.
    pub startup: SignedDuration,
    /// `terminationGracePeriodSeconds`.
    pub termination_grace: SignedDuration,
    /// One entry per `spec.containers` entry, in order.
    pub containers: Vec<ContainerBehaviour>,
    /// Human-readable problems with the annotations (defaults were used).
    pub warnings: Vec<String>,
}

impl Behaviour {
    /// The behaviour of `pod` in the simulation seeded by `seed`, with pull
    /// times drawn from a generator seeded by [`pod_seed`]: under one seed, a
    /// pod of a given namespace and name always gets the same timeline.
    pub fn for_pod(pod: &Pod, seed: u64) -> Behaviour {
        let mut rng = ChaCha8Rng::seed_from_u64(pod_seed(pod, seed));
        Behaviour::from_pod(pod, &mut rng)
    }

    /// The behaviour of `pod`, with pull times drawn from `rng`.
    pub fn from_pod(pod: &Pod, rng: &mut impl Rng) -> Behaviour {
        let empty = BTreeMap::new();
        let annotations = pod.metadata.annotations.as_ref().unwrap_or(&empty);
        let mut warnings = Vec::new();
        let run = parse_seconds(annotations, RUN_SECONDS, "run until deleted", &mut warnings);
        let exit_code = parse_exit_code(annotations, &mut warnings);
        let image_pull = parse_image_pull(annotations, &mut warnings);
        let never_ready = parse_ready(annotations, &mut warnings);
        let startup = parse_seconds(annotations, STARTUP_SECONDS, "0", &mut warnings).unwrap_or_default();
        let spec = pod.spec.as_ref();
        let grace = spec
            .and_then(|s| s.termination_grace_period_seconds)
            .filter(|g| *g >= 0)
            .unwrap_or(DEFAULT_GRACE_SECONDS);
        let containers = spec
            .map(|s| {
                s.containers
                    .iter()
                    .map(|c| container_behaviour(c, never_ready, rng))
                    .collect()
            })
            .unwrap_or_default();
        Behaviour {
            run,
            exit_code,
            image_pull,
            startup,
            termination_grace: SignedDuration::from_secs(grace),
            containers,
            warnings,
        }
    }

    /// The behaviour of the container called `name`.
    pub fn container(&self, name: &str) -> Option<&ContainerBehaviour> {
        self.containers.iter().find(|c| c.name == name)
    }
}

/// The per-pod seed [`Behaviour::for_pod`] uses: a hash of the simulation's
/// `seed` and the pod's namespace and name. Not the uid, which differs each
/// time a pod of the same name is created.
pub fn pod_seed(pod: &Pod, seed: u64) -> u64 {
    let meta = &pod.metadata;
    stable_hash(&[
        &seed.to_string(),
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    ])
}

fn container_behaviour(container: &Container, never_ready: bool, rng: &mut impl Rng) -> ContainerBehaviour {
    let pull = SignedDuration::from_millis(rng.random_range(1000..=3000));
    let repull = SignedDuration::from_millis(rng.random_range(200..=800));
    let image = container.image.clone().unwrap_or_default();
    let pull_always = match container.image_pull_policy.as_deref() {
        Some(policy) => policy == "Always",
        None => image_defaults_to_pull_always(&image),
    };
    let readiness = if never_ready {
        Readiness::Never
    } else {
        Readiness::After(readiness_delay(container))
    };
    ContainerBehaviour {
        name: container.name.clone(),
        image,
        pull,
        repull,
        pull_always,
        readiness,
    }
}

/// API defaulting: `Always` for `:latest` or an image without tag or digest.
fn image_defaults_to_pull_always(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last_segment = image.rsplit('/').next().unwrap_or(image);
    match last_segment.split_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

/// Readiness delay from the readinessProbe: the first probe tick (every
/// `periodSeconds`, starting when the container starts) at or after
/// `initialDelaySeconds`. No probe: ready immediately.
pub fn readiness_delay(container: &Container) -> SignedDuration {
    let Some(probe) = &container.readiness_probe else {
        return SignedDuration::ZERO;
    };
    let initial = i64::from(probe.initial_delay_seconds.unwrap_or(0).max(0));
    let period = probe
        .period_seconds
        .map(i64::from)
        .filter(|p| *p > 0)
        .unwrap_or(DEFAULT_PROBE_PERIOD_SECONDS);
    let ticks = (initial + period - 1) / period;
    SignedDuration::from_secs(ticks * period)
}

fn invalid(key: &str, value: &str, expected: &str, default: &str) -> String {
    format!("annotation {key}: invalid value {value:?} ({expected}); using the default ({default})")
}

fn parse_seconds(
    annotations: &BTreeMap<String, String>,
    key: &str,
    default: &str,
    warnings: &mut Vec<String>,
) -> Option<SignedDuration> {
    let value = annotations.get(key)?;
    match value.trim().parse::<u32>() {
        Ok(secs) => Some(SignedDuration::from_secs(i64::from(secs))),
        Err(_) => {
            warnings.push(invalid(key, value, "expected a whole number of seconds", default));
            None
        }
    }
}

fn parse_exit_code(annotations: &BTreeMap<String, String>, warnings: &mut Vec<String>) -> i32 {
    let Some(value) = annotations.get(EXIT_CODE) else {
        return 0;
    };
    match value.trim().parse::<i32>() {
        Ok(code) if (0..=255).contains(&code) => code,
        _ => {
            warnings.push(invalid(
                EXIT_CODE,
                value,
                "expected an integer from 0 to 255",
                "0",
            ));
            0
        }
    }
}

fn parse_image_pull(annotations: &BTreeMap<String, String>, warnings: &mut Vec<String>) -> ImagePull {
    match annotations.get(IMAGE_PULL).map(|v| v.trim()) {
        None => ImagePull::Succeed,
        Some("fail") => ImagePull::Fail,
        Some(value) => {
            warnings.push(invalid(IMAGE_PULL, value, "expected \"fail\"", "pulls succeed"));
            ImagePull::Succeed
        }
    }
}

fn parse_ready(annotations: &BTreeMap<String, String>, warnings: &mut Vec<String>) -> bool {
    match annotations.get(READY).map(|v| v.trim()) {
        None => false,
        Some("never") => true,
        Some(value) => {
            warnings.push(invalid(
                READY,
                value,
                "expected \"never\"",
                "ready per the readiness probe",
            ));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{PodSpec, Probe};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    /// The simulation seed of these tests.
    const SEED: u64 = 42;

    fn pod(annotations: &[(&str, &str)], container: Container) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("web-1".into()),
                namespace: Some("default".into()),
                uid: Some("uid-1".into()),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                containers: vec![container],
                ..PodSpec::default()
            }),
            status: None,
        }
    }

    fn nginx() -> Container {
        Container {
            name: "nginx".into(),
            image: Some("nginx:1.27".into()),
            ..Container::default()
        }
    }

    #[test]
    fn defaults_without_annotations() {
        let b = Behaviour::for_pod(&pod(&[], nginx()), SEED);
        assert_eq!(b.run, None);
        assert_eq!(b.exit_code, 0);
        assert_eq!(b.image_pull, ImagePull::Succeed);
        assert_eq!(b.startup, SignedDuration::ZERO);
        assert_eq!(b.termination_grace, SignedDuration::from_secs(30));
        assert!(b.warnings.is_empty());
        let c = &b.containers[0];
        assert!(c.pull >= SignedDuration::from_secs(1) && c.pull <= SignedDuration::from_secs(3));
        assert!(!c.pull_always);
        assert_eq!(c.readiness, Readiness::After(SignedDuration::ZERO));
    }

    #[test]
    fn annotations_are_honoured() {
        let p = pod(
            &[
                (RUN_SECONDS, "3"),
                (EXIT_CODE, "1"),
                (IMAGE_PULL, "fail"),
                (READY, "never"),
                (STARTUP_SECONDS, " 4 "),
            ],
            nginx(),
        );
        let b = Behaviour::for_pod(&p, SEED);
        assert_eq!(b.run, Some(SignedDuration::from_secs(3)));
        assert_eq!(b.exit_code, 1);
        assert_eq!(b.image_pull, ImagePull::Fail);
        assert_eq!(b.startup, SignedDuration::from_secs(4));
        assert_eq!(b.containers[0].readiness, Readiness::Never);
        assert!(b.warnings.is_empty());
    }

    #[test]
    fn invalid_values_warn_and_default() {
        let p = pod(
            &[
                (RUN_SECONDS, "soon"),
                (EXIT_CODE, "300"),
                (IMAGE_PULL, "maybe"),
                (READY, "later"),
                (STARTUP_SECONDS, "-1"),
            ],
            nginx(),
        );
        let b = Behaviour::for_pod(&p, SEED);
        assert_eq!(b.run, None);
        assert_eq!(b.exit_code, 0);
        assert_eq!(b.image_pull, ImagePull::Succeed);
        assert_eq!(b.startup, SignedDuration::ZERO);
        assert_eq!(b.warnings.len(), 5);
        assert_eq!(
            b.warnings[0],
            "annotation sim.miniplane.dev/run-seconds: invalid value \"soon\" \
             (expected a whole number of seconds); using the default (run until deleted)"
        );
    }

    #[test]
    fn readiness_rounds_up_to_the_probe_period() {
        let probe = |initial, period| Container {
            readiness_probe: Some(Probe {
                initial_delay_seconds: initial,
                period_seconds: period,
                ..Probe::default()
            }),
            ..nginx()
        };
        assert_eq!(
            readiness_delay(&probe(Some(5), None)),
            SignedDuration::from_secs(10)
        );
        assert_eq!(
            readiness_delay(&probe(Some(5), Some(2))),
            SignedDuration::from_secs(6)
        );
        assert_eq!(
            readiness_delay(&probe(Some(4), Some(2))),
            SignedDuration::from_secs(4)
        );
        assert_eq!(readiness_delay(&probe(None, None)), SignedDuration::ZERO);
        assert_eq!(readiness_delay(&nginx()), SignedDuration::ZERO);
    }

    #[test]
    fn pull_policy_follows_api_defaulting() {
        assert!(image_defaults_to_pull_always("nginx"));
        assert!(image_defaults_to_pull_always("nginx:latest"));
        assert!(image_defaults_to_pull_always("localhost:5000/nginx"));
        assert!(!image_defaults_to_pull_always("localhost:5000/nginx:1.27"));
        assert!(!image_defaults_to_pull_always("nginx@sha256:abc"));
    }

    #[test]
    fn seeded_behaviour_is_deterministic_per_pod() {
        let a = Behaviour::for_pod(&pod(&[], nginx()), SEED);
        let b = Behaviour::for_pod(&pod(&[], nginx()), SEED);
        assert_eq!(a, b);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let c = Behaviour::from_pod(&pod(&[], nginx()), &mut rng);
        assert!(c.containers[0].pull >= SignedDuration::from_secs(1));
    }

    /// Both pull times of the pod's one container.
    fn pulls(b: &Behaviour) -> (SignedDuration, SignedDuration) {
        (b.containers[0].pull, b.containers[0].repull)
    }

    #[test]
    fn same_seed_and_name_draw_the_same_pulls_whatever_the_uid() {
        let first = pod(&[], nginx());
        let mut recreated = pod(&[], nginx());
        recreated.metadata.uid = Some("uid-2".into());
        assert_eq!(
            Behaviour::for_pod(&first, SEED),
            Behaviour::for_pod(&recreated, SEED)
        );
    }

    #[test]
    fn another_seed_draws_other_pulls() {
        let p = pod(&[], nginx());
        assert_ne!(
            pulls(&Behaviour::for_pod(&p, SEED)),
            pulls(&Behaviour::for_pod(&p, SEED + 1))
        );
    }

    #[test]
    fn another_pod_name_draws_other_pulls() {
        let web1 = pod(&[], nginx());
        let mut web2 = pod(&[], nginx());
        web2.metadata.name = Some("web-2".into());
        let mut other_ns = pod(&[], nginx());
        other_ns.metadata.namespace = Some("team".into());
        let seeded = |p: &Pod| pulls(&Behaviour::for_pod(p, SEED));
        assert_ne!(seeded(&web1), seeded(&web2));
        assert_ne!(seeded(&web1), seeded(&other_ns));
    }
}
