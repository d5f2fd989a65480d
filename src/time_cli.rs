//! `miniplane time`: the time machine of a running miniplane.
//!
//! ```text
//! miniplane time status                      time paused at 2026-12-02T15:04:05Z (scale 1) ...
//! miniplane time pause                       time paused at 2026-12-02T15:04:05Z
//! miniplane time resume                      time running from 2026-12-02T15:04:05Z at scale 1
//! miniplane time scale 10                    time scale 10 at 2026-12-02T15:04:05Z
//! miniplane time step 10s                    stepped 10s: now 2026-12-02T15:04:15Z
//! miniplane time break-on deployment/web     breakpoint on Deployment/default/web
//! miniplane time release deployment/web      released Deployment/default/web
//! ```
//!
//! Each command is one call of `/debug/time` (see the API server's
//! `http/time.rs`, and `store::time` for what a step waits for) and prints
//! one line. The client and its kubeconfig lookup are `miniplane node`'s
//! ([`crate::node_cli::connect`]); errors are worded as kubectl's (`Error
//! from server (Conflict): the clock is running: pause it first ...`).

use std::path::PathBuf;

use clap::Subcommand;
use kube::core::Request;
use kube::core::params::{GetParams, PostParams};
use serde_json::Value;

use crate::node_cli;

/// `miniplane time ...`.
#[derive(clap::Args)]
pub struct TimeArgs {
    #[command(subcommand)]
    pub command: TimeCommand,
    /// The namespace of a breakpoint's object.
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

/// What to do with the clock.
#[derive(Subcommand, Clone, Debug, PartialEq, Eq)]
pub enum TimeCommand {
    /// Show the time, whether it runs, the scale, breakpoints and held syncs.
    Status,
    /// Stop simulated time: timestamps, ages and every timer stand still.
    Pause,
    /// Let simulated time run again from where it stands.
    Resume,
    /// Run simulated time FACTOR times faster than real time (1 = real time).
    Scale {
        /// Simulated seconds per real second, e.g. 10 or 0.5.
        factor: String,
    },
    /// Move paused time forward (e.g. 10s, 1m30s, 500ms), stopping at every
    /// timer on the way and waiting for the cluster to settle at each.
    Step {
        /// How far, in Go's duration syntax.
        duration: String,
    },
    /// Hold the next sync of an object by its controller until released
    /// (deployment/web: the deployment controller's sync of default/web).
    BreakOn {
        /// KIND/NAME, e.g. deployment/web or rs/web-6d4f.
        object: String,
    },
    /// Remove a breakpoint and let the sync it holds go on.
    Release {
        /// KIND/NAME, as given to break-on.
        object: String,
    },
}

/// One call of `/debug/time`: the method, the path with its query, and
/// what to print of the state it answers.
#[derive(Debug, PartialEq)]
pub struct Call {
    /// `GET` or `POST`.
    pub post: bool,
    /// `/debug/time/step?duration=10s`.
    pub path: String,
}

impl TimeCommand {
    /// The call this command makes; `Err` for input to fix first.
    pub fn call(&self, namespace: &str) -> Result<Call, String> {
        let post = |path: String| Ok(Call { post: true, path });
        match self {
            TimeCommand::Status => Ok(Call {
                post: false,
                path: "/debug/time".into(),
            }),
            TimeCommand::Pause => post("/debug/time/pause".into()),
            TimeCommand::Resume => post("/debug/time/resume".into()),
            TimeCommand::Scale { factor } => post(format!("/debug/time/scale?factor={}", encode(factor))),
            TimeCommand::Step { duration } => {
                store::time::parse_duration(duration)?;
                post(format!("/debug/time/step?duration={}", encode(duration)))
            }
            TimeCommand::BreakOn { object } => post(breakpoint_path("break-on", object, namespace)?),
            TimeCommand::Release { object } => post(breakpoint_path("release", object, namespace)?),
        }
    }

