//! The client matrix: the clients people really use, unmodified, against a
//! fresh miniplane with the kubeconfig it wrote (HTTPS, the cluster CA, a
//! token and a client certificate; nothing edited).
//!
//! Each client runs the same everyday operations (the list is
//! [`OPERATIONS`]; each script says what each one checks, beside its code):
//! Python's `kubernetes`, JavaScript's `@kubernetes/client-node` and Ruby's
//! `kubeclient` as scripts under `tests/clients/<client>/` that print one
//! `RESULT <operation> PASS|FAIL <why>` line per operation, and kube-rs as
//! the module [`kube_rs`]. The test prints a table client × operation and
//! fails on any FAIL or missing line.
//!
//! Before the clients run, the test installs the custom resource definition
//! `tests/testdata/crds/gizmos.yaml` with kubectl; the `custom_resource`
//! operation of each client works with Gizmos in its own namespace.
//!
//! A client whose runtime or package is not installed is skipped with a
//! note saying how to install it, except under CI (`CI` set), where
//! `.ci/run` installs them all and a missing client fails the test.

#[path = "clients/kube_rs.rs"]
mod kube_rs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use e2e::{Cluster, Config};

/// The everyday operations, in the order every client runs them.
const OPERATIONS: [&str; 24] = [
    "create",
    "get",
    "list",
    "replace",
    "label_selector",
    "field_selector",
    "limit_continue",
    "merge_patch",
    "strategic_patch",
    "json_patch",
    "apply_twice",
    "apply_conflict",
    "apply_force",
    "scale",
    "watch_from_rv",
    "watch_helper",
    "pod_logs",
    "foreground_delete",
    "status_404",
    "status_409",
    "status_422",
    "discovery",
    "dynamic_client",
    "custom_resource",
];

/// The longest one client's script may run.
const SCRIPT_LIMIT: Duration = Duration::from_secs(240);

/// A client driven by a script in `tests/clients/<dir>/`.
struct Script {
    name: &'static str,
    dir: &'static str,
    program: &'static str,
    args: &'static [&'static str],
    /// A command that succeeds when the client is installed.
    probe: &'static [&'static str],
    install: &'static str,
}

const SCRIPTS: [Script; 3] = [
    Script {
        name: "python",
        dir: "python",
        program: "python3",
        args: &["everyday.py"],
        probe: &["python3", "-c", "import kubernetes"],
        install: "pip install -r tests/clients/python/requirements.txt",
    },
    Script {
        name: "javascript",
        dir: "javascript",
        program: "node",
        args: &["everyday.mjs"],
        probe: &[
            "node",
            "--input-type=module",
            "-e",
            "await import('@kubernetes/client-node')",
        ],
        install: "npm ci --prefix tests/clients/javascript",
    },
    Script {
        name: "ruby",
        dir: "ruby",
        program: "ruby",
        args: &["everyday.rb"],
        probe: &["ruby", "-e", "require 'kubeclient'"],
        install: "apt-get install -y ruby-kubeclient",
    },
];

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients")
}

/// What one client run gave: an outcome per operation it reported.
type Outcomes = BTreeMap<String, Result<(), String>>;

/// `Ok(())` when the client can run here; otherwise why not.
async fn installed(script: &Script) -> Result<(), String> {
    let (program, args) = script.probe.split_first().expect("a probe command");
    let out = tokio::process::Command::new(program)
        .args(args)
        .current_dir(clients_dir().join(script.dir))
        .output()
        .await;
    match out {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(format!("not installed here ({})", script.install)),
    }
}

