//! Synthetic container logs, so `kubectl logs` has something truthful to show.
//!
//! A real container writes whatever its process prints, and the kubelet serves
//! it from the runtime's log files (`kubectl logs --previous` reads the last
//! terminated instance). A simulated container "prints" a start line when its
//! run starts, a heartbeat line every 10 s while it runs, and a final line when
//! it exits — all derived from the times in the pod's status, so the same
//! status always gives the same log, and lines never appear in the future.
//!
//! Simplification: a long-running container's log keeps only its most recent
//! [`MAX_LINES`] lines (as log rotation would), and nothing is image-specific.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Pod};

use crate::lifecycle::go_duration;

/// Interval between heartbeat lines.
pub const HEARTBEAT: SignedDuration = SignedDuration::from_secs(10);
/// Most lines one container instance keeps.
pub const MAX_LINES: usize = 5000;

/// The current (or, if it has exited and not restarted, the last) instance of
/// `container`'s log at `now`. Empty while the container has never started.
pub fn log_lines(pod: &Pod, container: &str, now: Timestamp) -> Vec<(Timestamp, String)> {
    let Some(status) = container_status(pod, container) else {
        return Vec::new();
    };
    let Some(state) = status.state.as_ref() else {
        return Vec::new();
    };
    if let Some(running) = &state.running {
        let Some(started) = running.started_at.as_ref() else {
            return Vec::new();
        };
        return instance_lines(pod, status, started.0, now, None);
    }
    match &state.terminated {
        Some(terminated) => terminated_lines(pod, status, terminated, now),
        None => Vec::new(),
    }
}

/// The previous instance's log (`kubectl logs --previous`): the run recorded in
/// `lastState.terminated`. Empty when there is none.
pub fn previous_log_lines(pod: &Pod, container: &str, now: Timestamp) -> Vec<(Timestamp, String)> {
    let Some(status) = container_status(pod, container) else {
        return Vec::new();
    };
    let last = status.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    last.map(|terminated| terminated_lines(pod, status, terminated, now))
        .unwrap_or_default()
}

fn container_status<'a>(pod: &'a Pod, container: &str) -> Option<&'a ContainerStatus> {
    let status = pod.status.as_ref()?;
    let all = status.container_statuses.iter().flatten();
    all.chain(status.init_container_statuses.iter().flatten())
        .find(|s| s.name == container)
}

fn terminated_lines(
    pod: &Pod,
    status: &ContainerStatus,
    terminated: &ContainerStateTerminated,
    now: Timestamp,
) -> Vec<(Timestamp, String)> {
    let (Some(started), Some(finished)) = (&terminated.started_at, &terminated.finished_at) else {
        return Vec::new();
    };
    let until = finished.0.min(now);
    let last = (finished.0 <= now).then(|| (finished.0, exit_line(pod, terminated)));
    instance_lines(pod, status, started.0, until, last)
}

fn instance_lines(
    pod: &Pod,
    status: &ContainerStatus,
    started: Timestamp,
    until: Timestamp,
    last: Option<(Timestamp, String)>,
) -> Vec<(Timestamp, String)> {
    if until < started {
        return Vec::new();
    }
    let mut lines = vec![(started, start_line(pod, status))];
    let beats = until.duration_since(started).as_secs() / HEARTBEAT.as_secs();
    let first_kept = (beats - MAX_LINES as i64 + 1).max(1);
    for beat in first_kept..=beats {
        let Ok(beat) = i32::try_from(beat) else { break };
        let at = started + HEARTBEAT * beat;
        // A heartbeat at the exact exit instant is superseded by the exit line.
        if last.as_ref().is_some_and(|(end, _)| at >= *end) {
            break;
        }
        lines.push((
            at,
            format!(
                "[miniplane] {} alive, up {}",
                status.name,
                go_duration(at.duration_since(started))
            ),
        ));
    }
    lines.extend(last);
    lines
}

fn start_line(pod: &Pod, status: &ContainerStatus) -> String {
    let meta = &pod.metadata;
    format!(
        "[miniplane] starting container {} (image {}) in pod {}/{}, restart {}",
        status.name,
        status.image,
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
        status.restart_count
    )
}

fn exit_line(pod: &Pod, terminated: &ContainerStateTerminated) -> String {
    if terminated.reason.as_deref() == Some("Completed") && pod.metadata.deletion_timestamp.is_some() {
        return "[miniplane] received SIGTERM, shutting down; exit code 0".into();
    }
    format!("[miniplane] exiting with code {}", terminated.exit_code)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    use super::*;

    fn t(secs: i64) -> Timestamp {
        "2025-05-01T10:00:00Z".parse::<Timestamp>().unwrap() + SignedDuration::from_secs(secs)
    }

    fn pod(state: ContainerState, last: Option<ContainerState>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("web-1".into()),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            spec: None,
            status: Some(PodStatus {
                container_statuses: Some(vec![ContainerStatus {
                    name: "nginx".into(),
                    image: "docker.io/library/nginx:1.27".into(),
                    restart_count: 1,
                    state: Some(state),
                    last_state: last,
                    ..ContainerStatus::default()
                }]),
                ..PodStatus::default()
            }),
        }
    }

    fn terminated(code: i32, from: i64, to: i64) -> ContainerState {
        ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: code,
                reason: Some(if code == 0 { "Completed" } else { "Error" }.into()),
                started_at: Some(Time(t(from))),
                finished_at: Some(Time(t(to))),
                ..ContainerStateTerminated::default()
            }),
            ..ContainerState::default()
        }
    }

    #[test]
    fn running_container_logs_start_and_heartbeats_up_to_now() {
        let running = ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(Time(t(5))),
            }),
            ..ContainerState::default()
        };
        let lines = log_lines(&pod(running, Some(terminated(1, 0, 3))), "nginx", t(30));
        let text: Vec<_> = lines.iter().map(|(at, line)| format!("{at} {line}")).collect();
        assert_eq!(
            text,
            [
                "2025-05-01T10:00:05Z [miniplane] starting container nginx (image docker.io/library/nginx:1.27) \
                 in pod default/web-1, restart 1",
                "2025-05-01T10:00:15Z [miniplane] nginx alive, up 10s",
                "2025-05-01T10:00:25Z [miniplane] nginx alive, up 20s",
            ]
        );
        let previous = previous_log_lines(
            &pod(ContainerState::default(), Some(terminated(1, 0, 3))),
            "nginx",
            t(30),
        );
        assert_eq!(previous.last().unwrap().1, "[miniplane] exiting with code 1");
        assert_eq!(previous.len(), 2);
    }

    #[test]
    fn exited_container_ends_with_its_exit_line() {
        let lines = log_lines(&pod(terminated(0, 0, 20), None), "nginx", t(100));
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2], (t(20), "[miniplane] exiting with code 0".to_string()));
        assert!(log_lines(&pod(ContainerState::default(), None), "nginx", t(100)).is_empty());
        assert!(log_lines(&pod(terminated(0, 0, 20), None), "other", t(100)).is_empty());
    }

    #[test]
    fn long_runs_keep_only_recent_lines() {
        let running = ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(Time(t(0))),
            }),
            ..ContainerState::default()
        };
        let lines = log_lines(&pod(running, None), "nginx", t(10 * 86_400));
        assert_eq!(lines.len(), MAX_LINES + 1);
        assert!(lines.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
