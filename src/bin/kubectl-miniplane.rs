//! `kubectl miniplane ...`: miniplane's client commands as a kubectl plugin.
//!
//! kubectl runs any executable named `kubectl-<name>` found on `PATH` for `kubectl <name> ...`,
//! passing the arguments after `<name>` (kubectl's plugin mechanism). This binary is that
//! executable for `miniplane`: `kubectl miniplane explain deploy/web` runs what `miniplane explain
//! deploy/web` runs, with the same modules ([`explain_cli`], [`node_cli`], [`rollout_cli`],
//! [`time_cli`]) compiled in. The kubeconfig is found as kubectl finds it: `--kubeconfig`, then
//! `$KUBECONFIG` (which kubectl passes on to its plugins), then the one `miniplane up` wrote.
//!
//! `cargo install --path .` installs it next to `miniplane`; or link it onto `PATH`:
//! `ln -s "$PWD/target/debug/kubectl-miniplane" ~/.local/bin/`.

#[path = "../explain_cli.rs"]
mod explain_cli;
#[path = "../node_cli.rs"]
mod node_cli;
#[path = "../rollout_cli.rs"]
mod rollout_cli;
#[path = "../time_cli.rs"]
mod time_cli;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "kubectl miniplane",
    bin_name = "kubectl miniplane",
    version,
    about = "miniplane's client commands as a kubectl plugin"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explain how an object got its current state: the chain of decisions
    /// and writes back to your own request, newest first.
    Explain(explain_cli::ExplainArgs),
    /// Stop or start a simulated node's heartbeat, or list the nodes.
    Node(node_cli::NodeArgs),
    /// Promote, abort or retry a Canary's rollout.
    Rollout(rollout_cli::RolloutArgs),
    /// The time machine: pause, resume, rescale or step the simulated clock.
    Time(time_cli::TimeArgs),
}

/// Where `miniplane up` keeps its kubeconfig by default (as `miniplane`'s own).
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
    let data_dir = default_data_dir();
    let result = match Cli::parse().command {
        Command::Explain(args) => explain_cli::run(args, data_dir).await,
        Command::Node(args) => node_cli::run(args, data_dir).await,
        Command::Rollout(args) => rollout_cli::run(args, data_dir).await,
        Command::Time(args) => time_cli::run(args, data_dir).await,
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Already worded as kubectl's, with no `error:` prefix added.
            eprintln!("{e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
