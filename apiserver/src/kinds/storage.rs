//! Storage kinds: core/v1 PersistentVolume and PersistentVolumeClaim,
//! storage.k8s.io/v1 StorageClass and CSIDriver.
//!
//! Upstream: `pkg/apis/core/v1/defaults.go` (`SetDefaults_PersistentVolume`,
//! `SetDefaults_PersistentVolumeClaim`), `pkg/apis/storage/v1/defaults.go`
//! (`SetDefaults_StorageClass`, `SetDefaults_CSIDriver`),
//! `pkg/registry/core/persistentvolume{,claim}/strategy.go` (status reset on
//! create), `pkg/apis/core/validation/validation.go`
//! (`ValidatePersistentVolumeSpec`, `ValidatePersistentVolumeUpdate`,
//! `ValidatePersistentVolumeClaimSpec`, `ValidatePersistentVolumeClaimUpdate`)
//! and `pkg/apis/storage/validation/validation.go` (`ValidateStorageClass`,
//! `ValidateStorageClassUpdate`, `ValidateCSIDriver`, `ValidateCSIDriverUpdate`).
//!
//! Simplified: the volume sources themselves are not validated (only that
//! exactly one is given, and that a `local` volume has node affinity);
//! selectors, data sources, topologies and node affinity are not validated;
//! quantities compare numerically; the diff appended to the immutability
//! errors lists the changed fields, not upstream's full `cmp.Diff`; the PV's
//! `lastPhaseTransitionTime` is set on create (from the creation time) but a
//! status write keeps what the writer sent (the PV controller sets it).

use serde_json::{Value, json};

use super::pod::quantity_value;
use super::{child, default_key, items, sem_eq};
use crate::error::FieldError;
use crate::jsonpath::{at, str_at};
use crate::validation::is_dns1123_subdomain;

/// `storageclass.kubernetes.io/is-default-class`: the class claims without
/// a class get (upstream `storageutil.IsDefaultStorageClassAnnotation`).
pub const IS_DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
/// The beta spelling of [`IS_DEFAULT_CLASS`], still honoured upstream.
pub const BETA_IS_DEFAULT_CLASS: &str = "storageclass.beta.kubernetes.io/is-default-class";
/// The beta annotation that names a claim's or volume's class (wins over the field).
pub const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];

/// Every PersistentVolume source field (`PersistentVolumeSource`), in upstream's check order.
const PV_SOURCES: [&str; 22] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

// ---------------------------------------------------------------------------
// Defaults and strategies

/// PV: reclaim policy Retain, volume mode Filesystem, phase Pending.
pub fn default_persistent_volume(obj: &mut Value) {
    if let Some(spec) = child(obj, "spec") {
        default_key(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
        default_key(spec, "volumeMode", json!("Filesystem"));
    }
    if let Some(status) = child(obj, "status") {
        default_key(status, "phase", json!("Pending"));
    }
}

/// PVC: volume mode Filesystem, phase Pending.
pub fn default_persistent_volume_claim(obj: &mut Value) {
    if let Some(spec) = child(obj, "spec") {
        default_key(spec, "volumeMode", json!("Filesystem"));
    }
    if let Some(status) = child(obj, "status") {
        default_key(status, "phase", json!("Pending"));
    }
}

/// The status of a new PV: Pending since its creation (upstream sets
/// `lastPhaseTransitionTime` to the time of the create).
pub fn initial_pv_status(obj: &Value) -> Value {
    let created = at(obj, &["metadata", "creationTimestamp"]).cloned();
    match created {
        Some(t) => json!({"phase": "Pending", "lastPhaseTransitionTime": t}),
        None => json!({"phase": "Pending"}),
    }
}

/// StorageClass: reclaim policy Delete, binding mode Immediate.
pub fn default_storage_class(obj: &mut Value) {
    default_key(obj, "reclaimPolicy", json!("Delete"));
    default_key(obj, "volumeBindingMode", json!("Immediate"));
}

/// CSIDriver: attachRequired true; podInfoOnMount, storageCapacity,
/// requiresRepublish and seLinuxMount false; fsGroupPolicy
/// ReadWriteOnceWithFSType; lifecycle modes [Persistent].
pub fn default_csi_driver(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_key(spec, "attachRequired", json!(true));
    for key in [
        "podInfoOnMount",
        "storageCapacity",
        "requiresRepublish",
        "seLinuxMount",
    ] {
        default_key(spec, key, json!(false));
    }
    default_key(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    if items(spec, "volumeLifecycleModes").next().is_none() {
        super::set(spec, "volumeLifecycleModes", json!(["Persistent"]));
    }
}

/// The provisioner of the default class, the local-path provisioner kind
/// ships (simulated by the PV controller).
pub const LOCAL_PATH_PROVISIONER: &str = "rancher.io/local-path";

/// The default StorageClass a fresh cluster has, as kind's: `standard`,
/// local-path, WaitForFirstConsumer, Delete.
pub fn standard_storage_class() -> Value {
    json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "standard", "annotations": {IS_DEFAULT_CLASS: "true"}},
        "provisioner": LOCAL_PATH_PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    })
}

