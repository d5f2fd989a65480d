//! Structural defaulting (upstream
//! `apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go`,
//! `Default`).
//!
//! A property's `default` fills the property when it is absent, or null
//! while the property is not `nullable`; a list item or map value that is
//! null and not nullable takes its schema's `default`. Defaults are deep
//! copies, and the defaulted value is itself defaulted further (an object
//! default gets its own properties' defaults). Nothing else is touched:
//! `metadata` has no defaults (the CRD validation forbids them there).

use serde_json::Value;

use super::node::Node;

/// Fills `default`s into `x` as `node` says.
pub fn apply(node: &Node, x: &mut Value) {
    match x {
        Value::Object(obj) => {
            for (k, prop) in &node.properties {
                let Some(default) = &prop.default else { continue };
                let missing = match obj.get(k) {
                    None => true,
                    Some(v) => non_nullable_null(v, prop),
                };
                if missing {
                    obj.insert(k.clone(), default.clone());
                }
            }
            let values = node.additional_schema();
            for (k, v) in obj.iter_mut() {
                if let Some(prop) = node.properties.get(k) {
                    apply(prop, v);
                } else if let Some(values) = values {
                    fill_null(values, v);
                    apply(values, v);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = &node.items else { return };
            for item in items {
                fill_null(item_schema, item);
                apply(item_schema, item);
            }
        }
        _ => {}
    }
}

fn non_nullable_null(v: &Value, node: &Node) -> bool {
    v.is_null() && !node.nullable
}

fn fill_null(node: &Node, v: &mut Value) {
    if non_nullable_null(v, node)
        && let Some(default) = &node.default
    {
        *v = default.clone();
    }
}
