//! The statuses the kubelet wrote, remembered until its informer catches up
//! (upstream `pkg/kubelet/status/status_manager.go`, its `podStatuses`).
//!
//! The kubelet reads pods from the shared informer, whose copy of a pod can
//! lag behind the kubelet's own last status write. A sync that read such a
//! stale copy would take the step it just took again: a second `Pulling`
//! Event, and a status that goes back in time. So each sync starts from the
//! newer of the two: the cached pod, or the cached pod with the status the
//! kubelet last wrote.
//!
//! Simplified: "newer" compares resourceVersions as numbers, which holds for
//! this API server (one global revision) and is what upstream clients must
//! not assume of others; an entry is dropped as soon as the cache has caught
//! up, so the map only holds pods in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::{Pod, PodStatus};

/// Last written status per pod key (`namespace/name`).
#[derive(Default)]
pub struct WrittenStatuses {
    by_key: Mutex<HashMap<String, Written>>,
}

struct Written {
    uid: Option<String>,
    resource_version: u64,
    status: Option<PodStatus>,
}

impl WrittenStatuses {
    /// Remembers the pod the API server returned for a status write.
    pub fn record(&self, key: &str, written: Pod) {
        let Some(resource_version) = revision(&written) else {
            return;
        };
        let entry = Written {
            uid: written.metadata.uid,
            resource_version,
            status: written.status,
        };
        self.lock().insert(key.to_string(), entry);
    }

    /// The pod to sync: `cached`, or `cached` with the status written since.
    pub fn latest(&self, key: &str, cached: Arc<Pod>) -> Arc<Pod> {
        let mut by_key = self.lock();
        let Some(written) = by_key.get(key) else {
            return cached;
        };
        let same_pod = written.uid == cached.metadata.uid;
        let lagging = revision(&cached).is_some_and(|rv| rv < written.resource_version);
        if !(same_pod && lagging) {
            by_key.remove(key);
            return cached;
        }
        let mut newer = Pod::clone(&cached);
        newer.status = written.status.clone();
        Arc::new(newer)
    }

    /// The pod is gone.
    pub fn forget(&self, key: &str) {
        self.lock().remove(key);
    }

    #[cfg(test)]
    /// How many pods have a status newer than the cache's.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    #[cfg(test)]
    /// Whether the cache has caught up with every write.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Written>> {
        self.by_key.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn revision(pod: &Pod) -> Option<u64> {
    pod.metadata.resource_version.as_deref()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(uid: &str, rv: u64, phase: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("p".into()),
                uid: Some(uid.into()),
                resource_version: Some(rv.to_string()),
                ..Default::default()
            },
            status: Some(PodStatus {
                phase: Some(phase.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn phase(p: &Pod) -> &str {
        p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
    }

    // Regression: the kubelet planned from its informer's copy, which can lag its own writes, and
    // replayed lifecycle steps (Pulling, Created, Started) it had already written. The statuses it
    // wrote are kept here until the cache shows them; kubelet-sim/tests/regressions.rs has the
    // end-to-end case.
    #[test]
    fn a_lagging_cache_gets_the_written_status() {
        let statuses = WrittenStatuses::default();
        statuses.record("ns/p", pod("u1", 7, "Running"));
        let synced = statuses.latest("ns/p", Arc::new(pod("u1", 5, "Pending")));
        assert_eq!(phase(&synced), "Running");
        assert_eq!(synced.metadata.resource_version.as_deref(), Some("5"));
        assert_eq!(statuses.len(), 1);
    }

    #[test]
    fn a_cache_that_caught_up_wins_and_the_entry_goes() {
        let statuses = WrittenStatuses::default();
        statuses.record("ns/p", pod("u1", 7, "Running"));
        let synced = statuses.latest("ns/p", Arc::new(pod("u1", 9, "Succeeded")));
        assert_eq!(phase(&synced), "Succeeded");
        assert!(statuses.is_empty());
    }

    #[test]
    fn a_new_pod_of_the_same_name_is_not_given_the_old_status() {
        let statuses = WrittenStatuses::default();
        statuses.record("ns/p", pod("u1", 7, "Running"));
        let synced = statuses.latest("ns/p", Arc::new(pod("u2", 3, "Pending")));
        assert_eq!(phase(&synced), "Pending");
        assert!(statuses.is_empty());
    }

    #[test]
    fn forgetting_a_pod_drops_its_status() {
        let statuses = WrittenStatuses::default();
        statuses.record("ns/p", pod("u1", 7, "Running"));
        statuses.forget("ns/p");
        assert_eq!(
            phase(&statuses.latest("ns/p", Arc::new(pod("u1", 5, "Pending")))),
            "Pending"
        );
    }
}
