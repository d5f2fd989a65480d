//! The Node a simulated kubelet registers, its status heartbeat, and its Lease.
//!
//! Upstream, a kubelet creates its Node on start-up (`registerWithAPIServer`),
//! then keeps two signals fresh: the Lease `kube-node-lease/<node>` renewed
//! every 10 s (a quarter of `leaseDurationSeconds: 40`), and the Node's
//! conditions, whose `lastHeartbeatTime` is refreshed when something changes or
//! at least every `nodeStatusReportFrequency` (5 min). The node lifecycle
//! controller marks a node NotReady when both go stale.
//!
//! Simplifications: allocatable equals capacity (no system/kube reserved, no
//! eviction threshold); the node is always healthy, so the pressure conditions
//! never flip; no images list, volumes or runtime handlers are reported. The
//! node's "index" (used for its InternalIP and pod CIDR) is the number at the
//! end of its name (`miniplane-worker-2` → 2), 0 when there is none.
//!
//! Node annotations the simulated kubelet reads (the Node's own, set with
//! `kubectl annotate node`):
//!
//! | annotation | value | what the node's kubelet does |
//! |---|---|---|
//! | [`HEARTBEAT`] `sim.miniplane.dev/heartbeat` | `stopped` | acts as a kubelet that died: no status heartbeat, no Lease renewal, nothing done for its pods (no status writes, terminating pods are not removed) |
//! | | absent, or any other value | runs: posts a Ready status (with `NodeReady` and the pressure Events of the conditions that changed back), renews the Lease, syncs its pods again (terminating ones are finalized and removed) |
//! | [`SIMULATED`] `sim.miniplane.dev/node` | `simulated` | a Node a user created is adopted: the simulated kubelet registers it (its labels, a full status, keeping `status.capacity` if given), heartbeats it, renews its Lease and runs the pods bound to it, until the Node is deleted |
//!
//! After the node lifecycle controller's grace period a stopped node is
//! `NotReady` (conditions `Unknown`), tainted `node.kubernetes.io/unreachable`,
//! and its pods are evicted once their toleration of that taint runs out.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{
    DaemonEndpoint, Node, NodeAddress, NodeCondition, NodeDaemonEndpoints, NodeSpec, NodeStatus,
    NodeSystemInfo,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference, Time};

use crate::lifecycle::{EventType, SimEvent};
use crate::{stable_hex128, stable_uuid};

/// The kubelet version every simulated node reports.
pub const KUBELET_VERSION: &str = "v1.33.0";
/// The container runtime every simulated node reports (`CONTAINER-RUNTIME`).
pub const CONTAINER_RUNTIME_VERSION: &str = "miniplane://0.1";
/// Namespace holding node heartbeat Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// `leaseDurationSeconds` of a node Lease (kubelet's `nodeLeaseDurationSeconds`).
pub const NODE_LEASE_DURATION_SECONDS: i32 = 40;

/// Node annotation that stops (value [`HEARTBEAT_STOPPED`]) or resumes (absent, or any other
/// value) the node's simulated kubelet; see the module's table.
pub const HEARTBEAT: &str = "sim.miniplane.dev/heartbeat";
/// The [`HEARTBEAT`] value that stops the node's kubelet.
pub const HEARTBEAT_STOPPED: &str = "stopped";

/// Whether the node's [`HEARTBEAT`] annotation stops its kubelet.
pub fn heartbeat_stopped(node: &Node) -> bool {
    node.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(HEARTBEAT))
        .is_some_and(|v| v == HEARTBEAT_STOPPED)
}

/// Node annotation that, with value [`SIMULATED_VALUE`], has the simulated kubelet adopt a Node a
/// user created; see the module's table.
pub const SIMULATED: &str = "sim.miniplane.dev/node";
/// The [`SIMULATED`] value that adopts the Node.
pub const SIMULATED_VALUE: &str = "simulated";

