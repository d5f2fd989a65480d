//! `x-kubernetes-validations`: CEL rules on a schema node (upstream
//! `apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go` and
//! `validation.go`), on the `cel` crate (cel-rust).
//!
//! Each rule is compiled when the CRD's schema is checked, and again (from
//! a process-wide cache) when a value first meets it; a rule that
//! does not parse is a CRD validation error
//! (`...x-kubernetes-validations[0].rule: Invalid value:
//! apiextensions.ValidationRule{Rule:"self.x >", ...}: compilation failed:
//! ERROR: <input>:1:9: ...`). At validation `self` is the value at the node
//! and, for a transition rule (one that names `oldSelf`), `oldSelf` is the
//! old value at the same place: such rules run only on update, where an old
//! value correlates (object properties by name, map values by key,
//! `x-kubernetes-list-type: map` items by their keys).
//!
//! A rule that evaluates to false is, at the node's path (plus the rule's
//! `fieldPath`), `Invalid value: "<type>": <message>`, where `<type>` is
//! the schema's type (`"object"`, `"string"`, ...) and `<message>` the
//! evaluated `messageExpression`, else `message`, else `failed rule:
//! <rule>`; `reason` turns it into `Forbidden`, `Required` or `Duplicate`.
//! Declared property names are escaped as upstream's (`namespace` is
//! `self.__namespace__`, `a-b` is `self.a__dash__b`); map keys are not.
//! A rule that fails to evaluate is `Invalid value: "<type>": <error>
//! evaluating rule: <rule>`. Null values are not validated.
//!
//! Supported: cel-rust's standard library (comparisons, arithmetic,
//! `has()`, `size()`, `in`, the `all` / `exists` / `exists_one` / `map` /
//! `filter` macros, `contains`, `startsWith`, `endsWith`, `matches`,
//! `int()`, `string()`, `duration()`, `timestamp()`) and its `strings`,
//! `lists` and `math` extensions (`lowerAscii`, `split`, `join`, ...).
//!
//! Not supported (the README says so): the Kubernetes CEL libraries
//! (`quantity()`, `url()`, `ip()`, `cidr()`, `isSorted()`, `format.*`,
//! `authz`), compile-time type checking (a rule naming a field the schema
//! lacks compiles, and fails at evaluation with `no such key`), cost
//! estimation and the runtime cost budget, `optionalOldSelf` (ratcheting),
//! and the typed
//! views of `date-time` / `duration` strings (they are plain strings here).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use cel::{Context, Env, Program};
use serde_json::{Value, json};

use super::node::{ListType, Node};
use super::path::{Path, Seg};
use crate::error::{FieldError, FieldErrorType};
use crate::gofmt::go_quote;

/// The environment every rule compiles and runs in.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    // The extensions are the crate's own; adding them to a fresh stdlib
    // cannot conflict.
    let _ = env.add_extension(cel::extensions::strings);
    let _ = env.add_extension(cel::extensions::lists);
    let _ = env.add_extension(cel::extensions::math);
    Arc::new(env)
});

/// Builds the environment now (see [`crate::prepare_tables`]).
pub(crate) fn prepare() {
    LazyLock::force(&ENV);
}

/// How many compiled programs [`compile`] keeps (then it starts over).
const PROGRAMS_MAX: usize = 4096;

/// Programs compiled before, by their source: a CRD's schema is checked
/// (every rule compiled to report its errors) and then built (every rule
/// compiled to run), and its versions often repeat the same rules.
/// Process-wide; a program is immutable, so sharing it is safe.
static PROGRAMS: LazyLock<Mutex<HashMap<String, Arc<Program>>>> = LazyLock::new(Mutex::default);

/// Compiles `src` in [`ENV`], or returns the program compiled from the same source before.
fn compile(src: &str) -> Result<Arc<Program>, String> {
    let cached = |programs: &HashMap<String, Arc<Program>>| programs.get(src).cloned();
    let lock = || PROGRAMS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(program) = cached(&lock()) {
        return Ok(program);
    }
    let program = Arc::new(ENV.compile(src).map_err(|e| e.to_string())?);
    let mut programs = lock();
    if programs.len() >= PROGRAMS_MAX {
        programs.clear();
    }
    programs.insert(src.to_string(), program.clone());
    Ok(program)
}

/// One compiled `x-kubernetes-validations` entry.
#[derive(Debug)]
pub struct Rule {
    /// `rule`, as written.
    pub rule: String,
    /// `message`.
    pub message: String,
    /// `messageExpression`, compiled.
    message_expression: Option<Arc<Program>>,
    /// `fieldPath`, without its leading `.`.
    pub field_path: String,
    /// `reason`.
    pub reason: Option<String>,
    program: Arc<Program>,
    /// Whether the rule names `oldSelf` (a transition rule).
    pub uses_old_self: bool,
}

