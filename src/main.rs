//! The `miniplane` command line. Everything it runs lives in the library
//! (`miniplane::Server`); this file only parses flags and waits for a signal.
//! `miniplane node` ([`node_cli`]) and `miniplane rollout` ([`rollout_cli`]) are clients of a
//! running miniplane; `miniplane demo` ([`demo`]) runs a rollout scenario on a cluster of its own.

mod demo;
mod explain_cli;
mod node_cli;
mod rollout_cli;
mod time_cli;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "miniplane",
    version,
    about = "A Kubernetes control plane in one process"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the control plane until SIGINT/SIGTERM.
    Up(UpArgs),
    /// Stop or start a simulated node's heartbeat on a running miniplane,
    /// or list the nodes.
    Node(node_cli::NodeArgs),
    /// Promote, abort or retry a Canary's rollout on a running miniplane.
    Rollout(rollout_cli::RolloutArgs),
    /// Run a rollout scenario (rolling-update, recreate, canary, ...) on an
    /// in-memory cluster at accelerated time and show it live.
    Demo(demo::DemoArgs),
    /// Explain how an object got its current state: the chain of decisions
    /// and writes back to your own request, newest first.
    Explain(explain_cli::ExplainArgs),
    /// The time machine: pause, resume, rescale or step the simulated
    /// clock of a running miniplane, or hold a sync at a breakpoint.
    Time(time_cli::TimeArgs),
}

#[derive(clap::Args)]
struct UpArgs {
    /// Address to serve on; repeat for more. Port 0 picks a free port
    /// [default: 127.0.0.1:6443, or 127.0.0.1:8080 with --insecure-http].
    #[arg(long)]
    listen: Vec<std::net::SocketAddr>,
    /// Serve plain HTTP without authentication (loopback addresses only),
    /// instead of HTTPS with the cluster CA and credentials.
    #[arg(long)]
    insecure_http: bool,
    /// Directory for the store and the kubeconfig
    /// [default: $XDG_DATA_HOME/miniplane or ~/.local/share/miniplane].
    #[arg(long, conflicts_with = "in_memory")]
    data_dir: Option<PathBuf>,
    /// Keep nothing on disk: no data dir, no lock file, certificates made in
    /// memory, the store in memory (on Linux sled's temporary database in
    /// /dev/shm, removed on exit). The kubeconfig is written only to
    /// --kubeconfig, or printed on stdout without it. Everything is gone
    /// when the process ends.
    #[arg(long)]
    in_memory: bool,
    /// Where to write the kubeconfig [default: <data-dir>/kubeconfig; with
    /// --in-memory, printed on stdout].
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Which built-in controllers run, as kube-controller-manager's flag: a
    /// comma-separated list where `*` turns every one on, `name` one on and
    /// `-name` one off (e.g. `*,-deployment-controller`); upstream's names
    /// or their aliases.
    #[arg(long, default_value = "*", value_parser = parse_controllers)]
    controllers: miniplane::cluster::ControllerSelection,
    /// Run simulated time this many times faster than wall time; every
    /// timestamp and delay follows it.
    #[arg(long, default_value_t = 1.0, value_parser = parse_time_scale)]
    time_scale: f64,
    /// Number of simulated nodes.
    #[arg(long, default_value_t = 3)]
    nodes: usize,
    /// Terminated pods (Succeeded, Failed) kept before the pod garbage
    /// collector deletes the oldest; 0 keeps them all
    /// (kube-controller-manager's flag).
    #[arg(long, default_value_t = controllers::podgc::sync::DEFAULT_TERMINATED_POD_THRESHOLD)]
    terminated_pod_gc_threshold: usize,
    /// Log the controllers' work step by step: informer event, enqueued
    /// key, sync start, the API writes it made, outcome and duration.
    #[arg(long, value_parser = ["controllers"])]
    trace: Option<String>,
    /// How many entries the causal journal keeps (`/debug/journal`,
    /// `miniplane explain`); 0 records nothing.
    #[arg(long, default_value_t = store::journal::DEFAULT_CAPACITY)]
    journal_size: usize,
    /// Switch one mechanism off to see why it exists (a lesson, for learning
    /// only: docs/lessons/; repeat or comma-separate). `expectations`: the
    /// ReplicaSet controller acts on its cache even before it shows the pods
    /// it just created, and with a lagging cache creates more pods than
    /// spec.replicas, deleting the extras later. `pod-deletion-ranking`: a
    /// scale-down deletes the oldest pods first, ready ones included, instead
    /// of unscheduled, pending and unready ones. `controller-ref-claim`: a
    /// ReplicaSet takes every pod its selector matches, whoever controls it,
    /// so two with overlapping selectors fight over pods forever.
    #[arg(long, value_delimiter = ',', value_parser = ["expectations", "pod-deletion-ranking", "controller-ref-claim"])]
    disable: Vec<String>,
    /// Deliver every watch event to the informers this much later, in
    /// simulated time and in order (a lesson: `500ms`, `10s`): every
    /// controller's cache lags the API server by this much.
    #[arg(long, value_parser = parse_duration)]
    informer_lag: Option<std::time::Duration>,
    /// Acknowledge writes before they are flushed to disk (faster, and a
    /// crash may lose the last half second of writes).
    #[arg(long)]
    no_fsync: bool,
    /// Seed of every random choice (uids, generated names, cluster IPs,
    /// image pull times): on a fresh data dir the same seed and the same
    /// requests replay a run [default: random, logged at start].
    #[arg(long)]
    seed: Option<u64>,
    /// How long an Event is kept after its last update, in simulated time
    /// (as kube-apiserver's flag: `1h`, `30m`, `90s`, `1h0m0s`).
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    event_ttl: std::time::Duration,
    /// The most read-only requests (get, list) served at once; more get 429
    /// with `Retry-After: 1`. Watches, logs and health checks are not
    /// counted. 0 = no limit (as kube-apiserver's flag).
    #[arg(long, default_value_t = apiserver::http::limits::DEFAULT_MAX_REQUESTS_INFLIGHT)]
    max_requests_inflight: usize,
    /// The most mutating requests (create, update, patch, delete) served at
    /// once; more get 429 with `Retry-After: 1`. 0 = no limit (as
    /// kube-apiserver's flag).
    #[arg(long, default_value_t = apiserver::http::limits::DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT)]
    max_mutating_requests_inflight: usize,
    /// Who may do what: `always-allow` (every authenticated user may do
    /// anything) or `rbac` (users outside system:masters as the RBAC
    /// objects allow, with upstream's 403s).
    #[arg(long, default_value = "always-allow")]
    authorization: apiserver::auth::authorizer::AuthorizationMode,
}

fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("{s:?} is not a positive number")),
    }
}

fn parse_controllers(s: &str) -> Result<miniplane::cluster::ControllerSelection, String> {
    miniplane::cluster::ControllerSelection::parse(s).map_err(|e| e.to_string())
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    s.parse::<jiff::SignedDuration>()
        .ok()
        .and_then(|d| std::time::Duration::try_from(d).ok())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{s:?} is not a positive duration such as 1h, 30m or 90s"))
}

fn default_data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("miniplane");
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".local/share/miniplane"),
        None => PathBuf::from(".miniplane"),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Command::Up(args) => args,
        Command::Node(args) => return client_exit(node_cli::run(args, default_data_dir()).await),
        Command::Rollout(args) => return client_exit(rollout_cli::run(args, default_data_dir()).await),
        Command::Demo(args) => return demo::run(args).await,
        Command::Explain(args) => return client_exit(explain_cli::run(args, default_data_dir()).await),
        Command::Time(args) => return client_exit(time_cli::run(args, default_data_dir()).await),
    };
    init_logging(args.trace.is_some());
    // A refusal is one line a person can act on: the error and its causes,
    // never a backtrace (which `RUST_BACKTRACE=1` would add to an error
    // returned from `main`).
    match up(args).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The exit of a client subcommand: its errors are already worded as kubectl's, with no
