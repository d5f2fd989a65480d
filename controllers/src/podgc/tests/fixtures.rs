//! Node builders: `node("n1").not_ready().tainted(TAINT_NODE_OUT_OF_SERVICE)`; pods come from
//! the ReplicaSet tests' [`crate::replicaset::tests::fixtures::pod`].

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeSpec, NodeStatus, Pod, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

pub use crate::replicaset::tests::fixtures::{PodBuilder, pod, t};

/// A node builder; see [`node`].
pub struct NodeBuilder(Node);

/// A node named `name`, Ready, without taints.
pub fn node(name: &str) -> NodeBuilder {
    NodeBuilder(Node {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus {
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..NodeCondition::default()
            }]),
            ..NodeStatus::default()
        }),
    })
}

impl NodeBuilder {
    /// The Ready condition `status` (`False`, `Unknown`).
    pub fn ready_status(mut self, status: &str) -> Self {
        let conditions = self
            .0
            .status
            .get_or_insert_with(NodeStatus::default)
            .conditions
            .get_or_insert_with(Vec::new);
        for c in conditions.iter_mut().filter(|c| c.type_ == "Ready") {
            c.status = status.to_string();
        }
        self
    }

    /// NotReady (`Ready=Unknown`, as after the node lifecycle controller noticed silence).
    pub fn not_ready(self) -> Self {
        self.ready_status("Unknown")
    }

    /// Adds a `NoExecute` taint with `key`.
    pub fn tainted(mut self, key: &str) -> Self {
        let spec = self.0.spec.get_or_insert_with(NodeSpec::default);
        spec.taints.get_or_insert_with(Vec::new).push(Taint {
            key: key.to_string(),
            effect: "NoExecute".into(),
            ..Taint::default()
        });
        self
    }

    pub fn build(self) -> Node {
        self.0
    }

    pub fn arc(self) -> Arc<Node> {
        Arc::new(self.0)
    }
}

/// Pods as the cache hands them over.
pub fn arcs(pods: Vec<Pod>) -> Vec<Arc<Pod>> {
    pods.into_iter().map(Arc::new).collect()
}

/// A Failed pod evicted by a kubelet (`reason: Evicted`).
pub fn evicted(pod: PodBuilder) -> Pod {
    let mut p = pod.phase("Failed").build();
    if let Some(s) = p.status.as_mut() {
        s.reason = Some("Evicted".into());
    }
    p
}

/// The names of `pods`, in order.
pub fn names(pods: &[Arc<Pod>]) -> Vec<&str> {
    pods.iter()
        .map(|p| p.metadata.name.as_deref().unwrap_or(""))
        .collect()
}
