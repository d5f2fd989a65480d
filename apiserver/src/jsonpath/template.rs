//! Kubernetes JSONPath templates: `{.status.conditions[?(@.type=="Ready")].status}`.
//!
//! Upstream: `staging/src/k8s.io/client-go/util/jsonpath` (`parser.go`,
//! `jsonpath.go`), the dialect of `kubectl -o jsonpath` and of a
//! CustomResourceDefinition's `additionalPrinterColumns[].jsonPath` (which
//! the server wraps as `{<path>}`). It is not RFC 9535: `.a.b` needs no `$`,
//! a field name ends at the first unescaped `.` (so `['a.b']` still splits
//! at the dot and labels are written `app\.kubernetes\.io/name`), a filter
//! compares exactly one value on each side (an element without the field
//! fails the whole expression), `..` yields only non-empty containers, and
//! strings compare only with strings, integers with integers.
//!
//! [`JsonPath::parse`] reads a template into text and actions;
//! [`JsonPath::find_results`] evaluates each action against a JSON value,
//! giving one list of values per action (upstream `FindResults`);
//! [`print_value`] renders one of them as `PrintResults` does.
//!
//! Not supported: `range` / `end` (an evaluation error), and a slice's third
//! number (upstream passes it to Go's `Slice3`, a capacity, not a step; it is
//! ignored here). Map keys are visited in sorted order where Go's order is
//! random (`.*`, `..`).

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    segments: Vec<Segment>,
    allow_missing_keys: bool,
}

/// Text outside braces, or one `{...}` action.
#[derive(Clone, Debug, PartialEq)]
enum Segment {
    Text(String),
    Action(Vec<Node>),
}

/// One step of an action (upstream `node.go`).
#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// `.name`: an object's member.
    Field(String),
    /// `.*`: every member or element.
    Wildcard,
    /// `[1]`, `[1:3]`, `[-1]`, `[*]`.
    Array(Slice),
    /// `[?(@.a == "x")]`.
    Filter(Box<Filter>),
    /// `..`: the value and every non-empty container below it.
    Recursive,
    /// `[0,2]`, `['a','b']`: each branch applied to the input.
    Union(Vec<Vec<Node>>),
    /// A quoted string.
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `range`, `end` and any other bare word.
    Identifier(String),
}

/// The numbers of `[start:end:step]`; `None` where not written.
#[derive(Clone, Debug, PartialEq)]
struct Slice {
    start: Option<i64>,
    end: SliceEnd,
    step: Option<i64>,
}

#[derive(Clone, Debug, PartialEq)]
enum SliceEnd {
    /// `[n]`: one element (upstream's derived end, `start + 1`).
    One,
    /// `[n:]` or `[:]`: to the end.
    Open,
    At(i64),
}

#[derive(Clone, Debug, PartialEq)]
struct Filter {
    left: Vec<Node>,
    /// `==`, `!=`, `<`, ... as written; `exists` for `[?(@.a)]`.
    op: String,
    right: Vec<Node>,
}

/// A value found by a template: a part of the input, or a literal.
pub type Found<'a> = Cow<'a, Value>;

