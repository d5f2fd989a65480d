//! Building blocks shared by the converters: a small JSON object builder
//! that knows the two presence rules of the upstream Go types, the
//! internal error with its field path, and the conversion context.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Why a converter gave up, before the kind is known to the message.
#[derive(Debug)]
pub(super) enum Problem {
    /// A field that is set but that this module does not convert; the path
    /// is dotted JSON names, outermost first.
    Field(String),
    /// Bytes that decode but cannot be a valid object.
    Bad(String),
}

impl Problem {
    /// Prefixes the field path with `segment`.
    pub(super) fn at(self, segment: &str) -> Self {
        match self {
            Problem::Field(path) => Problem::Field(format!("{segment}.{path}")),
            other => other,
        }
    }
}

pub(super) type Res<T> = Result<T, Problem>;

/// Returns a closure for `map_err` that prefixes the path with `segment`.
pub(super) fn at(segment: &str) -> impl Fn(Problem) -> Problem + '_ {
    move |problem| problem.at(segment)
}

/// Fails if a Go pointer field (present means set) is present.
pub(super) fn absent<T>(value: &Option<T>, name: &str) -> Res<()> {
    match value {
        Some(_) => Err(Problem::Field(name.to_owned())),
        None => Ok(()),
    }
}

/// Fails if a repeated or map field has entries.
pub(super) fn empty(len: usize, name: &str) -> Res<()> {
    if len == 0 {
        Ok(())
    } else {
        Err(Problem::Field(name.to_owned()))
    }
}

/// State kept while converting one object.
#[derive(Debug, Default)]
pub(super) struct Conv {
    /// Bytes that the Go encoder writes and prost's re-encoding leaves out:
    /// a map entry's empty key or empty value. Used by the length check.
    pub(super) slack: usize,
}

impl Conv {
    /// Converts a `map<string, string>`, counting empty keys and values.
    pub(super) fn string_map(&mut self, map: BTreeMap<String, String>) -> Map<String, Value> {
        self.count_slack(map.iter().map(|(k, v)| (k.is_empty(), v.is_empty())));
        map.into_iter().map(|(k, v)| (k, Value::String(v))).collect()
    }

    /// Converts a `map<string, bytes>` to base64 strings, as JSON carries them.
    pub(super) fn bytes_map(&mut self, map: BTreeMap<String, Vec<u8>>) -> Map<String, Value> {
        self.count_slack(map.iter().map(|(k, v)| (k.is_empty(), v.is_empty())));
        map.into_iter()
            .map(|(k, v)| (k, Value::String(base64(&v))))
            .collect()
    }

    fn count_slack(&mut self, entries: impl Iterator<Item = (bool, bool)>) {
        for (empty_key, empty_value) in entries {
            // Each omitted field is a one-byte tag plus a one-byte zero length.
            self.slack += 2 * usize::from(empty_key) + 2 * usize::from(empty_value);
        }
    }
}

/// A JSON object under construction.
#[derive(Debug, Default)]
pub(super) struct Obj(Map<String, Value>);

impl Obj {
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// A Go pointer field, or a value field without `omitempty`: written
    /// whenever the message carries it, zero included.
    pub(super) fn opt<T: Into<Value>>(mut self, key: &str, value: Option<T>) -> Self {
        if let Some(v) = value {
            self.0.insert(key.to_owned(), v.into());
        }
        self
    }

    /// A Go value field with `omitempty`: its zero value means unset.
    pub(super) fn nz<T: Into<Value> + Default + PartialEq>(mut self, key: &str, value: Option<T>) -> Self {
        match value {
            Some(v) if v != T::default() => {
                self.0.insert(key.to_owned(), v.into());
            }
            _ => {}
        }
        self
    }

    /// A list; left out when empty.
    pub(super) fn list<T: Into<Value>>(mut self, key: &str, items: Vec<T>) -> Self {
        if !items.is_empty() {
            let items = items.into_iter().map(Into::into).collect();
            self.0.insert(key.to_owned(), Value::Array(items));
        }
        self
    }

    /// A map, or a nested value-type struct; left out when empty.
    pub(super) fn map(mut self, key: &str, map: Map<String, Value>) -> Self {
        if !map.is_empty() {
            self.0.insert(key.to_owned(), Value::Object(map));
        }
        self
    }

    /// A nested struct that Go holds by value: left out when it is empty.
    pub(super) fn inner(self, key: &str, value: Option<Value>) -> Self {
        match value {
            Some(Value::Object(map)) => self.map(key, map),
            Some(other) => self.opt(key, Some(other)),
            None => self,
        }
    }

    /// A nested struct that Go holds by pointer: written when present,
    /// even as `{}` (an `emptyDir: {}` means something).
    pub(super) fn ptr(self, key: &str, value: Option<Value>) -> Self {
        self.opt(key, value)
    }

    pub(super) fn done(self) -> Value {
        Value::Object(self.0)
    }

    pub(super) fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

/// Converts each element, prefixing errors with `name[index]`.
pub(super) fn each<T>(
    name: &str,
    items: Vec<T>,
    mut convert: impl FnMut(T) -> Res<Value>,
) -> Res<Vec<Value>> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| convert(item).map_err(|p| p.at(&format!("{name}[{i}]"))))
        .collect()
}

/// Standard base64 with padding, the encoding Go's JSON uses for `[]byte`.
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                let index = usize::try_from((n >> (18 - 6 * i)) & 63).unwrap_or(0);
                out.push(char::from(ALPHABET[index]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
