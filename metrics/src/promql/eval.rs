//! Evaluating a parsed expression at one instant (upstream
//! `promql/engine.go`: `VectorBinop`, `aggregation`, the selectors'
//! lookback; the functions are in `functions.rs`).

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};

use super::functions::{self, bucket_quantile, quantile};
use super::parser::{
    AggOp, Aggregate, BinOp, Binary, Card, Expr, Func, MatchOp, Matching, Selector, Subquery,
};
use super::{QueryError, Sample, Value};
use crate::tsdb::{Labels, Tsdb};

/// How far back an instant selector looks for a series' latest sample.
pub(crate) const LOOKBACK_MS: i64 = 5 * 60 * 1000;

const NAME: &str = "__name__";

/// One evaluation: the store and the instant (ms since the epoch), and
/// how many more subquery steps the whole query may evaluate.
pub(crate) struct Eval<'a> {
    pub(crate) db: &'a Tsdb,
    pub(crate) t: i64,
    pub(crate) budget: &'a Cell<u64>,
}

/// Subquery steps one query may evaluate in all (nested ones multiply).
pub(crate) const SUBQUERY_BUDGET: u64 = 50_000;

/// Subquery steps when none is given: upstream's default evaluation interval.
const DEFAULT_SUBQUERY_STEP: i64 = 60_000;

fn exec(msg: impl Into<String>) -> QueryError {
    QueryError::Execution(msg.into())
}

fn selects(sel: &Selector, name: &str, labels: &Labels) -> bool {
    sel.matchers.iter().all(|m| {
        let v = if m.name == NAME {
            name
        } else {
            labels.get(&m.name).map_or("", String::as_str)
        };
        m.matches(v)
    })
}

fn with_name(labels: &Labels, name: &str) -> Labels {
    let mut l = labels.clone();
    if !name.is_empty() {
        l.insert(NAME.to_string(), name.to_string());
    }
    l
}

