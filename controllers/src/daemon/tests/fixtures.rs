//! Chained builders: `node("n1").label("disk", "ssd").taint("k", "v", "NoSchedule")`,
//! `ds("agent").surge(1).unavailable(0)`, `pod("a").on("n1").hash("h1").ready_since(t(-60))`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
use k8s_openapi::api::core::v1::{
    Affinity, Container, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
    NodeSpec, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::daemon::placement::DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY;

/// The fixed "now" of every test.
pub fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).expect("valid constant timestamp")
}

/// `now` shifted by `secs` seconds.
pub fn t(secs: i64) -> Timestamp {
    now() + jiff::SignedDuration::from_secs(secs)
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A node builder; see [`node`].
pub struct NodeBuilder(Node);

/// A node named `name`, no labels, no taints.
pub fn node(name: &str) -> NodeBuilder {
    NodeBuilder(Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec::default()),
        status: None,
    })
}

impl NodeBuilder {
    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(k.to_owned(), v.to_owned());
        self
    }

    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        let spec = self.0.spec.get_or_insert_with(NodeSpec::default);
        spec.taints.get_or_insert_with(Vec::new).push(Taint {
            key: key.to_owned(),
            value: (!value.is_empty()).then(|| value.to_owned()),
            effect: effect.to_owned(),
            time_added: None,
        });
        self
    }

    pub fn build(self) -> Node {
        self.0
    }
}

/// A DaemonSet builder; see [`ds`].
pub struct DsBuilder(DaemonSet);

/// A DaemonSet `name` in `default`, uid `uid-<name>`, selector and template labels `app=<name>`,
/// RollingUpdate maxUnavailable 1 / maxSurge 0 (the API defaults), generation 1.
pub fn ds(name: &str) -> DsBuilder {
    let labels = map(&[("app", name)]);
    DsBuilder(DaemonSet {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            uid: Some(format!("uid-{name}")),
            generation: Some(1),
            ..ObjectMeta::default()
        },
        spec: Some(DaemonSetSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                match_expressions: None,
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some("agent:1".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            update_strategy: Some(DaemonSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateDaemonSet {
                    max_unavailable: Some(IntOrString::Int(1)),
                    max_surge: Some(IntOrString::Int(0)),
                }),
            }),
            revision_history_limit: Some(10),
            min_ready_seconds: None,
        }),
        status: None,
    })
}

impl DsBuilder {
    fn spec(&mut self) -> &mut DaemonSetSpec {
        self.0.spec.get_or_insert_with(Default::default)
    }

    fn pod_spec(&mut self) -> &mut PodSpec {
        self.spec().template.spec.get_or_insert_with(PodSpec::default)
    }

    fn rolling(&mut self) -> &mut RollingUpdateDaemonSet {
        self.spec()
            .update_strategy
            .get_or_insert_with(Default::default)
            .rolling_update
            .get_or_insert_with(Default::default)
    }

    pub fn surge(mut self, v: IntOrString) -> Self {
        self.rolling().max_surge = Some(v);
        self
    }

    pub fn unavailable(mut self, v: IntOrString) -> Self {
        self.rolling().max_unavailable = Some(v);
        self
    }

    pub fn on_delete(mut self) -> Self {
        self.spec().update_strategy = Some(DaemonSetUpdateStrategy {
            type_: Some("OnDelete".into()),
            rolling_update: None,
        });
        self
    }

    pub fn min_ready_seconds(mut self, s: i32) -> Self {
        self.spec().min_ready_seconds = Some(s);
        self
    }

    pub fn node_selector(mut self, k: &str, v: &str) -> Self {
        self.pod_spec()
            .node_selector
            .get_or_insert_with(BTreeMap::new)
            .insert(k.to_owned(), v.to_owned());
        self
    }

    pub fn node_name(mut self, n: &str) -> Self {
        self.pod_spec().node_name = Some(n.to_owned());
        self
    }

