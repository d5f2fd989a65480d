//! The PromQL syntax tree and a recursive-descent parser with upstream's
//! operator precedence (`promql/parser/generated_parser.y`): `or` < `and`
//! `unless` < comparisons < `+ -` < `* / % atan2` < `^` (right associative),
//! unary minus binding like `*`. Types are checked as upstream's
//! `checkAST` does, so a query that would fail in Prometheus fails here.

use regex::Regex;

use super::QueryError;
use super::lexer::{Tok, Token, lex, parse_error};

/// A parsed expression.
#[derive(Clone, Debug)]
pub(crate) enum Expr {
    Number(f64),
    /// An instant vector selector.
    Vector(Selector),
    /// A range vector selector: the selector and its range in ms.
    Matrix(Selector, i64),
    Neg(Box<Expr>),
    Binary(Box<Binary>),
    Aggregate(Box<Aggregate>),
    Call(Func, Vec<Expr>),
    /// `expr[range:step] offset d`: `expr` evaluated every step over the range.
    Subquery(Box<Subquery>),
}

/// A subquery; `step` defaults to one minute (upstream's default
/// evaluation interval).
#[derive(Clone, Debug)]
pub(crate) struct Subquery {
    pub(crate) expr: Expr,
    pub(crate) range: i64,
    pub(crate) step: Option<i64>,
    pub(crate) offset_ms: i64,
}

/// `name{matchers} offset d`.
#[derive(Clone, Debug)]
pub(crate) struct Selector {
    /// The metric name, when given by name or by a `__name__=` matcher.
    pub(crate) name: Option<String>,
    /// Every matcher but the metric name's equality.
    pub(crate) matchers: Vec<Matcher>,
    pub(crate) offset_ms: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatchOp {
    Equal,
    NotEqual,
    Regex,
    NotRegex,
}

/// One label matcher; regexes are fully anchored.
#[derive(Clone, Debug)]
pub(crate) struct Matcher {
    pub(crate) name: String,
    pub(crate) op: MatchOp,
    pub(crate) value: String,
    pub(crate) re: Option<Regex>,
}

impl Matcher {
    pub(crate) fn matches(&self, v: &str) -> bool {
        match self.op {
            MatchOp::Equal => v == self.value,
            MatchOp::NotEqual => v != self.value,
            MatchOp::Regex => self.re.as_ref().is_some_and(|r| r.is_match(v)),
            MatchOp::NotRegex => !self.re.as_ref().is_some_and(|r| r.is_match(v)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Or,
    And,
    Unless,
    Eql,
    Neq,
    Gtr,
    Lss,
    Gte,
    Lte,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Atan2,
    Pow,
}

impl BinOp {
    fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And | BinOp::Unless => 2,
            BinOp::Eql | BinOp::Neq | BinOp::Gtr | BinOp::Lss | BinOp::Gte | BinOp::Lte => 3,
            BinOp::Add | BinOp::Sub => 4,
            BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Atan2 => 5,
            BinOp::Pow => 6,
        }
    }

    pub(crate) fn is_comparison(self) -> bool {
        self.precedence() == 3
    }

    pub(crate) fn is_set(self) -> bool {
        matches!(self, BinOp::Or | BinOp::And | BinOp::Unless)
    }

    fn name(self) -> &'static str {
        match self {
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Unless => "unless",
            BinOp::Eql => "==",
            BinOp::Neq => "!=",
            BinOp::Gtr => ">",
            BinOp::Lss => "<",
            BinOp::Gte => ">=",
            BinOp::Lte => "<=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Atan2 => "atan2",
            BinOp::Pow => "^",
        }
    }
}

/// Which side has many series per match group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Card {
    OneToOne,
    ManyToOne,
    OneToMany,
}

