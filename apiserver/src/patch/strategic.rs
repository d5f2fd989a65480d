//! Strategic merge patch (`application/strategic-merge-patch+json`) on
//! `serde_json::Value`, as the API server applies it.
//!
//! Follows upstream `k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`
//! (`StrategicMergeMapPatch` → `mergeMap` with "merge parallel lists" and
//! "ignore unmatched nulls" on) and the error texts of
//! `k8s.io/apimachinery/pkg/util/mergepatch/errors.go`; the HTTP status split
//! is that of `k8s.io/apiserver/pkg/endpoints/handlers/patch.go`
//! (`interpretStrategicMergePatchError`). Field strategies come from
//! [`super::meta::Schema`]; without a schema (or on a path it does not know)
//! maps merge key by key and lists are replaced.
//!
//! What is reproduced on purpose: directive order (`$patch`, `$retainKeys`,
//! `$setElementOrder`, then `$deleteFromPrimitiveList` and plain keys), the
//! list ordering rules including Go's `sort.SliceStable` on a non-strict
//! comparison, single-field merge keys (ports merging on the number alone),
//! Go-style `%v` rendering of values inside error messages.
//!
//! Simplified: keys of a patch map are visited in sorted order (Go visits a
//! map in random order, which only matters for which of several errors is
//! reported); comparisons Go would panic on (a map or list used as a merge-key
//! value) compare unequal; a field the schema does not know is treated as
//! schema-less instead of failing the request; only the server-side apply
//! half of `patch.go` exists here (no diff / patch creation).

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::meta::{PatchStrategy, Schema};

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_PREFIX: &str = "$deleteFromPrimitiveList";
const ORDER_PREFIX: &str = "$setElementOrder";

/// A failed strategic merge patch. `Display` is the upstream message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// Upstream answers 400 BadRequest (malformed directives, bad JSON).
    #[error("{0}")]
    BadRequest(String),
    /// Upstream answers 422 (lists of lists).
    #[error("{0}")]
    Unprocessable(String),
    /// A plain Go error: upstream answers 500 with reason `""` and this text.
    #[error("{0}")]
    Internal(String),
}

impl PatchError {
    /// The HTTP status a real API server would answer with.
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::BadRequest(_) => 400,
            PatchError::Unprocessable(_) => 422,
            PatchError::Internal(_) => 500,
        }
    }

    fn primitive_list_format() -> Self {
        PatchError::BadRequest("invalid patch format of primitive list".into())
    }

    fn retain_keys_format() -> Self {
        PatchError::BadRequest("invalid patch format of retainKeys".into())
    }

    fn set_order_format() -> Self {
        PatchError::BadRequest("invalid patch format of setElementOrder list".into())
    }

    fn list_of_lists() -> Self {
        PatchError::Unprocessable("lists of lists are not supported".into())
    }

    fn no_merge_key(map: &Map<String, Value>, key: &str) -> Self {
        let map = go_fmt(&Value::Object(map.clone()));
        PatchError::Internal(format!("map: {map} does not contain declared merge key: {key}"))
    }

    fn bad_arg_type(expected: &str, actual: &Value) -> Self {
        let actual = go_type_name(actual);
        PatchError::Internal(format!("expected a {expected}, but received a {actual}"))
    }

    fn bad_patch_type(directive: &Value, map: &Map<String, Value>) -> Self {
        let map = go_fmt(&Value::Object(map.clone()));
        let directive = go_fmt_s(directive);
        PatchError::Internal(format!("unknown patch type: {directive} in map: {map}"))
    }
}

type Result<T> = std::result::Result<T, PatchError>;

const GO_MAP: &str = "map[string]interface {}";
const GO_SLICE: &str = "[]interface {}";

/// Applies a strategic merge patch to `original`.
///
/// `schema` is the root of the object's kind ([`Schema::for_kind`]); `None`
/// treats the whole object as unstructured. A `null` patch is a no-op, as in
/// Go where `null` decodes to an empty map.
pub fn strategic_merge_patch(
    schema: Option<&Schema>,
    original: &Value,
    patch: &Value,
) -> std::result::Result<Value, PatchError> {
    let patch = match patch {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => return Err(unmarshal_error(other)),
    };
    let original = match original {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    merge_map(original, patch, schema).map(Value::Object)
}

/// The text Go's `json.Unmarshal` gives for a non-object patch body.
fn unmarshal_error(value: &Value) -> PatchError {
    let found = match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        _ => "bool",
    };
    PatchError::BadRequest(format!(
        "json: cannot unmarshal {found} into Go value of type map[string]interface {{}}"
    ))
}