    pub fn host_network(mut self) -> Self {
        self.pod_spec().host_network = Some(true);
        self
    }

    pub fn toleration(mut self, key: &str, op: &str, value: &str, effect: &str) -> Self {
        self.pod_spec()
            .tolerations
            .get_or_insert_with(Vec::new)
            .push(Toleration {
                key: (!key.is_empty()).then(|| key.to_owned()),
                operator: (!op.is_empty()).then(|| op.to_owned()),
                value: (!value.is_empty()).then(|| value.to_owned()),
                effect: (!effect.is_empty()).then(|| effect.to_owned()),
                toleration_seconds: None,
            });
        self
    }

    /// Adds a required node-affinity term of label expressions `(key, op, values)`.
    pub fn required(mut self, exprs: &[(&str, &str, &[&str])]) -> Self {
        let term = NodeSelectorTerm {
            match_expressions: Some(exprs.iter().map(|(k, op, vs)| requirement(k, op, vs)).collect()),
            match_fields: None,
        };
        let affinity = self.pod_spec().affinity.get_or_insert_with(Affinity::default);
        let na = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
        na.required_during_scheduling_ignored_during_execution
            .get_or_insert_with(|| NodeSelector {
                node_selector_terms: Vec::new(),
            })
            .node_selector_terms
            .push(term);
        self
    }

    pub fn image(mut self, image: &str) -> Self {
        if let Some(c) = self.pod_spec().containers.first_mut() {
            c.image = Some(image.to_owned());
        }
        self
    }

    pub fn observed_generation(mut self, g: i64) -> Self {
        self.0
            .status
            .get_or_insert_with(Default::default)
            .observed_generation = Some(g);
        self
    }

    pub fn build(self) -> DaemonSet {
        self.0
    }
}

pub fn requirement(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.to_owned(),
        operator: op.to_owned(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect()),
    }
}

/// A pod builder; see [`pod`].
pub struct PodBuilder(Pod);

/// A daemon pod `name` of DaemonSet `agent` (label `app=agent`, controlled by `uid-agent`), created
/// at `t(-1000)`, not bound, no phase.
pub fn pod(name: &str) -> PodBuilder {
    PodBuilder(Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            uid: Some(format!("uid-{name}")),
            labels: Some(map(&[("app", "agent")])),
            creation_timestamp: Some(Time(t(-1000))),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "DaemonSet".into(),
                name: "agent".into(),
                uid: "uid-agent".into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        status: Some(PodStatus::default()),
    })
}

impl PodBuilder {
    /// Bound to `node`.
    pub fn on(mut self, node: &str) -> Self {
        if let Some(s) = self.0.spec.as_mut() {
            s.node_name = Some(node.to_owned());
        }
        self
    }

    /// Not bound, pinned to `node` by required node affinity (as the controller creates them).
    pub fn pinned(mut self, node: &str) -> Self {
        if let Some(s) = self.0.spec.as_mut() {
            s.affinity =
                Some(crate::daemon::placement::replace_daemon_set_pod_node_name_node_affinity(None, node));
        }
        self
    }

    pub fn hash(mut self, h: &str) -> Self {
        self.0
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY.to_owned(), h.to_owned());
        self
    }

    pub fn phase(mut self, phase: &str) -> Self {
        self.0.status.get_or_insert_with(PodStatus::default).phase = Some(phase.to_owned());
        self
    }

    pub fn ready_since(mut self, since: Timestamp) -> Self {
        let status = self.0.status.get_or_insert_with(PodStatus::default);
        status.phase = Some("Running".into());
        status.conditions = Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(since)),
            ..PodCondition::default()
        }]);
        self
    }

    pub fn created(mut self, at: Timestamp) -> Self {
        self.0.metadata.creation_timestamp = Some(Time(at));
        self
    }

    pub fn deleting(mut self) -> Self {
        self.0.metadata.deletion_timestamp = Some(Time(now()));
        self
    }

    pub fn build(self) -> Pod {
        self.0
    }
}
