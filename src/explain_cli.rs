//! `miniplane explain` (being written).

use std::path::PathBuf;

/// `miniplane explain ...`.
#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The kubeconfig of the running miniplane [default: $KUBECONFIG, else
    /// <data-dir>/kubeconfig as `miniplane up` writes it].
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Runs the command against the running miniplane.
pub async fn run(_args: ExplainArgs, _default_data_dir: PathBuf) -> anyhow::Result<()> {
    anyhow::bail!("not written yet")
}
