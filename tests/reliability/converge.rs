//! The controllers converge while their writes fail: the whole control
//! plane runs in-process on paused tokio time, every component's client
//! wrapped in a [`FaultyClient`] that fails 10% of writes (500 before the
//! write, 409 Conflict before it, or a 504 Timeout *after* it was applied)
//! and delays half of the others by up to 50 ms.
//!
//! A Deployment of 10 replicas is created, rolled to a new image, then
//! scaled to 15. After each step it must converge within
//! [`BOUND`] of simulated time: status `replicas`, `updatedReplicas` and
//! `availableReplicas` equal to `spec.replicas` at the observed
//! generation, exactly one ReplicaSet with replicas (the one with the
//! wanted image), and exactly `spec.replicas` pods, none terminating.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use apiserver::Api;
use apiserver::api::{ListOptions, PatchType, WriteOptions};
use controllers::runtime::{FaultCounts, Faults, FaultyClient, InProcessClient};
use miniplane::cluster::Cluster;
use serde_json::{Value, json};
use store::Clock;

use crate::harness::{Mode, Report, thousands};

/// How long each step may take to converge, in simulated time.
const BOUND: Duration = Duration::from_secs(600);

/// The fraction of the controllers' writes that fail.
const WRITE_FAILURE: f64 = 0.1;

/// What the cluster looks like, for the failure message.
fn summary(api: &Api) -> String {
    let res = |plural: &str, group: &str| api.resource(group, "v1", plural).expect("served");
    let opts = ListOptions {
        label_selector: Some("app=web".into()),
        ..Default::default()
    };
    let d = api
        .get(&res("deployments", "apps"), Some("default"), "web")
        .unwrap_or(Value::Null);
    let rss = api
        .list(&res("replicasets", "apps"), Some("default"), &opts)
        .map(|l| l.items)
        .unwrap_or_default();
    let pods = api
        .list(&res("pods", ""), Some("default"), &opts)
        .map(|l| l.items)
        .unwrap_or_default();
    let rs: Vec<String> = rss
        .iter()
        .map(|r| {
            format!(
                "{} image={} spec={} status={}",
                r["metadata"]["name"],
                r["spec"]["template"]["spec"]["containers"][0]["image"],
                r["spec"]["replicas"],
                r["status"]["replicas"]
            )
        })
        .collect();
    format!(
        "deployment status {} generation {}; replicasets {rs:?}; {} pods ({} terminating)",
        d["status"],
        d["metadata"]["generation"],
        pods.len(),
        pods.iter()
            .filter(|p| !p["metadata"]["deletionTimestamp"].is_null())
            .count()
    )
}

/// Whether Deployment `web` has converged on `image` with `replicas`.
fn converged(api: &Api, image: &str, replicas: u64) -> bool {
    let res = |plural: &str, group: &str| api.resource(group, "v1", plural).expect("served");
    let Ok(d) = api.get(&res("deployments", "apps"), Some("default"), "web") else {
        return false;
    };
    let status = |k: &str| d["status"][k].as_u64().unwrap_or(0);
    let deployment_done = d["spec"]["replicas"].as_u64() == Some(replicas)
        && d["status"]["observedGeneration"] == d["metadata"]["generation"]
        && status("replicas") == replicas
        && status("updatedReplicas") == replicas
        && status("availableReplicas") == replicas;
    let opts = ListOptions {
        label_selector: Some("app=web".into()),
        ..Default::default()
    };
    let Ok(rss) = api.list(&res("replicasets", "apps"), Some("default"), &opts) else {
        return false;
    };
    let scaled: Vec<&Value> = rss
        .items
        .iter()
        .filter(|rs| rs["spec"]["replicas"].as_u64().unwrap_or(0) > 0)
        .collect();
    let one_rs = scaled.len() == 1
        && scaled[0]["spec"]["template"]["spec"]["containers"][0]["image"] == image
        && scaled[0]["spec"]["replicas"].as_u64() == Some(replicas);
    let Ok(pods) = api.list(&res("pods", ""), Some("default"), &opts) else {
        return false;
    };
    let pods_done = pods.items.len() as u64 == replicas
        && pods.items.iter().all(|p| {
            p["metadata"]["deletionTimestamp"].is_null() && p["spec"]["containers"][0]["image"] == image
        });
    deployment_done && one_rs && pods_done
}

/// Waits until converged, at most [`BOUND`]; the simulated time it took.
async fn wait_converged(api: &Api, clock: &Clock, image: &str, replicas: u64) -> Option<Duration> {
    let started = clock.now();
    loop {
        if converged(api, image, replicas) {
            return Some(clock.now().duration_since(started).unwrap_or_default());
        }
        if clock.now().duration_since(started).unwrap_or_default() > BOUND {
            return None;
        }
        clock.sleep(Duration::from_millis(500)).await;
    }
}

