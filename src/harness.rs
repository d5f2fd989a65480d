//! The test harness: a whole miniplane in the test's own process, one per
//! test, with a ready [`kube::Client`].
//!
//! ```no_run
//! # async fn demo() {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! let cluster = miniplane::Cluster::builder()
//!     .controllers("*,-garbage-collector-controller")
//!     .start()
//!     .await;
//! let config_maps: kube::Api<ConfigMap> = kube::Api::default_namespaced(cluster.client());
//! let list = config_maps.list(&Default::default()).await.unwrap();
//! cluster.stop().await.unwrap();
//! # }
//! ```
//!
//! Two modes:
//! - **in-process** (the default): the client calls the HTTP router as a
//!   tower `Service` — no socket, no TLS — as an authenticated
//!   `system:masters` user (the router, without an authenticator, treats a
//!   request that names no host as a loopback admin, as `--insecure-http`
//!   does). The components run as they do in `miniplane up`: the
//!   controllers, the scheduler, the kubelet, the API's own loops.
//! - **served** ([`ClusterBuilder::serve`]): a [`Server`] on an ephemeral
//!   loopback port with HTTPS, its certificates made in memory, and a
//!   kubeconfig in a temporary directory ([`Cluster::kubeconfig`]) for
//!   kubectl and other languages' clients.
//!
//! Each cluster has its own store, registry, clock, seeded ids, shutdown
//! token and (served) port: clusters in one process share nothing.
//!
//! Simplified: the in-process mode has no address, so `default/kubernetes`
//! has no endpoints there; `.clients()` wraps the components' clients in
//! both modes but the test's own [`kube::Client`] is never wrapped.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use apiserver::api::WriteOptions;
use apiserver::testkit::{Tasks, TestApi};
use apiserver::{Api, ApiError};
use controllers::runtime::{Client, InProcessClient};
use serde_json::Value;
use store::Clock;
use tokio_util::sync::CancellationToken;

use crate::cluster::{ControllerSelection, SimConfig, UnknownControllers};
use crate::{Config, Server, UpError};

/// How long [`ClusterBuilder::start`] waits for each CRD to be Established
/// (tokio time: under paused time this passes in no real time).
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(30);

/// The field manager of the CRDs the harness installs.
const FIELD_MANAGER: &str = "miniplane-harness";

/// Makes a client for a component: `(api, component name)`.
pub(crate) type ClientFactory = Arc<dyn Fn(&Api, &str) -> Arc<dyn Client> + Send + Sync>;

