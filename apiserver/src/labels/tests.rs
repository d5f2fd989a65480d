//! Tests for the one label selector: upstream's `selector_test.go` and
//! `helpers_test.go` cases, plus tables pinning the answers the three old
//! matchers disagreed on.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use serde_json::{Map, Value, json};

use super::*;

/// No labels at all (`metadata.labels` absent).
const NO_LABELS: Option<&Map<String, Value>> = None;

fn labels(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn matches(sel: &str, set: Value) -> bool {
    Selector::parse(sel)
        .unwrap_or_else(|e| panic!("{sel}: {e}"))
        .matches(&(labels(set)))
}

#[test]
fn parse_good_strings_round_trip() {
    for s in [
        "x=a,y=b,z=c",
        "",
        "x!=a,y=b",
        "x=",
        "x= ",
        "x=,z= ",
        "x= ,z= ",
        "!x",
        "x>1",
        "x>1,z<5",
    ] {
        let sel = Selector::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(sel.to_string(), s.replace(' ', ""), "{s}");
    }
}

#[test]
fn parse_bad_strings() {
    for s in ["x=a||y=b", "x==a==b", "!x=a", "x<a"] {
        assert!(Selector::parse(s).is_err(), "{s}");
    }
}

#[test]
fn deterministic_parse() {
    let a = Selector::parse("x=a,a=x").unwrap();
    let b = Selector::parse("a=x,x=a").unwrap();
    assert_eq!(a.to_string(), b.to_string());
    assert_eq!(a.to_string(), "a=x,x=a");
}

#[test]
fn selector_matches() {
    assert!(matches("", json!({"x": "y"})));
    assert!(matches("x=y", json!({"x": "y"})));
    assert!(matches("x=y,z=w", json!({"x": "y", "z": "w"})));
    assert!(matches("x!=y,z!=w", json!({"x": "z", "z": "a"})));
    assert!(matches("notin=in", json!({"notin": "in"})));
    assert!(matches("x", json!({"x": "z"})));
    assert!(matches("!x", json!({"y": "z"})));
    assert!(matches("x>1", json!({"x": "2"})));
    assert!(matches("x<1", json!({"x": "0"})));
    assert!(!matches("x=z", json!({})));
    assert!(!matches("x=y", json!({"x": "z"})));
    assert!(!matches("x=y,z=w", json!({"x": "w", "z": "w"})));
    assert!(!matches("x!=y,z!=w", json!({"x": "z", "z": "w"})));
    assert!(!matches("x", json!({"y": "z"})));
    assert!(!matches("!x", json!({"x": "z"})));
    assert!(!matches("x>1", json!({"x": "0"})));
    assert!(!matches("x<1", json!({"x": "2"})));
    assert!(!matches("z>1", json!({"z": "v2"})));
    let set = json!({"foo": "bar", "baz": "blah"});
    assert!(matches("foo=bar", set.clone()));
    assert!(matches("baz=blah", set.clone()));
    assert!(matches("foo=bar,baz=blah", set.clone()));
    assert!(!matches("foo=blah", set.clone()));
    assert!(!matches("baz=bar", set.clone()));
    assert!(!matches("foo=bar,foobar=bar,baz=blah", set));
}

#[test]
fn set_based_matching() {
    assert!(matches(
        "x in (foo),y notin (alpha)",
        json!({"x": "foo", "y": "baz"})
    ));
    assert!(!matches(
        "x in (foo),y in (alpha)",
        json!({"x": "foo", "y": "baz"})
    ));
    assert!(matches("x notin (),y", json!({"y": ""})));
    assert!(matches("!x,y", json!({"y": ""})));
    assert!(!matches("x notin (),!y", json!({"y": ""})));
    assert!(!matches("x in ()", json!({"y": "baz"})));
    // No labels at all.
    let sel = Selector::parse("!a,b notin (c)").unwrap();
    assert!(sel.matches(&NO_LABELS));
    assert!(!Selector::parse("a").unwrap().matches(&NO_LABELS));
}

#[test]
fn set_selector_parser_valid() {
    let cases = [
        ("", ""),
        ("\rx", "x"),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            "this-is-a-dns.domain.com/key-with-dash",
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)",
        ),
        ("foo  in\t (abc)", "foo in (abc)"),
        ("x notin\n (abc)", "x notin (abc)"),
        ("x  notin\t\t\t(abc,def)", "x notin (abc,def)"),
        ("x in (abc,def)", "x in (abc,def)"),
        ("x in (abc,)", "x in (,abc)"),
        ("x in ()", "x in ()"),
        (
            "x notin (abc,,def),bar,z in (),w",
            "bar,w,x notin (,abc,def),z in ()",
        ),
        ("x,y in (a)", "x,y in (a)"),
        ("x=a", "x=a"),
        ("x>1", "x>1"),
        ("x<7", "x<7"),
        ("x=a,y!=b", "x=a,y!=b"),
        ("x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)"),
        ("x notin ( )", "x notin ()"),
        ("x notin (, a)", "x notin (,a)"),
        ("a ", "a"),
        ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
    ];
    for (input, want) in cases {
        let sel = Selector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(sel.to_string(), want, "{input:?}");
    }
}

