//! CustomResourceDefinitions (upstream `k8s.io/apiextensions-apiserver`).
//!
//! A CRD adds rows to the [`crate::registry::Registry`] at run time, one per
//! served version; each row carries a [`CustomVersion`], and the write path,
//! tables, OpenAPI and server-side apply read it where a built-in kind reads
//! its k8s-openapi type.
//!
//! Layout: [`schema`] the structural schema (validation, defaulting,
//! pruning, CEL rules); [`names`] the naming and establishing decisions
//! (pure); [`rows`] the registry rows of a CRD (pure). The controller that
//! applies them runs in the API server: `api/custom_resources.rs`; the
//! CustomResourceDefinition kind's own strategy is `kinds/apiextensions.rs`,
//! the custom resources' `kinds/custom.rs`.

pub mod names;
pub mod rows;
pub mod schema;

use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion;

/// What a CustomResourceDefinition says of one served version of its
/// resource: the registry row of a custom resource points here.
#[derive(Debug)]
pub struct CustomVersion {
    /// The CRD's name, `<plural>.<group>`.
    pub crd: String,
    /// The version entry of `spec.versions`, as stored (its schema, its
    /// subresources, its printer columns).
    pub version: CustomResourceDefinitionVersion,
    /// `spec.versions[].schema.openAPIV3Schema`, compiled; `None` when the
    /// version declares no schema.
    pub structural: Option<Arc<schema::Structural>>,
}

impl PartialEq for CustomVersion {
    fn eq(&self, other: &Self) -> bool {
        self.crd == other.crd && self.version == other.version
    }
}
