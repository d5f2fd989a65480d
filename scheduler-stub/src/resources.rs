//! What a pod asks for and what a node offers, in scheduler units.
//!
//! Mirrors `PodRequests` in upstream
//! staging/src/k8s.io/component-helpers/resource/helpers.go as the scheduler
//! calls it (pkg/scheduler/framework/plugins/noderesources/fit.go
//! `computePodResourceRequest`, and `NodeInfo.update` in
//! pkg/scheduler/framework/types.go):
//!
//! * regular containers are summed;
//! * init containers run one at a time, so the pod needs the larger of that
//!   sum and each init container's request; restartable init containers
//!   (sidecars, `restartPolicy: Always`) keep running, so they add to the
//!   sum and to every later init container's peak;
//! * `spec.overhead` is added on top.
//!
//! A container that sets a limit but no request is charged its limit, which
//! is what the API server's defaulting would have written into the request.
//! Pod-level `spec.resources` (alpha and off by default in 1.33) and extended
//! resources are not read.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use crate::quantity;

/// CPU charged for a container without a CPU request when scoring (upstream
/// `DefaultMilliCPURequest`, pkg/scheduler/util/pod_resources.go).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// Memory charged for a container without a memory request when scoring
/// (upstream `DefaultMemoryRequest`: 200 MiB).
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// The resources the scheduler accounts for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    /// CPU in millicores.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Local ephemeral storage in bytes.
    pub ephemeral_storage: i64,
}

impl Resources {
    fn add(&mut self, other: Resources) {
        self.milli_cpu = self.milli_cpu.saturating_add(other.milli_cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.saturating_add(other.ephemeral_storage);
    }

    fn max(&mut self, other: Resources) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
    }

    /// True when nothing is requested.
    pub fn is_zero(&self) -> bool {
        *self == Resources::default()
    }

    fn from_list(list: &BTreeMap<String, Quantity>) -> Resources {
        let get = |name: &str, read: fn(&Quantity) -> Option<i64>| list.get(name).and_then(read).unwrap_or(0);
        Resources {
            milli_cpu: get("cpu", quantity::milli_value),
            memory: get("memory", quantity::value),
            ephemeral_storage: get("ephemeral-storage", quantity::value),
        }
    }
}

/// A node's allocatable resources and pod capacity (`status.allocatable`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allocatable {
    /// Allocatable cpu, memory and ephemeral storage.
    pub resources: Resources,
    /// How many pods the node accepts (`allocatable.pods`).
    pub pods: i64,
}

/// Reads `status.allocatable`; absent entries count as zero, as upstream.
pub fn node_allocatable(node: &Node) -> Allocatable {
    let Some(list) = node.status.as_ref().and_then(|s| s.allocatable.as_ref()) else {
        return Allocatable::default();
    };
    Allocatable {
        resources: Resources::from_list(list),
        pods: list.get("pods").and_then(quantity::value).unwrap_or(0),
    }
}

/// The pod's effective request, used by the fit filter and node accounting.
pub fn pod_requests(pod: &Pod) -> Resources {
    requests(pod, false)
}

/// The pod's request with the scoring defaults (100m cpu, 200Mi memory)
/// charged for every container that leaves cpu or memory unset, used by the
/// least-allocated score (upstream `NonZeroRequested`).
pub fn pod_requests_non_zero(pod: &Pod) -> Resources {
    requests(pod, true)
}

fn container_requests(c: &Container, non_zero: bool) -> Resources {
    let res = c.resources.as_ref();
    let requests = res.and_then(|r| r.requests.as_ref());
    let limits = res.and_then(|r| r.limits.as_ref());
    let pick = |name: &str| {
        requests
            .and_then(|m| m.get(name))
            .or_else(|| limits.and_then(|m| m.get(name)))
    };
    let cpu = pick("cpu").and_then(quantity::milli_value);
    let memory = pick("memory").and_then(quantity::value);
    let ephemeral_storage = pick("ephemeral-storage").and_then(quantity::value).unwrap_or(0);
    if non_zero {
        Resources {
            milli_cpu: cpu.unwrap_or(DEFAULT_MILLI_CPU_REQUEST),
            memory: memory.unwrap_or(DEFAULT_MEMORY_REQUEST),
            ephemeral_storage,
        }
    } else {
        Resources {
            milli_cpu: cpu.unwrap_or(0),
            memory: memory.unwrap_or(0),
            ephemeral_storage,
        }
    }
}