impl JsonPath {
    /// Parses a template (`{.metadata.name}`, `name: {.metadata.name}`).
    /// The errors are upstream's parser messages.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        let mut parser = Parser::new(text);
        let segments = parser.parse_template()?;
        Ok(JsonPath {
            segments,
            allow_missing_keys: false,
        })
    }

    /// Missing fields give no value instead of an error (upstream
    /// `AllowMissingKeys(true)`, as kubectl and the table convertor use).
    pub fn allow_missing_keys(mut self, allow: bool) -> Self {
        self.allow_missing_keys = allow;
        self
    }

    /// The values each segment yields, in order (upstream `FindResults`).
    pub fn find_results<'a>(&self, data: &'a Value) -> Result<Vec<Vec<Found<'a>>>, String> {
        self.segments
            .iter()
            .map(|segment| match segment {
                Segment::Text(t) => Ok(vec![Cow::Owned(Value::String(t.clone()))]),
                Segment::Action(nodes) => self.eval_list(vec![Cow::Borrowed(data)], nodes),
            })
            .collect()
    }

    fn eval_list<'a>(&self, input: Vec<Found<'a>>, nodes: &[Node]) -> Result<Vec<Found<'a>>, String> {
        nodes.iter().try_fold(input, |cur, node| self.walk(cur, node))
    }

    fn walk<'a>(&self, input: Vec<Found<'a>>, node: &Node) -> Result<Vec<Found<'a>>, String> {
        match node {
            Node::Field(name) => self.eval_field(input, name),
            Node::Wildcard => Ok(input.into_iter().flat_map(children).collect()),
            Node::Array(slice) => eval_array(input, slice),
            Node::Filter(filter) => self.eval_filter(input, filter),
            Node::Recursive => {
                let mut out = Vec::new();
                for v in input {
                    descend(v, &mut out);
                }
                Ok(out)
            }
            Node::Union(branches) => {
                let mut out = Vec::new();
                for branch in branches {
                    out.extend(self.eval_list(input.clone(), branch)?);
                }
                Ok(out)
            }
            Node::Text(t) => Ok(vec![Cow::Owned(Value::String(t.clone()))]),
            Node::Int(i) => Ok(literal(&input, Value::from(*i))),
            Node::Float(f) => Ok(literal(&input, Value::from(*f))),
            Node::Bool(b) => Ok(literal(&input, Value::Bool(*b))),
            Node::Identifier(name) => Err(format!("unrecognized identifier {name}")),
        }
    }

    fn eval_field<'a>(&self, input: Vec<Found<'a>>, name: &str) -> Result<Vec<Found<'a>>, String> {
        if input.is_empty() || name.is_empty() {
            return Ok(input);
        }
        let results: Vec<Found<'a>> = input
            .into_iter()
            .filter_map(|v| match v {
                Cow::Borrowed(v) => v.get(name).map(Cow::Borrowed),
                Cow::Owned(v) => v.get(name).cloned().map(Cow::Owned),
            })
            .collect();
        if results.is_empty() && !self.allow_missing_keys {
            return Err(format!("{name} is not found"));
        }
        Ok(results)
    }

    fn eval_filter<'a>(&self, input: Vec<Found<'a>>, filter: &Filter) -> Result<Vec<Found<'a>>, String> {
        let mut results = Vec::new();
        for value in input {
            let items: Vec<Found<'a>> = match value {
                Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
                Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
                other => {
                    return Err(format!(
                        "{} is not array or slice and cannot be filtered",
                        go_text(&other)
                    ));
                }
            };
            for item in items {
                if self.passes(&item, filter)? {
                    results.push(item);
                }
            }
        }
        Ok(results)
    }

    fn passes(&self, item: &Found<'_>, filter: &Filter) -> Result<bool, String> {
        let lefts = self.eval_list(vec![Cow::Borrowed(item.as_ref())], &filter.left);
        if filter.op == "exists" {
            return Ok(lefts.is_ok_and(|l| !l.is_empty()));
        }
        let left = single(lefts?)?;
        let right = single(self.eval_list(vec![Cow::Borrowed(item.as_ref())], &filter.right)?)?;
        compare(&left, &filter.op, &right)
    }
}

fn single(mut values: Vec<Found<'_>>) -> Result<Value, String> {
    if values.len() != 1 {
        return Err("can only compare one element at a time".into());
    }
    Ok(values.pop().map(Cow::into_owned).unwrap_or_default())
}

/// One copy of `value` per input value (upstream `evalInt` and friends).
fn literal<'a>(input: &[Found<'a>], value: Value) -> Vec<Found<'a>> {
    input.iter().map(|_| Cow::Owned(value.clone())).collect()
}

