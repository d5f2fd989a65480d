//! `/openapi/v3` and `/openapi/v2`: the API's schema, generated from the
//! Rust types of the served kinds.
//!
//! Upstream serves an index at `/openapi/v3` naming one document per
//! group-version (`"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=…"}`),
//! each an OpenAPI 3.0 document with the group-version's paths and every
//! definition they reach in `components.schemas`; the hash is the ETag, so
//! kubectl's HTTP cache revalidates instead of re-downloading. kubectl reads
//! these documents for three things:
//! * apply/create/replace check that the PATCH operation of the object's GVK
//!   takes `fieldValidation`, else they fall back to `/openapi/v2`;
//! * client-side apply computes its strategic merge patch from the
//!   definitions' `x-kubernetes-patch-*` extensions, but only when the PATCH
//!   operation advertises `application/strategic-merge-patch+json`;
//! * `kubectl explain` walks `components.schemas` from the definition whose
//!   `x-kubernetes-group-version-kind` names the kind.
//!
//! Here the definitions come from k8s-openapi's `schemars` implementations
//! (upstream names and descriptions), the paths from the
//! [`Registry`](crate::registry::Registry), and the patch extensions from
//! [`crate::patch::meta`]; nothing is written per kind. Strategic merge
//! patch is advertised only for kinds `patch::meta` knows, so kubectl falls
//! back to its compiled-in metadata for the others.
//!
//! Custom resources get their definitions from their CRD version's schema
//! ([`custom`]); their group-versions appear in the index like any other.
//!
//! Simplified: `/openapi/v2` is an empty protobuf document (a valid one:
//! kubectl 1.27/1.28 accept it and then use their compiled-in types, and
//! client-side apply of a custom resource, finding no patch metadata,
//! sends a merge patch as it does upstream); the hash is a 64-bit FNV-1a,
//! not upstream's SHA-512; a built-in kind without a Rust type gets paths
//! but no schema.
//!
//! The documents follow the registry: each request compares the
//! registry's change counter ([`Registry::subscribe`]) with the one the
//! documents were built at, and after a change rebuilds only the
//! group-versions whose rows changed (a CRD's group-version, typically),
//! reusing the others' bytes and hashes.
//!
//! Build cost, measured for the built-in registry (five group-versions,
//! 1.2 MB of JSON in all, api/v1 the largest at 450 kB): 25–60 ms in a
//! release build and 65–125 ms unoptimised on a loaded 2-core machine,
//! including the first use of `patch::meta`'s graph (~7 ms). It is done once,
//! on the first request that needs a document, so that it does not delay
//! start-up (most of which it was).

mod custom;
mod kinds;
mod patchmeta;
mod paths;

pub(crate) use kinds::{
    DecodeError, KnownKind, find as find_kind, generator, known_kinds, ref_target, take_definitions,
};

use crate::registry::{Registry, ResourceInfo, Subresource};
use bytes::Bytes;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

/// One group-version document, serialised.
struct Document {
    /// The registry rows it was built from; a later build reuses the
    /// document while the group-version has exactly these rows.
    resources: Vec<Arc<ResourceInfo>>,
    bytes: Bytes,
    hash: String,
}

/// The OpenAPI documents of a registry, built on first use and rebuilt
/// after the registry changes.
pub struct OpenApi {
    /// The served kinds.
    registry: Registry,
    /// The registry's change counter; read, never awaited.
    changes: tokio::sync::watch::Receiver<u64>,
    /// The documents of the latest build. A std `Mutex` held while a
    /// request checks them and, after a registry change, rebuilds them (no
    /// `.await` inside): a request arriving during a rebuild waits for it
    /// rather than building the same documents again.
    built: Mutex<Option<Arc<Built>>>,
}

/// Every document and the index naming them, as of one registry change.
struct Built {
    /// The registry's change counter when the rows were read.
    generation: u64,
    index: Value,
    /// Keyed by `api/v1`, `apis/apps/v1`.
    documents: BTreeMap<String, Arc<Document>>,
}

