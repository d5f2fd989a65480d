//! A small operator, written with kube-rs, for a custom resource of its own:
//! the `WebApp`. It is the worked example of testing an operator against
//! miniplane; `tests/operator.rs` runs it against an in-process cluster.
//!
//! # What it does
//!
//! A `WebApp` (group `demo.miniplane.dev`, version `v1`) asks for an image run
//! as some number of replicas. For each one the operator
//!
//! 1. keeps a child Deployment of the same name with that image and replica
//!    count, written with server-side apply and owned by the `WebApp` (an
//!    ownerReference with `controller: true`);
//! 2. writes the `WebApp`'s status from the Deployment's: how many replicas
//!    are ready, a `Ready` condition, and the generation it has seen;
//! 3. lists the `WebApp` in a shared ConfigMap, `webapp-registry`, which
//!    stands for state outside the cluster (a DNS zone, a load balancer's
//!    pool, a monitoring system). No single `WebApp` owns that ConfigMap, so
//!    the garbage collector cannot clean it up; a finalizer does.
//!
//! # Where to start reading
//!
//! [`run`] wires up the [`Controller`]; [`reconcile`] is what it calls for
//! every change; [`apply`] and [`cleanup`] are the two halves of the
//! finalizer; [`desired_deployment`] and [`desired_status`] are pure, so
//! their unit tests need no cluster.
//!
//! # How the pieces fit
//!
//! - **The watch.** [`Controller`] lists and watches every `WebApp`, and
//!   every Deployment labelled as ours (`.owns`). An event on a Deployment is
//!   mapped, through its controller ownerReference, to the `WebApp` that owns
//!   it, so a Deployment becoming ready wakes its `WebApp` up.
//! - **Level, not edge.** [`reconcile`] gets only the object, never what
//!   changed. It computes the whole desired state every time and writes it;
//!   writes that change nothing are cheap, and a missed event is harmless.
//! - **The finalizer.** [`finalizer()`] adds `demo.miniplane.dev/cleanup` to
//!   the `WebApp` before the first [`apply`]. When the `WebApp` is deleted
//!   the API server only marks it (`deletionTimestamp`) while the finalizer
//!   is there; the operator runs [`cleanup`] and then removes the finalizer,
//!   and only then is the object gone.
//! - **Errors.** A failed reconcile goes to [`error_policy`], which asks to
//!   be called again after a delay that doubles with every failure in a row
//!   for that object (1 s, 2 s, 4 s ... at most 5 min).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, ContainerPort, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, CustomResource, CustomResourceExt, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The finalizer this operator puts on every `WebApp`.
pub const FINALIZER: &str = "demo.miniplane.dev/cleanup";

/// The field manager of the operator's server-side applies.
pub const FIELD_MANAGER: &str = "webapp-operator";

/// The ConfigMap (one per namespace) standing for external state.
pub const REGISTRY: &str = "webapp-registry";

/// The label that marks a Deployment as one of ours; the controller
/// watches only those.
const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "webapp-operator");

/// What a `WebApp` asks for.
#[allow(
    clippy::duplicated_attributes,
    reason = "clippy takes two printcolumns of one type for a repeated attribute"
)]
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "demo.miniplane.dev",
    version = "v1",
    kind = "WebApp",
    namespaced,
    status = "WebAppStatus",
    shortname = "wa",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas"
    ),
    printcolumn(name = "Image", type_ = "string", json_path = ".spec.image"),
    printcolumn(name = "Desired", type_ = "integer", json_path = ".spec.replicas"),
    printcolumn(name = "Ready", type_ = "integer", json_path = ".status.readyReplicas"),
    printcolumn(name = "Port", type_ = "integer", json_path = ".spec.port", priority = 1),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp"),
    doc = "A web application: an image served by some number of replicas"
)]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    /// The container image to run.
    pub image: String,
    /// How many pods should run it.
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// The port the container listens on, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
}