/// `on(...)`/`ignoring(...)` and `group_left/right(...)`.
#[derive(Clone, Debug)]
pub(crate) struct Matching {
    pub(crate) on: bool,
    pub(crate) labels: Vec<String>,
    pub(crate) card: Card,
    pub(crate) include: Vec<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Binary {
    pub(crate) op: BinOp,
    pub(crate) lhs: Expr,
    pub(crate) rhs: Expr,
    pub(crate) return_bool: bool,
    pub(crate) matching: Option<Matching>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggOp {
    Sum,
    Avg,
    Min,
    Max,
    Count,
    Group,
    Stddev,
    Stdvar,
    Topk,
    Bottomk,
    Quantile,
}

impl AggOp {
    fn from_name(s: &str) -> Option<AggOp> {
        Some(match s.to_ascii_lowercase().as_str() {
            "sum" => AggOp::Sum,
            "avg" => AggOp::Avg,
            "min" => AggOp::Min,
            "max" => AggOp::Max,
            "count" => AggOp::Count,
            "group" => AggOp::Group,
            "stddev" => AggOp::Stddev,
            "stdvar" => AggOp::Stdvar,
            "topk" => AggOp::Topk,
            "bottomk" => AggOp::Bottomk,
            "quantile" => AggOp::Quantile,
            _ => return None,
        })
    }

    fn has_param(self) -> bool {
        matches!(self, AggOp::Topk | AggOp::Bottomk | AggOp::Quantile)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Aggregate {
    pub(crate) op: AggOp,
    pub(crate) param: Option<Expr>,
    pub(crate) expr: Expr,
    /// `without (...)` when true, else `by (...)` (empty: one group).
    pub(crate) without: bool,
    pub(crate) grouping: Vec<String>,
}

/// The value types of upstream's type checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Type {
    Scalar,
    Vector,
    Matrix,
}

impl Type {
    fn name(self) -> &'static str {
        match self {
            Type::Scalar => "scalar",
            Type::Vector => "instant vector",
            Type::Matrix => "range vector",
        }
    }
}

macro_rules! functions {
    ($($variant:ident $name:literal ($($arg:ident),*) $(opt $opt:literal)? -> $ret:ident;)*) => {
        /// A supported function.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Func { $($variant),* }

        impl Func {
            fn from_name(s: &str) -> Option<Func> {
                match s { $($name => Some(Func::$variant),)* _ => None }
            }

            /// Argument types, how many trailing ones are optional, return type.
            fn signature(self) -> (&'static [Type], usize, Type) {
                match self { $(Func::$variant => (&[$(Type::$arg),*], 0 $(+ $opt)?, Type::$ret),)* }
            }

            pub(crate) fn name(self) -> &'static str {
                match self { $(Func::$variant => $name,)* }
            }
        }
    };
}

functions! {
    Rate "rate" (Matrix) -> Vector;
    Irate "irate" (Matrix) -> Vector;
    Increase "increase" (Matrix) -> Vector;
    Delta "delta" (Matrix) -> Vector;
    Idelta "idelta" (Matrix) -> Vector;
    Deriv "deriv" (Matrix) -> Vector;
    Changes "changes" (Matrix) -> Vector;
    Resets "resets" (Matrix) -> Vector;
    AvgOverTime "avg_over_time" (Matrix) -> Vector;
    SumOverTime "sum_over_time" (Matrix) -> Vector;
    MinOverTime "min_over_time" (Matrix) -> Vector;
    MaxOverTime "max_over_time" (Matrix) -> Vector;
    CountOverTime "count_over_time" (Matrix) -> Vector;
    LastOverTime "last_over_time" (Matrix) -> Vector;
    PresentOverTime "present_over_time" (Matrix) -> Vector;
    StddevOverTime "stddev_over_time" (Matrix) -> Vector;
    StdvarOverTime "stdvar_over_time" (Matrix) -> Vector;
    QuantileOverTime "quantile_over_time" (Scalar, Matrix) -> Vector;
    AbsentOverTime "absent_over_time" (Matrix) -> Vector;
    HistogramQuantile "histogram_quantile" (Scalar, Vector) -> Vector;
    Abs "abs" (Vector) -> Vector;
    Ceil "ceil" (Vector) -> Vector;
    Floor "floor" (Vector) -> Vector;
    Round "round" (Vector, Scalar) opt 1 -> Vector;
    Sqrt "sqrt" (Vector) -> Vector;
    Exp "exp" (Vector) -> Vector;
    Ln "ln" (Vector) -> Vector;
    Log2 "log2" (Vector) -> Vector;
    Log10 "log10" (Vector) -> Vector;
    Sgn "sgn" (Vector) -> Vector;
    Clamp "clamp" (Vector, Scalar, Scalar) -> Vector;
    ClampMin "clamp_min" (Vector, Scalar) -> Vector;
    ClampMax "clamp_max" (Vector, Scalar) -> Vector;
    Scalar "scalar" (Vector) -> Scalar;
    Vector "vector" (Scalar) -> Vector;
    Time "time" () -> Scalar;
    Absent "absent" (Vector) -> Vector;
    Sort "sort" (Vector) -> Vector;
    SortDesc "sort_desc" (Vector) -> Vector;
}

/// The upstream functions this subset does not have, for a clearer error.
const UNSUPPORTED_FUNCTIONS: &[&str] = &[
    "timestamp",
    "label_replace",
    "label_join",
    "holt_winters",
    "double_exponential_smoothing",
    "predict_linear",
    "count_values",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "hour",
    "minute",
    "month",
    "year",
    "histogram_count",
    "histogram_sum",
    "histogram_avg",
    "histogram_fraction",
    "histogram_stddev",
    "histogram_stdvar",
    "sort_by_label",
    "sort_by_label_desc",
    "mad_over_time",
    "info",
    "pi",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "deg",
    "rad",
    "limitk",
    "limit_ratio",
];

impl Expr {
    pub(crate) fn ty(&self) -> Type {
        match self {
            Expr::Number(_) => Type::Scalar,
            Expr::Vector(_) | Expr::Aggregate(_) => Type::Vector,
            Expr::Matrix(..) | Expr::Subquery(_) => Type::Matrix,
            Expr::Neg(e) => e.ty(),
            Expr::Binary(b) => {
                if b.lhs.ty() == Type::Scalar && b.rhs.ty() == Type::Scalar {
                    Type::Scalar
                } else {
                    Type::Vector
                }
            }
            Expr::Call(f, _) => f.signature().2,
        }
    }
}

/// Parses (and type-checks) `input`.
pub(crate) fn parse(input: &str) -> Result<Expr, QueryError> {
    let tokens = lex(input)?;
    let mut p = Parser {
        input,
        tokens,
        at: 0,
        depth: 0,
    };
    if p.peek() == &Tok::Eof {
        return Err(parse_error(input, 0, "no expression found in input"));
    }
    let e = p.expr(0)?;
    if p.peek() != &Tok::Eof {
        return Err(p.unexpected(""));
    }
    Ok(e)
}

/// Deeper nesting than this is refused (no stack overflow on hostile input).
const MAX_DEPTH: usize = 200;

struct Parser<'a> {
    input: &'a str,
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

fn binop(t: &Tok) -> Option<BinOp> {
    Some(match t {
        Tok::Add => BinOp::Add,
        Tok::Sub => BinOp::Sub,
        Tok::Mul => BinOp::Mul,
        Tok::Div => BinOp::Div,
        Tok::Mod => BinOp::Mod,
        Tok::Pow => BinOp::Pow,
        Tok::Eql => BinOp::Eql,
        Tok::Neq => BinOp::Neq,
        Tok::Gtr => BinOp::Gtr,
        Tok::Lss => BinOp::Lss,
        Tok::Gte => BinOp::Gte,
        Tok::Lte => BinOp::Lte,
        Tok::Ident(s) => match s.to_ascii_lowercase().as_str() {
            "and" => BinOp::And,
            "or" => BinOp::Or,
            "unless" => BinOp::Unless,
            "atan2" => BinOp::Atan2,
            _ => return None,
        },
        _ => return None,
    })
}

fn is_keyword(t: &Tok, kw: &str) -> bool {
    matches!(t, Tok::Ident(s) if s.eq_ignore_ascii_case(kw))
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        self.tokens.get(self.at).map_or(&Tok::Eof, |t| &t.kind)
    }