/// The members of an object, the elements of an array, the bytes of a
/// string (upstream's `reflect` walk); nothing for null and scalars.
fn children(v: Found<'_>) -> Vec<Found<'_>> {
    match v {
        Cow::Borrowed(Value::Object(m)) => m.values().map(Cow::Borrowed).collect(),
        Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
        Cow::Owned(Value::Object(m)) => m.into_iter().map(|(_, v)| Cow::Owned(v)).collect(),
        Cow::Owned(Value::Array(a)) => a.into_iter().map(Cow::Owned).collect(),
        Cow::Borrowed(Value::String(s)) => bytes(s),
        Cow::Owned(Value::String(s)) => bytes(&s),
        _ => Vec::new(),
    }
}

fn bytes<'a>(s: &str) -> Vec<Found<'a>> {
    s.bytes().map(|b| Cow::Owned(Value::from(b))).collect()
}

/// `..`: a value that has children, then the same for each child; scalars
/// and empty containers are not yielded (upstream `evalRecursive`).
fn descend<'a>(v: Found<'a>, out: &mut Vec<Found<'a>>) {
    let kids = match &*v {
        Value::Object(m) if !m.is_empty() => children(v.clone()),
        Value::Array(a) if !a.is_empty() => children(v.clone()),
        Value::String(s) if !s.is_empty() => Vec::new(),
        _ => return,
    };
    out.push(v);
    for kid in kids {
        descend(kid, out);
    }
}

fn eval_array<'a>(input: Vec<Found<'a>>, slice: &Slice) -> Result<Vec<Found<'a>>, String> {
    let mut result = Vec::new();
    for value in input {
        let items: Vec<Found<'a>> = match value {
            Cow::Borrowed(Value::Null) | Cow::Owned(Value::Null) => continue,
            Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
            other => return Err(format!("{} is not array or slice", go_type(&other))),
        };
        let (start, end) = bounds(slice, items.len())?;
        result.extend(items.into_iter().skip(start).take(end - start));
    }
    Ok(result)
}

/// The element range `slice` selects of an array of `len` (upstream
/// `evalArray`: negative numbers count from the end; out of range fails
/// unless nothing is asked for).
fn bounds(slice: &Slice, len: usize) -> Result<(usize, usize), String> {
    let n = len as i64;
    let mut start = slice.start.unwrap_or(0);
    if start < 0 {
        start += n;
    }
    let end = match slice.end {
        SliceEnd::Open => n,
        SliceEnd::One => start.saturating_add(1),
        SliceEnd::At(e) if e < 0 => e + n,
        SliceEnd::At(e) => e,
    };
    let out_of_bounds = |i: i64| format!("array index out of bounds: index {i}, length {len}");
    if end != start {
        if start >= n {
            return Err(out_of_bounds(start));
        }
        if end > n {
            return Err(out_of_bounds(end - 1));
        }
    }
    if start < 0 || start > n {
        return Err(out_of_bounds(start));
    }
    if end < start {
        return Err(format!("slice bounds out of range [{start}:{end}]"));
    }
    if let Some(step) = slice.step
        && (step < end || step > n)
    {
        return Err(format!(
            "slice bounds out of range [::{step}] with capacity {len}"
        ));
    }
    Ok((start as usize, end as usize))
}

// ---------------------------------------------------------------------------
// Comparison (upstream's fork of text/template's eq, lt, ...)
// ---------------------------------------------------------------------------

/// A comparable value: the basic kinds of Go's `text/template`.
#[derive(Clone, Copy)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(&'a str),
}

fn basic(v: &Value) -> Result<Basic<'_>, String> {
    match v {
        Value::Bool(b) => Ok(Basic::Bool(*b)),
        Value::String(s) => Ok(Basic::Str(s)),
        Value::Number(n) => Ok(if let Some(i) = n.as_i64() {
            Basic::Int(i)
        } else if let Some(u) = n.as_u64() {
            Basic::Uint(u)
        } else {
            Basic::Float(n.as_f64().unwrap_or_default())
        }),
        _ => Err("invalid type for comparison".into()),
    }
}

