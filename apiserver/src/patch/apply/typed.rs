//! Schema-aware walks over JSON values: field sets, merge, compare, removal.
//!
//! Mirrors structured-merge-diff `typed/tofieldset.go`, `merge.go`,
//! `compare.go`, `remove.go` and `helpers.go` (`listItemToPathElement`,
//! `deduceAtom`). A node without schema is "deduced": objects are granular
//! maps, lists are atomic, everything else is a scalar.

use serde_json::{Map, Value};

use super::super::meta::{ListType, Schema, Shape};
use super::fieldpath::{FieldSet, Path, PathElement, path_string};

/// A schema node, or `None` for the deduced schema of unstructured data.
#[derive(Clone, Debug, Default)]
pub struct Ty(pub Option<Schema>);

/// How a node behaves (smd `schema.Atom` after `deduceAtom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Atom {
    Scalar,
    /// A struct or map; `atomic` when owned as one leaf.
    Map {
        atomic: bool,
    },
    /// A list of the given kind.
    List(ListType),
    /// Deduced schema and a null/absent value: any shape fits (maps first).
    Untyped,
}

impl Ty {
    /// The type of field or map entry `name`.
    pub fn field(&self, name: &str) -> Ty {
        match &self.0 {
            Some(s) if s.shape() == Shape::Struct => Ty(s.field(name)),
            Some(s) if s.shape() == Shape::Map => Ty(s.items()),
            _ => Ty(None),
        }
    }

    /// The type of a list item.
    pub fn item(&self) -> Ty {
        Ty(self.0.as_ref().and_then(Schema::items))
    }

    /// The type below a path element.
    fn child(&self, pe: &PathElement) -> Ty {
        match pe {
            PathElement::Field(name) => self.field(name),
            _ => self.item(),
        }
    }

    /// Whether `name` is a declared field of a struct (not a map entry).
    pub fn declares(&self, name: &str) -> bool {
        matches!(&self.0, Some(s) if s.shape() == Shape::Struct && s.field(name).is_some())
    }

    fn atom(&self, v: Option<&Value>) -> Atom {
        match &self.0 {
            Some(s) => match s.shape() {
                Shape::Struct | Shape::Map => Atom::Map {
                    atomic: s.map_atomic(),
                },
                Shape::List => Atom::List(s.list_type()),
                Shape::Scalar => Atom::Scalar,
            },
            None => match v {
                Some(Value::Object(_)) => Atom::Map { atomic: false },
                Some(Value::Array(_)) => Atom::List(ListType::Atomic),
                Some(Value::Null) | None => Atom::Untyped,
                Some(_) => Atom::Scalar,
            },
        }
    }
}

fn as_map(v: Option<&Value>) -> Option<&Map<String, Value>> {
    v.and_then(Value::as_object)
}

fn as_list(v: Option<&Value>) -> Option<&Vec<Value>> {
    v.and_then(Value::as_array)
}

/// Default of a list-map key field missing from an item (OpenAPI `default`);
/// only `protocol` (TCP) has one among the built-in keys.
fn key_default(name: &str) -> Option<Value> {
    (name == "protocol").then(|| Value::String("TCP".to_string()))
}