/// Whether the Node asks to be adopted by the simulated kubelet ([`SIMULATED`]).
pub fn adoptable(node: &Node) -> bool {
    node.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SIMULATED))
        .is_some_and(|v| v == SIMULATED_VALUE)
}

/// What a simulated node offers to the scheduler, as Kubernetes quantities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capacity {
    /// CPU cores, e.g. `"4"` or `"3500m"`.
    pub cpu: String,
    /// Memory, e.g. `"16Gi"`.
    pub memory: String,
    /// Maximum number of pods (kubelet default 110).
    pub pods: u32,
    /// Ephemeral storage, e.g. `"100Gi"`.
    pub ephemeral_storage: String,
}

impl Default for Capacity {
    fn default() -> Self {
        Capacity {
            cpu: "4".into(),
            memory: "16Gi".into(),
            pods: 110,
            ephemeral_storage: "100Gi".into(),
        }
    }
}

impl Capacity {
    fn resource_list(&self) -> BTreeMap<String, Quantity> {
        BTreeMap::from([
            ("cpu".to_owned(), Quantity(self.cpu.clone())),
            (
                "ephemeral-storage".to_owned(),
                Quantity(self.ephemeral_storage.clone()),
            ),
            ("memory".to_owned(), Quantity(self.memory.clone())),
            ("pods".to_owned(), Quantity(self.pods.to_string())),
        ])
    }
}

/// The node's index: the decimal number its name ends with, 0 when none.
pub fn node_index(name: &str) -> u32 {
    let digits: String = name.chars().rev().take_while(char::is_ascii_digit).collect();
    let digits: String = digits.chars().rev().collect();
    digits.parse().unwrap_or(0)
}

/// The node's InternalIP: `10.0.0.2` for index 0, `10.0.0.3` for index 1, ...
pub fn node_internal_ip(name: &str) -> String {
    let host = node_index(name).saturating_add(2);
    format!("10.0.{}.{}", (host >> 8) & 0xff, host & 0xff)
}

/// The node's pod CIDR (`spec.podCIDR`): `10.244.<index>.0/24`.
pub fn node_pod_cidr(name: &str) -> String {
    format!("10.244.{}.0/24", node_index(name) & 0xff)
}

/// The Node object as a kubelet registers it at `now`.
pub fn node_object(name: &str, capacity: &Capacity, now: Timestamp) -> Node {
    let cidr = node_pod_cidr(name);
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(node_labels(name)),
            annotations: Some(BTreeMap::from([
                ("node.alpha.kubernetes.io/ttl".to_owned(), "0".to_owned()),
                (
                    "volumes.kubernetes.io/controller-managed-attach-detach".to_owned(),
                    "true".to_owned(),
                ),
            ])),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            pod_cidr: Some(cidr.clone()),
            pod_cidrs: Some(vec![cidr]),
            provider_id: Some(format!("miniplane://{name}")),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: Some(capacity.resource_list()),
            allocatable: Some(capacity.resource_list()),
            conditions: Some(node_conditions(now)),
            addresses: Some(vec![
                NodeAddress {
                    type_: "InternalIP".into(),
                    address: node_internal_ip(name),
                },
                NodeAddress {
                    type_: "Hostname".into(),
                    address: name.to_owned(),
                },
            ]),
            daemon_endpoints: Some(NodeDaemonEndpoints {
                kubelet_endpoint: Some(DaemonEndpoint { port: 10250 }),
            }),
            node_info: Some(node_info(name)),
            ..NodeStatus::default()
        }),
    }
}