fn requests(pod: &Pod, non_zero: bool) -> Resources {
    let Some(spec) = pod.spec.as_ref() else {
        return Resources::default();
    };
    let mut total = Resources::default();
    for c in &spec.containers {
        total.add(container_requests(c, non_zero));
    }
    let mut sidecars = Resources::default();
    let mut init_peak = Resources::default();
    for c in spec.init_containers.iter().flatten() {
        let own = container_requests(c, non_zero);
        let peak = if c.restart_policy.as_deref() == Some("Always") {
            total.add(own);
            sidecars.add(own);
            sidecars
        } else {
            let mut with_sidecars = own;
            with_sidecars.add(sidecars);
            with_sidecars
        };
        init_peak.max(peak);
    }
    total.max(init_peak);
    if let Some(overhead) = spec.overhead.as_ref() {
        total.add(Resources::from_list(overhead));
    }
    total
}

/// True for pods that no longer hold node resources (`Succeeded`/`Failed`).
pub fn is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// The sum of requests of the given pods, skipping terminal ones.
pub fn sum_requests<'a>(pods: impl IntoIterator<Item = &'a Pod>, non_zero: bool) -> Resources {
    let mut total = Resources::default();
    for p in pods.into_iter().filter(|p| !is_terminal(p)) {
        total.add(requests(p, non_zero));
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{container, node, pod};

    #[test]
    fn sums_containers() {
        let p = pod("p")
            .container(container("a", "500m", "1Gi"))
            .container(container("b", "250m", "512Mi"))
            .build();
        assert_eq!(
            pod_requests(&p),
            Resources {
                milli_cpu: 750,
                memory: 3 << 29,
                ephemeral_storage: 0
            }
        );
    }

    #[test]
    fn init_container_max_rule() {
        // Upstream's example: init 2/1G and 2/3G, containers 2/1G + 1/1G -> 3 cpu, 3G.
        let p = pod("p")
            .init_container(container("i1", "2", "1G"))
            .init_container(container("i2", "2", "3G"))
            .container(container("c1", "2", "1G"))
            .container(container("c2", "1", "1G"))
            .build();
        assert_eq!(
            pod_requests(&p),
            Resources {
                milli_cpu: 3000,
                memory: 3_000_000_000,
                ephemeral_storage: 0
            }
        );
    }

    #[test]
    fn sidecars_add_to_steady_state_and_later_init_peaks() {
        let mut sidecar = container("s", "1", "1G");
        sidecar.restart_policy = Some("Always".into());
        let p = pod("p")
            .init_container(sidecar)
            .init_container(container("i", "3", "1G"))
            .container(container("c", "1", "1G"))
            .build();
        // steady state: c + s = 2 cpu, 2G; init peak: i + s = 4 cpu, 2G.
        assert_eq!(
            pod_requests(&p),
            Resources {
                milli_cpu: 4000,
                memory: 2_000_000_000,
                ephemeral_storage: 0
            }
        );
    }

    #[test]
    fn overhead_and_limits_default() {
        let mut c = container("c", "", "");
        c.resources = Some(k8s_openapi::api::core::v1::ResourceRequirements {
            limits: Some([("cpu".to_string(), Quantity("1".into()))].into()),
            ..Default::default()
        });
        let mut p = pod("p").container(c).build();
        if let Some(s) = p.spec.as_mut() {
            s.overhead = Some([("cpu".to_string(), Quantity("250m".into()))].into());
        }
        assert_eq!(pod_requests(&p).milli_cpu, 1250);
    }

    #[test]
    fn non_zero_defaults_only_for_unset() {
        let p = pod("p")
            .container(container("a", "", ""))
            .container(container("b", "1", ""))
            .build();
        assert_eq!(
            pod_requests(&p),
            Resources {
                milli_cpu: 1000,
                memory: 0,
                ephemeral_storage: 0
            }
        );
        let nz = pod_requests_non_zero(&p);
        assert_eq!(nz.milli_cpu, 1100);
        assert_eq!(nz.memory, 2 * DEFAULT_MEMORY_REQUEST);
    }

    #[test]
    fn allocatable_reads_status() {
        let n = node("n").cpu("2").memory("4Gi").pods("110").build();
        let a = node_allocatable(&n);
        assert_eq!(a.resources.milli_cpu, 2000);
        assert_eq!(a.resources.memory, 4 << 30);
        assert_eq!(a.pods, 110);
    }
}
