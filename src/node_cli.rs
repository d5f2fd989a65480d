//! `miniplane node`: pause and resume a simulated node's heartbeat on a running miniplane.
//!
//! The simulated kubelet stops renewing a node's Lease and status while the Node carries the
//! annotation [`HEARTBEAT_ANNOTATION`]`: "stopped"`; the node lifecycle controller then sees the
//! silence, as for a real node that lost power: the node turns NotReady (`Unknown`) and is
//! tainted. `stop` sets the annotation, `start` removes it (a merge patch with `null`), `list`
//! shows each node's readiness and heartbeat. Nothing here talks to the kubelet: the Node object
//! is the whole contract, so `kubectl annotate` does the same.
//!
//! The client reads a kubeconfig, first found of: `--kubeconfig`, `$KUBECONFIG` (a list, merged
//! as kubectl does), the one `miniplane up` writes (`<data-dir>/kubeconfig`). Errors are worded as
//! kubectl's (`Error from server (NotFound): nodes "x" not found`, `The connection to the server
//! ... was refused`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Subcommand;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

/// The Node annotation the simulated kubelet reads (`kubelet_sim::node::HEARTBEAT`).
pub use kubelet_sim::node::HEARTBEAT as HEARTBEAT_ANNOTATION;
/// The annotation's value that stops the heartbeat.
pub use kubelet_sim::node::HEARTBEAT_STOPPED as STOPPED;

/// How long to wait for a TCP connection to the API server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `miniplane node ...`.
#[derive(clap::Args)]
pub struct NodeArgs {
    #[command(subcommand)]
    pub command: NodeCommand,
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

/// What to do with a node.
#[derive(Subcommand)]
pub enum NodeCommand {
    /// Stop a node's heartbeat: its Lease and status go stale, and the node
    /// lifecycle controller marks it NotReady and taints it, as a node that
    /// lost power.
    Stop {
        /// The node, e.g. miniplane-worker-2.
        name: String,
    },
    /// Resume a node's heartbeat: it turns Ready again at its next beat.
    Start {
        /// The node, e.g. miniplane-worker-2.
        name: String,
    },
    /// List the nodes with their readiness and heartbeat.
    List,
}

/// Where the kubeconfig is read from, and why.
#[derive(Debug, PartialEq, Eq)]
pub enum KubeconfigSource {
    /// `--kubeconfig`.
    Flag(PathBuf),
    /// `$KUBECONFIG` (possibly a list).
    Env,
    /// `<data-dir>/kubeconfig`, written by `miniplane up`.
    DataDir(PathBuf),
}

/// The first of `--kubeconfig`, a non-empty `$KUBECONFIG`, `<data_dir>/kubeconfig`.
pub fn kubeconfig_source(
    flag: Option<PathBuf>,
    env: Option<&std::ffi::OsStr>,
    data_dir: &Path,
) -> KubeconfigSource {
    match (flag, env) {
        (Some(path), _) => KubeconfigSource::Flag(path),
        (None, Some(v)) if !v.is_empty() => KubeconfigSource::Env,
        _ => KubeconfigSource::DataDir(data_dir.join("kubeconfig")),
    }
}

/// The merge patch that stops (`true`) or resumes the heartbeat.
pub fn heartbeat_patch(stop: bool) -> Value {
    let value = if stop { json!(STOPPED) } else { Value::Null };
    json!({"metadata": {"annotations": {HEARTBEAT_ANNOTATION: value}}})
}

/// Runs one `miniplane node` command; `data_dir` is the default data dir of `miniplane up`.
pub async fn run(args: NodeArgs, default_data_dir: PathBuf) -> anyhow::Result<()> {
    let (client, server) = connect(args.kubeconfig, args.data_dir, default_data_dir).await?;
    let nodes: Api<Node> = Api::all(client);
    let result = match &args.command {
        NodeCommand::Stop { name } => set_heartbeat(&nodes, name, true).await,
        NodeCommand::Start { name } => set_heartbeat(&nodes, name, false).await,
        NodeCommand::List => list(&nodes).await,
    };
    result.map_err(|e| anyhow::anyhow!(describe(&e, &server)))
}

/// A client of the running miniplane, and its server URL: the kubeconfig is the first of
/// `--kubeconfig` (`flag`), `$KUBECONFIG`, `<data_dir or default_data_dir>/kubeconfig`. Shared by
/// every client subcommand (`miniplane node`, `miniplane rollout`).
pub async fn connect(
    flag: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    default_data_dir: PathBuf,
) -> anyhow::Result<(kube::Client, String)> {
    let data_dir = data_dir.unwrap_or(default_data_dir);
    let env = std::env::var_os("KUBECONFIG");
    client(&kubeconfig_source(flag, env.as_deref(), &data_dir)).await
}

/// A client for the kubeconfig `source`, and the server URL it talks to.
async fn client(source: &KubeconfigSource) -> anyhow::Result<(kube::Client, String)> {
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let kubeconfig = match source {
        KubeconfigSource::Flag(path) => Kubeconfig::read_from(path)
            .map_err(|e| anyhow::anyhow!("error: reading the kubeconfig {}: {e}", path.display()))?,
        KubeconfigSource::Env => Kubeconfig::from_env()
            .map_err(|e| anyhow::anyhow!("error: reading the kubeconfig named by $KUBECONFIG: {e}"))?
            .ok_or_else(|| anyhow::anyhow!("error: $KUBECONFIG names no file"))?,
        KubeconfigSource::DataDir(path) if !path.exists() => anyhow::bail!(
            "error: no kubeconfig at {}: is `miniplane up` running? (or pass --kubeconfig, set $KUBECONFIG, or --data-dir)",
            path.display()
        ),
        KubeconfigSource::DataDir(path) => Kubeconfig::read_from(path)
            .map_err(|e| anyhow::anyhow!("error: reading the kubeconfig {}: {e}", path.display()))?,
    };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| anyhow::anyhow!("error: the kubeconfig is not usable: {e}"))?;
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    let server = config.cluster_url.to_string();
    let client =
        kube::Client::try_from(config).map_err(|e| anyhow::anyhow!("error: building a client: {e}"))?;
    Ok((client, server))
}