#[test]
fn set_selector_parser_invalid() {
    for s in [
        "x=a||y=b",
        "x,,y",
        ",x,y",
        "x nott in (y)",
        "a in (xyz),",
        "a in (xyz)b notin ()",
        "a in (xyz abc)",
        "a notin(",
        "a (",
        "(",
    ] {
        assert!(Selector::parse(s).is_err(), "{s:?} should fail");
    }
    assert_eq!(Selector::parse("y,x").unwrap().to_string(), "x,y");
}

#[test]
fn error_messages_match_upstream() {
    let err = |s: &str| Selector::parse(s).unwrap_err();
    assert_eq!(
        err("a in (xyz abc)"),
        "unable to parse requirement: found 'abc', expected: ',' or ')'"
    );
    assert_eq!(err("("), "found '(', expected: !, identifier, or 'end of string'");
    assert_eq!(err("a in (xyz),"), "found '', expected: identifier after ','");
    assert_eq!(
        err("a b"),
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    );
    assert_eq!(
        err("a in (xyz)b notin ()"),
        "found 'b', expected: ',' or 'end of string'"
    );
    assert_eq!(
        err("x<a"),
        "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
    );
    assert_eq!(
        err("a@b=c"),
        "unable to parse requirement: <nil>: Invalid value: \"a@b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    );
    assert_eq!(
        err("a=b@c"),
        "unable to parse requirement: values[0][a]: Invalid value: \"b@c\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    );
    assert!(err("Foo.com/a=b").contains("prefix part a lowercase RFC 1123 subdomain"));
    assert!(err("/a").contains("prefix part must be non-empty"));
    assert!(err(&"a".repeat(64)).contains("name part must be no more than 63 characters"));
}

#[test]
fn values_are_sorted_and_deduplicated() {
    let sel = Selector::parse("x in (b,a,b)").unwrap();
    assert_eq!(sel.to_string(), "x in (a,b)");
}

#[test]
fn from_label_selector_conversion() {
    let sel = Selector::from_json(&json!({
        "matchLabels": {"app": "web", "tier": "fe"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "dev"]},
            {"key": "zone", "operator": "DoesNotExist"},
            {"key": "canary", "operator": "Exists"},
            {"key": "team", "operator": "NotIn", "values": ["x"]}
        ]
    }))
    .unwrap();
    assert_eq!(
        sel.to_string(),
        "app=web,canary,env in (dev,prod),team notin (x),tier=fe,!zone"
    );
    assert!(sel.matches(&(labels(json!({"app": "web", "tier": "fe", "env": "dev", "canary": ""})))));
    assert!(!sel.matches(&(labels(json!({"app": "web", "tier": "fe", "env": "dev"})))));

    let everything = Selector::from_json(&json!({})).unwrap();
    assert!(everything.is_empty());
    assert!(everything.matches(&NO_LABELS));
    let nothing = Selector::from_json(&Value::Null).unwrap();
    assert!(!nothing.is_empty());
    assert!(!nothing.matches(&(labels(json!({"a": "b"})))));
}