fn node_labels(name: &str) -> BTreeMap<String, String> {
    [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", name),
        ("kubernetes.io/os", "linux"),
        ("node.kubernetes.io/instance-type", "miniplane"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

fn node_info(name: &str) -> NodeSystemInfo {
    NodeSystemInfo {
        architecture: "amd64".into(),
        boot_id: stable_uuid(&[name, "boot-id"]),
        container_runtime_version: CONTAINER_RUNTIME_VERSION.into(),
        kernel_version: "6.8.0-miniplane".into(),
        // Deprecated since 1.31 and no longer filled in by the kubelet.
        kube_proxy_version: String::new(),
        kubelet_version: KUBELET_VERSION.into(),
        machine_id: stable_hex128(&[name, "machine-id"]),
        operating_system: "linux".into(),
        os_image: "Miniplane Simulated Linux".into(),
        swap: None,
        system_uuid: stable_uuid(&[name, "system-uuid"]),
    }
}

/// The four conditions a healthy kubelet reports, with upstream's reasons and
/// messages (`pkg/kubelet/nodestatus/setters.go`).
fn node_conditions(now: Timestamp) -> Vec<NodeCondition> {
    let condition = |type_: &str, status: &str, reason: &str, message: &str| NodeCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_heartbeat_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
    };
    vec![
        condition(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        condition(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
        ),
        condition(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
}

/// The Events a kubelet records about its Node each time it starts, in
/// order: `Starting` (upstream `Kubelet.Run`); what the memory, disk and PID
/// pressure setters of `pkg/kubelet/nodestatus/setters.go` report on the
/// fresh status the kubelet computes at start (`initialNode`), where every
/// condition is new; and `NodeAllocatableEnforced` (the container manager).
///
/// No `NodeReady`: the Ready setter records it only when an existing Ready
/// condition changes status, and a simulated node is Ready from its
/// registration on.
pub fn start_events(name: &str, now: Timestamp) -> Vec<SimEvent> {
    let event = |reason: &str, message: String| SimEvent {
        type_: EventType::Normal,
        reason: reason.into(),
        message,
        field_path: None,
        at: now,
    };
    let status_is = |reason: &str| event(reason, format!("Node {name} status is now: {reason}"));
    vec![
        event("Starting", "Starting kubelet.".into()),
        status_is("NodeHasSufficientMemory"),
        status_is("NodeHasNoDiskPressure"),
        status_is("NodeHasSufficientPID"),
        event(
            "NodeAllocatableEnforced",
            "Updated Node Allocatable limit across pods".into(),
        ),
    ]
}

/// The node status a kubelet posts on a heartbeat: `node`'s status with the
/// four conditions the kubelet owns (Ready and the pressures) healthy again
/// and their `lastHeartbeatTime` set to `now`. A condition whose status is
/// already the healthy one keeps its transition time; one that is not (the
/// node lifecycle controller set it `Unknown` while the kubelet was stopped)
/// transitions at `now`. Other conditions are left as they are. A node
/// without status gets the full registration status.
pub fn heartbeat(node: &Node, now: Timestamp) -> NodeStatus {
    let Some(mut status) = node.status.clone() else {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        return node_object(name, &Capacity::default(), now)
            .status
            .unwrap_or_default();
    };
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    for healthy in node_conditions(now) {
        match conditions.iter_mut().find(|c| c.type_ == healthy.type_) {
            Some(c) if c.status == healthy.status => {
                c.reason = healthy.reason;
                c.message = healthy.message;
                c.last_heartbeat_time = Some(Time(now));
            }
            Some(c) => *c = healthy,
            None => conditions.push(healthy),
        }
    }
    status
}

/// The Events the kubelet's condition setters (`pkg/kubelet/nodestatus/setters.go`) record when
/// a heartbeat changes a condition's status, as [`heartbeat`] does after a stop: `NodeReady` for
/// Ready, `NodeHasSufficientMemory`, `NodeHasNoDiskPressure`, `NodeHasSufficientPID` for the
/// pressures; `Node <name> status is now: <reason>`.
pub fn status_change_events(name: &str, before: &Node, after: &NodeStatus, now: Timestamp) -> Vec<SimEvent> {
    let status_of = |conditions: Option<&Vec<NodeCondition>>, type_: &str| {
        conditions
            .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
            .map(|c| c.status.clone())
    };
    let old = before.status.as_ref().and_then(|s| s.conditions.as_ref());
    let new = after.conditions.as_ref();
    [
        ("MemoryPressure", "NodeHasSufficientMemory"),
        ("DiskPressure", "NodeHasNoDiskPressure"),
        ("PIDPressure", "NodeHasSufficientPID"),
        ("Ready", "NodeReady"),
    ]
    .into_iter()
    .filter(|(type_, _)| status_of(old, type_) != status_of(new, type_))
    .map(|(_, reason)| SimEvent {
        type_: EventType::Normal,
        reason: reason.into(),
        message: format!("Node {name} status is now: {reason}"),
        field_path: None,
        at: now,
    })
    .collect()
}

/// The node's Lease in `kube-node-lease`, renewed at `now`. `node_uid` makes the
/// Node its owner, as the kubelet does once it knows the Node's uid.
pub fn lease_object(node_name: &str, node_uid: Option<&str>, now: Timestamp) -> Lease {
    let owner = node_uid.map(|uid| OwnerReference {
        api_version: "v1".into(),
        kind: "Node".into(),
        name: node_name.to_owned(),
        uid: uid.to_owned(),
        ..OwnerReference::default()
    });
    Lease {
        metadata: ObjectMeta {
            name: Some(node_name.to_owned()),
            namespace: Some(NODE_LEASE_NAMESPACE.to_owned()),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(node_name.to_owned()),
            lease_duration_seconds: Some(NODE_LEASE_DURATION_SECONDS),
            renew_time: Some(MicroTime(now)),
            ..LeaseSpec::default()
        }),
    }
}

/// `lease` renewed at `now` (only `spec.renewTime` changes).
pub fn renew_lease(lease: &Lease, now: Timestamp) -> Lease {
    let mut lease = lease.clone();
    lease.spec.get_or_insert_with(LeaseSpec::default).renew_time = Some(MicroTime(now));
    lease
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> Timestamp {
        "2025-05-01T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_starting_kubelet_reports_its_node_healthy() {
        let events = start_events("miniplane-worker-1", t0());
        let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "Starting",
                "NodeHasSufficientMemory",
                "NodeHasNoDiskPressure",
                "NodeHasSufficientPID",
                "NodeAllocatableEnforced"
            ]
        );
        assert_eq!(events[0].message, "Starting kubelet.");
        assert_eq!(
            events[2].message,
            "Node miniplane-worker-1 status is now: NodeHasNoDiskPressure"
        );
        assert!(
            events
                .iter()
                .all(|e| e.type_ == EventType::Normal && e.field_path.is_none())
        );
    }

    #[test]
    fn node_looks_like_a_registered_kubelet_node() {
        let node = node_object("miniplane-worker-2", &Capacity::default(), t0());
        let labels = node.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["kubernetes.io/hostname"], "miniplane-worker-2");
        assert_eq!(labels["kubernetes.io/os"], "linux");
        assert_eq!(labels["node.kubernetes.io/instance-type"], "miniplane");
        let status = node.status.as_ref().unwrap();
        assert_eq!(status.capacity.as_ref().unwrap()["pods"].0, "110");
        assert_eq!(status.allocatable, status.capacity);
        let ready = status
            .conditions
            .as_ref()
            .unwrap()
            .iter()
            .find(|c| c.type_ == "Ready")
            .unwrap();
        assert_eq!(ready.status, "True");
        assert_eq!(ready.reason.as_deref(), Some("KubeletReady"));
        let addresses = status.addresses.as_ref().unwrap();
        assert_eq!(addresses[0].type_, "InternalIP");
        assert_eq!(addresses[0].address, "10.0.0.4");
        let info = status.node_info.as_ref().unwrap();
        assert_eq!(info.kubelet_version, "v1.33.0");
        assert_eq!(info.machine_id.len(), 32);
        assert_eq!(info.system_uuid.len(), 36);
        let again = node_object("miniplane-worker-2", &Capacity::default(), t0());
        assert_eq!(node, again, "deterministic");
        assert_ne!(
            info.machine_id,
            node_object("other", &Capacity::default(), t0())
                .status
                .unwrap()
                .node_info
                .unwrap()
                .machine_id
        );
    }

    #[test]
    fn node_serializes_with_upstream_field_names() {
        let json = serde_json::to_value(node_object("n1", &Capacity::default(), t0())).unwrap();
        assert_eq!(
            json["status"]["nodeInfo"]["containerRuntimeVersion"],
            "miniplane://0.1"
        );
        assert_eq!(
            json["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
            10250
        );
        assert_eq!(
            json["status"]["conditions"][3]["lastHeartbeatTime"],
            "2025-05-01T10:00:00Z"
        );
        assert_eq!(json["spec"]["podCIDR"], "10.244.1.0/24");
    }

    #[test]
    fn heartbeat_refreshes_only_heartbeat_times() {
        let node = node_object("n", &Capacity::default(), t0());
        let later = t0() + jiff::SignedDuration::from_secs(40);
        let status = heartbeat(&node, later);
        for condition in status.conditions.unwrap() {
            assert_eq!(condition.last_heartbeat_time, Some(Time(later)));
            assert_eq!(condition.last_transition_time, Some(Time(t0())));
        }
    }

    #[test]
    fn a_heartbeat_after_a_stop_makes_the_conditions_healthy_again() {
        let mut node = node_object("n", &Capacity::default(), t0());
        for c in node.status.as_mut().unwrap().conditions.as_mut().unwrap() {
            c.status = "Unknown".into();
            c.reason = Some("NodeStatusUnknown".into());
        }
        let later = t0() + jiff::SignedDuration::from_secs(400);
        let status = heartbeat(&node, later);
        for c in status.conditions.as_ref().unwrap() {
            let healthy = if c.type_ == "Ready" { "True" } else { "False" };
            assert_eq!(c.status, healthy, "{}", c.type_);
            assert_eq!(c.last_transition_time, Some(Time(later)));
            assert_ne!(c.reason.as_deref(), Some("NodeStatusUnknown"));
        }
        let events = status_change_events("n", &node, &status, later);
        let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "NodeHasSufficientMemory",
                "NodeHasNoDiskPressure",
                "NodeHasSufficientPID",
                "NodeReady"
            ]
        );
        assert_eq!(events[3].message, "Node n status is now: NodeReady");
        // A healthy node's heartbeat changes no status: no Events.
        let healthy = node_object("n", &Capacity::default(), t0());
        assert!(status_change_events("n", &healthy, &heartbeat(&healthy, later), later).is_empty());
    }

    #[test]
    fn only_the_stopped_value_stops_the_heartbeat() {
        let mut node = node_object("n", &Capacity::default(), t0());
        assert!(!heartbeat_stopped(&node));
        let annotations = node.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(HEARTBEAT.into(), "running".into());
        assert!(!heartbeat_stopped(&node));
        let annotations = node.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(HEARTBEAT.into(), HEARTBEAT_STOPPED.into());
        assert!(heartbeat_stopped(&node));
    }

    #[test]
    fn lease_is_held_by_the_node() {
        let lease = lease_object("n", Some("uid-1"), t0());
        assert_eq!(lease.metadata.namespace.as_deref(), Some("kube-node-lease"));
        let spec = lease.spec.as_ref().unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("n"));
        assert_eq!(spec.lease_duration_seconds, Some(40));
        assert_eq!(lease.metadata.owner_references.as_ref().unwrap()[0].kind, "Node");
        let later = t0() + jiff::SignedDuration::from_secs(10);
        let renewed = renew_lease(&lease, later);
        assert_eq!(renewed.spec.unwrap().renew_time, Some(MicroTime(later)));
    }

    #[test]
    fn index_comes_from_trailing_digits() {
        assert_eq!(node_index("worker-12"), 12);
        assert_eq!(node_index("control-plane"), 0);
        assert_eq!(node_internal_ip("n-300"), "10.0.1.46");
    }
}