/// A rule that did not compile: which entry, which field, the detail.
pub struct CompileError {
    /// Index in `x-kubernetes-validations`.
    pub index: usize,
    /// `rule` or `messageExpression`.
    pub field: &'static str,
    /// What the error prints after `Invalid value: `.
    pub detail: String,
}

impl Rule {
    /// Compiles the entries of `x-kubernetes-validations`.
    pub fn compile_all(raw: Option<&Value>) -> (Vec<Rule>, Vec<CompileError>) {
        let mut rules = Vec::new();
        let mut errors = Vec::new();
        let Some(Value::Array(entries)) = raw else {
            return (rules, errors);
        };
        for (index, entry) in entries.iter().enumerate() {
            match Rule::compile(entry) {
                Ok(rule) => rules.push(rule),
                Err((field, detail)) => errors.push(CompileError {
                    index,
                    field,
                    detail: format!("{}: {detail}", go_rule(entry)),
                }),
            }
        }
        (rules, errors)
    }

    fn compile(entry: &Value) -> Result<Rule, (&'static str, String)> {
        let text = |k: &str| {
            entry
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let rule = text("rule");
        let program = compile(&rule).map_err(|e| ("rule", format!("compilation failed: {e}")))?;
        let message_expression = match entry.get("messageExpression").and_then(Value::as_str) {
            Some(src) if !src.is_empty() => Some(compile(src).map_err(|e| {
                (
                    "messageExpression",
                    format!("messageExpression compilation failed: {e}"),
                )
            })?),
            _ => None,
        };
        let uses_old_self = program.references().has_variable("oldSelf");
        Ok(Rule {
            message: text("message"),
            field_path: text("fieldPath").trim_start_matches('.').to_string(),
            reason: entry.get("reason").and_then(Value::as_str).map(str::to_string),
            rule,
            message_expression,
            program,
            uses_old_self,
        })
    }

    /// `failed rule: <rule>` unless a message is given (upstream
    /// `ruleMessageOrDefault`).
    fn message_or_default(&self) -> String {
        if self.message.trim().is_empty() {
            format!("failed rule: {}", self.rule.trim())
        } else {
            self.message.trim().to_string()
        }
    }

    /// The rule as error messages name it (upstream `ruleErrorString`).
    fn error_string(&self) -> &str {
        if self.message.trim().is_empty() {
            self.rule.trim()
        } else {
            self.message.trim()
        }
    }
}

/// Go's `%#v` of the `apiextensions.ValidationRule` a compile error shows.
fn go_rule(entry: &Value) -> String {
    let text = |k: &str| go_quote(entry.get(k).and_then(Value::as_str).unwrap_or_default());
    let reason = match entry.get("reason").and_then(Value::as_str) {
        Some(r) => format!("(*apiextensions.FieldValueErrorReason)({})", go_quote(r)),
        None => "(*apiextensions.FieldValueErrorReason)(nil)".to_string(),
    };
    let optional = match entry.get("optionalOldSelf").and_then(Value::as_bool) {
        Some(b) => format!("(*bool)({b})"),
        None => "(*bool)(nil)".to_string(),
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{reason}, FieldPath:{}, OptionalOldSelf:{optional}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        text("fieldPath"),
    )
}

/// Runs every rule under `x` (with `old`, its correlated old value).
pub fn validate(node: &Node, x: &Value, old: Option<&Value>, path: &mut Path, errs: &mut Vec<FieldError>) {
    if x.is_null() {
        return;
    }
    if !node.rules.is_empty() {
        run_rules(node, x, old, path, errs);
    }
    match x {
        Value::Object(obj) => {
            let old_obj = old.and_then(Value::as_object);
            for (k, v) in obj {
                let old_v = old_obj.and_then(|o| o.get(k));
                if let Some(prop) = node.properties.get(k) {
                    path.with(Seg::Field(k.clone()), |p| validate(prop, v, old_v, p, errs));
                } else if let Some(values) = node.additional_schema() {
                    path.with(Seg::Key(k.clone()), |p| validate(values, v, old_v, p, errs));
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = &node.items else { return };
            let old_items = correlate(node, items, old);
            for (i, item) in items.iter().enumerate() {
                let old_item = old_items.as_ref().and_then(|m| m.get(&i).copied());
                path.with(Seg::Index(i), |p| validate(item_schema, item, old_item, p, errs));
            }
        }
        _ => {}
    }
}

/// For a `map` list, the old item of each new index (by the map keys).
fn correlate<'o>(node: &Node, items: &[Value], old: Option<&'o Value>) -> Option<HashMap<usize, &'o Value>> {
    let Some(ListType::Map(keys)) = &node.list_type else {
        return None;
    };
    let old_items = old?.as_array()?;
    let key_of = |v: &Value| -> Vec<Value> {
        keys.iter()
            .map(|k| v.get(k).cloned().unwrap_or(Value::Null))
            .collect()
    };
    let by_key: HashMap<String, &Value> = old_items
        .iter()
        .map(|v| (Value::Array(key_of(v)).to_string(), v))
        .collect();
    Some(
        items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| by_key.get(&Value::Array(key_of(v)).to_string()).map(|o| (i, *o)))
            .collect(),
    )
}

