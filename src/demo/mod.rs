//! `miniplane demo <scenario>`: a rollout shown live, on a cluster of its own.
//!
//! | file | role |
//! |---|---|
//! | `scenarios.rs` | the table: manifests (examples/demos/), the trigger, the expected end |
//! | `mod.rs` | the runner: start an in-memory cluster, apply, wait, trigger, step until the end |
//! | `sample.rs` | what one step observes (phase, weight, replicas, success rate and p99 per version, events) |
//! | `render.rs` | the terminal line of a step |
//! | `timeline.rs` | the HTML page with inline SVG charts (`--html`) |
//!
//! The cluster is the test harness's ([`miniplane::Cluster`]): every controller, the
//! scheduler, three simulated nodes and the traffic simulation, in this process, on a clock
//! running `--time-scale` times faster than the wall. The manifests are created through the
//! in-process API, the new version is a new image (and, for a bad version, behaviour
//! annotations) in the Deployment's pod template, and the metrics are read in PromQL from the
//! simulation's store. Exit status: 0 when the scenario ended as designed, 1 when it ended
//! otherwise (a line says what was expected), 2 when it did not end in its simulated time.

mod render;
mod sample;
pub mod scenarios;
mod timeline;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use apiserver::api::WriteOptions;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use miniplane::Cluster;
use miniplane::cluster::SimConfig;
use serde_json::Value;
use sim_metrics::Tsdb;

use sample::{Observer, Sample, tag};
use scenarios::{Driver, Expect, NAMESPACE, NEW_IMAGE, OLD_IMAGE, Scenario};

/// Simulated time between two steps.
const STEP: Duration = Duration::from_secs(2);
/// A line is printed at least this often (simulated), so the metrics show even when nothing
/// else changes.
const HEARTBEAT: Duration = Duration::from_secs(20);
/// The longest the first version may take to be up, in simulated time.
const WARM_UP: Duration = Duration::from_secs(5 * 60);
/// Traffic to the first version before the new one is triggered, so its metrics show.
const BASELINE: Duration = Duration::from_secs(30);
/// The field manager of the demo's writes.
const FIELD_MANAGER: &str = "miniplane-demo";

/// `miniplane demo ...`.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// The scenario to run.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(scenarios::names()))]
    pub scenario: String,
    /// Also write a self-contained HTML timeline of the run (charts of the
    /// weights, replicas and metrics over simulated time, the steps, the
    /// events) to this file.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Simulated seconds per real second.
    #[arg(long, default_value_t = 60.0, value_parser = crate::parse_time_scale)]
    pub time_scale: f64,
    /// Seed of every random choice in the cluster (names, pull times, request outcomes).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// How a run ended.
#[derive(Debug)]
enum End {
    /// As the scenario says.
    AsDesigned(String),
    /// Otherwise: what was expected, what happened.
    Otherwise(String),
    /// Not within the scenario's simulated time.
    TimedOut(String),
}

/// Runs `miniplane demo`.
pub async fn run(args: DemoArgs) -> ExitCode {
    let Some(scenario) = scenarios::find(&args.scenario) else {
        eprintln!("error: no scenario {:?}", args.scenario);
        return ExitCode::from(1);
    };
    let (end, samples, events, trigger) = match drive(scenario, &args).await {
        Ok(run) => run,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(1);
        }
    };
    let (code, outcome) = match &end {
        End::AsDesigned(what) => (0, format!("ok: {what}")),
        End::Otherwise(what) => (1, format!("NOT AS DESIGNED: {what}")),
        End::TimedOut(what) => (2, format!("TIMED OUT: {what}")),
    };
    println!("{outcome}");
    if let Some(path) = &args.html {
        let page = timeline::html(&timeline::Run {
            scenario: scenario.name,
            about: scenario.about,
            outcome: &outcome,
            samples: &samples,
            events: &events,
            trigger,
        });
        if let Err(e) = std::fs::write(path, page) {
            eprintln!("error: writing {}: {e}", path.display());
            return ExitCode::from(1);
        }
        println!("timeline written to {}", path.display());
    }
    ExitCode::from(code)
}