impl OpenApi {
    /// The documents of every group-version of `registry` (built when
    /// first read, and again when the registry has changed).
    pub fn new(registry: &Registry) -> OpenApi {
        OpenApi {
            registry: registry.clone(),
            changes: registry.subscribe(),
            built: Mutex::new(None),
        }
    }

    fn built(&self) -> Arc<Built> {
        // The counter is read before the rows: a change in between makes
        // the next request rebuild, never a stale build look current.
        let generation = *self.changes.borrow();
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(current) = built.as_ref()
            && current.generation == generation
        {
            return current.clone();
        }
        let fresh = Arc::new(Built::new(generation, &self.registry.all(), built.as_deref()));
        *built = Some(fresh.clone());
        fresh
    }

    /// The `/openapi/v3` index: every served group-version and the URL of
    /// its document, with the document's hash as a query parameter.
    pub fn v3_index(&self) -> Value {
        self.built().index.clone()
    }

    /// The serialised document of `gv_path` (`api/v1`, `apis/apps/v1`) and
    /// its ETag (the same hash the index carries).
    pub fn v3_document(&self, gv_path: &str) -> Option<(Bytes, String)> {
        let gv_path = gv_path.trim_start_matches('/');
        self.built()
            .documents
            .get(gv_path)
            .map(|d| (d.bytes.clone(), d.hash.clone()))
    }

    /// The body of `/openapi/v2`: an empty protobuf document. Serve it as
    /// `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`.
    pub fn v2_protobuf(&self) -> &[u8] {
        &[]
    }
}

impl Built {
    /// The documents of `resources`, reusing those of `previous` whose
    /// group-version has the same rows.
    fn new(generation: u64, resources: &[Arc<ResourceInfo>], previous: Option<&Built>) -> Built {
        let mut by_gv: BTreeMap<(String, String), Vec<Arc<ResourceInfo>>> = BTreeMap::new();
        for info in resources.iter().cloned() {
            by_gv
                .entry((info.group.clone(), info.version.clone()))
                .or_default()
                .push(info);
        }
        let mut documents = BTreeMap::new();
        for ((group, version), resources) in by_gv {
            let key = index_key(&group, &version);
            let reused = previous
                .and_then(|p| p.documents.get(&key))
                .filter(|d| same_rows(&d.resources, &resources));
            let document = match reused {
                Some(d) => d.clone(),
                None => {
                    let doc = group_version_document(&group, &version, &resources);
                    let bytes = serde_json::to_vec(&doc).expect("a JSON value always serialises");
                    let hash = fnv1a_hex(&bytes);
                    Arc::new(Document {
                        resources,
                        bytes: bytes.into(),
                        hash,
                    })
                }
            };
            documents.insert(key, document);
        }
        let index = index(&documents);
        Built {
            generation,
            index,
            documents,
        }
    }
}

/// Whether two lists hold the very same rows (the registry makes a new
/// `Arc` for every insert, so a changed row is never the same pointer).
fn same_rows(a: &[Arc<ResourceInfo>], b: &[Arc<ResourceInfo>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Arc::ptr_eq(x, y))
}

/// `api/v1` or `apis/<group>/<version>` (no leading slash, like upstream).
fn index_key(group: &str, version: &str) -> String {
    paths::group_version_path(group, version)[1..].to_string()
}

fn index(documents: &BTreeMap<String, Arc<Document>>) -> Value {
    let paths: Map<String, Value> = documents
        .iter()
        .map(|(key, doc)| {
            let url = format!("/openapi/v3/{key}?hash={}", doc.hash);
            (key.clone(), json!({"serverRelativeURL": url}))
        })
        .collect();
    json!({"paths": paths})
}