/// What the operator last saw of a `WebApp`'s Deployment.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebAppStatus {
    /// Pods the Deployment has (the scale subresource's status replicas).
    #[serde(default)]
    pub replicas: i32,
    /// Pods that are Ready.
    #[serde(default)]
    pub ready_replicas: i32,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready`: True when every desired replica is ready.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A call to the API server failed.
    #[error("API call failed: {0}")]
    Kube(#[from] kube::Error),
    /// Adding or removing the finalizer, or the step it wraps, failed.
    #[error("{0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
    /// The object lacks a field the API server always sets.
    #[error("WebApp has no {0}")]
    Incomplete(&'static str),
}

/// Where "now" comes from: the wall clock in `main`, the cluster's clock in
/// tests (so condition times agree with the cluster's).
pub type Now = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// What every reconcile shares.
pub struct Context {
    client: Client,
    now: Now,
    /// Failures in a row per object, for [`error_policy`]'s backoff. A
    /// plain mutex: it is held only to read or bump a counter, never
    /// across an `.await`.
    failures: Mutex<HashMap<ObjectRef<WebApp>, u32>>,
}

/// Runs the operator until `shutdown` completes, then lets the reconciles
/// in flight finish.
pub fn run(
    client: Client,
    now: Now,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> impl Future<Output = ()> {
    let apps = Api::<WebApp>::all(client.clone());
    let deployments = Api::<Deployment>::all(client.clone());
    let ours = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
    let context = Arc::new(Context {
        client,
        now,
        failures: Mutex::default(),
    });
    Controller::new(apps, watcher::Config::default())
        .owns(deployments, watcher::Config::default().labels(&ours))
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|outcome| async move {
            match outcome {
                Ok((app, _action)) => tracing::debug!(%app, "reconciled"),
                Err(error) => tracing::warn!(%error, "reconcile failed"),
            }
        })
}

/// One pass for one `WebApp`: the finalizer decides whether this is an
/// [`apply`] or a [`cleanup`] (and adds or removes itself around them).
pub async fn reconcile(app: Arc<WebApp>, ctx: Arc<Context>) -> Result<Action, Error> {
    let namespace = app.namespace().ok_or(Error::Incomplete("namespace"))?;
    let apps: Api<WebApp> = Api::namespaced(ctx.client.clone(), &namespace);
    let key = ObjectRef::from_obj(&*app);
    let action = finalizer(&apps, FINALIZER, app, |event| async {
        match event {
            Event::Apply(app) => apply(&app, &ctx).await,
            Event::Cleanup(app) => cleanup(&app, &ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))?;
    ctx.failures.lock().expect("lock poisoned").remove(&key);
    Ok(action)
}

/// Called with every failed reconcile: try again later, waiting twice as
/// long after each failure in a row.
pub fn error_policy(app: Arc<WebApp>, error: &Error, ctx: Arc<Context>) -> Action {
    let mut failures = ctx.failures.lock().expect("lock poisoned");
    let count = failures.entry(ObjectRef::from_obj(&*app)).or_insert(0);
    *count = count.saturating_add(1);
    let delay = backoff(*count);
    tracing::warn!(app = %app.name_any(), %error, ?delay, "will retry");
    Action::requeue(delay)
}

/// The delay after `failures` failures in a row: 1 s doubling, at most 5 min.
pub fn backoff(failures: u32) -> Duration {
    let seconds = 1u64 << failures.saturating_sub(1).min(9);
    Duration::from_secs(seconds.min(300))
}

/// The `WebApp` exists: bring its Deployment, its registry entry and its
/// status in line with its spec.
pub async fn apply(app: &WebApp, ctx: &Context) -> Result<Action, Error> {
    let namespace = app.namespace().ok_or(Error::Incomplete("namespace"))?;
    let name = app.name_any();
    let client = ctx.client.clone();

    // 1. The Deployment, by server-side apply: we send the fields we care
    //    about, the server merges them and remembers we own them. `force`
    //    takes a field back if someone else changed it.
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
    let desired = desired_deployment(app)?;
    let apply = PatchParams::apply(FIELD_MANAGER).force();
    let deployment = deployments.patch(&name, &apply, &Patch::Apply(&desired)).await?;

    // 2. The external state: our entry in the registry.
    register(&client, &namespace, &name, &app.spec.image).await?;

    // 3. The status, through the status subresource (a write to the main
    //    resource could not change it). Written only when it differs, as
    //    every write wakes the controller once more.
    let status = desired_status(app, &deployment, (ctx.now)());
    if app.status.as_ref() != Some(&status) {
        let apps: Api<WebApp> = Api::namespaced(client, &namespace);
        let patch = Patch::Merge(json!({ "status": status }));
        apps.patch_status(&name, &PatchParams::default(), &patch).await?;
    }

    // Changes to the WebApp or its Deployment wake us anyway; the requeue
    // is a safety net for anything that drifted without an event.
    Ok(Action::requeue(Duration::from_secs(300)))
}

/// The `WebApp` is being deleted: undo what the garbage collector cannot
/// (the registry entry), and say so with an Event. The Deployment needs
/// nothing: its ownerReference lets the garbage collector delete it.
pub async fn cleanup(app: &WebApp, ctx: &Context) -> Result<Action, Error> {
    let namespace = app.namespace().ok_or(Error::Incomplete("namespace"))?;
    let name = app.name_any();
    let registry: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &namespace);
    // A merge patch with `null` removes the key; a registry that is already
    // gone has nothing left to remove (cleanup must be idempotent).
    let patch = Patch::Merge(json!({ "data": { name.clone(): null } }));
    match registry.patch(REGISTRY, &PatchParams::default(), &patch).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(e) => return Err(e.into()),
    }

    let reporter = Reporter {
        controller: FIELD_MANAGER.into(),
        instance: None,
    };
    let event = KubeEvent {
        type_: EventType::Normal,
        reason: "Deregistered".into(),
        note: Some(format!("removed {name} from the {REGISTRY} ConfigMap")),
        action: "Cleanup".into(),
        secondary: None,
    };
    // An Event is a courtesy: failing to record one must not keep the
    // WebApp from being deleted.
    let recorder = Recorder::new(ctx.client.clone(), reporter);
    if let Err(error) = recorder.publish(&event, &app.object_ref(&())).await {
        tracing::warn!(%error, "could not record the cleanup Event");
    }
    Ok(Action::await_change())
}

/// Adds or updates `name`'s entry in the namespace's registry ConfigMap,
/// creating the ConfigMap the first time.
async fn register(client: &Client, namespace: &str, name: &str, image: &str) -> Result<(), Error> {
    let registry: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let patch = Patch::Merge(json!({ "data": { name: image } }));
    match registry.patch(REGISTRY, &PatchParams::default(), &patch).await {
        Ok(_) => return Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => {}
        Err(e) => return Err(e.into()),
    }
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(REGISTRY.into()),
            ..ObjectMeta::default()
        },
        data: Some([(name.to_string(), image.to_string())].into()),
        ..ConfigMap::default()
    };
    // Two WebApps may race to create it; the loser fails with 409 and its
    // retry takes the patch path above.
    registry.create(&PostParams::default(), &config_map).await?;
    Ok(())
}

/// The Deployment a `WebApp` should have: its image and replicas, our
/// labels, and an ownerReference making the `WebApp` its controller.
pub fn desired_deployment(app: &WebApp) -> Result<Deployment, Error> {
    let name = app.name_any();
    let owner = app.controller_owner_ref(&()).ok_or(Error::Incomplete("uid"))?;
    let selector = [("app.kubernetes.io/name".to_string(), name.clone())];
    let mut labels: std::collections::BTreeMap<_, _> = selector.clone().into();
    labels.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    let ports = app.spec.port.map(|port| {
        vec![ContainerPort {
            container_port: port,
            name: Some("http".into()),
            ..ContainerPort::default()
        }]
    });
    Ok(Deployment {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: app.namespace(),
            labels: Some(labels.clone()),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(app.spec.replicas),
            selector: LabelSelector {
                match_labels: Some(selector.into()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".into(),
                        image: Some(app.spec.image.clone()),
                        ports,
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    })
}

/// The status a `WebApp` should show, given its Deployment as the server
/// returned it. The `Ready` condition keeps its `lastTransitionTime` while
/// its status stays the same; `now` is used only when it flips.
pub fn desired_status(app: &WebApp, deployment: &Deployment, now: Timestamp) -> WebAppStatus {
    let observed = deployment.status.clone().unwrap_or_default();
    let ready = observed.ready_replicas.unwrap_or(0);
    let desired = app.spec.replicas;
    let is_ready = ready == desired;
    let (status, reason) = if is_ready {
        ("True", "AllReplicasReady")
    } else {
        ("False", "ReplicasNotReady")
    };
    let previous = app
        .status
        .iter()
        .flat_map(|s| &s.conditions)
        .find(|c| c.type_ == "Ready");
    let last_transition_time = match previous {
        Some(c) if c.status == status => c.last_transition_time.clone(),
        _ => Time(now),
    };
    WebAppStatus {
        replicas: observed.replicas.unwrap_or(0),
        ready_replicas: ready,
        observed_generation: app.metadata.generation,
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: status.into(),
            reason: reason.into(),
            message: format!("{ready}/{desired} replicas ready"),
            observed_generation: app.metadata.generation,
            last_transition_time,
        }],
    }
}

/// The CustomResourceDefinition, as YAML (what `crd.yaml` holds).
pub fn crd_yaml() -> String {
    // Serializing a CRD built from typed fields cannot fail.
    serde_saphyr::to_string(&WebApp::crd()).expect("a CRD serializes to YAML")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::DeploymentStatus;

    fn webapp(replicas: i32) -> WebApp {
        let mut app = WebApp::new(
            "shop",
            WebAppSpec {
                image: "nginx:1.27".into(),
                replicas,
                port: Some(8080),
            },
        );
        app.metadata.namespace = Some("default".into());
        app.metadata.uid = Some("0b5c1c5e-1d2a-4f7e-9a51-7e0e0f9a0001".into());
        app.metadata.generation = Some(2);
        app
    }

    fn deployment_with(ready: i32) -> Deployment {
        Deployment {
            status: Some(DeploymentStatus {
                replicas: Some(3),
                ready_replicas: Some(ready),
                ..DeploymentStatus::default()
            }),
            ..Deployment::default()
        }
    }

    #[test]
    fn crd_yaml_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/crd.yaml");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == crd_yaml(),
            "{path} is stale: cargo run -p webapp-operator -- crd > examples/webapp-operator/crd.yaml"
        );
    }

    #[test]
    fn the_deployment_is_owned_by_its_webapp_and_runs_its_image() {
        let d = desired_deployment(&webapp(3)).unwrap();
        let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("WebApp", "shop"));
        assert_eq!(owner.controller, Some(true));
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(3));
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.containers[0].image.as_deref(), Some("nginx:1.27"));
        assert_eq!(pod.containers[0].ports.as_ref().unwrap()[0].container_port, 8080);
        let labels = d.metadata.labels.unwrap();
        assert_eq!(labels[MANAGED_BY.0], MANAGED_BY.1);
    }

    #[test]
    fn ready_only_when_every_replica_is() {
        let now = Timestamp::from_second(1_000).unwrap();
        let not_yet = desired_status(&webapp(3), &deployment_with(2), now);
        assert_eq!(not_yet.conditions[0].status, "False");
        assert_eq!(not_yet.conditions[0].message, "2/3 replicas ready");
        let ready = desired_status(&webapp(3), &deployment_with(3), now);
        assert_eq!((ready.ready_replicas, ready.observed_generation), (3, Some(2)));
        assert_eq!(ready.conditions[0].reason, "AllReplicasReady");
    }

    #[test]
    fn the_transition_time_moves_only_when_the_condition_flips() {
        let (t1, t2) = (
            Timestamp::from_second(1_000).unwrap(),
            Timestamp::from_second(2_000).unwrap(),
        );
        let mut app = webapp(3);
        app.status = Some(desired_status(&app, &deployment_with(3), t1));
        let same = desired_status(&app, &deployment_with(3), t2);
        assert_eq!(same.conditions[0].last_transition_time, Time(t1));
        let flipped = desired_status(&app, &deployment_with(1), t2);
        assert_eq!(flipped.conditions[0].last_transition_time, Time(t2));
    }

    #[test]
    fn backoff_doubles_up_to_five_minutes() {
        let delays: Vec<u64> = [1, 2, 3, 9, 10, 50].map(|n| backoff(n).as_secs()).into();
        assert_eq!(delays, [1, 2, 4, 256, 300, 300]);
    }
}
