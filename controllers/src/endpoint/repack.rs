//! Repacking subsets: one subset per distinct set of addresses, carrying
//! every port those addresses share. Pure.
//!
//! Upstream: `pkg/api/v1/endpoints/util.go` (`RepackSubsets`,
//! `mapAddressByPort`, `SortSubsets`).
//!
//! The controller first builds one subset per (pod, port): pod A on 80
//! and 443 and pod B on 80 give `{A:80} {A:443} {B:80}`. Repacking maps each
//! port to the addresses offering it (`80 → {A, B}`, `443 → {A}`), then
//! groups the ports by address set: `{A, B}: [80]`, `{A}: [443]`. An address
//! is not ready on a port when any subset lists it not ready there ("not
//! ready trumps ready"). Subsets without ports are kept, under a sentinel
//! port that never appears in the result.
//!
//! Simplified: upstream orders ports and subsets by an MD5 hash of their
//! Go representation; here addresses are ordered by (IP, pod uid) as
//! upstream, ports by (name, port, protocol) and subsets by their addresses.
//! Clients must not depend on the order (upstream gives no meaning to it).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EndpointAddress, EndpointPort, EndpointSubset};

/// What identifies an address (upstream `addressKey`): its IP and the uid of
/// the pod it belongs to.
type AddressKey = (String, String);

/// A port as an ordered key: name, port, protocol, appProtocol.
type PortKey = (Option<String>, i32, Option<String>, Option<String>);

/// The port that stands for "no ports" (upstream's `Port: -1` sentinel).
const NO_PORTS: i32 = -1;

fn address_key(a: &EndpointAddress) -> AddressKey {
    let uid = a
        .target_ref
        .as_ref()
        .and_then(|r| r.uid.clone())
        .unwrap_or_default();
    (a.ip.clone(), uid)
}

fn port_key(p: &EndpointPort) -> PortKey {
    (p.name.clone(), p.port, p.protocol.clone(), p.app_protocol.clone())
}

fn port_of(k: &PortKey) -> EndpointPort {
    EndpointPort {
        name: k.0.clone(),
        port: k.1,
        protocol: k.2.clone(),
        app_protocol: k.3.clone(),
    }
}

/// Upstream `RepackSubsets`.
pub fn repack_subsets(subsets: &[EndpointSubset]) -> Vec<EndpointSubset> {
    // Every address once (the first copy seen), and per port the addresses
    // offering it with their readiness.
    let mut all: BTreeMap<AddressKey, EndpointAddress> = BTreeMap::new();
    let mut by_port: BTreeMap<PortKey, BTreeMap<AddressKey, bool>> = BTreeMap::new();
    for subset in subsets {
        let ports: Vec<PortKey> = match subset.ports.as_deref() {
            None | Some([]) => vec![(None, NO_PORTS, None, None)],
            Some(ports) => ports.iter().map(port_key).collect(),
        };
        let ready = subset.addresses.iter().flatten().map(|a| (a, true));
        let not_ready = subset.not_ready_addresses.iter().flatten().map(|a| (a, false));
        for (address, is_ready) in ready.chain(not_ready) {
            let key = address_key(address);
            all.entry(key.clone()).or_insert_with(|| address.clone());
            for port in &ports {
                let readiness = by_port.entry(port.clone()).or_default();
                // Not ready trumps ready.
                let was_ready = readiness.get(&key).copied().unwrap_or(true);
                readiness.insert(key.clone(), was_ready && is_ready);
            }
        }
    }
    // The ports of each distinct set of (address, ready).
    let mut by_addresses: BTreeMap<Vec<(AddressKey, bool)>, Vec<PortKey>> = BTreeMap::new();
    for (port, addresses) in by_port {
        let ports = by_addresses.entry(addresses.into_iter().collect()).or_default();
        if port.1 != NO_PORTS {
            ports.push(port);
        }
    }
    by_addresses
        .into_iter()
        .map(|(addresses, ports)| {
            let pick = |want: bool| -> Option<Vec<EndpointAddress>> {
                let picked: Vec<EndpointAddress> = addresses
                    .iter()
                    .filter(|(_, ready)| *ready == want)
                    // Every key in a port's set was put in `all` beside it.
                    .map(|(key, _)| all[key].clone())
                    .collect();
                (!picked.is_empty()).then_some(picked)
            };
            EndpointSubset {
                addresses: pick(true),
                not_ready_addresses: pick(false),
                ports: (!ports.is_empty()).then(|| ports.iter().map(port_of).collect()),
            }
        })
        .collect()
}
