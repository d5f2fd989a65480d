//! autoscaling/v1 HorizontalPodAutoscaler from protobuf: what
//! `kubectl autoscale` sends since kubectl 1.32.
//!
//! Go holds `scaleTargetRef`, its `kind` and `name`, and `maxReplicas` by
//! value without `omitempty`, so they are always written; the pointers
//! (`minReplicas`, `targetCPUUtilizationPercentage`) when present. `status`
//! is skipped, as for every create.

use k8s_pb::api::autoscaling::v1 as autoscaling;

use super::json::{Conv, Obj, Res};

impl Conv {
    pub(super) fn horizontal_pod_autoscaler(&mut self, m: autoscaling::HorizontalPodAutoscaler) -> Res<Obj> {
        let autoscaling::HorizontalPodAutoscaler {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec.map(|s| {
            let autoscaling::HorizontalPodAutoscalerSpec {
                scale_target_ref,
                min_replicas,
                max_replicas,
                target_cpu_utilization_percentage,
            } = s;
            let autoscaling::CrossVersionObjectReference {
                kind,
                name,
                api_version,
            } = scale_target_ref.unwrap_or_default();
            let target = Obj::new()
                .opt("kind", Some(kind.unwrap_or_default()))
                .opt("name", Some(name.unwrap_or_default()))
                .nz("apiVersion", api_version)
                .done();
            Obj::new()
                .ptr("scaleTargetRef", Some(target))
                .opt("minReplicas", min_replicas)
                .opt("maxReplicas", Some(max_replicas.unwrap_or_default()))
                .opt(
                    "targetCPUUtilizationPercentage",
                    target_cpu_utilization_percentage,
                )
                .done()
        });
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }
}

#[cfg(test)]
mod tests {
    use k8s_pb::api::autoscaling::v1 as autoscaling;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost::Message;
    use serde_json::json;

    /// What `kubectl autoscale deployment web --min=2 --max=5 --cpu-percent=80` sends.
    #[test]
    fn kubectl_autoscale_body_decodes_to_its_json() {
        let hpa = autoscaling::HorizontalPodAutoscaler {
            metadata: Some(meta::ObjectMeta {
                name: Some("web".into()),
                ..Default::default()
            }),
            spec: Some(autoscaling::HorizontalPodAutoscalerSpec {
                scale_target_ref: Some(autoscaling::CrossVersionObjectReference {
                    kind: Some("Deployment".into()),
                    name: Some("web".into()),
                    api_version: Some("apps/v1".into()),
                }),
                min_replicas: Some(2),
                max_replicas: Some(5),
                target_cpu_utilization_percentage: Some(80),
            }),
            status: Some(Default::default()),
        };
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("autoscaling/v1".into()),
                kind: Some("HorizontalPodAutoscaler".into()),
            }),
            raw: Some(hpa.encode_to_vec()),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut body = super::super::MAGIC.to_vec();
        body.extend(unknown.encode_to_vec());
        assert_eq!(
            super::super::decode(&body).unwrap(),
            json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web"},
                "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
                         "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 80}})
        );
    }
}
