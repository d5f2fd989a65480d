//! What a careless or hostile client cannot do: store a value of the wrong
//! type, grow an object without bound with a small patch, store an object
//! larger than etcd would take, or delete the namespaces a cluster needs.

use apiserver::api::{DeleteOptions, ListOptions, PatchType, WriteOptions};
use apiserver::error::Reason;
use apiserver::testkit::{TestApi, by, deployment};
use serde_json::{Value, json};

fn opts() -> WriteOptions {
    by("test")
}

fn configmap(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

#[tokio::test]
async fn a_body_of_the_wrong_type_is_400_and_not_stored() {
    let api = TestApi::builder().build().await;
    let cms = api.resource("", "v1", "configmaps").unwrap();
    let err = api
        .create(&cms, Some("default"), configmap("c", json!({"a": 5})), &opts())
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::BadRequest);
    assert_eq!(
        err.message,
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    );
    assert!(api.get(&cms, Some("default"), "c").is_err());

    let deploys = api.resource("apps", "v1", "deployments").unwrap();
    let created = api
        .create(&deploys, Some("default"), deployment("web"), &opts())
        .await
        .unwrap()
        .object;
    let mut bad = created.clone();
    bad["spec"]["replicas"] = json!("abc");
    let err = api
        .update(&deploys, Some("default"), "web", bad, None, &opts())
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::BadRequest);
    assert!(
        err.message
            .ends_with("Go struct field DeploymentSpec.spec.replicas of type int32")
    );
}

