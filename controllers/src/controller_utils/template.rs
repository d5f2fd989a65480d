//! Pods built from a controller's pod template.
//!
//! Upstream: `pkg/controller/controller_utils.go` (`GetPodFromTemplate`, `getPodsPrefix`,
//! `validateControllerRef`, the checks of `createPods`).
//!
//! Simplified: the pod's namespace is set here rather than left to the request path.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

/// Why a pod cannot be built from a template (upstream refuses the create for the same reasons).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodTemplateError {
    /// The template has no labels; such a pod could never be matched back to its owner.
    NoLabels,
    /// The controller reference lacks apiVersion/kind or `controller`/`blockOwnerDeletion` is not true.
    InvalidControllerRef(&'static str),
}

impl fmt::Display for PodTemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoLabels => f.write_str("unable to create pods, no labels"),
            Self::InvalidControllerRef(why) => write!(f, "invalid controllerRef: {why}"),
        }
    }
}

impl std::error::Error for PodTemplateError {}

/// Upstream `validateControllerRef`.
fn validate_controller_ref(r: &OwnerReference) -> Result<(), PodTemplateError> {
    let problem = if r.api_version.is_empty() {
        Some("controllerRef has empty APIVersion")
    } else if r.kind.is_empty() {
        Some("controllerRef has empty Kind")
    } else if r.controller != Some(true) {
        Some("controllerRef.Controller is not set to true")
    } else if r.block_owner_deletion != Some(true) {
        Some("controllerRef.BlockOwnerDeletion is not set")
    } else {
        None
    };
    problem.map_or(Ok(()), |why| Err(PodTemplateError::InvalidControllerRef(why)))
}

/// Upstream `GetPodFromTemplate` plus the checks of `createPods`.
///
/// Copies labels, annotations, finalizers and spec from the template, adds `controller_ref`, sets
/// `generateName` to `<owner>-` (see [`pods_prefix`]) and the owner's namespace (upstream leaves the
/// namespace to the request path; setting it here is equivalent).
pub fn pod_from_template(
    template: &PodTemplateSpec,
    owner: &ObjectMeta,
    controller_ref: OwnerReference,
) -> Result<Pod, PodTemplateError> {
    validate_controller_ref(&controller_ref)?;
    let template_meta = template.metadata.clone().unwrap_or_default();
    if template_meta.labels.as_ref().is_none_or(BTreeMap::is_empty) {
        return Err(PodTemplateError::NoLabels);
    }
    let metadata = ObjectMeta {
        generate_name: Some(pods_prefix(owner.name.as_deref().unwrap_or(""))),
        namespace: owner.namespace.clone(),
        labels: template_meta.labels,
        annotations: template_meta.annotations,
        finalizers: template_meta.finalizers,
        owner_references: Some(vec![controller_ref]),
        ..ObjectMeta::default()
    };
    Ok(Pod {
        metadata,
        spec: template.spec.clone(),
        status: None,
    })
}

/// Upstream `getPodsPrefix`: `<name>-` when that is a valid generateName for a pod, else `<name>`.
pub fn pods_prefix(controller_name: &str) -> String {
    let prefix = format!("{controller_name}-");
    if is_dns1123_subdomain(&mask_trailing_dash(&prefix)) {
        prefix
    } else {
        controller_name.to_owned()
    }
}

/// Upstream `maskTrailingDash`: a generateName may end in `-`, so validate it as if it ended in `a`.
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(stem) if name.len() > 1 => {
            let cut = stem.char_indices().last().map_or(0, |(i, _)| i);
            format!("{}a", &stem[..cut])
        }
        _ => name.to_owned(),
    }
}

fn is_dns1123_subdomain(name: &str) -> bool {
    name.len() <= 253 && !name.is_empty() && name.split('.').all(is_dns1123_label_part)
}

fn is_dns1123_label_part(part: &str) -> bool {
    let bytes = part.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    alnum(first) && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
}