/// The document of one group-version.
fn group_version_document(group: &str, version: &str, resources: &[Arc<ResourceInfo>]) -> Value {
    let mut schemas = definitions(group, version, resources);
    custom::add_definitions(&mut schemas, resources);
    let mut paths = Map::new();
    for info in resources {
        let (definition, smp) = if info.custom.is_some() {
            let name = custom::definition_name(&info.group, &info.version, &info.kind);
            (Some(name), false)
        } else {
            let definition = find_kind(&info.group, &info.version, &info.kind).map(|k| k.definition_name());
            let smp = definition.is_some() && patchmeta::knows_kind(&info.group, &info.kind);
            (definition, smp)
        };
        paths::add_resource(
            &mut paths,
            &paths::PathSpec {
                info,
                definition,
                smp,
            },
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    })
}

/// `components.schemas` of one group-version: every served kind, its list,
/// the types they reach, the meta types, and the patch extensions.
fn definitions(group: &str, version: &str, resources: &[Arc<ResourceInfo>]) -> Map<String, Value> {
    let mut generator = generator();
    kinds::add_meta_types(&mut generator);
    if resources.iter().any(|r| r.custom.is_some()) {
        // What a custom resource's definitions refer to; a built-in kind
        // reaches it through its own type.
        generator.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>();
    }
    let served: Vec<KnownKind> = resources
        .iter()
        .filter_map(|r| find_kind(&r.group, &r.version, &r.kind))
        .collect();
    let extras = subresource_kinds(resources);
    for kind in served.iter().chain(&extras) {
        kind.add_to(&mut generator);
    }
    let mut defs = take_definitions(&mut generator);
    mark_meta_types(&mut defs, group, version);
    for kind in &extras {
        if let Some(def) = defs.get_mut(&kind.definition_name()) {
            kinds::mark_kind(def, kind.group, kind.version, kind.kind);
        }
    }
    let mut seen = HashSet::new();
    for kind in &served {
        let name = kind.definition_name();
        add_kind_and_list(&mut defs, &name, kind);
        patchmeta::annotate_kind(&mut defs, &name, kind.group, kind.kind, &mut seen);
    }
    defs
}

/// Tags a kind's definition with its GVK and adds its `<Kind>List`.
fn add_kind_and_list(defs: &mut Map<String, Value>, name: &str, kind: &KnownKind) {
    let Some(def) = defs.get_mut(name) else {
        return;
    };
    kinds::mark_kind(def, kind.group, kind.version, kind.kind);
    let list = kinds::list_definition(name, def, kind.group, kind.version, kind.kind);
    defs.insert(format!("{name}List"), list);
}

/// Upstream tags the shared meta types with the GVKs they travel as.
fn mark_meta_types(defs: &mut Map<String, Value>, group: &str, version: &str) {
    let mut tag = |name: &str, gvks: &[(&str, &str, &str)]| {
        if let Some(Value::Object(def)) = defs.get_mut(name) {
            def.insert("x-kubernetes-group-version-kind".into(), kinds::gvk_list(gvks));
        }
    };
    tag(
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        &[("", "v1", "Status")],
    );
    let mut delete = vec![("", "v1", "DeleteOptions")];
    if !group.is_empty() {
        delete.push((group, version, "DeleteOptions"));
    }
    tag("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", &delete);
}

/// The kinds subresources travel as: `autoscaling/v1` Scale, `v1` Binding.
fn subresource_kinds(resources: &[Arc<ResourceInfo>]) -> Vec<KnownKind> {
    let mut out = Vec::new();
    let wanted = [
        (Subresource::Scale, "autoscaling", "Scale"),
        (Subresource::Binding, "", "Binding"),
        (Subresource::Eviction, "policy", "Eviction"),
        (Subresource::Token, "authentication.k8s.io", "TokenRequest"),
    ];
    for (sub, group, kind) in wanted {
        if resources.iter().any(|r| r.has(sub))
            && let Some(k) = find_kind(group, "v1", kind)
        {
            out.push(k);
        }
    }
    out
}

/// 64-bit FNV-1a of `bytes`, as 16 upper-case hex digits.
fn fnv1a_hex(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016X}")
}

#[cfg(test)]
mod tests;
