//! The garbage collector's set of monitors, kept in step with the served
//! resources.
//!
//! Upstream: `graph_builder.go` (`syncMonitors`, `startMonitors`) and
//! `garbagecollector.go` (`Sync`: every 30 s, discovery is asked again and
//! monitors are started for new resources and stopped for gone ones).
//! Here the API server's registry says when a row comes or goes
//! ([`apiserver::Registry::subscribe`]), so a CRD's resources get a
//! monitor as soon as they are served, without polling.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use store::Clock;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::graph_builder::{GraphBuilder, Monitor};
use crate::runtime::client::{Client, ResourceRef};

/// (group, version, plural): one monitor each.
type Key = (String, String, String);

/// The running monitors: each has its own token (a child of the garbage
/// collector's), cancelled when its resource is no longer served.
pub struct Monitors {
    client: Arc<dyn Client>,
    clock: Clock,
    builder: Arc<GraphBuilder>,
    running: BTreeMap<Key, (CancellationToken, JoinHandle<()>)>,
}

impl Monitors {
    /// No monitors yet.
    pub fn new(client: Arc<dyn Client>, clock: Clock, builder: Arc<GraphBuilder>) -> Self {
        Monitors {
            client,
            clock,
            builder,
            running: BTreeMap::new(),
        }
    }

    /// Starts a monitor for each of `resources` without one and stops those
    /// of resources not listed; returns the first-list receivers of the new ones.
    pub fn sync(
        &mut self,
        resources: &[ResourceRef],
        shutdown: &CancellationToken,
    ) -> Vec<watch::Receiver<bool>> {
        let key = |r: &ResourceRef| (r.group.clone(), r.version.clone(), r.plural.clone());
        let wanted: Vec<Key> = resources.iter().map(key).collect();
        let gone: Vec<Key> = self
            .running
            .keys()
            .filter(|k| !wanted.contains(k))
            .cloned()
            .collect();
        for k in gone {
            if let Some((token, _)) = self.running.remove(&k) {
                // The task ends on its own once cancelled; nobody waits for it.
                token.cancel();
            }
        }
        let mut synced = Vec::new();
        for resource in resources {
            if self.running.contains_key(&key(resource)) {
                continue;
            }
            let (monitor, s) = Monitor::new(
                self.client.clone(),
                resource.clone(),
                self.clock.clone(),
                self.builder.clone(),
            );
            let token = shutdown.child_token();
            let handle = tokio::spawn(monitor.run(token.clone()));
            self.running.insert(key(resource), (token, handle));
            synced.push(s);
        }
        synced
    }

    /// Follows the registry until `shutdown`: on every change, the
    /// resources are listed again (`filter` keeps the monitored ones), the
    /// kind mapping in `mapped` is replaced and the monitors synced.
    pub async fn follow(
        &mut self,
        registry: apiserver::Registry,
        filter: impl Fn(&ResourceRef) -> bool,
        mapped: Arc<RwLock<Vec<ResourceRef>>>,
        shutdown: CancellationToken,
    ) {
        let mut changes = registry.subscribe();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
            let resources = super::controller::deletable_resources(&registry);
            // A poisoned lock still holds a whole list (it is only ever replaced).
            *mapped.write().unwrap_or_else(|p| p.into_inner()) = resources.clone();
            let monitored: Vec<ResourceRef> = resources.into_iter().filter(|r| filter(r)).collect();
            self.sync(&monitored, &shutdown);
        }
    }

    /// Waits for every monitor to stop (after the shutdown token).
    pub async fn join(self) {
        for (_, (_, handle)) in self.running {
            if let Err(e) = handle.await {
                tracing::error!(controller = super::controller::NAME, "monitor failed: {e}");
            }
        }
    }
}
