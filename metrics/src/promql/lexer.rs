//! PromQL tokens (upstream `promql/parser/lex.go`, the subset we parse).

use super::QueryError;

/// One token and the byte offset where it starts.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Token {
    pub(super) kind: Tok,
    pub(super) pos: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    /// A metric name, label name, function name or keyword.
    Ident(String),
    Number(f64),
    /// A duration in milliseconds (`5m`, `1m30s`).
    Duration(i64),
    Str(String),
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Colon,
    At,
    /// `=` (a label matcher).
    Assign,
    /// `=~`
    RegexMatch,
    /// `!~`
    RegexNoMatch,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Eql,
    Neq,
    Gtr,
    Lss,
    Gte,
    Lte,
    Eof,
}

impl Tok {
    /// How upstream's errors name it.
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("identifier {s:?}"),
            Tok::Number(_) => "number".into(),
            Tok::Duration(_) => "duration".into(),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::LParen => "\"(\"".into(),
            Tok::RParen => "\")\"".into(),
            Tok::LBrace => "\"{\"".into(),
            Tok::RBrace => "\"}\"".into(),
            Tok::LBracket => "\"[\"".into(),
            Tok::RBracket => "\"]\"".into(),
            Tok::Comma => "\",\"".into(),
            Tok::Colon => "\":\"".into(),
            Tok::At => "\"@\"".into(),
            Tok::Assign => "\"=\"".into(),
            Tok::RegexMatch => "\"=~\"".into(),
            Tok::RegexNoMatch => "\"!~\"".into(),
            Tok::Add => "\"+\"".into(),
            Tok::Sub => "\"-\"".into(),
            Tok::Mul => "\"*\"".into(),
            Tok::Div => "\"/\"".into(),
            Tok::Mod => "\"%\"".into(),
            Tok::Pow => "\"^\"".into(),
            Tok::Eql => "\"==\"".into(),
            Tok::Neq => "\"!=\"".into(),
            Tok::Gtr => "\">\"".into(),
            Tok::Lss => "\"<\"".into(),
            Tok::Gte => "\">=\"".into(),
            Tok::Lte => "\"<=\"".into(),
            Tok::Eof => "end of input".into(),
        }
    }
}

/// `line:col: parse error: msg`, with a 1-based line and column (in characters).
pub(super) fn parse_error(input: &str, pos: usize, msg: &str) -> QueryError {
    let pos = pos.min(input.len());
    let before = input.get(..pos).unwrap_or(input);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    QueryError::Parse(format!("{line}:{col}: parse error: {msg}"))
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// Splits `input` into tokens, ending with [`Tok::Eof`].
pub(super) fn lex(input: &str) -> Result<Vec<Token>, QueryError> {
    let bytes = input.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' {
            // A comment runs to the end of the line.
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let two = input.get(i..i + 2).unwrap_or("");
        let (kind, len) = match (c, two) {
            (_, "=~") => (Tok::RegexMatch, 2),
            (_, "!~") => (Tok::RegexNoMatch, 2),
            (_, "==") => (Tok::Eql, 2),
            (_, "!=") => (Tok::Neq, 2),
            (_, ">=") => (Tok::Gte, 2),
            (_, "<=") => (Tok::Lte, 2),
            ('=', _) => (Tok::Assign, 1),
            ('>', _) => (Tok::Gtr, 1),
            ('<', _) => (Tok::Lss, 1),
            ('(', _) => (Tok::LParen, 1),
            (')', _) => (Tok::RParen, 1),
            ('{', _) => (Tok::LBrace, 1),
            ('}', _) => (Tok::RBrace, 1),
            ('[', _) => (Tok::LBracket, 1),
            (']', _) => (Tok::RBracket, 1),
            (',', _) => (Tok::Comma, 1),
            (':', _) if in_brackets(&out) => (Tok::Colon, 1),
            ('@', _) => (Tok::At, 1),
            ('+', _) => (Tok::Add, 1),
            ('-', _) => (Tok::Sub, 1),
            ('*', _) => (Tok::Mul, 1),
            ('/', _) => (Tok::Div, 1),
            ('%', _) => (Tok::Mod, 1),
            ('^', _) => (Tok::Pow, 1),
            ('"' | '\'' | '`', _) => {
                let (s, len) = lex_string(input, i)?;
                (Tok::Str(s), len)
            }
            _ if c.is_ascii_digit() || (c == '.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) => {
                lex_number(input, i)?
            }
            _ if is_ident_start(c) => {
                let len = input[i..].chars().take_while(|c| is_ident_char(*c)).count();
                (Tok::Ident(input[i..i + len].to_string()), len)
            }
            _ => {
                let ch = input[i..].chars().next().unwrap_or('?');
                return Err(parse_error(input, i, &format!("unexpected character: {ch:?}")));
            }
        };
        out.push(Token { kind, pos: start });
        i += len;
    }
    out.push(Token {
        kind: Tok::Eof,
        pos: input.len(),
    });
    Ok(out)
}