#[test]
fn from_label_selector_errors() {
    let bad_op = json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]});
    assert_eq!(
        Selector::from_json(&bad_op).unwrap_err(),
        "\"Gt\" is not a valid label selector operator"
    );
    let empty_in = json!({"matchExpressions": [{"key": "a", "operator": "In"}]});
    assert_eq!(
        Selector::from_json(&empty_in).unwrap_err(),
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
    );
    let exists_vals = json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]});
    assert_eq!(
        Selector::from_json(&exists_vals).unwrap_err(),
        "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"
    );
    assert_eq!(format_label_selector(&bad_op), "<error>");
    assert_eq!(label_selector_string(&bad_op), "<invalid>");
}

#[test]
fn formatting_helpers() {
    assert_eq!(format_label_selector(&Value::Null), "<none>");
    assert_eq!(format_label_selector(&json!({})), "<none>");
    assert_eq!(
        format_label_selector(&json!({"matchLabels": {"app": "web"}})),
        "app=web"
    );
    assert_eq!(label_selector_string(&json!({})), "");
    assert_eq!(
        label_selector_string(&json!({"matchLabels": {"b": "1", "a": "2"}})),
        "a=2,b=1"
    );
    assert_eq!(format_labels(None), "<none>");
    assert_eq!(format_labels(Some(&Map::new())), "<none>");
    // Sorted as "k=v" strings, like labels.Set.String(): "a.b=2" < "a=1".
    assert_eq!(
        format_labels(Some(&labels(json!({"a": "1", "a.b": "2"})))),
        "a.b=2,a=1"
    );
}

fn typed_requirement(key: &str, op: &str, values: Option<&[&str]>) -> metav1::LabelSelectorRequirement {
    metav1::LabelSelectorRequirement {
        key: key.to_string(),
        operator: op.to_string(),
        values: values.map(|v| v.iter().map(|s| s.to_string()).collect()),
    }
}

fn typed_exprs(exprs: Vec<metav1::LabelSelectorRequirement>) -> metav1::LabelSelector {
    metav1::LabelSelector {
        match_expressions: Some(exprs),
        match_labels: None,
    }
}

/// Both constructors of `LabelSelectorAsSelector` give the same answer.
fn both_forms(typed: &metav1::LabelSelector) -> Result<Selector, String> {
    let from_typed = Selector::from_typed(Some(typed));
    let json = serde_json::to_value(typed).unwrap();
    assert_eq!(from_typed, Selector::from_json(&json), "{json}");
    from_typed
}

#[test]
fn nil_and_empty_selectors() {
    let some = btree(&[("a", "b")]);
    let none: Option<&BTreeMap<String, String>> = None;
    // nil -> labels.Nothing(): matches nothing, not Empty().
    for nothing in [
        Selector::nothing(),
        Selector::from_typed(None).unwrap(),
        Selector::from_json(&Value::Null).unwrap(),
    ] {
        assert!(!nothing.matches(&some) && !nothing.matches(&none));
        assert!(!nothing.is_empty());
        assert_eq!(nothing.to_string(), "");
    }
    // {} and empty lists/maps -> labels.Everything().
    let empty_typed = metav1::LabelSelector {
        match_labels: Some(BTreeMap::new()),
        match_expressions: Some(Vec::new()),
    };
    for everything in [
        Selector::everything(),
        Selector::parse("").unwrap(),
        both_forms(&metav1::LabelSelector::default()).unwrap(),
        both_forms(&empty_typed).unwrap(),
        Selector::from_json(&json!({"matchLabels": {}, "matchExpressions": []})).unwrap(),
    ] {
        assert!(everything.matches(&some) && everything.matches(&none));
        assert!(everything.is_empty());
    }
    assert!(!Selector::parse("a").unwrap().is_empty());
}