/// The identity of a list item (smd `listItemToPathElement`).
fn item_element(list: ListType, item: &Value) -> Result<PathElement, String> {
    match list {
        ListType::Atomic => Err("invalid indexing of non-associative list".to_string()),
        ListType::Map(keys) => {
            let Value::Object(obj) = item else {
                return Err("associative list with keys may not have non-map elements".into());
            };
            let mut fields = Vec::with_capacity(keys.len());
            for key in keys {
                let value = obj.get(*key).cloned().or_else(|| key_default(key));
                let value = value.ok_or_else(|| {
                    format!(
                        "associative list with keys has an element that omits key field {key:?} (and doesn't have default value)"
                    )
                })?;
                fields.push((key.to_string(), value));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        ListType::Set => match item {
            Value::Object(_) => Err("associative list without keys has an element that's a map type".into()),
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => Err("associative list without keys has an element that's an explicit null".into()),
            v => Ok(PathElement::Value(v.clone())),
        },
    }
}

/// Items of a list with their identities, in order (duplicates kept).
fn index_items<'v>(list: ListType, items: &'v [Value]) -> Result<Vec<(PathElement, &'v Value)>, String> {
    let index = |(i, item): (usize, &'v Value)| {
        item_element(list, item)
            .map(|pe| (pe, item))
            .map_err(|e| format!("element {i}: {e}"))
    };
    items.iter().enumerate().map(index).collect()
}

fn child_path(path: &[PathElement], pe: &PathElement) -> Path {
    let mut p = path.to_vec();
    p.push(pe.clone());
    p
}

// ---------------------------------------------------------------- field set

/// The set of fields a value sets (smd `ToFieldSet`); duplicates in a
/// map-list are an error unless `allow_dups`, else owned as one member.
pub fn to_field_set(ty: &Ty, v: &Value, allow_dups: bool) -> Result<FieldSet, String> {
    let mut set = FieldSet::new();
    field_set_walk(ty, v, &mut Vec::new(), &mut set, allow_dups)?;
    Ok(set)
}

fn field_set_walk(
    ty: &Ty,
    v: &Value,
    path: &mut Path,
    set: &mut FieldSet,
    allow_dups: bool,
) -> Result<(), String> {
    match ty.atom(Some(v)) {
        Atom::Scalar => set.insert(path),
        Atom::Map { atomic: true } | Atom::List(ListType::Atomic) => set.insert(path),
        Atom::Map { atomic: false } | Atom::Untyped => {
            if let Value::Object(obj) = v {
                for (key, child) in obj {
                    let pe = PathElement::Field(key.clone());
                    path.push(pe);
                    field_set_walk(&ty.field(key), child, path, set, allow_dups)?;
                    let empty =
                        matches!(child, Value::Null) || matches!(child, Value::Object(m) if m.is_empty());
                    if empty || !ty.declares(key) {
                        set.insert(path);
                    }
                    path.pop();
                }
            }
        }
        Atom::List(list) => {
            if let Value::Array(items) = v {
                field_set_items(ty, list, items, path, set, allow_dups)?;
            }
        }
    }
    Ok(())
}

fn field_set_items(
    ty: &Ty,
    list: ListType,
    items: &[Value],
    path: &mut Path,
    set: &mut FieldSet,
    allow_dups: bool,
) -> Result<(), String> {
    let at = |e: String| format!("{}: {e}", path_string(path));
    let indexed = index_items(list, items).map_err(at)?;
    let mut seen = FieldSet::new();
    let mut dups = FieldSet::new();
    for (pe, _) in &indexed {
        if !seen.has_member(pe) {
            seen.insert_member(pe.clone());
        } else if !allow_dups {
            return Err(at(format!("duplicate entries for key {pe}")));
        } else if !dups.has_member(pe) {
            dups.insert_member(pe.clone());
            set.insert(&child_path(path, pe));
        }
    }
    let item_ty = ty.item();
    for (pe, item) in indexed {
        if dups.has_member(&pe) {
            continue;
        }
        path.push(pe);
        field_set_walk(&item_ty, item, path, set, allow_dups)?;
        set.insert(path);
        path.pop();
    }
    Ok(())
}

// -------------------------------------------------------------------- merge

/// `lhs ⊕ rhs` where rhs (the applied config) wins on every leaf it sets
/// (smd `TypedValue.Merge`). `None` means absent.
pub fn merge(ty: &Ty, lhs: Option<&Value>, rhs: Option<&Value>) -> Result<Option<Value>, String> {
    if lhs.is_none() && rhs.is_none() {
        return Ok(None);
    }
    let (al, ar) = (ty.atom(lhs), ty.atom(rhs));
    if rhs.is_none() {
        merge_atom(ty, al, lhs, rhs)
    } else if lhs.is_none() || al == ar {
        merge_atom(ty, ar, lhs, rhs)
    } else {
        merge_atom(ty, al, lhs, rhs)?;
        merge_atom(ty, ar, lhs, rhs)
    }
}

fn keep_rhs(lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    rhs.or(lhs).cloned()
}

fn merge_atom(
    ty: &Ty,
    atom: Atom,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> Result<Option<Value>, String> {
    match atom {
        Atom::Scalar => Ok(keep_rhs(lhs, rhs)),
        Atom::Map { atomic } => merge_map(ty, atomic, lhs, rhs),
        Atom::Untyped => merge_map(ty, false, lhs, rhs),
        Atom::List(list) => merge_list(ty, list, lhs, rhs),
    }
}

fn merge_map(
    ty: &Ty,
    atomic: bool,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> Result<Option<Value>, String> {
    let (lm, rm) = (as_map(lhs), as_map(rhs));
    let empty = lm.is_none_or(Map::is_empty) && rm.is_none_or(Map::is_empty);
    if atomic || empty {
        return Ok(keep_rhs(lhs, rhs));
    }
    let mut out = Map::new();
    let keys = lm.into_iter().chain(rm).flat_map(|m| m.keys());
    for key in keys {
        if out.contains_key(key) {
            continue;
        }
        let (l, r) = (lm.and_then(|m| m.get(key)), rm.and_then(|m| m.get(key)));
        if let Some(v) = merge(&ty.field(key), l, r)? {
            out.insert(key.clone(), v);
        }
    }
    Ok((!out.is_empty()).then_some(Value::Object(out)))
}

fn merge_list(
    ty: &Ty,
    list: ListType,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
) -> Result<Option<Value>, String> {
    let (ll, rl) = (as_list(lhs), as_list(rhs));
    let empty = ll.is_none_or(Vec::is_empty) && rl.is_none_or(Vec::is_empty);
    if list == ListType::Atomic || empty {
        return Ok(keep_rhs(lhs, rhs));
    }
    let empty_items = Vec::new();
    let out = merge_items(
        &ty.item(),
        list,
        ll.unwrap_or(&empty_items),
        rl.unwrap_or(&empty_items),
    )?;
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}

/// First occurrence of each identity; duplicated identities map to null.
fn observe<'v>(items: &[(PathElement, &'v Value)]) -> Vec<(PathElement, Option<&'v Value>)> {
    let mut out: Vec<(PathElement, Option<&Value>)> = Vec::new();
    for (pe, item) in items {
        match out.iter_mut().find(|(p, _)| p == pe) {
            Some(slot) => slot.1 = None,
            None => out.push((pe.clone(), Some(item))),
        }
    }
    out
}

