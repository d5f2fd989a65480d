//! miniplane: a Kubernetes control plane in one process.
//!
//! This crate assembles the parts into a running server ([`Server`]); the
//! binary (`src/main.rs`) is only its command line. Tests start a whole
//! cluster in their own process with [`Cluster::builder`] (`src/harness.rs`:
//! a ready `kube::Client`, in-process or served), or the same [`Server`]
//! that `miniplane up` runs:
//!
//! ```no_run
//! # async fn demo() -> Result<(), miniplane::UpError> {
//! let server = miniplane::Server::start(miniplane::Config::ephemeral()).await?;
//! println!("export KUBECONFIG={}", server.kubeconfig().display());
//! server.stop().await?;
//! # Ok(()) }
//! ```

mod builtin_crds;
pub mod cluster;
pub mod explain;
mod harness;
mod kubeconfig;
pub mod lock;
pub mod pki;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use apiserver::auth::serviceaccount::{KeyError, ServiceAccountTokens};
use apiserver::http::AppState;
use apiserver::http::auth::Authenticator;
use apiserver::{Api, Registry};
use controllers::runtime::{Client, InProcessClient};
use store::{Clock, Durability, Store};
use tokio_util::sync::{CancellationToken, DropGuard};

pub use harness::{Cluster, ClusterBuilder, HarnessError};

/// Where miniplane serves HTTPS by default: kube-apiserver's secure port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:6443";

/// Where `--insecure-http` serves by default: upstream's old insecure port
/// (plain HTTP, no authentication).
pub const DEFAULT_INSECURE_LISTEN: &str = "127.0.0.1:8080";

/// How long shutdown may take before open connections are dropped.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1500);

/// What to start.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to bind; port 0 picks a free port. The kubeconfig names it.
    pub listen: SocketAddr,
    /// More addresses to serve the same API on (their IPs join the serving
    /// certificate's SANs).
    pub also_listen: Vec<SocketAddr>,
    /// Plain HTTP without authentication, as upstream's old insecure port;
    /// only on loopback addresses. Otherwise HTTPS with the cluster's
    /// certificates and credentials (made on first start, see [`pki`]).
    pub insecure_http: bool,
    /// Where the store lives; `None` = a temporary store, gone on exit.
    pub data_dir: Option<PathBuf>,
    /// No data dir at all (`--in-memory`): the store in memory (see
    /// `Store` with no path: sled's temporary database, on Linux in
    /// `/dev/shm`), certificates made in memory ([`pki::generate`]), no lock
    /// file; the kubeconfig only where [`Config::kubeconfig`] says. Refused
    /// with a `data_dir`.
    pub in_memory: bool,
    /// Where to write the kubeconfig; default `<data-dir>/kubeconfig`
    /// (in memory: nowhere).
    pub kubeconfig: Option<PathBuf>,
    /// Durability of acknowledged writes.
    pub durability: Durability,
    /// The one clock.
    pub clock: Clock,
    /// The simulated nodes and controllers; `None` serves the API alone.
    pub sim: Option<cluster::SimConfig>,
    /// Seeds every random choice of the run: uids, `generateName` suffixes
    /// and cluster IPs in the API server, image pull times in the kubelet.
    /// On a fresh data dir, the same seed and the same requests replay a run.
    pub seed: u64,
    /// Watch history kept for resuming watches, in events (older
    /// resourceVersions get 410 Expired).
    pub history_max_events: usize,
    /// How long an Event lives after its last write (simulated time;
    /// kube-apiserver's `--event-ttl`).
    pub event_ttl: std::time::Duration,
    /// The HTTP server's timeouts (wall clock, whatever `clock` runs at)
    /// and in-flight caps; kube-apiserver's values by default.
    pub limits: apiserver::http::Limits,
    /// How requests are authorized (`--authorization`): always-allow by
    /// default, or RBAC for everyone outside system:masters.
    pub authorization: apiserver::auth::authorizer::AuthorizationMode,
}

impl Config {
    /// A throwaway server on a free loopback port (for tests and examples),
    /// seeded with 0 so that every run draws the same random values.
    pub fn ephemeral() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            also_listen: Vec::new(),
            insecure_http: false,
            data_dir: None,
            in_memory: false,
            kubeconfig: None,
            durability: Durability::Flush,
            clock: Clock::system(),
            history_max_events: store::Config::default().history_max_events,
            event_ttl: apiserver::event_ttl::DEFAULT_TTL,
            limits: apiserver::http::Limits::default(),
            sim: Some(cluster::SimConfig::default()),
            seed: 0,
            authorization: Default::default(),
        }
    }
}