async fn run_script(script: &Script, kubeconfig: &Path) -> Result<Outcomes, String> {
    let child = tokio::process::Command::new(script.program)
        .args(script.args)
        .current_dir(clients_dir().join(script.dir))
        .env("KUBECONFIG", kubeconfig)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(SCRIPT_LIMIT, child)
        .await
        .map_err(|_| format!("did not finish within {SCRIPT_LIMIT:?}"))?
        .map_err(|e| format!("could not run {}: {e}", script.program))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let outcomes = parse_results(&stdout);
    if outcomes.is_empty() {
        return Err(format!(
            "printed no RESULT line (exit {:?}); stderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(outcomes)
}

/// The `RESULT <operation> PASS|FAIL <why>` lines of a script's output.
fn parse_results(stdout: &str) -> Outcomes {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .filter_map(|rest| {
            let mut parts = rest.splitn(3, ' ');
            let op = parts.next()?.to_string();
            let outcome = match parts.next()? {
                "PASS" => Ok(()),
                _ => Err(parts.next().unwrap_or("(no reason given)").to_string()),
            };
            Some((op, outcome))
        })
        .collect()
}

/// The table client × operation, then every failure's reason; returns the
/// failures (a missing operation counts as one).
fn report(columns: &[(String, Result<Outcomes, String>)]) -> Vec<String> {
    let mut failures = Vec::new();
    let mut table = format!("{:<18}", "operation");
    for (name, _) in columns {
        table.push_str(&format!("{name:<12}"));
    }
    table.push('\n');
    for op in OPERATIONS {
        table.push_str(&format!("{op:<18}"));
        for (name, run) in columns {
            let cell = match run {
                Err(_) => "-",
                Ok(outcomes) => match outcomes.get(op) {
                    Some(Ok(())) => "PASS",
                    Some(Err(why)) => {
                        failures.push(format!("{name} {op}: {why}"));
                        "FAIL"
                    }
                    None => {
                        failures.push(format!("{name} {op}: no RESULT line"));
                        "MISSING"
                    }
                },
            };
            table.push_str(&format!("{cell:<12}"));
        }
        table.push('\n');
    }
    for (name, run) in columns {
        if let Err(why) = run {
            table.push_str(&format!("{name}: {why}\n"));
        }
    }
    for f in &failures {
        table.push_str(&format!("FAILED {f}\n"));
    }
    println!("{table}");
    // The test harness captures what passing tests print; `.ci/run` shows
    // the table from this file.
    let _ = std::fs::write(MATRIX_FILE, &table);
    failures
}

/// Where the last run's table is written (Cargo's temporary dir for tests).
const MATRIX_FILE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/client-matrix.txt");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_client_does_the_everyday_operations_unmodified() {
    let mut c = Cluster::start_with(Config {
        clock: store::Clock::scaled(10.0),
        ..Config::ephemeral()
    })
    .await;
    let kubeconfig = c.server().kubeconfig().to_path_buf();
    let in_ci = std::env::var_os("CI").is_some();
    install_gizmos(&c).await;
    let mut columns: Vec<(String, Result<Outcomes, String>)> = Vec::new();
    let kube = kube_rs::everyday(&kubeconfig).await;
    columns.push((
        "kube-rs".into(),
        Ok(kube.into_iter().map(|(op, o)| (op.to_string(), o)).collect()),
    ));
    for script in &SCRIPTS {
        let run = match installed(script).await {
            Err(why) if !in_ci => Err(format!("skipped: {why}")),
            Err(why) => Ok(Outcomes::from([("install".to_string(), Err(why))])),
            Ok(()) => run_script(script, &kubeconfig).await,
        };
        let run = match run {
            Err(why) if !why.starts_with("skipped") => Ok(Outcomes::from([("run".to_string(), Err(why))])),
            other => other,
        };
        columns.push((script.name.into(), run));
    }
    let mut failures = report(&columns);
    // Failures of a whole run (not installed under CI, crashed) are not operations.
    for (name, run) in &columns {
        if let Ok(outcomes) = run {
            for key in ["install", "run"] {
                if let Some(Err(why)) = outcomes.get(key) {
                    failures.push(format!("{name}: {why}"));
                }
            }
        }
    }
    c.stop().await;
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Installs the Gizmo definition the `custom_resource` operation uses and
/// waits for it to be Established. A failure is printed, not fatal: each
/// client's `custom_resource` operation then fails with its own reason.
async fn install_gizmos(c: &Cluster) {
    let crd = format!("{}/testdata/crds/gizmos.yaml", env!("CARGO_MANIFEST_DIR"));
    let applied = c.run(&["apply", "-f", &crd]).await;
    let established = c
        .run(&[
            "wait",
            "--for",
            "condition=established",
            "crd/gizmos.clients.miniplane.dev",
            "--timeout=60s",
        ])
        .await;
    if !(applied.success && established.success) {
        println!(
            "the Gizmo definition did not install: {}{}",
            applied.stderr, established.stderr
        );
    }
}

/// Server-side timeouts are wall-clock durations whatever `--time-scale`
/// says: the Python client's `timeout_seconds=5` watch lasts 5 s at 100×.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_watch_with_timeout_seconds_lasts_that_long_at_any_time_scale() {
    let python = &SCRIPTS[0];
    if let Err(why) = installed(python).await {
        assert!(std::env::var_os("CI").is_none(), "python client: {why}");
        println!("skipped: python client {why}");
        return;
    }
    let mut c = Cluster::start_with(Config {
        clock: store::Clock::scaled(100.0),
        ..Config::ephemeral()
    })
    .await;
    let out = tokio::process::Command::new("python3")
        .arg("watch_timeout.py")
        .current_dir(clients_dir().join("python"))
        .env("KUBECONFIG", c.server().kubeconfig())
        .kill_on_drop(true)
        .output()
        .await
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let elapsed: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ELAPSED "))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no ELAPSED line: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    println!("watch with timeout_seconds=5 at --time-scale 100 lasted {elapsed:.3} s");
    assert!((4.0..=6.0).contains(&elapsed), "lasted {elapsed} s");
    c.stop().await;
}

#[test]
fn result_lines_are_parsed_with_their_reasons() {
    let out = "noise\nRESULT create PASS\nRESULT get FAIL expected 1, got 2\nRESULT list FAIL\n";
    let parsed = parse_results(out);
    assert_eq!(parsed["create"], Ok(()));
    assert_eq!(parsed["get"], Err("expected 1, got 2".to_string()));
    assert_eq!(parsed["list"], Err("(no reason given)".to_string()));
    assert_eq!(parsed.len(), 3);
}