/// Prints a step's line when something changed, or every [`HEARTBEAT`].
#[derive(Default)]
struct Printer {
    last_key: String,
    last_t: Option<Duration>,
}

impl Printer {
    fn show(&mut self, s: &Sample) {
        let key = render::key(s);
        let due = self.last_t.is_none_or(|t| s.t >= t + HEARTBEAT);
        for line in render::earlier(s) {
            println!("{line}");
        }
        if key != self.last_key || due {
            println!("{}", render::line(s));
            self.last_key = key;
            self.last_t = Some(s.t);
        }
    }
}

/// The whole run: its end, every step, every Event, and when the new version came.
type Ran = (End, Vec<Sample>, Vec<sample::EventRow>, Option<Duration>);

/// Runs the scenario; see [`Ran`].
async fn drive(scenario: &'static Scenario, args: &DemoArgs) -> anyhow::Result<Ran> {
    let tsdb = Tsdb::new();
    let sim = SimConfig {
        metrics: tsdb.clone(),
        ..SimConfig::default()
    };
    let cluster = Cluster::builder()
        .time_scale(args.time_scale)
        .seed(args.seed)
        .sim(sim)
        .try_start()
        .await
        .context("starting the in-memory cluster")?;
    let clock = cluster.clock().clone();
    println!("miniplane demo {}: {}", scenario.name, scenario.about);
    println!(
        "in-memory cluster: {} simulated nodes, time x{}, seed {}",
        SimConfig::default().nodes,
        args.time_scale,
        args.seed
    );
    let created = apply(&cluster, scenario.manifests).await?;
    println!("created {}", created.join(", "));
    println!(
        "{}",
        render::header(matches!(scenario.driver, Driver::Canary { .. }))
    );

    let mut observer = Observer::new(cluster.client(), tsdb, clock.clone(), scenario);
    let mut printer = Printer::default();
    let mut samples = Vec::new();

    // The first version up, then some traffic to it.
    let mut up_since: Option<Duration> = None;
    loop {
        clock.sleep(STEP).await;
        let s = observer.sample().await;
        printer.show(&s);
        let up = first_version_up(scenario, &s);
        samples.push(s);
        let t = observer.elapsed();
        match (up, up_since) {
            (true, None) => up_since = Some(t),
            (true, Some(since)) if t >= since + BASELINE => break,
            (false, _) => up_since = None,
            _ => {}
        }
        if t > WARM_UP {
            let last = samples.last().map_or("-".to_string(), |s| s.phase.clone());
            let end = End::TimedOut(format!(
                "the first version was not up after {} (phase {last})",
                render::clock(WARM_UP)
            ));
            return Ok((end, samples, observer.events, None));
        }
    }

    trigger(&cluster, scenario).await?;
    let behaviour: Vec<String> = scenario
        .behaviour
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    println!(
        "{:>7}  ── new version: {}{}",
        render::clock(observer.elapsed()),
        tag(NEW_IMAGE),
        match behaviour.is_empty() {
            true => String::new(),
            false => format!(" with {}", behaviour.join(", ")),
        }
    );
    let triggered = observer.elapsed();
    let before = observer
        .canary()
        .await
        .and_then(|c| c.status)
        .and_then(|s| s.last_applied_spec);

    let mut started = false;
    // Blue/green: the canary's weight while its checks run (before the last iteration passed).
    let want_iterations = observer
        .canary()
        .await
        .and_then(|c| c.spec.analysis.iterations)
        .unwrap_or(0);
    let mut weight_in_analysis = 0;
    let end = loop {
        clock.sleep(STEP).await;
        let s = observer.sample().await;
        printer.show(&s);
        let phase = s.phase.clone();
        if s.phase == "Progressing" && s.iterations.unwrap_or(0) < want_iterations {
            weight_in_analysis = weight_in_analysis.max(s.weight.unwrap_or(0));
        }
        let elapsed = s.t;
        samples.push(s);
        let ended = match scenario.driver {
            Driver::Deployment => {
                matches!(phase.as_str(), "Complete" | "ProgressDeadlineExceeded")
                    && observer
                        .deployment(scenario.deployment)
                        .await
                        .is_some_and(|d| image_of(&d) == NEW_IMAGE)
            }
            Driver::Canary { .. } => {
                let applied = observer
                    .canary()
                    .await
                    .and_then(|c| c.status)
                    .and_then(|s| s.last_applied_spec);
                started |=
                    applied != before || !matches!(phase.as_str(), "Initialized" | "Succeeded" | "Pending");
                phase == "Failed" || (started && phase == "Succeeded")
            }
        };
        if ended {
            break judge(scenario, &observer, &phase, weight_in_analysis).await;
        }
        if elapsed >= triggered + scenario.timeout {
            break End::TimedOut(format!(
                "the rollout had not ended {} after the new version (phase {phase})",
                render::clock(scenario.timeout)
            ));
        }
    };
    let _ = cluster.stop().await;
    Ok((end, samples, observer.events, Some(triggered)))
}

