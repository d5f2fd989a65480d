//! Storage and scheduling classes, end to end with the real `kubectl`:
//! PersistentVolumeClaim, PersistentVolume, StorageClass, CSIDriver,
//! PriorityClass and RuntimeClass; the default StorageClass and the system
//! PriorityClasses of a fresh cluster; a claim provisioned and bound once
//! its pod is scheduled (WaitForFirstConsumer) and reclaimed when deleted;
//! an Immediate claim that holds its pod back until a volume appears; the
//! local-path-provisioner install manifest applied server-side.
//!
//! Every kind goes through create / get (its table) / list / watch /
//! update / patch / delete and shows one upstream validation error with its
//! field path. Every wait is bounded.

use std::time::Duration;

use e2e::Cluster;
use serde_json::Value;

/// Real-time bound of every poll.
const WAIT: Duration = Duration::from_secs(30);

/// The local-path-provisioner install manifest, as published (tests/testdata/manifests).
const LOCAL_PATH_STORAGE: &str = include_str!("../../testdata/manifests/local-path-storage.yaml");

/// Writes `yaml` to a file and runs `kubectl <args> -f` on it.
async fn with_file(c: &Cluster, args: &[&str], yaml: &str) -> e2e::Run {
    c.run_with_yaml(args, yaml).await
}

/// `kubectl apply -f` of `yaml`, which must succeed.
async fn apply(c: &Cluster, yaml: &str) -> String {
    let r = with_file(c, &["apply"], yaml).await;
    assert!(r.success, "apply failed: {}\n{yaml}", r.stderr);
    r.stdout
}

/// `kubectl create -f` of `yaml`, which must fail; returns stderr.
async fn create_fails(c: &Cluster, yaml: &str) -> String {
    c.create_fails(yaml).await
}

/// Polls `kubectl <what> -o json` until `check` holds; returns the object.
async fn eventually(c: &Cluster, what: &[&str], desc: &str, check: impl Fn(&Value) -> bool) -> Value {
    c.eventually_json(what, desc, check).await
}

/// Polls `kubectl <args>` until it fails (the object is gone).
async fn eventually_gone(c: &Cluster, args: &[&str], desc: &str) {
    let polled = tokio::time::timeout(WAIT, async {
        while c.run(args).await.success {
            pause().await;
        }
    });
    polled
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {desc}"));
}