/// `{a="b", c="d"}` as upstream prints a label set in messages.
fn show_labels(l: &Labels) -> String {
    let inner: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// A series picked by a range selector: name, labels, the samples in range.
pub(crate) struct Picked {
    pub(crate) name: String,
    pub(crate) labels: Labels,
    pub(crate) points: Vec<(i64, f64)>,
}

impl Eval<'_> {
    pub(crate) fn eval(&self, e: &Expr) -> Result<Value, QueryError> {
        match e {
            Expr::Number(n) => Ok(Value::Scalar(*n)),
            Expr::Vector(sel) => Ok(Value::Vector(self.instant(sel))),
            Expr::Matrix(..) | Expr::Subquery(_) => Ok(Value::Matrix(
                self.matrix(e)?
                    .0
                    .into_iter()
                    .map(|p| (with_name(&p.labels, &p.name), p.points))
                    .collect(),
            )),
            Expr::Neg(inner) => Ok(match self.eval(inner)? {
                Value::Scalar(n) => Value::Scalar(-n),
                Value::Vector(v) => Value::Vector(
                    v.into_iter()
                        .map(|mut s| {
                            s.labels.remove(NAME);
                            s.value = -s.value;
                            s
                        })
                        .collect(),
                ),
                m @ Value::Matrix(_) => m,
            }),
            Expr::Binary(b) => self.binary(b),
            Expr::Aggregate(a) => self.aggregate(a),
            Expr::Call(f, args) => self.call(*f, args),
        }
    }

    fn vector(&self, e: &Expr) -> Result<Vec<Sample>, QueryError> {
        match self.eval(e)? {
            Value::Vector(v) => Ok(v),
            _ => Err(exec("expected an instant vector")),
        }
    }

    fn scalar(&self, e: &Expr) -> Result<f64, QueryError> {
        match self.eval(e)? {
            Value::Scalar(n) => Ok(n),
            _ => Err(exec("expected a scalar")),
        }
    }

    /// Each selected series' latest sample at most [`LOOKBACK_MS`] old.
    fn instant(&self, sel: &Selector) -> Vec<Sample> {
        let at = self.t - sel.offset_ms;
        let mut out = Vec::new();
        self.db.visit(sel.name.as_deref(), |name, labels, samples| {
            let i = samples.partition_point(|(ts, _)| *ts <= at);
            if i == 0 || !selects(sel, name, labels) {
                return;
            }
            if let Some((ts, v)) = samples.get(i - 1)
                && *ts > at - LOOKBACK_MS
            {
                out.push(Sample {
                    labels: with_name(labels, name),
                    value: *v,
                });
            }
        });
        out
    }

    /// A range selector's or subquery's series, and its window.
    fn matrix(&self, e: &Expr) -> Result<(Vec<Picked>, functions::Window), QueryError> {
        let (offset, range) = match e {
            Expr::Matrix(sel, range) => (sel.offset_ms, *range),
            Expr::Subquery(sq) => (sq.offset_ms, sq.range),
            _ => return Err(exec("expected a range vector")),
        };
        let end = self.t - offset;
        let window = functions::Window {
            start: end - range,
            end,
            range,
        };
        let picked = match e {
            Expr::Matrix(sel, range) => self.range(sel, *range),
            Expr::Subquery(sq) => self.subquery(sq, &window)?,
            _ => Vec::new(),
        };
        Ok((picked, window))
    }

    /// A subquery's inner expression at every multiple of its step in the window.
    fn subquery(&self, sq: &Subquery, w: &functions::Window) -> Result<Vec<Picked>, QueryError> {
        let step = sq.step.unwrap_or(DEFAULT_SUBQUERY_STEP).max(1);
        let mut ts = w.start.div_euclid(step) * step;
        if ts <= w.start {
            ts += step;
        }
        let mut series: BTreeMap<Labels, Vec<(i64, f64)>> = BTreeMap::new();
        while ts <= w.end {
            let left = self.budget.get();
            if left == 0 {
                return Err(exec(format!(
                    "query processing would load too many samples into memory in subquery evaluation (over {SUBQUERY_BUDGET} steps)"
                )));
            }
            self.budget.set(left - 1);
            let inner = Eval {
                db: self.db,
                t: ts,
                budget: self.budget,
            };
            match inner.eval(&sq.expr)? {
                Value::Scalar(v) => series.entry(Labels::new()).or_default().push((ts, v)),
                Value::Vector(v) => {
                    for s in v {
                        series.entry(s.labels).or_default().push((ts, s.value));
                    }
                }
                Value::Matrix(_) => return Err(exec("subquery is only allowed on instant vector")),
            }
            ts += step;
        }
        Ok(series
            .into_iter()
            .map(|(mut labels, points)| Picked {
                name: labels.remove(NAME).unwrap_or_default(),
                labels,
                points,
            })
            .collect())
    }

    /// Each selected series' samples in `(t - offset - range, t - offset]`.
    pub(crate) fn range(&self, sel: &Selector, range: i64) -> Vec<Picked> {
        let end = self.t - sel.offset_ms;
        let start = end - range;
        let mut out = Vec::new();
        self.db.visit(sel.name.as_deref(), |name, labels, samples| {
            let lo = samples.partition_point(|(ts, _)| *ts <= start);
            let hi = samples.partition_point(|(ts, _)| *ts <= end);
            if lo >= hi || !selects(sel, name, labels) {
                return;
            }
            out.push(Picked {
                name: name.to_string(),
                labels: labels.clone(),
                points: samples.range(lo..hi).copied().collect(),
            });
        });
        out
    }

    fn binary(&self, b: &Binary) -> Result<Value, QueryError> {
        let lhs = self.eval(&b.lhs)?;
        let rhs = self.eval(&b.rhs)?;
        Ok(match (lhs, rhs) {
            (Value::Scalar(l), Value::Scalar(r)) => Value::Scalar(if b.op.is_comparison() {
                f64::from(u8::from(compare(b.op, l, r)))
            } else {
                arith(b.op, l, r)
            }),
            (Value::Vector(v), Value::Scalar(s)) => Value::Vector(vector_scalar(b, v, s, false)),
            (Value::Scalar(s), Value::Vector(v)) => Value::Vector(vector_scalar(b, v, s, true)),
            (Value::Vector(l), Value::Vector(r)) => {
                let default = Matching {
                    on: false,
                    labels: Vec::new(),
                    card: Card::OneToOne,
                    include: Vec::new(),
                };
                let m = b.matching.as_ref().unwrap_or(&default);
                Value::Vector(match b.op {
                    BinOp::And | BinOp::Or | BinOp::Unless => set_op(b.op, l, r, m),
                    _ => vector_vector(b, l, r, m)?,
                })
            }
            _ => {
                return Err(exec(
                    "binary expression must contain only scalar and instant vector types",
                ));
            }
        })
    }

    fn aggregate(&self, a: &Aggregate) -> Result<Value, QueryError> {
        let param = match &a.param {
            Some(p) => Some(self.scalar(p)?),
            None => None,
        };
        let v = self.vector(&a.expr)?;
        let mut groups: BTreeMap<Labels, Vec<Sample>> = BTreeMap::new();
        for s in v {
            let key: Labels = if a.without {
                s.labels
                    .iter()
                    .filter(|(k, _)| k.as_str() != NAME && !a.grouping.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            } else {
                a.grouping
                    .iter()
                    .filter_map(|g| s.labels.get(g).map(|v| (g.clone(), v.clone())))
                    .collect()
            };
            groups.entry(key).or_default().push(s);
        }
        let mut out = Vec::new();
        for (labels, mut members) in groups {
            let values = || members.iter().map(|s| s.value);
            let value = match a.op {
                AggOp::Sum => kahan_sum(values()),
                AggOp::Avg => kahan_sum(values()) / members.len() as f64,
                AggOp::Count => members.len() as f64,
                AggOp::Group => 1.0,
                AggOp::Min => values().fold(f64::NAN, |acc, x| if acc > x || acc.is_nan() { x } else { acc }),
                AggOp::Max => values().fold(f64::NAN, |acc, x| if acc < x || acc.is_nan() { x } else { acc }),
                AggOp::Stddev => variance(values()).sqrt(),
                AggOp::Stdvar => variance(values()),
                AggOp::Quantile => {
                    let mut vs: Vec<f64> = values().collect();
                    quantile(param.unwrap_or(f64::NAN), &mut vs)
                }
                AggOp::Topk | AggOp::Bottomk => {
                    let k = param.unwrap_or(0.0);
                    if k.is_nan() || k.abs() > 9.2e18 {
                        return Err(exec(format!("Scalar value {k} overflows int64")));
                    }
                    if k < 1.0 {
                        continue;
                    }
                    let top = a.op == AggOp::Topk;
                    // Largest (smallest) first; NaN last either way.
                    members.sort_by(|x, y| match (x.value.is_nan(), y.value.is_nan()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => std::cmp::Ordering::Greater,
                        (false, true) => std::cmp::Ordering::Less,
                        _ if top => y.value.total_cmp(&x.value),
                        _ => x.value.total_cmp(&y.value),
                    });
                    members.truncate(k as usize);
                    out.extend(members);
                    continue;
                }
            };
            out.push(Sample { labels, value });
        }
        Ok(Value::Vector(out))
    }

    fn call(&self, f: Func, args: &[Expr]) -> Result<Value, QueryError> {
        match f {
            Func::Time => return Ok(Value::Scalar(self.t as f64 / 1000.0)),
            Func::Vector => {
                return Ok(Value::Vector(vec![Sample {
                    labels: Labels::new(),
                    value: self.scalar(&args[0])?,
                }]));
            }
            Func::Scalar => {
                let v = self.vector(&args[0])?;
                return Ok(Value::Scalar(match v.as_slice() {
                    [one] => one.value,
                    _ => f64::NAN,
                }));
            }
            Func::Absent => {
                let v = self.vector(&args[0])?;
                return Ok(Value::Vector(absent(v.is_empty(), &args[0])));
            }
            Func::AbsentOverTime => {
                let empty = self.matrix(&args[0])?.0.is_empty();
                return Ok(Value::Vector(absent(empty, &args[0])));
            }
            Func::HistogramQuantile => {
                let q = self.scalar(&args[0])?;
                let v = self.vector(&args[1])?;
                return Ok(Value::Vector(histogram_quantile(q, v)));
            }
            _ => {}
        }
        if let Some(m) = args.iter().find(|a| a.ty() == super::parser::Type::Matrix) {
            let param = if f == Func::QuantileOverTime {
                Some(self.scalar(&args[0])?)
            } else {
                None
            };
            let (picked, window) = self.matrix(m)?;
            let out = picked
                .into_iter()
                .filter_map(|p| {
                    let value = functions::over_range(f, &p.points, &window, param)?;
                    let labels = if f == Func::LastOverTime {
                        with_name(&p.labels, &p.name)
                    } else {
                        p.labels
                    };
                    Some(Sample { labels, value })
                })
                .collect();
            return Ok(Value::Vector(out));
        }
        // The rest map an instant vector, with scalar parameters.
        let v = self.vector(&args[0])?;
        let params = args[1..]
            .iter()
            .map(|a| self.scalar(a))
            .collect::<Result<Vec<f64>, _>>()?;
        let mut v = v;
        match f {
            Func::Sort | Func::SortDesc => {
                let desc = f == Func::SortDesc;
                v.sort_by(|a, b| match (a.value.is_nan(), b.value.is_nan()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    _ if desc => b.value.total_cmp(&a.value),
                    _ => a.value.total_cmp(&b.value),
                });
                return Ok(Value::Vector(v));
            }
            Func::Clamp if params.len() == 2 && params[0] > params[1] => {
                return Ok(Value::Vector(Vec::new()));
            }
            _ => {}
        }
        for s in &mut v {
            s.labels.remove(NAME);
            s.value = functions::map_value(f, s.value, &params);
        }
        Ok(Value::Vector(v))
    }
}

/// `absent`'s answer: one sample, labelled by the selector's equality matchers, when `empty`.
fn absent(empty: bool, arg: &Expr) -> Vec<Sample> {
    if !empty {
        return Vec::new();
    }
    let mut labels = Labels::new();
    let mut seen_twice = Vec::new();
    if let Expr::Vector(sel) | Expr::Matrix(sel, _) = arg {
        for m in &sel.matchers {
            if m.op == MatchOp::Equal
                && m.name != NAME
                && labels.insert(m.name.clone(), m.value.clone()).is_some()
            {
                seen_twice.push(m.name.clone());
            }
        }
    }
    for n in seen_twice {
        labels.remove(&n);
    }
    vec![Sample { labels, value: 1.0 }]
}

fn histogram_quantile(q: f64, v: Vec<Sample>) -> Vec<Sample> {
    let mut groups: BTreeMap<Labels, Vec<(f64, f64)>> = BTreeMap::new();
    for mut s in v {
        let Some(le) = s.labels.remove("le") else { continue };
        let Ok(bound) = le.trim().parse::<f64>() else {
            continue;
        };
        s.labels.remove(NAME);
        groups.entry(s.labels).or_default().push((bound, s.value));
    }
    groups
        .into_iter()
        .map(|(labels, mut buckets)| Sample {
            labels,
            value: bucket_quantile(q, &mut buckets),
        })
        .collect()
}

/// Neumaier's compensated sum (upstream's `kahanSumInc`).
pub(crate) fn kahan_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut c) = (0.0f64, 0.0f64);
    for x in values {
        let t = sum + x;
        if t.is_infinite() {
            c = 0.0;
        } else if sum.abs() >= x.abs() {
            c += (sum - t) + x;
        } else {
            c += (x - t) + sum;
        }
        sum = t;
    }
    if sum.is_infinite() { sum } else { sum + c }
}

