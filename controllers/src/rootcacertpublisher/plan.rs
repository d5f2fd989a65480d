//! What the publisher does in one namespace: pure.
//!
//! Upstream: `syncNamespace` of
//! `pkg/controller/certificates/rootcacertpublisher/publisher.go`.
//!
//! ```text
//! no kube-root-ca.crt                                   → Create (ca.crt, description annotation)
//! data == {ca.crt: CA} and the annotation is not empty  → Nothing
//! otherwise                                             → Update: data replaced, annotation set,
//!                                                         every other field kept
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The ConfigMap's name (upstream `RootCACertConfigMapName`).
pub const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";
/// The key of the certificate in its data.
pub const CA_CERT_KEY: &str = "ca.crt";
/// The annotation saying what the ConfigMap is for (upstream `DescriptionAnnotation`).
pub const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
/// Its text (upstream `Description`), word for word.
pub const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// One sync's decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// The ConfigMap is as it should be.
    Nothing,
    /// Create this ConfigMap.
    Create(ConfigMap),
    /// Replace the live ConfigMap with this one (same resourceVersion).
    Update(ConfigMap),
}

/// The data the ConfigMap must hold.
fn wanted_data(root_ca: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(CA_CERT_KEY.to_string(), root_ca.to_string())])
}

/// Upstream `syncNamespace`: what to do in namespace `ns`, given its
/// `kube-root-ca.crt` as cached (`None`: missing).
pub fn plan(ns: &str, live: Option<&ConfigMap>, root_ca: &str) -> Plan {
    let data = wanted_data(root_ca);
    let Some(live) = live else {
        return Plan::Create(ConfigMap {
            metadata: ObjectMeta {
                name: Some(ROOT_CA_CONFIG_MAP.to_string()),
                namespace: Some(ns.to_string()),
                annotations: Some(BTreeMap::from([(
                    DESCRIPTION_ANNOTATION.to_string(),
                    DESCRIPTION.to_string(),
                )])),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        });
    };
    let annotated = live
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
        .is_some_and(|d| !d.is_empty());
    if live.data.as_ref() == Some(&data) && annotated {
        return Plan::Nothing;
    }
    let mut fixed = live.clone();
    fixed.data = Some(data);
    fixed
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(DESCRIPTION_ANNOTATION.to_string(), DESCRIPTION.to_string());
    Plan::Update(fixed)
}