const INCOMPATIBLE: &str = "incompatible types for comparison";

fn equal(a: Basic, b: Basic) -> Result<bool, String> {
    Ok(match (a, b) {
        (Basic::Bool(x), Basic::Bool(y)) => x == y,
        (Basic::Int(x), Basic::Int(y)) => x == y,
        (Basic::Uint(x), Basic::Uint(y)) => x == y,
        (Basic::Float(x), Basic::Float(y)) => x == y,
        (Basic::Str(x), Basic::Str(y)) => x == y,
        _ => return Err(INCOMPATIBLE.into()),
    })
}

fn less(a: Basic, b: Basic) -> Result<bool, String> {
    Ok(match (a, b) {
        (Basic::Int(x), Basic::Int(y)) => x < y,
        (Basic::Uint(x), Basic::Uint(y)) => x < y,
        (Basic::Float(x), Basic::Float(y)) => x < y,
        (Basic::Str(x), Basic::Str(y)) => x < y,
        (Basic::Int(x), Basic::Uint(y)) => x < 0 || (x as u64) < y,
        (Basic::Uint(x), Basic::Int(y)) => y >= 0 && x < y as u64,
        (Basic::Bool(_), Basic::Bool(_)) => return Err("invalid type for comparison".into()),
        _ => return Err(INCOMPATIBLE.into()),
    })
}

fn compare(left: &Value, op: &str, right: &Value) -> Result<bool, String> {
    let (a, b) = (basic(left)?, basic(right)?);
    match op {
        "==" => equal(a, b),
        "!=" => equal(a, b).map(|e| !e),
        "<" => less(a, b),
        ">=" => less(a, b).map(|l| !l),
        "<=" => Ok(less(a, b)? || equal(a, b)?),
        ">" => Ok(!(less(a, b)? || equal(a, b)?)),
        other => Err(format!("unrecognized filter operator {other}")),
    }
}

// ---------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------

/// One found value as upstream's `PrintResults` writes it: objects and
/// arrays as compact JSON, strings bare, numbers and booleans as Go's
/// `fmt.Fprint` does, and null as `<no value>` (a nil `interface{}` handed
/// to `PrintResults`, as the table convertor does).
pub fn print_value(v: &Value) -> String {
    match v {
        Value::Object(_) | Value::Array(_) => v.to_string(),
        Value::Null => "<no value>".into(),
        other => go_text(other),
    }
}

/// `fmt.Fprint` of a scalar.
fn go_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => go_float(n.as_f64().unwrap_or_default()),
        other => other.to_string(),
    }
}

/// The Go type a decoded JSON value has, for error messages.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "map[string]interface {}",
        Value::Array(_) => "[]interface {}",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::Null => "interface {}",
    }
}

/// Go's `%v` of a float64: the shortest digits, in exponent form when the
/// exponent is below -4 or at least 6 (`1e+06`, `1.5e-05`), else plain.
fn go_float(f: f64) -> String {
    let sci = format!("{f:e}");
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return sci;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return f.to_string();
    }
    let mut out = String::from(mantissa);
    let sign = if exp < 0 { '-' } else { '+' };
    let _ = write!(out, "e{sign}{:02}", exp.abs());
    out
}

// ---------------------------------------------------------------------------
// Parser (upstream parser.go)
// ---------------------------------------------------------------------------

struct Parser {
    input: Vec<char>,
    pos: usize,
    start: usize,
}

impl Parser {
    fn new(text: &str) -> Self {
        Parser {
            input: text.chars().collect(),
            pos: 0,
            start: 0,
        }
    }

