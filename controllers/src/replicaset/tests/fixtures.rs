//! Chained builders for pods and ReplicaSets: `pod("a").on_node("n1").running().ready_since(t(-60))`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};

/// The fixed "now" of every test.
pub fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("valid constant timestamp")
}

/// `now` shifted by `secs` seconds (negative = in the past).
pub fn t(secs: i64) -> Timestamp {
    now() + jiff::SignedDuration::from_secs(secs)
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A pod builder; see [`pod`].
pub struct PodBuilder(Pod);

/// A pod named `name` in `default`, uid `uid-<name>`, labelled `app=web`, phase unset, not ready.
pub fn pod(name: &str) -> PodBuilder {
    let metadata = ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some("default".to_owned()),
        uid: Some(format!("uid-{name}")),
        labels: Some(labels(&[("app", "web")])),
        ..ObjectMeta::default()
    };
    let spec = PodSpec {
        containers: vec![Container {
            name: "c".into(),
            ..Container::default()
        }],
        ..PodSpec::default()
    };
    PodBuilder(Pod {
        metadata,
        spec: Some(spec),
        status: Some(PodStatus::default()),
    })
}

impl PodBuilder {
    fn status(&mut self) -> &mut PodStatus {
        self.0.status.get_or_insert_with(PodStatus::default)
    }

    pub fn on_node(mut self, node: &str) -> Self {
        self.0.spec.get_or_insert_with(PodSpec::default).node_name = Some(node.to_owned());
        self
    }

    pub fn phase(mut self, phase: &str) -> Self {
        self.status().phase = Some(phase.to_owned());
        self
    }

    pub fn pending(self) -> Self {
        self.phase("Pending")
    }

    pub fn running(self) -> Self {
        self.phase("Running")
    }

    pub fn unknown(self) -> Self {
        self.phase("Unknown")
    }

    fn ready_condition(mut self, status: &str, since: Option<Timestamp>) -> Self {
        let condition = PodCondition {
            type_: "Ready".into(),
            status: status.into(),
            last_transition_time: since.map(Time),
            ..PodCondition::default()
        };
        self.status().conditions = Some(vec![condition]);
        self
    }

    /// Ready=True since `since`.
    pub fn ready_since(self, since: Timestamp) -> Self {
        self.ready_condition("True", Some(since))
    }

    /// Ready=True with no lastTransitionTime (Go's zero time).
    pub fn ready_no_time(self) -> Self {
        self.ready_condition("True", None)
    }

    /// Ready=False since `since`.
    pub fn not_ready_since(self, since: Timestamp) -> Self {
        self.ready_condition("False", Some(since))
    }

    pub fn created(mut self, at: Timestamp) -> Self {
        self.0.metadata.creation_timestamp = Some(Time(at));
        self
    }

    pub fn uid(mut self, uid: &str) -> Self {
        self.0.metadata.uid = Some(uid.to_owned());
        self
    }

    pub fn no_uid(mut self) -> Self {
        self.0.metadata.uid = None;
        self
    }

    pub fn namespace(mut self, ns: &str) -> Self {
        self.0.metadata.namespace = Some(ns.to_owned());
        self
    }

    /// One container status per count given.
    pub fn restarts(mut self, counts: &[i32]) -> Self {
        let statuses = counts.iter().map(|n| ContainerStatus {
            restart_count: *n,
            ..ContainerStatus::default()
        });
        self.status().container_statuses = Some(statuses.collect());
        self
    }

    pub fn deletion_cost(mut self, cost: &str) -> Self {
        let annotations = self.0.metadata.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert("controller.kubernetes.io/pod-deletion-cost".into(), cost.into());
        self
    }

    pub fn deleting(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(now()));
        self
    }

    pub fn labels(mut self, pairs: &[(&str, &str)]) -> Self {
        self.0.metadata.labels = Some(labels(pairs));
        self
    }

    /// Adds an ownerReference to `owner_uid`; `controller` says whether it is the controller reference.
    pub fn owner(mut self, owner_uid: &str, controller: bool) -> Self {
        let reference = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "owner".into(),
            uid: owner_uid.into(),
            controller: Some(controller),
            block_owner_deletion: Some(true),
        };
        self.0
            .metadata
            .owner_references
            .get_or_insert_with(Vec::new)
            .push(reference);
        self
    }

    pub fn controlled_by(self, owner_uid: &str) -> Self {
        self.owner(owner_uid, true)
    }

    pub fn build(self) -> Pod {
        self.0
    }
}

/// A ReplicaSet builder; see [`rs`].
pub struct RsBuilder(ReplicaSet);

/// A ReplicaSet named `name` in `default`, uid `uid-<name>`, selector and template labels `app=web`,
/// 3 replicas, generation 1.
pub fn rs(name: &str) -> RsBuilder {
    let metadata = ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some("default".to_owned()),
        uid: Some(format!("uid-{name}")),
        generation: Some(1),
        ..ObjectMeta::default()
    };
    let template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[("app", "web")])),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec::default()),
    };
    let spec = ReplicaSetSpec {
        replicas: Some(3),
        selector: LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            ..LabelSelector::default()
        },
        template: Some(template),
        ..ReplicaSetSpec::default()
    };
    RsBuilder(ReplicaSet {
        metadata,
        spec: Some(spec),
        status: None,
    })
}

impl RsBuilder {
    fn spec(&mut self) -> &mut ReplicaSetSpec {
        self.0.spec.get_or_insert_with(ReplicaSetSpec::default)
    }

    pub fn replicas(mut self, n: i32) -> Self {
        self.spec().replicas = Some(n);
        self
    }

    pub fn replicas_unset(mut self) -> Self {
        self.spec().replicas = None;
        self
    }

    pub fn min_ready_seconds(mut self, secs: i32) -> Self {
        self.spec().min_ready_seconds = Some(secs);
        self
    }

    pub fn generation(mut self, g: i64) -> Self {
        self.0.metadata.generation = Some(g);
        self
    }

    pub fn selector(mut self, pairs: &[(&str, &str)]) -> Self {
        self.spec().selector.match_labels = Some(labels(pairs));
        self
    }

    pub fn template_labels(mut self, pairs: &[(&str, &str)]) -> Self {
        let template = self.spec().template.get_or_insert_with(PodTemplateSpec::default);
        template.metadata.get_or_insert_with(ObjectMeta::default).labels = Some(labels(pairs));
        self
    }

    pub fn controlled_by(mut self, owner_uid: &str) -> Self {
        let reference = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: "deploy".into(),
            uid: owner_uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        self.0.metadata.owner_references = Some(vec![reference]);
        self
    }

    pub fn deleting(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(now()));
        self
    }

    pub fn status(mut self, status: ReplicaSetStatus) -> Self {
        self.0.status = Some(status);
        self
    }

    pub fn build(self) -> ReplicaSet {
        self.0
    }
}

/// The names of `pods`, in order.
pub fn names<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Vec<String> {
    pods.into_iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect()
}
