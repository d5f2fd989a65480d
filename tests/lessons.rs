//! The lessons in `docs/lessons/` run as written: every ```console block's `$` commands run in a
//! shell, against the `miniplane up` the lesson starts, and their output must match the lines
//! below them. (A test of the `miniplane` package, so that Cargo builds the binary it runs.)
//!
//! The format (also in `docs/lessons/README.md`):
//!
//! - Only ```console blocks run. A line starting with `$ ` is a command (a line ending in `\`
//!   continues on the next); the lines after it, up to the next command or the end of the block,
//!   are its expected output: stdout and stderr together, as a terminal shows them.
//! - In an expected line `*` matches any text; a line `...` matches any number of lines (none
//!   included). Spaces at either end of a line do not count, nor do empty lines at the end.
//!   A command with no expected lines may print anything.
//! - A command must succeed, unless its line ends with `# fails`. A line ending with
//!   `# eventually` is run again, once a second, until its output matches (up to three minutes).
//! - `$ miniplane up ...` starts a cluster in the background (stopping the lesson's previous one)
//!   with `--listen 127.0.0.1:0` added, and waits for it to print where it serves; its expected
//!   lines are matched against what it printed. Every later command runs with `KUBECONFIG` set to
//!   the file its `--kubeconfig` names, so the `$ export KUBECONFIG=...` lines are skipped.
//! - Commands run in a fresh directory holding `manifests/` (a link to `docs/lessons/manifests`),
//!   with the built `miniplane` first on `PATH`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long `# eventually` retries.
const EVENTUALLY: Duration = Duration::from_secs(180);
/// How long one command may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(180);
/// How long `miniplane up` may take to print where it serves.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// One `$` command of a lesson and what it must print.
#[derive(Debug)]
struct Step {
    /// The line of the `$` in the lesson file (1-based).
    line: usize,
    /// The command, markers removed, continuation lines joined with newlines.
    command: String,
    expected: Vec<String>,
    eventually: bool,
    fails: bool,
}

/// The steps of a lesson, in order.
fn parse(text: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut in_console = false;
    let mut continuing = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_end();
        if trimmed.starts_with("```") {
            in_console = !in_console && trimmed == "```console";
            continuing = false;
            continue;
        }
        if !in_console {
            continue;
        }
        if continuing {
            let step = steps.last_mut().expect("a continued step");
            step.command.push('\n');
            step.command.push_str(trimmed);
            continuing = trimmed.ends_with('\\');
            if !continuing {
                mark(step);
            }
            continue;
        }
        if let Some(command) = trimmed.strip_prefix("$ ") {
            continuing = command.ends_with('\\');
            steps.push(Step {
                line: i + 1,
                command: command.to_string(),
                expected: Vec::new(),
                eventually: false,
                fails: false,
            });
            if !continuing {
                mark(steps.last_mut().expect("just pushed"));
            }
        } else if let Some(step) = steps.last_mut() {
            step.expected.push(trimmed.to_string());
        }
    }
    for step in &mut steps {
        while step.expected.last().is_some_and(|l| l.trim().is_empty()) {
            step.expected.pop();
        }
    }
    steps
}

/// Reads and removes the `# eventually` / `# fails` markers at the end of a command.
fn mark(step: &mut Step) {
    loop {
        let c = step.command.trim_end();
        if let Some(rest) = c.strip_suffix("# eventually") {
            step.eventually = true;
            step.command = rest.trim_end().to_string();
        } else if let Some(rest) = c.strip_suffix("# fails") {
            step.fails = true;
            step.command = rest.trim_end().to_string();
        } else {
            return;
        }
    }
}