    fn next(&mut self) -> Option<char> {
        let c = self.input.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn backup(&mut self) {
        self.pos -= 1;
    }

    fn peek(&self) -> Option<char> {
        self.input.get(self.pos).copied()
    }

    fn at(&self, prefix: &str) -> bool {
        let rest = self.input.get(self.pos..).unwrap_or_default();
        prefix.chars().enumerate().all(|(i, c)| rest.get(i) == Some(&c))
    }

    fn consume(&mut self) -> String {
        let text: String = self.input[self.start..self.pos].iter().collect();
        self.start = self.pos;
        text
    }

    /// Text and actions up to the end of the input.
    fn parse_template(&mut self) -> Result<Vec<Segment>, String> {
        let mut segments = Vec::new();
        loop {
            if self.at("{") {
                if self.pos > self.start {
                    segments.push(Segment::Text(self.consume()));
                }
                self.pos += 1;
                self.consume();
                let mut nodes = Vec::new();
                self.parse_inside_action(&mut nodes)?;
                segments.push(Segment::Action(nodes));
                continue;
            }
            if self.next().is_none() {
                break;
            }
        }
        if self.pos > self.start {
            segments.push(Segment::Text(self.consume()));
        }
        Ok(segments)
    }

    /// The nodes of one action, up to and including its `}`.
    fn parse_inside_action(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        loop {
            if self.at("}") {
                self.pos += 1;
                self.consume();
                return Ok(());
            }
            if self.at("[?(") {
                self.parse_filter(cur)?;
                continue;
            }
            if self.at("..") {
                self.parse_recursive(cur)?;
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return Err("unclosed action".into()),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.parse_array(cur)?,
                Some(q @ ('"' | '\'')) => self.parse_quote(cur, q)?,
                Some('.') => self.parse_field(cur),
                Some(c) if c == '+' || c == '-' || c.is_ascii_digit() => {
                    self.backup();
                    self.parse_number(cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.parse_identifier(cur);
                }
                Some(c) => {
                    return Err(format!(
                        "unrecognized character in action: U+{:04X} {c:?}",
                        u32::from(c)
                    ));
                }
            }
        }
    }

    fn parse_identifier(&mut self, cur: &mut Vec<Node>) {
        while !is_terminator(self.peek()) {
            self.pos += 1;
        }
        let word = self.consume();
        cur.push(match word.as_str() {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            _ => Node::Identifier(word),
        });
    }

    fn parse_recursive(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        if cur.last() == Some(&Node::Recursive) {
            return Err("invalid multiple recursive descent".into());
        }
        self.pos += 2;
        self.consume();
        cur.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.parse_field(cur);
        }
        Ok(())
    }

    fn parse_number(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.pos += 1;
        }
        while matches!(self.peek(), Some(c) if c == '.' || c.is_ascii_digit()) {
            self.pos += 1;
        }
        let text = self.consume();
        if let Ok(i) = text.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Ok(f) = text.parse::<f64>() {
            cur.push(Node::Float(f));
        } else {
            return Err(format!("cannot parse number {text}"));
        }
        Ok(())
    }

    /// `[...]` after its `[`: an index or slice, a union, or a quoted key.
    fn parse_array(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated array".into()),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let mut inner = &text[1..text.len() - 1];
        if inner == "*" {
            inner = ":";
        }
        if inner.contains(',') {
            let branches = inner
                .split(',')
                .map(|part| parse_action(&format!("[{}]", part.trim_matches(' '))))
                .collect::<Result<_, _>>()?;
            cur.push(Node::Union(branches));
            return Ok(());
        }
        if let Some(key) = inner
            .strip_prefix('\'')
            .and_then(|k| k.strip_suffix('\''))
            .filter(|k| !k.contains('\''))
        {
            cur.extend(parse_action(&format!(".{key}"))?);
            return Ok(());
        }
        cur.push(Node::Array(parse_slice(inner)?));
        Ok(())
    }