/// Why a cluster could not start.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// `.controllers(..)` named a controller miniplane does not have.
    #[error("controllers: {0}")]
    Controllers(#[from] UnknownControllers),
    /// The served mode's server did not start.
    #[error(transparent)]
    Up(#[from] UpError),
    /// Bootstrapping the API (default RBAC roles, APIServices) failed.
    #[error("bootstrap: {0}")]
    Bootstrap(#[source] ApiError),
    /// The certificates could not be made.
    #[error(transparent)]
    Pki(#[from] crate::pki::PkiError),
    /// The client could not be made from the kubeconfig.
    #[error("the kube client: {0}")]
    Client(String),
    /// A CRD file or folder could not be read.
    #[error("reading CRDs from {}: {source}", path.display())]
    CrdRead {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A CRD file is not YAML, or a document is not an object.
    #[error("{}: {message}", path.display())]
    CrdYaml {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A document in a CRD file is something else.
    #[error(
        "{}: document {index} is {kind:?} ({api_version}), not a CustomResourceDefinition: .crds() installs CRDs only; create other objects with the client once the cluster runs",
        path.display()
    )]
    NotACrd {
        /// The file.
        path: PathBuf,
        /// The document's place in the file, from 1.
        index: usize,
        /// Its kind.
        kind: String,
        /// Its apiVersion.
        api_version: String,
    },
    /// The API refused a CRD (invalid, or CRDs not served).
    #[error("creating CustomResourceDefinition {name:?} from {}: {source}", path.display())]
    CrdCreate {
        /// The CRD's name.
        name: String,
        /// Its file.
        path: PathBuf,
        /// The API's answer.
        #[source]
        source: ApiError,
    },
    /// A CRD was created but did not become Established in time.
    #[error(
        "CustomResourceDefinition {name:?} was not Established after {ESTABLISHED_TIMEOUT:?}; its conditions: {conditions}"
    )]
    NotEstablished {
        /// The CRD's name.
        name: String,
        /// Its last status.conditions, as JSON.
        conditions: String,
    },
}

/// A running miniplane for a test: see the module doc. Stop it with
/// [`Cluster::stop`]; dropping it cancels every component without waiting
/// (the temporary store goes with the last handle to it).
pub struct Cluster {
    api: Api,
    kube: kube::Client,
    client: Arc<dyn Client>,
    running: Running,
}

/// What a [`Cluster`] stops.
enum Running {
    /// The components' tasks (their token is cancelled on drop).
    InProcess(Tasks),
    /// The server (cancelled on drop) and the directory of its kubeconfig.
    Served {
        server: Box<Server>,
        _dir: tempfile::TempDir,
    },
}

/// What [`ClusterBuilder::start`] starts: by default every controller, the
/// scheduler, three nodes, in-process, the system clock and seed 0.
pub struct ClusterBuilder {
    clock: Clock,
    seed: u64,
    history: Option<usize>,
    sim: SimConfig,
    controllers: Option<String>,
    clients: Option<ClientFactory>,
    crds: Vec<PathBuf>,
    serve: bool,
}

impl Cluster {
    /// A builder: every controller, the scheduler, [`SimConfig::default`]
    /// (three nodes), in-process, the system clock, seed 0.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder {
            clock: Clock::system(),
            seed: 0,
            history: None,
            sim: SimConfig::default(),
            controllers: None,
            clients: None,
            crds: Vec::new(),
            serve: false,
        }
    }

    /// A client for the test, authenticated as a `system:masters` admin;
    /// its default namespace is `default`. Cheap to clone.
    pub fn client(&self) -> kube::Client {
        self.kube.clone()
    }

    /// The in-process API (below HTTP).
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// The one clock of the store, the API and every component. It follows
    /// tokio time, so under `#[tokio::test(start_paused = true)]`
    /// `tokio::time::advance` moves it (see the README's harness section).
    pub fn clock(&self) -> &Clock {
        self.api.clock()
    }

    /// An in-process `controllers::runtime::Client` named `test` (not made
    /// by [`ClusterBuilder::clients`]).
    pub fn runtime_client(&self) -> Arc<dyn Client> {
        self.client.clone()
    }

    /// The kubeconfig of a served cluster (HTTPS, the cluster CA, an admin
    /// token and client certificate), for kubectl and other clients.
    ///
    /// # Panics
    /// If the cluster is in-process (started without
    /// [`ClusterBuilder::serve`]): it has no address to name.
    pub fn kubeconfig(&self) -> &Path {
        match &self.running {
            Running::Served { server, .. } => server.kubeconfig(),
            Running::InProcess(_) => {
                panic!("an in-process cluster has no kubeconfig: start it with Cluster::builder().serve()")
            }
        }
    }

    /// `https://127.0.0.1:<port>` of a served cluster; `None` in-process.
    pub fn url(&self) -> Option<String> {
        match &self.running {
            Running::Served { server, .. } => Some(server.url()),
            Running::InProcess(_) => None,
        }
    }

    /// The token every component watches; cancelling it stops them.
    pub fn shutdown(&self) -> CancellationToken {
        match &self.running {
            Running::InProcess(tasks) => tasks.shutdown(),
            Running::Served { server, .. } => server.shutdown.clone(),
        }
    }

    /// Stops every component (and the server) and waits for each; `Err`
    /// says what did not stop cleanly.
    pub async fn stop(self) -> Result<(), String> {
        match self.running {
            Running::InProcess(tasks) => tasks.stop(Duration::from_secs(60)).await,
            Running::Served { server, _dir } => server.stop().await.map_err(|e| e.to_string()),
        }
    }
}