/// Population variance (Welford).
pub(crate) fn variance(values: impl Iterator<Item = f64>) -> f64 {
    let (mut n, mut mean, mut m2) = (0.0f64, 0.0f64, 0.0f64);
    for x in values {
        n += 1.0;
        let d = x - mean;
        mean += d / n;
        m2 += d * (x - mean);
    }
    if n == 0.0 { f64::NAN } else { m2 / n }
}

pub(crate) fn arith(op: BinOp, l: f64, r: f64) -> f64 {
    match op {
        BinOp::Add => l + r,
        BinOp::Sub => l - r,
        BinOp::Mul => l * r,
        BinOp::Div => l / r,
        BinOp::Mod => l % r,
        BinOp::Pow => l.powf(r),
        BinOp::Atan2 => l.atan2(r),
        _ => f64::NAN,
    }
}

pub(crate) fn compare(op: BinOp, l: f64, r: f64) -> bool {
    match op {
        BinOp::Eql => l == r,
        BinOp::Neq => l != r,
        BinOp::Gtr => l > r,
        BinOp::Lss => l < r,
        BinOp::Gte => l >= r,
        BinOp::Lte => l <= r,
        _ => false,
    }
}

fn vector_scalar(b: &Binary, v: Vec<Sample>, s: f64, scalar_left: bool) -> Vec<Sample> {
    let mut out = Vec::with_capacity(v.len());
    for mut e in v {
        let (l, r) = if scalar_left { (s, e.value) } else { (e.value, s) };
        if b.op.is_comparison() {
            let keep = compare(b.op, l, r);
            if b.return_bool {
                e.labels.remove(NAME);
                e.value = f64::from(u8::from(keep));
            } else if !keep {
                continue;
            }
        } else {
            e.labels.remove(NAME);
            e.value = arith(b.op, l, r);
        }
        out.push(e);
    }
    out
}

