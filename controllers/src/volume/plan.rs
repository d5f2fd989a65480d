//! Pure: what one claim or volume sync does.
//!
//! Upstream: `pkg/controller/volume/persistentvolume/pv_controller.go`
//! (`syncUnboundClaim`, `syncBoundClaim`, `syncVolume`, `bind`,
//! `reclaimVolume`, `provisionClaim`), `index.go` (`findBestMatchForClaim`:
//! the smallest volume that fits) and `util.go` (`checkVolumeSatisfyClaim`).
//!
//! ```text
//! claim, no volumeName:
//!   WaitForFirstConsumer class, no selected-node → event WaitForFirstConsumer, wait
//!   an Available volume fits (class, modes, volumeMode, size) → bind both ways
//!   class with a provisioner                     → provision pvc-<uid> (pre-bound), then bind
//!   otherwise                                    → event, look again in 15 s
//! claim with volumeName:
//!   volume gone      → Lost;  volume unclaimed → bind it;  volume ours → claim status Bound
//! volume:
//!   no claimRef → Available;  its claim exists and names it → Bound
//!   its claim is gone → Released, then the reclaim policy: Delete deletes it
//! ```
//!
//! Simplified: claim selectors and data sources are ignored; Recycle acts
//! as Retain; every provisioner but `kubernetes.io/no-provisioner` is
//! simulated here (the volume is a hostPath under
//! `/var/local-path-provisioner`, as the local-path provisioner makes); the
//! binding happens in the controller also for WaitForFirstConsumer claims,
//! once the scheduler has set `volume.kubernetes.io/selected-node`.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    HostPathVolumeSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, ObjectReference,
    PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimStatus, PersistentVolumeSpec,
    PersistentVolumeStatus, VolumeNodeAffinity,
};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use crate::runtime::EventType;

/// Claim annotation: the binding is complete (upstream `AnnBindCompleted`).
pub const ANN_BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
/// The controller made this binding (upstream `AnnBoundByController`).
pub const ANN_BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
/// Volume annotation: who provisioned it (upstream `AnnDynamicallyProvisioned`).
pub const ANN_PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";
/// Claim annotation: the node the scheduler chose for a WaitForFirstConsumer claim.
pub const ANN_SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
/// Claim annotations naming the provisioner asked to provision it.
pub const ANN_STORAGE_PROVISIONER: [&str; 2] = [
    "volume.kubernetes.io/storage-provisioner",
    "volume.beta.kubernetes.io/storage-provisioner",
];
/// The provisioner name that means "static volumes only".
pub const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";
/// The beta annotation naming a class (wins over `storageClassName`).
const ANN_BETA_CLASS: &str = "volume.beta.kubernetes.io/storage-class";
/// How long an unbindable claim waits before the next look (upstream's resync period).
pub const RESYNC: Duration = Duration::from_secs(15);

/// Which object an event is about.
#[derive(Clone, Debug, PartialEq)]
pub enum On {
    /// The claim being synced.
    Claim,
    /// The volume being synced (or, on a claim sync, the volume involved).
    Volume,
}

/// One event to record.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// About which object.
    pub on: On,
    /// Normal or Warning.
    pub type_: EventType,
    /// Upstream's reason.
    pub reason: &'static str,
    /// Upstream's message.
    pub message: String,
}

/// What one sync writes, in order: create the new volume, write the volume
/// (metadata/spec, then status), write the claim (metadata/spec, then
/// status), delete a volume; then the events and when to look again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// A volume to create (provisioning).
    pub create_volume: Option<PersistentVolume>,
    /// The desired state of an existing volume.
    pub volume: Option<PersistentVolume>,
    /// The desired state of the claim.
    pub claim: Option<PersistentVolumeClaim>,
    /// A volume to delete (reclaim policy Delete).
    pub delete_volume: Option<String>,
    /// Events to record.
    pub events: Vec<Event>,
    /// Sync again after this long.
    pub requeue: Option<Duration>,
}

// ---------------------------------------------------------------------------
// Accessors

fn ann<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

fn set_ann(meta: &mut ObjectMeta, key: &str, value: &str) {
    meta.annotations
        .get_or_insert_with(Default::default)
        .insert(key.to_string(), value.to_string());
}

