//! `miniplane rollout promote|abort|retry`: ask the Canary controller to act on a rollout.
//!
//! The Canary controller watches three annotations of a Canary
//! (rollouts.miniplane.dev/v1beta1): [`PROMOTE_ANNOTATION`] promotes now (skipping the remaining
//! steps and any confirm-promotion gate), [`ABORT_ANNOTATION`] rolls back now,
//! [`RETRY_ANNOTATION`] starts a failed rollout's analysis again; it removes the annotation once
//! it has acted. Each command sets one of them to `"true"` with a merge patch, so
//! `kubectl annotate canary NAME rollouts.miniplane.dev/promote=true` does the same. The client
//! and its kubeconfig lookup are `miniplane node`'s ([`crate::node_cli::connect`]); errors are
//! worded as kubectl's (`Error from server (NotFound): canaries.rollouts.miniplane.dev "x" not
//! found`).

use std::path::PathBuf;

use clap::Subcommand;
use controllers::canary::types::{ABORT_ANNOTATION, Canary, PROMOTE_ANNOTATION, RETRY_ANNOTATION};
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use crate::node_cli;

/// `miniplane rollout ...`.
#[derive(clap::Args)]
pub struct RolloutArgs {
    #[command(subcommand)]
    pub command: RolloutCommand,
    /// The Canary's namespace.
    #[arg(short = 'n', long, global = true, default_value = "default")]
    pub namespace: String,
    /// The kubeconfig of the running miniplane [default: $KUBECONFIG, else
    /// <data-dir>/kubeconfig as `miniplane up` writes it].
    #[arg(long, global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The data dir of the running miniplane, to find its kubeconfig when
    /// neither --kubeconfig nor $KUBECONFIG is given [default:
    /// $XDG_DATA_HOME/miniplane or ~/.local/share/miniplane].
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
}

/// What to ask of a Canary's rollout.
#[derive(Subcommand, Clone, Debug, PartialEq, Eq)]
pub enum RolloutCommand {
    /// Promote the canary now: skip the remaining steps and any
    /// confirm-promotion gate.
    Promote {
        /// The Canary, e.g. podinfo.
        name: String,
    },
    /// Roll back now: all traffic to the primary, the canary scaled to zero.
    Abort {
        /// The Canary, e.g. podinfo.
        name: String,
    },
    /// Start a failed rollout's analysis again.
    Retry {
        /// The Canary, e.g. podinfo.
        name: String,
    },
}

impl RolloutCommand {
    /// The Canary's name, the annotation this command sets, and the word it prints.
    pub fn parts(&self) -> (&str, &'static str, &'static str) {
        match self {
            RolloutCommand::Promote { name } => (name, PROMOTE_ANNOTATION, "promote"),
            RolloutCommand::Abort { name } => (name, ABORT_ANNOTATION, "abort"),
            RolloutCommand::Retry { name } => (name, RETRY_ANNOTATION, "retry"),
        }
    }
}

/// The merge patch that sets `annotation: "true"`.
pub fn request_patch(annotation: &str) -> Value {
    json!({"metadata": {"annotations": {annotation: "true"}}})
}

/// What a successful command prints: `canary.rollouts.miniplane.dev/NAME promote requested`.
pub fn requested(name: &str, verb: &str) -> String {
    format!("canary.rollouts.miniplane.dev/{name} {verb} requested")
}

/// Runs one `miniplane rollout` command; `default_data_dir` is `miniplane up`'s.
pub async fn run(args: RolloutArgs, default_data_dir: PathBuf) -> anyhow::Result<()> {
    let (client, server) = node_cli::connect(args.kubeconfig, args.data_dir, default_data_dir).await?;
    let canaries: Api<Canary> = Api::namespaced(client, &args.namespace);
    let (name, annotation, verb) = args.command.parts();
    request(&canaries, name, annotation)
        .await
        .map_err(|e| anyhow::anyhow!(node_cli::describe(&e, &server)))?;
    println!("{}", requested(name, verb));
    Ok(())
}

/// Sets `annotation: "true"` on the Canary `name` (a merge patch).
async fn request(canaries: &Api<Canary>, name: &str, annotation: &str) -> Result<(), kube::Error> {
    let patch = request_patch(annotation);
    canaries
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_sets_its_annotation_to_true() {
        let promote = RolloutCommand::Promote {
            name: "podinfo".into(),
        };
        assert_eq!(
            promote.parts(),
            ("podinfo", "rollouts.miniplane.dev/promote", "promote")
        );
        let abort = RolloutCommand::Abort { name: "a".into() };
        assert_eq!(abort.parts().1, "rollouts.miniplane.dev/abort");
        let retry = RolloutCommand::Retry { name: "r".into() };
        assert_eq!(retry.parts().1, "rollouts.miniplane.dev/retry");
        assert_eq!(
            request_patch(PROMOTE_ANNOTATION),
            json!({"metadata": {"annotations": {"rollouts.miniplane.dev/promote": "true"}}})
        );
        assert_eq!(
            requested("podinfo", "promote"),
            "canary.rollouts.miniplane.dev/podinfo promote requested"
        );
    }
}