/// `error:` prefix added.
fn client_exit(result: anyhow::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Logs to stderr; `RUST_LOG` overrides the default level, and the trace adds
/// the controllers' step-by-step lines (target `miniplane::trace`).
fn init_logging(trace: bool) {
    let default = if trace {
        "info,miniplane::trace=info"
    } else {
        "info,miniplane::trace=off"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default.into());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

async fn up(args: UpArgs) -> anyhow::Result<()> {
    let data_dir = match args.in_memory {
        true => None,
        false => Some(args.data_dir.unwrap_or_else(default_data_dir)),
    };
    let print_kubeconfig = args.in_memory && args.kubeconfig.is_none();
    let default_listen = match args.insecure_http {
        true => miniplane::DEFAULT_INSECURE_LISTEN,
        false => miniplane::DEFAULT_LISTEN,
    };
    let mut listen = args.listen.into_iter();
    let config = miniplane::Config {
        // The default is a constant that parses.
        listen: listen
            .next()
            .unwrap_or_else(|| default_listen.parse().expect("a socket address")),
        also_listen: listen.collect(),
        insecure_http: args.insecure_http,
        data_dir: data_dir.clone(),
        in_memory: args.in_memory,
        kubeconfig: args.kubeconfig,
        durability: if args.no_fsync {
            store::Durability::Buffered
        } else {
            store::Durability::Flush
        },
        clock: store::Clock::scaled(args.time_scale).with_journal(store::Journal::new(args.journal_size)),
        history_max_events: store::Config::default().history_max_events,
        event_ttl: args.event_ttl,
        limits: apiserver::http::Limits {
            max_requests_inflight: args.max_requests_inflight,
            max_mutating_requests_inflight: args.max_mutating_requests_inflight,
            ..Default::default()
        },
        sim: Some(miniplane::cluster::SimConfig {
            nodes: args.nodes,
            controllers: args.controllers,
            terminated_pod_gc_threshold: args.terminated_pod_gc_threshold,
            lessons: controllers::runtime::lessons::Lessons {
                disable_expectations: args.disable.iter().any(|d| d == "expectations"),
                disable_pod_deletion_ranking: args.disable.iter().any(|d| d == "pod-deletion-ranking"),
                disable_controller_ref_claim: args.disable.iter().any(|d| d == "controller-ref-claim"),
                informer_lag: args.informer_lag,
            },
            ..Default::default()
        }),
        seed: args.seed.unwrap_or_else(rand::random),
        authorization: args.authorization,
    };
    let server = miniplane::Server::start(config)
        .await
        .context("starting miniplane")?;
    // The web view; over HTTPS with the admin's token in the fragment (never
    // sent to the server: apiserver/src/http/ui.rs).
    let ui = match server.pki() {
        Some(pki) => format!("{}/ui/#token={}", server.url(), pki.token),
        None => format!("{}/ui/", server.url()),
    };
    if print_kubeconfig {
        // Stdout stays one YAML document: the kubeconfig, after comments.
        println!("# miniplane is serving the Kubernetes API at {}", server.url());
        println!("# web view: {ui}");
        println!("# in memory: no data dir; this is the kubeconfig");
        print!("{}", server.kubeconfig_yaml());
    } else {
        println!("miniplane is serving the Kubernetes API at {}", server.url());
        println!("web view: {ui}");
        match &data_dir {
            Some(dir) => println!("data dir: {}", dir.display()),
            None => println!("in memory: no data dir"),
        }
        println!("export KUBECONFIG={}", server.kubeconfig().display());
    }
    // Whoever reads stdout through a pipe sees the lines now, not at exit.
    std::io::Write::flush(&mut std::io::stdout()).context("writing to stdout")?;
    wait_for_signal().await?;
    server.stop().await.context("stopping miniplane")?;
    Ok(())
}

async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for SIGINT")?,
        _ = term.recv() => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Cli, Command, UpArgs, parse_duration};
    use clap::Parser;
    use std::time::Duration;

    /// The `up` arguments of a command line that must be `miniplane up ...`.
    fn up_args(cli: Cli) -> UpArgs {
        match cli.command {
            Command::Up(args) => args,
            _ => panic!("not `miniplane up`"),
        }
    }

    #[test]
    fn in_flight_caps_default_to_kube_apiservers() {
        let caps = |argv: &[&str]| {
            let args = up_args(Cli::try_parse_from(argv).unwrap());
            (args.max_requests_inflight, args.max_mutating_requests_inflight)
        };
        assert_eq!(caps(&["miniplane", "up"]), (400, 200));
        assert_eq!(
            caps(&[
                "miniplane",
                "up",
                "--max-requests-inflight",
                "10",
                "--max-mutating-requests-inflight",
                "0"
            ]),
            (10, 0)
        );
    }

    #[test]
    fn controllers_flag_takes_kube_controller_managers_syntax() {
        let parse = |argv: &[&str]| Cli::try_parse_from(argv).map(|cli| up_args(cli).controllers.names());
        let all = miniplane::cluster::CONTROLLERS.len();
        assert_eq!(parse(&["miniplane", "up"]).unwrap().len(), all);
        let some = parse(&[
            "miniplane",
            "up",
            "--controllers",
            "*,-deployment-controller,-replicaset",
        ])
        .unwrap();
        assert_eq!(some.len(), all - 2);
        assert!(!some.contains(&"deployment-controller"));
        let err = parse(&[
            "miniplane",
            "up",
            "--controllers",
            "*,bootstrap-signer-controller",
        ])
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.contains("\"bootstrap-signer-controller\" is not in the list of known controllers; the known controllers are replicaset-controller"),
            "{err}"
        );
    }

    #[test]
    fn in_memory_takes_no_data_dir() {
        let parsed = Cli::try_parse_from(["miniplane", "up", "--in-memory", "--data-dir", "/tmp/x"]);
        assert!(parsed.is_err());
        assert!(Cli::try_parse_from(["miniplane", "up", "--in-memory"]).is_ok());
    }

    #[test]
    fn node_takes_stop_start_and_list_with_a_kubeconfig_anywhere() {
        use super::node_cli::NodeCommand;
        let parse = |argv: &[&str]| match Cli::try_parse_from(argv).map(|c| c.command) {
            Ok(Command::Node(args)) => Ok((args.command, args.kubeconfig)),
            Ok(_) => panic!("not `miniplane node`"),
            Err(e) => Err(e.to_string()),
        };
        let Ok((NodeCommand::Stop { name }, None)) =
            parse(&["miniplane", "node", "stop", "miniplane-worker-2"])
        else {
            panic!("node stop NAME");
        };
        assert_eq!(name, "miniplane-worker-2");
        let Ok((NodeCommand::Start { name }, Some(path))) =
            parse(&["miniplane", "node", "--kubeconfig", "/k", "start", "w"])
        else {
            panic!("node --kubeconfig PATH start NAME");
        };
        assert_eq!((name.as_str(), path.to_str()), ("w", Some("/k")));
        assert!(matches!(
            parse(&["miniplane", "node", "list", "--kubeconfig", "/k"]),
            Ok((NodeCommand::List, Some(_)))
        ));
        assert!(
            parse(&["miniplane", "node", "stop"]).is_err(),
            "a name is required"
        );
    }

    #[test]
    fn rollout_takes_a_verb_a_name_and_a_namespace() {
        use super::rollout_cli::RolloutCommand;
        let parse = |argv: &[&str]| match Cli::try_parse_from(argv).map(|c| c.command) {
            Ok(Command::Rollout(args)) => Ok((args.command, args.namespace, args.kubeconfig)),
            Ok(_) => panic!("not `miniplane rollout`"),
            Err(e) => Err(e.to_string()),
        };
        let (command, namespace, kubeconfig) = parse(&[
            "miniplane",
            "rollout",
            "promote",
            "podinfo",
            "-n",
            "team",
            "--kubeconfig",
            "/k",
        ])
        .unwrap();
        assert_eq!(
            command,
            RolloutCommand::Promote {
                name: "podinfo".into()
            }
        );
        assert_eq!((namespace.as_str(), kubeconfig), ("team", Some("/k".into())));
        let (command, namespace, _) = parse(&["miniplane", "rollout", "abort", "web"]).unwrap();
        assert_eq!(
            (command, namespace.as_str()),
            (RolloutCommand::Abort { name: "web".into() }, "default")
        );
        assert!(
            parse(&["miniplane", "rollout", "retry"]).is_err(),
            "a name is required"
        );
        assert!(parse(&["miniplane", "rollout", "pause", "web"]).is_err());
    }

    #[test]
    fn demo_takes_a_known_scenario_and_its_options() {
        let parse = |argv: &[&str]| match Cli::try_parse_from(argv).map(|c| c.command) {
            Ok(Command::Demo(args)) => Ok((args.scenario, args.html, args.time_scale, args.seed)),
            Ok(_) => panic!("not `miniplane demo`"),
            Err(e) => Err(e.to_string()),
        };
        let (scenario, html, scale, seed) = parse(&[
            "miniplane",
            "demo",
            "canary",
            "--html",
            "out.html",
            "--time-scale",
            "30",
            "--seed",
            "7",
        ])
        .unwrap();
        assert_eq!(
            (scenario.as_str(), html, scale, seed),
            ("canary", Some("out.html".into()), 30.0, 7)
        );
        let (_, html, scale, _) = parse(&["miniplane", "demo", "recreate"]).unwrap();
        assert_eq!((html, scale), (None, 60.0));
        let err = parse(&["miniplane", "demo", "nope"]).unwrap_err();
        assert!(
            err.contains("rolling-update") && err.contains("ab-testing"),
            "{err}"
        );
        assert!(parse(&["miniplane", "demo", "canary", "--time-scale", "0"]).is_err());
    }

    #[test]
    fn event_ttl_takes_kube_apiserver_durations() {
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1h0m0s"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("-5m").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