// ---------------------------------------------------------------------------
// PersistentVolume

/// Upstream `ValidatePersistentVolumeSpec` (not inline).
pub fn validate_persistent_volume(obj: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut errs = validate_access_modes(spec, "spec.accessModes", "");
    errs.extend(validate_capacity(spec.get("capacity")));
    let policy = str_at(spec, &["persistentVolumeReclaimPolicy"]);
    if !policy.is_empty() && !["Delete", "Recycle", "Retain"].contains(&policy) {
        errs.push(FieldError::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            json!(policy),
            &["Delete", "Recycle", "Retain"],
        ));
    }
    errs.extend(validate_sources(spec));
    errs.extend(validate_class_name(
        spec,
        "storageClassName",
        "spec.storageClassName",
    ));
    errs.extend(validate_volume_mode(spec));
    errs
}

fn validate_capacity(capacity: Option<&Value>) -> Vec<FieldError> {
    let map = capacity.and_then(Value::as_object);
    let mut errs = Vec::new();
    if map.is_none_or(|m| m.is_empty()) {
        errs.push(FieldError::required("spec.capacity", ""));
    }
    let storage_only = map.is_some_and(|m| m.len() == 1 && m.contains_key("storage"));
    if !storage_only {
        let shown = super::super::gofmt::go_string_map(capacity);
        errs.push(FieldError::not_supported(
            "spec.capacity",
            json!(shown),
            &["storage"],
        ));
    }
    for (k, v) in map.into_iter().flatten() {
        errs.extend(positive_quantity(v, &format!("spec.capacity[{k}]")));
    }
    errs
}

