//! `miniplane explain KIND/NAME [-n NAMESPACE]`: how an object got its current state, newest
//! first, back to your own request.
//!
//! ```text
//! $ miniplane explain po/web-6d4f-x2
//! pod default/web-6d4f-x2: how it got here, newest first (+seconds of simulated time)
//!
//!     +4.1s  replicaset: synced replicaset default/web-6d4f, after replicaset default/web-6d4f MODIFIED
//!            manageReplicas: diff +1 (2 active pods, spec.replicas 3): creating 1 in slow-start batches of 1
//!            created pod default/web-6d4f-x2
//!     ...
//!     +0.0s  you (kubectl-set) updated deployment default/web: spec.template.spec.containers[0].image ...
//! ```
//!
//! The command reads the whole causal journal page by page (`GET /debug/journal?after=N&limit=M`)
//! and hands it to [`miniplane::explain`], where the story is built and printed (pure, tested
//! there). The client and its kubeconfig lookup are `miniplane node`'s
//! ([`crate::node_cli::connect`]); errors are worded as kubectl's. The same command runs as a
//! kubectl plugin, `kubectl miniplane explain ...` (the `kubectl-miniplane` binary).

use std::path::PathBuf;

use kube::core::Request;
use kube::core::params::GetParams;
use miniplane::explain::{RenderOptions, explain, parse_target};
use store::journal::Entry;

use crate::node_cli;

/// Entries asked for per page.
const PAGE: usize = 5000;

/// `miniplane explain ...`.
#[derive(clap::Args)]
pub struct ExplainArgs {
    /// The object: KIND/NAME or KIND NAME (kubectl's names: deployment, deploy, rs, po, ...).
    #[arg(required = true, num_args = 1..=2, value_name = "KIND/NAME")]
    pub object: Vec<String>,
    /// The object's namespace [default: the kubeconfig context's, else `default`].
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Show at most this many steps, the newest (0: all).
    #[arg(long, default_value_t = 40)]
    pub max_steps: usize,
    /// Also follow the writes to the object's status (a kubelet's reports, a controller's
    /// counts), not only to its spec and metadata.
    #[arg(long)]
    pub status: bool,
    /// The kubeconfig of the running miniplane [default: $KUBECONFIG, else
    /// <data-dir>/kubeconfig as `miniplane up` writes it].
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The data dir of the running miniplane, to find its kubeconfig when
    /// neither --kubeconfig nor $KUBECONFIG is given [default:
    /// $XDG_DATA_HOME/miniplane or ~/.local/share/miniplane].
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

/// Runs the command against the running miniplane.
pub async fn run(args: ExplainArgs, default_data_dir: PathBuf) -> anyhow::Result<()> {
    let (client, server) = node_cli::connect(args.kubeconfig, args.data_dir, default_data_dir).await?;
    let namespace = args
        .namespace
        .unwrap_or_else(|| client.default_namespace().to_string());
    let target = parse_target(&args.object, &namespace).map_err(anyhow::Error::msg)?;
    let entries = fetch_journal(&client)
        .await
        .map_err(|e| anyhow::anyhow!(node_cli::describe(&e, &server)))?;
    let options = RenderOptions {
        max_steps: args.max_steps,
        status_writes: args.status,
        journal_capacity: 0,
    };
    let text = explain(&entries, &target, &options);
    print!("{text}");
    if text.starts_with("No journal entries") {
        // Nothing to explain is a failure a script can see, as kubectl's NotFound.
        anyhow::bail!("error: nothing to explain for {target}");
    }
    Ok(())
}

/// Every entry the journal holds, oldest first, a page at a time: `GET
/// /debug/journal?after=N&limit=PAGE`. kube builds a GET of `/debug/journal`, whose URI is then
/// replaced with the one carrying the query (kube's builders know only the API's parameters).
async fn fetch_journal(client: &kube::Client) -> Result<Vec<Entry>, kube::Error> {
    let mut all = Vec::new();
    let mut after = 0;
    loop {
        let mut request = Request::new("/debug")
            .get("journal", &GetParams::default())
            .map_err(kube::Error::BuildRequest)?;
        let uri = format!("/debug/journal?after={after}&limit={PAGE}");
        *request.uri_mut() = uri
            .parse()
            .map_err(|e| kube::Error::BuildRequest(kube::core::request::Error::Validation(format!("{e}"))))?;
        let mut page: serde_json::Value = client.request(request).await?;
        let entries: Vec<Entry> =
            serde_json::from_value(page["entries"].take()).map_err(kube::Error::SerdeError)?;
        let next = page["next"].as_u64().unwrap_or(after);
        let done = entries.is_empty() || next <= after;
        all.extend(entries);
        if done {
            return Ok(all);
        }
        after = next;
    }
}
