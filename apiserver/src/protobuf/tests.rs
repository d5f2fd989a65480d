//! Tests for the protobuf decoder.
//!
//! `testdata/protobuf/NAME.pb` are bodies captured from kubectl 1.33 on a
//! loopback listener; `NAME.json` is what kubectl 1.31 sent as JSON for the
//! same command. Decoding the first must give the second, once Go's
//! `null`s, empty structs and the ignored `status` are taken out of it.

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::batch::v1 as batch;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::{Value, json};

use super::{DecodeError, decode, is_protobuf};

/// Wraps an encoded object the way client-go does.
fn wrap_raw(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = b"k8s\0".to_vec();
    body.extend(unknown.encode_to_vec());
    body
}

fn wrap(api_version: &str, kind: &str, message: &impl Message) -> Vec<u8> {
    wrap_raw(api_version, kind, message.encode_to_vec())
}

fn named(name: &str) -> Option<meta::ObjectMeta> {
    Some(meta::ObjectMeta {
        name: Some(name.to_owned()),
        ..Default::default()
    })
}

fn container(name: &str, image: &str) -> core::Container {
    core::Container {
        name: Some(name.to_owned()),
        image: Some(image.to_owned()),
        ..Default::default()
    }
}

fn template(containers: Vec<core::Container>) -> Option<core::PodTemplateSpec> {
    Some(core::PodTemplateSpec {
        metadata: None,
        spec: Some(core::PodSpec {
            containers,
            ..Default::default()
        }),
    })
}

/// Removes what Go's JSON encoder adds and the decoder leaves out: nulls,
/// empty objects (value-type structs), and the top-level `status`.
fn normalize(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        object.remove("status");
    }
    prune(value)
}

fn prune(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, prune(v)))
                .filter(|(_, v)| !v.is_null() && *v != json!({}))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(prune).collect()),
        other => other,
    }
}

macro_rules! fixture_matches_json {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let body = include_bytes!(concat!("../../testdata/protobuf/", stringify!($name), ".pb"));
            let expected = include_str!(concat!("../../testdata/protobuf/", stringify!($name), ".json"));
            let expected = normalize(serde_json::from_str(expected).unwrap());
            assert_eq!(decode(body).unwrap(), expected);
        }
    )*};
}

mod captured {
    use super::*;

    fixture_matches_json!(
        auth_can_i,
        configmap_c2,
        configmap_full,
        create_deployment_dryrun,
        create_token,
        cronjob,
        deployment,
        deployment_command,
        deployment_multi,
        drain_delete,
        job,
        job_from_cronjob,
        namespace,
        secret_docker_registry,
        secret_generic,
        secret_generic_file,
        service_clusterip,
        service_clusterip_none,
        service_externalname,
        service_loadbalancer,
        service_nodeport,
        serviceaccount,
    );
}

#[test]
fn documented_configmap_bytes() {
    // The bytes kubectl 1.32 sends for: kubectl create configmap c2 --from-literal=x=y
    let body: &[u8] = &[
        0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, b'v', b'1', 0x12, 0x09, b'C', b'o', b'n', b'f', b'i',
        b'g', b'M', b'a', b'p', 0x12, 0x1c, 0x0a, 0x12, 0x0a, 0x02, b'c', b'2', 0x12, 0x00, 0x1a, 0x00, 0x22,
        0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x06, 0x0a, 0x01, b'x', 0x12, 0x01, b'y',
        0x1a, 0x00, 0x22, 0x00,
    ];
    assert_eq!(body, include_bytes!("../../testdata/protobuf/configmap_c2.pb"));
    assert_eq!(
        decode(body).unwrap(),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c2"}, "data": {"x": "y"}})
    );
}

#[test]
fn tls_secret_fixture() {
    let object = decode(include_bytes!("../../testdata/protobuf/secret_tls.pb")).unwrap();
    assert_eq!(object["type"], "kubernetes.io/tls");
    assert_eq!(object["metadata"], json!({"name": "t1"}));
    let data = object["data"].as_object().unwrap();
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    assert_eq!(keys, ["tls.crt", "tls.key"]);
    // "-----BEGIN " in base64.
    assert!(data["tls.crt"].as_str().unwrap().starts_with("LS0tLS1CRUdJTi"));
}