/// Why the server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum UpError {
    /// A non-loopback address was asked for with plain HTTP.
    #[error(
        "refusing to serve plain HTTP on {0}: without TLS there is no authentication, so --insecure-http binds only loopback addresses (127.0.0.0/8 or ::1)"
    )]
    NotLoopback(SocketAddr),
    /// The certificates could not be made or read.
    #[error(transparent)]
    Pki(#[from] pki::PkiError),
    /// The certificates could not be used.
    #[error(transparent)]
    Tls(#[from] apiserver::http::tls::TlsError),
    /// The service-account signing key could not be used.
    #[error("the service-account key: {0}")]
    ServiceAccountKey(#[from] KeyError),
    /// Binding or file I/O failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Another miniplane uses the data dir.
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    /// The store failed to open or close.
    #[error("store: {0}")]
    Store(#[from] store::Error),
    /// `in_memory` was asked for together with a data dir.
    #[error("--in-memory keeps no files, so it takes no --data-dir ({})", .0.display())]
    InMemoryWithDataDir(PathBuf),
    /// Creating the initial namespaces or the `kubernetes` Service failed.
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] apiserver::ApiError),
}

/// The address a local client dials for a bound one: a wildcard bind
/// (`0.0.0.0`, `::`) is reached on loopback.
fn reachable(bound: SocketAddr) -> SocketAddr {
    match bound.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => SocketAddr::from(([127, 0, 0, 1], bound.port())),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, bound.port()))
        }
        _ => bound,
    }
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> UpError {
    let context = context.into();
    move |source| UpError::Io { context, source }
}

/// Starts the API's own background loops (besides the components): the
/// CustomResourceDefinitions' lifecycle, the APIServices kept in step with
/// the registry, and Events expiring after `event_ttl`; each stops when
/// `shutdown` is cancelled.
pub(crate) async fn start_api_tasks(
    api: &Api,
    clock: &Clock,
    event_ttl: Duration,
    shutdown: &CancellationToken,
) -> Result<Vec<tokio::task::JoinHandle<()>>, apiserver::ApiError> {
    let mut tasks = Vec::new();
    // The CRDs of the store served again (a restart), then kept in step:
    // names, conditions, registry rows, deletion.
    api.restore_custom_resources()?;
    tasks.push(tokio::spawn(api.clone().keep_custom_resources(shutdown.clone())));
    // Gateway API and Canary, served before the components that read them start.
    builtin_crds::install(api).await?;
    // One APIService per served group-version, kept in step with the registry.
    api.sync_api_services().await?;
    tasks.push(tokio::spawn(api.clone().keep_api_services(shutdown.clone())));
    for prefix in apiserver::event_ttl::event_prefixes(api.registry()) {
        let (store, clock, shutdown) = (api.store().clone(), clock.clone(), shutdown.clone());
        tasks.push(tokio::spawn(async move {
            apiserver::event_ttl::run(store, clock, prefix, event_ttl, shutdown).await
        }));
    }
    Ok(tasks)
}

/// A running miniplane.
pub struct Server {
    addr: SocketAddr,
    /// The certificates and credentials; `None` with `--insecure-http`.
    pki: Option<pki::Pki>,
    api: Api,
    /// Where the kubeconfig was written; `None` in memory without a path.
    kubeconfig: Option<PathBuf>,
    /// Cancelled by [`Server::stop`]: stops accepting and ends every stream.
    pub(crate) shutdown: CancellationToken,
    /// Cancels `shutdown` when the server is dropped without [`Server::stop`]
    /// (the tasks then end on their own, unwaited).
    _cancel_on_drop: DropGuard,
    /// One HTTP server task per listen address; joined by [`Server::stop`].
    http: Vec<tokio::task::JoinHandle<std::io::Result<()>>>,
    /// Informers, controllers, scheduler and kubelet; joined by [`Server::stop`].
    components: Vec<tokio::task::JoinHandle<()>>,
    /// This server's hold on its data dir; released when it is dropped
    /// (`None` in memory).
    _lock: Option<lock::DataDirLock>,
    /// Keeps a temporary data dir alive as long as the server.
    _temp: Option<tempfile::TempDir>,
}