fn run_rules(node: &Node, x: &Value, old: Option<&Value>, path: &Path, errs: &mut Vec<FieldError>) {
    let mut ctx = Context::with_env(ENV.clone());
    ctx.add_variable_from_value("self", to_cel(Some(node), x));
    if let Some(old) = old {
        ctx.add_variable_from_value("oldSelf", to_cel(Some(node), old));
    }
    let type_name = json!(node.type_name);
    for rule in node.rules.compiled() {
        if rule.uses_old_self && old.is_none() {
            continue;
        }
        let field = path.field();
        match rule.program.execute(&ctx) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => {
                let field = match (field.is_empty(), rule.field_path.is_empty()) {
                    (_, true) => field,
                    (true, false) => rule.field_path.clone(),
                    (false, false) => format!("{field}.{}", rule.field_path),
                };
                let detail = message_of(rule, &ctx);
                errs.push(error_for_reason(rule, field, type_name.clone(), detail));
            }
            Ok(other) => {
                let detail = format!(
                    "rule evaluation error: the rule gave {:?}, not a bool: {}",
                    other.type_of().to_string(),
                    rule.error_string()
                );
                errs.push(FieldError::invalid(field, type_name.clone(), detail));
            }
            Err(e) => {
                let detail = format!("{} evaluating rule: {}", go_error(&e), rule.error_string());
                errs.push(FieldError::invalid(field, type_name.clone(), detail));
            }
        }
    }
}

/// An evaluation error in cel-go's words where they differ
/// (`no such key: x`, `division by zero`, `index out of bounds: 3`).
fn go_error(e: &cel::ExecutionError) -> String {
    use cel::ExecutionError as E;
    match e {
        E::NoSuchKey(k) => format!("no such key: {k}"),
        E::DivisionByZero(_) => "division by zero".to_string(),
        E::RemainderByZero(_) => "modulus by zero".to_string(),
        E::IndexOutOfBounds(i) => format!("index out of bounds: {}", cel_scalar(i)),
        E::Overflow(..) => "integer overflow".to_string(),
        other => other.to_string(),
    }
}

fn cel_scalar(v: &cel::Value) -> String {
    match v {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}

/// The evaluated `messageExpression` when it gives a usable string, else
/// the rule's message.
fn message_of(rule: &Rule, ctx: &Context) -> String {
    if let Some(expr) = &rule.message_expression
        && let Ok(cel::Value::String(s)) = expr.execute(ctx)
    {
        let s = s.trim();
        if !s.is_empty() && !s.contains('\n') {
            return s.to_string();
        }
    }
    rule.message_or_default()
}

fn error_for_reason(rule: &Rule, field: String, value: Value, detail: String) -> FieldError {
    match rule.reason.as_deref() {
        Some("FieldValueForbidden") => FieldError::forbidden(field, detail),
        Some("FieldValueRequired") => FieldError::required(field, detail),
        Some("FieldValueDuplicate") => FieldError {
            kind: FieldErrorType::Duplicate,
            field,
            value: Some(value),
            detail: String::new(),
        },
        _ => FieldError::invalid(field, value, detail),
    }
}

/// A JSON value as CEL sees it, at `node` of the schema (when known): the
/// properties the schema declares are named as CEL escapes them, map keys
/// (`additionalProperties`) and undeclared fields are kept as written.
fn to_cel(node: Option<&Node>, v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => {
            let item_node = node.and_then(|n| n.items.as_deref());
            cel::Value::List(Arc::new(items.iter().map(|i| to_cel(item_node, i)).collect()))
        }
        Value::Object(obj) => {
            let map: HashMap<String, cel::Value> = obj
                .iter()
                .map(|(k, v)| match node.and_then(|n| n.properties.get(k)) {
                    Some(prop) => (escape_property(k), to_cel(Some(prop), v)),
                    None => {
                        let values = node.and_then(|n| n.additional_schema()).map(|s| &**s);
                        (k.clone(), to_cel(values, v))
                    }
                })
                .collect();
            cel::Value::from(map)
        }
    }
}

/// CEL's reserved words: a property so named is reached as `__<word>__`.
const CEL_RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A declared property's name as a rule names it (upstream
/// `apiserver/schema/cel/model/escaping.go`): a reserved word becomes
/// `__word__`; `__`, `.`, `-` and `/` become `__underscores__`, `__dot__`,
/// `__dash__` and `__slash__`. Other names are unchanged.
fn escape_property(name: &str) -> String {
    if CEL_RESERVED.contains(&name) {
        return format!("__{name}__");
    }
    if !name.contains(['.', '-', '/']) && !name.contains("__") {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len() + 8);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}
