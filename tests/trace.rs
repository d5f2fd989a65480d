//! `miniplane up --trace controllers` covers every workload controller: run
//! the binary with the trace on, create one object of each workload kind
//! with the real kubectl, and read the trace lines on its stderr until each
//! controller has logged a sync (and the workload controllers a write). (A
//! test of the `miniplane` package, so that Cargo builds the binary it runs.)

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncBufReadExt;

/// One object of each kind whose controller this issue added.
const WORKLOADS: &str = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: traced}
spec:
  serviceName: traced
  replicas: 1
  selector: {matchLabels: {app: traced-sts}}
  template:
    metadata: {labels: {app: traced-sts}}
    spec: {containers: [{name: c, image: nginx:1.25}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: traced}
spec:
  selector: {matchLabels: {app: traced-ds}}
  template:
    metadata: {labels: {app: traced-ds}}
    spec: {containers: [{name: c, image: nginx:1.25}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: traced}
spec:
  ttlSecondsAfterFinished: 5
  template:
    metadata:
      annotations: {sim.miniplane.dev/run-seconds: "2"}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox:1.36}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: traced}
spec:
  schedule: "*/1 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox:1.36}]
"#;

/// Each controller's trace label, and whether it must have written something.
const CONTROLLERS: [(&str, bool); 8] = [
    ("statefulset", true),
    ("daemonset", true),
    ("job", true),
    ("cronjob", true),
    ("ttl-after-finished", true),
    ("podgc", false),
    ("node-lifecycle", false),
    ("taint-eviction", false),
];

/// `line` without ANSI colour sequences.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The labels in `CONTROLLERS` whose lines are still missing from `lines`.
fn missing(lines: &[String]) -> Vec<&'static str> {
    CONTROLLERS
        .iter()
        .filter(|(name, writes)| {
            let tag = format!("[{name}]");
            let synced = lines.iter().any(|l| l.contains(&format!("{tag} sync ")));
            let wrote = lines
                .iter()
                .any(|l| l.contains(&format!("{tag}   ")) && (l.ends_with(": ok") || l.contains(": ok ")));
            !synced || (*writes && !wrote)
        })
        .map(|(name, _)| *name)
        .collect()
}

async fn appears(path: &Path) {
    let wait = async {
        while !path.is_file() {
            store::Clock::system().sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the kubeconfig appears");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_covers_every_workload_controller() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut child = tokio::process::Command::new(PathBuf::from(env!("CARGO_BIN_EXE_miniplane")))
        .args([
            "up",
            "--in-memory",
            "--listen",
            "127.0.0.1:0",
            "--time-scale",
            "20",
        ])
        .args(["--trace", "controllers", "--kubeconfig"])
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let sink = lines.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stderr.next_line().await {
            sink.lock().unwrap().push(plain(&line));
        }
    });
    appears(&kubeconfig).await;
    let manifest = dir.path().join("workloads.yaml");
    std::fs::write(&manifest, WORKLOADS).unwrap();
    let out = tokio::process::Command::new("kubectl")
        .arg("apply")
        .arg("-f")
        .arg(&manifest)
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let covered = async {
        loop {
            if missing(&lines.lock().unwrap()).is_empty() {
                return;
            }
            store::Clock::system().sleep(Duration::from_millis(100)).await;
        }
    };
    let outcome = tokio::time::timeout(Duration::from_secs(60), covered).await;
    let seen = lines.lock().unwrap().clone();
    assert!(
        outcome.is_ok(),
        "no sync or write traced for {:?}; the trace had {} lines",
        missing(&seen),
        seen.len()
    );
    child.kill().await.unwrap();
}