// ---------------------------------------------------------------------------
// Maps.

/// `mergeMap`: one map level.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: Option<&Schema>,
) -> Result<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE).cloned() {
        return map_directive(&directive, patch);
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_ordered_lists(&mut original, &mut patch, schema)?;
    for (key, value) in patch {
        merge_entry(&mut original, key, value, schema)?;
    }
    Ok(original)
}

/// `$patch` on a map: `replace` keeps the patch, `delete` empties the map.
fn map_directive(directive: &Value, mut patch: Map<String, Value>) -> Result<Map<String, Value>> {
    match directive.as_str() {
        Some("replace") => {
            patch.remove(DIRECTIVE);
            Ok(patch)
        }
        Some("delete") => Ok(Map::new()),
        _ => Err(PatchError::bad_patch_type(directive, &patch)),
    }
}

/// `$retainKeys`: drops original keys not listed, after checking that every
/// non-null patch key is listed.
fn apply_retain_keys(original: &mut Map<String, Value>, patch: &mut Map<String, Value>) -> Result<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(PatchError::retain_keys_format());
    };
    let listed = |key: &str| retain.iter().any(|v| v.as_str() == Some(key));
    let unlisted = patch.iter().any(|(k, v)| {
        !v.is_null() && !k.starts_with(DELETE_PREFIX) && !k.starts_with(ORDER_PREFIX) && !listed(k)
    });
    if unlisted {
        return Err(PatchError::retain_keys_format());
    }
    original.retain(|k, _| listed(k));
    Ok(())
}

/// One remaining patch key (`mergeMap`'s main loop).
fn merge_entry(
    original: &mut Map<String, Value>,
    key: String,
    value: Value,
    schema: Option<&Schema>,
) -> Result<()> {
    let (key, delete_list) = match key.strip_prefix(DELETE_PREFIX) {
        Some(_) => (strip_directive_prefix(&key, DELETE_PREFIX)?, true),
        None => (key, false),
    };
    if value.is_null() {
        original.remove(&key);
        return Ok(());
    }
    let merged = match (original.remove(&key), value) {
        (Some(Value::Object(o)), Value::Object(p)) => Some(merge_map_field(o, p, child(schema, &key))?),
        (Some(Value::Array(o)), Value::Array(p)) => {
            Some(merge_list_field(o, p, child(schema, &key).as_ref(), delete_list)?)
        }
        (existing, _) if delete_list => existing,
        (_, value) => clean_new_value(value),
    };
    if let Some(merged) = merged {
        original.insert(key, merged);
    }
    Ok(())
}

/// Splits `<prefix>/<field>`; a bare or mistyped prefix is a 400. An empty
/// field name keeps the whole key, as upstream does.
fn strip_directive_prefix(key: &str, prefix: &str) -> Result<String> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(if field.is_empty() { key } else { field }.to_owned()),
        _ if prefix == DELETE_PREFIX => Err(PatchError::primitive_list_format()),
        _ => Err(PatchError::set_order_format()),
    }
}

/// A patch value stored where the original had nothing (or another JSON
/// type): nested nulls dropped, maps carrying `$patch` removed.
fn clean_new_value(mut value: Value) -> Option<Value> {
    discard_nulls(&mut value);
    remove_directives(value)
}

fn discard_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// `removeDirectives`: `None` when the value itself is a `$patch` map.
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) if map.contains_key(DIRECTIVE) => None,
        Value::Object(map) => Some(Value::Object(
            map.into_iter()
                .filter_map(|(k, v)| Some((k, remove_directives(v)?)))
                .collect(),
        )),
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

/// The schema of the value under `key` of a map or struct node.
fn child(schema: Option<&Schema>, key: &str) -> Option<Schema> {
    let schema = schema?;
    match schema.shape() {
        super::meta::Shape::Struct => schema.field(key),
        super::meta::Shape::Map => schema.items(),
        _ => None,
    }
}

fn merge_map_field(
    original: Map<String, Value>,
    patch: Map<String, Value>,
    field: Option<Schema>,
) -> Result<Value> {
    let strategy = field.as_ref().map(Schema::patch_strategy);
    if strategy == Some(PatchStrategy::Replace) {
        return Ok(Value::Object(patch));
    }
    merge_map(original, patch, field.as_ref()).map(Value::Object)
}

// ---------------------------------------------------------------------------
// Lists.

/// How a list field merges: its merge key (if any) and element schema.
struct ListMeta {
    merge: bool,
    key: Option<&'static str>,
    elem: Option<Schema>,
}

