//! Tables of core/v1 PersistentVolume and PersistentVolumeClaim and of
//! storage.k8s.io/v1 StorageClass and CSIDriver.
//!
//! Upstream: `persistentVolumeColumnDefinitions`, `printPersistentVolume`,
//! `persistentVolumeClaimColumnDefinitions`, `printPersistentVolumeClaim`,
//! `storageClassColumnDefinitions`, `printStorageClass`,
//! `csiDriverColumnDefinitions`, `printCSIDriver` of
//! `pkg/printers/internalversion/printers.go`, and `GetAccessModesAsString`
//! of `pkg/apis/core/helper/helpers.go`.
//! Simplified: quantities are printed as stored, not re-serialized in
//! canonical form; long column descriptions keep their first paragraph.

use serde_json::{Value, json};

use super::helpers::{is_deleting, strings};
use super::{Row, TablePrinter, col, wide};
use crate::jsonpath::{at, str_at};
use crate::kinds::storage::{class_of, is_default_class};

// ---------------------------------------------------------------------------
// PersistentVolume
// ---------------------------------------------------------------------------

pub(super) static PERSISTENT_VOLUME: TablePrinter = TablePrinter::named(
    &[
        col("Capacity", "string", D_PV_CAPACITY),
        col("Access Modes", "string", D_PV_ACCESS_MODES),
        col("Reclaim Policy", "string", D_RECLAIM_POLICY),
        col("Status", "string", D_PV_PHASE),
        col("Claim", "string", D_CLAIM_REF),
        col("StorageClass", "string", "StorageClass of the pv"),
        col(
            "VolumeAttributesClass",
            "string",
            "VolumeAttributesClass of the pv",
        ),
        col("Reason", "string", D_PV_REASON),
    ],
    &[wide("VolumeMode", "string", D_PV_VOLUME_MODE)],
    print_persistent_volume,
);

const D_PV_CAPACITY: &str = "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity";
const D_PV_ACCESS_MODES: &str = "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes";
const D_RECLAIM_POLICY: &str = "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming";
const D_PV_PHASE: &str = "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase";
const D_CLAIM_REF: &str = "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding";
const D_PV_REASON: &str = "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.";
const D_PV_VOLUME_MODE: &str = "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.";

fn print_persistent_volume(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let claim = match at(obj, &["spec", "claimRef"]) {
        Some(c) => format!("{}/{}", str_at(c, &["namespace"]), str_at(c, &["name"])),
        None => String::new(),
    };
    let capacity = quantity(at(obj, &["spec", "capacity", "storage"]));
    let cells = [
        json!(capacity),
        json!(access_modes(at(obj, &["spec", "accessModes"]))),
        json!(str_at(obj, &["spec", "persistentVolumeReclaimPolicy"])),
        json!(phase(obj)),
        json!(claim),
        json!(class_of(obj)),
        json!(unset_or(obj, "volumeAttributesClassName")),
        json!(str_at(obj, &["status", "reason"])),
    ];
    r.named(cells, [json!(unset_or(obj, "volumeMode"))])
}

// ---------------------------------------------------------------------------
// PersistentVolumeClaim
// ---------------------------------------------------------------------------

pub(super) static PERSISTENT_VOLUME_CLAIM: TablePrinter = TablePrinter::named(
    &[
        col(
            "Status",
            "string",
            "phase represents the current phase of PersistentVolumeClaim.",
        ),
        col(
            "Volume",
            "string",
            "volumeName is the binding reference to the PersistentVolume backing this claim.",
        ),
        col(
            "Capacity",
            "string",
            "capacity represents the actual resources of the underlying volume.",
        ),
        col("Access Modes", "string", D_PVC_ACCESS_MODES),
        col("StorageClass", "string", "StorageClass of the pvc"),
        col(
            "VolumeAttributesClass",
            "string",
            "VolumeAttributesClass of the pvc",
        ),
    ],
    &[wide("VolumeMode", "string", D_PVC_VOLUME_MODE)],
    print_persistent_volume_claim,
);