/// Whether the tokens so far leave a `[` open (a `:` there is a subquery's).
fn in_brackets(out: &[Token]) -> bool {
    let mut depth = 0i32;
    for t in out {
        match t.kind {
            Tok::LBracket => depth += 1,
            Tok::RBracket => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

/// A number (decimal, hex, scientific) or a duration (`1h30m`, `500ms`).
fn lex_number(input: &str, i: usize) -> Result<(Tok, usize), QueryError> {
    let rest = &input[i..];
    if let Some(len) = duration_len(rest)
        && !rest[len..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        let ms = parse_duration(&rest[..len]).ok_or_else(|| parse_error(input, i, "bad duration syntax"))?;
        return Ok((Tok::Duration(ms), len));
    }
    let len = rest
        .char_indices()
        .take_while(|(j, c)| {
            c.is_ascii_alphanumeric()
                || *c == '.'
                || ((*c == '+' || *c == '-') && rest[..*j].ends_with(['e', 'E']) && !rest.starts_with("0x"))
        })
        .count();
    let text = &rest[..len];
    parse_number(text)
        .map(|n| (Tok::Number(n), len))
        .ok_or_else(|| parse_error(input, i, &format!("bad number or duration syntax: {text:?}")))
}

/// A number literal's value: decimal, scientific or `0x` hex.
pub(super) fn parse_number(text: &str) -> Option<f64> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok().map(|n| n as f64);
    }
    if !text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    text.parse::<f64>().ok()
}

const UNITS: [(&str, i64); 8] = [
    ("ms", 1),
    ("s", 1000),
    ("m", 60_000),
    ("h", 3_600_000),
    ("d", 86_400_000),
    ("w", 604_800_000),
    ("y", 31_536_000_000),
    ("", 0),
];

/// The length of the duration (`(\d+(ms|s|m|h|d|w|y))+`) at the start of `s`.
fn duration_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut parts = 0;
    loop {
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            break;
        }
        let after = &s[i + digits..];
        let unit = UNITS
            .iter()
            .filter(|(u, _)| !u.is_empty())
            .find(|(u, _)| after.starts_with(u))
            .map(|(u, _)| u.len());
        match unit {
            Some(u) => {
                i += digits + u;
                parts += 1;
            }
            None => break,
        }
    }
    (parts > 0).then_some(i)
}

/// A Prometheus duration (`1m30s`, `500ms`, `2d`) in milliseconds; units
/// must come largest first, each at most once.
pub fn parse_duration(s: &str) -> Option<i64> {
    if s.is_empty() {
        return None;
    }
    let mut rest = s;
    let mut total: i64 = 0;
    let mut last_unit = usize::MAX;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let n: i64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        // Longest unit first so that `ms` is not read as `m`.
        let (unit, factor) = UNITS
            .iter()
            .filter(|(u, _)| !u.is_empty() && rest.starts_with(u))
            .max_by_key(|(u, _)| u.len())?;
        // Order largest first: y w d h m s ms.
        let rank = match *unit {
            "y" => 0,
            "w" => 1,
            "d" => 2,
            "h" => 3,
            "m" => 4,
            "s" => 5,
            _ => 6,
        };
        if last_unit != usize::MAX && rank <= last_unit {
            return None;
        }
        last_unit = rank;
        total = total.checked_add(n.checked_mul(*factor)?)?;
        rest = &rest[unit.len()..];
    }
    Some(total)
}

/// A quoted string at `i`: its value and its length in the input.
fn lex_string(input: &str, i: usize) -> Result<(String, usize), QueryError> {
    let rest = &input[i..];
    let mut chars = rest.char_indices();
    let Some((_, quote)) = chars.next() else {
        return Err(parse_error(input, i, "unterminated quoted string"));
    };
    let mut out = String::new();
    while let Some((j, c)) = chars.next() {
        if c == quote {
            return Ok((out, j + c.len_utf8()));
        }
        if quote == '`' {
            out.push(c);
            continue;
        }
        if c == '\n' {
            break;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else { break };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' | '"' | '\'' => out.push(e),
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(n).map(|(_, c)| c).collect();
                let ch = (hex.len() == n)
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32)
                    .ok_or_else(|| parse_error(input, i, "invalid escape sequence in string"))?;
                out.push(ch);
            }
            _ => return Err(parse_error(input, i, &format!("unknown escape sequence {e:?}"))),
        }
    }
    Err(parse_error(input, i, "unterminated quoted string"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1m30s"), Some(90_000));
        assert_eq!(parse_duration("500ms"), Some(500));
        assert_eq!(parse_duration("2d"), Some(172_800_000));
        assert_eq!(parse_duration("1y"), Some(31_536_000_000));
        assert_eq!(parse_duration("30s1m"), None);
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn tokens() {
        let kinds: Vec<Tok> = lex(r#"rate(a{b=~"x\"y"}[1m30s]) >= 0x10 'z'"#)
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect();
        assert_eq!(
            kinds,
            vec![
                Tok::Ident("rate".into()),
                Tok::LParen,
                Tok::Ident("a".into()),
                Tok::LBrace,
                Tok::Ident("b".into()),
                Tok::RegexMatch,
                Tok::Str("x\"y".into()),
                Tok::RBrace,
                Tok::LBracket,
                Tok::Duration(90_000),
                Tok::RBracket,
                Tok::RParen,
                Tok::Gte,
                Tok::Number(16.0),
                Tok::Str("z".into()),
                Tok::Eof,
            ]
        );
        assert_eq!(lex("1e3").unwrap()[0].kind, Tok::Number(1000.0));
        assert_eq!(lex("1.5e-3").unwrap()[0].kind, Tok::Number(0.0015));
        assert_eq!(lex(".5").unwrap()[0].kind, Tok::Number(0.5));
    }

    #[test]
    fn errors_have_positions() {
        let e = lex("a\n  $").unwrap_err();
        assert_eq!(
            e,
            QueryError::Parse("2:3: parse error: unexpected character: '$'".into())
        );
        assert!(matches!(lex("\"abc"), Err(QueryError::Parse(_))));
    }
}
