//! Test-only builders: `node("n1").cpu("2").taint(..)`, `pod("p").requests("500m", "1Gi")`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Container, Node, NodeAffinity, NodeCondition, NodeSelector, NodeSelectorRequirement,
    NodeSelectorTerm, NodeSpec, NodeStatus, Pod, PodSpec, PodStatus, PreferredSchedulingTerm,
    ResourceRequirements, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

pub struct NodeBuilder(Node);

pub fn node(name: &str) -> NodeBuilder {
    let mut b = NodeBuilder(Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus {
            allocatable: Some(BTreeMap::new()),
            ..Default::default()
        }),
    });
    b = b
        .cpu("4")
        .memory("16Gi")
        .pods("110")
        .label("kubernetes.io/hostname", name);
    b.condition("Ready", "True")
}

impl NodeBuilder {
    fn alloc(mut self, key: &str, q: &str) -> Self {
        let status = self.0.status.get_or_insert_with(Default::default);
        status
            .allocatable
            .get_or_insert_with(Default::default)
            .insert(key.into(), Quantity(q.into()));
        self
    }

    pub fn cpu(self, q: &str) -> Self {
        self.alloc("cpu", q)
    }

    pub fn memory(self, q: &str) -> Self {
        self.alloc("memory", q)
    }

    pub fn pods(self, q: &str) -> Self {
        self.alloc("pods", q)
    }

    pub fn ephemeral(self, q: &str) -> Self {
        self.alloc("ephemeral-storage", q)
    }

    pub fn no_allocatable(mut self) -> Self {
        self.0.status.get_or_insert_with(Default::default).allocatable = None;
        self
    }

    pub fn label(mut self, k: &str, v: &str) -> Self {
        self.0
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(k.into(), v.into());
        self
    }

    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        let spec = self.0.spec.get_or_insert_with(Default::default);
        spec.taints.get_or_insert_with(Default::default).push(Taint {
            key: key.into(),
            value: (!value.is_empty()).then(|| value.into()),
            effect: effect.into(),
            time_added: None,
        });
        self
    }

    pub fn unschedulable(mut self) -> Self {
        self.0.spec.get_or_insert_with(Default::default).unschedulable = Some(true);
        self
    }

    /// Sets (replacing) the condition of the given type.
    pub fn condition(mut self, type_: &str, status: &str) -> Self {
        let st = self.0.status.get_or_insert_with(Default::default);
        let conds = st.conditions.get_or_insert_with(Default::default);
        conds.retain(|c| c.type_ != type_);
        conds.push(NodeCondition {
            type_: type_.into(),
            status: status.into(),
            ..Default::default()
        });
        self
    }

    pub fn no_conditions(mut self) -> Self {
        self.0.status.get_or_insert_with(Default::default).conditions = None;
        self
    }

    pub fn build(self) -> Node {
        self.0
    }
}

pub fn container(name: &str, cpu: &str, memory: &str) -> Container {
    let mut requests = BTreeMap::new();
    if !cpu.is_empty() {
        requests.insert("cpu".to_string(), Quantity(cpu.into()));
    }
    if !memory.is_empty() {
        requests.insert("memory".to_string(), Quantity(memory.into()));
    }
    Container {
        name: name.into(),
        image: Some("registry.k8s.io/pause:3.10".into()),
        resources: Some(ResourceRequirements {
            requests: Some(requests),
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub struct PodBuilder(Pod);

pub fn pod(name: &str) -> PodBuilder {
    PodBuilder(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{name}")),
            ..Default::default()
        },
        spec: Some(PodSpec::default()),
        status: Some(PodStatus::default()),
    })
}

impl PodBuilder {
    fn spec(&mut self) -> &mut PodSpec {
        self.0.spec.get_or_insert_with(Default::default)
    }

    /// Adds one container requesting `cpu`/`memory` ("" leaves it unset).
    pub fn requests(self, cpu: &str, memory: &str) -> Self {
        let n = self.0.spec.as_ref().map_or(0, |s| s.containers.len());
        self.container(container(&format!("c{n}"), cpu, memory))
    }

    pub fn ephemeral(mut self, q: &str) -> Self {
        let spec = self.spec();
        if spec.containers.is_empty() {
            spec.containers.push(container("c0", "", ""));
        }
        let res = spec.containers[0].resources.get_or_insert_with(Default::default);
        res.requests
            .get_or_insert_with(Default::default)
            .insert("ephemeral-storage".into(), Quantity(q.into()));
        self
    }

    pub fn container(mut self, c: Container) -> Self {
        self.spec().containers.push(c);
        self
    }

    pub fn init_container(mut self, c: Container) -> Self {
        self.spec()
            .init_containers
            .get_or_insert_with(Default::default)
            .push(c);
        self
    }

    pub fn overhead(mut self, cpu: &str, memory: &str) -> Self {
        self.spec().overhead = Some(
            [
                ("cpu".to_string(), Quantity(cpu.into())),
                ("memory".to_string(), Quantity(memory.into())),
            ]
            .into(),
        );
        self
    }

    pub fn toleration(mut self, key: &str, operator: &str, value: &str, effect: &str) -> Self {
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
        self.spec()
            .tolerations
            .get_or_insert_with(Default::default)
            .push(Toleration {
                key: opt(key),
                operator: opt(operator),
                value: opt(value),
                effect: opt(effect),
                toleration_seconds: None,
            });
        self
    }

    pub fn node_selector(mut self, k: &str, v: &str) -> Self {
        self.spec()
            .node_selector
            .get_or_insert_with(Default::default)
            .insert(k.into(), v.into());
        self
    }

    fn node_affinity(&mut self) -> &mut NodeAffinity {
        let aff = self.spec().affinity.get_or_insert_with(Affinity::default);
        aff.node_affinity.get_or_insert_with(Default::default)
    }

    /// Adds a required node-selector term (terms are ORed).
    pub fn required(mut self, t: NodeSelectorTerm) -> Self {
        let na = self.node_affinity();
        let sel = na
            .required_during_scheduling_ignored_during_execution
            .get_or_insert_with(|| NodeSelector {
                node_selector_terms: vec![],
            });
        sel.node_selector_terms.push(t);
        self
    }

    pub fn preferred(mut self, weight: i32, t: NodeSelectorTerm) -> Self {
        let na = self.node_affinity();
        na.preferred_during_scheduling_ignored_during_execution
            .get_or_insert_with(Default::default)
            .push(PreferredSchedulingTerm {
                preference: t,
                weight,
            });
        self
    }

    pub fn owner(mut self, kind: &str, name: &str) -> Self {
        self.0.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{kind}-{name}"),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]);
        self
    }

    pub fn priority(mut self, p: i32) -> Self {
        self.spec().priority = Some(p);
        self
    }

    pub fn preemption_never(mut self) -> Self {
        self.spec().preemption_policy = Some("Never".into());
        self
    }

    pub fn node_name(mut self, n: &str) -> Self {
        self.spec().node_name = Some(n.into());
        self
    }

    pub fn phase(mut self, phase: &str) -> Self {
        self.0.status.get_or_insert_with(Default::default).phase = Some(phase.into());
        self
    }

    pub fn build(self) -> Pod {
        self.0
    }
}

pub fn expr(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

pub fn term(exprs: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: Some(exprs),
        match_fields: None,
    }
}

pub fn field_term(fields: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: None,
        match_fields: Some(fields),
    }
}