    /// The one line printed for the state `s` the server answered.
    pub fn line(&self, s: &Value, namespace: &str) -> String {
        let now = s["now"].as_str().unwrap_or("?");
        let scale = &s["scale"];
        match self {
            TimeCommand::Status => status_line(s),
            TimeCommand::Pause => format!("time paused at {now}"),
            TimeCommand::Resume => format!("time running from {now} at scale {scale}"),
            TimeCommand::Scale { .. } => format!("time scale {scale} at {now}"),
            TimeCommand::Step { duration } => format!("stepped {duration}: now {now}"),
            TimeCommand::BreakOn { object } => format!("breakpoint on {}", shown(object, namespace)),
            TimeCommand::Release { object } => format!("released {}", shown(object, namespace)),
        }
    }
}

/// `time paused at T (scale 1); breakpoints: ...; held: ...`.
fn status_line(s: &Value) -> String {
    let now = s["now"].as_str().unwrap_or("?");
    let how = match s["paused"].as_bool() {
        Some(true) => "paused at",
        _ => "running, now",
    };
    let list = |field: &str| {
        let items: Vec<&str> = s[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    format!(
        "time {how} {now} (scale {}); breakpoints: {}; held: {}",
        s["scale"],
        list("breakpoints"),
        list("held")
    )
}

/// The breakpoint as the server names it (`Deployment/default/web`).
fn shown(object: &str, namespace: &str) -> String {
    match object.split_once('/') {
        Some((kind, name)) => match store::time::Breakpoint::new(kind, namespace, name) {
            Ok(b) => b.to_string(),
            Err(_) => object.to_string(),
        },
        None => object.to_string(),
    }
}

/// `/debug/time/<verb>?kind=K&namespace=NS&name=N` for `KIND/NAME`.
fn breakpoint_path(verb: &str, object: &str, namespace: &str) -> Result<String, String> {
    let Some((kind, name)) = object
        .split_once('/')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty())
    else {
        return Err(format!(
            "error: give the object as KIND/NAME, e.g. deployment/web, not {object:?}"
        ));
    };
    Ok(format!(
        "/debug/time/{verb}?kind={}&namespace={}&name={}",
        encode(kind),
        encode(namespace),
        encode(name)
    ))
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Runs one `miniplane time` command; `default_data_dir` is `miniplane up`'s.
pub async fn run(args: TimeArgs, default_data_dir: PathBuf) -> anyhow::Result<()> {
    let call = args.command.call(&args.namespace).map_err(|e| {
        let e = e.trim_start_matches("error: ").to_string();
        anyhow::anyhow!("error: {e}")
    })?;
    let (client, server) = node_cli::connect(args.kubeconfig, args.data_dir, default_data_dir).await?;
    let state = send(&client, &call)
        .await
        .map_err(|e| anyhow::anyhow!(node_cli::describe(&e, &server)))?;
    println!("{}", args.command.line(&state, &args.namespace));
    Ok(())
}

/// Sends `call` and reads the state it answers.
async fn send(client: &kube::Client, call: &Call) -> Result<Value, kube::Error> {
    let mut request = match call.post {
        false => Request::new("/debug").get("time", &GetParams::default()),
        true => Request::new(&call.path).create(&PostParams::default(), Vec::new()),
    }
    .map_err(kube::Error::BuildRequest)?;
    *request.uri_mut() = call
        .path
        .parse()
        .map_err(|e| kube::Error::BuildRequest(kube::core::request::Error::Validation(format!("{e}"))))?;
    client.request::<Value>(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_command_is_one_call() {
        let call = |c: TimeCommand| c.call("default").map(|c| (c.post, c.path));
        assert_eq!(call(TimeCommand::Status), Ok((false, "/debug/time".into())));
        assert_eq!(call(TimeCommand::Pause), Ok((true, "/debug/time/pause".into())));
        assert_eq!(
            call(TimeCommand::Step {
                duration: "1m30s".into()
            }),
            Ok((true, "/debug/time/step?duration=1m30s".into()))
        );
        assert_eq!(
            call(TimeCommand::BreakOn {
                object: "deployment/web".into()
            }),
            Ok((
                true,
                "/debug/time/break-on?kind=deployment&namespace=default&name=web".into()
            ))
        );
        assert!(
            call(TimeCommand::Step {
                duration: "soon".into()
            })
            .unwrap_err()
            .contains("not a positive duration")
        );
        assert!(
            call(TimeCommand::Release { object: "web".into() })
                .unwrap_err()
                .contains("KIND/NAME")
        );
    }

    #[test]
    fn each_command_prints_one_line() {
        let s = json!({"now": "2026-12-02T15:04:05Z", "paused": true, "scale": 1.0,
            "breakpoints": ["Deployment/default/web"], "held": []});
        let line = |c: TimeCommand| c.line(&s, "default");
        assert_eq!(line(TimeCommand::Pause), "time paused at 2026-12-02T15:04:05Z");
        assert_eq!(
            line(TimeCommand::Step {
                duration: "10s".into()
            }),
            "stepped 10s: now 2026-12-02T15:04:05Z"
        );
        assert_eq!(
            line(TimeCommand::Status),
            "time paused at 2026-12-02T15:04:05Z (scale 1.0); breakpoints: Deployment/default/web; held: none"
        );
        assert_eq!(
            line(TimeCommand::BreakOn {
                object: "deploy/web".into()
            }),
            "breakpoint on Deployment/default/web"
        );
    }
}
