//! The pure core of miniplane's simulated kubelet.
//!
//! A real kubelet registers its Node, renews a Lease in `kube-node-lease`, and
//! drives every pod bound to it through image pulls, container starts, probes,
//! exits, restarts and graceful termination, reporting each step in the pod's
//! status and as Events. miniplane runs no containers: this crate decides what a
//! kubelet *would* report, as plain functions of the objects and a `now`
//! parameter. Those functions never read a clock, never do I/O and never
//! sleep; the async runner in [`run`] stores what they return and calls them
//! again when they say to.
//!
//! * [`node`] — the Node object as a kubelet registers it, its heartbeat and
//!   its Lease; the Node annotations that stop and start a node's kubelet
//!   ([`node::HEARTBEAT`]) or have it adopt a Node a user created
//!   ([`node::SIMULATED`]).
//! * [`behaviour`] — how a simulated pod behaves: the `sim.miniplane.dev/`
//!   annotations plus the spec fields a real container runtime would honour.
//! * [`lifecycle`] — the pod lifecycle as a state table; [`lifecycle::next`]
//!   says which status to write, which Events to emit and when to look again.
//! * [`logs`] — synthetic container log lines consistent with the status.
//! * [`run`] — the one impure part: the [`Kubelet`] loop that registers the
//!   nodes, renews their Leases and writes what [`lifecycle::next`] decides.

pub mod behaviour;
pub mod lifecycle;
pub mod logs;
pub mod node;
pub mod run;
pub mod status_cache;
pub mod traffic;

pub use behaviour::{Behaviour, ContainerBehaviour, ImagePull, Readiness};

pub use lifecycle::{EventType, SimEvent, Step, next};
pub use logs::{log_lines, previous_log_lines};
pub use node::{Capacity, heartbeat, lease_object, node_internal_ip, node_object};
pub use run::Kubelet;

/// 64-bit FNV-1a: a small, stable hash used for every "deterministic from the
/// name" value (IPs, machine ids, seeds). `std`'s hasher is not guaranteed to be
/// stable across Rust releases, so it is not used for anything persisted.
pub(crate) fn stable_hash(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0xff)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// 32 lowercase hex digits derived from `parts` (a machine-id-like string).
pub(crate) fn stable_hex128(parts: &[&str]) -> String {
    let high = stable_hash(parts);
    let low = stable_hash(&[&format!("{high:016x}"), "low"]);
    format!("{high:016x}{low:016x}")
}

/// A UUID-shaped (8-4-4-4-12) string derived from `parts`.
pub(crate) fn stable_uuid(parts: &[&str]) -> String {
    let hex = stable_hex128(parts);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
