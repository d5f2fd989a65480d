//! The label selector lexer: turns `labelSelector` query text into tokens.
//!
//! Upstream: `staging/src/k8s.io/apimachinery/pkg/labels/selector.go`
//! (`Lexer`, `Token`, `string2token`, `isWhitespace`, `isSpecialSymbol`).
//!
//! Simplified: the whole input is scanned up front into a `Vec` (upstream
//! scans lazily); bytes are compared as ASCII, as upstream does.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tok {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

#[derive(Clone, Debug)]
pub(super) struct Item {
    pub(super) tok: Tok,
    pub(super) lit: String,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        ")" => Tok::ClosedPar,
        "," => Tok::Comma,
        "!" => Tok::DoesNotExist,
        "==" => Tok::DoubleEquals,
        "=" => Tok::Equals,
        ">" => Tok::GreaterThan,
        "in" => Tok::In,
        "<" => Tok::LessThan,
        "!=" => Tok::NotEquals,
        "notin" => Tok::NotIn,
        "(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Tokenizes the whole input; the last item is always `End`.
pub(super) fn scan(s: &str) -> Vec<Item> {
    let bytes = s.as_bytes();
    let mut pos = 0;
    let mut items = Vec::new();
    loop {
        while pos < bytes.len() && is_whitespace(bytes[pos]) {
            pos += 1;
        }
        // A NUL byte ends the input, as upstream's `read()` returns 0 at the end.
        if pos >= bytes.len() || bytes[pos] == 0 {
            items.push(Item {
                tok: Tok::End,
                lit: String::new(),
            });
            return items;
        }
        let start = pos;
        if is_special(bytes[pos]) {
            pos = scan_special(bytes, pos);
        } else {
            while pos < bytes.len()
                && bytes[pos] != 0
                && !is_special(bytes[pos])
                && !is_whitespace(bytes[pos])
            {
                pos += 1;
            }
        }
        let lit = &s[start..pos];
        let tok = keyword(lit).unwrap_or(Tok::Identifier);
        items.push(Item {
            tok,
            lit: lit.to_string(),
        });
    }
}

/// Longest run of special characters that still forms an operator token.
fn scan_special(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    let mut best = start;
    while end < bytes.len() && is_special(bytes[end]) {
        end += 1;
        let candidate = std::str::from_utf8(&bytes[start..end]).unwrap_or_default();
        if keyword(candidate).is_some() {
            best = end;
        } else if best > start {
            break;
        }
    }
    best.max(start + 1)
}