impl ClusterBuilder {
    /// The clock of the store, the API and every component.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// A clock running `scale` simulated seconds per real second
    /// ([`Clock::scaled`]).
    pub fn time_scale(self, scale: f64) -> Self {
        self.clock(Clock::scaled(scale))
    }

    /// Keeps the last `entries` steps in the causal journal
    /// ([`store::journal`]; 0 records nothing). Set after [`ClusterBuilder::clock`]
    /// or [`ClusterBuilder::time_scale`], which bring a journal of the default size.
    pub fn journal_size(mut self, entries: usize) -> Self {
        self.clock = self.clock.with_journal(store::Journal::new(entries));
        self
    }

    /// The seed of the API's uids and names and of the kubelet's choices.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Keep at most `events` events of watch history.
    pub fn history(mut self, events: usize) -> Self {
        self.history = Some(events);
        self
    }

    /// Nodes, their capacity, workers per controller, the controllers and
    /// the scheduler.
    pub fn sim(mut self, sim: SimConfig) -> Self {
        self.sim = sim;
        self
    }

    /// Mechanisms switched off on purpose, as `miniplane up --disable ...
    /// --informer-lag ...` does (see `controllers::runtime::lessons`).
    pub fn lessons(mut self, lessons: controllers::runtime::lessons::Lessons) -> Self {
        self.sim.lessons = lessons;
        self
    }

    /// Simulated nodes; 0 runs no kubelet.
    pub fn nodes(mut self, nodes: usize) -> Self {
        self.sim.nodes = nodes;
        self
    }

    /// Which built-in controllers run, as kube-controller-manager's
    /// `--controllers`: `"*"` (the default), `"*,-deployment-controller"`,
    /// `"replicaset-controller,garbagecollector"`, `""` for none (see
    /// [`crate::cluster::CONTROLLERS`]). An unknown name fails
    /// [`ClusterBuilder::try_start`].
    pub fn controllers(mut self, list: &str) -> Self {
        self.controllers = Some(list.to_string());
        self
    }

    /// Whether the scheduler runs (default: yes).
    pub fn scheduler(mut self, on: bool) -> Self {
        self.sim.scheduler = on;
        self
    }

    /// Each component's client is `make(api, component)` instead of an
    /// `InProcessClient` named after it (the reliability suite wraps one in
    /// a `FaultyClient`).
    pub fn clients(mut self, make: impl Fn(&Api, &str) -> Arc<dyn Client> + Send + Sync + 'static) -> Self {
        self.clients = Some(Arc::new(make));
        self
    }

    /// Installs the CustomResourceDefinitions of a YAML file, or of every
    /// `.yaml` / `.yml` file of a folder (in name order); a file may hold
    /// several documents. Any other kind of document fails the start (create
    /// those with the client). [`ClusterBuilder::start`] returns once every
    /// CRD is Established. May be called more than once.
    pub fn crds(mut self, path: impl Into<PathBuf>) -> Self {
        self.crds.push(path.into());
        self
    }

    /// Serves HTTPS on an ephemeral loopback port and writes a kubeconfig
    /// ([`Cluster::kubeconfig`]); the client then goes over TLS.
    pub fn serve(mut self) -> Self {
        self.serve = true;
        self
    }

    /// [`ClusterBuilder::try_start`], for tests.
    ///
    /// # Panics
    /// If the cluster cannot start; the message says why.
    pub async fn start(self) -> Cluster {
        match self.try_start().await {
            Ok(cluster) => cluster,
            Err(e) => panic!("miniplane::Cluster did not start: {e}"),
        }
    }

    /// Opens a temporary store, bootstraps it, starts the components (and
    /// the server), installs the CRDs and waits until they are Established.
    pub async fn try_start(mut self) -> Result<Cluster, HarnessError> {
        if let Some(list) = &self.controllers {
            self.sim.controllers = ControllerSelection::parse(list)?;
        }
        let crds = read_crds(&self.crds)?;
        let clients = self.clients.clone();
        let cluster = match self.serve {
            true => self.start_served(clients).await?,
            false => self.start_in_process(clients).await?,
        };
        install_crds(&cluster.api, crds).await?;
        Ok(cluster)
    }