const D_PVC_ACCESS_MODES: &str = "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1";
const D_PVC_VOLUME_MODE: &str = "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.";

fn print_persistent_volume_claim(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let volume = str_at(obj, &["spec", "volumeName"]);
    // Capacity and access modes are shown only once the claim names its volume.
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(at(obj, &["status", "capacity", "storage"])),
            access_modes(at(obj, &["status", "accessModes"])),
        )
    };
    let cells = [
        json!(phase(obj)),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(class_of(obj)),
        json!(unset_or(obj, "volumeAttributesClassName")),
    ];
    r.named(cells, [json!(unset_or(obj, "volumeMode"))])
}

// ---------------------------------------------------------------------------
// StorageClass
// ---------------------------------------------------------------------------

pub(super) static STORAGE_CLASS: TablePrinter = TablePrinter::named(
    &[
        col(
            "Provisioner",
            "string",
            "provisioner indicates the type of the provisioner.",
        ),
        col("ReclaimPolicy", "string", D_SC_RECLAIM),
        col("VolumeBindingMode", "string", D_SC_BINDING),
        col(
            "AllowVolumeExpansion",
            "string",
            "allowVolumeExpansion shows whether the storage class allow volume expand.",
        ),
    ],
    &[],
    print_storage_class,
);

const D_SC_RECLAIM: &str = "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.";
const D_SC_BINDING: &str = "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.";

fn print_storage_class(r: &Row) -> Vec<Value> {
    let obj = r.obj;
    let mut name = str_at(obj, &["metadata", "name"]).to_string();
    if is_default_class(obj) {
        name.push_str(" (default)");
    }
    let or = |key: &str, default: &str| {
        let v = str_at(obj, &[key]);
        if v.is_empty() {
            default.to_string()
        } else {
            v.to_string()
        }
    };
    let mut cells = vec![
        json!(name),
        json!(str_at(obj, &["provisioner"])),
        json!(or("reclaimPolicy", "Delete")),
        json!(or("volumeBindingMode", "Immediate")),
        json!(
            obj.get("allowVolumeExpansion")
                .and_then(Value::as_bool)
                .unwrap_or(false)
        ),
    ];
    cells.push(r.age());
    cells
}

// ---------------------------------------------------------------------------
// CSIDriver
// ---------------------------------------------------------------------------

pub(super) static CSI_DRIVER: TablePrinter = TablePrinter::named(
    &[
        col("AttachRequired", "boolean", D_ATTACH_REQUIRED),
        col("PodInfoOnMount", "boolean", D_POD_INFO),
        col("StorageCapacity", "boolean", D_STORAGE_CAPACITY),
        col("TokenRequests", "string", D_TOKEN_REQUESTS),
        col("RequiresRepublish", "boolean", D_REPUBLISH),
        col("Modes", "string", D_MODES),
    ],
    &[],
    print_csi_driver,
);

const D_ATTACH_REQUIRED: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the CSIDriverRegistry feature gate is enabled and the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.";
const D_POD_INFO: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.";
const D_STORAGE_CAPACITY: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.";
const D_TOKEN_REQUESTS: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls.";
const D_REPUBLISH: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.";
const D_MODES: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.";

fn print_csi_driver(r: &Row) -> Vec<Value> {
    let spec = r.obj.get("spec").cloned().unwrap_or(json!({}));
    let flag = |key: &str, default: bool| json!(spec.get(key).and_then(Value::as_bool).unwrap_or(default));
    let modes = strings(spec.get("volumeLifecycleModes")).join(",");
    let tokens = match spec.get("tokenRequests").and_then(Value::as_array) {
        Some(list) => list
            .iter()
            .map(|t| str_at(t, &["audience"]))
            .collect::<Vec<_>>()
            .join(","),
        None => "<unset>".to_string(),
    };
    let cells = [
        flag("attachRequired", true),
        flag("podInfoOnMount", false),
        flag("storageCapacity", false),
        json!(tokens),
        flag("requiresRepublish", false),
        json!(if modes.is_empty() {
            "<none>".to_string()
        } else {
            modes
        }),
    ];
    r.named(cells, [])
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// `status.phase`, or `Terminating` once deletion has begun.
fn phase(obj: &Value) -> String {
    if is_deleting(obj) {
        return "Terminating".to_string();
    }
    str_at(obj, &["status", "phase"]).to_string()
}

/// A `spec` field, or `<unset>`.
fn unset_or<'a>(obj: &'a Value, key: &str) -> &'a str {
    at(obj, &["spec", key])
        .and_then(Value::as_str)
        .unwrap_or("<unset>")
}