/// Exactly one volume source; `local` needs node affinity.
fn validate_sources(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut found = 0;
    for source in PV_SOURCES {
        if spec.get(source).is_none_or(Value::is_null) {
            continue;
        }
        if found > 0 {
            errs.push(FieldError::forbidden(
                format!("spec.{source}"),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        found += 1;
        if source == "local" && at(spec, &["nodeAffinity", "required"]).is_none() {
            errs.push(FieldError::required(
                "spec.nodeAffinity",
                "Local volume requires node affinity",
            ));
        }
    }
    if found == 0 {
        errs.push(FieldError::required("spec", "must specify a volume type"));
    }
    errs
}

/// Upstream `ValidatePersistentVolumeUpdate`: the source and the volume
/// mode never change.
pub fn validate_persistent_volume_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let ns = new.get("spec").unwrap_or(&empty);
    let os = old.get("spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    let changed: Vec<&str> = PV_SOURCES
        .into_iter()
        .filter(|k| !sem_eq(ns.get(*k), os.get(*k)))
        .collect();
    if !changed.is_empty() {
        errs.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            format!(
                "spec.persistentvolumesource is immutable after creation\n{}",
                field_diff("core.PersistentVolumeSource", os, ns, &changed)
            ),
        ));
    }
    if !sem_eq(ns.get("volumeMode"), os.get("volumeMode")) {
        errs.push(FieldError::invalid(
            "volumeMode",
            ns.get("volumeMode").cloned().unwrap_or(Value::Null),
            "field is immutable",
        ));
    }
    errs
}

// ---------------------------------------------------------------------------
// PersistentVolumeClaim

/// Upstream `ValidatePersistentVolumeClaimSpec`.
pub fn validate_persistent_volume_claim(obj: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut errs = validate_access_modes(spec, "spec.accessModes", "at least 1 access mode is required");
    let path = "spec.resources[storage]";
    match at(spec, &["resources", "requests", "storage"]) {
        None => errs.push(FieldError::required(path, "")),
        Some(q) => errs.extend(positive_quantity(q, path)),
    }
    errs.extend(validate_class_name(
        spec,
        "storageClassName",
        "spec.storageClassName",
    ));
    errs.extend(validate_volume_mode(spec));
    errs
}

/// Upstream `ValidatePersistentVolumeClaimUpdate`: the spec is frozen but
/// for `volumeName` (set once, by the binder) and, on a bound claim, the
/// storage request (expansion), which may not shrink below the capacity.
pub fn validate_persistent_volume_claim_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let ns = new.get("spec").unwrap_or(&empty);
    let os = old.get("spec").unwrap_or(&empty);
    let mut munged = ns.clone();
    if str_at(os, &["volumeName"]).is_empty() {
        super::copy_key(&mut munged, os, "volumeName");
    }
    if str_at(new, &["status", "phase"]) == "Bound"
        && let Some(requests) = munged.pointer_mut("/resources/requests")
    {
        match at(os, &["resources", "requests", "storage"]) {
            Some(q) => super::set(requests, "storage", q.clone()),
            None => super::remove(requests, "storage"),
        }
    }
    super::copy_key(&mut munged, os, "volumeAttributesClassName");
    let mut errs = Vec::new();
    if !sem_eq(Some(&munged), Some(os)) {
        let keys = changed_keys(os, &munged);
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        errs.push(FieldError::forbidden(
            "spec",
            format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                field_diff("core.PersistentVolumeClaimSpec", os, &munged, &keys)
            ),
        ));
    }
    let size = |s: &Value| at(s, &["resources", "requests", "storage"]).and_then(quantity_value);
    let capacity = at(old, &["status", "capacity", "storage"])
        .and_then(quantity_value)
        .unwrap_or(0.0);
    if let (Some(n), Some(o)) = (size(ns), size(os))
        && n < o
        && n <= capacity
    {
        errs.push(FieldError::forbidden(
            "spec.resources.requests.storage",
            "field can not be less than status.capacity",
        ));
    }
    errs
}

// ---------------------------------------------------------------------------
// StorageClass, CSIDriver

/// Upstream `ValidateStorageClass`.
pub fn validate_storage_class(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let provisioner = str_at(obj, &["provisioner"]);
    if provisioner.is_empty() {
        errs.push(FieldError::required("provisioner", ""));
    } else {
        for msg in crate::validation::is_qualified_name(&provisioner.to_lowercase()) {
            errs.push(FieldError::invalid("provisioner", json!(provisioner), msg));
        }
    }
    let params = obj.get("parameters").and_then(Value::as_object);
    for (k, _) in params.into_iter().flatten() {
        if k.is_empty() {
            errs.push(FieldError::invalid(
                "parameters",
                json!(k),
                "field can not be empty.",
            ));
        }
    }
    let policy = str_at(obj, &["reclaimPolicy"]);
    if !policy.is_empty() && !["Delete", "Retain"].contains(&policy) {
        errs.push(FieldError::not_supported(
            "reclaimPolicy",
            json!(policy),
            &["Delete", "Retain"],
        ));
    }
    let modes = ["Immediate", "WaitForFirstConsumer"];
    match obj.get("volumeBindingMode").and_then(Value::as_str) {
        None => errs.push(FieldError::required("volumeBindingMode", "")),
        Some(m) if !modes.contains(&m) => {
            errs.push(FieldError::not_supported("volumeBindingMode", json!(m), &modes))
        }
        Some(_) => {}
    }
    errs
}