/// A short real-time pause between two polls of the server.
#[allow(clippy::disallowed_methods)] // polling a real server from outside: real time, not simulated
async fn pause() {
    tokio::time::sleep(Duration::from_millis(100)).await;
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The header of a `kubectl get` table, split into words.
fn header(table: &str) -> Vec<String> {
    table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The row of `name` in a `kubectl get` table, split into words.
fn row(table: &str, name: &str) -> Vec<String> {
    table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{table}"))
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Runs `kubectl get <plural> --watch --output-watch-events`, then `act`,
/// and asserts that a line of each `(event, name)` appears, in order.
async fn watch_while(c: &Cluster, plural: &str, needles: &[(&str, &str)], act: impl AsyncFnOnce()) {
    let needles: Vec<String> = needles
        .iter()
        .map(|(event, name)| format!("{event} {name}"))
        .collect();
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    c.watch_while(&[plural], &[], &needles, act).await;
}

/// One kind through kubectl: created (and watched: ADDED, MODIFIED,
/// DELETED), listed, labelled (an update), patched, deleted.
async fn lifecycle(c: &Cluster, plural: &str, name: &str, yaml: &str, patch: &str) {
    let events = [("ADDED", name), ("MODIFIED", name), ("DELETED", name)];
    watch_while(c, plural, &events, async || {
        apply(c, yaml).await;
        let list = c.json(&["get", plural]).await;
        let names: Vec<&str> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| str_at(i, "/metadata/name"))
            .collect();
        assert!(names.contains(&name), "{plural} list: {names:?}");
        c.ok(&["label", plural, name, "tier=gold"]).await;
        let obj = c.json(&["get", plural, name]).await;
        assert_eq!(str_at(&obj, "/metadata/labels/tier"), "gold");
        c.ok(&["patch", plural, name, "--type=merge", "-p", patch]).await;
        c.ok(&["delete", plural, name]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_cluster_has_the_standard_class_and_the_system_priority_classes() {
    let mut c = Cluster::start().await;
    let table = c.ok(&["get", "storageclass"]).await;
    assert_eq!(
        header(&table),
        [
            "NAME",
            "PROVISIONER",
            "RECLAIMPOLICY",
            "VOLUMEBINDINGMODE",
            "ALLOWVOLUMEEXPANSION",
            "AGE"
        ]
    );
    let standard = row(&table, "standard");
    assert_eq!(
        standard[..6],
        [
            "standard",
            "(default)",
            "rancher.io/local-path",
            "Delete",
            "WaitForFirstConsumer",
            "false"
        ]
    );
    let table = c.ok(&["get", "priorityclasses"]).await;
    assert_eq!(
        header(&table),
        ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    );
    assert_eq!(row(&table, "system-node-critical")[1..3], ["2000001000", "false"]);
    assert_eq!(
        row(&table, "system-cluster-critical")[1..3],
        ["2000000000", "false"]
    );
    assert_eq!(row(&table, "system-cluster-critical")[4], "PreemptLowerPriority");
    // A system class cannot be made up, and a user class stays at or below 10^9.
    let err = create_fails(
        &c,
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-mine}\nvalue: 10\n",
    )
    .await;
    assert!(
        err.contains("metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"),
        "{err}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_is_provisioned_and_bound_once_its_pod_is_scheduled_and_deleted_with_it() {
    let mut c = Cluster::start().await;
    apply(
        &c,
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
    )
    .await;
    // The default class was filled in, and the claim waits for its consumer.
    let claim = c.json(&["get", "pvc", "data"]).await;
    assert_eq!(str_at(&claim, "/spec/storageClassName"), "standard");
    assert_eq!(str_at(&claim, "/spec/volumeMode"), "Filesystem");
    let table = c.ok(&["get", "pvc"]).await;
    assert_eq!(
        header(&table),
        [
            "NAME",
            "STATUS",
            "VOLUME",
            "CAPACITY",
            "ACCESS",
            "MODES",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "AGE"
        ]
    );
    assert_eq!(row(&table, "data")[1..4], ["Pending", "standard", "<unset>"]);
    eventually(
        &c,
        &["get", "events", "--field-selector", "reason=WaitForFirstConsumer"],
        "the wait event",
        |l| l["items"].as_array().is_some_and(|i| !i.is_empty()),
    )
    .await;

    apply(
        &c,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: db}\nspec:\n  containers:\n  - {name: db, image: postgres}\n  volumes:\n  - name: data\n    persistentVolumeClaim: {claimName: data}\n",
    )
    .await;
    let uid = str_at(&claim, "/metadata/uid").to_string();
    let pv_name = format!("pvc-{uid}");
    let bound = eventually(&c, &["get", "pvc", "data"], "the claim bound", |v| {
        str_at(v, "/status/phase") == "Bound"
    })
    .await;
    let pod = c.json(&["get", "pod", "db"]).await;
    let node = str_at(&pod, "/spec/nodeName");
    assert!(!node.is_empty(), "the pod was scheduled");
    assert_eq!(str_at(&bound, "/spec/volumeName"), pv_name);
    assert_eq!(
        str_at(
            &bound,
            "/metadata/annotations/volume.kubernetes.io~1selected-node"
        ),
        node
    );
    assert_eq!(
        str_at(&bound, "/metadata/annotations/pv.kubernetes.io~1bind-completed"),
        "yes"
    );
    assert_eq!(
        str_at(
            &bound,
            "/metadata/annotations/pv.kubernetes.io~1bound-by-controller"
        ),
        "yes"
    );
    assert_eq!(str_at(&bound, "/status/capacity/storage"), "1Gi");
    let table = c.ok(&["get", "pvc", "data"]).await;
    assert_eq!(
        row(&table, "data")[1..6],
        ["Bound", pv_name.as_str(), "1Gi", "RWO", "standard"]
    );

    let pv = eventually(&c, &["get", "pv", &pv_name], "the volume bound", |v| {
        str_at(v, "/status/phase") == "Bound"
    })
    .await;
    assert_eq!(
        str_at(&pv, "/metadata/annotations/pv.kubernetes.io~1provisioned-by"),
        "rancher.io/local-path"
    );
    assert_eq!(str_at(&pv, "/spec/persistentVolumeReclaimPolicy"), "Delete");
    assert_eq!(str_at(&pv, "/spec/claimRef/name"), "data");
    let table = c.ok(&["get", "pv"]).await;
    assert_eq!(
        header(&table),
        [
            "NAME",
            "CAPACITY",
            "ACCESS",
            "MODES",
            "RECLAIM",
            "POLICY",
            "STATUS",
            "CLAIM",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "REASON",
            "AGE"
        ]
    );
    assert_eq!(
        row(&table, &pv_name)[1..7],
        ["1Gi", "RWO", "Delete", "Bound", "default/data", "standard"]
    );
    // The kubelet starts the pod once its claim is bound.
    eventually(&c, &["get", "pod", "db"], "the pod running", |p| {
        str_at(p, "/status/phase") == "Running"
    })
    .await;
    let wide = c.ok(&["get", "pvc", "data", "-o", "wide"]).await;
    assert_eq!(header(&wide).last().map(String::as_str), Some("VOLUMEMODE"));

    // The claim's spec is frozen but for the request of a bound claim.
    let err = c
        .fails(&[
            "patch",
            "pvc",
            "data",
            "--type=merge",
            "-p",
            r#"{"spec":{"accessModes":["ReadWriteMany"]}}"#,
        ])
        .await;
    assert!(
        err.contains("spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"),
        "{err}"
    );

    // Delete policy: the volume goes with its claim.
    c.ok(&["delete", "pod", "db", "--wait=false"]).await;
    c.ok(&["delete", "pvc", "data"]).await;
    eventually_gone(&c, &["get", "pv", &pv_name], "the volume deleted").await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unbound_immediate_claim_holds_its_pod_until_a_volume_fits() {
    let mut c = Cluster::start().await;
    apply(
        &c,
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: manual}\nprovisioner: kubernetes.io/no-provisioner\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: logs}\nspec:\n  storageClassName: manual\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 2Gi}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec:\n  containers:\n  - {name: app, image: nginx}\n  volumes:\n  - name: logs\n    persistentVolumeClaim: {claimName: logs}\n",
    )
    .await;
    let pod = eventually(&c, &["get", "pod", "app"], "FailedScheduling", |p| {
        p["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "PodScheduled" && c["reason"] == "Unschedulable")
        })
    })
    .await;
    let condition = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .unwrap();
    assert_eq!(
        condition["message"],
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    // Two static volumes: the smallest that fits is bound, and the pod goes.
    apply(
        &c,
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: big}\nspec:\n  storageClassName: manual\n  accessModes: [ReadWriteOnce]\n  capacity: {storage: 10Gi}\n  hostPath: {path: /srv/big}\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: small}\nspec:\n  storageClassName: manual\n  accessModes: [ReadWriteOnce]\n  capacity: {storage: 3Gi}\n  hostPath: {path: /srv/small}\n",
    )
    .await;
    let claim = eventually(&c, &["get", "pvc", "logs"], "the claim bound", |v| {
        str_at(v, "/status/phase") == "Bound"
    })
    .await;
    assert_eq!(str_at(&claim, "/spec/volumeName"), "small");
    eventually(&c, &["get", "pod", "app"], "the pod scheduled", |p| {
        !str_at(p, "/spec/nodeName").is_empty()
    })
    .await;
    let table = c.ok(&["get", "pv"]).await;
    assert_eq!(row(&table, "big")[3..5], ["Retain", "Available"]);
    assert_eq!(row(&table, "small")[3..6], ["Retain", "Bound", "default/logs"]);
    // Retain: the claim's deletion releases the volume and keeps it.
    c.ok(&["delete", "pod", "app", "--wait=false"]).await;
    c.ok(&["delete", "pvc", "logs"]).await;
    eventually(&c, &["get", "pv", "small"], "the volume released", |v| {
        str_at(v, "/status/phase") == "Released"
    })
    .await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_gets_its_priority_from_the_stored_class() {
    let mut c = Cluster::start().await;
    apply(
        &c,
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\npreemptionPolicy: Never\n",
    )
    .await;
    apply(
        &c,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: important}\nspec:\n  priorityClassName: high\n  containers:\n  - {name: app, image: nginx}\n",
    )
    .await;
    let pod = c.json(&["get", "pod", "important"]).await;
    assert_eq!(pod["spec"]["priority"], 1000);
    assert_eq!(pod["spec"]["preemptionPolicy"], "Never");
    let err = create_fails(
        &c,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: lost}\nspec:\n  priorityClassName: missing\n  containers:\n  - {name: app, image: nginx}\n",
    )
    .await;
    assert!(
        err.contains(r#"Error from server (Forbidden): error when creating"#)
            && err.contains(r#"pods "lost" is forbidden: no PriorityClass with name missing was found"#),
        "{err}"
    );
    // Only one global default.
    apply(&c, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: base}\nvalue: 10\nglobalDefault: true\n").await;
    let err = create_fails(
        &c,
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: other}\nvalue: 20\nglobalDefault: true\n",
    )
    .await;
    assert!(
        err.contains("PriorityClass base is already marked as default. Only one default can exist"),
        "{err}"
    );
    apply(&c, "apiVersion: v1\nkind: Pod\nmetadata: {name: ordinary}\nspec:\n  containers:\n  - {name: app, image: nginx}\n").await;
    let pod = c.json(&["get", "pod", "ordinary"]).await;
    assert_eq!(
        (&pod["spec"]["priorityClassName"], &pod["spec"]["priority"]),
        (&Value::from("base"), &Value::from(10))
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_class_kind_through_kubectl_with_its_table_and_a_validation_error() {
    let mut c = Cluster::start().await;
    // PersistentVolume
    lifecycle(
        &c,
        "persistentvolumes",
        "pv-a",
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-a}\nspec:\n  accessModes: [ReadWriteMany]\n  capacity: {storage: 5Gi}\n  nfs: {server: nfs.example.com, path: /exports}\n",
        r#"{"spec":{"persistentVolumeReclaimPolicy":"Delete"}}"#,
    )
    .await;
    let err = create_fails(&c, "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: bad}\nspec:\n  accessModes: [ReadWriteOnce]\n  capacity: {storage: 1Gi}\n").await;
    assert!(
        err.contains(
            r#"The PersistentVolume "bad" is invalid: spec: Required value: must specify a volume type"#
        ),
        "{err}"
    );
    // PersistentVolumeClaim (class "" : no provisioning, no default class)
    lifecycle(
        &c,
        "persistentvolumeclaims",
        "claim-a",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: claim-a}\nspec:\n  storageClassName: \"\"\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
        r#"{"metadata":{"annotations":{"note":"patched"}}}"#,
    )
    .await;
    let err = create_fails(&c, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: bad}\nspec:\n  resources: {requests: {storage: 1Gi}}\n").await;
    assert!(
        err.contains(r#"The PersistentVolumeClaim "bad" is invalid: spec.accessModes: Required value: at least 1 access mode is required"#),
        "{err}"
    );
    // StorageClass
    lifecycle(
        &c,
        "storageclasses",
        "fast",
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: example.com/fast\nallowVolumeExpansion: true\n",
        r#"{"allowVolumeExpansion":false}"#,
    )
    .await;
    let err = create_fails(&c, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: bad}\nprovisioner: example.com/x\nreclaimPolicy: Recycle\n").await;
    assert!(
        err.contains(r#"reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain""#),
        "{err}"
    );
    apply(&c, "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: kept}\nprovisioner: example.com/fast\n").await;
    let err = c
        .fails(&[
            "patch",
            "sc",
            "kept",
            "--type=merge",
            "-p",
            r#"{"provisioner":"example.com/other"}"#,
        ])
        .await;
    assert!(
        err.contains("provisioner: Forbidden: updates to provisioner are forbidden."),
        "{err}"
    );
    // CSIDriver
    lifecycle(
        &c,
        "csidrivers",
        "hostpath.csi.k8s.io",
        "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: hostpath.csi.k8s.io}\nspec:\n  attachRequired: false\n  volumeLifecycleModes: [Persistent, Ephemeral]\n",
        r#"{"spec":{"podInfoOnMount":true}}"#,
    )
    .await;
    apply(&c, "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: hostpath.csi.k8s.io}\nspec:\n  attachRequired: false\n  volumeLifecycleModes: [Persistent, Ephemeral]\n").await;
    let table = c.ok(&["get", "csidrivers"]).await;
    assert_eq!(
        header(&table),
        [
            "NAME",
            "ATTACHREQUIRED",
            "PODINFOONMOUNT",
            "STORAGECAPACITY",
            "TOKENREQUESTS",
            "REQUIRESREPUBLISH",
            "MODES",
            "AGE"
        ]
    );
    assert_eq!(
        row(&table, "hostpath.csi.k8s.io")[1..7],
        [
            "false",
            "false",
            "false",
            "<unset>",
            "false",
            "Persistent,Ephemeral"
        ]
    );
    let err = create_fails(&c, "apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata: {name: bad.csi.io}\nspec:\n  tokenRequests: [{audience: vault, expirationSeconds: 60}]\n").await;
    assert!(
        err.contains("spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"),
        "{err}"
    );
    // PriorityClass
    lifecycle(
        &c,
        "priorityclasses",
        "batch-low",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch-low}\nvalue: -5\ndescription: batch\n",
        r#"{"description":"batch jobs"}"#,
    )
    .await;
    let err = create_fails(&c, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: too-high}\nvalue: 1000000001\n").await;
    assert!(
        err.contains("value: Forbidden: maximum allowed value of a user defined priority is 1000000000"),
        "{err}"
    );
    apply(
        &c,
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: fixed}\nvalue: 7\n",
    )
    .await;
    let err = c
        .fails(&["patch", "pc", "fixed", "--type=merge", "-p", r#"{"value":8}"#])
        .await;
    assert!(
        err.contains("value: Forbidden: may not be changed in an update."),
        "{err}"
    );
    // RuntimeClass
    lifecycle(
        &c,
        "runtimeclasses",
        "gvisor",
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\n",
        r#"{"metadata":{"annotations":{"note":"sandboxed"}}}"#,
    )
    .await;
    apply(
        &c,
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\n",
    )
    .await;
    let table = c.ok(&["get", "runtimeclasses"]).await;
    assert_eq!(header(&table), ["NAME", "HANDLER", "AGE"]);
    assert_eq!(row(&table, "kata")[1], "kata");
    let err = c
        .fails(&[
            "patch",
            "runtimeclass",
            "kata",
            "--type=merge",
            "-p",
            r#"{"handler":"runc"}"#,
        ])
        .await;
    assert!(
        err.contains(r#"handler: Invalid value: "runc": field is immutable"#),
        "{err}"
    );
    let err = create_fails(
        &c,
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: bad}\nhandler: Bad_Handler\n",
    )
    .await;
    assert!(
        err.contains(r#"handler: Invalid value: "Bad_Handler": a lowercase RFC 1123 label"#),
        "{err}"
    );
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_path_provisioner_manifest_applies_server_side() {
    let mut c = Cluster::start().await;
    let r = with_file(&c, &["apply", "--server-side"], LOCAL_PATH_STORAGE).await;
    assert!(r.success, "server-side apply failed: {}", r.stderr);
    assert!(
        r.stdout
            .contains("storageclass.storage.k8s.io/local-path serverside-applied"),
        "{}",
        r.stdout
    );
    let sc = c.json(&["get", "storageclass", "local-path"]).await;
    assert_eq!(str_at(&sc, "/provisioner"), "rancher.io/local-path");
    assert_eq!(str_at(&sc, "/volumeBindingMode"), "WaitForFirstConsumer");
    assert_eq!(str_at(&sc, "/reclaimPolicy"), "Delete");
    let table = c.ok(&["get", "sc"]).await;
    assert_eq!(
        row(&table, "local-path")[1..4],
        ["rancher.io/local-path", "Delete", "WaitForFirstConsumer"]
    );
    // Applied again, nothing changes.
    let again = with_file(&c, &["apply", "--server-side"], LOCAL_PATH_STORAGE).await;
    assert!(again.success, "{}", again.stderr);
    c.stop().await;
}