impl ListMeta {
    fn of(field: Option<&Schema>) -> ListMeta {
        let strategy = field.map(Schema::patch_strategy).unwrap_or_default();
        let (merge, key) = match strategy {
            PatchStrategy::Merge { key } => (true, key),
            PatchStrategy::MergeRetainKeys { key } => (true, Some(key)),
            _ => (false, None),
        };
        let elem = field.and_then(Schema::items);
        ListMeta { merge, key, elem }
    }
}

/// `mergeSliceHandler`: merge lists merge, delete lists delete, others are
/// replaced by the patch list as sent.
fn merge_list_field(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: Option<&Schema>,
    delete_list: bool,
) -> Result<Value> {
    let meta = ListMeta::of(field);
    if !meta.merge && !delete_list {
        return Ok(Value::Array(patch));
    }
    merge_list(original, patch, &meta, delete_list).map(Value::Array)
}

/// The JSON type of a list element as Go sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GoType {
    Null,
    Bool,
    Int,
    Float,
    String,
    List,
    Map,
}

fn go_type(value: &Value) -> GoType {
    match value {
        Value::Null => GoType::Null,
        Value::Bool(_) => GoType::Bool,
        Value::Number(n) => match go_number(n) {
            GoNumber::Int(_) => GoType::Int,
            GoNumber::Float(_) => GoType::Float,
        },
        Value::String(_) => GoType::String,
        Value::Array(_) => GoType::List,
        Value::Object(_) => GoType::Map,
    }
}

/// `sliceElementType`: all elements of all lists share one type, not a list.
fn element_type(lists: &[&[Value]]) -> Result<GoType> {
    let mut found = None;
    for item in lists.iter().flat_map(|l| l.iter()) {
        let t = go_type(item);
        match found {
            None if t == GoType::List => return Err(PatchError::list_of_lists()),
            None => found = Some(t),
            Some(prev) if prev != t => {
                let all = Value::Array(lists.iter().map(|l| Value::Array(l.to_vec())).collect());
                let text = format!("list element types are not identical: {}", go_fmt(&all));
                return Err(PatchError::Internal(text));
            }
            Some(_) => {}
        }
    }
    found.ok_or_else(|| PatchError::Internal("no elements in any of the given slices".into()))
}

/// `mergeSlice`.
fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &ListMeta,
    delete_list: bool,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_type(&[&original, &patch])?;
    let (original, patch, merged) = if kind != GoType::Map {
        if delete_list {
            return Ok(delete_values(original, &patch));
        }
        let both = original.iter().chain(&patch).cloned().collect();
        (original, patch, dedup_scalars(both))
    } else {
        let key = meta.key.ok_or_else(|| {
            let name = meta
                .elem
                .as_ref()
                .and_then(|s| s.type_name())
                .unwrap_or("unknown");
            let short = name.rsplit('.').next().unwrap_or(name);
            PatchError::Internal(format!("cannot merge lists without merge key for {short}"))
        })?;
        let (original, patch) = special_elements(original, patch, key)?;
        let merged = merge_keyed(original.clone(), &patch, key, meta.elem.as_ref())?;
        (original, patch, merged)
    };
    let (in_patch, server_only) = partition(merged, &patch, meta.key)?;
    normalize_order(in_patch, server_only, &patch, &original, meta.key, kind)
}

/// `deleteFromSlice`: drops every occurrence of the listed values.
fn delete_values(current: Vec<Value>, doomed: &[Value]) -> Vec<Value> {
    current
        .into_iter()
        .filter(|v| !doomed.iter().any(|d| go_eq(Some(d), Some(v))))
        .collect()
}

/// `deduplicateScalars`, including its swap-with-last reordering.
fn dedup_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i + 1 < s.len() {
        let mut j = i + 1;
        while j < s.len() {
            if go_eq(Some(&s[i]), Some(&s[j])) {
                s.swap_remove(j);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    s
}

/// `mergeSliceWithSpecialElements`: applies `$patch` items. Returns the new
/// original and the patch items left to merge.
fn special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut rest = Vec::new();
    let mut replace = false;
    for item in patch {
        let map = item.as_object().cloned().unwrap_or_default();
        let Some(directive) = map.get(DIRECTIVE) else {
            rest.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let value = map.get(key).ok_or_else(|| PatchError::no_merge_key(&map, key))?;
                delete_matching(&mut original, key, value)?;
            }
            Some("replace") => replace = true,
            Some("merge") => {
                let text = "merging lists cannot yet be specified in the patch";
                return Err(PatchError::Internal(text.into()));
            }
            _ => return Err(PatchError::bad_patch_type(directive, &map)),
        }
    }
    Ok(if replace {
        (rest, Vec::new())
    } else {
        (original, rest)
    })
}