/// The labels two series are matched on.
fn signature(labels: &Labels, m: &Matching) -> Labels {
    if m.on {
        labels
            .iter()
            .filter(|(k, _)| m.labels.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    } else {
        labels
            .iter()
            .filter(|(k, _)| k.as_str() != NAME && !m.labels.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

fn set_op(op: BinOp, l: Vec<Sample>, r: Vec<Sample>, m: &Matching) -> Vec<Sample> {
    let rsigs: std::collections::HashSet<Labels> = r.iter().map(|s| signature(&s.labels, m)).collect();
    match op {
        BinOp::And => l
            .into_iter()
            .filter(|s| rsigs.contains(&signature(&s.labels, m)))
            .collect(),
        BinOp::Unless => l
            .into_iter()
            .filter(|s| !rsigs.contains(&signature(&s.labels, m)))
            .collect(),
        _ => {
            let lsigs: std::collections::HashSet<Labels> =
                l.iter().map(|s| signature(&s.labels, m)).collect();
            let mut out = l;
            out.extend(
                r.into_iter()
                    .filter(|s| !lsigs.contains(&signature(&s.labels, m))),
            );
            out
        }
    }
}

fn vector_vector(
    b: &Binary,
    l: Vec<Sample>,
    r: Vec<Sample>,
    m: &Matching,
) -> Result<Vec<Sample>, QueryError> {
    let one_to_many = m.card == Card::OneToMany;
    let (many, one) = if one_to_many { (r, l) } else { (l, r) };
    let mut one_by_sig: HashMap<Labels, usize> = HashMap::new();
    for (i, s) in one.iter().enumerate() {
        let sig = signature(&s.labels, m);
        if one_by_sig.insert(sig.clone(), i).is_some() {
            let side = if m.card == Card::OneToOne {
                "right hand-side"
            } else {
                "one side"
            };
            return Err(exec(format!(
                "found duplicate series for the match group {} on the {side} of the operation: [{}];many-to-many matching not allowed: matching labels must be unique on one side",
                show_labels(&sig),
                show_labels(&s.labels)
            )));
        }
    }
    let drop_name = !b.op.is_comparison() || b.return_bool;
    let mut out = Vec::new();
    let mut matched: HashMap<Labels, ()> = HashMap::new();
    for s in many {
        let sig = signature(&s.labels, m);
        let Some(&j) = one_by_sig.get(&sig) else { continue };
        let o = &one[j];
        let (vl, vr) = if one_to_many {
            (o.value, s.value)
        } else {
            (s.value, o.value)
        };
        let value = if b.op.is_comparison() {
            let keep = compare(b.op, vl, vr);
            if b.return_bool {
                f64::from(u8::from(keep))
            } else if keep {
                vl
            } else {
                continue;
            }
        } else {
            arith(b.op, vl, vr)
        };
        let mut labels = s.labels;
        if drop_name {
            labels.remove(NAME);
        }
        if m.card == Card::OneToOne {
            if m.on {
                labels.retain(|k, _| m.labels.contains(k));
            } else {
                labels.retain(|k, _| !m.labels.contains(k));
            }
        }
        for inc in &m.include {
            match o.labels.get(inc) {
                Some(v) => labels.insert(inc.clone(), v.clone()),
                None => labels.remove(inc),
            };
        }
        let key = if m.card == Card::OneToOne {
            sig
        } else {
            labels.clone()
        };
        if matched.insert(key, ()).is_some() {
            return Err(exec(if m.card == Card::OneToOne {
                "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)"
            } else {
                "multiple matches for labels: grouping labels must ensure unique matches"
            }));
        }
        out.push(Sample { labels, value });
    }
    Ok(out)
}