impl Server {
    /// Opens the store, creates the initial namespaces, binds, points the
    /// `default/kubernetes` Service at the bound address, serves, and writes
    /// the kubeconfig once the server answers.
    pub async fn start(config: Config) -> Result<Server, UpError> {
        Server::start_with_clients(config, None).await
    }

    /// [`Server::start`], each component's client made by `clients` (the
    /// test harness's `.clients()`).
    pub(crate) async fn start_with_clients(
        config: Config,
        clients: Option<harness::ClientFactory>,
    ) -> Result<Server, UpError> {
        let listen: Vec<SocketAddr> = std::iter::once(config.listen)
            .chain(config.also_listen.iter().copied())
            .collect();
        if config.insecure_http
            && let Some(addr) = listen.iter().find(|a| !a.ip().is_loopback())
        {
            return Err(UpError::NotLoopback(*addr));
        }
        let (data_dir, temp) = match (&config.data_dir, config.in_memory) {
            (Some(d), true) => return Err(UpError::InMemoryWithDataDir(d.clone())),
            (Some(d), false) => (Some(d.clone()), None),
            (None, true) => (None, None),
            (None, false) => {
                let t = tempfile::tempdir().map_err(io("creating a temporary data dir"))?;
                (Some(t.path().to_path_buf()), Some(t))
            }
        };
        let lock = match &data_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
                Some(lock::DataDirLock::acquire(dir)?)
            }
            None => None,
        };
        // The API's tables and the built-in CRDs' manifests, built beside
        // the certificates and the store rather than by the first writes.
        std::thread::spawn(|| {
            apiserver::prepare_tables();
            builtin_crds::prepare();
        });
        let ips: Vec<_> = listen.iter().map(SocketAddr::ip).collect();
        let pki = match (config.insecure_http, &data_dir) {
            (true, _) => None,
            (false, Some(dir)) => Some(pki::load_or_create(&dir.join("pki"), &ips)?),
            (false, None) => Some(pki::generate(&ips)?),
        };
        let store = Store::open(store::Config {
            path: data_dir.as_ref().map(|d| d.join("store")),
            durability: config.durability,
            clock: config.clock.clone(),
            history_max_events: config.history_max_events,
            // The window is meant in real time: at --time-scale 1000 ten
            // simulated minutes would last 0.6 s and every informer a little
            // behind would have to relist.
            history_max_age: store::Config::default()
                .history_max_age
                .mul_f64(config.clock.scale().max(1.0)),
            ..store::Config::default()
        })?;
        tracing::info!(seed = config.seed, "seeding the simulation (replay with --seed)");
        let api = Api::with_seed(store, Registry::new(), config.clock.clone(), config.seed);
        api.bootstrap().await?;
        // The default cluster roles and bindings (auth/bootstrap_policy.rs).
        apiserver::auth::bootstrap_policy::ensure(&api).await?;
        let authorizer = apiserver::auth::authorizer::Authorizer::new(config.authorization, &api);
        let shutdown = CancellationToken::new();
        let cancel_on_drop = shutdown.clone().drop_guard();
        let mut http = Vec::new();
        let mut addr = None;
        // One state for every listener, so that they share the in-flight caps.
        let mut shared_state = None;
        for wanted in &listen {
            let listener = tokio::net::TcpListener::bind(wanted)
                .await
                .map_err(io(format!("binding {wanted}")))?;
            let bound = reachable(listener.local_addr().map_err(io("reading the bound address"))?);
            let first = *addr.get_or_insert(bound);
            let state = shared_state
                .get_or_insert_with(|| {
                    AppState::new(api.clone(), first.to_string(), shutdown.clone())
                        .with_limits(config.limits.clone())
                        .with_authorizer(authorizer.clone())
                        .with_sim_metrics(config.sim.as_ref().map(|s| s.metrics.clone()).unwrap_or_default())
                })
                .clone();
            http.push(match &pki {
                None => tokio::spawn(apiserver::http::serve(listener, state)),
                Some(pki) => {
                    let tls = apiserver::http::tls::server_config(&pki.tls_files())?;
                    let keys = ServiceAccountTokens::from_pem(
                        &pki.service_account_key,
                        &pki.service_account_public_key,
                    )?;
                    let authenticator =
                        Authenticator::new(vec![pki.token.clone()]).with_service_accounts(keys);
                    let state = state.with_authenticator(authenticator);
                    tokio::spawn(apiserver::http::tls::serve_tls(listener, state, tls))
                }
            });
        }
        // `listen` has at least `config.listen`, so one address was bound.
        let addr = addr.expect("the first listen address is bound");
        // The port is known only now; the Service and its endpoints follow it.
        api.reconcile_kubernetes_service(addr).await?;
        let api_tasks = start_api_tasks(&api, &config.clock, config.event_ttl, &shutdown).await?;
        let mut components = match &config.sim {
            Some(sim) => {
                // The root-CA publisher puts the cluster CA in every
                // namespace; the CSR signer signs with its key (HTTPS only).
                let sim = cluster::SimConfig {
                    root_ca: pki.as_ref().map(|p| p.ca_cert.clone()),
                    ca_key: pki.as_ref().map(|p| p.ca_key.clone()),
                    ..sim.clone()
                };
                let default = |component: &str| -> Arc<dyn Client> {
                    Arc::new(InProcessClient::new(api.clone(), component))
                };
                let make = |component: &str| match &clients {
                    Some(make) => make(&api, component),
                    None => default(component),
                };
                cluster::start_components(&api, &config.clock, &sim, config.seed, &shutdown, &make)
            }
            None => Vec::new(),
        };
        components.push(tokio::spawn(
            api.clone().keep_kubernetes_service(addr, shutdown.clone()),
        ));
        components.extend(api_tasks);
        let kubeconfig = match (&config.kubeconfig, &data_dir) {
            (Some(path), _) => Some(path.clone()),
            (None, Some(dir)) => Some(dir.join("kubeconfig")),
            (None, None) => None,
        };
        kubeconfig::wait_until_ready(addr, pki.as_ref())
            .await
            .map_err(io("waiting for /readyz"))?;
        if let Some(path) = &kubeconfig {
            kubeconfig::write(path, addr, pki.as_ref()).map_err(io(format!("writing {}", path.display())))?;
        }
        Ok(Server {
            addr,
            pki,
            api,
            kubeconfig,
            shutdown,
            _cancel_on_drop: cancel_on_drop,
            http,
            components,
            _lock: lock,
            _temp: temp,
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://<addr>` (`http://` with `--insecure-http`).
    pub fn url(&self) -> String {
        match self.pki {
            Some(_) => format!("https://{}", self.addr),
            None => format!("http://{}", self.addr),
        }
    }

    /// The certificates and credentials the kubeconfig carries (`None`
    /// with `--insecure-http`).
    pub fn pki(&self) -> Option<&pki::Pki> {
        self.pki.as_ref()
    }

    /// The kubeconfig written for this server; an empty path when none was
    /// (in memory without [`Config::kubeconfig`]: see [`Server::kubeconfig_yaml`]).
    pub fn kubeconfig(&self) -> &Path {
        self.kubeconfig.as_deref().unwrap_or(Path::new(""))
    }

    /// The kubeconfig's text (the one written, or that would be).
    pub fn kubeconfig_yaml(&self) -> String {
        kubeconfig::render(self.addr, self.pki.as_ref())
    }

    /// The in-process API.
    pub fn api(&self) -> &Api {
        &self.api
    }

    /// Stops accepting, ends watches, waits (bounded) for in-flight requests
    /// and components, and flushes the store.
    pub async fn stop(self) -> Result<(), UpError> {
        self.shutdown.cancel();
        let (mut http, mut components) = (self.http, self.components);
        let all = async {
            for server in &mut http {
                let _ = server.await;
            }
            for component in &mut components {
                let _ = component.await;
            }
        };
        if tokio::time::timeout(SHUTDOWN_GRACE, all).await.is_err() {
            // Aborted, not detached: a task left running would keep the store
            // (and its files) open after `stop` returned, and a restart on the
            // same data dir would find them locked.
            tracing::warn!("some connections or components did not stop in time; aborting them");
            // (A handle already awaited to completion must not be polled again.)
            for server in http.into_iter().filter(|t| !t.is_finished()) {
                server.abort();
                let _ = server.await;
            }
            for component in components.into_iter().filter(|t| !t.is_finished()) {
                component.abort();
                let _ = component.await;
            }
        }
        self.api.store().close().await?;
        Ok(())
    }
}