#[test]
fn other_generators_are_unsupported_with_415() {
    let body = wrap("v1", "PodTemplate", &core::PodTemplate::default());
    let error = decode(&body).unwrap_err();
    assert!(
        matches!(&error, DecodeError::Unsupported { api_version, kind }
            if api_version == "v1" && kind == "PodTemplate"),
        "{error:?}"
    );
    assert_eq!(error.status_code(), 415);
    assert!(error.to_string().contains("PodTemplate"));
}

/// `kubectl create role` (this fixture was the unsupported example before
/// the RBAC kinds were decoded; see protobuf/rbac.rs).
#[test]
fn kubectl_create_role_decodes() {
    let role = decode(include_bytes!("../../testdata/protobuf/role.pb")).unwrap();
    assert_eq!(role["kind"], "Role");
    assert_eq!(role["apiVersion"], "rbac.authorization.k8s.io/v1");
    let rule = &role["rules"][0];
    assert!(rule["verbs"].as_array().is_some_and(|v| !v.is_empty()), "{role}");
    assert!(
        rule["resources"].as_array().is_some_and(|v| !v.is_empty()),
        "{role}"
    );
}

#[test]
fn json_body_is_not_protobuf() {
    let error = decode(br#"{"kind":"ConfigMap"}"#).unwrap_err();
    assert!(matches!(error, DecodeError::NotProtobuf));
    assert_eq!(error.status_code(), 400);
}

#[test]
fn truncated_body_is_malformed() {
    let body = include_bytes!("../../testdata/protobuf/deployment.pb");
    let error = decode(&body[..body.len() - 30]).unwrap_err();
    assert!(matches!(error, DecodeError::Malformed(_)), "{error:?}");
}

#[test]
fn compressed_envelope_is_refused() {
    let mut unknown = Unknown::decode(&include_bytes!("../../testdata/protobuf/namespace.pb")[4..]).unwrap();
    unknown.content_encoding = Some("gzip".to_owned());
    let mut body = b"k8s\0".to_vec();
    body.extend(unknown.encode_to_vec());
    assert!(matches!(decode(&body), Err(DecodeError::Malformed(_))));
}

#[test]
fn missing_kind_is_malformed() {
    let body = wrap("v1", "", &core::Namespace::default());
    assert!(matches!(decode(&body), Err(DecodeError::Malformed(_))));
}

#[test]
fn unknown_wire_fields_are_refused() {
    let mut raw = core::ConfigMap {
        metadata: named("c"),
        ..Default::default()
    }
    .encode_to_vec();
    // Field 99, varint 1: not in the ConfigMap schema.
    raw.extend([0x98, 0x06, 0x01]);
    let error = decode(&wrap_raw("v1", "ConfigMap", raw)).unwrap_err();
    assert!(
        matches!(error, DecodeError::UnknownFields { extra_bytes: 3, .. }),
        "{error:?}"
    );
    assert_eq!(error.status_code(), 415);
}

#[test]
fn unconverted_fields_are_refused_with_their_path() {
    let mut probed = container("c", "nginx");
    probed.liveness_probe = Some(core::Probe::default());
    let deployment = apps::Deployment {
        metadata: named("web"),
        spec: Some(apps::DeploymentSpec {
            template: template(vec![container("a", "x"), probed]),
            ..Default::default()
        }),
        status: None,
    };
    let error = decode(&wrap("apps/v1", "Deployment", &deployment)).unwrap_err();
    match error {
        DecodeError::UnsupportedField { field, kind, .. } => {
            assert_eq!(kind, "Deployment");
            assert_eq!(field, "spec.template.spec.containers[1].livenessProbe");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unconverted_volume_source_is_refused() {
    let pod = core::Pod {
        metadata: named("p"),
        spec: Some(core::PodSpec {
            volumes: vec![core::Volume {
                name: Some("v".to_owned()),
                volume_source: Some(core::VolumeSource {
                    nfs: Some(core::NfsVolumeSource::default()),
                    ..Default::default()
                }),
            }],
            ..Default::default()
        }),
        status: None,
    };
    let error = decode(&wrap("v1", "Pod", &pod)).unwrap_err();
    assert!(
        matches!(&error, DecodeError::UnsupportedField { field, .. } if field.starts_with("spec.volumes[0].")),
        "{error:?}"
    );
}

#[test]
fn pointer_fields_keep_zero_and_absent_stays_absent() {
    let deployment = apps::Deployment {
        metadata: named("web"),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            min_ready_seconds: Some(0),
            paused: Some(false),
            strategy: Some(apps::DeploymentStrategy {
                r#type: Some("RollingUpdate".to_owned()),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_unavailable: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(0),
                        str_val: Some(String::new()),
                    }),
                    max_surge: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("25%".to_owned()),
                    }),
                }),
            }),
            template: template(vec![container("c", "nginx")]),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus {
            replicas: Some(7),
            ..Default::default()
        }),
    };
    let object = decode(&wrap("apps/v1", "Deployment", &deployment)).unwrap();
    assert_eq!(
        object,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {
                "replicas": 0,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}},
                "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}
            }
        })
    );
}