#[tokio::test]
async fn a_patch_that_makes_a_wrong_type_is_422_for_every_patch_type() {
    let api = TestApi::builder().build().await;
    let deploys = api.resource("apps", "v1", "deployments").unwrap();
    api.create(&deploys, Some("default"), deployment("web"), &opts())
        .await
        .unwrap();
    let patches = [
        (PatchType::Merge, json!({"spec": {"replicas": "abc"}})),
        (PatchType::Strategic, json!({"spec": {"replicas": "abc"}})),
        (
            PatchType::Json,
            json!([{"op": "replace", "path": "/spec/replicas", "value": "abc"}]),
        ),
    ];
    for (patch_type, patch) in patches {
        let err = api
            .patch(
                &deploys,
                Some("default"),
                "web",
                patch_type,
                &patch,
                None,
                &opts(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.reason, Reason::Invalid, "{patch_type:?}: {}", err.message);
        assert!(err.message.contains("patch: Invalid value: "), "{}", err.message);
        assert!(err.message.ends_with("of type int32"), "{}", err.message);
    }
    let live = api.get(&deploys, Some("default"), "web").unwrap();
    assert_eq!(live["spec"]["replicas"], 1);
}

#[tokio::test]
async fn copy_operations_cannot_blow_an_object_up() {
    let api = TestApi::builder().build().await;
    let cms = api.resource("", "v1", "configmaps").unwrap();
    api.create(
        &cms,
        Some("default"),
        configmap("c", json!({"v": "x".repeat(1024)})),
        &opts(),
    )
    .await
    .unwrap();
    // The 746-byte patch of the report: 14 copies of /data into itself.
    let ops: Vec<Value> = (0..14)
        .map(|i| json!({"op": "copy", "from": "/data", "path": format!("/data/c{i}")}))
        .collect();
    let err = api
        .patch(
            &cms,
            Some("default"),
            "c",
            PatchType::Json,
            &Value::Array(ops),
            None,
            &opts(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::Invalid);
    assert!(
        err.message.contains("accumulated size increase of copy"),
        "{}",
        err.message
    );

    let many: Vec<Value> = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/data/v", "value": "x"}))
        .collect();
    let err = api
        .patch(
            &cms,
            Some("default"),
            "c",
            PatchType::Json,
            &Value::Array(many),
            None,
            &opts(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::RequestEntityTooLarge);
    let live = api.get(&cms, Some("default"), "c").unwrap();
    assert_eq!(live["data"].as_object().unwrap().len(), 1);
}

/// A Deployment whose container has one argument of `size` bytes (ConfigMaps
/// and annotations have smaller limits of their own).
fn deployment_with_arg(name: &str, size: usize) -> Value {
    let mut d = deployment(name);
    d["spec"]["template"]["spec"]["containers"][0]["args"] = json!(["x".repeat(size)]);
    d
}

#[tokio::test]
async fn objects_larger_than_etcd_takes_are_413_on_every_write() {
    let api = TestApi::builder().build().await;
    let deploys = api.resource("apps", "v1", "deployments").unwrap();
    let err = api
        .create(
            &deploys,
            Some("default"),
            deployment_with_arg("big", 1536 * 1024),
            &opts(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::RequestEntityTooLarge);
    assert_eq!(err.message, "etcdserver: request is too large");

    // Just under the limit is fine; growing it past the limit is not.
    let created = api
        .create(
            &deploys,
            Some("default"),
            deployment_with_arg("web", 1536 * 1024 - 4096),
            &opts(),
        )
        .await
        .unwrap()
        .object;
    let grow = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"template": {"spec": {"containers": [{"name": "c", "command": ["y".repeat(8192)]}]}}}});
    let err = api
        .patch(
            &deploys,
            Some("default"),
            "web",
            PatchType::Strategic,
            &grow,
            None,
            &opts(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::RequestEntityTooLarge);
    let copy = json!([{"op": "copy", "from": "/spec/template/spec/containers/0/args", "path": "/spec/template/spec/containers/0/command"}]);
    let err = api
        .patch(
            &deploys,
            Some("default"),
            "web",
            PatchType::Json,
            &copy,
            None,
            &opts(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::RequestEntityTooLarge);
    let mut put = created.clone();
    put["spec"]["template"]["spec"]["containers"][0]["command"] = json!(["z".repeat(8192)]);
    let err = api
        .update(&deploys, Some("default"), "web", put, None, &opts())
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::RequestEntityTooLarge);
    let live = api.get(&deploys, Some("default"), "web").unwrap();
    assert!(live.pointer("/spec/template/spec/containers/0/command").is_none());
}

#[tokio::test]
async fn the_system_namespaces_cannot_be_deleted() {
    let api = TestApi::builder().build().await;
    let namespaces = api.resource("", "v1", "namespaces").unwrap();
    for name in ["default", "kube-system", "kube-public"] {
        let err = api
            .delete(&namespaces, None, name, &DeleteOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.reason, Reason::Forbidden);
        assert_eq!(
            err.message,
            format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
        );
        let live = api.get(&namespaces, None, name).unwrap();
        assert!(live.pointer("/metadata/deletionTimestamp").is_none());
    }
    // A collection delete refuses them but still deletes the others.
    api.create(
        &namespaces,
        None,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "scratch"}}),
        &opts(),
    )
    .await
    .unwrap();
    let err = api
        .delete_collection(
            &namespaces,
            None,
            &ListOptions::default(),
            &DeleteOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::Forbidden);
    let scratch = api.get(&namespaces, None, "scratch").unwrap();
    assert!(scratch.pointer("/metadata/deletionTimestamp").is_some());
    let cms = api.resource("", "v1", "configmaps").unwrap();
    api.create(&cms, Some("default"), configmap("after", json!({})), &opts())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_grace_period_beyond_any_date_is_kept_without_overflow() {
    // Found by the reliability suite's fuzzer: i64::MAX seconds dropped the connection.
    let api = TestApi::builder().build().await;
    let pods = api.resource("", "v1", "pods").unwrap();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox"}]}});
    api.create(&pods, Some("default"), pod, &opts()).await.unwrap();
    let opts = DeleteOptions {
        grace_period: Some(i64::MAX),
        ..Default::default()
    };
    api.delete(&pods, Some("default"), "p", &opts).await.unwrap();
    let live = api.get(&pods, Some("default"), "p").unwrap();
    assert_eq!(live["metadata"]["deletionGracePeriodSeconds"], i64::MAX);
    let at = live["metadata"]["deletionTimestamp"].as_str().unwrap();
    assert!(at > "2999-01-01", "{at}");
}