/// Upstream `ValidateStorageClassUpdate`: parameters, provisioner, reclaim
/// policy and binding mode are fixed.
pub fn validate_storage_class_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !sem_eq(new.get("parameters"), old.get("parameters")) {
        errs.push(FieldError::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if new.get("provisioner") != old.get("provisioner") {
        errs.push(FieldError::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    if new.get("reclaimPolicy") != old.get("reclaimPolicy") {
        errs.push(FieldError::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    if new.get("volumeBindingMode") != old.get("volumeBindingMode") {
        errs.push(FieldError::invalid(
            "volumeBindingMode",
            new.get("volumeBindingMode").cloned().unwrap_or(Value::Null),
            "field is immutable",
        ));
    }
    errs
}

/// Upstream `validateCSIDriverSpec` (note upstream's field path
/// `spec.attachedRequired`).
pub fn validate_csi_driver(obj: &Value) -> Vec<FieldError> {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let mut errs = Vec::new();
    for (key, path) in [
        ("attachRequired", "spec.attachedRequired"),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
        ("seLinuxMount", "spec.seLinuxMount"),
    ] {
        if spec.get(key).is_none_or(Value::is_null) {
            errs.push(FieldError::required(path, ""));
        }
    }
    let policies = ["File", "None", "ReadWriteOnceWithFSType"];
    if let Some(p) = spec.get("fsGroupPolicy").and_then(Value::as_str)
        && !policies.contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.fsGroupPolicy",
            json!(p),
            &policies,
        ));
    }
    errs.extend(validate_token_requests(spec));
    for mode in items(spec, "volumeLifecycleModes") {
        let m = mode.as_str().unwrap_or_default();
        if !["Persistent", "Ephemeral"].contains(&m) {
            errs.push(FieldError::not_supported(
                "spec.volumeLifecycleModes",
                json!(m),
                &["Persistent", "Ephemeral"],
            ));
        }
    }
    errs
}

fn validate_token_requests(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, t) in items(spec, "tokenRequests").enumerate() {
        let audience = str_at(t, &["audience"]);
        if seen.contains(&audience) {
            errs.push(FieldError::duplicate(
                format!("spec.tokenRequests[{i}].audience"),
                json!(audience),
            ));
            continue;
        }
        seen.push(audience);
        let path = format!("spec.tokenRequests[{i}].expirationSeconds");
        match t.get("expirationSeconds").and_then(Value::as_i64) {
            Some(s) if s < 600 => errs.push(FieldError::invalid(
                path,
                json!(s),
                "may not specify a duration less than 10 minutes",
            )),
            Some(s) if s > 1 << 32 => errs.push(FieldError::invalid(
                path,
                json!(s),
                "may not specify a duration larger than 2^32 seconds",
            )),
            _ => {}
        }
    }
    errs
}

/// Upstream `ValidateCSIDriverUpdate`: attachRequired and the lifecycle
/// modes are fixed.
pub fn validate_csi_driver_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, path) in [
        ("attachRequired", "spec.attachedRequired"),
        ("volumeLifecycleModes", "spec.volumeLifecycleModes"),
    ] {
        let (n, o) = (at(new, &["spec", key]), at(old, &["spec", key]));
        if !sem_eq(n, o) {
            errs.push(FieldError::invalid(
                path,
                n.cloned().unwrap_or(Value::Null),
                "field is immutable",
            ));
        }
    }
    errs
}

// ---------------------------------------------------------------------------
// Shared rules