#[test]
fn not_in_without_values() {
    // A metav1.LabelSelector rejects In/NotIn without values, nil or empty.
    let nil_msg =
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty";
    for op in ["In", "NotIn"] {
        for values in [None, Some(&[][..])] {
            let sel = typed_exprs(vec![typed_requirement("a", op, values)]);
            assert_eq!(both_forms(&sel).unwrap_err(), nil_msg, "{op} {values:?}");
        }
    }
    // The query syntax `k notin ()` is NotIn {""}: an absent key or another value matches.
    let sel = Selector::parse("k notin ()").unwrap();
    assert!(sel.matches(&btree(&[])));
    assert!(sel.matches(&btree(&[("k", "v")])));
    assert!(!sel.matches(&btree(&[("k", "")])));
    // And `k in ()` is In {""}.
    let sel = Selector::parse("k in ()").unwrap();
    assert!(sel.matches(&btree(&[("k", "")])));
    assert!(!sel.matches(&btree(&[])));
}

/// Operator, values, label pairs, and whether they match.
type RequirementCase<'a> = (&'a str, Option<&'a [&'a str]>, &'a [(&'a str, &'a str)], bool);

#[test]
fn set_based_requirements_table() {
    // (operator, values, labels, matches) as upstream `Requirement.Matches`.
    let cases: &[RequirementCase] = &[
        ("In", Some(&["x", "y"]), &[("k", "x")], true),
        ("In", Some(&["x"]), &[("k", "z")], false),
        ("In", Some(&["x"]), &[], false),
        ("NotIn", Some(&["x"]), &[("k", "x")], false),
        ("NotIn", Some(&["x"]), &[("k", "z")], true),
        ("NotIn", Some(&["x"]), &[], true),
        ("Exists", None, &[("k", "")], true),
        ("Exists", None, &[("j", "v")], false),
        ("DoesNotExist", None, &[("k", "v")], false),
        ("DoesNotExist", None, &[], true),
        ("Exists", Some(&[]), &[("k", "v")], true),
    ];
    for (op, values, set, want) in cases {
        let sel = both_forms(&typed_exprs(vec![typed_requirement("k", op, *values)])).unwrap();
        assert_eq!(sel.matches(&btree(set)), *want, "{op} {values:?} on {set:?}");
        let json_labels = serde_json::to_value(btree(set)).unwrap();
        assert_eq!(
            sel.matches(&json_labels),
            *want,
            "json {op} {values:?} on {set:?}"
        );
    }
}

#[test]
fn label_selector_conversion_errors_table() {
    let cases: &[(metav1::LabelSelectorRequirement, &str)] = &[
        (
            typed_requirement("a", "Exists", Some(&["x"])),
            "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist",
        ),
        (
            typed_requirement("a", "Gt", Some(&["1"])),
            "\"Gt\" is not a valid label selector operator",
        ),
        (
            typed_requirement("a", "in", Some(&["1"])),
            "\"in\" is not a valid label selector operator",
        ),
        (
            typed_requirement("a b", "Exists", None),
            "key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            typed_requirement("", "Exists", None),
            "key: Invalid value: \"\": name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
    ];
    for (req, want) in cases {
        assert_eq!(both_forms(&typed_exprs(vec![req.clone()])).unwrap_err(), *want);
    }
    let bad_value = metav1::LabelSelector {
        match_labels: Some(btree(&[("a", "b c")])),
        match_expressions: None,
    };
    assert!(
        both_forms(&bad_value)
            .unwrap_err()
            .starts_with("values[0][a]: Invalid value: \"b c\"")
    );
}

#[test]
fn typed_selector_string_and_matching() {
    let sel = metav1::LabelSelector {
        match_labels: Some(btree(&[("app", "web")])),
        match_expressions: Some(vec![
            typed_requirement("env", "In", Some(&["prod", "dev"])),
            typed_requirement("zone", "DoesNotExist", None),
        ]),
    };
    let sel = both_forms(&sel).unwrap();
    assert_eq!(sel.to_string(), "app=web,env in (dev,prod),!zone");
    assert!(sel.matches(&btree(&[("app", "web"), ("env", "dev")])));
    assert!(!sel.matches(&btree(&[("app", "web"), ("env", "dev"), ("zone", "a")])));
    assert!(!sel.matches(&btree(&[("app", "web")])));
}

fn btree(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