    fn pos(&self) -> usize {
        self.tokens.get(self.at).map_or(self.input.len(), |t| t.pos)
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.at < self.tokens.len() {
            self.at += 1;
        }
        t
    }

    fn error_at(&self, pos: usize, msg: &str) -> QueryError {
        parse_error(self.input, pos, msg)
    }

    fn unexpected(&self, context: &str) -> QueryError {
        let what = self.peek().describe();
        let msg = if context.is_empty() {
            format!("unexpected {what}")
        } else {
            format!("unexpected {what} in {context}")
        };
        self.error_at(self.pos(), &msg)
    }

    fn expect(&mut self, want: &Tok, context: &str) -> Result<(), QueryError> {
        if self.peek() == want {
            self.next();
            Ok(())
        } else {
            Err(self.unexpected(context))
        }
    }

    fn expr(&mut self, min_prec: u8) -> Result<Expr, QueryError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(self.pos(), "expression nested too deeply"));
        }
        let r = self.expr_inner(min_prec);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, min_prec: u8) -> Result<Expr, QueryError> {
        let mut lhs = self.unary()?;
        while let Some(op) = binop(self.peek()) {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            let op_pos = self.pos();
            self.next();
            let return_bool = if is_keyword(self.peek(), "bool") {
                self.next();
                if !op.is_comparison() {
                    return Err(
                        self.error_at(op_pos, "bool modifier can only be used on comparison operators")
                    );
                }
                true
            } else {
                false
            };
            let matching = self.matching(op)?;
            // `^` is right associative; the others left.
            let next_min = if op == BinOp::Pow { prec } else { prec + 1 };
            let rhs = self.expr(next_min)?;
            let b = Binary {
                op,
                lhs,
                rhs,
                return_bool,
                matching,
            };
            self.check_binary(&b, op_pos)?;
            lhs = Expr::Binary(Box::new(b));
        }
        Ok(lhs)
    }

    /// `on(...)`/`ignoring(...)` then `group_left(...)`/`group_right(...)`.
    fn matching(&mut self, op: BinOp) -> Result<Option<Matching>, QueryError> {
        let on = if is_keyword(self.peek(), "on") {
            true
        } else if is_keyword(self.peek(), "ignoring") {
            false
        } else {
            return Ok(None);
        };
        self.next();
        let labels = self.label_list()?;
        let mut m = Matching {
            on,
            labels,
            card: Card::OneToOne,
            include: Vec::new(),
        };
        let card = if is_keyword(self.peek(), "group_left") {
            Some(Card::ManyToOne)
        } else if is_keyword(self.peek(), "group_right") {
            Some(Card::OneToMany)
        } else {
            None
        };
        if let Some(card) = card {
            let pos = self.pos();
            self.next();
            if op.is_set() {
                return Err(self.error_at(
                    pos,
                    "no grouping allowed for \"and\", \"or\", \"unless\" operations",
                ));
            }
            m.card = card;
            if self.peek() == &Tok::LParen {
                m.include = self.label_list()?;
            }
        }
        Ok(Some(m))
    }

    /// `( name, name, ... )`, a trailing comma allowed.
    fn label_list(&mut self) -> Result<Vec<String>, QueryError> {
        self.expect(&Tok::LParen, "grouping opts")?;
        let mut out = Vec::new();
        loop {
            match self.next() {
                Tok::RParen => return Ok(out),
                Tok::Ident(s) | Tok::Str(s) => out.push(s),
                _ => {
                    self.at -= 1;
                    return Err(self.unexpected("grouping opts"));
                }
            }
            match self.next() {
                Tok::Comma => {}
                Tok::RParen => return Ok(out),
                _ => {
                    self.at -= 1;
                    return Err(self.unexpected("grouping opts"));
                }
            }
        }
    }

    fn check_binary(&self, b: &Binary, pos: usize) -> Result<(), QueryError> {
        let (l, r) = (b.lhs.ty(), b.rhs.ty());
        if l == Type::Matrix || r == Type::Matrix {
            return Err(self.error_at(
                pos,
                "binary expression must contain only scalar and instant vector types",
            ));
        }
        let both_scalar = l == Type::Scalar && r == Type::Scalar;
        if b.op.is_comparison() && both_scalar && !b.return_bool {
            return Err(self.error_at(pos, "comparisons between scalars must use BOOL modifier"));
        }
        if b.op.is_set() && (l == Type::Scalar || r == Type::Scalar) {
            return Err(self.error_at(
                pos,
                &format!(
                    "set operator {:?} not allowed in binary scalar expression",
                    b.op.name()
                ),
            ));
        }
        if b.matching.is_some() && (l == Type::Scalar || r == Type::Scalar) {
            return Err(self.error_at(pos, "vector matching only allowed between instant vectors"));
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<Expr, QueryError> {
        match self.peek() {
            Tok::Sub | Tok::Add => {
                let neg = self.next() == Tok::Sub;
                let pos = self.pos();
                // Unary minus binds like `*`: looser than `^`.
                let e = self.expr(BinOp::Pow.precedence())?;
                if e.ty() == Type::Matrix {
                    return Err(self.error_at(
                        pos,
                        "unary expression only allowed on expressions of type scalar or instant vector",
                    ));
                }
                Ok(match (neg, e) {
                    (false, e) => e,
                    (true, Expr::Number(n)) => Expr::Number(-n),
                    (true, e) => Expr::Neg(Box::new(e)),
                })
            }
            _ => self.postfix(),
        }
    }

    /// A primary expression, then `[range]` and `offset`.
    fn postfix(&mut self) -> Result<Expr, QueryError> {
        let start = self.pos();
        let mut e = self.primary()?;
        loop {
            match self.peek() {
                Tok::LBracket => {
                    let pos = self.pos();
                    self.next();
                    let range = match self.next() {
                        Tok::Duration(ms) => ms,
                        _ => {
                            self.at -= 1;
                            return Err(self.unexpected("range selector"));
                        }
                    };
                    if self.peek() == &Tok::Colon {
                        self.next();
                        let step = match self.peek() {
                            Tok::Duration(ms) => {
                                let ms = *ms;
                                self.next();
                                Some(ms)
                            }
                            _ => None,
                        };
                        self.expect(&Tok::RBracket, "subquery selector")?;
                        if e.ty() != Type::Vector {
                            return Err(self.error_at(
                                start,
                                &format!(
                                    "subquery is only allowed on instant vector, got {} instead",
                                    e.ty().name()
                                ),
                            ));
                        }
                        if range <= 0 || step.is_some_and(|s| s <= 0) {
                            return Err(self.error_at(pos, "subquery range and step must be positive"));
                        }
                        e = Expr::Subquery(Box::new(Subquery {
                            expr: e,
                            range,
                            step,
                            offset_ms: 0,
                        }));
                        continue;
                    }
                    self.expect(&Tok::RBracket, "range selector")?;
                    e = match e {
                        Expr::Vector(sel) if sel.offset_ms == 0 => Expr::Matrix(sel, range),
                        Expr::Vector(_) => {
                            return Err(self.error_at(pos, "no offset modifiers allowed before range"));
                        }
                        _ => {
                            return Err(self.error_at(start, "ranges only allowed for vector selectors"));
                        }
                    };
                }
                Tok::Ident(s) if s.eq_ignore_ascii_case("offset") => {
                    let pos = self.pos();
                    self.next();
                    let sign = match self.peek() {
                        Tok::Sub => {
                            self.next();
                            -1
                        }
                        Tok::Add => {
                            self.next();
                            1
                        }
                        _ => 1,
                    };
                    let d = match self.next() {
                        Tok::Duration(ms) => ms * sign,
                        _ => {
                            self.at -= 1;
                            return Err(self.unexpected("offset"));
                        }
                    };
                    match &mut e {
                        Expr::Vector(sel) | Expr::Matrix(sel, _) if sel.offset_ms == 0 => sel.offset_ms = d,
                        Expr::Subquery(sq) if sq.offset_ms == 0 => sq.offset_ms = d,
                        Expr::Vector(_) | Expr::Matrix(..) | Expr::Subquery(_) => {
                            return Err(self.error_at(pos, "offset may not be set multiple times"));
                        }
                        _ => return Err(self.error_at(pos, "offset modifier must be preceded by an instant vector selector or range vector selector")),
                    }
                }
                Tok::At => return Err(self.error_at(self.pos(), "the @ modifier is not supported")),
                _ => return Ok(e),
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, QueryError> {
        let pos = self.pos();
        match self.next() {
            Tok::Number(n) => Ok(Expr::Number(n)),
            Tok::LParen => {
                let e = self.expr(0)?;
                if self.peek() != &Tok::RParen {
                    return Err(if self.peek() == &Tok::Eof {
                        self.error_at(pos, "unclosed left parenthesis")
                    } else {
                        self.unexpected("paren expression")
                    });
                }
                self.next();
                Ok(e)
            }
            Tok::LBrace => {
                self.at -= 1;
                self.selector(None, pos)
            }
            Tok::Ident(name) => {
                let lower = name.to_ascii_lowercase();
                if lower == "inf" || lower == "nan" {
                    return Ok(Expr::Number(if lower == "inf" {
                        f64::INFINITY
                    } else {
                        f64::NAN
                    }));
                }
                if let Some(op) = AggOp::from_name(&name)
                    && (self.peek() == &Tok::LParen
                        || is_keyword(self.peek(), "by")
                        || is_keyword(self.peek(), "without"))
                {
                    return self.aggregate(op);
                }
                if self.peek() == &Tok::LParen {
                    return self.call(&name, pos);
                }
                self.selector(Some(name), pos)
            }
            Tok::Str(_) => Err(self.error_at(pos, "string literals are not supported as expressions")),
            Tok::Duration(_) => Err(self.error_at(pos, "unexpected duration")),
            _ => {
                self.at -= 1;
                Err(self.unexpected(""))
            }
        }
    }

    fn aggregate(&mut self, op: AggOp) -> Result<Expr, QueryError> {
        let mut grouping = None;
        if is_keyword(self.peek(), "by") || is_keyword(self.peek(), "without") {
            let without = is_keyword(self.peek(), "without");
            self.next();
            grouping = Some((without, self.label_list()?));
        }
        let pos = self.pos();
        self.expect(&Tok::LParen, "aggregation")?;
        let mut args = Vec::new();
        if self.peek() != &Tok::RParen {
            loop {
                args.push(self.expr(0)?);
                match self.peek() {
                    Tok::Comma => {
                        self.next();
                    }
                    Tok::RParen => break,
                    _ => return Err(self.unexpected("aggregation")),
                }
            }
        }
        self.next();
        if grouping.is_none() && (is_keyword(self.peek(), "by") || is_keyword(self.peek(), "without")) {
            let without = is_keyword(self.peek(), "without");
            self.next();
            grouping = Some((without, self.label_list()?));
        }
        let want = if op.has_param() { 2 } else { 1 };
        if args.len() != want {
            return Err(self.error_at(
                pos,
                &format!(
                    "wrong number of arguments for aggregate expression provided, expected {want}, got {}",
                    args.len()
                ),
            ));
        }
        let expr = args.pop().unwrap_or(Expr::Number(0.0));
        let param = args.pop();
        if expr.ty() != Type::Vector {
            return Err(self.error_at(
                pos,
                &format!(
                    "expected type instant vector in aggregation expression, got {}",
                    expr.ty().name()
                ),
            ));
        }
        if let Some(p) = &param
            && p.ty() != Type::Scalar
        {
            return Err(self.error_at(
                pos,
                &format!(
                    "expected type scalar in aggregation parameter, got {}",
                    p.ty().name()
                ),
            ));
        }
        let (without, grouping) = grouping.unwrap_or((false, Vec::new()));
        Ok(Expr::Aggregate(Box::new(Aggregate {
            op,
            param,
            expr,
            without,
            grouping,
        })))
    }

    fn call(&mut self, name: &str, pos: usize) -> Result<Expr, QueryError> {
        let Some(f) = Func::from_name(name) else {
            let msg = if UNSUPPORTED_FUNCTIONS.contains(&name) {
                format!("function {name:?} is not supported")
            } else {
                format!("unknown function with name {name:?}")
            };
            return Err(self.error_at(pos, &msg));
        };
        self.expect(&Tok::LParen, "function call")?;
        let mut args = Vec::new();
        if self.peek() != &Tok::RParen {
            loop {
                args.push(self.expr(0)?);
                match self.peek() {
                    Tok::Comma => {
                        self.next();
                    }
                    Tok::RParen => break,
                    _ => return Err(self.unexpected("function call")),
                }
            }
        }
        self.next();
        let (types, optional, _) = f.signature();
        if args.len() > types.len() || args.len() + optional < types.len() {
            return Err(self.error_at(
                pos,
                &format!(
                    "expected {} argument(s) in call to {:?}, got {}",
                    types.len(),
                    f.name(),
                    args.len()
                ),
            ));
        }
        for (a, t) in args.iter().zip(types) {
            if a.ty() != *t {
                return Err(self.error_at(
                    pos,
                    &format!(
                        "expected type {} in call to function {:?}, got {}",
                        t.name(),
                        f.name(),
                        a.ty().name()
                    ),
                ));
            }
        }
        Ok(Expr::Call(f, args))
    }

    /// `name{a="b", c=~"d"}`, or `{__name__="x", ...}`.
    fn selector(&mut self, name: Option<String>, pos: usize) -> Result<Expr, QueryError> {
        let mut sel = Selector {
            name,
            matchers: Vec::new(),
            offset_ms: 0,
        };
        if self.peek() == &Tok::LBrace {
            self.next();
            loop {
                let label = match self.next() {
                    Tok::RBrace => break,
                    Tok::Ident(s) | Tok::Str(s) => s,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("label matching"));
                    }
                };
                let op_pos = self.pos();
                let op = match self.next() {
                    Tok::Assign => MatchOp::Equal,
                    Tok::Neq => MatchOp::NotEqual,
                    Tok::RegexMatch => MatchOp::Regex,
                    Tok::RegexNoMatch => MatchOp::NotRegex,
                    Tok::Comma | Tok::RBrace if sel.name.is_none() && sel.matchers.is_empty() => {
                        // `{"metric_name"}` (UTF-8 names, Prometheus 3).
                        self.at -= 1;
                        sel.name = Some(label);
                        if self.peek() == &Tok::Comma {
                            self.next();
                        }
                        continue;
                    }
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("label matching, expected label matching operator"));
                    }
                };
                let value = match self.next() {
                    Tok::Str(s) => s,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("label matching, expected string"));
                    }
                };
                let re = match op {
                    MatchOp::Regex | MatchOp::NotRegex => {
                        Some(Regex::new(&format!("^(?s:{value})$")).map_err(|e| {
                            self.error_at(op_pos, &format!("invalid regular expression {value:?}: {e}"))
                        })?)
                    }
                    _ => None,
                };
                if label == "__name__" && op == MatchOp::Equal && sel.name.is_none() {
                    sel.name = Some(value);
                } else {
                    sel.matchers.push(Matcher {
                        name: label,
                        op,
                        value,
                        re,
                    });
                }
                match self.next() {
                    Tok::Comma => {}
                    Tok::RBrace => break,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("label matching, expected \",\" or \"}\""));
                    }
                }
            }
        }
        if sel.name.is_none() && sel.matchers.iter().all(|m| m.matches("")) {
            return Err(self.error_at(pos, "vector selector must contain at least one non-empty matcher"));
        }
        Ok(Expr::Vector(sel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(q: &str) -> String {
        match parse(q) {
            Err(QueryError::Parse(m)) => m,
            other => panic!("{q}: expected a parse error, got {other:?}"),
        }
    }

    /// A compact rendering of the tree, to check precedence.
    fn show(e: &Expr) -> String {
        match e {
            Expr::Number(n) => format!("{n}"),
            Expr::Vector(s) => s.name.clone().unwrap_or_default(),
            Expr::Matrix(s, r) => format!("{}[{r}]", s.name.clone().unwrap_or_default()),
            Expr::Neg(e) => format!("(-{})", show(e)),
            Expr::Binary(b) => format!("({} {} {})", show(&b.lhs), b.op.name(), show(&b.rhs)),
            Expr::Aggregate(a) => format!("{:?}({})", a.op, show(&a.expr)),
            Expr::Subquery(sq) => format!("{}[{}:{:?}]", show(&sq.expr), sq.range, sq.step),
            Expr::Call(f, args) => {
                format!(
                    "{}({})",
                    f.name(),
                    args.iter().map(show).collect::<Vec<_>>().join(",")
                )
            }
        }
    }

    #[test]
    fn precedence() {
        for (q, want) in [
            ("a + b * c", "(a + (b * c))"),
            ("a * b + c", "((a * b) + c)"),
            ("a - b - c", "((a - b) - c)"),
            ("2 ^ 3 ^ 2", "(2 ^ (3 ^ 2))"),
            ("-a ^ 2", "(-(a ^ 2))"),
            ("-a * 2", "((-a) * 2)"),
            ("a or b and c", "(a or (b and c))"),
            ("a > b + 1", "(a > (b + 1))"),
            ("a and b > 1 or c", "((a and (b > 1)) or c)"),
            ("2 ^ -1", "(2 ^ -1)"),
            ("(a + b) * c", "((a + b) * c)"),
            ("a atan2 b", "(a atan2 b)"),
        ] {
            assert_eq!(show(&parse(q).unwrap()), want, "{q}");
        }
    }

    #[test]
    fn selectors() {
        let Expr::Matrix(sel, range) =
            parse(r#"http_requests_total{code!~"5..", namespace="x"}[1m] offset 30s"#).unwrap()
        else {
            panic!("a matrix selector");
        };
        assert_eq!(range, 60_000);
        assert_eq!(sel.offset_ms, 30_000);
        assert_eq!(sel.name.as_deref(), Some("http_requests_total"));
        assert_eq!(sel.matchers.len(), 2);
        assert!(sel.matchers[0].matches("200"));
        assert!(!sel.matchers[0].matches("503"));
        // Anchored: `5..` does not match `1503`.
        assert!(sel.matchers[0].matches("1503"));
        let Expr::Vector(sel) = parse(r#"{__name__="up", job=~"a|b"}"#).unwrap() else {
            panic!("a vector selector");
        };
        assert_eq!(sel.name.as_deref(), Some("up"));
        assert!(sel.matchers[0].matches("a") && !sel.matchers[0].matches("ab"));
    }

    #[test]
    fn aggregations_and_calls() {
        for q in [
            "sum by (le) (rate(x[1m]))",
            "sum(rate(x[1m])) by (le)",
            "sum without (pod) (x)",
            "topk(3, x)",
            "quantile(0.9, x)",
            "histogram_quantile(0.99, sum(rate(d_bucket[1m])) by (le))",
            "round(x)",
            "round(x, 0.5)",
            "time()",
            "a / on(pod) group_left(node) b",
            "a == bool b",
            "1 < bool 2",
            "sum by (le,) (x)",
            "x offset -5m",
            "SUM(x)",
            "max_over_time(rate(x[1m])[5m:30s])",
            "avg_over_time((a + b)[10m:] offset 1m)",
            "x[5m:1m]",
        ] {
            parse(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
    }

    #[test]
    fn errors() {
        assert_eq!(err(""), "1:1: parse error: no expression found in input");
        assert_eq!(
            err("rate(x)"),
            "1:1: parse error: expected type range vector in call to function \"rate\", got instant vector"
        );
        assert_eq!(
            err("sum(x[1m])"),
            "1:4: parse error: expected type instant vector in aggregation expression, got range vector"
        );
        assert_eq!(
            err("foo(x)"),
            "1:1: parse error: unknown function with name \"foo\""
        );
        assert_eq!(
            err("1 > 2"),
            "1:3: parse error: comparisons between scalars must use BOOL modifier"
        );
        assert_eq!(
            err("x[1m] + 1"),
            "1:7: parse error: binary expression must contain only scalar and instant vector types"
        );
        assert_eq!(err("(x"), "1:1: parse error: unclosed left parenthesis");
        assert_eq!(err("x y"), "1:3: parse error: unexpected identifier \"y\"");
        assert_eq!(
            err(r#"{a=""}"#),
            "1:1: parse error: vector selector must contain at least one non-empty matcher"
        );
        assert!(err("x[5m] [5m:1m]").contains("subquery is only allowed on instant vector"));
        assert!(err("x[0s:1m]").contains("must be positive"));
        assert!(err("x{a=~\"(\"}").contains("invalid regular expression"));
        assert!(err("1 and 2").contains("set operator"));
        assert!(err("x + bool y").contains("bool modifier"));
        assert!(err("x[1x]").contains("parse error"));
        assert!(err(&"(".repeat(1000)).contains("nested too deeply"));
    }
}