/// Whether the first version serves: the Deployment rolled out, or the Canary initialized.
fn first_version_up(scenario: &Scenario, s: &Sample) -> bool {
    let all_ready = !s.versions.is_empty() && s.versions.iter().all(|v| v.ready == v.desired);
    match scenario.driver {
        Driver::Deployment => s.phase == "Complete" && all_ready,
        Driver::Canary { .. } => matches!(s.phase.as_str(), "Initialized" | "Succeeded") && all_ready,
    }
}

/// Whether the run ended as the scenario says.
async fn judge(scenario: &Scenario, observer: &Observer, phase: &str, weight_in_analysis: i32) -> End {
    // The image the rollout left in service: the Deployment's, or the primary's.
    let serving = match scenario.expect {
        Expect::RolledOut => scenario.deployment.to_string(),
        Expect::Promoted | Expect::RolledBack => format!("{}-primary", scenario.deployment),
    };
    let image = observer.deployment(&serving).await.map(|d| image_of(&d));
    verdict(
        scenario,
        phase,
        image.as_deref().unwrap_or(""),
        weight_in_analysis,
    )
}

/// The end of a run that finished in `phase` with `image` in service (the Deployment's, or
/// the primary's) and the canary's highest weight during the analysis.
fn verdict(scenario: &Scenario, phase: &str, image: &str, weight_in_analysis: i32) -> End {
    let target = scenario.deployment;
    let (want_phase, want_image, what) = match scenario.expect {
        Expect::RolledOut => ("Complete", NEW_IMAGE, "rolled out"),
        Expect::Promoted => ("Succeeded", NEW_IMAGE, "promoted"),
        Expect::RolledBack => ("Failed", OLD_IMAGE, "rolled back"),
    };
    if scenario.expect == Expect::RolledOut {
        return match phase == want_phase && image == want_image {
            true => End::AsDesigned(format!(
                "deployment/{target} rolled out: every replica runs {}",
                tag(NEW_IMAGE)
            )),
            false => End::Otherwise(format!(
                "expected deployment/{target} rolled out on {}; it ended {phase} on {}",
                tag(NEW_IMAGE),
                tag(image)
            )),
        };
    }
    if scenario.zero_weight_during_analysis && weight_in_analysis > 0 {
        return End::Otherwise(format!(
            "expected no traffic to the canary during the analysis; its weight reached {weight_in_analysis}%"
        ));
    }
    let ended = format!("ended {phase} with the primary on {}", tag(image));
    match phase == want_phase && image == want_image {
        true => End::AsDesigned(format!("canary/{target} {what}: {ended}")),
        false => End::Otherwise(format!(
            "expected canary/{target} {want_phase} with the primary on {}; it {ended}",
            tag(want_image)
        )),
    }
}