/// `deleteMatchingEntries`: removes every element whose key equals `value`.
fn delete_matching(original: &mut Vec<Value>, key: &str, value: &Value) -> Result<()> {
    while let Some(i) = find_by_key(original, key, value)? {
        original.remove(i);
    }
    Ok(())
}

/// `findMapInSliceBasedOnKeyValue`: the first element whose `key` equals `value`.
fn find_by_key(list: &[Value], key: &str, value: &Value) -> Result<Option<usize>> {
    for (i, item) in list.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(PatchError::Internal(format!("value for key {i} is not a map.")));
        };
        if map.get(key).is_some_and(|v| go_eq(Some(v), Some(value))) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// `mergeSliceWithoutSpecialElements`: merges each patch item into the first
/// original item with the same key, or appends it as sent.
fn merge_keyed(
    mut merged: Vec<Value>,
    patch: &[Value],
    key: &str,
    elem: Option<&Schema>,
) -> Result<Vec<Value>> {
    for item in patch {
        let map = item.as_object().cloned().unwrap_or_default();
        let value = map.get(key).ok_or_else(|| PatchError::no_merge_key(&map, key))?;
        match find_by_key(&merged, key, value)? {
            Some(i) => {
                let target = std::mem::take(&mut merged[i]);
                let target = target.as_object().cloned().unwrap_or_default();
                merged[i] = Value::Object(merge_map(target, map, elem)?);
            }
            None => merged.push(item.clone()),
        }
    }
    Ok(merged)
}

/// Splits `merged` into items present in `by` and server-only items
/// (`partitionPrimitivesByPresentInList` / `partitionMapsByPresentInList`).
fn partition(merged: Vec<Value>, by: &[Value], key: Option<&str>) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut present = Vec::new();
    let mut server_only = Vec::new();
    for item in merged {
        let found = match key {
            None => by.iter().any(|b| go_eq(Some(b), Some(&item))),
            Some(key) => {
                let map = item
                    .as_object()
                    .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, &item))?;
                let value = map.get(key).ok_or_else(|| PatchError::no_merge_key(map, key))?;
                find_by_key(by, key, value)?.is_some()
            }
        };
        if found {
            present.push(item)
        } else {
            server_only.push(item)
        }
    }
    Ok((present, server_only))
}

// ---------------------------------------------------------------------------
// `$setElementOrder`.

/// `mergePatchIntoOriginal`: every `$setElementOrder/<field>` with its list.
fn merge_ordered_lists(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: Option<&Schema>,
) -> Result<()> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(ORDER_PREFIX))
        .cloned()
        .collect();
    for key in keys {
        let order = patch.remove(&key).unwrap_or_default();
        let Value::Array(order) = order else {
            return Err(PatchError::bad_arg_type(GO_SLICE, &order));
        };
        let field = strip_directive_prefix(&key, ORDER_PREFIX)?;
        let schema = child(schema, &field);
        if let Some(list) = ordered_list(original, patch, &field, &order, schema.as_ref())? {
            original.insert(field.clone(), Value::Array(list));
            patch.remove(&field);
        }
    }
    Ok(())
}

/// Merges one list under the order directive; `None` when neither side has it.
fn ordered_list(
    original: &Map<String, Value>,
    patch: &Map<String, Value>,
    field: &str,
    order: &[Value],
    schema: Option<&Schema>,
) -> Result<Option<Vec<Value>>> {
    let live = list_at(original, field)?;
    let sent = list_at(patch, field)?;
    let meta = ListMeta::of(schema);
    check_order(sent.as_deref().unwrap_or_default(), order, meta.key)?;
    let merged = match (&live, &sent) {
        (None, None) => return Ok(None),
        (Some(live), None) => live.clone(),
        (None, Some(sent)) => {
            let cleaned = remove_directives(Value::Array(sent.clone()));
            cleaned.and_then(|v| v.as_array().cloned()).unwrap_or_default()
        }
        (Some(live), Some(sent)) => match merge_list_field(live.clone(), sent.clone(), schema, false)? {
            Value::Array(list) => list,
            _ => Vec::new(),
        },
    };
    let (in_order, server_only) = partition(merged, order, meta.key)?;
    let live = live.unwrap_or_default();
    let kind = element_type(&[&live, sent.as_deref().unwrap_or_default()])?;
    normalize_order(in_order, server_only, order, &live, meta.key, kind).map(Some)
}