/// Merge-patches Deployment `default/web`.
async fn patch_web(api: &Api, patch: &Value, opts: &WriteOptions) -> Result<(), String> {
    let deployments = api.resource("apps", "v1", "deployments").expect("served");
    api.patch(
        &deployments,
        Some("default"),
        "web",
        PatchType::Merge,
        patch,
        None,
        opts,
    )
    .await
    .map(drop)
    .map_err(|e| e.to_string())
}

/// One run: create, roll, scale; each step's simulated time (None: did not converge).
async fn once(seed: u64, counts: Arc<FaultCounts>) -> Result<Vec<(String, Duration)>, String> {
    let cluster = Cluster::builder()
        .seed(seed)
        .clients(move |api, component| {
            let faults = Faults {
                seed: crate::harness::mix(seed, component),
                write_failure: WRITE_FAILURE,
                max_delay: Duration::from_millis(50),
            };
            let inner = InProcessClient::new(api.clone(), component);
            Arc::new(FaultyClient::new(inner, api.clock().clone(), faults).with_counts(counts.clone()))
        })
        .start()
        .await;
    let (api, clock) = (cluster.api(), cluster.clock());

    let opts = WriteOptions {
        field_manager: Some("reliability".into()),
        ..Default::default()
    };
    let deployments = api.resource("apps", "v1", "deployments").expect("served");
    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 10, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}}
    });
    let mut steps = Vec::new();
    let result = async {
        api.create(&deployments, Some("default"), body, &opts)
            .await
            .map_err(|e| e.to_string())?;
        let step = |name: &str, took: Option<Duration>| match took {
            Some(t) => Ok((name.to_string(), t)),
            None => Err(format!(
                "seed {seed}: {name} did not converge within {BOUND:?} simulated: {}",
                summary(api)
            )),
        };
        steps.push(step(
            "create 10",
            wait_converged(api, clock, "nginx:1", 10).await,
        )?);
        let image =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}});
        patch_web(api, &image, &opts).await?;
        steps.push(step(
            "rolling update",
            wait_converged(api, clock, "nginx:2", 10).await,
        )?);
        patch_web(api, &json!({"spec": {"replicas": 15}}), &opts).await?;
        steps.push(step(
            "scale to 15",
            wait_converged(api, clock, "nginx:2", 15).await,
        )?);
        Ok::<(), String>(())
    }
    .await;
    // As before the kit: a component that panicked or hung does not fail the run.
    let _ = cluster.stop().await;
    result.map(|()| steps)
}

/// Runs one seed (short form) or five (full form).
pub async fn run(mode: Mode) -> Report {
    let mut report = Report::new("converge");
    let runs: u64 = mode.pick(1, 5);
    let counts = Arc::new(FaultCounts::default());
    let mut converged = 0;
    let mut failures = Vec::new();
    let mut slowest: Vec<(String, Duration)> = Vec::new();
    let mut total = Duration::ZERO;
    for i in 0..runs {
        let seed = mode.seed_for(&format!("converge-{i}"));
        match once(seed, counts.clone()).await {
            Ok(steps) => {
                converged += 1;
                for (name, took) in steps {
                    total += took;
                    match slowest.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, t)) => *t = (*t).max(took),
                        None => slowest.push((name, took)),
                    }
                }
            }
            Err(e) => failures.push(e),
        }
    }
    let per_step: Vec<String> = slowest
        .iter()
        .map(|(n, t)| format!("{n} {:.0} s", t.as_secs_f64()))
        .collect();
    let c = &counts;
    let writes = c.writes.load(Ordering::Relaxed);
    let failed = c.failed();
    report.check(
        "injected write failures",
        format!(
            "{} of {} writes = {:.1}% ({} 500, {} 409, {} 504 after applying; {} delayed)",
            thousands(failed),
            thousands(writes),
            100.0 * failed as f64 / writes.max(1) as f64,
            c.internal_errors.load(Ordering::Relaxed),
            c.conflicts.load(Ordering::Relaxed),
            c.timeouts_after_apply.load(Ordering::Relaxed),
            thousands(c.delayed.load(Ordering::Relaxed)),
        ),
        failed > 0 && c.timeouts_after_apply.load(Ordering::Relaxed) > 0,
        || "no fault was injected".into(),
    );
    report.check(
        "controllers converged",
        format!(
            "{converged}/{runs} runs (create 10, roll, scale to 15; slowest step: {}; {:.0} s simulated in all; bound {} s a step)",
            per_step.join(", "),
            total.as_secs_f64(),
            BOUND.as_secs()
        ),
        converged == runs,
        || failures.join("; "),
    );
    report
}