/// The first container image of a Deployment's pod template.
fn image_of(d: &Deployment) -> String {
    d.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

/// Creates every document of `manifests` through the in-process API; returns
/// `kind/name` of each.
async fn apply(cluster: &Cluster, manifests: &str) -> anyhow::Result<Vec<String>> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(manifests).context("the scenario's manifests")?;
    let api = cluster.api();
    let opts = WriteOptions {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    };
    let mut created = Vec::new();
    for doc in docs.into_iter().filter(|d| !d.is_null()) {
        let field = |f: &str| doc[f].as_str().unwrap_or("").to_string();
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        let name = doc["metadata"]["name"].as_str().unwrap_or("").to_string();
        let info = api
            .registry()
            .by_kind(&api_version, &kind)
            .with_context(|| format!("no resource for {kind} ({api_version})"))?;
        let namespace = info.namespaced.then_some(NAMESPACE);
        api.create(&info, namespace, doc, &opts)
            .await
            .map_err(|e| anyhow::anyhow!("creating {kind} {name}: {e}"))?;
        created.push(format!("{}/{name}", kind.to_lowercase()));
    }
    Ok(created)
}

/// The new version: the new image, and the scenario's behaviour annotations, in the
/// Deployment's pod template (an update, retried on a conflict).
async fn trigger(cluster: &Cluster, scenario: &Scenario) -> anyhow::Result<()> {
    let deployments: Api<Deployment> = Api::namespaced(cluster.client(), NAMESPACE);
    let mut last_error = None;
    for _ in 0..5 {
        let mut d = deployments
            .get(scenario.deployment)
            .await
            .with_context(|| format!("reading deployment/{}", scenario.deployment))?;
        let Some(spec) = d.spec.as_mut() else {
            anyhow::bail!("deployment/{} has no spec", scenario.deployment);
        };
        let template = &mut spec.template;
        let annotations = template
            .metadata
            .get_or_insert_with(Default::default)
            .annotations
            .get_or_insert_with(Default::default);
        for (k, v) in scenario.behaviour {
            annotations.insert((*k).to_string(), (*v).to_string());
        }
        for c in template.spec.iter_mut().flat_map(|s| s.containers.iter_mut()) {
            c.image = Some(NEW_IMAGE.to_string());
        }
        match deployments
            .replace(scenario.deployment, &PostParams::default(), &d)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) => last_error = Some(e),
        }
    }
    Err(anyhow::anyhow!(
        "updating deployment/{}: {}",
        scenario.deployment,
        last_error.map_or_else(String::new, |e| e.to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str) -> &'static Scenario {
        scenarios::find(name).unwrap()
    }

    #[test]
    fn a_run_is_judged_by_its_phase_and_the_image_left_in_service() {
        let ok = |e: End| matches!(e, End::AsDesigned(_));
        assert!(ok(verdict(scenario("rolling-update"), "Complete", NEW_IMAGE, 0)));
        let End::Otherwise(why) = verdict(
            scenario("rolling-update"),
            "ProgressDeadlineExceeded",
            NEW_IMAGE,
            0,
        ) else {
            panic!("a stuck rollout is not as designed");
        };
        assert_eq!(
            why,
            "expected deployment/podinfo rolled out on 6.1.0; it ended ProgressDeadlineExceeded on 6.1.0"
        );
        assert!(ok(verdict(scenario("canary"), "Succeeded", NEW_IMAGE, 50)));
        assert!(ok(verdict(scenario("canary-bad"), "Failed", OLD_IMAGE, 10)));
        let End::Otherwise(why) = verdict(scenario("canary-bad"), "Succeeded", NEW_IMAGE, 50) else {
            panic!("a bad version promoted is not as designed");
        };
        assert_eq!(
            why,
            "expected canary/podinfo Failed with the primary on 6.0.0; it ended Succeeded with the primary on 6.1.0"
        );
        assert!(!ok(verdict(scenario("canary"), "Failed", OLD_IMAGE, 10)));
        // Blue/green: promoted is not enough if users reached the canary during its checks.
        assert!(ok(verdict(scenario("blue-green"), "Succeeded", NEW_IMAGE, 0)));
        assert!(!ok(verdict(scenario("blue-green"), "Succeeded", NEW_IMAGE, 10)));
    }
}