/// Upstream `GetPersistentVolumeClaimClass`.
pub fn claim_class(claim: &PersistentVolumeClaim) -> String {
    if let Some(c) = ann(&claim.metadata, ANN_BETA_CLASS) {
        return c.to_string();
    }
    claim
        .spec
        .as_ref()
        .and_then(|s| s.storage_class_name.clone())
        .unwrap_or_default()
}

/// Upstream `GetPersistentVolumeClass`.
pub fn volume_class(volume: &PersistentVolume) -> String {
    if let Some(c) = ann(&volume.metadata, ANN_BETA_CLASS) {
        return c.to_string();
    }
    volume
        .spec
        .as_ref()
        .and_then(|s| s.storage_class_name.clone())
        .unwrap_or_default()
}

fn volume_name_of(claim: &PersistentVolumeClaim) -> &str {
    claim
        .spec
        .as_ref()
        .and_then(|s| s.volume_name.as_deref())
        .unwrap_or("")
}

fn claim_ref(volume: &PersistentVolume) -> Option<&ObjectReference> {
    volume.spec.as_ref()?.claim_ref.as_ref()
}

fn requested_bytes(claim: &PersistentVolumeClaim) -> f64 {
    let q = claim
        .spec
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"));
    q.and_then(|q| quantity_bytes(&q.0)).unwrap_or(0.0)
}

fn capacity_bytes(volume: &PersistentVolume) -> f64 {
    let q = volume
        .spec
        .as_ref()
        .and_then(|s| s.capacity.as_ref())
        .and_then(|c| c.get("storage"));
    q.and_then(|q| quantity_bytes(&q.0)).unwrap_or(0.0)
}

/// A quantity as a number of units (`1Gi` = 2^30, `500M` = 5·10^8).
pub fn quantity_bytes(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        _ => return None,
    };
    Some(n * mult)
}

fn volume_mode(mode: Option<&String>) -> &str {
    mode.map_or("Filesystem", String::as_str)
}

/// Whether a claim refers to this claim (namespace, name, and uid if set).
fn refers_to(r: &ObjectReference, claim: &PersistentVolumeClaim) -> bool {
    r.namespace == claim.metadata.namespace
        && r.name == claim.metadata.name
        && (r.uid.is_none() || r.uid == claim.metadata.uid)
}

// ---------------------------------------------------------------------------
// Matching

/// Upstream `checkVolumeSatisfyClaim`: class, access modes, volume mode, size.
pub fn volume_satisfies_claim(volume: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    let (Some(vs), Some(cs)) = (volume.spec.as_ref(), claim.spec.as_ref()) else {
        return false;
    };
    let modes = vs.access_modes.clone().unwrap_or_default();
    let wanted = cs.access_modes.clone().unwrap_or_default();
    volume_class(volume) == claim_class(claim)
        && wanted.iter().all(|m| modes.contains(m))
        && volume_mode(vs.volume_mode.as_ref()) == volume_mode(cs.volume_mode.as_ref())
        && capacity_bytes(volume) >= requested_bytes(claim)
}

/// Upstream `findBestMatchForClaim`: a volume pre-bound to the claim wins;
/// else the smallest unclaimed, not deleting volume that satisfies it.
pub fn find_best_match<'a>(
    volumes: &'a [&'a PersistentVolume],
    claim: &PersistentVolumeClaim,
) -> Option<&'a PersistentVolume> {
    let candidates = volumes
        .iter()
        .copied()
        .filter(|v| v.metadata.deletion_timestamp.is_none() && volume_satisfies_claim(v, claim));
    let mut best: Option<&PersistentVolume> = None;
    for v in candidates {
        match claim_ref(v) {
            Some(r) if refers_to(r, claim) => return Some(v),
            Some(_) => continue,
            None => {}
        }
        if best.is_none_or(|b| capacity_bytes(v) < capacity_bytes(b)) {
            best = Some(v);
        }
    }
    best
}

// ---------------------------------------------------------------------------
// Claims