/// The list under `key`, if present; any other JSON type is an error.
fn list_at(map: &Map<String, Value>, key: &str) -> Result<Option<Vec<Value>>> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Array(list)) => Ok(Some(list.clone())),
        Some(other) => Err(PatchError::bad_arg_type(GO_SLICE, other)),
    }
}

/// `validatePatchWithSetOrderList`: the patch items (deletions and directive
/// items aside) must appear in the directive in the same relative order.
fn check_order(sent: &[Value], order: &[Value], key: Option<&str>) -> Result<()> {
    if sent.is_empty() || order.is_empty() {
        return Ok(());
    }
    let kept = match key {
        Some(_) => split_deletions(sent.to_vec())?.0,
        None => sent.to_vec(),
    };
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if kept[p].as_object().is_some_and(|m| m.contains_key(DIRECTIVE)) {
            p += 1;
            continue;
        }
        if key_value_eq(&kept[p], &order[o], key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() && o >= order.len() {
        let sent = go_fmt(&Value::Array(sent.to_vec()));
        let order = go_fmt(&Value::Array(order.to_vec()));
        return Err(PatchError::Internal(format!(
            "The order in patch list:\n{sent}\n doesn't match {ORDER_PREFIX} list:\n{order}\n"
        )));
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
fn key_value_eq(left: &Value, right: &Value, key: Option<&str>) -> Result<bool> {
    let Some(key) = key else {
        return Ok(go_eq(Some(left), Some(right)));
    };
    let l = left
        .as_object()
        .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, left))?;
    let r = right
        .as_object()
        .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, right))?;
    let lv = l.get(key).ok_or_else(|| PatchError::no_merge_key(l, key))?;
    let rv = r.get(key).ok_or_else(|| PatchError::no_merge_key(r, key))?;
    Ok(go_eq(Some(lv), Some(rv)))
}

/// `extractToDeleteItems`: (items kept, items carrying `$patch: delete`).
fn split_deletions(items: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut kept = Vec::new();
    let mut deleted = Vec::new();
    for item in items {
        let map = item
            .as_object()
            .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, &item))?;
        if map.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") {
            deleted.push(item);
        } else {
            kept.push(item);
        }
    }
    Ok((kept, deleted))
}

// ---------------------------------------------------------------------------
// Ordering.

/// `normalizeElementOrder`: sorts patch items by `patch_order`, server-only
/// items by `server_order`, then interleaves them.
fn normalize_order(
    in_patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    key: Option<&str>,
    kind: GoType,
) -> Result<Vec<Value>> {
    let in_patch = sort_by_order(in_patch, patch_order, key, kind)?;
    let server_only = sort_by_order(server_only, server_order, key, kind)?;
    Ok(merge_sorted(server_only, in_patch, server_order, key, kind))
}

/// `index`: position of `item` in `list`, comparing merge-key values for maps.
fn index_of(list: &[Value], item: &Value, key: Option<&str>, kind: GoType) -> Option<usize> {
    let id = |v: &Value| -> Option<Value> {
        if kind != GoType::Map {
            return Some(v.clone());
        }
        v.as_object()?.get(key.unwrap_or_default()).cloned()
    };
    let wanted = id(item);
    list.iter().position(|v| go_eq(id(v).as_ref(), wanted.as_ref()))
}

/// `normalizeSliceOrder`: Go's `sort.SliceStable` with upstream's comparison
/// (items missing from `order` compare as "less"), deletions moved last.
fn sort_by_order(items: Vec<Value>, order: &[Value], key: Option<&str>, kind: GoType) -> Result<Vec<Value>> {
    let (items, deleted) = if kind == GoType::Map {
        let key = key.unwrap_or_default();
        require_keys(&items, key)?;
        require_keys(order, key)?;
        split_deletions(items)?
    } else {
        (items, Vec::new())
    };
    let mut ranked: Vec<(Option<usize>, Value)> = items
        .into_iter()
        .map(|v| (index_of(order, &v, key, kind), v))
        .collect();
    go_stable_sort(&mut ranked, |a, b| match (a.0, b.0) {
        (Some(i), Some(j)) => i < j,
        _ => true,
    });
    Ok(ranked.into_iter().map(|(_, v)| v).chain(deleted).collect())
}

