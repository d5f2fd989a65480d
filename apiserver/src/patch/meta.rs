//! Field metadata for patching: how each field of a built-in kind merges.
//!
//! Strategic merge patch reads upstream's Go struct tags `patchStrategy` and
//! `patchMergeKey`; server-side apply reads the OpenAPI extensions
//! `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and
//! `x-kubernetes-map-type`. This module answers both questions for a path
//! inside an object, walking the type graph of the kind.
//!
//! API (kept stable; other modules call it):
//! - [`Schema::for_kind`] — the root node of a built-in kind.
//! - [`Schema::field`] — the node of a struct field; [`Schema::items`] — the
//!   node of a list element or map value.
//! - [`Schema::patch_strategy`], [`Schema::list_type`], [`Schema::map_atomic`],
//!   [`Schema::shape`], [`Schema::type_name`].
//!
//! An unknown kind or field gives `None`; callers then treat maps as merged
//! key by key and lists as atomic (upstream's behaviour for unstructured
//! objects, e.g. custom resources).

/// The JSON shape of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A struct with named fields.
    Struct,
    /// A map with free-form keys (`labels`, `data`).
    Map,
    /// A list.
    List,
    /// A string, number, boolean, or an opaque value (IntOrString, Quantity, RawExtension).
    Scalar,
}

/// Strategic-merge-patch behaviour of a field (upstream `patchStrategy` tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchStrategy {
    /// No tag: maps and structs merge key by key; lists are replaced.
    Default,
    /// `merge`: list elements merge by `key` (objects) or by value (primitives).
    Merge {
        /// `patchMergeKey`, `None` for primitive lists.
        key: Option<&'static str>,
    },
    /// `replace`: the whole field is replaced.
    Replace,
    /// `retainKeys` on a struct: `$retainKeys` is honoured.
    RetainKeys,
    /// `merge,retainKeys` on a list of objects.
    MergeRetainKeys {
        /// `patchMergeKey`.
        key: &'static str,
    },
}

/// Server-side-apply behaviour of a list (`x-kubernetes-list-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole; one owner.
    Atomic,
    /// A set of scalars, owned per value.
    Set,
    /// A map of objects keyed by these fields, owned per element.
    Map(&'static [&'static str]),
}

/// A node in the type graph of a built-in kind.
#[derive(Clone, Debug)]
pub struct Schema {
    _private: (),
}

impl Schema {
    /// The root schema of a built-in kind, e.g. `("apps", "Deployment")`.
    pub fn for_kind(_group: &str, _kind: &str) -> Option<Schema> {
        None
    }

    /// The node of a struct field.
    pub fn field(&self, _name: &str) -> Option<Schema> {
        None
    }

    /// The node of a list element or map value.
    pub fn items(&self) -> Option<Schema> {
        None
    }

    /// The JSON shape.
    pub fn shape(&self) -> Shape {
        Shape::Scalar
    }

    /// Upstream type name when known, e.g. `io.k8s.api.core.v1.PodSpec`.
    pub fn type_name(&self) -> Option<&str> {
        None
    }

    /// The SMP strategy of this field.
    pub fn patch_strategy(&self) -> PatchStrategy {
        PatchStrategy::Default
    }

    /// The SSA list type (for [`Shape::List`] nodes).
    pub fn list_type(&self) -> ListType {
        ListType::Atomic
    }

    /// `x-kubernetes-map-type: atomic` on a map or struct (e.g. `LabelSelector`
    /// is granular, `nodeSelector` terms may be atomic).
    pub fn map_atomic(&self) -> bool {
        false
    }
}