/// Upstream `syncClaim`: `class` is the claim's StorageClass if it names
/// one that exists; `volumes` every volume in the cache.
pub fn plan_claim(
    claim: &PersistentVolumeClaim,
    class: Option<&StorageClass>,
    volumes: &[&PersistentVolume],
    now: Timestamp,
) -> Plan {
    if claim.metadata.deletion_timestamp.is_some() {
        return Plan::default();
    }
    match volume_name_of(claim) {
        "" => plan_unbound_claim(claim, class, volumes, now),
        name => plan_bound_claim(
            claim,
            volumes
                .iter()
                .copied()
                .find(|v| v.metadata.name.as_deref() == Some(name)),
            now,
        ),
    }
}

/// Upstream `syncUnboundClaim`.
fn plan_unbound_claim(
    claim: &PersistentVolumeClaim,
    class: Option<&StorageClass>,
    volumes: &[&PersistentVolume],
    now: Timestamp,
) -> Plan {
    let class_name = claim_class(claim);
    let delayed = class.is_some_and(|c| c.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer"))
        && ann(&claim.metadata, ANN_SELECTED_NODE).is_none();
    if delayed {
        return Plan {
            events: vec![claim_event(
                EventType::Normal,
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding".into(),
            )],
            ..Plan::default()
        };
    }
    if let Some(volume) = find_best_match(volumes, claim) {
        return bind(volume, claim, now);
    }
    match class {
        Some(c) if c.provisioner != NO_PROVISIONER => provision(claim, c),
        // Upstream finds no in-tree plugin by that name (`findProvisionablePlugin`).
        Some(c) => Plan {
            events: vec![claim_event(
                EventType::Warning,
                "ProvisioningFailed",
                format!("no volume plugin matched name: {}", c.provisioner),
            )],
            requeue: Some(RESYNC),
            ..Plan::default()
        },
        None if !class_name.is_empty() => Plan {
            events: vec![claim_event(
                EventType::Warning,
                "ProvisioningFailed",
                format!("storageclass.storage.k8s.io \"{class_name}\" not found"),
            )],
            requeue: Some(RESYNC),
            ..Plan::default()
        },
        _ => Plan {
            events: vec![claim_event(
                EventType::Normal,
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set".into(),
            )],
            requeue: Some(RESYNC),
            ..Plan::default()
        },
    }
}

/// Upstream `syncBoundClaim`.
fn plan_bound_claim(
    claim: &PersistentVolumeClaim,
    volume: Option<&PersistentVolume>,
    now: Timestamp,
) -> Plan {
    let Some(volume) = volume else {
        // Upstream: a claim that was bound and lost its volume is Lost; one
        // whose volumeName the user set to a volume not made yet waits.
        if ann(&claim.metadata, ANN_BIND_COMPLETED).is_none() {
            return Plan::default();
        }
        return lost(
            claim,
            "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
        );
    };
    match claim_ref(volume) {
        None => bind(volume, claim, now),
        Some(r) if refers_to(r, claim) => bind(volume, claim, now),
        Some(_) => lost(
            claim,
            "Two claims are bound to the same volume, this one is bound incorrectly",
        ),
    }
}

fn lost(claim: &PersistentVolumeClaim, message: &str) -> Plan {
    let mut desired = claim.clone();
    let status = desired.status.get_or_insert_with(Default::default);
    if status.phase.as_deref() == Some("Lost") {
        return Plan::default();
    }
    status.phase = Some("Lost".into());
    Plan {
        claim: Some(desired),
        events: vec![claim_event(EventType::Warning, "ClaimLost", message.to_string())],
        ..Plan::default()
    }
}

/// Upstream `bind`: the volume points at the claim (claimRef, phase
/// Bound), the claim at the volume (volumeName, annotations, phase Bound,
/// capacity and access modes of the volume). Writes only what differs.
pub fn bind(volume: &PersistentVolume, claim: &PersistentVolumeClaim, now: Timestamp) -> Plan {
    let mut v = volume.clone();
    let spec = v.spec.get_or_insert_with(Default::default);
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("PersistentVolumeClaim".into()),
        namespace: claim.metadata.namespace.clone(),
        name: claim.metadata.name.clone(),
        uid: claim.metadata.uid.clone(),
        resource_version: claim.metadata.resource_version.clone(),
        ..Default::default()
    };
    let was_unclaimed = spec.claim_ref.is_none();
    let same = spec
        .claim_ref
        .as_ref()
        .is_some_and(|r| r.uid.is_some() && r.uid == claim.metadata.uid);
    if !same {
        spec.claim_ref = Some(reference);
    }
    if was_unclaimed {
        set_ann(&mut v.metadata, ANN_BOUND_BY_CONTROLLER, "yes");
    }
    set_volume_phase(&mut v, "Bound", now);

    let mut c = claim.clone();
    let cspec = c.spec.get_or_insert_with(Default::default);
    let volume_name = volume.metadata.name.clone().unwrap_or_default();
    if cspec.volume_name.as_deref().unwrap_or("").is_empty() {
        cspec.volume_name = Some(volume_name.clone());
        set_ann(&mut c.metadata, ANN_BOUND_BY_CONTROLLER, "yes");
    }
    set_ann(&mut c.metadata, ANN_BIND_COMPLETED, "yes");
    let vspec = volume.spec.clone().unwrap_or_default();
    let status = c.status.get_or_insert_with(PersistentVolumeClaimStatus::default);
    status.phase = Some("Bound".into());
    status.access_modes = vspec.access_modes.clone();
    status.capacity = vspec.capacity.clone();

    Plan {
        volume: (v != *volume).then_some(v),
        claim: (c != *claim).then_some(c),
        ..Plan::default()
    }
}