/// `validateMergeKeyInLists`.
fn require_keys(items: &[Value], key: &str) -> Result<()> {
    for item in items {
        let map = item
            .as_object()
            .ok_or_else(|| PatchError::bad_arg_type(GO_MAP, item))?;
        if !map.contains_key(key) {
            return Err(PatchError::no_merge_key(map, key));
        }
    }
    Ok(())
}

/// `mergeSortedSlice`: takes the server-only item first only when both
/// candidates exist in the live list and it came earlier there.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    key: Option<&str>,
    kind: GoType,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                let li = index_of(server_order, l, key, kind);
                let ri = index_of(server_order, r, key, kind);
                matches!((li, ri), (Some(li), Some(ri)) if li < ri)
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

/// Go's `sort.SliceStable` (insertion sort on blocks of 20, then `symMerge`),
/// reproduced step for step because upstream's comparison is not a strict
/// weak order and the result depends on the algorithm.
fn go_stable_sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, a, b, &less);
        a = b;
        b += block;
    }
    insertion_sort(data, a, n, &less);
    while block < n {
        let (mut a, mut b) = (0, 2 * block);
        while b <= n {
            sym_merge(data, a, a + block, b, &less);
            a = b;
            b += 2 * block;
        }
        if a + block < n {
            sym_merge(data, a, a + block, n, &less);
        }
        block *= 2;
    }
}

fn insertion_sort<T>(data: &mut [T], a: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(&data[j], &data[j - 1]) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sym_merge<T>(data: &mut [T], a: usize, m: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&data[h], &data[a]) {
                i = h + 1
            } else {
                j = h
            }
        }
        for k in a..i.saturating_sub(1) {
            data.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&data[m], &data[h]) {
                i = h + 1
            } else {
                j = h
            }
        }
        for k in (i + 1..=m).rev() {
            data.swap(k, k - 1);
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&data[p - c], &data[c]) {
            start = c + 1
        } else {
            r = c
        }
    }
    let end = n - start;
    if start < m && m < end {
        data[start..end].rotate_left(m - start);
    }
    if a < start && start < mid {
        sym_merge(data, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(data, mid, end, b, less);
    }
}

// ---------------------------------------------------------------------------
// Go value semantics: equality of decoded JSON and `%v` rendering.

/// A JSON number as the API server decodes it: integral values are `int64`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum GoNumber {
    Int(i128),
    Float(f64),
}

fn go_number(n: &serde_json::Number) -> GoNumber {
    if let Some(i) = n.as_i64() {
        return GoNumber::Int(i.into());
    }
    if let Some(u) = n.as_u64() {
        return GoNumber::Int(u.into());
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && f.abs() < 9.2e18 {
        // Integral and within int64: the decoder turns it into an int64.
        return GoNumber::Int(f as i128);
    }
    GoNumber::Float(f)
}

/// Go's `==` on two decoded values (`None` and JSON null are both `nil`).
/// Maps and lists (a panic in Go) compare unequal.
fn go_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    let a = a.filter(|v| !v.is_null());
    let b = b.filter(|v| !v.is_null());
    match (a, b) {
        (None, None) => true,
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
        (Some(Value::String(x)), Some(Value::String(y))) => x == y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => go_number(x) == go_number(y),
        _ => false,
    }
}

/// Go's `reflect.TypeOf(v)` as `%s` prints it.
fn go_type_name(value: &Value) -> &'static str {
    match go_type(value) {
        GoType::Null => "%!s(<nil>)",
        GoType::Bool => "bool",
        GoType::Int => "int64",
        GoType::Float => "float64",
        GoType::String => "string",
        GoType::List => GO_SLICE,
        GoType::Map => GO_MAP,
    }
}

/// Go's `%v` of a decoded JSON value (`map[k:v ...]` with sorted keys).
fn go_fmt(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match go_number(n) {
            GoNumber::Int(i) => i.to_string(),
            GoNumber::Float(f) => go_float(f),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_fmt).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_fmt(v)))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

/// Go's `%s` of a decoded JSON value (non-strings render as `%!s(type=v)`).
fn go_fmt_s(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_fmt_s).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map.iter().map(|(k, v)| format!("{k}:{}", go_fmt_s(v))).collect();
            format!("map[{}]", inner.join(" "))
        }
        other => format!("%!s({}={})", go_type_name(other), go_fmt(other)),
    }
}