/// Whether `line` matches the pattern `expected` (`*`: any text).
fn line_matches(expected: &str, line: &str) -> bool {
    let (expected, line) = (expected.trim(), line.trim());
    let parts: Vec<&str> = expected.split('*').collect();
    if parts.len() == 1 {
        return expected == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the output lines match the expected lines (`...`: any number of lines).
fn output_matches(expected: &[String], got: &[&str]) -> bool {
    match expected.split_first() {
        None => got.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=got.len()).any(|skip| output_matches(rest, &got[skip..]))
        }
        Some((first, rest)) => {
            !got.is_empty() && line_matches(first, got[0]) && output_matches(rest, &got[1..])
        }
    }
}

/// The output's lines, without trailing empty ones.
fn output_lines(output: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = output.lines().collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// One lesson being run: its directory, its cluster, its environment.
struct Run {
    lesson: String,
    dir: tempfile::TempDir,
    cluster: Option<Child>,
    kubeconfig: PathBuf,
    path: String,
}

impl Run {
    fn new(lesson: &str) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lessons/manifests");
        std::os::unix::fs::symlink(&manifests, dir.path().join("manifests")).unwrap();
        let bin = Path::new(env!("CARGO_BIN_EXE_miniplane")).parent().unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        Run {
            lesson: lesson.to_string(),
            kubeconfig: dir.path().join("kubeconfig"),
            dir,
            cluster: None,
            path,
        }
    }

    fn shell(&self, script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(script)
            .current_dir(self.dir.path())
            .env("PATH", &self.path)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir.path().join(".kube-cache"))
            .stdin(Stdio::null())
            .kill_on_drop(true);
        c
    }

    fn fail(&self, step: &Step, what: &str, got: &str) -> ! {
        let expected = step.expected.join("\n");
        let log = std::fs::read_to_string(self.dir.path().join("miniplane.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "lesson {} line {}: `$ {}`: {what}\n--- expected\n{expected}\n--- got\n{got}\n--- \
             the end of miniplane's log\n{}\n---",
            self.lesson,
            step.line,
            step.command,
            tail.join("\n")
        );
    }

    async fn step(&mut self, step: &Step) {
        let command = step.command.trim();
        if command.starts_with("export ") {
            return;
        }
        if command.starts_with("miniplane up") {
            return self.up(step).await;
        }
        let started = tokio::time::Instant::now();
        loop {
            let (success, output) = self.run(step).await;
            let ok_status = success != step.fails;
            let lines = output_lines(&output);
            let matched = step.expected.is_empty() || output_matches(&step.expected, &lines);
            if ok_status && matched {
                return;
            }
            if !step.eventually || started.elapsed() > EVENTUALLY {
                let what = match (ok_status, step.fails) {
                    (false, false) => "failed",
                    (false, true) => "succeeded, and should have failed",
                    _ => "printed something else",
                };
                self.fail(step, what, &output);
            }
            store::Clock::system().sleep(Duration::from_secs(1)).await;
        }
    }

    /// Runs a command; whether it succeeded, and its stdout and stderr together.
    async fn run(&self, step: &Step) -> (bool, String) {
        let script = format!("exec 2>&1\n{}", step.command);
        let child = self.shell(&script).stdout(Stdio::piped()).output();
        match tokio::time::timeout(COMMAND_TIMEOUT, child).await {
            Ok(Ok(out)) => (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ),
            Ok(Err(e)) => self.fail(step, &format!("did not run: {e}"), ""),
            Err(_) => self.fail(step, "timed out", ""),
        }
    }

    /// Starts the lesson's cluster (stopping the last one).
    async fn up(&mut self, step: &Step) {
        self.stop().await;
        let kubeconfig =
            kubeconfig_flag(&step.command).unwrap_or_else(|| self.fail(step, "names no --kubeconfig", ""));
        self.kubeconfig = self.dir.path().join(kubeconfig);
        let _ = std::fs::remove_file(&self.kubeconfig);
        let args = step.command.trim().trim_start_matches("miniplane up");
        let script = format!("exec miniplane up --listen 127.0.0.1:0 {args}");
        // Its log, for the failure message (unless the lesson redirects it).
        let log = std::fs::File::create(self.dir.path().join("miniplane.log")).unwrap();
        let mut child = self
            .shell(&script)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut printed = Vec::new();
        let read = async {
            while let Ok(Some(line)) = stdout.next_line().await {
                let last = line.starts_with("export KUBECONFIG=");
                printed.push(line);
                if last {
                    return true;
                }
            }
            false
        };
        let started = tokio::time::timeout(START_TIMEOUT, read).await;
        let output = printed.join("\n");
        if !matches!(started, Ok(true)) {
            self.fail(step, "did not start", &output);
        }
        // Keep draining stdout so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
        self.cluster = Some(child);
        let lines = output_lines(&output);
        if !step.expected.is_empty() && !output_matches(&step.expected, &lines) {
            self.fail(step, "printed something else", &output);
        }
    }

    async fn stop(&mut self) {
        if let Some(mut child) = self.cluster.take() {
            let _ = child.kill().await;
        }
    }
}

