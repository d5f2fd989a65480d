//! Builders of StatefulSets, pods and claims for the tests.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaim, PersistentVolumeClaimSpec, Pod, PodCondition, PodSpec, PodStatus,
    PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::statefulset::utils::{new_stateful_set_pod, set_pod_revision};

/// A fixed `now`.
pub fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("valid")
}

/// A StatefulSet `web` of `replicas` (label `app: web`, image `nginx:1`), uid `uid-web`.
pub fn set(replicas: i32) -> StatefulSet {
    let labels: BTreeMap<String, String> = [("app".to_owned(), "web".to_owned())].into();
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            uid: Some("uid-web".into()),
            generation: Some(1),
            ..ObjectMeta::default()
        },
        spec: Some(StatefulSetSpec {
            replicas: Some(replicas),
            service_name: Some("web".into()),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".into(),
                        image: Some("nginx:1".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    partition: Some(0),
                    max_unavailable: None,
                }),
            }),
            ..StatefulSetSpec::default()
        }),
        status: None,
    }
}

/// Chained changes of a set.
pub trait SetExt {
    /// `podManagementPolicy: Parallel`.
    fn parallel(self) -> Self;
    /// `rollingUpdate.partition`.
    fn partition(self, p: i32) -> Self;
    /// `rollingUpdate.maxUnavailable`.
    fn max_unavailable(self, v: IntOrString) -> Self;
    /// `updateStrategy.type: OnDelete`.
    fn on_delete(self) -> Self;
    /// `spec.ordinals.start`.
    fn start(self, s: i32) -> Self;
    /// The container image.
    fn image(self, image: &str) -> Self;
    /// A claim template `www`.
    fn with_claims(self) -> Self;
    /// `persistentVolumeClaimRetentionPolicy`.
    fn retention(self, when_deleted: &str, when_scaled: &str) -> Self;
    /// `minReadySeconds`.
    fn min_ready(self, s: i32) -> Self;
}

fn spec_mut(set: &mut StatefulSet) -> &mut StatefulSetSpec {
    set.spec.get_or_insert_with(Default::default)
}

impl SetExt for StatefulSet {
    fn parallel(mut self) -> Self {
        spec_mut(&mut self).pod_management_policy = Some("Parallel".into());
        self
    }
    fn partition(mut self, p: i32) -> Self {
        let u = spec_mut(&mut self)
            .update_strategy
            .get_or_insert_with(Default::default);
        u.rolling_update.get_or_insert_with(Default::default).partition = Some(p);
        self
    }
    fn max_unavailable(mut self, v: IntOrString) -> Self {
        let u = spec_mut(&mut self)
            .update_strategy
            .get_or_insert_with(Default::default);
        u.rolling_update
            .get_or_insert_with(Default::default)
            .max_unavailable = Some(v);
        self
    }
    fn on_delete(mut self) -> Self {
        spec_mut(&mut self).update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("OnDelete".into()),
            rolling_update: None,
        });
        self
    }
    fn start(mut self, s: i32) -> Self {
        spec_mut(&mut self).ordinals = Some(StatefulSetOrdinals { start: Some(s) });
        self
    }
    fn image(mut self, image: &str) -> Self {
        let spec = spec_mut(&mut self);
        if let Some(c) = spec.template.spec.as_mut().and_then(|s| s.containers.first_mut()) {
            c.image = Some(image.into());
        }
        self
    }
    fn with_claims(mut self) -> Self {
        spec_mut(&mut self).volume_claim_templates = Some(vec![PersistentVolumeClaim {
            metadata: ObjectMeta {
                name: Some("www".into()),
                ..ObjectMeta::default()
            },
            spec: Some(PersistentVolumeClaimSpec {
                access_modes: Some(vec!["ReadWriteOnce".into()]),
                ..PersistentVolumeClaimSpec::default()
            }),
            status: None,
        }]);
        self
    }
    fn retention(mut self, when_deleted: &str, when_scaled: &str) -> Self {
        spec_mut(&mut self).persistent_volume_claim_retention_policy =
            Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
                when_deleted: Some(when_deleted.into()),
                when_scaled: Some(when_scaled.into()),
            });
        self
    }
    fn min_ready(mut self, s: i32) -> Self {
        spec_mut(&mut self).min_ready_seconds = Some(s);
        self
    }
}

/// The pod of `ordinal` as the controller would create it, at `revision`, uid `uid-<name>`,
/// phase Pending.
pub fn pod(set: &StatefulSet, ordinal: i32, revision: &str) -> Pod {
    let mut pod = new_stateful_set_pod(set, ordinal).expect("valid template");
    set_pod_revision(&mut pod, revision);
    pod.metadata.uid = Some(format!("uid-{}", pod.metadata.name.clone().unwrap_or_default()));
    pod.status = Some(PodStatus {
        phase: Some("Pending".into()),
        ..PodStatus::default()
    });
    pod
}

/// Chained changes of a pod.
pub trait PodExt {
    /// Running and Ready since `since`.
    fn ready_since(self, since: Timestamp) -> Self;
    /// Running and Ready (since long ago).
    fn ready(self) -> Self;
    /// Running, not Ready.
    fn running(self) -> Self;
    /// Being deleted.
    fn terminating(self) -> Self;
    /// Phase `Failed`.
    fn failed(self) -> Self;
}

impl PodExt for Pod {
    fn ready_since(mut self, since: Timestamp) -> Self {
        self.status = Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(since)),
                ..PodCondition::default()
            }]),
            ..PodStatus::default()
        });
        self
    }
    fn ready(self) -> Self {
        self.ready_since(Timestamp::from_second(1_600_000_000).expect("valid"))
    }
    fn running(mut self) -> Self {
        self.status = Some(PodStatus {
            phase: Some("Running".into()),
            ..PodStatus::default()
        });
        self
    }
    fn terminating(mut self) -> Self {
        self.metadata.deletion_timestamp = Some(Time(now()));
        self
    }
    fn failed(mut self) -> Self {
        self.status = Some(PodStatus {
            phase: Some("Failed".into()),
            ..PodStatus::default()
        });
        self
    }
}