/// Go's `%v` of a float64: `strconv` 'g' with the shortest digits, in
/// exponent form when the decimal exponent is below -4 or at least 6.
fn go_float(f: f64) -> String {
    if !f.is_finite() {
        return match f.partial_cmp(&0.0) {
            Some(Ordering::Greater) => "+Inf".into(),
            Some(_) => "-Inf".into(),
            None => "NaN".into(),
        };
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CASES: &str = include_str!("../../testdata/smp.json");

    fn schema_for(object: &Value) -> Option<Schema> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        Schema::for_kind(group, object["kind"].as_str().unwrap_or_default())
    }

    #[test]
    fn upstream_cases() {
        let cases: Vec<Value> = serde_json::from_str(CASES).expect("smp.json");
        let mut failures = Vec::new();
        for case in &cases {
            let name = case["name"].as_str().unwrap_or("?");
            let schema = schema_for(&case["original"]);
            assert!(schema.is_some(), "{name}: no schema");
            let got = strategic_merge_patch(schema.as_ref(), &case["original"], &case["patch"]);
            let expected = &case["expected"];
            let ok = match (&got, expected.get("error")) {
                (Err(e), Some(msg)) => {
                    Some(e.to_string().as_str()) == msg.as_str()
                        && Some(u64::from(e.status_code())) == expected["http_status"].as_u64()
                }
                (Ok(v), None) => v == expected,
                _ => false,
            };
            if !ok {
                failures.push(format!("{name}: got {got:?}"));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} failed:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
    }

    fn pod() -> Schema {
        Schema::for_kind("", "Pod").unwrap()
    }

    #[test]
    fn unstructured_lists_replace_and_maps_merge() {
        let original = json!({"a": {"x": 1, "y": 2}, "l": [1, 2]});
        let patch = json!({"a": {"x": null, "z": 3}, "l": [3]});
        let got = strategic_merge_patch(None, &original, &patch).unwrap();
        assert_eq!(got, json!({"a": {"y": 2, "z": 3}, "l": [3]}));
    }

    #[test]
    fn new_container_goes_first_without_order_directive() {
        let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let patch = json!({"spec": {"containers": [{"name": "sidecar", "image": "s"}]}});
        let got = strategic_merge_patch(Some(&pod()), &original, &patch).unwrap();
        let names: Vec<&str> = got["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["sidecar", "a", "b"]);
    }

    #[test]
    fn set_element_order_interleaves_server_only_items() {
        // Upstream "set elements order in a list with server-only items":
        // live [1,2,7,9,8,3,4] + order [2,1,4,3] -> [2,1,7,9,8,4,3].
        let live: Vec<Value> = [1, 2, 7, 9, 8, 3, 4]
            .iter()
            .map(|n| json!({"name": format!("c{n}")}))
            .collect();
        let order: Vec<Value> = [2, 1, 4, 3]
            .iter()
            .map(|n| json!({"name": format!("c{n}")}))
            .collect();
        let original = json!({"spec": {"containers": live}});
        let patch = json!({"spec": {"$setElementOrder/containers": order}});
        let got = strategic_merge_patch(Some(&pod()), &original, &patch).unwrap();
        let names: Vec<&str> = got["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["c2", "c1", "c7", "c9", "c8", "c4", "c3"]);
    }

    #[test]
    fn service_ports_merge_on_port_alone() {
        let svc = Schema::for_kind("", "Service").unwrap();
        let original = json!({"spec": {"ports": [{"port": 53, "protocol": "UDP"}]}});
        let patch = json!({"spec": {"ports": [{"port": 53, "protocol": "TCP"}]}});
        let got = strategic_merge_patch(Some(&svc), &original, &patch).unwrap();
        assert_eq!(got["spec"]["ports"], json!([{"port": 53, "protocol": "TCP"}]));
    }

    #[test]
    fn errors_carry_upstream_text_and_status() {
        let original = json!({"spec": {"containers": [{"name": "a", "env": [{"name": "X"}]}]}});
        let missing_key = json!({"spec": {"containers": [{"name": "a", "env": [{"value": "1"}]}]}});
        let err = strategic_merge_patch(Some(&pod()), &original, &missing_key).unwrap_err();
        assert_eq!(
            err.to_string(),
            "map: map[value:1] does not contain declared merge key: name"
        );
        assert_eq!(err.status_code(), 500);

        let bad_retain = json!({"spec": {"$retainKeys": ["a"], "hostname": "h"}});
        let err = strategic_merge_patch(Some(&pod()), &original, &bad_retain).unwrap_err();
        assert_eq!(
            err,
            PatchError::BadRequest("invalid patch format of retainKeys".into())
        );

        let lists_of_lists = json!({"metadata": {"finalizers": [["x"]]}});
        let with_finalizers = json!({"metadata": {"finalizers": []}});
        let err = strategic_merge_patch(Some(&pod()), &with_finalizers, &lists_of_lists).unwrap_err();
        assert_eq!(err.status_code(), 422);

        let merge_in_list = json!({"spec": {"containers": [{"$patch": "merge"}]}});
        let err = strategic_merge_patch(Some(&pod()), &original, &merge_in_list).unwrap_err();
        assert_eq!(
            err.to_string(),
            "merging lists cannot yet be specified in the patch"
        );

        let err = strategic_merge_patch(None, &original, &json!([1])).unwrap_err();
        assert_eq!(err.status_code(), 400);
    }

    #[test]
    fn delete_from_primitive_list_on_non_merge_list_and_missing_field() {
        let original = json!({"spec": {"containers": [{"name": "a", "args": ["x", "y", "x"]}]}});
        let patch = json!({"spec": {"containers": [{"name": "a", "$deleteFromPrimitiveList/args": ["x"], "$deleteFromPrimitiveList/command": ["z"]}]}});
        let got = strategic_merge_patch(Some(&pod()), &original, &patch).unwrap();
        assert_eq!(got["spec"]["containers"][0], json!({"name": "a", "args": ["y"]}));
    }

    #[test]
    fn map_and_list_directives() {
        let ds = Schema::for_kind("apps", "DaemonSet").unwrap();
        let original =
            json!({"spec": {"template": {"metadata": {"labels": {"a": "1"}}, "spec": {"hostname": "h"}}}});
        // `kubectl rollout undo` of a DaemonSet: the template is replaced whole.
        let patch = json!({"spec": {"template": {"$patch": "replace", "spec": {"subdomain": "s"}}}});
        let got = strategic_merge_patch(Some(&ds), &original, &patch).unwrap();
        assert_eq!(got, json!({"spec": {"template": {"spec": {"subdomain": "s"}}}}));

        let got = strategic_merge_patch(Some(&ds), &original, &json!({"$patch": "delete"})).unwrap();
        assert_eq!(got, json!({}));

        // `$patch: replace` in a merge list keeps the other items exactly as sent.
        let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let patch = json!({"spec": {"containers": [{"name": "c", "image": null}, {"$patch": "replace"}]}});
        let got = strategic_merge_patch(Some(&pod()), &original, &patch).unwrap();
        assert_eq!(got["spec"]["containers"], json!([{"name": "c", "image": null}]));

        // A value stored where nothing was: nested nulls and `$patch` maps go.
        let patch = json!({"spec": {"volumes": [{"name": "v", "emptyDir": null}, {"name": "w", "$patch": "delete"}]}});
        let got = strategic_merge_patch(Some(&pod()), &original, &patch).unwrap();
        assert_eq!(got["spec"]["volumes"], json!([{"name": "v"}]));
    }

    #[test]
    fn retain_keys_clears_stale_strategy_fields() {
        let deploy = Schema::for_kind("apps", "Deployment").unwrap();
        let original =
            json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
        let got = strategic_merge_patch(Some(&deploy), &original, &patch).unwrap();
        assert_eq!(got, json!({"spec": {"strategy": {"type": "Recreate"}}}));
    }

    #[test]
    fn malformed_directive_keys_are_bad_requests() {
        let original = json!({"metadata": {"finalizers": ["a"]}});
        for patch in [
            json!({"metadata": {"$deleteFromPrimitiveList": ["a"]}}),
            json!({"metadata": {"$setElementOrderX/finalizers": ["a"]}}),
            json!({"metadata": {"$retainKeys": "finalizers"}}),
        ] {
            let err = strategic_merge_patch(Some(&pod()), &original, &patch).unwrap_err();
            assert_eq!(err.status_code(), 400, "{patch}");
        }
    }

    #[test]
    fn go_formatting() {
        assert_eq!(
            go_fmt(&json!({"b": [1, 2.5, null], "a": true})),
            "map[a:true b:[1 2.5 <nil>]]"
        );
        assert_eq!(go_fmt(&json!(1.0)), "1");
        assert_eq!(go_float(1e-7), "1e-07");
        assert_eq!(go_fmt_s(&json!(3)), "%!s(int64=3)");
    }

    #[test]
    fn stable_sort_matches_go_on_strict_orders() {
        let mut v: Vec<u32> = (0..100).map(|i| (i * 37) % 101).collect();
        let mut expected = v.clone();
        expected.sort();
        go_stable_sort(&mut v, |a, b| a < b);
        assert_eq!(v, expected);
    }
}