/// The provisioning of a dynamically provisioned volume for `claim`
/// (upstream `provisionClaimOperation`, done by the simulated provisioner):
/// the claim is annotated with the provisioner, the volume created
/// pre-bound to it; the next sync binds them.
fn provision(claim: &PersistentVolumeClaim, class: &StorageClass) -> Plan {
    let mut c = claim.clone();
    for key in ANN_STORAGE_PROVISIONER {
        set_ann(&mut c.metadata, key, &class.provisioner);
    }
    let volume = provisioned_volume(claim, class);
    let name = volume.metadata.name.clone().unwrap_or_default();
    Plan {
        create_volume: Some(volume),
        claim: (c != *claim).then_some(c),
        events: vec![
            claim_event(
                EventType::Normal,
                "Provisioning",
                format!(
                    "External provisioner is provisioning volume for claim \"{}/{}\"",
                    claim.metadata.namespace.as_deref().unwrap_or(""),
                    claim.metadata.name.as_deref().unwrap_or("")
                ),
            ),
            claim_event(
                EventType::Normal,
                "ProvisioningSucceeded",
                format!("Successfully provisioned volume {name}"),
            ),
        ],
        ..Plan::default()
    }
}

/// The volume the simulated provisioner makes for `claim`: `pvc-<uid>`, the
/// claim's size, modes and volume mode, the class's reclaim policy and
/// mount options, a hostPath directory, pinned to the selected node.
pub fn provisioned_volume(claim: &PersistentVolumeClaim, class: &StorageClass) -> PersistentVolume {
    let uid = claim.metadata.uid.clone().unwrap_or_default();
    let ns = claim.metadata.namespace.clone().unwrap_or_default();
    let claim_name = claim.metadata.name.clone().unwrap_or_default();
    let name = format!("pvc-{uid}");
    let cspec = claim.spec.clone().unwrap_or_default();
    let capacity = cspec
        .resources
        .as_ref()
        .and_then(|r| r.requests.clone())
        .map(|r| r.into_iter().filter(|(k, _)| k == "storage").collect());
    let node = ann(&claim.metadata, ANN_SELECTED_NODE).map(str::to_string);
    let node_affinity = node.map(|n| VolumeNodeAffinity {
        required: Some(NodeSelector {
            node_selector_terms: vec![NodeSelectorTerm {
                match_expressions: Some(vec![NodeSelectorRequirement {
                    key: "kubernetes.io/hostname".into(),
                    operator: "In".into(),
                    values: Some(vec![n]),
                }]),
                match_fields: None,
            }],
        }),
    });
    let mut metadata = ObjectMeta {
        name: Some(name.clone()),
        ..Default::default()
    };
    set_ann(&mut metadata, ANN_PROVISIONED_BY, &class.provisioner);
    PersistentVolume {
        metadata,
        spec: Some(PersistentVolumeSpec {
            capacity,
            access_modes: cspec.access_modes.clone(),
            volume_mode: Some(volume_mode(cspec.volume_mode.as_ref()).to_string()),
            persistent_volume_reclaim_policy: Some(
                class.reclaim_policy.clone().unwrap_or_else(|| "Delete".into()),
            ),
            storage_class_name: class.metadata.name.clone(),
            mount_options: class.mount_options.clone(),
            claim_ref: Some(ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("PersistentVolumeClaim".into()),
                namespace: Some(ns.clone()),
                name: Some(claim_name.clone()),
                uid: Some(uid),
                resource_version: claim.metadata.resource_version.clone(),
                ..Default::default()
            }),
            host_path: Some(HostPathVolumeSource {
                path: format!("/var/local-path-provisioner/{name}_{ns}_{claim_name}"),
                type_: Some("DirectoryOrCreate".into()),
            }),
            node_affinity,
            ..Default::default()
        }),
        status: None,
    }
}