/// A quantity as stored; a missing one is the zero quantity, `0`.
fn quantity(q: Option<&Value>) -> String {
    match q {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".to_string(),
    }
}

/// Upstream `GetAccessModesAsString`: the short names, deduplicated, in a
/// fixed order.
pub fn access_modes(modes: Option<&Value>) -> String {
    let given = strings(modes);
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(long, _)| given.contains(long))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::{ago, cells, names};

    #[test]
    fn persistent_volume_columns_and_row() {
        assert_eq!(
            names(&PERSISTENT_VOLUME),
            [
                "Name",
                "Capacity",
                "Access Modes",
                "Reclaim Policy",
                "Status",
                "Claim",
                "StorageClass",
                "VolumeAttributesClass",
                "Reason",
                "Age",
                "VolumeMode"
            ]
        );
        let pv = json!({
            "metadata": {"name": "pvc-1", "creationTimestamp": ago(300)},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "standard",
                "claimRef": {"namespace": "default", "name": "data"}, "volumeMode": "Filesystem"},
            "status": {"phase": "Bound"},
        });
        assert_eq!(
            cells(&PERSISTENT_VOLUME, &pv),
            json!([
                "pvc-1",
                "1Gi",
                "RWO,RWX",
                "Delete",
                "Bound",
                "default/data",
                "standard",
                "<unset>",
                "",
                "5m",
                "Filesystem"
            ])
        );
    }

    #[test]
    fn claim_shows_capacity_only_when_it_names_a_volume() {
        let mut pvc = json!({
            "metadata": {"name": "data", "creationTimestamp": ago(60), "deletionTimestamp": ago(1)},
            "spec": {"storageClassName": "standard", "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]},
        });
        assert_eq!(
            cells(&PERSISTENT_VOLUME_CLAIM, &pvc),
            json!([
                "data",
                "Terminating",
                "",
                "",
                "",
                "standard",
                "<unset>",
                "60s",
                "<unset>"
            ])
        );
        pvc["spec"]["volumeName"] = json!("pvc-1");
        assert_eq!(cells(&PERSISTENT_VOLUME_CLAIM, &pvc)[3], json!("1Gi"));
        assert_eq!(cells(&PERSISTENT_VOLUME_CLAIM, &pvc)[4], json!("RWO"));
    }

    #[test]
    fn storage_class_marks_the_default() {
        let sc = json!({
            "metadata": {"name": "standard", "creationTimestamp": ago(10),
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer",
        });
        assert_eq!(
            cells(&STORAGE_CLASS, &sc),
            json!([
                "standard (default)",
                "rancher.io/local-path",
                "Delete",
                "WaitForFirstConsumer",
                false,
                "10s"
            ])
        );
    }

    #[test]
    fn csi_driver_row() {
        let d = json!({"metadata": {"name": "x.csi.io", "creationTimestamp": ago(10)},
            "spec": {"attachRequired": false, "tokenRequests": [{"audience": "a"}, {"audience": "b"}],
                "volumeLifecycleModes": ["Persistent", "Ephemeral"]}});
        assert_eq!(
            cells(&CSI_DRIVER, &d),
            json!([
                "x.csi.io",
                false,
                false,
                false,
                "a,b",
                false,
                "Persistent,Ephemeral",
                "10s"
            ])
        );
        let bare = json!({"metadata": {"name": "y"}, "spec": {}});
        assert_eq!(cells(&CSI_DRIVER, &bare)[4], json!("<unset>"));
        assert_eq!(cells(&CSI_DRIVER, &bare)[6], json!("<none>"));
    }
}
