//! `metadata.managedFields` entries: identity, decoding, encoding, capping.
//!
//! Mirrors apimachinery `pkg/util/managedfields/internal/managedfields.go`
//! (decode/encode, `BuildManagerIdentifier`, `sortEncodedManagedFields`) and
//! `capmanagers.go`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::fieldpath::FieldSet;

/// `operation` of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One manager's entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Field manager name.
    pub manager: String,
    /// Apply or Update.
    pub operation: Operation,
    /// The API version the set is expressed in.
    pub api_version: String,
    /// Subresource the entry was written through, if any.
    pub subresource: Option<String>,
    /// Time of the last change, RFC 3339.
    pub time: Option<String>,
    /// Owned fields.
    pub set: FieldSet,
}

impl Entry {
    /// Upstream's manager identifier: the JSON of the entry without time and
    /// fields, and without apiVersion for appliers.
    pub fn id(&self) -> String {
        identifier(
            &self.manager,
            self.operation,
            &self.api_version,
            self.subresource.as_deref(),
        )
    }
}

/// Builds a manager identifier like upstream's `BuildManagerIdentifier`.
pub fn identifier(
    manager: &str,
    operation: Operation,
    api_version: &str,
    subresource: Option<&str>,
) -> String {
    let mut obj = Map::new();
    if !manager.is_empty() {
        obj.insert("manager".into(), json!(manager));
    }
    obj.insert("operation".into(), json!(operation.as_str()));
    if operation == Operation::Update && !api_version.is_empty() {
        obj.insert("apiVersion".into(), json!(api_version));
    }
    if let Some(sub) = subresource.filter(|s| !s.is_empty()) {
        obj.insert("subresource".into(), json!(sub));
    }
    // Go's encoder writes fields in struct order; emit that order by hand.
    let order = ["manager", "operation", "apiVersion", "subresource"];
    let parts: Vec<String> = order
        .iter()
        .filter_map(|k| obj.get(*k).map(|v| format!("{}:{}", json!(k), go_json(v))))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// JSON text with Go's HTML escaping of `<`, `>` and `&`.
pub fn go_json(v: &Value) -> String {
    v.to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// All entries of an object, keyed by manager identifier.
pub type Managers = BTreeMap<String, Entry>;

/// Decodes `metadata.managedFields` (upstream `DecodeManagedFields`).
pub fn decode(obj: &Value) -> Result<Managers, String> {
    let mut out = Managers::new();
    let Some(list) = obj.pointer("/metadata/managedFields") else {
        return Ok(out);
    };
    let list = match list {
        Value::Null => return Ok(out),
        Value::Array(items) => items,
        _ => return Err("managedFields must be a list".into()),
    };
    for (i, raw) in list.iter().enumerate() {
        let entry = decode_entry(i, raw)?;
        out.insert(entry.id(), entry);
    }
    Ok(out)
}

fn decode_entry(i: usize, raw: &Value) -> Result<Entry, String> {
    let text = |k: &str| raw.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let operation = match text("operation").as_str() {
        "Apply" => Operation::Apply,
        "Update" => Operation::Update,
        _ => return Err("operation must be `Apply` or `Update`".into()),
    };
    let api_version = text("apiVersion");
    if api_version.is_empty() {
        return Err("apiVersion must not be empty".into());
    }
    match text("fieldsType").as_str() {
        "FieldsV1" => {}
        "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
        other => {
            return Err(format!(
                "invalid fieldsType {other:?} in managed fields entry {i}"
            ));
        }
    }
    let set = match raw.get("fieldsV1") {
        None | Some(Value::Null) => FieldSet::new(),
        Some(v) => FieldSet::from_fields_v1(v)?,
    };
    let subresource = Some(text("subresource")).filter(|s| !s.is_empty());
    let time = raw.get("time").and_then(Value::as_str).map(str::to_string);
    Ok(Entry {
        manager: text("manager"),
        operation,
        api_version,
        subresource,
        time,
        set,
    })
}

/// Seconds since the epoch of an RFC 3339 time (0 when absent or invalid).
fn seconds(time: Option<&str>) -> i64 {
    time.and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or(0, |t| t.as_second())
}

/// Encodes the entries in upstream's order: Apply before Update, then by
/// time, manager, apiVersion, subresource. Empty sets are dropped.
pub fn encode(managers: &Managers) -> Vec<Value> {
    let mut entries: Vec<&Entry> = managers.values().filter(|e| !e.set.is_empty()).collect();
    entries.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then_with(|| seconds(p.time.as_deref()).cmp(&seconds(q.time.as_deref())))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    entries.into_iter().map(encode_entry).collect()
}

fn encode_entry(e: &Entry) -> Value {
    let mut obj = Map::new();
    obj.insert("manager".into(), json!(e.manager));
    obj.insert("operation".into(), json!(e.operation.as_str()));
    obj.insert("apiVersion".into(), json!(e.api_version));
    if let Some(t) = &e.time {
        obj.insert("time".into(), json!(t));
    }
    obj.insert("fieldsType".into(), json!("FieldsV1"));
    obj.insert("fieldsV1".into(), e.set.to_fields_v1());
    if let Some(sub) = &e.subresource {
        obj.insert("subresource".into(), json!(sub));
    }
    Value::Object(obj)
}

/// Writes the entries into `obj.metadata.managedFields` (removed if none).
pub fn store(obj: &mut Value, managers: &Managers) {
    let encoded = encode(managers);
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        if !encoded.is_empty() && obj.is_object() {
            obj["metadata"] = json!({ "managedFields": encoded });
        }
        return;
    };
    if encoded.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(encoded));
    }
}

/// Most Update entries kept before the oldest are merged into
/// `ancient-changes` (upstream `DefaultMaxUpdateManagers`).
const MAX_UPDATE_MANAGERS: usize = 10;

/// Merges the oldest Update entries into one `ancient-changes` entry per
/// apiVersion until at most `MAX_UPDATE_MANAGERS` remain.
pub fn cap_updates(managers: &mut Managers) {
    let mut updaters: Vec<String> = managers
        .iter()
        .filter(|(_, e)| e.operation == Operation::Update)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by_key(|id| (seconds(managers[id].time.as_deref()), id.clone()));
    let mut first_of_version: BTreeMap<String, String> = BTreeMap::new();
    let mut remaining = updaters.len();
    for id in updaters {
        if remaining <= MAX_UPDATE_MANAGERS {
            break;
        }
        let entry = managers[&id].clone();
        let bucket = identifier("ancient-changes", Operation::Update, &entry.api_version, None);
        let Some(first) = first_of_version.get(&entry.api_version) else {
            first_of_version.insert(entry.api_version.clone(), id);
            continue;
        };
        if !managers.contains_key(&bucket) {
            let mut moved = managers.remove(first).unwrap_or_else(|| entry.clone());
            moved.manager = "ancient-changes".into();
            moved.subresource = None;
            managers.insert(bucket.clone(), moved);
        }
        if let Some(b) = managers.get_mut(&bucket) {
            b.set = entry.set.union(&b.set);
            b.time = entry.time.clone();
        }
        managers.remove(&id);
        remaining -= 1;
    }
}
