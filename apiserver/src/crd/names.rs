//! The naming and establishing controllers, as pure functions: which names
//! of a CRD are accepted, and its NamesAccepted and Established conditions.
//!
//! Upstream: `apiextensions-apiserver/pkg/controller/status/naming_controller.go`
//! (`calculateNamesAndConditions`, `getAcceptedNamesForGroup`,
//! `equalToAcceptedOrFresh`) and
//! `pkg/controller/establish/establishing_controller.go`. Upstream sets
//! Established to `Installing` and lets a second controller flip it once
//! the handler serves; here both steps happen in one pass, since the
//! registry rows are inserted in the same pass.
//!
//! Besides the other CRDs of the group (their accepted names), the built-in
//! resources of the same group count as taken (upstream guards those by
//! the protected `*.k8s.io` groups instead).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::jsonpath::at;

/// Names already taken in a group: resource names (plural, singular,
/// short names) and kinds (kind, listKind).
#[derive(Debug, Default)]
pub struct Taken {
    /// Plurals, singulars and short names.
    pub resources: BTreeSet<String>,
    /// Kinds and list kinds.
    pub kinds: BTreeSet<String>,
}

impl Taken {
    /// The accepted names of `crds` in `group`, but `crd_name`'s own.
    pub fn in_group(crds: &[Value], group: &str, crd_name: &str) -> Taken {
        let mut taken = Taken::default();
        for crd in crds {
            let name = at(crd, &["metadata", "name"]).and_then(Value::as_str);
            if name == Some(crd_name) || at(crd, &["spec", "group"]).and_then(Value::as_str) != Some(group) {
                continue;
            }
            let accepted = at(crd, &["status", "acceptedNames"]).cloned().unwrap_or_default();
            for field in ["plural", "singular"] {
                taken.resources.extend(text(&accepted, field));
            }
            taken.resources.extend(list(&accepted, "shortNames"));
            for field in ["kind", "listKind"] {
                taken.kinds.extend(text(&accepted, field));
            }
        }
        taken
    }

    /// Adds a built-in resource's names.
    pub fn add_builtin(&mut self, plural: &str, singular: &str, short: &[String], kind: &str) {
        self.resources.insert(plural.to_string());
        self.resources.insert(singular.to_string());
        self.resources.extend(short.iter().cloned());
        self.kinds.insert(kind.to_string());
        self.kinds.insert(format!("{kind}List"));
    }
}

fn text(v: &Value, field: &str) -> Option<String> {
    v.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn list(v: &Value, field: &str) -> Vec<String> {
    v.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// What the naming pass decided for one CRD.
#[derive(Debug, PartialEq)]
pub struct Naming {
    /// `status.acceptedNames`.
    pub accepted: Value,
    /// `None` when the names are accepted, else (reason, message).
    pub conflict: Option<(&'static str, String)>,
}

/// Upstream `equalToAcceptedOrFresh`.
fn fresh(requested: &str, accepted: &str, used: &BTreeSet<String>) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        Ok(())
    } else {
        Err(format!("{requested:?} is already in use"))
    }
}

/// Upstream `calculateNamesAndConditions`, the names part: each requested
/// name is accepted unless another CRD of the group holds it; a conflict
/// keeps the previously accepted name.
pub fn calculate(crd: &Value, taken: &Taken) -> Naming {
    let requested = at(crd, &["spec", "names"]).cloned().unwrap_or_default();
    let accepted = at(crd, &["status", "acceptedNames"])
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut names = accepted.clone();
    if !names.is_object() {
        names = json!({});
    }
    let mut conflict = None;
    let get = |v: &Value, f: &str| text(v, f).unwrap_or_default();
    for (field, reason, used) in [
        ("plural", "PluralConflict", &taken.resources),
        ("singular", "SingularConflict", &taken.resources),
    ] {
        match fresh(&get(&requested, field), &get(&accepted, field), used) {
            Ok(()) => names[field] = json!(get(&requested, field)),
            Err(message) => conflict = Some((reason, message)),
        }
    }
    let (want_short, have_short) = (list(&requested, "shortNames"), list(&accepted, "shortNames"));
    if want_short != have_short {
        let errors: Vec<String> = want_short
            .iter()
            .filter(|s| !have_short.contains(s))
            .filter_map(|s| fresh(s, "", &taken.resources).err())
            .collect();
        match errors.as_slice() {
            [] => names["shortNames"] = json!(want_short),
            [one] => conflict = Some(("ShortNamesConflict", one.clone())),
            many => conflict = Some(("ShortNamesConflict", format!("[{}]", many.join(", ")))),
        }
    }
    for (field, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
        match fresh(&get(&requested, field), &get(&accepted, field), &taken.kinds) {
            Ok(()) => names[field] = json!(get(&requested, field)),
            Err(message) => conflict = Some((reason, message)),
        }
    }
    match requested.get("categories") {
        Some(c) if !c.is_null() => names["categories"] = c.clone(),
        _ => {
            if let Some(m) = names.as_object_mut() {
                m.remove("categories");
            }
        }
    }
    if let Some(m) = names.as_object_mut() {
        m.retain(|_, v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()));
    }
    Naming {
        accepted: names,
        conflict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(plural: &str, singular: &str, kind: &str, short: &[&str]) -> Value {
        json!({"metadata": {"name": format!("{plural}.example.com")},
               "spec": {"group": "example.com",
                        "names": {"plural": plural, "singular": singular, "kind": kind,
                                  "listKind": format!("{kind}List"), "shortNames": short}}})
    }

    fn accepted(mut c: Value) -> Value {
        c["status"] = json!({"acceptedNames": c["spec"]["names"].clone()});
        c
    }

    #[test]
    fn names_nobody_holds_are_accepted() {
        let a = crd("widgets", "widget", "Widget", &["wd"]);
        let n = calculate(&a, &Taken::default());
        assert_eq!(n.conflict, None);
        assert_eq!(n.accepted, a["spec"]["names"]);
    }

    #[test]
    fn a_plural_another_crd_holds_is_a_conflict() {
        let first = accepted(crd("widgets", "widget", "Widget", &[]));
        let second = crd("widget", "gadget", "Gadget", &[]);
        let taken = Taken::in_group(&[first, second.clone()], "example.com", "widget.example.com");
        let n = calculate(&second, &taken);
        assert_eq!(
            n.conflict,
            Some(("PluralConflict", "\"widget\" is already in use".to_string()))
        );
        assert!(n.accepted.get("plural").is_none());
        assert_eq!(n.accepted["kind"], "Gadget");
    }

    #[test]
    fn kinds_and_short_names_conflict_too() {
        let first = accepted(crd("widgets", "widget", "Widget", &["wd"]));
        let second = crd("gadgets", "gadget", "Widget", &["wd"]);
        let taken = Taken::in_group(&[first], "example.com", "gadgets.example.com");
        let n = calculate(&second, &taken);
        // The last conflict found is reported, as upstream.
        assert_eq!(n.conflict.unwrap().0, "ListKindConflict");
        assert!(n.accepted.get("shortNames").is_none());
    }

    #[test]
    fn another_group_does_not_count() {
        let mut other = accepted(crd("widgets", "widget", "Widget", &[]));
        other["spec"]["group"] = json!("other.io");
        let taken = Taken::in_group(&[other], "example.com", "x");
        assert!(taken.resources.is_empty());
    }
}