/// Required (with `required_detail`) when empty; each mode supported;
/// ReadWriteOncePod alone.
fn validate_access_modes(spec: &Value, path: &str, required_detail: &str) -> Vec<FieldError> {
    let modes: Vec<&str> = items(spec, "accessModes")
        .map(|m| m.as_str().unwrap_or_default())
        .collect();
    let mut errs = Vec::new();
    if modes.is_empty() {
        errs.push(FieldError::required(path, required_detail));
    }
    let (mut rwop, mut other) = (false, false);
    for m in &modes {
        if !ACCESS_MODES.contains(m) {
            errs.push(FieldError::not_supported(path, json!(m), &ACCESS_MODES));
        } else if *m == "ReadWriteOncePod" {
            rwop = true;
        } else {
            other = true;
        }
    }
    if rwop && other {
        errs.push(FieldError::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

fn validate_volume_mode(spec: &Value) -> Vec<FieldError> {
    match spec.get("volumeMode").and_then(Value::as_str) {
        Some(m) if !VOLUME_MODES.contains(&m) => vec![FieldError::not_supported(
            "spec.volumeMode",
            json!(m),
            &VOLUME_MODES,
        )],
        _ => Vec::new(),
    }
}

/// Upstream `ValidateClassName` (a DNS subdomain) on a non-empty class name.
fn validate_class_name(spec: &Value, key: &str, path: &str) -> Vec<FieldError> {
    let name = str_at(spec, &[key]);
    if name.is_empty() {
        return Vec::new();
    }
    is_dns1123_subdomain(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path, json!(name), msg))
        .collect()
}

/// Upstream `ValidatePositiveQuantityValue`.
fn positive_quantity(q: &Value, path: &str) -> Vec<FieldError> {
    match quantity_value(q) {
        Some(n) if n > 0.0 => Vec::new(),
        _ => vec![FieldError::invalid(path, q.clone(), "must be greater than zero")],
    }
}

/// The top-level keys whose values differ semantically, sorted.
fn changed_keys(old: &Value, new: &Value) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for v in [old, new] {
        keys.extend(v.as_object().into_iter().flat_map(|m| m.keys().cloned()));
    }
    keys.sort();
    keys.dedup();
    keys.retain(|k| !sem_eq(old.get(k), new.get(k)));
    keys
}

/// A short rendering of what changed, in the shape of upstream's
/// `cmp.Diff` (`- old`, `+ new` per changed field).
fn field_diff(type_name: &str, old: &Value, new: &Value, keys: &[&str]) -> String {
    let mut out = format!("  {type_name}{{\n");
    for k in keys {
        let show = |v: Option<&Value>| v.map_or("nil".to_string(), Value::to_string);
        let field = go_field_name(k);
        out.push_str(&format!(
            "- \t{field}: {},\n+ \t{field}: {},\n",
            show(old.get(*k)),
            show(new.get(*k))
        ));
    }
    out.push_str("  }\n");
    out
}

fn go_field_name(k: &str) -> String {
    let mut c = k.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// The class a claim or volume names: the beta annotation wins over
/// `spec.storageClassName` (upstream `GetPersistentVolumeClaimClass` /
/// `GetPersistentVolumeClass`).
pub fn class_of(obj: &Value) -> &str {
    match at(obj, &["metadata", "annotations", BETA_STORAGE_CLASS]).and_then(Value::as_str) {
        Some(c) => c,
        None => str_at(obj, &["spec", "storageClassName"]),
    }
}

/// Whether a StorageClass is marked default (either annotation `"true"`).
pub fn is_default_class(sc: &Value) -> bool {
    [IS_DEFAULT_CLASS, BETA_IS_DEFAULT_CLASS]
        .iter()
        .any(|a| at(sc, &["metadata", "annotations", a]).and_then(Value::as_str) == Some("true"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pvc(spec: Value) -> Value {
        json!({"metadata": {"name": "data", "namespace": "default"}, "spec": spec})
    }

    fn rendered(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn claim_defaults_and_requirements() {
        let mut c = pvc(json!({}));
        default_persistent_volume_claim(&mut c);
        assert_eq!(c["spec"]["volumeMode"], "Filesystem");
        assert_eq!(c["status"]["phase"], "Pending");
        assert_eq!(
            rendered(&validate_persistent_volume_claim(&c)),
            [
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value",
            ]
        );
        let ok =
            pvc(json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}));
        assert!(validate_persistent_volume_claim(&ok).is_empty());
        let bad = pvc(
            json!({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "Sometimes"],
            "resources": {"requests": {"storage": "0"}}, "storageClassName": "Fast_SSD"}),
        );
        let errs = rendered(&validate_persistent_volume_claim(&bad));
        assert_eq!(errs.len(), 4, "{errs:?}");
        assert!(errs[0].starts_with(
            "spec.accessModes: Unsupported value: \"Sometimes\": supported values: \"ReadOnlyMany\""
        ));
        assert_eq!(
            errs[1],
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"
        );
        assert_eq!(
            errs[2],
            "spec.resources[storage]: Invalid value: \"0\": must be greater than zero"
        );
        assert!(errs[3].starts_with(
            "spec.storageClassName: Invalid value: \"Fast_SSD\": a lowercase RFC 1123 subdomain"
        ));
    }

    #[test]
    fn claim_spec_is_frozen_but_for_binding_and_expansion() {
        let old = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending"}});
        let mut bind = old.clone();
        bind["spec"]["volumeName"] = json!("pv-1");
        assert!(validate_persistent_volume_claim_update(&bind, &old).is_empty());
        let mut grow = old.clone();
        grow["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        let errs = rendered(&validate_persistent_volume_claim_update(&grow, &old));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with(
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"
        ));
        let mut bound = old.clone();
        bound["spec"]["volumeName"] = json!("pv-1");
        bound["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
        let mut grow = bound.clone();
        grow["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        assert!(validate_persistent_volume_claim_update(&grow, &bound).is_empty());
        let mut shrink = bound.clone();
        shrink["spec"]["resources"]["requests"]["storage"] = json!("512Mi");
        assert_eq!(
            rendered(&validate_persistent_volume_claim_update(&shrink, &bound)),
            ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
        );
    }

    #[test]
    fn volume_needs_exactly_one_source_and_storage_capacity() {
        let mut pv = json!({"metadata": {"name": "pv"}, "spec": {}});
        default_persistent_volume(&mut pv);
        assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(
            rendered(&validate_persistent_volume(&pv)),
            [
                "spec.accessModes: Required value",
                "spec.capacity: Required value",
                "spec.capacity: Unsupported value: \"map[string]string(nil)\": supported values: \"storage\"",
                "spec: Required value: must specify a volume type",
            ]
        );
        let two = json!({"spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
            "hostPath": {"path": "/x"}, "nfs": {"server": "s", "path": "/"}}});
        assert_eq!(
            rendered(&validate_persistent_volume(&two)),
            ["spec.nfs: Forbidden: may not specify more than 1 volume type"]
        );
        let local = json!({"spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
            "local": {"path": "/x"}}});
        assert_eq!(
            rendered(&validate_persistent_volume(&local)),
            ["spec.nodeAffinity: Required value: Local volume requires node affinity"]
        );
    }

    #[test]
    fn volume_source_is_immutable() {
        let old = json!({"spec": {"hostPath": {"path": "/a"}, "volumeMode": "Filesystem"}});
        let new = json!({"spec": {"hostPath": {"path": "/b"}, "volumeMode": "Filesystem"}});
        let errs = rendered(&validate_persistent_volume_update(&new, &old));
        assert!(errs[0].starts_with(
            "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n"
        ));
    }

    #[test]
    fn storage_class_rules() {
        let mut sc = json!({"metadata": {"name": "fast"}, "provisioner": "example.com/fast"});
        default_storage_class(&mut sc);
        assert_eq!(sc["reclaimPolicy"], "Delete");
        assert_eq!(sc["volumeBindingMode"], "Immediate");
        assert!(validate_storage_class(&sc).is_empty());
        let bad = json!({"reclaimPolicy": "Recycle", "volumeBindingMode": "Later"});
        assert_eq!(
            rendered(&validate_storage_class(&bad)),
            [
                "provisioner: Required value",
                "reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
                "volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"",
            ]
        );
        let mut changed = sc.clone();
        changed["provisioner"] = json!("other.io/x");
        changed["reclaimPolicy"] = json!("Retain");
        assert_eq!(
            rendered(&validate_storage_class_update(&changed, &sc)),
            [
                "provisioner: Forbidden: updates to provisioner are forbidden.",
                "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
            ]
        );
    }

    #[test]
    fn csi_driver_defaults_validate() {
        let mut d = json!({"metadata": {"name": "x.csi.io"}, "spec": {}});
        default_csi_driver(&mut d);
        assert_eq!(d["spec"]["attachRequired"], true);
        assert_eq!(d["spec"]["volumeLifecycleModes"], json!(["Persistent"]));
        assert!(validate_csi_driver(&d).is_empty());
        let bad = json!({"spec": {"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
            "seLinuxMount": false, "volumeLifecycleModes": ["Forever"],
            "tokenRequests": [{"audience": "a", "expirationSeconds": 60}]}});
        assert_eq!(
            rendered(&validate_csi_driver(&bad)),
            [
                "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
                "spec.volumeLifecycleModes: Unsupported value: \"Forever\": supported values: \"Persistent\", \"Ephemeral\"",
            ]
        );
        let mut flipped = d.clone();
        flipped["spec"]["attachRequired"] = json!(false);
        assert_eq!(
            rendered(&validate_csi_driver_update(&flipped, &d)),
            ["spec.attachedRequired: Invalid value: false: field is immutable"]
        );
    }

    #[test]
    fn default_class_and_class_of() {
        let sc = json!({"metadata": {"annotations": {IS_DEFAULT_CLASS: "true"}}});
        assert!(is_default_class(&sc));
        assert!(!is_default_class(&json!({"metadata": {}})));
        let c = json!({"metadata": {"annotations": {BETA_STORAGE_CLASS: "old"}}, "spec": {"storageClassName": "new"}});
        assert_eq!(class_of(&c), "old");
    }
}