/// Sets or removes the heartbeat annotation of node `name`.
async fn set_heartbeat(nodes: &Api<Node>, name: &str, stop: bool) -> Result<(), kube::Error> {
    let patch = heartbeat_patch(stop);
    let params = PatchParams::default();
    nodes.patch(name, &params, &Patch::Merge(&patch)).await?;
    match stop {
        true => {
            println!("node/{name} heartbeat stopped (NotReady once the node monitor grace period has passed)")
        }
        false => println!("node/{name} heartbeat started"),
    }
    Ok(())
}

/// Prints every node: name, readiness (as `kubectl get nodes`), heartbeat.
async fn list(nodes: &Api<Node>) -> Result<(), kube::Error> {
    let list = nodes.list(&ListParams::default()).await?;
    print!("{}", node_table(&list.items));
    Ok(())
}

/// The `list` table: NAME, STATUS (kubectl's: `Ready` or `NotReady`, with
/// `,SchedulingDisabled` when cordoned), HEARTBEAT (`running` or `stopped`).
pub fn node_table(nodes: &[Node]) -> String {
    let rows: Vec<[String; 3]> = nodes
        .iter()
        .map(|n| {
            let name = n.metadata.name.clone().unwrap_or_default();
            [name, node_status(n), heartbeat(n).to_string()]
        })
        .collect();
    let width = |i: usize, header: &str| {
        rows.iter()
            .map(|r| r[i].len())
            .chain([header.len()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1) = (width(0, "NAME"), width(1, "STATUS"));
    let mut out = format!("{:<w0$}   {:<w1$}   HEARTBEAT\n", "NAME", "STATUS");
    for [name, status, beat] in &rows {
        out.push_str(&format!("{name:<w0$}   {status:<w1$}   {beat}\n"));
    }
    out
}

/// kubectl's node STATUS column.
fn node_status(node: &Node) -> String {
    let conditions = node.status.as_ref().and_then(|s| s.conditions.as_ref());
    let ready = conditions.into_iter().flatten().find(|c| c.type_ == "Ready");
    let mut status = match ready {
        Some(c) if c.status == "True" => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        status.push_str(",SchedulingDisabled");
    }
    status
}

/// `stopped` when the node carries the annotation with that value, else `running`.
fn heartbeat(node: &Node) -> &'static str {
    let annotations = node.metadata.annotations.as_ref();
    match annotations
        .and_then(|a| a.get(HEARTBEAT_ANNOTATION))
        .map(String::as_str)
    {
        Some(STOPPED) => "stopped",
        _ => "running",
    }
}

/// A failed call, worded as kubectl words it.
pub fn describe(e: &kube::Error, server: &str) -> String {
    if let kube::Error::Api(status) = e {
        let reason = if status.reason.is_empty() {
            "unknown"
        } else {
            status.reason.as_str()
        };
        return format!("Error from server ({reason}): {}", status.message);
    }
    let host = server
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_end_matches('/');
    if refused(e) {
        return format!(
            "The connection to the server {host} was refused - did you specify the right host or port?"
        );
    }
    format!("Unable to connect to the server {host}: {}", causes(e))
}

/// Whether a connection refusal is among the causes of `e`.
fn refused(e: &kube::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The innermost cause of `e` (the useful words: "connection timed out", "invalid peer
/// certificate", ...).
fn causes(e: &kube::Error) -> String {
    let mut last: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn node(name: &str, ready: &str, annotation: Option<&str>, cordoned: bool) -> Node {
        let annotations = annotation.map(|v| [(HEARTBEAT_ANNOTATION.to_string(), v.to_string())].into());
        Node {
            metadata: ObjectMeta {
                name: Some(name.into()),
                annotations,
                ..Default::default()
            },
            spec: Some(NodeSpec {
                unschedulable: cordoned.then_some(true),
                ..Default::default()
            }),
            status: Some(NodeStatus {
                conditions: Some(vec![NodeCondition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn the_kubeconfig_comes_from_the_flag_then_the_environment_then_the_data_dir() {
        let dir = Path::new("/data");
        let flag = Some(PathBuf::from("/k"));
        let env = Some(std::ffi::OsStr::new("/e"));
        assert_eq!(
            kubeconfig_source(flag.clone(), env, dir),
            KubeconfigSource::Flag("/k".into())
        );
        assert_eq!(kubeconfig_source(None, env, dir), KubeconfigSource::Env);
        let up = KubeconfigSource::DataDir("/data/kubeconfig".into());
        assert_eq!(kubeconfig_source(None, Some(std::ffi::OsStr::new("")), dir), up);
        assert_eq!(kubeconfig_source(None, None, dir), up);
    }

    #[test]
    fn stop_sets_the_annotation_and_start_removes_it_with_null() {
        assert_eq!(
            heartbeat_patch(true),
            json!({"metadata": {"annotations": {"sim.miniplane.dev/heartbeat": "stopped"}}})
        );
        assert_eq!(
            heartbeat_patch(false),
            json!({"metadata": {"annotations": {"sim.miniplane.dev/heartbeat": null}}})
        );
    }

    #[test]
    fn the_list_shows_readiness_as_kubectl_and_the_heartbeat() {
        let table = node_table(&[
            node("miniplane-worker-1", "True", None, false),
            node("miniplane-worker-2", "Unknown", Some("stopped"), false),
            node("miniplane-worker-3", "True", Some("other"), true),
        ]);
        assert_eq!(
            table,
            "NAME                 STATUS                     HEARTBEAT\n\
             miniplane-worker-1   Ready                      running\n\
             miniplane-worker-2   NotReady                   stopped\n\
             miniplane-worker-3   Ready,SchedulingDisabled   running\n"
        );
    }

    #[test]
    fn a_server_error_reads_as_kubectls() {
        let status = kube::core::Status::failure(r#"nodes "x" not found"#, "NotFound").with_code(404);
        let e = kube::Error::Api(Box::new(status));
        assert_eq!(
            describe(&e, "https://127.0.0.1:6443/"),
            r#"Error from server (NotFound): nodes "x" not found"#
        );
    }
}