fn claim_event(type_: EventType, reason: &'static str, message: String) -> Event {
    Event {
        on: On::Claim,
        type_,
        reason,
        message,
    }
}

// ---------------------------------------------------------------------------
// Volumes

/// Upstream `syncVolume`: `claim` is the claim the volume's claimRef names,
/// if the cache has one by that namespace and name.
pub fn plan_volume(volume: &PersistentVolume, claim: Option<&PersistentVolumeClaim>, now: Timestamp) -> Plan {
    if volume.metadata.deletion_timestamp.is_some() {
        return Plan::default();
    }
    let Some(r) = claim_ref(volume) else {
        return with_phase(volume, "Available", now);
    };
    let claim = claim.filter(|c| r.uid.is_none() || c.metadata.uid == r.uid);
    match claim {
        // Pre-bound to a claim not created yet: wait for it.
        None if r.uid.is_none() => with_phase(volume, "Available", now),
        None => released(volume, now),
        Some(c) if volume_name_of(c) == volume.metadata.name.as_deref().unwrap_or("") => {
            with_phase(volume, "Bound", now)
        }
        // The claim is not bound yet (the claim sync binds it), or bound
        // elsewhere: an automatic binding is undone.
        Some(c) if volume_name_of(c).is_empty() => Plan::default(),
        Some(_) if ann(&volume.metadata, ANN_BOUND_BY_CONTROLLER).is_some() => {
            let mut v = volume.clone();
            if let Some(spec) = v.spec.as_mut() {
                spec.claim_ref = None;
            }
            set_volume_phase(&mut v, "Available", now);
            Plan {
                volume: Some(v),
                ..Plan::default()
            }
        }
        Some(_) => released(volume, now),
    }
}

/// The claim is gone: Released, then the reclaim policy (upstream `reclaimVolume`).
fn released(volume: &PersistentVolume, now: Timestamp) -> Plan {
    let policy = volume
        .spec
        .as_ref()
        .and_then(|s| s.persistent_volume_reclaim_policy.as_deref())
        .unwrap_or("Retain");
    if policy == "Delete" {
        return Plan {
            delete_volume: volume.metadata.name.clone(),
            ..Plan::default()
        };
    }
    with_phase(volume, "Released", now)
}

fn with_phase(volume: &PersistentVolume, phase: &str, now: Timestamp) -> Plan {
    let mut v = volume.clone();
    set_volume_phase(&mut v, phase, now);
    Plan {
        volume: (v != *volume).then_some(v),
        ..Plan::default()
    }
}

/// Sets the phase, and `lastPhaseTransitionTime` when it changes.
fn set_volume_phase(volume: &mut PersistentVolume, phase: &str, now: Timestamp) {
    let status = volume.status.get_or_insert_with(PersistentVolumeStatus::default);
    if status.phase.as_deref() == Some(phase) {
        return;
    }
    status.phase = Some(phase.to_string());
    status.last_phase_transition_time = Some(Time(now));
}