    /// `[?(...)]`: `left op right`, or an existence test.
    fn parse_filter(&mut self, cur: &mut Vec<Node>) -> Result<(), String> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end, mut pair) = (false, false, '\0');
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated filter".into()),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        (begin, pair) = (true, q);
                        continue;
                    }
                    if self.input[self.pos - 2] != '\\' && q == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                Some(_) => {}
            }
        }
        if self.next() != Some(']') {
            return Err("unclosed array expect ]".into());
        }
        let text = self.consume();
        let text = &text[..text.len() - 2];
        let filter = match split_comparison(text) {
            Some((left, op, right)) => Filter {
                left: parse_action(left)?,
                op: op.to_string(),
                right: parse_action(right)?,
            },
            None => Filter {
                left: parse_action(text)?,
                op: "exists".into(),
                right: Vec::new(),
            },
        };
        cur.push(Node::Filter(Box::new(filter)));
        Ok(())
    }

    fn parse_quote(&mut self, cur: &mut Vec<Node>, quote: char) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err("unterminated quoted string".into()),
                Some(c) if c == quote && self.input[self.pos - 2] != '\\' => break,
                Some(_) => {}
            }
        }
        let text = self.consume();
        let unquoted = unquote(&text).ok_or_else(|| format!("unquote string {text} error invalid syntax"))?;
        cur.push(Node::Text(unquoted));
        Ok(())
    }

    /// `.name` after its `.`: up to the next unescaped terminator;
    /// backslashes are dropped from the name.
    fn parse_field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            match self.peek() {
                Some('\\') => self.pos = (self.pos + 2).min(self.input.len()),
                c if is_terminator(c) => break,
                _ => self.pos += 1,
            }
        }
        let name = self.consume();
        cur.push(if name == "*" {
            Node::Wildcard
        } else {
            Node::Field(name.replace('\\', ""))
        });
    }
}

/// The nodes of `text` parsed as the inside of one action (upstream
/// `parseAction`).
fn parse_action(text: &str) -> Result<Vec<Node>, String> {
    let mut parser = Parser::new(&format!("{{{text}}}"));
    let segments = parser.parse_template()?;
    match segments.into_iter().next() {
        Some(Segment::Action(nodes)) => Ok(nodes),
        _ => Err("invalid syntax".into()),
    }
}

/// `^([^!<>=]+)([!<>=]+)(.+?)$`.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let op_start = text.find(is_op)?;
    let op_len = text[op_start..].find(|c| !is_op(c))?;
    let (left, rest) = text.split_at(op_start);
    let (op, right) = rest.split_at(op_len);
    (!left.is_empty() && !right.is_empty()).then_some((left, op, right))
}

/// `^(-?\d*)(:-?\d*)?(:-?\d*)?$`, read as upstream's `ParamsEntry`s.
fn parse_slice(text: &str) -> Result<Slice, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let well_formed = parts.len() <= 3
        && parts.iter().all(|p| {
            let digits = p.strip_prefix('-').unwrap_or(p);
            digits.chars().all(|c| c.is_ascii_digit())
        });
    if !well_formed {
        return Err(format!("invalid array index {text}"));
    }
    let number = |p: &str| -> Result<Option<i64>, String> {
        if p.is_empty() {
            return Ok(None);
        }
        p.parse()
            .map(Some)
            .map_err(|_| format!("array index {p} is not a number"))
    };
    let start = number(parts[0])?;
    let end = match parts.get(1) {
        None => SliceEnd::One,
        Some(p) => number(p)?.map_or(SliceEnd::Open, SliceEnd::At),
    };
    let step = match parts.get(2) {
        None => None,
        Some(p) => number(p)?,
    };
    Ok(Slice { start, end, step })
}