/// The value of `--kubeconfig` in a `miniplane up` line.
fn kubeconfig_flag(command: &str) -> Option<String> {
    let mut words = command.split_whitespace();
    while let Some(w) = words.next() {
        if w == "--kubeconfig" {
            return words.next().map(str::to_string);
        }
        if let Some(v) = w.strip_prefix("--kubeconfig=") {
            return Some(v.to_string());
        }
    }
    None
}

/// Runs the lesson `file` of `docs/lessons/`.
async fn lesson(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/lessons")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let steps = parse(&text);
    assert!(
        steps.iter().any(|s| s.command.starts_with("miniplane up")),
        "lesson {file} starts no cluster"
    );
    let mut run = Run::new(file);
    for step in &steps {
        run.step(step).await;
    }
    run.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lesson_01_informers() {
    lesson("01-informers.md").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lesson_02_workqueue() {
    lesson("02-workqueue.md").await;
}

/// The acceptance of `--disable expectations`: the lesson shows the over-creation with the
/// expectations off (8 pods created for 5 wanted, 3 deleted again) and none with them on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lesson_03_expectations() {
    lesson("03-expectations.md").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lesson_04_rolling_update() {
    lesson("04-rolling-update.md").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lesson_05_owners() {
    lesson("05-owners-and-gc.md").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lesson_06_statefulset() {
    lesson("06-statefulset.md").await;
}

#[test]
fn every_lesson_in_the_directory_has_a_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lessons");
    let mut lessons: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "README.md")
        .collect();
    lessons.sort();
    let this = include_str!("lessons.rs");
    for l in lessons {
        assert!(this.contains(&format!("lesson(\"{l}\")")), "{l} has no test");
    }
}

#[test]
fn the_format_parses_and_matches() {
    let text = "text\n```console\n$ kubectl get rs web   # eventually\nNAME  DESIRED\nweb   *\n\n$ long \\\n  command # fails\n...\nlast\n```\n```yaml\n$ not: run\n```\n";
    let steps = parse(text);
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].line, 3);
    assert_eq!(steps[0].command, "kubectl get rs web");
    assert!(steps[0].eventually && !steps[0].fails);
    assert_eq!(steps[0].expected, ["NAME  DESIRED", "web   *"]);
    assert_eq!(steps[1].command, "long \\\n  command");
    assert!(steps[1].fails);
    assert!(output_matches(&steps[1].expected, &["a", "b", "last"]));
    assert!(output_matches(&steps[1].expected, &["last"]));
    assert!(!output_matches(&steps[1].expected, &["last", "more"]));
    assert!(line_matches("web   *   5", "web   8   5  "));
    assert!(line_matches("Deleted pod: web-*", "Deleted pod: web-x2k1p"));
    assert!(!line_matches("web 5", "web 8"));
    assert!(line_matches("*", ""));
    assert!(line_matches("a*b*a", "aba"));
    assert!(!line_matches("a*b*a", "ab"));
}