fn lookup<'a, 'v>(
    seen: &'a [(PathElement, Option<&'v Value>)],
    pe: &PathElement,
) -> Option<&'a Option<&'v Value>> {
    seen.iter().find(|(p, _)| p == pe).map(|(_, v)| v)
}

/// Walks live and config items together (smd mergingWalker.visitListItems):
/// live-only items keep their place relative to shared ones, shared items
/// follow the config's order, duplicated live items are replaced as a group.
fn merge_items(item_ty: &Ty, list: ListType, lhs: &[Value], rhs: &[Value]) -> Result<Vec<Value>, String> {
    let rhs_items = index_items(list, rhs)?;
    let lhs_items = index_items(list, lhs)?;
    let observed_r = observe(&rhs_items);
    if observed_r.len() != rhs_items.len() {
        let dup = rhs_items
            .iter()
            .enumerate()
            .find(|(i, (pe, _))| rhs_items[..*i].iter().any(|(p, _)| p == pe));
        let name = dup.map(|(_, (pe, _))| pe.to_string()).unwrap_or_default();
        return Err(format!("duplicate entries for key {name}"));
    }
    let observed_l = observe(&lhs_items);
    let null = Value::Null;
    let l_child =
        |pe: &PathElement| -> Option<&Value> { lookup(&observed_l, pe).map(|v| v.unwrap_or(&null)) };
    let in_rhs = |pe: &PathElement| lookup(&observed_r, pe).is_some();
    let mut shared = rhs_items
        .iter()
        .filter(|(pe, _)| lookup(&observed_l, pe).is_some())
        .map(|(pe, _)| pe.clone());
    let mut next_shared = shared.next();
    let mut merged_rhs: Vec<PathElement> = Vec::new();
    let mut out = Vec::new();
    let (mut li, mut ri) = (0, 0);
    while li < lhs_items.len() || ri < rhs_items.len() {
        if li < lhs_items.len() && ri < rhs_items.len() {
            let pe = &lhs_items[li].0;
            if *pe == rhs_items[ri].0 {
                merged_rhs.push(pe.clone());
                out.extend(merge(item_ty, l_child(pe), Some(rhs_items[ri].1))?);
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if in_rhs(pe) && next_shared.as_ref().is_some_and(|s| s != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs_items.len() {
            let (pe, item) = &lhs_items[li];
            if !in_rhs(pe) {
                out.extend(merge(item_ty, Some(item), None)?);
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
                continue;
            }
        }
        if ri < rhs_items.len() {
            let (pe, item) = &rhs_items[ri];
            merged_rhs.push(pe.clone());
            out.extend(merge(item_ty, l_child(pe), Some(item))?);
            ri += 1;
            if next_shared.as_ref() == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------ compare

/// Paths removed, modified and added between two objects (smd `Compare`).
#[derive(Debug, Default)]
pub struct Comparison {
    /// Present on the left only.
    pub removed: FieldSet,
    /// Present on both sides with different values.
    pub modified: FieldSet,
    /// Present on the right only.
    pub added: FieldSet,
}

impl Comparison {
    /// Drops every path under the given (reset) paths.
    pub fn exclude(&mut self, reset: &FieldSet) {
        self.removed = self.removed.recursive_difference(reset);
        self.modified = self.modified.recursive_difference(reset);
        self.added = self.added.recursive_difference(reset);
    }
}

/// Compares `lhs` (old) with `rhs` (new).
pub fn compare(ty: &Ty, lhs: &Value, rhs: &Value) -> Result<Comparison, String> {
    let mut cmp = Comparison::default();
    compare_walk(ty, Some(lhs), Some(rhs), &mut Vec::new(), &mut cmp)?;
    Ok(cmp)
}

/// One node of the comparison; `in_leaf` is per walker as upstream.
struct CmpNode<'v> {
    lhs: Option<&'v Value>,
    rhs: Option<&'v Value>,
    in_leaf: bool,
}

fn compare_walk(
    ty: &Ty,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &mut Path,
    cmp: &mut Comparison,
) -> Result<(), String> {
    if lhs.is_none() && rhs.is_none() {
        return Ok(());
    }
    let (al, ar) = (ty.atom(lhs), ty.atom(rhs));
    let mut node = CmpNode {
        lhs,
        rhs,
        in_leaf: false,
    };
    if rhs.is_none() {
        compare_atom(ty, al, &mut node, path, cmp)?;
    } else if lhs.is_none() || al == ar {
        compare_atom(ty, ar, &mut node, path, cmp)?;
    } else {
        let mut copy = CmpNode {
            lhs,
            rhs,
            in_leaf: false,
        };
        compare_atom(ty, al, &mut copy, path, cmp)?;
        compare_atom(ty, ar, &mut node, path, cmp)?;
    }
    if !node.in_leaf {
        if lhs.is_none() {
            cmp.added.insert(path);
        } else if rhs.is_none() {
            cmp.removed.insert(path);
        }
    }
    Ok(())
}

fn compare_leaf(node: &mut CmpNode, path: &[PathElement], cmp: &mut Comparison) {
    if node.in_leaf {
        return;
    }
    node.in_leaf = true;
    match (node.lhs, node.rhs) {
        (None, _) => cmp.added.insert(path),
        (_, None) => cmp.removed.insert(path),
        (Some(l), Some(r)) if l != r => cmp.modified.insert(path),
        _ => {}
    }
}

fn compare_atom(
    ty: &Ty,
    atom: Atom,
    node: &mut CmpNode,
    path: &mut Path,
    cmp: &mut Comparison,
) -> Result<(), String> {
    match atom {
        Atom::Scalar => compare_leaf(node, path, cmp),
        Atom::Map { atomic } => compare_map(ty, atomic, node, path, cmp)?,
        Atom::Untyped => compare_map(ty, false, node, path, cmp)?,
        Atom::List(list) => compare_list(ty, list, node, path, cmp)?,
    }
    Ok(())
}

fn compare_map(
    ty: &Ty,
    atomic: bool,
    node: &mut CmpNode,
    path: &mut Path,
    cmp: &mut Comparison,
) -> Result<(), String> {
    let (lm, rm) = (as_map(node.lhs), as_map(node.rhs));
    let empty = lm.is_none_or(Map::is_empty) && rm.is_none_or(Map::is_empty);
    if atomic || empty {
        compare_leaf(node, path, cmp);
        return Ok(());
    }
    let mut keys: Vec<&String> = lm.into_iter().chain(rm).flat_map(|m| m.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (l, r) = (lm.and_then(|m| m.get(key)), rm.and_then(|m| m.get(key)));
        path.push(PathElement::Field(key.clone()));
        compare_walk(&ty.field(key), l, r, path, cmp)?;
        path.pop();
    }
    Ok(())
}

fn compare_list(
    ty: &Ty,
    list: ListType,
    node: &mut CmpNode,
    path: &mut Path,
    cmp: &mut Comparison,
) -> Result<(), String> {
    let (ll, rl) = (as_list(node.lhs), as_list(node.rhs));
    let empty = ll.is_none_or(Vec::is_empty) && rl.is_none_or(Vec::is_empty);
    if list == ListType::Atomic || empty {
        compare_leaf(node, path, cmp);
        return Ok(());
    }
    let none = Vec::new();
    let lhs = index_items(list, ll.unwrap_or(&none))?;
    let rhs = index_items(list, rl.unwrap_or(&none))?;
    let mut pes: Vec<&PathElement> = lhs.iter().chain(&rhs).map(|(pe, _)| pe).collect();
    pes.sort();
    pes.dedup();
    let item_ty = ty.item();
    for pe in pes {
        let group = |items: &[(PathElement, &'_ Value)]| -> Vec<Value> {
            let hits = items.iter().filter(|(p, _)| p == pe);
            hits.map(|(_, v)| (*v).clone()).collect()
        };
        let (lg, rg) = (group(&lhs), group(&rhs));
        compare_group(&item_ty, pe, &lg, &rg, path, cmp)?;
    }
    Ok(())
}

/// Compares the occurrences of one identity (upstream's duplicate rules).
fn compare_group(
    item_ty: &Ty,
    pe: &PathElement,
    lg: &[Value],
    rg: &[Value],
    path: &mut Path,
    cmp: &mut Comparison,
) -> Result<(), String> {
    path.push(pe.clone());
    let result = match (lg.len(), rg.len()) {
        (l, r) if l <= 1 && r <= 1 => compare_walk(item_ty, lg.first(), rg.first(), path, cmp),
        (l, r) if l >= 2 && r >= 2 => {
            if lg != rg {
                cmp.modified.insert(path);
            }
            Ok(())
        }
        (l, _) if l >= 2 => {
            let res = compare_walk(item_ty, None, rg.first(), path, cmp);
            cmp.removed.insert(path);
            res
        }
        _ => {
            let res = compare_walk(item_ty, lg.first(), None, path, cmp);
            cmp.added.insert(path);
            res
        }
    };
    path.pop();
    result
}

// ------------------------------------------------------------------- remove

/// The value without the paths in `set` (smd `RemoveItems`); `None` stands
/// for upstream's nil (a map or list left empty becomes null).
pub fn remove_items(ty: &Ty, v: &Value, set: &FieldSet) -> Option<Value> {
    match ty.atom(Some(v)) {
        Atom::Scalar => Some(v.clone()),
        Atom::Map { atomic: true } | Atom::List(ListType::Atomic) => None,
        Atom::Map { atomic: false } | Atom::Untyped => remove_from_map(ty, v, set),
        Atom::List(list) => remove_from_list(ty, list, v, set),
    }
}

fn remove_from_map(ty: &Ty, v: &Value, set: &FieldSet) -> Option<Value> {
    let obj = v.as_object().filter(|m| !m.is_empty())?;
    let mut out = Map::new();
    for (key, child) in obj {
        let pe = PathElement::Field(key.clone());
        if set.has_member(&pe) {
            continue;
        }
        let kept = match set.child(&pe) {
            Some(sub) => remove_items(&ty.field(key), child, sub).unwrap_or(Value::Null),
            None => child.clone(),
        };
        out.insert(key.clone(), kept);
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

fn remove_from_list(ty: &Ty, list: ListType, v: &Value, set: &FieldSet) -> Option<Value> {
    let items = v.as_array().filter(|l| !l.is_empty())?;
    let item_ty = ty.item();
    let mut out = Vec::new();
    for item in items {
        let Ok(pe) = item_element(list, item) else {
            out.push(item.clone());
            continue;
        };
        if set.has_member(&pe) {
            continue;
        }
        match set.child(&pe) {
            Some(sub) => out.push(remove_items(&item_ty, item, sub).unwrap_or(Value::Null)),
            None => out.push(item.clone()),
        }
    }
    (!out.is_empty()).then_some(Value::Array(out))
}

/// Adds declared struct fields that only have owned children as members
/// (smd `Set.EnsureNamedFieldsAreMembers`).
pub fn ensure_named_fields_are_members(ty: &Ty, set: &FieldSet) -> FieldSet {
    let mut out = FieldSet::new();
    for pe in set.members() {
        out.insert_member(pe.clone());
    }
    for (pe, child) in set.children() {
        if let PathElement::Field(name) = pe
            && ty.declares(name)
        {
            out.insert_member(pe.clone());
        }
        out.set_child(pe.clone(), ensure_named_fields_are_members(&ty.child(pe), child));
    }
    out
}

/// Removes null values from every object, recursively (typed decoding drops
/// them). List items are kept as they are.
pub fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(obj) => {
            obj.retain(|_, child| !child.is_null());
            obj.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}
