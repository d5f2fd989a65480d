//! core/v1 ResourceQuota from protobuf: what `kubectl create quota` sends
//! since kubectl 1.32 (`--hard` and `--scopes`).
//!
//! `spec` is written when present, with `hard` and `scopes` when not
//! empty; a `scopeSelector` (which the generator never sets) is refused
//! with 415 rather than dropped. `status` is skipped, as for every create.

use k8s_pb::api::core::v1 as core;

use super::json::{Conv, Obj, Res, absent, at};
use super::meta::quantities;

impl Conv {
    pub(super) fn resource_quota(&mut self, m: core::ResourceQuota) -> Res<Obj> {
        let core::ResourceQuota {
            metadata,
            spec,
            status: _,
        } = m;
        let spec = spec
            .map(|s| {
                let core::ResourceQuotaSpec {
                    hard,
                    scopes,
                    scope_selector,
                } = s;
                absent(&scope_selector, "scopeSelector")?;
                Ok(Obj::new()
                    .map("hard", quantities(hard))
                    .list("scopes", scopes)
                    .done())
            })
            .transpose()
            .map_err(at("spec"))?;
        Ok(Obj::new()
            .inner("metadata", self.metadata(metadata)?)
            .inner("spec", spec))
    }
}

#[cfg(test)]
mod tests {
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::apimachinery::pkg::api::resource::Quantity;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost::Message;
    use serde_json::json;

    use crate::protobuf::decode;

    fn envelope(raw: Vec<u8>) -> Vec<u8> {
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("v1".into()),
                kind: Some("ResourceQuota".into()),
            }),
            raw: Some(raw),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut body = b"k8s\0".to_vec();
        body.extend(unknown.encode_to_vec());
        body
    }

    #[test]
    fn kubectl_create_quota_converts_hard_and_scopes() {
        let q = core::ResourceQuota {
            metadata: Some(meta::ObjectMeta {
                name: Some("q".into()),
                ..Default::default()
            }),
            spec: Some(core::ResourceQuotaSpec {
                hard: [(
                    "pods".to_string(),
                    Quantity {
                        string: Some("2".into()),
                    },
                )]
                .into(),
                scopes: vec!["BestEffort".into()],
                scope_selector: None,
            }),
            status: Some(core::ResourceQuotaStatus::default()),
        };
        let v = decode(&envelope(q.encode_to_vec())).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                "spec": {"hard": {"pods": "2"}, "scopes": ["BestEffort"]}})
        );
    }
}