    async fn start_in_process(self, clients: Option<ClientFactory>) -> Result<Cluster, HarnessError> {
        let mut api = TestApi::builder().clock(self.clock.clone()).seed(self.seed);
        if let Some(events) = self.history {
            api = api.history(events);
        }
        let api = api.build().await;
        apiserver::auth::bootstrap_policy::ensure(&api)
            .await
            .map_err(HarnessError::Bootstrap)?;
        // A CA of its own, for kube-root-ca.crt and the CSR signer.
        let pki = crate::pki::generate(&[])?;
        let sim = SimConfig {
            root_ca: Some(pki.ca_cert.clone()),
            ca_key: Some(pki.ca_key.clone()),
            ..self.sim
        };
        let mut tasks = Tasks::new();
        let shutdown = tasks.shutdown();
        let make = |component: &str| match &clients {
            Some(make) => make(&api, component),
            None => Arc::new(InProcessClient::new(api.clone(), component)) as Arc<dyn Client>,
        };
        let clock = api.clock().clone();
        let event_ttl = apiserver::event_ttl::DEFAULT_TTL;
        let api_tasks = crate::start_api_tasks(&api, &clock, event_ttl, &shutdown)
            .await
            .map_err(HarnessError::Bootstrap)?;
        tasks.extend(api_tasks);
        tasks.extend(crate::cluster::start_components(
            &api, &clock, &sim, self.seed, &shutdown, &make,
        ));
        let state = apiserver::http::AppState::new(api.clone(), "localhost".into(), shutdown)
            .with_sim_metrics(sim.metrics.clone());
        let kube = kube::Client::new(apiserver::http::router(state), "default");
        Ok(Cluster {
            client: Arc::new(InProcessClient::new(api.clone(), "test")),
            kube,
            api,
            running: Running::InProcess(tasks),
        })
    }

    async fn start_served(self, clients: Option<ClientFactory>) -> Result<Cluster, HarnessError> {
        let dir = tempfile::tempdir().map_err(|source| UpError::Io {
            context: "creating a directory for the kubeconfig".into(),
            source,
        })?;
        let kubeconfig = dir.path().join("kubeconfig");
        let config = Config {
            in_memory: true,
            kubeconfig: Some(kubeconfig.clone()),
            // As TestApi: a flush on sled's thread would let paused tokio
            // time run ahead of a test that waits on it.
            durability: store::Durability::Buffered,
            clock: self.clock,
            seed: self.seed,
            history_max_events: self
                .history
                .unwrap_or(store::Config::default().history_max_events),
            sim: Some(self.sim),
            ..Config::ephemeral()
        };
        let server = Server::start_with_clients(config, clients).await?;
        let kube = client_from_kubeconfig(&kubeconfig).await?;
        let api = server.api().clone();
        Ok(Cluster {
            client: Arc::new(InProcessClient::new(api.clone(), "test")),
            kube,
            api,
            running: Running::Served {
                server: Box::new(server),
                _dir: dir,
            },
        })
    }
}

/// A client from the kubeconfig file at `path`.
async fn client_from_kubeconfig(path: &Path) -> Result<kube::Client, HarnessError> {
    let err = |e: &dyn std::fmt::Display| HarnessError::Client(e.to_string());
    let kubeconfig = kube::config::Kubeconfig::read_from(path).map_err(|e| err(&e))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|e| err(&e))?;
    kube::Client::try_from(config).map_err(|e| err(&e))
}

/// A CRD document and the file it came from.
struct CrdDoc {
    path: PathBuf,
    body: Value,
}

