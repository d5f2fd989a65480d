//! miniplane's reliability suite, in the manner of etcd's robustness tests
//! and sled's crash tests: the real binary killed with SIGKILL under
//! concurrent writers, watch histories checked across the kills,
//! concurrent read-modify-write, a request fuzzer over every endpoint, and
//! the controllers converging while their writes fail.
//!
//! | section | file | what must hold |
//! | --- | --- | --- |
//! | `crash` | [`crash`] | kill -9 loses no acknowledged write; revisions only grow |
//! | `crash --no-fsync` | [`crash`] | revisions never go backwards nor are issued twice (lost writes reported) |
//! | (both) | [`watch`] | a watch resumed across kills has no gaps, duplicates, reordering or phantoms |
//! | `rmw` | [`rmw`] | GET + PUT with retry on 409 from K clients loses no update |
//! | `fuzz` | [`fuzz`] | random and malformed requests to every endpoint: no 5xx, no dropped connection, bounded memory |
//! | `converge` | [`converge`] | with 10% of the controllers' writes failing, a Deployment rolls out, updates and scales |
//!
//! Two sizes: the short form runs in `cargo test --workspace` (a few kill
//! cycles, a few thousand fuzzed requests); the full form runs with
//!
//! ```sh
//! MINIPLANE_TORTURE=full cargo test --release --test reliability
//! ```
//!
//! (50 kill cycles per mode, 100,000 fuzzed requests, more clients and
//! seeds). `MINIPLANE_TORTURE_SEED=N` replays a run's random choices; the
//! seed is printed first. Arguments that are not flags pick sections by
//! name (`cargo test --test reliability -- fuzz`). Either form prints a
//! table and writes it to `target/tmp/reliability.txt`; it exits non-zero
//! if any checked figure is out of bounds, after printing every figure.
//!
//! The target has `harness = false` (a plain `main`): the sections share
//! one table, run one after another so that each has the two cores to
//! itself, and libtest has no hook that runs after all tests.

mod converge;
mod crash;
mod fuzz;
mod harness;
mod rmw;
mod watch;

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::Duration;

use harness::{Mode, Report, Row};

type Section = fn(Mode) -> Pin<Box<dyn Future<Output = Report> + Send>>;

/// Which clock a section runs on.
#[derive(Clone, Copy)]
enum Time {
    /// Real time, on two worker threads: the sections that drive the binary.
    Real,
    /// Paused tokio time (the clock jumps to the next timer whenever every
    /// task waits): the in-process cluster of `converge`.
    Paused,
}

/// The sections, in the order they run.
const SECTIONS: &[(&str, Time, Section)] = &[
    ("crash", Time::Real, |m| Box::pin(crash::run(m, false))),
    ("crash-no-fsync", Time::Real, |m| Box::pin(crash::run(m, true))),
    ("rmw", Time::Real, |m| Box::pin(rmw::run(m))),
    ("fuzz", Time::Real, |m| Box::pin(fuzz::run(m))),
    ("converge", Time::Paused, |m| Box::pin(converge::run(m))),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _, _) in SECTIONS {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    // libtest's flags are accepted: `--skip X` leaves sections out,
    // `--ignored` runs none (there are no ignored sections), flags with a
    // value skip it, others (`--nocapture`, ...) are ignored. Other
    // arguments are filters, as libtest's.
    if args.iter().any(|a| a == "--ignored") {
        return ExitCode::SUCCESS;
    }
    let mut filters: Vec<&String> = Vec::new();
    let mut skips: Vec<&String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--skip" => skips.extend(it.next()),
            "--test-threads" | "--format" | "--color" | "--logfile" | "-Z" | "--shuffle-seed" => {
                it.next();
            }
            flag if flag.starts_with('-') => {}
            _ => filters.push(a),
        }
    }
    let chosen: Vec<_> = SECTIONS
        .iter()
        .filter(|(name, _, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .filter(|(name, _, _)| !skips.iter().any(|s| name.contains(s.as_str())))
        .collect();
    if chosen.is_empty() {
        println!("reliability: no section matches {filters:?}");
        return ExitCode::SUCCESS;
    }

    let mode = Mode::from_env();
    let form = if mode.full { "full" } else { "short" };
    println!(
        "reliability suite, {form} form, MINIPLANE_TORTURE_SEED={} (set it to replay)",
        mode.seed
    );
    let mut rows: Vec<Row> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut took = Vec::new();
    let started = tokio::time::Instant::now();
    for (name, time, section) in chosen {
        println!("== {name}");
        let (report, secs) = run_section(name, *time, *section, mode);
        took.push(format!("{name} {secs:.1} s"));
        for r in &report.rows {
            println!("   {}: {}", r.what, r.figure);
        }
        for f in &report.failures {
            println!("   FAILED {f}");
        }
        rows.extend(report.rows);
        failures.extend(report.failures);
    }
    let mut out = format!(
        "miniplane reliability suite, {form} form, MINIPLANE_TORTURE_SEED={}\n\n{}\nreal time: {:.0} s ({})\n",
        mode.seed,
        harness::table(&rows),
        started.elapsed().as_secs_f64(),
        took.join(", ")
    );
    if !failures.is_empty() {
        out.push_str("\nfailed checks:\n");
        for f in &failures {
            out.push_str(&format!("- {f}\n"));
        }
    }
    println!("\n{out}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tmp/reliability.txt");
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = std::fs::write(&path, &out) {
        println!("could not write {}: {e}", path.display());
    }
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("{} check(s) failed (seed {})", failures.len(), mode.seed);
        ExitCode::FAILURE
    }
}

/// Runs one section on a runtime of its own, on a thread of its own,
/// bounded in real time; a panic or timeout is a failed check of that
/// section. Returns its report and how long it took in seconds.
fn run_section(name: &str, time: Time, section: Section, mode: Mode) -> (Report, f64) {
    let bound = mode.pick(Duration::from_secs(100), Duration::from_secs(1800));
    let started = tokio::time::Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let mut builder = match time {
            Time::Real => {
                let mut b = tokio::runtime::Builder::new_multi_thread();
                b.worker_threads(2);
                b
            }
            Time::Paused => {
                let mut b = tokio::runtime::Builder::new_current_thread();
                b.start_paused(true);
                b
            }
        };
        let runtime = builder.enable_all().build().expect("a tokio runtime");
        let report = runtime.block_on(section(mode));
        let _ = tx.send(report);
    });
    let report = match rx.recv_timeout(bound) {
        Ok(report) => {
            let _ = thread.join();
            report
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let why = match thread.join() {
                Err(p) => p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "a panic".into()),
                Ok(()) => "ended without a report".into(),
            };
            let mut r = Report::new(name);
            r.check("section", "panicked", false, || why);
            r
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            let mut r = Report::new(name);
            r.check("section", format!("timed out after {bound:?}"), false, || {
                format!("did not finish within {bound:?}")
            });
            r
        }
    };
    (report, started.elapsed().as_secs_f64())
}
