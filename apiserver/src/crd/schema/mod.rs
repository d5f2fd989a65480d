//! The structural schema of a custom resource (upstream
//! `apiextensions-apiserver/pkg/apiserver/schema`): a CRD version's
//! `openAPIV3Schema`, compiled once, and the four things the write path
//! asks of it.
//!
//! - [`Structural::compile`]: the CRD's own checks of the schema
//!   ([`check`]), then the compiled tree ([`node`]), CEL programs included.
//! - [`Structural::apply_defaults`] ([`defaults`]), [`Structural::prune`]
//!   ([`prune`]).
//! - [`Structural::validate`]: kube-openapi's value checks ([`validate`],
//!   [`formats`]), list types and embedded resources ([`listtype`]), then
//!   the CEL rules ([`cel`]), in that order.
//!
//! [`path`] prints a value's position the ways upstream's messages do.
//! Start with [`node::Node`], the compiled tree every other file walks.

pub mod cel;
pub mod check;
pub mod defaults;
pub mod formats;
pub mod listtype;
pub mod node;
pub mod path;
pub mod prune;
pub mod validate;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use serde_json::Value;

use crate::error::FieldError;
use node::Node;
use path::Path;

/// How many compiled schemas [`Structural::compile`] keeps (then it starts over).
const COMPILED_MAX: usize = 64;

/// Schemas that passed their checks, compiled, by their JSON text. A CRD is
/// validated on every write (each status update too), its registry rows
/// compile it again, and its versions often share one schema: with the
/// Gateway API's CEL rules that was most of a second at every start. The
/// cache is process-wide; a compiled tree is immutable, so sharing it is safe.
static COMPILED: LazyLock<Mutex<HashMap<String, Arc<Node>>>> = LazyLock::new(Mutex::default);

fn compiled() -> MutexGuard<'static, HashMap<String, Arc<Node>>> {
    COMPILED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A compiled `openAPIV3Schema`.
#[derive(Debug)]
pub struct Structural {
    /// The schema as written.
    pub raw: Value,
    /// The compiled tree.
    pub root: Arc<Node>,
}

impl Structural {
    /// Compiles a schema; the errors are the CRD's own validation errors
    /// (paths under `field`, e.g. `spec.versions[0].schema.openAPIV3Schema`).
    /// A schema that compiled before (the same text) is not compiled again.
    pub fn compile(raw: &Value, field: &str) -> Result<Structural, Vec<FieldError>> {
        let text = raw.to_string();
        if let Some(root) = compiled().get(&text) {
            return Ok(Structural {
                raw: raw.clone(),
                root: root.clone(),
            });
        }
        let errs = check::check(raw, field);
        if !errs.is_empty() {
            return Err(errs);
        }
        let root = Arc::new(Node::build(raw));
        let mut cache = compiled();
        if cache.len() >= COMPILED_MAX {
            cache.clear();
        }
        cache.insert(text, root.clone());
        Ok(Structural {
            raw: raw.clone(),
            root,
        })
    }

    /// Fills `default`s into `obj` (a whole object, apiVersion to status).
    pub fn apply_defaults(&self, obj: &mut Value) {
        defaults::apply(&self.root, obj);
    }

    /// Removes the fields the schema does not know; returns their paths
    /// (`spec.foo`, `spec.items[0].bar`), as unknown-field warnings name them.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        prune::prune_root(&self.root, obj)
    }

    /// Validates `new` (an update when `old` is given: CEL transition rules
    /// see `oldSelf`): types, formats, bounds, enums, required, list types,
    /// `x-kubernetes-validations`.
    pub fn validate(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        validate::validate(&self.root, new, &mut Path::default(), &mut errs);
        listtype::validate(&self.root, new, &mut Path::default(), &mut errs);
        cel::validate(&self.root, new, old, &mut Path::default(), &mut errs);
        errs
    }
}