#[test]
fn pod_spec_and_container_fields() {
    let mut c = container("app", "busybox");
    c.command = vec!["sh".to_owned(), "-c".to_owned()];
    c.args = vec!["sleep 1".to_owned()];
    c.ports = vec![core::ContainerPort {
        name: Some("http".to_owned()),
        container_port: Some(8080),
        protocol: Some("TCP".to_owned()),
        ..Default::default()
    }];
    c.env = vec![
        core::EnvVar {
            name: Some("A".to_owned()),
            value: Some("1".to_owned()),
            value_from: None,
        },
        core::EnvVar {
            name: Some("PW".to_owned()),
            value: Some(String::new()),
            value_from: Some(core::EnvVarSource {
                secret_key_ref: Some(core::SecretKeySelector {
                    local_object_reference: Some(core::LocalObjectReference {
                        name: Some("s".to_owned()),
                    }),
                    key: Some("pw".to_owned()),
                    optional: Some(false),
                }),
                ..Default::default()
            }),
        },
    ];
    c.resources = Some(core::ResourceRequirements {
        requests: [("cpu".to_owned(), quantity("100m"))].into(),
        ..Default::default()
    });
    c.volume_mounts = vec![core::VolumeMount {
        name: Some("scratch".to_owned()),
        mount_path: Some("/tmp".to_owned()),
        read_only: Some(false),
        ..Default::default()
    }];
    let job = batch::Job {
        metadata: named("j"),
        spec: Some(batch::JobSpec {
            backoff_limit: Some(0),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels: [("app".to_owned(), "j".to_owned())].into(),
                    ..Default::default()
                }),
                spec: Some(core::PodSpec {
                    containers: vec![c],
                    restart_policy: Some("Never".to_owned()),
                    termination_grace_period_seconds: Some(0),
                    node_selector: [("disk".to_owned(), "ssd".to_owned())].into(),
                    volumes: vec![core::Volume {
                        name: Some("scratch".to_owned()),
                        volume_source: Some(core::VolumeSource {
                            empty_dir: Some(core::EmptyDirVolumeSource::default()),
                            ..Default::default()
                        }),
                    }],
                    tolerations: vec![core::Toleration {
                        operator: Some("Exists".to_owned()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let object = decode(&wrap("batch/v1", "Job", &job)).unwrap();
    assert_eq!(
        object["spec"],
        json!({
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": {"app": "j"}},
                "spec": {
                    "containers": [{
                        "name": "app", "image": "busybox",
                        "command": ["sh", "-c"], "args": ["sleep 1"],
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "env": [
                            {"name": "A", "value": "1"},
                            {"name": "PW", "valueFrom": {"secretKeyRef": {"name": "s", "key": "pw", "optional": false}}}
                        ],
                        "resources": {"requests": {"cpu": "100m"}},
                        "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}]
                    }],
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 0,
                    "nodeSelector": {"disk": "ssd"},
                    "volumes": [{"name": "scratch", "emptyDir": {}}],
                    "tolerations": [{"operator": "Exists"}]
                }
            }
        })
    );
}

fn quantity(s: &str) -> k8s_pb::apimachinery::pkg::api::resource::Quantity {
    k8s_pb::apimachinery::pkg::api::resource::Quantity {
        string: Some(s.to_owned()),
    }
}

#[test]
fn cronjob_spec_fields() {
    let cron_job = batch::CronJob {
        metadata: named("cj"),
        spec: Some(batch::CronJobSpec {
            schedule: Some("0 * * * *".to_owned()),
            time_zone: Some("Europe/Paris".to_owned()),
            suspend: Some(false),
            concurrency_policy: Some("Forbid".to_owned()),
            successful_jobs_history_limit: Some(1),
            job_template: Some(batch::JobTemplateSpec {
                metadata: None,
                spec: Some(batch::JobSpec {
                    completions: Some(2),
                    parallelism: Some(1),
                    template: template(vec![container("c", "x")]),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let object = decode(&wrap("batch/v1", "CronJob", &cron_job)).unwrap();
    assert_eq!(
        object["spec"],
        json!({
            "schedule": "0 * * * *", "timeZone": "Europe/Paris", "suspend": false,
            "concurrencyPolicy": "Forbid", "successfulJobsHistoryLimit": 1,
            "jobTemplate": {"spec": {"completions": 2, "parallelism": 1,
                "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
        })
    );
}

#[test]
fn object_meta_fields() {
    let metadata = meta::ObjectMeta {
        generate_name: Some("web-".to_owned()),
        namespace: Some("team".to_owned()),
        creation_timestamp: Some(meta::Time {
            seconds: Some(1_700_000_000),
            nanos: Some(0),
        }),
        labels: [("empty".to_owned(), String::new())].into(),
        annotations: [("note".to_owned(), "hi".to_owned())].into(),
        owner_references: vec![meta::OwnerReference {
            api_version: Some("apps/v1".to_owned()),
            kind: Some("ReplicaSet".to_owned()),
            name: Some("rs".to_owned()),
            uid: Some("u".to_owned()),
            controller: Some(true),
            block_owner_deletion: None,
        }],
        finalizers: vec!["x/y".to_owned()],
        ..Default::default()
    };
    let secret = core::Secret {
        metadata: Some(metadata),
        immutable: Some(true),
        data: [("bin".to_owned(), vec![0, 1, 255])].into(),
        string_data: [("s".to_owned(), "t".to_owned())].into(),
        r#type: Some(String::new()),
    };
    let object = decode(&wrap("v1", "Secret", &secret)).unwrap();
    assert_eq!(
        object,
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {
                "generateName": "web-", "namespace": "team",
                "creationTimestamp": "2023-11-14T22:13:20Z",
                "labels": {"empty": ""}, "annotations": {"note": "hi"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": true}],
                "finalizers": ["x/y"]
            },
            "immutable": true, "data": {"bin": "AAH/"}, "stringData": {"s": "t"}
        })
    );
}

#[test]
fn managed_fields_are_refused() {
    let namespace = core::Namespace {
        metadata: Some(meta::ObjectMeta {
            managed_fields: vec![meta::ManagedFieldsEntry::default()],
            ..Default::default()
        }),
        ..Default::default()
    };
    let error = decode(&wrap("v1", "Namespace", &namespace)).unwrap_err();
    assert!(
        matches!(&error, DecodeError::UnsupportedField { field, .. } if field == "metadata.managedFields"),
        "{error:?}"
    );
}

#[test]
fn service_with_named_target_port() {
    let service = core::Service {
        metadata: named("s"),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                port: Some(80),
                target_port: Some(IntOrString {
                    r#type: Some(1),
                    int_val: Some(0),
                    str_val: Some("http".to_owned()),
                }),
                app_protocol: Some("h2c".to_owned()),
                ..Default::default()
            }],
            ip_family_policy: Some("SingleStack".to_owned()),
            session_affinity_config: Some(core::SessionAffinityConfig {
                client_ip: Some(core::ClientIpConfig {
                    timeout_seconds: Some(60),
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let object = decode(&wrap("v1", "Service", &service)).unwrap();
    assert_eq!(
        object["spec"],
        json!({
            "ports": [{"port": 80, "targetPort": "http", "appProtocol": "h2c"}],
            "ipFamilyPolicy": "SingleStack",
            "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 60}}
        })
    );
}

#[test]
fn delete_options_every_field() {
    let options = meta::DeleteOptions {
        grace_period_seconds: Some(0),
        preconditions: Some(meta::Preconditions {
            uid: Some("u1".to_owned()),
            resource_version: None,
        }),
        orphan_dependents: None,
        propagation_policy: Some("Foreground".to_owned()),
        dry_run: vec!["All".to_owned()],
        ignore_store_read_error_with_cluster_breaking_potential: Some(false),
    };
    let object = decode(&wrap("meta.k8s.io/v1", "DeleteOptions", &options)).unwrap();
    assert_eq!(
        object,
        json!({
            "apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions",
            "gracePeriodSeconds": 0, "preconditions": {"uid": "u1"},
            "propagationPolicy": "Foreground", "dryRun": ["All"],
            "ignoreStoreReadErrorWithClusterBreakingPotential": false
        })
    );
}

#[test]
fn service_account_fields() {
    let account = core::ServiceAccount {
        metadata: named("sa"),
        secrets: vec![core::ObjectReference {
            name: Some("tok".to_owned()),
            ..Default::default()
        }],
        image_pull_secrets: vec![core::LocalObjectReference {
            name: Some("reg".to_owned()),
        }],
        automount_service_account_token: Some(false),
    };
    let object = decode(&wrap("v1", "ServiceAccount", &account)).unwrap();
    assert_eq!(object["secrets"], json!([{"name": "tok"}]));
    assert_eq!(object["imagePullSecrets"], json!([{"name": "reg"}]));
    assert_eq!(object["automountServiceAccountToken"], json!(false));
}

#[test]
fn base64_matches_go() {
    let cases: [(&[u8], &str); 5] = [
        (b"", ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (&[0, 1, 255, b'b', b'i', b'n'], "AAH/Ymlu"),
    ];
    for (input, expected) in cases {
        assert_eq!(super::json::base64(input), expected);
    }
}

#[test]
fn protobuf_content_type_detection() {
    assert!(is_protobuf("application/vnd.kubernetes.protobuf"));
    assert!(is_protobuf("application/vnd.kubernetes.protobuf; charset=utf-8"));
    assert!(!is_protobuf("application/json"));
}

/// Postmortem: `kubectl create job --from=cronjob/x` (1.32+, protobuf bodies) failed with 415
/// "cannot decode field spec.template.spec.securityContext". The server's defaulting stores an
/// empty `securityContext: {}` in every pod template, and kubectl copies the CronJob's template
/// into the Job it sends, so the empty message came back. Fix: an empty securityContext decodes
/// (it carries nothing); a non-empty one is still refused with 415, as before.
#[test]
fn an_empty_pod_security_context_decodes() {
    let job = |security_context| batch::Job {
        metadata: named("from-cronjob"),
        spec: Some(batch::JobSpec {
            template: Some(core::PodTemplateSpec {
                metadata: None,
                spec: Some(core::PodSpec {
                    containers: vec![core::Container {
                        name: Some("c".to_owned()),
                        image: Some("busybox:1.36".to_owned()),
                        ..Default::default()
                    }],
                    restart_policy: Some("Never".to_owned()),
                    security_context,
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    };
    let empty = decode(&wrap(
        "batch/v1",
        "Job",
        &job(Some(core::PodSecurityContext::default())),
    ));
    let object = empty.expect("an empty securityContext decodes");
    assert_eq!(object["spec"]["template"]["spec"]["restartPolicy"], "Never");
    let set = core::PodSecurityContext {
        run_as_user: Some(1000),
        ..Default::default()
    };
    let refused = decode(&wrap("batch/v1", "Job", &job(Some(set)))).unwrap_err();
    assert_eq!(refused.status_code(), 415);
}