/// Whether `c` ends a field name or identifier.
fn is_terminator(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => matches!(
            c,
            ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'
        ),
    }
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Go's `strconv.Unquote`, for single quotes too (upstream `UnquoteExtend`);
/// `None` on invalid syntax.
fn unquote(text: &str) -> Option<String> {
    let quote = text.chars().next()?;
    if !matches!(quote, '"' | '\'') {
        return None;
    }
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = match chars.next()? {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' => '\\',
            q @ ('\'' | '"') if q == quote => q,
            'x' => hex(&mut chars, 2)?,
            'u' => hex(&mut chars, 4)?,
            'U' => hex(&mut chars, 8)?,
            d @ '0'..='7' => {
                let digits: String = [Some(d), chars.next(), chars.next()]
                    .into_iter()
                    .collect::<Option<_>>()?;
                char::from_u32(u32::from_str_radix(&digits, 8).ok()?)?
            }
            _ => return None,
        };
        out.push(escaped);
    }
    Some(out)
}

fn hex(chars: &mut std::str::Chars<'_>, n: usize) -> Option<char> {
    let digits: String = chars.take(n).collect();
    if digits.len() != n {
        return None;
    }
    char::from_u32(u32::from_str_radix(&digits, 16).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "kind": "Pod",
            "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "web", "tier": "front"}},
            "spec": {"replicas": 3, "ratio": 0.25, "paused": false, "containers": [
                {"name": "a", "image": "nginx", "ports": [{"containerPort": 80}]},
                {"name": "b", "image": "envoy"}
            ]},
            "status": {"conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "False"}
            ], "big": 1500000.5, "none": null}
        })
    }

    /// The values of a column path (`{path}`, missing keys allowed), as text.
    fn find(path: &str, data: &Value) -> Result<Vec<String>, String> {
        let jp = JsonPath::parse(&format!("{{{path}}}"))?.allow_missing_keys(true);
        let results = jp.find_results(data)?;
        Ok(results.into_iter().flatten().map(|v| print_value(&v)).collect())
    }

    #[test]
    fn fields_indexes_and_wildcards() {
        let p = pod();
        assert_eq!(find(".metadata.name", &p).unwrap(), ["web"]);
        assert_eq!(find("$.metadata.name", &p).unwrap(), ["web"]);
        assert_eq!(find(".spec.replicas", &p).unwrap(), ["3"]);
        assert_eq!(find(".spec.containers[1].image", &p).unwrap(), ["envoy"]);
        assert_eq!(find(".spec.containers[-1].name", &p).unwrap(), ["b"]);
        assert_eq!(find(".spec.containers[*].name", &p).unwrap(), ["a", "b"]);
        assert_eq!(find(".spec.containers[0:1].name", &p).unwrap(), ["a"]);
        assert_eq!(
            find(".spec.containers[0,1].image", &p).unwrap(),
            ["nginx", "envoy"]
        );
        assert_eq!(find(".metadata.labels.*", &p).unwrap(), ["web", "front"]);
        assert_eq!(
            find(".metadata.labels.app\\.kubernetes\\.io/name", &p).unwrap(),
            ["web"]
        );
        assert_eq!(find(".metadata['name']", &p).unwrap(), ["web"]);
        assert_eq!(
            find(".spec.containers[0].ports", &p).unwrap(),
            [r#"[{"containerPort":80}]"#]
        );
    }

    #[test]
    fn missing_fields_and_bad_indexes() {
        let p = pod();
        assert_eq!(find(".spec.missing.deeper", &p).unwrap(), Vec::<String>::new());
        let strict = JsonPath::parse("{.spec.missing}").unwrap();
        assert_eq!(strict.find_results(&p).unwrap_err(), "missing is not found");
        assert_eq!(
            find(".spec.containers[5].name", &p).unwrap_err(),
            "array index out of bounds: index 5, length 2"
        );
        assert_eq!(
            find(".metadata[0]", &p).unwrap_err(),
            "map[string]interface {} is not array or slice"
        );
        assert_eq!(find(".status.none", &p).unwrap(), ["<no value>"]);
        assert!(find(".spec.containers[9223372036854775807]", &p).is_err());
        assert!(find(".spec.containers[-9223372036854775808:]", &p).is_err());
    }

    #[test]
    fn filters() {
        let p = pod();
        assert_eq!(
            find(".status.conditions[?(@.type == 'Available')].status", &p).unwrap(),
            ["True"]
        );
        assert_eq!(
            find(r#".status.conditions[?(@.type=="Progressing")].status"#, &p).unwrap(),
            ["False"]
        );
        assert_eq!(
            find(".status.conditions[?(@.type!=\"Available\")].type", &p).unwrap(),
            ["Progressing"]
        );
        assert_eq!(find(".spec.containers[?(@.ports)].name", &p).unwrap(), ["a"]);
        assert_eq!(
            find(".spec.containers[?(@.ports[0].containerPort >= 80)].name", &p).unwrap_err(),
            "can only compare one element at a time",
            "the second container has no ports: upstream fails the whole filter"
        );
        let nums = json!({"xs": [{"n": 1}, {"n": 5}, {"n": 10}]});
        assert_eq!(find(".xs[?(@.n > 4)].n", &nums).unwrap(), ["5", "10"]);
        assert_eq!(find(".xs[?(@.n <= 5)].n", &nums).unwrap(), ["1", "5"]);
        assert_eq!(
            find(".xs[?(@.n == 'x')].n", &nums).unwrap_err(),
            "incompatible types for comparison"
        );
        let flags = json!({"xs": [{"on": true, "n": "a"}, {"on": false, "n": "b"}]});
        assert_eq!(find(".xs[?(@.on == true)].n", &flags).unwrap(), ["a"]);
        assert!(
            find(".spec[?(@.x)]", &p)
                .unwrap_err()
                .contains("cannot be filtered")
        );
    }

    #[test]
    fn recursive_descent() {
        let p = pod();
        assert_eq!(find("..image", &p).unwrap(), ["nginx", "envoy"]);
        assert_eq!(find(".spec..containerPort", &p).unwrap(), ["80"]);
        assert_eq!(
            JsonPath::parse("{....a}").unwrap_err(),
            "invalid multiple recursive descent"
        );
    }

    #[test]
    fn text_and_several_actions() {
        let p = pod();
        let jp = JsonPath::parse("name={.metadata.name} n={.spec.replicas}").unwrap();
        let results = jp.find_results(&p).unwrap();
        let flat: Vec<String> = results.iter().flatten().map(|v| print_value(v)).collect();
        assert_eq!(flat, ["name=", "web", " n=", "3"]);
        assert_eq!(find(r#""quoted\tx""#, &p).unwrap(), ["quoted\tx"]);
    }

    #[test]
    fn parse_errors_are_upstreams() {
        assert_eq!(JsonPath::parse("{.a").unwrap_err(), "unclosed action");
        assert_eq!(JsonPath::parse("{.a[1}").unwrap_err(), "unterminated array");
        assert_eq!(JsonPath::parse("{.a[x]}").unwrap_err(), "invalid array index x");
        assert_eq!(
            JsonPath::parse("{.a[?(@.b == 'c']}").unwrap_err(),
            "unterminated filter"
        );
        assert_eq!(
            JsonPath::parse("{#}").unwrap_err(),
            "unrecognized character in action: U+0023 '#'"
        );
        assert!(JsonPath::parse("{range .items[*]}{.a}{end}").is_ok());
        assert_eq!(
            JsonPath::parse("{range .items[*]}")
                .unwrap()
                .find_results(&json!({}))
                .unwrap_err(),
            "unrecognized identifier range"
        );
    }

    #[test]
    fn numbers_print_as_go_does() {
        assert_eq!(print_value(&json!(3)), "3");
        assert_eq!(print_value(&json!(0.25)), "0.25");
        assert_eq!(print_value(&json!(1500000.5)), "1.5000005e+06");
        assert_eq!(print_value(&json!(100000.0)), "100000");
        assert_eq!(print_value(&json!(0.00001)), "1e-05");
        assert_eq!(print_value(&json!(true)), "true");
        assert_eq!(print_value(&json!({"b": 1, "a": [2]})), r#"{"a":[2],"b":1}"#);
    }
}