/// Every document of the files `paths` name (a folder: its `.yaml` and
/// `.yml` files in name order), each checked to be a CRD.
fn read_crds(paths: &[PathBuf]) -> Result<Vec<CrdDoc>, HarnessError> {
    let read_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| HarnessError::CrdRead { path, source }
    };
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut in_dir = Vec::new();
            for entry in std::fs::read_dir(path).map_err(read_err(path))? {
                let file = entry.map_err(read_err(path))?.path();
                let yaml = file.extension().is_some_and(|e| e == "yaml" || e == "yml");
                if yaml && file.is_file() {
                    in_dir.push(file);
                }
            }
            in_dir.sort();
            files.extend(in_dir);
        } else {
            files.push(path.clone());
        }
    }
    let mut docs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(read_err(&file))?;
        let parsed: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| HarnessError::CrdYaml {
            path: file.clone(),
            message: e.to_string(),
        })?;
        // Empty documents (a trailing `---`) are skipped, as kubectl does.
        for (index, body) in parsed.into_iter().filter(|d| !d.is_null()).enumerate() {
            let field = |name: &str| body[name].as_str().unwrap_or("").to_string();
            let (kind, api_version) = (field("kind"), field("apiVersion"));
            if !body.is_object() {
                return Err(HarnessError::CrdYaml {
                    path: file.clone(),
                    message: format!("document {} is not a mapping", index + 1),
                });
            }
            if kind != "CustomResourceDefinition" || !api_version.starts_with("apiextensions.k8s.io/") {
                return Err(HarnessError::NotACrd {
                    path: file.clone(),
                    index: index + 1,
                    kind,
                    api_version,
                });
            }
            docs.push(CrdDoc {
                path: file.clone(),
                body,
            });
        }
    }
    Ok(docs)
}

/// Creates every CRD, then waits until each is Established.
async fn install_crds(api: &Api, crds: Vec<CrdDoc>) -> Result<(), HarnessError> {
    if crds.is_empty() {
        return Ok(());
    }
    let opts = WriteOptions {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    };
    let mut names = Vec::new();
    for CrdDoc { path, body } in crds {
        let name = body["metadata"]["name"].as_str().unwrap_or("").to_string();
        let created = async {
            let resource = api.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
            api.create(&resource, None, body, &opts).await
        };
        if let Err(source) = created.await {
            return Err(HarnessError::CrdCreate { name, path, source });
        }
        names.push(name);
    }
    for name in names {
        wait_established(api, &name).await?;
    }
    Ok(())
}

/// Polls the CRD `name` until its Established condition is True.
async fn wait_established(api: &Api, name: &str) -> Result<(), HarnessError> {
    let clock = api.clock().clone();
    let mut last = Value::Null;
    let poll = async {
        loop {
            if let Ok(resource) = api.resource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
                && let Ok(crd) = api.get(&resource, None, name)
            {
                last = crd["status"]["conditions"].clone();
                if established(&crd) {
                    return;
                }
            }
            // 5 ms of real time, whatever the clock's scale.
            clock.sleep(Duration::from_millis(5).mul_f64(clock.scale())).await;
        }
    };
    let waited = tokio::time::timeout(ESTABLISHED_TIMEOUT, poll).await;
    match waited {
        Ok(()) => Ok(()),
        Err(_) => Err(HarnessError::NotEstablished {
            name: name.to_string(),
            conditions: last.to_string(),
        }),
    }
}

/// Whether a CRD's status says Established=True.
pub(crate) fn established(crd: &Value) -> bool {
    crd["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
";

    #[test]
    fn a_folder_of_crds_is_read_in_name_order_and_other_kinds_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "b.yaml", &CRD.replace("widgets", "gadgets"));
        write(
            dir.path(),
            "a.yml",
            &format!("{CRD}---\n{}---\n", CRD.replace("widgets", "things")),
        );
        write(dir.path(), "notes.txt", "not yaml: [");
        let docs = read_crds(&[dir.path().to_path_buf()]).unwrap();
        let names: Vec<&str> = docs
            .iter()
            .map(|d| d.body["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["widgets.example.com", "things.example.com", "gadgets.example.com"]
        );

        let mixed = write(
            dir.path(),
            "mixed.yaml",
            &format!("{CRD}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"),
        );
        let err = read_crds(&[mixed]).err().unwrap().to_string();
        assert!(
            err.contains("document 2 is \"ConfigMap\" (v1), not a CustomResourceDefinition"),
            "{err}"
        );
    }
}
