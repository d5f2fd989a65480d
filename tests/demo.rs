//! `miniplane demo <scenario>`: every scenario, run by the built binary, ends as designed
//! (exit 0) and shows the rollout step by step; `--html` writes the timeline page. (A test of
//! the `miniplane` package, so that Cargo builds the binary it runs.)
//!
//! Each run is a whole cluster at 30x (half the demo's default, for a loaded CI machine); at
//! most two run at once, so that two CPU cores keep the simulated time honest.

use std::sync::LazyLock;
use std::time::Duration;

use tokio::sync::Semaphore;

/// The runs allowed at once.
static SLOTS: LazyLock<Semaphore> = LazyLock::new(|| Semaphore::new(2));
/// The real-time bound of one run.
const PATIENCE: Duration = Duration::from_secs(90);

/// One run of `miniplane demo`.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Panics unless the run exited 0 and printed every one of `lines` (substrings).
    fn assert_ok(&self, lines: &[&str]) {
        assert_eq!(
            self.code,
            Some(0),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        for l in lines {
            assert!(self.stdout.contains(l), "no {l:?} in:\n{}", self.stdout);
        }
    }

    /// The step lines (after the header, before the outcome).
    fn steps(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("TIME"))
            .skip(1)
            .take_while(|l| {
                !l.starts_with("ok:") && !l.starts_with("NOT AS DESIGNED") && !l.starts_with("TIMED OUT")
            })
            .collect()
    }
}

/// Runs `miniplane demo <args>`.
async fn demo(args: &[&str]) -> Run {
    let _slot = SLOTS.acquire().await.unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_miniplane"))
        .arg("demo")
        .args(args)
        .args(["--time-scale", "30"])
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(PATIENCE, out)
        .await
        .unwrap_or_else(|_| panic!("miniplane demo {args:?} ran longer than {PATIENCE:?}"))
        .expect("miniplane runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_update_replaces_pods_one_at_a_time_under_traffic() {
    let r = demo(&["rolling-update"]).await;
    r.assert_ok(&[
        "ok: deployment/podinfo rolled out: every replica runs 6.1.0",
        "── new version: 6.1.0",
        "Scaled up replica set podinfo-",
    ]);
    let steps = r.steps();
    // Both versions serve at once, the old one shrinking as the new one grows.
    assert!(
        steps
            .iter()
            .any(|l| l.contains(" 6.0.0 ") && l.contains(" 6.1.0 ")),
        "{}",
        r.stdout
    );
    // Requests were answered, and measured.
    assert!(steps.iter().any(|l| l.contains("100.0%")), "{}", r.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_stops_every_old_pod_before_the_new_ones() {
    let r = demo(&["recreate"]).await;
    r.assert_ok(&[
        "ok: deployment/podinfo rolled out: every replica runs 6.1.0",
        "Scaled down replica set podinfo-",
    ]);
    // Never an old and a new pod Ready at once.
    for l in r.steps() {
        let ready = |version: &str| {
            l.split(" │ ")
                .find_map(|part| {
                    part.split_once(&format!("{version} "))
                        .map(|(_, rest)| rest.to_string())
                })
                .and_then(|rest| rest.split('/').next().and_then(|n| n.trim().parse::<i32>().ok()))
                .unwrap_or(0)
        };
        assert!(ready("6.0.0") == 0 || ready("6.1.0") == 0, "{l}\n{}", r.stdout);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_steps_the_weight_up_and_promotes_a_good_version() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("out.html");
    let r = demo(&["canary", "--html", html.to_str().unwrap()]).await;
    r.assert_ok(&[
        "ok: canary/podinfo promoted: ended Succeeded with the primary on 6.1.0",
        "Advance podinfo.default canary weight 10",
        "Advance podinfo.default canary weight 50",
        "Promotion completed! Scaling down podinfo.default",
        "timeline written to",
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.matches("<svg").count() >= 4, "{page}");
    for series in [
        "canary weight",
        "primary ready replicas",
        "canary ready replicas",
        "primary success rate",
        "primary p99 latency",
    ] {
        assert!(page.contains(&format!(">{series}</text>")), "no series {series}");
    }
    assert!(page.contains("ok: canary/podinfo promoted"));
    assert!(
        !page.contains("<script") && !page.contains("<link"),
        "self-contained"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_bad_rolls_back_on_the_error_rate() {
    let r = demo(&["canary-bad"]).await;
    r.assert_ok(&[
        "ok: canary/podinfo rolled back: ended Failed with the primary on 6.0.0",
        "with sim.miniplane.dev/error-rate=0.2",
        "Halt podinfo.default advancement request-success-rate",
        "Canary failed! Scaling down podinfo.default",
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_slow_rolls_back_on_the_latency() {
    let r = demo(&["canary-slow"]).await;
    r.assert_ok(&[
        "ok: canary/podinfo rolled back: ended Failed with the primary on 6.0.0",
        "Halt podinfo.default advancement request-duration",
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blue_green_analyses_without_traffic_then_switches() {
    let r = demo(&["blue-green"]).await;
    r.assert_ok(&[
        "ok: canary/podinfo promoted: ended Succeeded with the primary on 6.1.0",
        "Advance podinfo.default canary iteration 4/4",
    ]);
    let steps = r.steps();
    // All or nothing: the route never splits, and the users' traffic moves only once every
    // iteration passed.
    for l in steps.iter().filter(|l| l.contains(" Progressing ")) {
        assert!(l.contains("weight   0%") || l.contains("weight 100%"), "{l}");
    }
    let last_check = steps.iter().position(|l| l.contains("iteration 4/4"));
    let switched = steps.iter().position(|l| l.contains("weight 100%"));
    assert!(
        last_check.is_some() && switched.is_none_or(|s| s > last_check.unwrap_or(0)),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ab_testing_promotes_after_its_iterations() {
    let r = demo(&["ab-testing"]).await;
    r.assert_ok(&[
        "ok: canary/podinfo promoted: ended Succeeded with the primary on 6.1.0",
        "Advance podinfo.default canary iteration 4/4",
    ]);
}

#[tokio::test]
async fn an_unknown_scenario_is_refused_with_the_list() {
    let r = demo(&["nope"]).await;
    assert_eq!(r.code, Some(2), "clap's usage error");
    assert!(r.stderr.contains("rolling-update"), "{}", r.stderr);
}
